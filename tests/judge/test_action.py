"""The GitHub Action replays judgements (it never records) and gives pairwise checks the
base branch's outputs: it finds the baseline before it evaluates (docs/judge.md
"Pairwise")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.conftest import read_results

from .conftest import Project, judge_block, native
from .loopback import Loopback

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "action"))
from action_harness import push_payload, require_node_tools, run_action


def test_the_action_compares_pairwise_with_the_baseline_it_found(
        project: Project, openai_server: Loopback, tmp_path_factory: pytest.TempPathFactory
) -> None:
    require_node_tools()
    suite = ('version: "1"\nsuite: pairwise\ntraces: traces/*.jsonl\n'
             + judge_block(openai_server)
             + "scenarios:\n  - id: R\n    expect:\n      judge: [{pairwise: true}]\n")
    project.write(suite, {"a.jsonl": native("a-1", "R", "base answer WINNER=base")})
    project.cli(out="base")  # the base branch's results, with the scenario's outputs
    project.write(suite, {"a.jsonl": native("a-1", "R", "head answer")})
    project.cli("--baseline", "base/results.json", "--judge", "record")
    assert len(openai_server.requests) == 2
    run = run_action(tmp_path_factory.mktemp("action"), project.root, "http://127.0.0.1:9",
                     "push", push_payload(),
                     inputs={"github-token": "", "upload-sarif": "false", "comment": "off",
                             "baseline": "file", "baseline-file": "base/results.json",
                             "config": "agent-eval.yaml", "output-dir": "action-out"})
    assert len(openai_server.requests) == 2, "the action must only replay"
    results = read_results(project.root / "action-out")
    rules = [f["rule"] for s in results["scenarios"] for f in s["findings"]]
    assert rules == ["judge/pairwise"], (rules, run.stdout[-2000:])
    assert results["judge"]["mode"] == "replay" and results["judge"]["judgements_used"] == 2
    assert results["baseline"]["source"]["kind"] == "file"
