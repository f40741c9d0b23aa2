"""Shared helpers of the importer tests: a workspace with a peer's fixtures and traces,
run through the real command line, and the comparison of a direct run with the run of the
imported suite."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import events

from agent_eval._cli import main

__all__ = ["FIXTURES", "SHARED", "events", "findings", "imported", "located", "run",
           "same_findings", "workspace"]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "samples" / "peers"


def workspace(tmp_path: Path, peer: str, traces: dict[str, str]) -> Path:
    folder = tmp_path / "repo"
    shutil.copytree(FIXTURES / peer, folder)
    (folder / ".git").mkdir()
    for name, text in traces.items():
        (folder / "traces" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "traces" / name).write_text(text, encoding="utf-8")
    return folder


def run(folder: Path, config: str, monkeypatch: pytest.MonkeyPatch,
        *extra: str) -> dict[str, Any]:
    monkeypatch.chdir(folder)
    code = main(["run", "-c", config, "-t", "traces/*.jsonl", "-o", "out", "-q",
                 "--no-timings", *extra])
    assert code in (0, 1), code
    data: dict[str, Any] = json.loads((folder / "out" / "results.json").read_text())
    shutil.rmtree(folder / "out")
    return data


def findings(results: dict[str, Any]) -> list[dict[str, Any]]:
    out = [v for t in results["tests"] for v in t["violations"]]
    out += [f for s in results["scenarios"] for f in s["findings"]]
    return out + list(results["unexercised"])


def located(results: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(rule, config file, config line) of every finding, sorted."""
    return sorted((f["rule"], f["config"]["file"], f["config"]["line"])
                  for f in findings(results))


def same_findings(a: dict[str, Any], b: dict[str, Any]) -> None:
    """The findings of the direct run and of the imported suite: equal but for their
    config location (and the import notes, which the imported suite cannot repeat)."""
    def key(f: dict[str, Any]) -> tuple[Any, ...]:
        t = f["trace"] or {}
        # the one message that names its config file: the policy's
        message = re.sub(r"no policy key of \S+ ", "no policy key of POLICY ", f["message"])
        return (f["rule"], f["severity"], f["tool"], t.get("line"), f.get("scenario"),
                message)
    direct = sorted(key(f) for f in findings(a) if f["rule"] != "import/unsupported")
    imported = sorted(key(f) for f in findings(b))
    assert direct == imported
    assert a["verdict"] == b["verdict"] or (a["verdict"] == "warn" and b["verdict"] == "pass"
                                            and any(f["rule"] == "import/unsupported"
                                                    for f in findings(a)))


def imported(folder: Path, config: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.chdir(folder)
    target = folder / "native" / "agent-eval.yaml"
    assert main(["import", config, "-o", str(target), "--traces", "../traces/*.jsonl"]) == 0
    monkeypatch.chdir(folder / "native")
    code = main(["run", "-o", "out", "-q", "--no-timings"])
    assert code in (0, 1)
    data: dict[str, Any] = json.loads((folder / "native" / "out" / "results.json").read_text())
    return data
