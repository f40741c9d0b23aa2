"""docs/mcp.md's complete suite for server-everything, run as the page says (`agent-eval
lock`, then `agent-eval run`): the printed output is the page's `text output` block."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_harness import ROOT, live_path  # noqa: F401 - a fixture

pytestmark = pytest.mark.usefixtures("live_path")
PAGE = ROOT / "docs" / "mcp.md"


def block(kind: str) -> str:
    [body] = re.findall(rf"^```{kind}\n(.*?)^```$", PAGE.read_text(encoding="utf-8"),
                        re.S | re.M)
    return str(body)


def test_the_page_shows_the_real_output(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.yaml").write_text(block("yaml mcp"), encoding="utf-8")
    exe = [sys.executable, "-m", "agent_eval"]
    lock = subprocess.run([*exe, "lock"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert lock.returncode == 0, lock.stderr
    assert (tmp_path / "mcp-tools.lock.json").is_file()
    run = subprocess.run([*exe, "run"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stderr
    assert run.stdout == block("text output")
    session = (tmp_path / "agent-eval-results" / "mcp-sessions" / "everything.jsonl")
    line = session.read_text(encoding="utf-8").splitlines()[17]
    assert '"method":"tools/call"' in line and '"get-sum"' in line
