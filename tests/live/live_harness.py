"""Helpers of the live MCP tests (imported as `live_harness`: each test module puts this
folder on sys.path, as tests/baseline does for tests/action). The servers are real, from
the project's own installs (npm: node_modules/ by `npm ci` in scripts/test; PyPI:
mcp-server-time in the test extra)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import missing_system

from agent_eval._cli import main

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "node_modules" / ".bin"
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" \
    / "index.js"
PY_BIN = Path(sys.executable).parent


def need_node() -> None:
    """The npm servers are installed by scripts/test (npm ci): without them the test is
    skipped with one NOT RUN line, and fails where AGENT_EVAL_REQUIRE_SYSTEM is set (CI)."""
    if not shutil.which("node"):
        missing_system("node", "install Node.js and npm (scripts/install-debian-packages)")
    if not EVERYTHING.is_file():
        missing_system("the npm MCP test servers",
                       "run 'npm ci' at the repository root (scripts/test does)")


@pytest.fixture
def live_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH with the npm servers' bin folder and this Python's bin folder first."""
    need_node()
    monkeypatch.setenv("PATH", os.pathsep.join(
        [str(NODE_BIN), str(PY_BIN), os.environ.get("PATH", "")]))


def write_suite(folder: Path, text: str) -> Path:
    path = folder / "agent-eval.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def run_suite(folder: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = folder / "out"
    code = main(["run", "--config", str(folder / "agent-eval.yaml"), "--output-dir", str(out),
                 "-q", *extra])
    results: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return code, results


def by_test(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in results["tests"]}


def line_of(path: Path, marker: str, nth: int = 1) -> int:
    """The 1-based line of the ``nth`` line containing ``marker``."""
    hits = [i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if marker in t]
    assert len(hits) >= nth, f"{marker!r} not in {path}"
    return hits[nth - 1]
