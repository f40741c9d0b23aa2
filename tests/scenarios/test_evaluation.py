"""Scenario checks on traces (docs/scenarios.md): every check, its figures, and the key each
finding points at."""

from __future__ import annotations

from typing import Any

import pytest

from agent_eval.scenarios.compile import FIGURES
from agent_eval.scenarios.evaluate import RULES

from .scenario_harness import Workspace, at, rules_of, scenario, trace

HEAD = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\n'


def rag(ws: Workspace, mode: str) -> dict[str, Any]:
    """The AgentCI seed's LCS example, P = [search, rerank, generate] against R = [search,
    generate], as a scenario under ``mode``."""
    suite = HEAD + f"""scenarios:
  - id: RAG
    expect:
      sequence: [search, generate]
      sequence_mode: {mode}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "RAG", ["search", "rerank", "generate"])})
    return scenario(res, "RAG")


def test_the_seed_lcs_example_through_a_scenario(ws: Workspace) -> None:
    s = rag(ws, "subsequence")
    assert s["status"] == "pass"
    assert s["metrics"]["sequence_similarity"] == 0.8  # 2·2 / (3 + 2)
    assert s["metrics"]["sequence_metric"] == "lcs"
    assert s["metrics"]["sequence_progress"] == 1.0
    # the trace passes its sequence_mode, so the sequence component is 1.0 (EvalView
    # shows 100% for a passing flexible sequence), not the 0.8 similarity
    assert s["score"] == 100.0


def test_the_sequence_component_is_the_similarity_when_the_mode_fails(
        ws: Workspace) -> None:
    s = rag(ws, "exact")
    assert s["status"] == "fail" and rules_of(s) == ["scenario/sequence"]
    assert s["metrics"]["sequence_similarity"] == 0.8
    # only the sequence is configured: renormalised, no cap; its component is the
    # similarity, since exact does not hold
    assert s["score"] == 80.0
    # exact: the positions that match, search = search, rerank != generate -> 1 / 2
    assert s["metrics"]["sequence_progress"] == 0.5


def test_the_seed_loops_example_and_edit_similarity(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: L
    expect:
      sequence: [search, grade]
      sequence_metric: edit
    thresholds: {max_loops: 3}
    warn_thresholds: {max_loops: 2}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "L", ["search", "search", "grade", "grade",
                                                      "grade"])})
    s = scenario(res, "L")
    assert s["metrics"]["loops"] == 3
    assert s["metrics"]["sequence_similarity"] == 1 - 3 / 5  # 3 deletions
    assert s["status"] == "warn"  # 3 <= 3 blocking, 3 > 2 warning
    (f,) = s["findings"]
    assert f["rule"] == "scenario/warn_threshold" and f["severity"] == "warning"
    assert at(f) == ws.line("max_loops", after="warn_thresholds")
    assert f["message"] == "loops = 3 exceeds max_loops: 2 (warn_thresholds)"


def test_tool_recall_precision_and_notes(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: T
    expect:
      tools: [lookup_order, issue_refund, send_email]
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "T", ["Lookup-Order", "lookup_order",
                                                      "search_kb", "issue_refund"])})
    s = scenario(res, "T")
    m = s["metrics"]
    assert m["tool_recall"] == pytest.approx(2 / 3)
    assert m["tool_precision"] == pytest.approx(2 / 3)  # normalized: 3 distinct tools used
    assert m["tool_f1"] == pytest.approx(2 / 3)
    assert m["tools_used"] == 3
    assert s["score"] == pytest.approx(100 * 2 / 3, abs=0.01)
    assert s["status"] == "pass"  # recall alone is a score, not a gate
    (f,) = s["findings"]
    assert (f["rule"], f["severity"], f["tool"]) == ("scenario/tool_recall", "note",
                                                     "send_email")
    assert at(f) == ws.line("send_email")


def test_globs_in_expected_tools(ws: Workspace) -> None:
    suite = HEAD + """tool_match: exact
scenarios:
  - id: G
    expect:
      tools: ["search_*", grade]
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "G", ["search_web", "search_kb", "Grade"])})
    m = scenario(res, "G")["metrics"]
    assert m["tool_recall"] == 0.5  # Grade is not grade under tool_match: exact
    assert m["tool_precision"] == pytest.approx(2 / 3)


def test_forbidden_tool_forces_score_0_and_fail_with_the_other_findings(ws: Workspace
                                                                        ) -> None:
    suite = HEAD + """scenarios:
  - id: F
    expect:
      tools: [get_customer]
      forbidden_tools: [delete_*, purge_data]
      output: {contains: [removed]}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "F", ["get_customer", "Delete-Customer",
                                                      "delete_customer", "delete-customer"],
                                          "Done.")})
    s = scenario(res, "F")
    assert s["status"] == "fail" and s["score"] == 0.0
    forbidden = [f for f in s["findings"] if f["rule"] == "scenario/forbidden_tools"]
    # one per tool as called; normalized matching catches every spelling
    assert sorted(f["tool"] for f in forbidden) == ["Delete-Customer", "delete-customer",
                                                    "delete_customer"]
    assert all(at(f) == ws.line("delete_*") for f in forbidden)
    assert all(f["constraint"] == "forbidden_tools: delete_*" for f in forbidden)
    # the other checks still report
    (out,) = [f for f in s["findings"] if f["rule"] == "scenario/output"]
    assert at(out) == ws.line("removed")
    assert s["metrics"]["tool_recall"] == 1.0 and s["metrics"]["output_quality"] == 0.0


def test_forbidden_camel_case_name_catches_a_snake_case_call(ws: Workspace) -> None:
    # issue 10 §2: `forbidden_tools: [EditFile]` vs a call `edit_file` fails the scenario
    suite = HEAD + """scenarios:
  - id: E
    expect:
      tools: [read_file]
      forbidden_tools: [EditFile]
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "E", ["read_file", "edit_file"])})
    s = scenario(res, "E")
    assert s["status"] == "fail" and s["score"] == 0.0
    (f,) = s["findings"]
    assert f["rule"] == "scenario/forbidden_tools" and f["tool"] == "edit_file"
    assert f["message"].startswith("Forbidden tool called: edit_file (forbidden_tools "
                                   "includes 'EditFile')")
    assert at(f) == ws.line("EditFile")  # the list item


