"""coverage/unexercised (issue 10 §3): every place of the config that names a tool no
trace calls is reported at its key, with "did you mean" from the names that were called;
a test that touched no call is ``not_exercised``; the same over --jobs and shards; an
error under --strict-coverage or ``unexercised: error``.

Lines and columns were counted by hand in the literals below (line 1 is a literal's
first line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import read_results, within

from agent_eval._cli import main as cli
from agent_eval.api import load_suite, suite_sources
from agent_eval.coverage import MAX_NAMES, CoverageAcc, CoveragePlan, ToolRef, closest
from agent_eval.engine import evaluate_files
from agent_eval.errors import ConfigError
from agent_eval.findings import ConfigRef
from agent_eval.matching import ToolMatcher, ToolMatchMode
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.renderers import console as console_renderer
from agent_eval.results import Results
from agent_eval.sharding import evaluate_shard, merge

SUITE = """\
version: "1"
suite: typos
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
  - id: order
    metric: sequence_valid
    rules:
      - type: before
        first: authenticate
        then: refund_order
  - id: block
    metric: tool_blocklist
    blocklist: [rm_rf_everything]
"""
# line 12: first: authenticate (the key `first` at column 9; a single name is located at
# its key); line 13: then: refund_order; line 16: blocklist: [rm_rf_everything] (the item
# at column 17)

POLICY = """\
version: "1"
tools:
  send_emial:
    arguments:
      to: {type: string}
"""
# line 3: send_emial (column 3)


def call(tool: str, **args: Any) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, "arguments": args}) + "\n"


def trace(tid: str, *calls: str) -> str:
    return (json.dumps({"type": "trace_start", "trace_id": tid}) + "\n" + "".join(calls)
            + json.dumps({"type": "trace_end"}) + "\n")


TRACES = {
    "a.jsonl": trace("a", call("authenticate_user"), call("send_email", to="x@y")),
    "b.jsonl": trace("b", call("refund", amount=3), call("lookup_order")),
}


def workspace(root: Path, suite: str = SUITE, traces: dict[str, str] | None = None,
              policy: str = POLICY) -> Path:
    (root / ".git").mkdir(exist_ok=True)
    (root / "agent-eval.yaml").write_text(suite, encoding="utf-8")
    (root / "policy.yaml").write_text(policy, encoding="utf-8")
    (root / "traces").mkdir(exist_ok=True)
    for name, text in (TRACES if traces is None else traces).items():
        (root / "traces" / name).write_text(text, encoding="utf-8")
    return root / "agent-eval.yaml"


def evaluate(config: Path, jobs: int = 1, strict: bool = False) -> Results:
    suite = load_suite(config)
    files, errors = suite_sources(suite)
    return evaluate_files(suite, files, errors, jobs=jobs, timings=False,
                          strict_coverage=strict)


def where(results: Results) -> list[tuple[str, int, int, str]]:
    return [(f.config.file, f.config.line, f.config.col, f.tool or "")
            for f in results.unexercised]


# ------------------------------------------------------------ the cases
def test_typo_in_policy_rule_and_blocklist_are_reported(tmp_path: Path) -> None:
    results = evaluate(workspace(tmp_path))
    assert where(results) == [
        ("agent-eval.yaml", 12, 9, "authenticate"),
        ("agent-eval.yaml", 13, 9, "refund_order"),
        ("agent-eval.yaml", 16, 17, "rm_rf_everything"),
        ("policy.yaml", 3, 3, "send_emial"),
    ]
    assert {f.rule for f in results.unexercised} == {"coverage/unexercised"}
    assert {f.severity for f in results.unexercised} == {"note"}
    messages = [f.message for f in results.unexercised]
    assert messages == [
        "No call to 'authenticate' (before rule, first) in any of the 2 trace(s) (did you "
        "mean 'authenticate_user'?)",
        "No call to 'refund_order' (before rule, then) in any of the 2 trace(s) (did you "
        "mean 'refund'?); the rule held only vacuously",
        "No call to 'rm_rf_everything' (blocklist entry) in any of the 2 trace(s); the "
        "rule held only vacuously",
        "No call to 'send_emial' (policy key) in any of the 2 trace(s) (did you mean "
        "'send_email'?); its constraints were never checked",
    ]
    assert [f.test for f in results.unexercised] == ["order", "order", "block", "args"]
    assert [f.details["suggestion"] for f in results.unexercised] == [
        "authenticate_user", "refund", None, "send_email"]
    # nothing any test names was called: not exercised, not passed
    assert [(t.id, t.status) for t in results.tests] == [
        ("args", "not_exercised"), ("order", "not_exercised"), ("block", "not_exercised")]
    assert results.verdict == "pass" and results.counts["unexercised"] == 4
    # in Results.findings, so every renderer that lists the findings shows them
    assert results.unexercised[0] in results.findings
    assert len({f.fingerprint for f in results.unexercised}) == 4


def test_a_called_tool_is_exercised(tmp_path: Path) -> None:
    fixed = SUITE.replace("authenticate\n", "authenticate_user\n").replace(
        "refund_order", "refund")
    results = evaluate(workspace(tmp_path, fixed, policy=POLICY.replace("emial", "email")))
    assert where(results) == [("agent-eval.yaml", 16, 17, "rm_rf_everything")]
    assert [(t.id, t.status) for t in results.tests] == [
        ("args", "pass"), ("order", "fail"), ("block", "not_exercised")]


def test_names_match_as_the_suite_says(tmp_path: Path) -> None:
    # normalized (the default): SendEmail is send_email; a glob matches too
    suite = SUITE.replace("[rm_rf_everything]", "[Lookup-*]")
    results = evaluate(workspace(tmp_path, suite,
                                 policy=POLICY.replace("send_emial", "SendEmail")))
    assert ("policy.yaml", 3, 3, "SendEmail") not in where(results)
    assert ("agent-eval.yaml", 16, 17, "Lookup-*") not in where(results)
    exact = suite.replace("suite: typos", "suite: typos\ntool_match: exact")
    results = evaluate(workspace(tmp_path, exact,
                                 policy=POLICY.replace("send_emial", "SendEmail")))
    # one line more in the suite; a glob gets no suggestion
    assert ("policy.yaml", 3, 3, "SendEmail") in where(results)
    (glob,) = [f for f in results.unexercised if f.tool == "Lookup-*"]
    assert glob.message == ("No tool call matched 'Lookup-*' (blocklist entry) in any of "
                            "the 2 trace(s); the rule held only vacuously")
    (key,) = [f for f in results.unexercised if f.tool == "SendEmail"]
    assert "(did you mean 'send_email'?)" in key.message


def test_args_valid_tools_filter_and_shared_policy(tmp_path: Path) -> None:
    suite = SUITE + """\
  - id: args_again
    metric: args_valid
    policy: policy.yaml
    tools: [send_email, sms]
