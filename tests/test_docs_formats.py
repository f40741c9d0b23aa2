"""docs/formats.md lists every registered reader, and each has its page; README's "Status"
names every reader too."""

from __future__ import annotations

import re
from pathlib import Path

from agent_eval.readers import READERS

ROOT = Path(__file__).resolve().parent.parent


def test_every_reader_is_documented() -> None:
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in READERS:
        assert f"| `{name}` |" in text, f"docs/formats.md does not list the reader {name}"
        if name != "native":
            assert (ROOT / "docs" / "formats" / f"{name}.md").is_file()


def test_readme_status_names_every_reader() -> None:
    """The readers' clause of README "Status" (from "the native trace format and readers"
    to the next ";") names each registered reader by its `format:` name, and nothing else."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    status = text[text.index("\n## Status\n"):]
    start = status.index("the native trace format and\nreaders")
    clause = status[start:status.index(";", start)]
    named = re.findall(r"`([a-z_]+)`", clause)
    assert sorted(named) == sorted(set(READERS) - {"native"}), clause