def test_forbidden_tool_counted_once_per_tool_with_related_calls(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: F\n    expect:\n      forbidden_tools: purge_data\n"
    res = ws.run(suite, {"t.jsonl": trace("t", "F", ["purge_data", "x", "purge_data"])})
    (f,) = scenario(res, "F")["findings"]
    assert f["details"]["calls"] == 2 and len(f["related"]) == 1
    assert f["trace"]["line"] == 3  # the first call (after trace_start and llm_call)
    assert at(f) == ws.line("forbidden_tools")  # a single pattern: the key's position


def test_must_not_with_a_constraint_object(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: M
    expect:
      output: {contains: [refund]}
      must_not:
        - {tool_called: issue_refund, args: {amount: {min: 500}}}
        - {output_contains: password}
"""
    small = trace("s", "M", [("issue_refund", {"amount": 499.99})], "refund issued")
    string = trace("t", "M", [("issue_refund", {"amount": "900"})], "refund issued")
    big = trace("u", "M", [("issue_refund", {"amount": 500})], "refund; PASSWORD: x")
    res = ws.run(suite, {"a.jsonl": small, "b.jsonl": string, "c.jsonl": big})
    s = scenario(res, "M")
    rows = {r["trace_id"]: r["status"] for r in s["traces_not_passed"]}
    # a constraint with min/max judges numbers only: "900" might well be refunded as 900,
    # so whether the must_not happened cannot be told, and the trace fails too
    assert rows == {"t": "fail", "u": "fail"}
    hits = [f for f in s["findings"] if f["rule"] == "scenario/must_not"]
    assert sorted((f["trace"]["trace_id"], at(f)) for f in hits) == sorted([
        ("t", ws.line("{tool_called")), ("u", ws.line("{tool_called")),
        ("u", ws.line("{output_contains"))])
    assert s["traces_passed"] == 1 and s["status"] == "fail"
    # scores: 100; 0 for "900" (whether it happened cannot be told: scored as a hit, as its
    # finding says, "the scenario fails with score 0"); 0 (forced) -> mean 33.33
    assert s["score"] == pytest.approx(33.33)


def test_must_not_with_args_on_unreadable_arguments_fails(ws: Workspace) -> None:
    """A call of the prohibited tool whose arguments the trace holds but cannot be read (a
    Python repr, a JSON list) might be the prohibited one: it cannot be checked, so the
    scenario fails (spec "No silent pass"), where it used to pass with no finding."""
    suite = HEAD + """scenarios:
  - id: M
    expect:
      must_not:
        - {tool_called: issue_refund, args: {amount: {min: 500}}}
      behaviors:
        - {tool_called: issue_refund, args: {amount: {min: 1}}}
"""
    repr_args = trace("r", "M", [("issue_refund", "{'amount': 900}")])
    list_args = trace("l", "M", [("issue_refund", [900])])
    fine = trace("f", "M", [("issue_refund", {"amount": 20})])
    res = ws.run(suite, {"a.jsonl": repr_args, "b.jsonl": list_args, "c.jsonl": fine})
    s = scenario(res, "M")
    rows = {r["trace_id"]: r["status"] for r in s["traces_not_passed"]}
    assert rows == {"r": "fail", "l": "fail"}
    assert s["status"] == "fail" and res.verdict == "fail"
    hits = sorted((f["trace"]["trace_id"], f["rule"], f["severity"], f["message"])
                  for f in s["findings"] if f["rule"] != "scenario/behavior")
    text = ("tool_called: issue_refund with args {amount: {min: 500}}; the scenario fails "
            "with score 0")
    assert hits == [
        ("l", "scenario/must_not", "error", "issue_refund: arguments are a JSON array, not "
         "an object, so whether the must_not behavior happened cannot be told: " + text),
        ("l", "scenario/not_recorded", "warning", "issue_refund: arguments are a JSON array, "
         "not an object: tool_called: issue_refund with args {amount: {min: 1}} cannot be "
         "checked"),
        ("r", "scenario/must_not", "error", "issue_refund: arguments are a string that is "
         "not valid JSON, so whether the must_not behavior happened cannot be told: " + text),
        ("r", "scenario/not_recorded", "warning", "issue_refund: arguments are a string that "
         "is not valid JSON: tool_called: issue_refund with args {amount: {min: 1}} cannot "
         "be checked"),
    ]
    # each at the item's own line, and at the call's line in the trace
    must = [f for f in s["findings"] if f["rule"] == "scenario/must_not"]
    assert {at(f) for f in must} == {ws.line("{tool_called: issue_refund, args: {amount: "
                                             "{min: 500")}
    assert {f["trace"]["line"] for f in must} == {3}  # trace_start, llm_call, the call


def test_must_not_with_args_of_another_type_fails(ws: Workspace) -> None:
    """{min: 500} judges numbers only: a refund of "900" (a string, which the tool may well
    refund as 900) or of [900] cannot be checked, so the scenario fails (spec "No silent
    pass"), where it used to pass with no finding. A behavior that only such a call could
    meet is not observed, with a not_recorded warning; `type: number` given explicitly makes
    the string a plain non-match; expect.args is unchanged (a mismatch)."""
    suite = HEAD + """scenarios:
  - id: M
    expect:
      must_not:
        - {tool_called: issue_refund, args: {amount: {min: 500}}}
        - {tool_called: issue_refund, args: {amount: {type: number, max: 0}}}
      behaviors:
        - {tool_called: issue_refund, args: {amount: {min: 1}}}
  - id: A
    expect:
      args: {issue_refund: {amount: {min: 1}}}
"""
    text = trace("s", "M", [("issue_refund", {"amount": "900"})])
    array = trace("a", "M", [("issue_refund", {"amount": [900]})])
    small = trace("n", "M", [("issue_refund", {"amount": 20})])
    expected = trace("e", "A", [("issue_refund", {"amount": "20"})])
    res = ws.run(suite, {"s.jsonl": text, "a.jsonl": array, "n.jsonl": small,
                         "e.jsonl": expected})
    s = scenario(res, "M")
    assert {r["trace_id"]: r["status"] for r in s["traces_not_passed"]} == {"s": "fail",
                                                                            "a": "fail"}
    assert s["status"] == "fail" and res.verdict == "fail"
    hits = sorted((f["trace"]["trace_id"], f["rule"], f["severity"], f["message"])
                  for f in s["findings"] if f["rule"] != "scenario/behavior")
    must = ("so whether the must_not behavior happened cannot be told: tool_called: "
            "issue_refund with args {amount: {min: 500}}; the scenario fails with score 0")
    behavior = "tool_called: issue_refund with args {amount: {min: 1}} cannot be checked"
    assert hits == [
        ("a", "scenario/must_not", "error", "issue_refund: argument 'amount' is an array "
         "([900]), which {min: 500} cannot judge (it needs a number), " + must),
        ("a", "scenario/not_recorded", "warning", "issue_refund: argument 'amount' is an "
         "array ([900]), which {min: 1} cannot judge (it needs a number): " + behavior),
        ("s", "scenario/must_not", "error", "issue_refund: argument 'amount' is a string "
         "(\"900\"), which {min: 500} cannot judge (it needs a number), " + must),
        ("s", "scenario/not_recorded", "warning", "issue_refund: argument 'amount' is a "
         "string (\"900\"), which {min: 1} cannot judge (it needs a number): " + behavior),
    ]
    must_refs = {at(f) for f in s["findings"] if f["rule"] == "scenario/must_not"}
    assert must_refs == {ws.line("{tool_called: issue_refund, args: {amount: {min: 500")}
    # the positive expectation: "20" does not satisfy {min: 1}, as before (no warning)
    a = scenario(res, "A")
    assert [(f["rule"], f["severity"]) for f in a["findings"]] == [("scenario/args", "error")]
    assert "Expected a number" in a["findings"][0]["message"]


def test_must_not_with_a_literal_spelled_in_another_type_fails(ws: Workspace) -> None:
    """`{force: true}` against `"force": "true"`: JSON equality says no, so the must_not
    passed (score 100, exit 0) where a blocklist of the same selector reports
    tool_blocklist/wrong_type since ca022f4: a tool that coerces its arguments deleted
    with force. Whether it happened cannot be told, as for "900" against {min: 500}; a
    value that spells something else ("yes", 0) is a plain no, and expect.args is
    unchanged (a mismatch, no warning)."""
    suite = HEAD + """scenarios:
  - id: M
    expect:
      must_not:
        - {tool_called: delete_repo, args: {force: true}}
  - id: A
    expect:
      args: {delete_repo: {force: true}}
"""
    spelled = trace("s", "M", [("delete_repo", {"force": "true"})])
    one = trace("o", "M", [("delete_repo", {"force": 1})])
    word = trace("w", "M", [("delete_repo", {"force": "yes"})])
    zero = trace("z", "M", [("delete_repo", {"force": 0})])
    forced = trace("f", "M", [("delete_repo", {"force": True})])
    expected = trace("e", "A", [("delete_repo", {"force": "true"})])
    res = ws.run(suite, {"s.jsonl": spelled, "o.jsonl": one, "w.jsonl": word,
                         "z.jsonl": zero, "f.jsonl": forced, "e.jsonl": expected})
    s = scenario(res, "M")
    # "true" and 1 cannot be told apart from true: fail; true itself: a hit, fail
    assert {r["trace_id"]: r["status"] for r in s["traces_not_passed"]} == {
        "s": "fail", "o": "fail", "f": "fail"}
    assert s["traces_passed"] == 2 and res.verdict == "fail"
    untold = sorted((f["trace"]["trace_id"], f["message"]) for f in s["findings"]
                    if f["rule"] == "scenario/must_not" and "cannot be told" in f["message"])
    must = ("so whether the must_not behavior happened cannot be told: tool_called: "
            "delete_repo with args {force: true}; the scenario fails with score 0")
    assert untold == [
        ("o", "delete_repo: argument 'force' is an integer (1), which spells true in another "
         "JSON type: a tool that coerces its arguments may take it for true, " + must),
        ("s", "delete_repo: argument 'force' is a string (\"true\"), which spells true in "
         "another JSON type: a tool that coerces its arguments may take it for true, "
         + must)]
    a = scenario(res, "A")
    assert [(f["rule"], f["severity"]) for f in a["findings"]] == [("scenario/args", "error")]


@pytest.mark.parametrize(("mode", "calls", "ok"), [
    ("subsequence", ["a", "x", "b"], True),
    ("subsequence", ["b", "a"], False),
    ("strict", ["a", "b"], True),
    ("exact", ["a", "x", "b"], False),
    ("unordered", ["b", "a", "a"], True),
    ("unordered", ["b", "a", "x"], False),
    ("subset", ["b", "x", "a"], True),
    ("subset", ["a"], False),
    ("superset", ["a"], True),
    ("superset", ["a", "x"], False),
])
def test_sequence_modes(ws: Workspace, mode: str, calls: list[str], ok: bool) -> None:
    suite = HEAD + f"""scenarios:
  - id: S
    expect:
      sequence: [a, b]
      sequence_mode: {mode}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "S", calls)})
    s = scenario(res, "S")
    assert (s["status"] == "pass") == ok
    if not ok:
        (f,) = s["findings"]
        assert f["rule"] == "scenario/sequence" and at(f) == ws.line("sequence:")
        assert f["constraint"] == f"sequence_mode: {mode}"


