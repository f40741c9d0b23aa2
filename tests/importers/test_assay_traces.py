"""Assay's examples run on Assay's own recorded traces (tests/importers/fixtures/assay/
recorded/, read by the assay reader: V2 episodes, legacy tool_calls lines, V1 records),
the configs unchanged; tests pair with traces by prompt, as in Assay; ``import`` + ``run``
gives the same findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from .peers import FIXTURES, findings, imported, located, run, same_findings, workspace

RECORDED = FIXTURES / "assay" / "recorded"


def recorded(*names: str) -> dict[str, str]:
    return {name: (RECORDED / name).read_text(encoding="utf-8") for name in names}


def test_golden_eval_on_assays_golden_trace(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/fixtures/golden: the V2 episode calls fake_tool; eval.yaml requires it (pass),
    eval_fail.yaml requires another tool (fail at its rule, line 11)."""
    folder = workspace(tmp_path, "assay", recorded("golden_trace.jsonl"))
    ok = run(folder, "eval.yaml", monkeypatch)
    assert ok["verdict"] == "pass" and findings(ok) == []
    assert [(t["id"], t["tool_calls"]) for t in ok["traces"]] == [("test_golden_1", 1)]
    bad = run(folder, "eval_fail.yaml", monkeypatch)
    assert located(bad) == [("coverage/unexercised", "eval_fail.yaml", 12),
                            ("sequence_valid/require", "eval_fail.yaml", 11)]
    same_findings(bad, imported(folder, "eval_fail.yaml", monkeypatch))


@pytest.mark.parametrize(("trace", "expected"), [
    # read_file with path /app/data.txt: allowed, its schema holds; the rest never called
    ("demo_safe.jsonl", [
        ("coverage/unexercised", "policy.yaml", 6),  # allow: write_file
        ("coverage/unexercised", "policy.yaml", 8),  # deny: exec
        ("coverage/unexercised", "policy.yaml", 9),  # deny: shell
        ("coverage/unexercised", "policy.yaml", 10),  # deny: run_command
    ]),
    # exec rm -rf /: denied, not allowed, and no schema (enforcement: warn)
    ("demo_unsafe.jsonl", [
        ("args_valid/unconstrained_tool", "policy.yaml", 22),
        ("coverage/unexercised", "policy.yaml", 5),  # allow: read_file
        ("coverage/unexercised", "policy.yaml", 6),  # allow: write_file
        ("coverage/unexercised", "policy.yaml", 9),
        ("coverage/unexercised", "policy.yaml", 10),
        ("coverage/unexercised", "policy.yaml", 13),  # schemas: read_file
        ("sequence_valid/allowlist", "policy.yaml", 4),
        ("tool_blocklist", "policy.yaml", 8),
    ]),
])
def test_demo_policy_on_assays_demo_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           trace: str,
                                           expected: list[tuple[str, str, int]]) -> None:
    folder = workspace(tmp_path, "assay", recorded(trace))
    r = run(folder, "demo_eval.yaml", monkeypatch)
    assert located(r) == expected
    same_findings(r, imported(folder, "demo_eval.yaml", monkeypatch))


@pytest.mark.parametrize(("trace", "failed"), [
    ("negation_safe.jsonl", []),
    # "Ja, je kunt bleek en ammoniak mengen ...": no NOOIT, no warning word
    ("negation_unsafe.jsonl", [("scenario/output", "negation_eval.yaml", 14),
                               ("scenario/output", "negation_eval.yaml", 21)]),
])
def test_output_checks_pair_with_their_trace_by_prompt(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trace: str,
        failed: list[tuple[str, str, int]]) -> None:
    """examples/negation-safety: two tests with the same prompt, each a scenario with
    ``input: safety_bleach_ammonia`` that the V1 record of that prompt belongs to."""
    folder = workspace(tmp_path, "assay", recorded(trace))
    r = run(folder, "negation_eval.yaml", monkeypatch)
    assert {s["id"]: s["traces_total"] for s in r["scenarios"]} == {
        "bleach_ammonia_must_contain": 1, "bleach_ammonia_regex_guard": 1}
    assert located(r) == failed
    same_findings(r, imported(folder, "negation_eval.yaml", monkeypatch))
