"""A scenario's ``input:``: the traces whose recorded input is exactly that text belong to
it too (docs/scenarios.md; how an imported Assay test pairs with its trace)."""

from __future__ import annotations

from tests.conftest import events

from .scenario_harness import Workspace, scenario

HEAD = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'
SUITE = HEAD + """scenarios:
  - id: GREETING
    input: Say hello
    expect: {output: {contains: [hello]}}
  - id: ALSO_GREETING
    input: Say hello
    expect: {output: {contains: [world]}}
  - id: NAMED
    expect: {output: {contains: [bye]}}
"""


def run_of(tid: str, inp: str, out: str, sid: str | None = None) -> str:
    start = {"type": "trace_start", "trace_id": tid, "input": inp}
    if sid is not None:
        start["scenario"] = sid
    return events(start, {"type": "output", "trace_id": tid, "output": out},
                  {"type": "trace_end", "trace_id": tid})


def test_traces_pair_by_input_and_by_id(ws: Workspace) -> None:
    results = ws.run(SUITE, {
        "a.jsonl": run_of("a", "Say hello", "Hello world"),  # both input scenarios
        "b.jsonl": run_of("b", "say hello", "hello"),  # exact text only: none
        "c.jsonl": run_of("c", "Say bye", "Bye", sid="NAMED"),  # by its id, as before
        "d.jsonl": run_of("d", "Other", "hello", sid="GREETING"),  # by id: GREETING too
    })
    got = {sid: scenario(results, sid)["traces_total"]
           for sid in ("GREETING", "ALSO_GREETING", "NAMED")}
    assert got == {"GREETING": 2, "ALSO_GREETING": 1, "NAMED": 1}


def test_an_input_no_trace_has_is_a_missing_trace(ws: Workspace) -> None:
    results = ws.run(SUITE, {"c.jsonl": run_of("c", "Say bye", "Bye", sid="NAMED")})
    s = scenario(results, "GREETING")
    assert s["status"] == "error"
    assert [f["rule"] for f in s["findings"]] == ["scenario/missing_trace"]