def test_args_modes_and_locations(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: SUB
    expect:
      args:
        issue_refund: {order_id: A-1, amount: {max: 100}}
  - id: EXACT
    expect:
      args: {issue_refund: {order_id: A-1}}
      args_mode: exact
  - id: SUPER
    expect:
      args: {issue_refund: {order_id: A-1, amount: 10, note: x}}
      args_mode: superset
  - id: IGNORE
    expect:
      args: {issue_refund: {order_id: B}}
      args_mode: ignore
  - id: UNCALLED
    expect:
      args: {send_email: {to: a@example.com}}
"""
    call = [("issue_refund", {"order_id": "A-2", "amount": 150, "currency": "USD"}),
            ("issue_refund", {"order_id": "A-1"})]  # only the first call counts
    res = ws.run(suite, {f"{sid}.jsonl": trace(sid, sid, call)
                         for sid in ("SUB", "EXACT", "SUPER", "IGNORE", "UNCALLED")})
    sub = scenario(res, "SUB")
    by_arg = {f["argument"]: f for f in sub["findings"]}
    assert set(by_arg) == {"order_id", "amount"}
    assert at(by_arg["order_id"]) == ws.line("order_id: A-1")
    assert by_arg["order_id"]["message"] == (
        "issue_refund: argument 'order_id' = \"A-2\": expected A-1 (order_id: A-1); "
        "args_mode: subset")
    # a constraint object: the finding points at its keyword, as a policy's does
    assert at(by_arg["amount"]) == ws.line("max: 100")
    assert by_arg["amount"]["constraint"] == "max: 100"
    assert by_arg["amount"]["config"]["key_path"] == \
        "scenarios.SUB.expect.args.issue_refund.amount.max"
    exact = scenario(res, "EXACT")
    assert sorted(f["argument"] for f in exact["findings"]) == ["amount", "currency",
                                                                  "order_id"]
    superset = scenario(res, "SUPER")  # every call key expected, with its value
    assert sorted(f["argument"] for f in superset["findings"]) == ["amount", "currency",
                                                                     "order_id"]
    assert scenario(res, "IGNORE")["status"] == "pass"
    (f,) = scenario(res, "UNCALLED")["findings"]
    assert f["message"].startswith("send_email was not called")
    assert at(f) == ws.line("send_email:")
    assert all(scenario(res, sid)["status"] == "fail"
               for sid in ("SUB", "EXACT", "SUPER", "UNCALLED"))


def test_output_checks_and_output_quality(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: O
    expect:
      output:
        contains: [Refund, "R-55"]
        contains_any: [issued, processed]
        not_contains: ["I don't know", sorry]
        equals: "nope"
        regex: "refund of \\\\$\\\\d+"
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "O", [], "  Your refund of $24 was issued,"
                                                        " sorry!  ")})
    s = scenario(res, "O")
    failed = {f["details"]["check"]: at(f) for f in s["findings"]}
    assert failed == {"contains": ws.line('"R-55"'), "not_contains": ws.line("sorry"),
                      "equals": ws.line("equals")}
    assert s["metrics"]["output_quality"] == 2 / 5  # contains_any and regex pass
    assert s["status"] == "fail"


def test_a_list_of_output_regexes_needs_every_one(ws: Workspace) -> None:
    """``regex: [A, B]``: each pattern must be found (EvalView's several regex_patterns),
    each one missing a finding at its own item; the list is one check of output_quality."""
    suite = HEAD + """scenarios:
  - id: R
    expect:
      output:
        regex:
          - "refund of \\\\$\\\\d+"
          - "order [0-9]+"
        contains: [refund]
"""
    res = ws.run(suite, {"both.jsonl": trace("both", "R", [], "refund of $3, order 12"),
                         "one.jsonl": trace("one", "R", [], "refund of $3 issued"),
                         "none.jsonl": trace("none", "R", [], "a refund")})
    s = scenario(res, "R")
    missed = sorted((f["trace"]["trace_id"], at(f)) for f in s["findings"])
    assert missed == sorted([("none", ws.line('"order')), ("none", ws.line('"refund')),
                             ("one", ws.line('"order'))])
    assert (s["traces_total"], s["traces_passed"]) == (3, 1)
    # regex and contains are two checks: "both" passes both, "one" and "none" contains only
    assert s["metrics"]["output_quality"] == round((1 + 1 / 2 + 1 / 2) / 3, 6)  # (6 places)


def test_case_insensitive_checks_match_every_spelling_of_a_text(ws: Workspace) -> None:
    """contains, not_contains, state and a must_not output_contains compare Unicode's
    canonical caseless forms: 'café' written with a combining accent (NFD, as macOS and
    some tokenizers write it) is 'café', and 'STRASSE' is 'straße'. str.lower kept them
    apart, so a not_contains term (and a must_not) passed an output holding it in the
    other spelling, with exit 0."""
    import unicodedata

    suite = HEAD + """scenarios:
  - id: N
    expect:
      output:
        not_contains: ["Café secret", "Straße"]
      must_not: [{output_contains: "CAFÉ SECRET"}]
  - id: C
    expect:
      output: {contains: [STRASSE]}
      state: "café secret"
"""
    nfd = unicodedata.normalize("NFD", "the café secret is on the strasse")
    assert "café" not in nfd and "caf" in nfd  # the é is e + U+0301
    res = ws.run(suite, {"n.jsonl": trace("n", "N", [], nfd),
                         "c.jsonl": trace("c", "C", [], "Die Straße: " + nfd)})
    n = scenario(res, "N")
    assert sorted((f["rule"], at(f)) for f in n["findings"]) == [
        ("scenario/must_not", ws.line("{output_contains")),
        ("scenario/output", ws.line('"Café secret"')),
        ("scenario/output", ws.line('"Straße"'))]
    assert n["status"] == "fail"
    c = scenario(res, "C")
    assert (c["status"], c["findings"]) == ("pass", [])


def test_a_term_is_never_found_in_part_of_a_letter(ws: Workspace) -> None:
    """The caseless forms are compared composed: decomposed (NFD), 'cafe' was in 'café'
    (e + U+0301) and '하' in '한' (its first two jamo), so contains: cafe and a state
    passed an output holding neither term, exit 0 (str.lower, before, failed both)."""
    import unicodedata

    suite = HEAD + """scenarios:
  - id: C
    expect:
      output: {contains: [cafe]}
  - id: K
    expect:
      state: 하
"""
    composed = "Welcome to the café"
    decomposed = unicodedata.normalize("NFD", composed)
    assert len(decomposed) == len(composed) + 1  # é written e + U+0301
    res = ws.run(suite, {"c1.jsonl": trace("c1", "C", [], composed),
                         "c2.jsonl": trace("c2", "C", [], decomposed),
                         "k.jsonl": trace("k", "K", [], "한국")})
    c = scenario(res, "C")
    assert (c["status"], c["traces_passed"], rules_of(c)) == (
        "fail", 0, ["scenario/output", "scenario/output"])
    k = scenario(res, "K")
    assert (k["status"], rules_of(k)) == ("fail", ["scenario/state"])


def test_output_json_schema_file_compiled_once(ws: Workspace) -> None:
    (ws.root / "schemas").mkdir()
    (ws.root / "schemas" / "answer.json").write_text(
        '{"type": "object", "required": ["refund_id"], '
        '"properties": {"refund_id": {"type": "string", "pattern": "^R-"}}}')
    suite = HEAD + """scenarios:
  - id: J
    expect:
      output: {json_schema: schemas/answer.json}
"""
    res = ws.run(suite, {
        "a.jsonl": trace("a", "J", [], '{"refund_id": "R-1"}'),
        "b.jsonl": trace("b", "J", [], {"refund_id": "X-1"}),
        "c.jsonl": trace("c", "J", [], "not json"),
        "d.jsonl": trace("d", "J", [], None)})
    s = scenario(res, "J")
    assert {r["trace_id"]: r["status"] for r in s["traces_not_passed"]} == {
        "b": "fail", "c": "fail", "d": "fail"}
    msgs = {f["trace"]["trace_id"]: f["message"] for f in s["findings"]}
    assert "at /refund_id" in msgs["b"] and "does not match" in msgs["b"]
    assert msgs["c"].startswith("Output is not JSON")
    assert msgs["d"].startswith("No output")
    assert all(at(f) == ws.line("json_schema") for f in s["findings"])


def test_state_and_tool_health(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: H
    expect:
      state: Refund Issued
      tool_health: true
  - id: E
    expect:
      tool_health: {expected_error: [search_help_center]}
"""
    res = ws.run(suite, {
        "h.jsonl": trace("h", "H", [("send_email", {}, "relay timeout"), "x"],
                         "your refund issued today"),
        "e.jsonl": trace("e", "E", ["search_help_center", ("get", {}, "503")])})
    h = scenario(res, "H")
    f, unknown = h["findings"]  # the state is found case-insensitively
    assert f["rule"] == "scenario/tool_health" and at(f) == ws.line("tool_health: true")
    assert f["message"] == "Tool call failed: send_email: relay timeout"
    assert f["trace"]["line"] == 3
    # x has no result in the trace: whether it succeeded is unknown, never a pass
    assert (unknown["rule"], unknown["severity"], unknown["tool"]) == (
        "scenario/not_recorded", "warning", "x")
    assert unknown["message"] == ("x: no result recorded: tool_health cannot tell whether "
                                  "the call succeeded")
    assert at(unknown) == ws.line("tool_health: true")
    e = scenario(res, "E")
    assert sorted((f["rule"], f["tool"], at(f)) for f in e["findings"]) == [
        ("scenario/not_recorded", "search_help_center", ws.line("search_help_center")),
        ("scenario/tool_health", "get", ws.line("tool_health: {"))]  # an unexpected failure


def test_tool_health_of_a_call_that_succeeded(ws: Workspace) -> None:
    """A result recorded without an error is a success: for tool_health: true nothing is
    reported, for an expected_error tool it is the failure that did not happen."""
    from tests.conftest import events

    suite = HEAD + """scenarios:
  - id: H
    expect: {tool_health: true}
  - id: E
    expect:
      tool_health: {expected_error: [search_help_center]}
"""

    def text(tid: str, scenario: str) -> str:
        return events({"type": "trace_start", "trace_id": tid, "scenario": scenario},
                      {"type": "tool_call", "tool": "search_help_center", "id": "c1",
                       "arguments": {}},
                      {"type": "tool_result", "id": "c1", "result": {"articles": 0}},
                      {"type": "trace_end"})

    res = ws.run(suite, {"h.jsonl": text("h", "H"), "e.jsonl": text("e", "E")})
    h = scenario(res, "H")
    assert h["status"] == "pass" and h["findings"] == []
    (f,) = scenario(res, "E")["findings"]
    assert (f["rule"], f["message"]) == (
        "scenario/tool_health", "search_help_center succeeded, but its failure is the "
        "expected outcome (tool_health.expected_error)")


def test_state_missing(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: S\n    expect: {state: refund issued}\n"
    res = ws.run(suite, {"t.jsonl": trace("t", "S", [], None)})
    (f,) = scenario(res, "S")["findings"]
    assert f["rule"] == "scenario/state" and "recorded no final output" in f["message"]


def test_behaviors_score_and_notes(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: B
    expect:
      behaviors:
        - {tool_called: lookup_order}
        - {tool_called: issue_refund, args: {currency: USD}}
        - {tool_not_called: delete_customer}
        - {output_contains: SORRY}
        - {output_regex: "R-\\\\d+"}
        - {sequence: [lookup_order, send_email]}
"""
    res = ws.run(suite, {"t.jsonl": trace(
        "t", "B", ["lookup_order", ("issue_refund", {"currency": "EUR"}), "send_email"],
        "Sorry, refund R-12")})
    s = scenario(res, "B")
    assert s["metrics"]["behavior_score"] == pytest.approx(5 / 6)
    (f,) = s["findings"]
    assert (f["rule"], f["severity"]) == ("scenario/behavior", "note")
    assert at(f) == ws.line("{tool_called: issue_refund")
    assert s["status"] == "pass" and s["score"] is None  # nothing scored is configured


def test_budgets_unknown_figures_and_no_baseline(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: BUD
    thresholds:
      max_tool_calls: 2
      max_llm_calls: 1
      max_total_tokens: 150
      max_latency_ms: 5000
      max_cost_usd: 0.50
      max_cost_multiplier: 2.0
"""
    known = trace("k", "BUD", ["a", "b", "c"], tokens=200, cost=0.2, duration=900)
    unknown = trace("u", "BUD", ["a"], tokens=None, cost=None, duration=None)
    res = ws.run(suite, {"k.jsonl": known, "u.jsonl": unknown})
    s = scenario(res, "BUD")
    rows = {r["trace_id"]: r["status"] for r in s["traces_not_passed"]}
    assert rows == {"k": "fail", "u": "warn"}
    k = sorted((f["rule"], f["message"]) for f in s["findings"]
               if f["trace"] and f["trace"]["trace_id"] == "k")
    assert k == [("scenario/threshold", "tool_calls = 3 exceeds max_tool_calls: 2"),
                 ("scenario/threshold", "total_tokens = 200 exceeds max_total_tokens: 150")]
    # unknown figures are reported as such, never as zero
    u = sorted(f["message"] for f in s["findings"]
               if f["trace"] and f["trace"]["trace_id"] == "u")
    # (u has no llm_call event: how many LLM calls it made is unknown too)
    assert u == ["LLM calls not recorded: max_llm_calls: 1 cannot be checked",
                 "cost not recorded: max_cost_usd: 0.5 cannot be checked",
                 "latency not recorded: max_latency_ms: 5000 cannot be checked",
                 "tokens not recorded: max_total_tokens: 150 cannot be checked"]
    assert s["not_recorded"] == {"total_tokens": 1, "latency_ms": 1, "cost_usd": 1,
                                 "llm_calls": 1}
    assert s["metrics"]["cost_usd"] == 0.2  # the mean of the known ones
    # max_cost_multiplier needs a baseline: one note per scenario
    (note,) = [f for f in s["findings"] if f["rule"] == "scenario/no_baseline"]
    assert at(note) == ws.line("max_cost_multiplier")
    assert "no baseline" in note["message"] and note["trace"] is None


def test_no_llm_call_recorded_is_an_unknown_count_not_0(ws: Workspace) -> None:
    """c11: three tool calls and no llm_call event passed max_llm_calls: 2 (exit 0, read
    as 0 LLM calls). The count is unknown: max_llm_calls is a not_recorded warning, as
    max_cost_usd is for an unknown cost, and the figure is left out of the mean."""
    from tests.conftest import events

    suite = HEAD + """scenarios:
  - id: S1
    thresholds: {max_llm_calls: 2}
  - id: S2
    warn_thresholds: {max_llm_calls: 2}
"""

    def text(tid: str, sid: str, llm: int) -> str:
        return events({"type": "trace_start", "trace_id": tid, "scenario": sid},
                      *({"type": "llm_call", "model": "m"} for _ in range(llm)),
                      *({"type": "tool_call", "tool": "search", "arguments": {}}
                        for _ in range(3)),
                      {"type": "output", "output": "ok"},
                      {"type": "trace_end", "duration_ms": 5})

    res = ws.run(suite, {"a.jsonl": text("a", "S1", 0), "b.jsonl": text("b", "S2", 0)})
    for sid in ("S1", "S2"):  # a blocking threshold, and a warn_threshold
        s = scenario(res, sid)
        assert s["status"] == "warn"
        assert [r["status"] for r in s["traces_not_passed"]] == ["warn"]
        (f,) = s["findings"]
        assert (f["rule"], f["severity"], f["message"]) == (
            "scenario/not_recorded", "warning",
            "LLM calls not recorded: max_llm_calls: 2 cannot be checked")
        assert at(f) == ws.line("max_llm_calls", after=f"id: {sid}")
        assert f["trace"]["line"] == 6  # the trace's end (start, 3 calls, output, end)
        assert "llm_calls" not in s["metrics"]
        assert s["not_recorded"]["llm_calls"] == 1
    # recorded LLM calls are counted as before: 3 exceeds 2, 1 passes; the mean is over
    # the traces that recorded some (3 and 1: 2), the third trace's count is unknown
    res = ws.run(suite, {"a.jsonl": text("a", "S1", 3), "b.jsonl": text("b", "S2", 0),
                         "c.jsonl": text("c", "S1", 1), "d.jsonl": text("d", "S1", 0)})
    s = scenario(res, "S1")
    assert s["status"] == "fail"
    assert sorted((f["trace"]["trace_id"], f["rule"], f["message"]) for f in s["findings"]) == [
        ("a", "scenario/threshold", "llm_calls = 3 exceeds max_llm_calls: 2"),
        ("d", "scenario/not_recorded",
         "LLM calls not recorded: max_llm_calls: 2 cannot be checked")]
    assert s["metrics"]["llm_calls"] == 2.0
    assert s["not_recorded"]["llm_calls"] == 1


def test_latency_falls_back_to_the_sum_of_call_latencies(ws: Workspace) -> None:
    from tests.conftest import events

    suite = HEAD + "scenarios:\n  - id: L\n    thresholds: {max_latency_ms: 500}\n"
    text = events({"type": "trace_start", "trace_id": "t", "scenario": "L"},
                  {"type": "tool_call", "tool": "a", "arguments": {}, "latency_ms": 300},
                  {"type": "llm_call", "model": "m", "latency_ms": 400},
                  {"type": "trace_end"})
    (f,) = scenario(ws.run(suite, {"t.jsonl": text}), "L")["findings"]
    assert f["message"] == "latency_ms = 700 exceeds max_latency_ms: 500"


def test_a_recorded_part_over_a_max_threshold_is_a_miss(ws: Workspace) -> None:
    """A figure some calls did not record is unknown, but what the others recorded is a
    floor (no figure is below 0): over a max_* limit already, the threshold is missed,
    not a not_recorded warning. Under the limit, it is still that warning."""
    from tests.conftest import events

    suite = HEAD + """scenarios:
  - id: P
    thresholds: {max_cost_usd: 0.10, max_total_tokens: 1000, max_latency_ms: 1000}
  - id: W
    warn_thresholds: {max_cost_usd: 0.10}
  - id: U
    thresholds: {max_cost_usd: 10, max_total_tokens: 200000, max_latency_ms: 200000}
"""

    def text(tid: str, scenario: str) -> str:
        return events(
            {"type": "trace_start", "trace_id": tid, "scenario": scenario},
            {"type": "llm_call", "trace_id": tid, "model": "m", "input_tokens": 100000,
             "output_tokens": 10, "cost_usd": 5.0, "latency_ms": 150000},
            {"type": "llm_call", "trace_id": tid, "model": "m", "input_tokens": 7},
            {"type": "tool_call", "trace_id": tid, "tool": "a", "arguments": {}},
            {"type": "trace_end", "trace_id": tid})

    res = ws.run(suite, {"p.jsonl": text("p", "P"), "w.jsonl": text("w", "W"),
                         "u.jsonl": text("u", "U")})
    p = scenario(res, "P")
    assert p["status"] == "fail"
    assert sorted((f["rule"], f["message"], f["value"]) for f in p["findings"]) == [
        ("scenario/threshold", "cost_usd = at least 5 (1 call of the trace did not record "
         "it) exceeds max_cost_usd: 0.1", 5),
        # the second call's total is unknown, its input tokens are counted
        ("scenario/threshold", "latency_ms = at least 150000 (2 calls of the trace did not "
         "record it) exceeds max_latency_ms: 1000", 150000),
        ("scenario/threshold", "total_tokens = at least 100017 (1 call of the trace did "
         "not record it) exceeds max_total_tokens: 1000", 100017)]
    assert p["not_recorded"] == {"total_tokens": 1, "latency_ms": 1, "cost_usd": 1}
    w = scenario(res, "W")
    assert w["status"] == "warn"
    assert [(f["rule"], f["message"]) for f in w["findings"]] == [
        ("scenario/warn_threshold", "cost_usd = at least 5 (1 call of the trace did not "
         "record it) exceeds max_cost_usd: 0.1 (warn_thresholds)")]
    u = scenario(res, "U")
    assert u["status"] == "warn"  # under the limits: still unknown, never a pass
    assert [r["status"] for r in u["traces_not_passed"]] == ["warn"]
    assert sorted(f["message"] for f in u["findings"]) == [
        "cost not recorded: max_cost_usd: 10 cannot be checked",
        "latency not recorded: max_latency_ms: 200000 cannot be checked",
        "tokens not recorded: max_total_tokens: 200000 cannot be checked"]


def test_a_trace_total_below_its_calls_does_not_hide_them(ws: Workspace) -> None:
    """A total the trace records itself (trace_end's cost_usd, total_tokens) below what its
    LLM calls recorded contradicts them (no figure is below 0): the larger is the figure,
    so a trace_end claiming $0.01 no longer hides a $3 call from max_cost_usd (it passed
    with exit 0). A total above the calls' sum is kept: it may count what no call did."""
    from tests.conftest import events

    suite = HEAD + """scenarios:
  - id: LOW
    thresholds: {max_cost_usd: 0.05, max_total_tokens: 1000}
  - id: HIGH
    thresholds: {max_cost_usd: 0.05, max_total_tokens: 1000}
"""

    def text(tid: str, sid: str, cost: float, tokens: int, call_cost: float) -> str:
        return events(
            {"type": "trace_start", "trace_id": tid, "scenario": sid},
            {"type": "llm_call", "trace_id": tid, "model": "m", "input_tokens": 500,
             "output_tokens": 100, "cost_usd": call_cost},
            {"type": "llm_call", "trace_id": tid, "model": "m", "input_tokens": 400,
             "output_tokens": 100, "cost_usd": call_cost},
            {"type": "trace_end", "trace_id": tid, "cost_usd": cost, "total_tokens": tokens})

    res = ws.run(suite, {"low.jsonl": text("low", "LOW", 0.01, 10, 1.5),
                         "high.jsonl": text("high", "HIGH", 0.04, 900, 0.01)})
    low = scenario(res, "LOW")
    assert low["status"] == "fail"
    # the calls: 1.5 + 1.5 dollars, 600 + 500 tokens
    assert sorted(f["message"] for f in low["findings"]) == [
        "cost_usd = 3 exceeds max_cost_usd: 0.05",
        "total_tokens = 1100 exceeds max_total_tokens: 1000"]
    assert (low["metrics"]["cost_usd"], low["metrics"]["total_tokens"]) == (3, 1100)
    high = scenario(res, "HIGH")  # 0.04 > 0.02 and 900 < 1100: each the larger
    assert high["status"] == "fail"
    assert [f["message"] for f in high["findings"]] == [
        "total_tokens = 1100 exceeds max_total_tokens: 1000"]
    assert (high["metrics"]["cost_usd"], high["metrics"]["total_tokens"]) == (0.04, 1100)


def test_min_score_and_weights(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: W
    expect:
      tools: [a, b]
      output: {contains: ["yes"]}
      sequence: [a, b]
    weights: {tool_accuracy: 1, output_quality: 1, sequence: 2}
    thresholds: {min_score: 80, min_tool_recall: 1.0, min_sequence_similarity: 0.7}
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "W", ["a", "c"], "yes")})
    s = scenario(res, "W")
    # recall 0.5, output 1, lcs 2·1/4 = 0.5: (0.5 + 1 + 2·0.5) / 4 = 62.5
    assert s["score"] == 62.5
    broken = sorted((f["constraint"], at(f)) for f in s["findings"]
                    if f["rule"] == "scenario/threshold")
    assert broken == [("min_score: 80", ws.line("min_score")),
                      ("min_sequence_similarity: 0.7", ws.line("min_sequence_similarity")),
                      ("min_tool_recall: 1", ws.line("min_tool_recall"))]


def test_every_figure_is_reported_per_scenario(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: ALL
    expect:
      tools: [a]
      sequence: [a]
      output: {contains: [ok]}
      behaviors: [{tool_called: a}]
"""
    s = scenario(ws.run(suite, {"t.jsonl": trace("t", "ALL", ["a"])}), "ALL")
    hidden = {"tool_hits", "tool_used_hits", "output_ok"}
    assert set(s["metrics"]) == (set(FIGURES) - hidden) | {"sequence_metric"}


def test_rule_ids_are_stable() -> None:
    assert RULES == (
        "scenario/forbidden_tools", "scenario/must_not", "scenario/sequence", "scenario/args",
        "scenario/output", "scenario/state", "scenario/tool_health", "scenario/tool_recall",
        "scenario/behavior", "scenario/threshold", "scenario/warn_threshold",
        "scenario/not_recorded", "scenario/no_baseline", "scenario/missing_trace",
        "criteria/blocking", "criteria/warning", "criteria/by_category",
        "criteria/composite", "criteria/required", "scenario/handoff", "scenario/unknown_id")


def test_fingerprints_are_stable_across_unrelated_edits(ws: Workspace) -> None:
    suite = HEAD + "scenarios:\n  - id: F\n    expect:\n      forbidden_tools: [x]\n"
    one = scenario(ws.run(suite, {"t.jsonl": trace("t", "F", ["x"])}), "F")
    moved = suite.replace("scenarios:", "# a comment\n\nscenarios:")
    two = scenario(ws.run(moved, {"t.jsonl": trace("t", "F", ["x"])}), "F")
    assert one["findings"][0]["config"]["line"] + 2 == two["findings"][0]["config"]["line"]
    assert one["findings"][0]["fingerprint"] == two["findings"][0]["fingerprint"]
    assert one["findings"][0]["config"]["key_path"] == \
        "scenarios.F.expect.forbidden_tools.0"
    assert rules_of(one) == ["scenario/forbidden_tools"]


# ------------------------------------------------------------- issue 10 §4 cases
def test_a_must_not_hit_makes_the_behavior_score_0(ws: Workspace) -> None:
    """The metrics guide's per-scenario score: any must_not violation returns 0. Three
    scenarios with behaviors observed 4/4, 3/4 and 4/4, the third with a must_not hit:
    behavior_coverage (1 + 0.75 + 0) / 3 = 0.583, not (1 + 0.75 + 1) / 3 = 0.917."""
    behaviors = """      behaviors:
        - {tool_called: lookup_order}
        - {tool_called: issue_refund}
        - {tool_not_called: delete_customer}
        - {output_contains: refund}
"""
    suite = HEAD + "scenarios:\n" + "".join(
        f"  - id: {sid}\n    expect:\n" + behaviors for sid in ("B1", "B2", "B3")) + \
        "      must_not:\n        - {tool_called: issue_refund, args: {amount: {min: 500}}}\n"
    res = ws.run(suite, {
        "1.jsonl": trace("1", "B1", ["lookup_order", "issue_refund"], "refund issued"),
        "2.jsonl": trace("2", "B2", ["lookup_order", "issue_refund"], "done"),
        "3.jsonl": trace("3", "B3", ["lookup_order", ("issue_refund", {"amount": 900})],
                         "refund issued")})
    assert scenario(res, "B1")["metrics"]["behavior_score"] == 1.0
    assert scenario(res, "B2")["metrics"]["behavior_score"] == 0.75
    b3 = scenario(res, "B3")
    assert b3["metrics"]["behavior_score"] == 0.0  # every behavior observed, but a hit
    assert b3["status"] == "fail" and "scenario/must_not" in rules_of(b3)
    assert res.metrics["behavior_coverage"] == pytest.approx(0.583333, abs=1e-6)


def test_no_tool_called_with_tools_expected_has_precision_0(ws: Workspace) -> None:
    suite = HEAD + """scenarios:
  - id: NONE
    expect: {tools: [lookup_order]}
  - id: EMPTY
    expect: {tools: []}
"""
    res = ws.run(suite, {"n.jsonl": trace("n", "NONE", []), "e.jsonl": trace("e", "EMPTY", [])})
    m = scenario(res, "NONE")["metrics"]
    # AgentCI: compute_tool_precision({"a"}, set()) == 0.0; recall 0, f1 0
    assert (m["tool_precision"], m["tool_recall"], m["tool_f1"]) == (0.0, 0.0, 0.0)
    m = scenario(res, "EMPTY")["metrics"]
    assert (m["tool_precision"], m["tool_recall"]) == (1.0, 1.0)  # both empty
    # micro-averaged over the suite: Σ|E∩U| / Σ|U| with nothing used but 1 expected
    assert res.metrics["tool_precision"] == 0.0


@pytest.mark.parametrize(("mode", "calls", "progress"), [
    # exact: positions that match, up to the shorter length (EvalView)
    ("exact", ["a", "x", "b"], 0.5),
    ("exact", ["a", "b", "c"], 1.0),  # the prefix matches; the extra call fails exact
    ("exact", ["b", "a"], 0.0),
    # unordered: the expected tools called, order aside
    ("unordered", ["b", "x"], 0.5),
    ("unordered", ["b", "a"], 1.0),
    # subsequence: in order, as before
    ("subsequence", ["b", "a"], 0.5),
    ("subsequence", ["a", "x", "b"], 1.0),
    # superset: the calls that are in the reference
    ("superset", ["a", "x", "y", "b"], 0.5),
])
def test_sequence_progress_depends_on_the_mode(ws: Workspace, mode: str, calls: list[str],
                                               progress: float) -> None:
    suite = HEAD + f"""scenarios:
  - id: S
    expect:
      sequence: [a, b]
      sequence_mode: {mode}
"""
    s = scenario(ws.run(suite, {"t.jsonl": trace("t", "S", calls)}), "S")
    assert s["metrics"]["sequence_progress"] == progress


def test_sequence_severity_warning_makes_a_mismatch_warn(ws: Workspace) -> None:
    """AgentCI's path layer: a sequence mismatch warns instead of failing."""
    suite = HEAD + """scenarios:
  - id: PATH
    expect:
      tools: [search, answer]
      sequence: [search, answer]
      sequence_severity: warning
"""
    res = ws.run(suite, {"t.jsonl": trace("t", "PATH", ["answer", "search"])})
    s = scenario(res, "PATH")
    (f,) = s["findings"]
    assert (f["rule"], f["severity"]) == ("scenario/sequence", "warning")
    assert f["message"].endswith("(sequence_severity: warning)")
    assert at(f) == ws.line("sequence: [search")
    assert s["status"] == "warn" and res.verdict == "warn"
    assert s["traces_not_passed"] == [{"file": "traces/t.jsonl", "line": 1,
                                       "trace_id": "t", "status": "warn"}]
    # the score still takes the similarity, since the mode does not hold: recall 1,
    # lcs 2·1/4 = 0.5 -> (0.3 + 0.2 · 0.5) / 0.5 = 80
    assert s["score"] == 80.0
    # the default is error: the same trace fails
    res = ws.run(suite.replace("      sequence_severity: warning\n", ""), {})
    assert scenario(res, "PATH")["status"] == "fail" and res.verdict == "fail"


@pytest.mark.parametrize(("key", "value", "trace_kw", "ok"), [
    # every max_* is "at most": a value equal to the limit passes, one above fails
    ("max_latency_ms", 10000, {"duration": 10000}, True),
    ("max_latency_ms", 10000, {"duration": 10001}, False),
    ("max_latency_ms", 9999, {"duration": 10000}, False),  # the guide's "< 10000"
    ("max_cost_usd", 0.05, {"cost": 0.05}, True),
    ("max_cost_usd", 0.05, {"cost": 0.0500001}, False),
    ("max_total_tokens", 100, {"tokens": 100}, True),
    ("max_total_tokens", 100, {"tokens": 101}, False),
    # every min_* is "at least": equal passes
    ("min_score", 100, {}, True),
])
def test_thresholds_are_inclusive(ws: Workspace, key: str, value: float,
                                  trace_kw: dict[str, Any], ok: bool) -> None:
    suite = HEAD + f"""scenarios:
  - id: T
    expect: {{tools: [a]}}
    thresholds: {{{key}: {value}}}
"""
    s = scenario(ws.run(suite, {"t.jsonl": trace("t", "T", ["a"], **trace_kw)}), "T")
    assert (s["status"] == "pass") is ok, s["findings"]
