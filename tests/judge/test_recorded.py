"""Scores recorded in traces (LangSmith feedback, Inspect scores, OpenTelemetry GenAI
evaluation events, native score events) read into ``Trace.scores`` and used by
``recorded`` checks: thresholds and output_quality, with no provider and no store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import shared_path

from agent_eval.errors import InputError
from agent_eval.model import Trace, score_value
from agent_eval.readers import SourceFile, pick_reader

from .conftest import Project, native


def read(path: Path) -> tuple[str, list[Trace]]:
    source = SourceFile(str(path), path.name, path.name)
    reader = pick_reader(source, "auto")
    assert not isinstance(reader, InputError), reader
    items = list(reader.read(source))
    assert [i for i in items if isinstance(i, InputError)] == []
    return reader.name, [i for i in items if isinstance(i, Trace)]


def scores(t: Trace) -> list[tuple[str, float | None, str | None, str | None, str]]:
    return [(s.name, s.value, s.label, s.comment, s.source) for s in t.scores]


@pytest.mark.parametrize(("raw", "value"), [
    (0.75, 0.75), (True, 1.0), (False, 0.0), (3, 3.0), ("0.5", 0.5), ("C", 1.0), ("I", 0.0),
    ("P", 0.5), ("N", 0.0), ("pass", 1.0), ("FAIL", 0.0), ("great", None), (None, None),
    (float("nan"), None), ([1], None)])
def test_score_values(raw: Any, value: float | None) -> None:
    assert score_value(raw) == value


def test_native_score_events(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(native("t-1", "S", "ok", scores=(
        {"name": "helpfulness", "value": 0.9, "comment": "clear"},
        {"key": "grade", "score": "C"},
        {"name": "tone", "value": "friendly"})))
    name, [t] = read(path)
    assert name == "native"
    assert scores(t) == [("helpfulness", 0.9, None, "clear", "native"),
                         ("grade", 1.0, None, None, "native"),
                         ("tone", None, "friendly", None, "native")]
    assert [s.location.line for s in t.scores] == [5, 6, 7]


def test_langsmith_feedback_stats_and_feedback_objects(tmp_path: Path) -> None:
    runs = [
        {"id": "r1", "trace_id": "t1", "run_type": "chain", "name": "agent",
         "dotted_order": "20250101T000000000000Zr1", "inputs": {"input": "Refund A-1"},
         "outputs": {"output": "Refunded."}, "start_time": 1000, "end_time": 3000,
         "feedback_stats": {"correctness": {"n": 2, "avg": 0.5}}},
        {"id": "r2", "trace_id": "t1", "parent_run_id": "r1", "run_type": "tool",
         "name": "issue_refund", "dotted_order": "20250101T000000000000Zr1.20250101T000001Zr2",
         "inputs": {"input": "{\"order_id\": \"A-1\"}"}, "outputs": {"output": "ok"}},
        {"id": "f1", "run_id": "r2", "key": "helpfulness", "score": 1,
         "comment": "did what was asked"},
        {"id": "f2", "run_id": "r1", "key": "tone", "value": "friendly"},
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    name, [t] = read(path)
    assert name == "langsmith"
    assert scores(t) == [("correctness", 0.5, None, None, "langsmith"),
                         ("helpfulness", 1.0, None, "did what was asked", "langsmith"),
                         ("tone", None, "friendly", None, "langsmith")]
    assert [s.location.line for s in t.scores] == [1, 3, 4]


def inspect_log(scores: dict[str, Any]) -> dict[str, Any]:
    return {"version": 2, "status": "success",
            "eval": {"task": "refunds", "model": "openai/gpt-4o", "run_id": "r"},
            "samples": [{"id": "s1", "epoch": 1, "input": "Refund A-1",
                         "messages": [{"role": "user", "content": "Refund A-1"},
                                      {"role": "assistant", "content": "Refunded."}],
                         "scores": scores}]}


def test_inspect_scores(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(inspect_log({
        "match": {"value": "C", "answer": "Refunded.", "explanation": "exact match"},
        "graded": {"value": {"accuracy": 0.5, "style": "I"}},
        "listed": {"value": [1, 0]}}), indent=2))
    name, [t] = read(path)
    assert name == "inspect"
    assert scores(t) == [("match", 1.0, None, "exact match", "inspect"),
                         ("graded/accuracy", 0.5, None, None, "inspect"),
                         ("graded/style", 0.0, None, None, "inspect")]
    text = path.read_text().splitlines()
    assert text[t.scores[0].location.line - 1].strip().startswith('"scores"')


def test_a_real_inspect_log_score() -> None:
    path = shared_path("samples", "traces", "inspect_ai", "inspect__browser-gpt-4o-mini.json")
    _, [t] = read(path)
    # "scores": {"includes": {"value": "C", ...}} in the sample
    assert [(s.name, s.value) for s in t.scores] == [("includes", 1.0)]


def otlp_span(tid: str, events: list[dict[str, Any]], **attrs: Any) -> dict[str, Any]:
    return {"traceId": tid, "spanId": "0000000000000001", "name": "invoke_agent",
            "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000",
            "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in
                           {"gen_ai.operation.name": "invoke_agent", **attrs}.items()],
            "events": events}


def eval_attrs(name: str, value: float | None = None, label: str | None = None,
               explanation: str | None = None) -> list[dict[str, Any]]:
    out = [{"key": "gen_ai.evaluation.name", "value": {"stringValue": name}}]
    if value is not None:
        out.append({"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": value}})
    if label is not None:
        out.append({"key": "gen_ai.evaluation.score.label", "value": {"stringValue": label}})
    if explanation is not None:
        out.append({"key": "gen_ai.evaluation.explanation",
                    "value": {"stringValue": explanation}})
    return out


def test_otel_genai_evaluation_events_and_log_records(tmp_path: Path) -> None:
    tid = "5b8efff798038103d269b633813fc60c"
    spans = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        otlp_span(tid, [{"name": "gen_ai.evaluation.result", "timeUnixNano": "1",
                         "attributes": eval_attrs("Relevance", 4.0, "relevant",
                                                  "on topic")}])]}]}]}
    logs = {"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{"logRecords": [
        {"timeUnixNano": "2", "eventName": "gen_ai.evaluation.result", "traceId": tid,
         "attributes": eval_attrs("Groundedness", label="pass")},
        {"timeUnixNano": "3", "traceId": tid, "attributes": [
            {"key": "event.name", "value": {"stringValue": "gen_ai.evaluation.result"}},
            *eval_attrs("Coherence", 0.25)]},
        {"timeUnixNano": "4", "traceId": tid, "body": {"stringValue": "an ordinary log"}},
    ]}]}]}
    path = tmp_path / "otel.jsonl"
    path.write_text(json.dumps(spans) + "\n" + json.dumps(logs) + "\n")
    name, [t] = read(path)
    assert name == "otlp"
    assert scores(t) == [("Relevance", 4.0, "relevant", "on topic", "otlp"),
                         ("Groundedness", 1.0, "pass", None, "otlp"),
                         ("Coherence", 0.25, None, None, "otlp")]
    assert [s.location.line for s in t.scores] == [1, 2, 2]


RECORDED = """version: "1"
suite: recorded
traces: traces/*.jsonl
scenarios:
  - id: R
    expect:
      judge:
        - recorded: correctness
          threshold: 0.7
    thresholds: {min_output_quality: 0.8}
"""


def test_recorded_scores_gate_and_feed_output_quality(project: Project) -> None:
    project.write(RECORDED, {
        "a.jsonl": native("a-1", "R", "x", scores=({"name": "correctness", "value": 0.9},)),
        "b.jsonl": native("b-1", "R", "x", scores=(
            {"name": "correctness", "value": 0.8}, {"name": "correctness", "value": 0.4,
                                                    "comment": "the amount is wrong"})),
        "c.jsonl": native("c-1", "R", "x", scores=({"name": "helpfulness", "value": 1},)),
    })
    run = project.cli()
    assert not project.store.exists()  # no provider, no store
    (low,) = run.findings("judge/recorded")
    # b-1: the mean of 0.8 and 0.4 is 0.6 < 0.7
    assert low["trace"]["trace_id"] == "b-1" and low["value"] == pytest.approx(0.6)
    assert "Recorded score 'correctness' = 0.6 is below threshold 0.7 (2 values, mean)" in \
        low["message"] and "the amount is wrong" in low["message"]
    (missing,) = run.findings("judge/not_recorded")
    assert missing["trace"]["trace_id"] == "c-1" and missing["severity"] == "warning"
    # min_output_quality reads the same figure: 0.6 < 0.8 on b-1; 0.9 passes on a-1
    thresholds = run.findings("scenario/threshold")
    assert [f["trace"]["trace_id"] for f in thresholds] == ["b-1"]
    s = run.scenario("R")
    assert s["judge"][0]["counts"] == {"pass": 1, "warn": 1, "fail": 1, "skip": 0, "error": 0}
    assert s["judge"][0]["mean_score"] == pytest.approx(0.75)  # (0.9 + 0.6) / 2
    assert run.results["judge"]["judgements_used"] == 0


def test_a_recorded_check_needs_no_judge_block(project: Project) -> None:
    project.write(RECORDED.replace("    thresholds: {min_output_quality: 0.8}\n", ""),
                  {"a.jsonl": native("a-1", "R", "x", scores=(
                      {"name": "correctness", "value": 1},))})
    run = project.cli("--judge", "record")  # nothing to record, nothing to call
    assert run.code == 0 and run.results["judge"]["provider"] is None

