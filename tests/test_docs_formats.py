"""docs/formats.md lists every registered reader, and each has its page."""

from __future__ import annotations

from pathlib import Path

from agent_eval.readers import READERS

ROOT = Path(__file__).resolve().parent.parent


def test_every_reader_is_documented() -> None:
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in READERS:
        assert f"| `{name}` |" in text, f"docs/formats.md does not list the reader {name}"
        if name != "native":
            assert (ROOT / "docs" / "formats" / f"{name}.md").is_file()