"""
    # line 20: '    tools: [send_email, sms]': send_email at column 13, sms at 25. No policy
    # key matches either name (the policy's is send_emial): their calls would be skipped,
    # unchecked, so the filter is a config error (it was a coverage note and a pass)
    with pytest.raises(ConfigError) as exc:
        evaluate(workspace(tmp_path, suite))
    assert [p.split(": ")[0] for p in exc.value.problems] == [
        "agent-eval.yaml:20:13", "agent-eval.yaml:20:25"]
    assert "'send_email' in the tools filter matches no key of policy" in exc.value.problems[0]
    # globs are not held to the policy's keys (they may be meant wider): each is
    # reported when no call matched it, and the shared policy key once (by the first test)
    results = evaluate(workspace(tmp_path, suite.replace("[send_email, sms]",
                                                         '[send_*, "sm?"]')))
    # line 20: '    tools: [send_*, "sm?"]': the "sm?" item at column 21
    assert [(w[0], w[1], w[2], w[3]) for w in where(results)] == [
        ("agent-eval.yaml", 12, 9, "authenticate"), ("agent-eval.yaml", 13, 9, "refund_order"),
        ("agent-eval.yaml", 16, 17, "rm_rf_everything"), ("agent-eval.yaml", 20, 21, "sm?"),
        ("policy.yaml", 3, 3, "send_emial")]
    (sms,) = [f for f in results.unexercised if f.tool == "sm?"]
    assert sms.test == "args_again"
    assert sms.message.endswith("; the test checked no call through it")
    # send_email passes the filter, but no policy key matches it: nothing was checked
    assert results.tests[-1].status == "not_exercised"


def test_no_traces_no_coverage_findings(tmp_path: Path) -> None:
    results = evaluate(workspace(tmp_path, traces={"empty.jsonl": ""}))
    assert results.unexercised == []
    assert results.verdict == "error"  # input/no_traces says what is wrong


# -------------------------------------------------------------------- scenarios
SCENARIOS = """\
version: "1"
suite: scenario-typos
traces: traces/*.jsonl
scenarios:
  - id: S
    expect:
      tools: [authenticate_user, lookup_ordr]
      forbidden_tools: [delete_customer]
      sequence: [authenticate_user, lookup_ordr]
      args: {isue_refund: {amount: 3}}
      tool_health: {expected_error: [search_kb]}
      behaviors:
        - {tool_called: creat_ticket}
      must_not:
        - {tool_called: [wire_money]}
        - {sequence: [refund, delete_customer]}
"""


def test_scenario_expect_tools(tmp_path: Path) -> None:
    traces = {"s.jsonl": json.dumps({"type": "trace_start", "trace_id": "s",
                                     "scenario": "S"}) + "\n"
              + call("authenticate_user") + call("lookup_order") + call("refund")
              + call("create_ticket") + json.dumps({"type": "trace_end"}) + "\n"}
    results = evaluate(workspace(tmp_path, SCENARIOS, traces))
    got = [(f.config.line, f.config.col, f.tool, f.details["kind"], f.details["suggestion"],
            f.scenario, f.test) for f in results.unexercised]
    assert got == [
        (7, 34, "lookup_ordr", "expected tool", "lookup_order", "S", "S"),
        (8, 25, "delete_customer", "forbidden tool", None, "S", "S"),
        (9, 37, "lookup_ordr", "sequence step", "lookup_order", "S", "S"),
        (10, 14, "isue_refund", "args tool", "refund", "S", "S"),
        (11, 38, "search_kb", "expected_error tool", None, "S", "S"),
        (13, 12, "creat_ticket", "behaviors tool_called", "create_ticket", "S", "S"),
        (15, 26, "wire_money", "must_not tool_called", None, "S", "S"),
        (16, 31, "delete_customer", "must_not sequence step", None, "S", "S"),
    ]
    # isue_refund: one edit from issue_refund, which was not called; `refund` was, and
    # its words are a run of isue_refund's; delete_customer: no called name is near
    kinds = {f.details["kind"]: f.message for f in results.unexercised}
    assert kinds["forbidden tool"].endswith("; the rule held only vacuously")
    assert kinds["must_not tool_called"].endswith("; the rule held only vacuously")
    assert not kinds["expected tool"].endswith("vacuously")


# ----------------------------------------------------- strict: the run fails
def test_strict_coverage_flag_and_suite_key(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    config = workspace(tmp_path)
    out = tmp_path / "out"
    assert cli(["run", "--config", str(config), "-o", str(out), "-q"]) == 0
    assert cli(["run", "--config", str(config), "-o", str(out), "-q",
                "--strict-coverage"]) == 1
    data = read_results(out)
    assert data["verdict"] == "fail"
    assert {f["severity"] for f in data["unexercised"]} == {"error"}
    for key, verdict, code in (("warning", "warn", 0), ("error", "fail", 1),
                               ("note", "pass", 0)):
        config.write_text(SUITE.replace("suite: typos", f"suite: typos\nunexercised: {key}"))
        assert cli(["run", "--config", str(config), "-o", str(out), "-q"]) == code
        data = read_results(out)
        assert data["verdict"] == verdict
        assert {f["severity"] for f in data["unexercised"]} == {key}
    capsys.readouterr()


def test_unknown_suite_key_value_is_a_config_error(tmp_path: Path) -> None:
    from agent_eval.errors import ConfigError

    config = workspace(tmp_path, SUITE.replace("suite: typos", "suite: typos\nunexercised: "
                                               "eror"))
    with pytest.raises(ConfigError) as err:
        load_suite(config)
    assert "agent-eval.yaml:3:" in str(err.value)


# ------------------------------------------------------------ jobs and shards
MANY = {f"f{i}.jsonl": trace(f"t{i}", call(name)) for i, name in enumerate(
    ["authenticate_user", "lookup_order", "send_email", "refund", "ping", "pong"])}


def test_jobs_and_shards_agree_with_one_process(tmp_path: Path) -> None:
    config = workspace(tmp_path, traces=MANY)
    one = evaluate(config)
    two = evaluate(config, jobs=2)
    ctx = RenderContext.for_root(tmp_path)
    whole = RENDERERS["json"].render(one, ctx)
    assert RENDERERS["json"].render(two, ctx) == whole
    suite = load_suite(config)
    files, errors = suite_sources(suite)
    for count in (2, 3):
        parts = [Results.from_dict(json.loads(RENDERERS["json"].render(
            evaluate_shard(suite, files, errors, index=i, count=count, timings=False), ctx)))
            for i in range(1, count + 1)]
        # a shard alone decides nothing
        assert all(p.unexercised == [] for p in parts)
        assert all(t.status != "not_exercised" for p in parts for t in p.tests)
        assert RENDERERS["json"].render(merge(suite, parts, timings=False), ctx) == whole
    strict = merge(suite, parts, timings=False, strict_coverage=True)
    assert strict.verdict == "fail" and {f.severity for f in strict.unexercised} == {"error"}
    assert [f.details["suggestion"] for f in one.unexercised] == [
        "authenticate_user", "refund", None, "send_email"]


def test_glob_references_are_matched_together_each_glob_once() -> None:
    """The references' globs are tried together (one tree per mode), not through each
    reference's own matcher (whose memo then stays empty); a reference matches through
    any of its patterns, the same glob in two references matches both, and a glob that
    matched is not tried again."""
    pats: list[tuple[list[str], ToolMatchMode]] = [
        ([f"tool_{i}_*"], "normalized") for i in range(20)]
    pats += [(["Tool_3_*"], "exact"), (["tool_3_*"], "exact"), (["tool_3_*"], "normalized"),
             (["purge", "wipe_*"], "normalized"), (["?"], "exact"), (["x"], "exact")]
    refs = tuple(ToolRef(p[0], "blocklist entry", ConfigRef("a.yaml", k + 1, 1, f"k{k}"),
                         ToolMatcher(p, mode), "t") for k, (p, mode) in enumerate(pats))
    plan = CoveragePlan(refs, ())
    acc = CoverageAcc.for_plan(plan)
    for name in ("Tool-3-a", "tool_3_b", "wipe-All", "other", "Tool_3_c", "tool_3_d"):
        acc.see(name, plan)
    # Tool-3-a and tool_3_b: tool_3_* (normalized, twice); wipe-All: purge/wipe_*;
    # Tool_3_c: Tool_3_* (exact); tool_3_d: tool_3_* (exact). Not ?, x, nor tool_{i}_*
    # but for i = 3.
    assert [k for k, hit in enumerate(acc.matched) if hit] == [3, 20, 21, 22, 23]
    assert acc.pending == len(refs) - 5
    assert all(not r.matcher._memo for r in refs)
    assert sum(acc.seen[0]) > 0  # the tree of normalized globs kept what it saw


def test_names_kept_are_bounded_and_order_free() -> None:
    plan = CoveragePlan((), ())
    names = [f"tool_{i:05d}" for i in range(3 * MAX_NAMES)]
    forward, backward, halves = (CoverageAcc.for_plan(plan) for _ in range(3))
    for n in names:
        forward.see(n, plan)
    for n in reversed(names):
        backward.see(n, plan)
    left, right = CoverageAcc.for_plan(plan), CoverageAcc.for_plan(plan)
    for n in names[::2]:
        left.see(n, plan)
    for n in names[1::2]:
        right.see(n, plan)
    halves.merge(left)
    halves.merge(right)
    kept = [sorted(a.names)[:MAX_NAMES] for a in (forward, backward, halves)]
    assert kept[0] == kept[1] == kept[2] == names[:MAX_NAMES]
    assert all(len(a.names) <= 2 * MAX_NAMES for a in (forward, backward, halves))
    assert forward.to_dict()["names"] == names[:MAX_NAMES]


@pytest.mark.parametrize(("pattern", "names", "expected"), [
    ("send_emial", ["send_email", "send_sms"], "send_email"),
    ("SendEmial", ["send-email"], "send-email"),  # compared in normal form
    ("authenticate", ["authenticate_user", "auth"], "authenticate_user"),
    ("refund_order", ["refund", "order_status"], "refund"),
    ("delete_customer", ["get_customer", "update_customer"], None),
    ("ab", ["xy"], None),
    ("a", ["b"], None),  # one edit, but the whole name
    ("x", [], None),
])
def test_closest(pattern: str, names: list[str], expected: str | None) -> None:
    assert closest(pattern, names) == expected


def test_every_output_shows_not_exercised(tmp_path: Path) -> None:
    results = evaluate(workspace(tmp_path))
    ctx = RenderContext.for_root(tmp_path)
    console = console_renderer.render(results)
    assert "➖ NOT EXERCISED: block  (2 traces; no call to a tool it names was made)" in console
    markdown = RENDERERS["markdown"].render(results, ctx)
    assert "| `block` | `tool_blocklist` | ➖ not exercised | 0 | 0 / 2 |" in markdown
    assert "(did you mean 'send_email'?)" in markdown
    junit = RENDERERS["junit"].render(results, ctx)
    assert junit.count("<skipped>not exercised: no call to a tool this test names was "
                       "made") == 6  # 3 tests x 2 traces
    assert "coverage/unexercised (note): No call to 'send_emial'" in junit
    html = RENDERERS["html"].render(results, ctx)
    assert '<span class="status s-not_exercised">not_exercised</span>' in html
    sarif = json.loads(RENDERERS["sarif"].render(results, ctx))
    found = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "coverage/unexercised"]
    assert len(found) == 4 and {r["level"] for r in found} == {"note"}
    data = json.loads(RENDERERS["json"].render(results, ctx))
    assert [t["status"] for t in data["tests"]] == ["not_exercised"] * 3
    assert Results.from_dict(data).unexercised == results.unexercised


def test_did_you_mean_is_looked_for_within_a_bound(tmp_path: Path) -> None:
    """A blocklist of 100 names that no trace calls against 1,000 names called, all
    alike but for their ends: "did you mean" compared each pair with a whole table
    (ten minutes); now within HINT_WORK, in seconds. Every reference is still reported;
    the first ones, looked at while the work lasts, keep their hints, whatever order the
    trace called the names in."""
    middle = "x_" * 24

    def code(i: int) -> str:
        return "".join("ab"[(i >> k) & 1] for k in range(12))

    blocklist = "".join(f"      - a{middle}aaa{code(i)}\n" for i in range(100))
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: hints\ntraces: traces/*.jsonl\ntests:\n  - id: bl\n    metric: tool_blocklist\n"
        "    blocklist:\n      - send_emial\n" + blocklist)
    (tmp_path / "traces").mkdir()
    names = [f"z{middle}bbb{code(j)}" for j in range(1000)] + ["send_email"]
    hints = []
    for order in (names, names[::-1]):
        (tmp_path / "traces" / "t.jsonl").write_text("".join(call(n) for n in order))
        s = load_suite(tmp_path / "agent-eval.yaml")
        files, errors = suite_sources(s, base=tmp_path)
        with within(30, "the run"):
            res = evaluate_files(s, files, errors, timings=False)
        found = [f for f in res.findings if f.rule == "coverage/unexercised"]
        assert len(found) == 101
        hints.append([f.details["suggestion"] for f in found])
    assert hints[0] == hints[1]
    assert hints[0][0] == "send_email"  # the first reference (line 7) has its hint


def _many_names(tmp_path: Path, blocklist: list[str], keys: list[str], calls: str
                ) -> Results:
    """A suite with an args_valid test of a policy whose tool keys are ``keys`` (each with
    ``x: {type: integer}``, on its own three lines from line 2) and a tool_blocklist of
    ``blocklist`` (as written in YAML), run within 30 s on a trace of 20,000 distinct
    names that match neither, then ``calls``."""
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: many\ntraces: traces/*.jsonl\ntests:\n  - id: av\n    metric: args_valid\n"
        "    policy: policy.yaml\n  - id: bl\n    metric: tool_blocklist\n    blocklist: ["
        + ", ".join(blocklist) + "]\n")
    (tmp_path / "policy.yaml").write_text("tools:\n" + "".join(
        f"  {k}:\n    arguments:\n      x: {{type: integer}}\n" for k in keys))
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.jsonl").write_text(
        "".join(call(f"t{j}") for j in range(20000)) + calls)
    s = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(s, base=tmp_path)
    with within(30, "the run"):
        return evaluate_files(s, files, errors, timings=False)


def test_a_thousand_names_no_trace_calls_against_20000_names_called(tmp_path: Path) -> None:
    """A policy of 1,000 tools and a blocklist of 1,000 names, none called, against a
    trace of 20,000 distinct names: each name was tried against every key, entry and
    coverage reference (about three minutes); now each is looked up. The calls that match
    are still found, in normal form."""
    res = _many_names(tmp_path, [f"blocked_{i}" for i in range(1000)],
                      [f"never_called_{i}" for i in range(1000)],
                      call("Never-Called-7", x="no") + call("BlockedFive")
                      + call("blocked-999"))
    found = {(f.rule, f.tool) for f in res.findings if f.rule != "coverage/unexercised"}
    assert found == {("args_valid/type", "Never-Called-7"), ("tool_blocklist", "blocked-999")}
    # every key and entry but the two called is unexercised
    assert sum(f.rule == "coverage/unexercised" for f in res.findings) == 1998


def test_a_thousand_globs_no_trace_calls_against_20000_names_called(tmp_path: Path) -> None:
    """A blocklist of 1,000 globs and a policy of 1,000 glob keys, none called, against
    a trace of 20,000 distinct names: each name was tried against every glob of the
    blocklist, of the policy and of the coverage references (over five minutes); now the
    globs are tried together (a GlobTree). The calls that match are still found, the
    blocklist naming its first matching entry, and the coverage references they match
    are exercised."""
    res = _many_names(tmp_path, [f"'blocked_{i}_*'" for i in range(1000)] + ["'blocked_9*'"],
                      [f"'never_called_{i}_*'" for i in range(1000)],
                      call("Never-Called-7-now", x="no") + call("BlockedFive")
                      + call("blocked-99-z"))
    found = {(f.rule, f.tool, f.constraint) for f in res.findings
             if f.rule != "coverage/unexercised"}
    assert found == {("args_valid/type", "Never-Called-7-now", "type: integer"),
                     ("tool_blocklist", "blocked-99-z", "blocklist: blocked_99_*")}, found
    # the key never_called_7_* (policy line 23; its x: at 25) is the one that checked it
    assert [(f.config.file, f.config.line) for f in res.findings
            if f.rule == "args_valid/type"] == [("policy.yaml", 25)]
    unexercised = {f.tool for f in res.findings if f.rule == "coverage/unexercised"}
    # 2,001 references; never_called_7_*, blocked_99_* and blocked_9* matched a call
    assert len(unexercised) == 1998
    assert not {"never_called_7_*", "blocked_99_*", "blocked_9*"} & unexercised
    assert {"never_called_8_*", "blocked_98_*", "blocked_999_*"} <= unexercised


def test_a_sequence_rule_of_a_thousand_globs_against_20000_names(tmp_path: Path) -> None:
    """Whether a call touched a sequence_valid test was asked of each tool its rules
    name, one by one: a blocklist rule of 1,000 globs against 20,000 distinct names
    called took minutes; now they are tried together. The test is touched (not
    ``not_exercised``) by the one call a glob matches, and that call is blocked."""
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: seq\ntraces: traces/*.jsonl\ntests:\n  - id: sq\n    metric: sequence_valid\n"
        "    rules:\n      - type: blocklist\n        tools: ["
        + ", ".join(f"'blocked_{i}_*'" for i in range(1000)) + "]\n")
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.jsonl").write_text(
        "".join(call(f"t{j}") for j in range(20000)) + call("Blocked-500-now"))
    s = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(s, base=tmp_path)
    with within(30, "the run"):
        res = evaluate_files(s, files, errors, timings=False)
    assert {(f.rule, f.tool) for f in res.findings if f.rule != "coverage/unexercised"} == {
        ("sequence_valid/blocklist", "Blocked-500-now")}
    assert res.tests[0].status != "not_exercised"
    assert sum(f.rule == "coverage/unexercised" for f in res.findings) == 999


SMALL_GLOBS = """\
suite: globs
traces: traces/*.jsonl
tests:
  - id: bl
    metric: tool_blocklist
    blocklist: [drop_*, "*_db", Delete-User, delete_*, purge, "ad?in_*", "[xy]_tool"]
  - id: order
    metric: sequence_valid
    rules:
      - {type: before, first: "auth*", then: ["refund_*", "*_order"]}
"""


def test_glob_references_are_exercised_as_each_glob_says(tmp_path: Path) -> None:
    """A small suite, whatever path the globs take (tried one by one, as here, or
    together past TREE_MIN): the blocklist names the first entry that matches a call, and
    coverage reports exactly the references no call matched (checked by hand)."""
    (tmp_path / "agent-eval.yaml").write_text(SMALL_GLOBS)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.jsonl").write_text(
        call("DeleteUser") + call("drop_db") + call("admin_panel") + call("refund_order")
        + call("Authenticate"))
    s = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(s, base=tmp_path)
    res = evaluate_files(s, files, errors, timings=False)
    blocked = sorted(f.message for f in res.findings if f.rule == "tool_blocklist")
    assert blocked == [
        "Blocked tool called: DeleteUser (blocklist includes 'Delete-User'); calls found: 1",
        "Blocked tool called: admin_panel (blocklist includes 'ad?in_*'); calls found: 1",
        "Blocked tool called: drop_db (blocklist includes 'drop_*'); calls found: 1"]
    unexercised = sorted((f.config.line, f.tool) for f in res.findings
                         if f.rule == "coverage/unexercised")
    assert unexercised == [(6, "[xy]_tool"), (6, "purge")]
