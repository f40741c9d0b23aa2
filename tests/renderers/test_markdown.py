"""Markdown summary: the bundled example as a reviewed golden file, plus facts checked by
hand (marker, verdict line, links, escaping, baseline columns, <details>, the 60,000
character cap)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from tests.conftest import assert_golden, example_results

from agent_eval.compare import compare
from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef
from agent_eval.renderers import RENDERERS, RenderContext, markdown
from agent_eval.results import Results, Status, failing_traces
from agent_eval.results import TestResult as TResult
from agent_eval.sections import Comparison

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
CTX = RenderContext(repo_url="https://github.com/acme/agent", sha=SHA,
                    run_url="https://github.com/acme/agent/actions/runs/1")
NOT_SHOWN = re.compile(r"\*\*(\d+) more findings? not shown\*\* — see the job summary / "
                       r"results\.json artifact\.")


def finding(i: int, severity: Severity = "error", *, rule: str | None = None,
            message: str = "m", value: object = 50, tool: str = "apply_discount") -> Finding:
    return Finding(rule=rule or f"args_valid/r{i % 7}", severity=severity, message=message,
                   test="a", config=ConfigRef("policies/p.yaml", i % 500 + 1, 9, "k"),
                   trace=TraceRef(f"traces/t{i}.jsonl", 3, f"t{i}"), tool=tool,
                   argument="percent", value=value, constraint="max: 30",
                   details={"violation": "Value exceeds maximum"})


def results_of(tests: list[TResult], *, verdict: str = "fail", traces: int = 10,
               input_errors: list[InputError] | None = None) -> Results:
    total = sum(len(t.violations) for t in tests)
    errors = input_errors or []
    return Results(suite="s", config="agent-eval.yaml", verdict=verdict,  # type: ignore[arg-type]
                   counts={"traces": traces, "tool_calls": 3 * traces, "violations": total,
                           "input_errors": len(errors)},
                   tests=tests, traces=[], input_errors=errors)


def make_test(tid: str, violations: list[Finding], status: Status = "fail") -> TResult:
    return TResult(tid, "args_valid", "error", status, 0, 10,
                   len({v.trace.trace_id for v in violations if v.trace}), 30, violations)


def violations_section(text: str) -> str:
    start = text.index("### Findings")
    end = text.find("\n### ", start + 1)
    return text[start:end if end >= 0 else None]


def links(text: str) -> dict[str, str]:
    return dict(re.findall(r"^\[(\d+)\]: (\S+)$", text, flags=re.M))


# ------------------------------------------------------------------ golden file
def test_example_matches_the_reviewed_golden_file() -> None:
    assert_golden(markdown.render(example_results(), CTX), "example.md")


def test_registered_as_summary_md() -> None:
    assert RENDERERS["markdown"].filename == "summary.md"
    # the registry imports the module at the first render (start-up time): the same text
    assert RENDERERS["markdown"].render(example_results(), CTX) == markdown.render(
        example_results(), CTX)


def test_example_facts_by_hand() -> None:
    text = markdown.render(example_results(), CTX)
    lines = text.splitlines()
    assert lines[0] == "<!-- agent-eval:customer-service-agent -->"
    assert lines[1] == "## ❌ customer-service-agent: fail"
    # REFUND-002 fails within by_category happy_path: 0.75 (3 of 4 pass): tolerated
    assert lines[3] == ("10 error-severity violations in 3 tests; 4 scenarios failed; "
                        "1 failed scenario tolerated; 5 criteria missed")
    assert "| traces | 10 |" in lines and "| tool calls | 34 |" in lines
    assert "| violations | 10 |" in lines and "| input errors | 0 |" in lines
    # traces with an error-severity finding: admin-delete, discount-too-high,
    # email-retry-loop, payment-invalid, records-without-auth, refund-no-confirmation
    assert "| traces failing | 6 |" in lines
    # the apply_discount finding: its policy line links to the blob at the head SHA
    i = next(n for n, line in enumerate(lines) if line.startswith("- `apply_discount`"))
    assert lines[i] == ("- `apply_discount` · `percent` = `50` — Value exceeds maximum "
                        "(`max: 30`)")
    m = re.fullmatch(r"  - policy \[examples/customer-service/policies/customer\.yaml:74\]"
                     r"\[(\d+)\] · trace `discount-too-high-001` at "
                     r"`examples/customer-service/traces/discount-too-high\.jsonl:7`",
                     lines[i + 1])
    assert m, lines[i + 1]
    assert links(text)[m.group(1)] == (
        f"https://github.com/acme/agent/blob/{SHA}/examples/customer-service/policies/"
        "customer.yaml#L74")
    assert "### Tests" in lines and "<details>" not in text  # 3 tests: not collapsed
    assert "| `args_valid` | `args_valid` | ❌ fail | 5 | 4 / 10 |" in lines
    assert lines[-1] == ("agent-eval 0.1.0 · "
                         "[workflow run](https://github.com/acme/agent/actions/runs/1)")
    assert lines[-2] == "---" and lines[-3] == ""
    assert text.endswith(")\n") and "\n\n\n" not in text
    assert NOT_SHOWN.search(text) is None


def test_without_repository_and_sha_the_locations_are_plain() -> None:
    text = markdown.render(example_results(), RenderContext())
    assert "https://" not in text and links(text) == {}
    assert ("  - policy `examples/customer-service/policies/customer.yaml:74` · trace "
            "`discount-too-high-001` at "
            "`examples/customer-service/traces/discount-too-high.jsonl:7`") in text
    assert text.splitlines()[-1] == "agent-eval 0.1.0"


@pytest.mark.parametrize("path", ["../../../../evil/x.yaml", "policies/../../../../evil/x",
                                  "/etc/passwd", "policies//p.yaml", "./p.yaml",
                                  "policies\\..\\..\\x"])
def test_a_location_that_leaves_the_repository_is_not_a_link(path: str) -> None:
    """A results file (``report``, ``merge``) may name any path: a link to
    ``REPO/blob/SHA/../../../../evil/x.yaml`` opened https://github.com/evil/x.yaml."""
    bad = finding(1)
    bad.config = ConfigRef(path, 8, 1, "k")
    text = markdown.render(results_of([make_test("a", [bad, finding(2)])]), CTX)
    assert f"  - policy `{path}:8` · trace `t1` at `traces/t1.jsonl:3`" in text
    assert links(text) == {"1": f"https://github.com/acme/agent/blob/{SHA}/policies/p.yaml#L3"}


def test_each_link_is_defined_once_and_used() -> None:
    text = markdown.render(example_results(), CTX)
    defs = links(text)
    assert list(defs) == [str(n) for n in range(1, len(defs) + 1)]
    assert len(set(defs.values())) == len(defs)
    used = set(re.findall(r"\]\[(\d+)\]", text))
    assert used == set(defs)


# ------------------------------------------------------------------ verdict lines
def test_verdict_heading_and_reason_per_verdict() -> None:
    ok = markdown.render(results_of([make_test("a", [], "pass")], verdict="pass"))
    assert ok.splitlines()[1:4] == ["## ✅ s: pass", "", "No violations in 10 traces "
                                    "(30 tool calls)"]
    warn = markdown.render(results_of(
        [make_test("a", [finding(1, "warning"), finding(2, "warning")], "warn"),
         make_test("b", [finding(3, "warning")], "warn")], verdict="warn"))
    assert warn.splitlines()[1:4] == ["## ⚠️ s: warn", "",
                                      "3 warning-severity violations in 2 tests"]
    assert "| traces failing | 0 |" in warn  # warnings fail no trace
    fail = markdown.render(results_of(
        [make_test("a", [finding(1), finding(2, "warning")])]))
    assert fail.splitlines()[3] == ("1 error-severity violation in 1 test; "
                                    "1 warning-severity violation in 1 test")
    err = markdown.render(results_of(
        [make_test("a", [], "pass")], verdict="error",
        input_errors=[InputError("input/parse_error", "traces/x.jsonl", 7,
                                 "not JSON: expected value")]))
    assert err.splitlines()[1:4] == [
        "## 💥 s: error", "", "1 input error: traces/x.jsonl:7: not JSON: expected value"]
    assert ("- `traces/x.jsonl:7` — not JSON: expected value (`input/parse_error`)"
            in err.splitlines())


def unexercised(severity: Severity) -> Finding:
    return Finding(rule="coverage/unexercised", severity=severity,
                   message="No call to 'delete_customer' (blocklist entry) in any of the "
                           "10 trace(s); the rule held only vacuously", test="no_deletes",
                   config=ConfigRef("agent-eval.yaml", 7, 17, "tests[0].blocklist[0]"),
                   trace=None)


def test_a_verdict_made_by_coverage_findings_gives_them_as_its_reason() -> None:
    """``unexercised: error`` (or --strict-coverage) fails a run whose traces broke no
    rule: the reason said "No violations in 10 traces" under the heading "fail"."""
    r = results_of([make_test("a", [], "pass")])  # verdict fail
    r.unexercised = [unexercised("error")]
    assert r.verdict == "fail"
    assert markdown.render(r).splitlines()[1:4] == [
        "## ❌ s: fail", "", "1 error-severity coverage finding"]
    r = results_of([make_test("a", [], "pass")], verdict="warn")
    r.unexercised = [unexercised("warning"), unexercised("warning"), unexercised("note")]
    assert markdown.render(r).splitlines()[1:4] == [
        "## ⚠️ s: warn", "", "2 warning-severity coverage findings"]
    r = results_of([make_test("a", [], "pass")], verdict="pass")  # notes only: a pass
    r.unexercised = [unexercised("note")]
    assert markdown.render(r).splitlines()[3] == "No violations in 10 traces (30 tool calls)"


def test_input_errors_beyond_twenty_are_counted_not_listed() -> None:
    errors = [InputError("input/parse_error", "traces/x.jsonl", n, "bad") for n in range(1, 26)]
    text = markdown.render(results_of([make_test("a", [], "pass")], verdict="error",
                                      input_errors=errors))
    assert text.splitlines()[3] == "25 input errors, the first: traces/x.jsonl:1: bad"
    assert "### 💥 Input errors (25)" in text
    assert text.count("(`input/parse_error`)") == 20
    assert ("- 5 more input errors not shown — see the job summary / results.json artifact"
            in text)


# ------------------------------------------------------------------ escaping
def test_user_text_cannot_break_tables_or_inject_html() -> None:
    v = finding(1, message="evil | <script>alert(1)</script>\nsecond line", tool="a|b",
                rule="sequence_valid/before")
    v.argument = None
    t = make_test("x|<y>", [v])
    text = markdown.render(results_of([t]))
    assert "<script>" not in text
    assert ("- evil \\| \\<script\\>alert(1)\\</script\\> second line" in text.splitlines())
    assert "| `x\\|<y>` | `args_valid` | ❌ fail | 1 | 1 / 10 |" in text.splitlines()
    assert text.splitlines()[0] == "<!-- agent-eval:s -->"


def test_filters() -> None:
    assert markdown.md_text("a|b <c> \\ d\ne") == "a\\|b \\<c\\> \\\\ d e"
    assert markdown.md_code("x<y>") == "`x<y>`"
    assert markdown.md_code("a`b") == "`` a`b ``"
    assert markdown.md_code("a``b") == "``` a``b ```"
    assert markdown.cell("a|b") == "`a\\|b`"
    assert markdown.linktext("p/[id].yaml:3") == "p/\\[id\\].yaml:3"
    assert markdown.marker("a --> b\nc") == "a --&gt; b c"


def test_long_values_are_shortened() -> None:
    text = markdown.render(results_of([make_test("a", [finding(1, value="x" * 500)])]))
    item = next(line for line in text.splitlines() if line.startswith("- `apply_discount`"))
    assert '`"' + "x" * 78 + "…`" in item


# ------------------------------------------------------------------ layout
def test_baseline_adds_base_and_delta_columns_with_arrows() -> None:
    r = results_of([make_test("a", [finding(1), finding(2)])])
    # a results file's baseline that holds the base run's counts only
    r.baseline = Comparison.from_dict({"counts": {
        "traces": 12, "tool_calls": 30, "violations": 1, "input_errors": 0,
        "traces_failing": 3}})
    lines = markdown.render(r).splitlines()
    assert "| metric | base | head | Δ |" in lines
    assert "| traces | 12 | 10 | ▼ −2 |" in lines
    assert "| tool calls | 30 | 30 | = |" in lines
    assert "| violations | 1 | 2 | ▲ +1 |" in lines
    assert "| traces failing | 3 | 2 | ▼ −1 |" in lines
    assert "| metric | value |" not in lines


def test_baseline_compared_with_a_base_run() -> None:
    base = results_of([make_test("a", [finding(1)])])
    r = results_of([make_test("a", [finding(1), finding(2), finding(3)])])
    r.baseline = compare(r, base)
    lines = markdown.render(r).splitlines()
    assert "| violations | 1 | 3 | ▲ +2 |" in lines
    assert "| traces failing | 1 | 3 | ▲ +2 |" in lines


def test_without_baseline_head_only() -> None:
    lines = markdown.render(results_of([make_test("a", [])])).splitlines()
    assert "| metric | value |" in lines and "Δ" not in "\n".join(lines)


def test_more_than_ten_tests_are_collapsed_in_details() -> None:
    ten = markdown.render(results_of([make_test(f"t{i}", [], "pass") for i in range(10)],
                                     verdict="pass"))
    assert "<details>" not in ten and "### Tests" in ten
    eleven = markdown.render(results_of([make_test(f"t{i}", [], "pass") for i in range(11)],
                                        verdict="pass"))
    assert "<details><summary>Tests (11)</summary>\n\n| test |" in eleven
    assert "| `t10` | `args_valid` | ✅ pass | 0 | 0 / 10 |\n\n</details>\n" in eleven


def test_groups_are_by_rule_most_severe_first_with_counts() -> None:
    vs = [finding(0, "warning", rule="args_valid/enum"),
          finding(1, "warning", rule="args_valid/enum"),
          finding(2, rule="tool_blocklist"),
          finding(3, rule="args_valid/maximum"), finding(4, rule="args_valid/maximum")]
    text = markdown.render(results_of([make_test("a", vs)]))
    heads = [line for line in text.splitlines() if line.startswith("#### ")]
    assert heads == ["#### ❌ `args_valid/maximum` (2)", "#### ❌ `tool_blocklist` (1)",
                     "#### ⚠️ `args_valid/enum` (2)"]
    assert "### Findings (5)" in text


# ------------------------------------------------------------------ the cap
def test_huge_results_are_cut_to_60000_characters_keeping_the_most_severe() -> None:
    n = 4000
    warnings = [finding(i, "warning") for i in range(n)]  # listed first in the results
    errors = [finding(i, "error") for i in range(n, 2 * n)]
    r = results_of([make_test("w", warnings, "warn"), make_test("e", errors)], traces=2 * n)
    text = markdown.render(r, CTX)
    assert len(text) <= markdown.MAX_CHARS
    assert len(text) > markdown.MAX_CHARS - 1000  # it fills the space it has
    section = violations_section(text)
    shown = [line for line in section.splitlines() if line.startswith("- `apply_discount`")]
    assert 100 < len(shown) < n
    m = NOT_SHOWN.search(section)
    assert m, section[-500:]
    assert int(m.group(1)) == 2 * n - len(shown)
    assert "⚠️" not in section  # every shown violation is an error
    # each shown group says how many of its violations are shown
    heads = re.findall(r"^#### ❌ `args_valid/r\d` \((\d+)(?:, (\d+) shown)?\)$", section,
                       flags=re.M)
    assert heads and all(int(total) > 0 for total, _ in heads)
    assert sum(int(s or t) for t, s in heads) == len(shown)
    # the links of the shown violations, and only those, are defined
    assert set(re.findall(r"\]\[(\d+)\]", section)) == set(links(text))
    # the rest of the summary is still there
    assert text.splitlines()[0] == "<!-- agent-eval:s -->"
    assert "| violations | 8000 |" in text and "### Tests" in text
    assert text.endswith("[workflow run](https://github.com/acme/agent/actions/runs/1)\n")


def test_against_a_baseline_a_cut_keeps_the_unchanged_errors_before_the_new_notes() -> None:
    """The comment lists the new violations, then the new notes, then the unchanged
    findings (folded); a cut dropped from that end, so 400 new notes left no room for the
    10 errors the base branch had too, which still fail the run. The notes give way:
    the errors are shown, in the section they belong to."""
    def one(i: int, severity: Severity, text: str) -> Finding:  # shown by its message
        return replace(finding(i, severity, message=text + "x" * 200), tool=None,
                       argument=None, fingerprint=f"{i:032x}")

    errors = [one(i, "error", f"E{i}-") for i in range(10)]
    notes = [one(100 + i, "note", f"N{i}-") for i in range(400)]
    base = results_of([make_test("a", list(errors))])
    r = results_of([make_test("a", errors + notes)], traces=410)
    r.baseline = compare(r, base)
    text = markdown.render(r, CTX)
    assert len(text) <= markdown.MAX_CHARS
    assert all(f"E{i}-" in text for i in range(10))
    shown_notes = sum(f"N{i}-" in text for i in range(400))
    assert 0 < shown_notes < 400
    m = NOT_SHOWN.search(text)
    assert m and int(m.group(1)) == 400 - shown_notes
    # the layout is kept: new notes, then the unchanged findings, each folded
    assert (text.index("<summary>New notes (400)</summary>")
            < text.index("<summary>Unchanged findings (10)</summary>") < text.index("E0-"))
    assert text.index("E9-") < text.index("more findings not shown")


@pytest.mark.parametrize("max_chars", [300, 3_000, 30_000, 60_000, 100_000])
def test_many_findings_give_the_page_that_rendering_all_of_them_first_gives(
        max_chars: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """With many findings the page with all of them is not rendered first (it cannot fit:
    each adds the template's own text) and each finding's line is made only when shown:
    the page is the same as when every attempt is made."""
    found = [finding(i, "warning" if i % 3 else "error", message=f"m{i} " * (i % 4))
             for i in range(9000)]
    r = results_of([make_test("a", found[:5000]), make_test("b", found[5000:], "warn")],
                   traces=9000)
    assert markdown.ITEM_LEAST * 9000 > 100_000  # the quick path is taken here
    quick = markdown.render(r, CTX, max_chars=max_chars)
    monkeypatch.setattr(markdown, "ITEM_LEAST", 0)  # every page is tried, the whole first
    assert quick == markdown.render(r, CTX, max_chars=max_chars)
    assert len(quick) <= max_chars or max_chars < 1_000


def test_the_cap_also_cuts_the_tests_table_when_it_alone_is_too_long() -> None:
    tests = [make_test(f"test-{i:05d}-" + "x" * 60, [], "pass") for i in range(2000)]
    text = markdown.render(results_of(tests, verdict="pass"), max_chars=20_000)
    assert len(text) <= 20_000
    m = re.search(r"^(\d+) more tests not shown — see the job summary / results\.json "
                  r"artifact\.$", text, flags=re.M)
    assert m
    rows = [line for line in text.splitlines() if line.startswith("| `test-")]
    assert len(rows) + int(m.group(1)) == 2000


def test_the_cap_also_cuts_the_scenarios_table() -> None:
    """1,500 scenarios made a summary of 86,000 characters (the scenarios table was never
    cut): over the 60,000 of docs/outputs.md and over the 65,536 GitHub takes for a
    comment or a check run's summary, so the action's comment and check run were refused
    (and an earlier run's comment went on showing its verdict)."""
    from agent_eval.sections import ScenarioResult

    r = results_of([make_test("a", [finding(1)])])
    r.scenarios = [ScenarioResult(f"REFUND-{i:04d}", "pass", "refunds", score=100.0,
                                  traces_total=1, traces_passed=1) for i in range(1500)]
    text = markdown.render(r, CTX)
    assert len(text) <= markdown.MAX_CHARS
    m = re.search(r"^(\d+) more scenarios not shown — see the job summary / results\.json "
                  r"artifact\.$", text, flags=re.M)
    assert m, text[-300:]
    rows = re.findall(r"^\| `REFUND-(\d{4})` \| refunds \| ✅ pass \| 100\.0 \| 1 / 1 \| 0 \|$",
                      text, flags=re.M)
    assert 500 < len(rows) < 1500
    assert rows == [f"{i:04d}" for i in range(len(rows))]  # the first ones, in order
    assert len(rows) + int(m.group(1)) == 1500
    assert "<details><summary>Scenarios (1500)</summary>" in text
    # the finding, the tests table and the footer are all there
    assert "### Findings (1)" in text and "| `a` | `args_valid` |" in text
    assert text.endswith("[workflow run](https://github.com/acme/agent/actions/runs/1)\n")


def test_what_no_table_cut_can_fit_is_cut_with_a_note() -> None:
    """Thousands of suite metrics (a figure per category) are not a table the cap cuts
    row by row: the page is cut at a line, and says so, rather than be longer."""
    r = results_of([make_test("a", [])], verdict="pass")
    r.metrics = {f"pass_rate.category-{i:05d}": 0.5 for i in range(5000)}
    text = markdown.render(r, CTX, max_chars=20_000)
    assert len(text) <= 20_000
    assert text.startswith("<!-- agent-eval:s -->\n")
    assert text.endswith("\n\n**Cut:** this summary is limited to 20,000 characters — see "
                         "the job summary / results.json artifact.\n")


def test_small_results_are_not_cut() -> None:
    text = markdown.render(example_results(), CTX, max_chars=len(
        markdown.render(example_results(), CTX)))
    assert NOT_SHOWN.search(text) is None


def test_the_headline_and_the_section_count_the_same_new_violations() -> None:
    """Issue 10 §4: the comment said "2 new violations" above "New violations (3)" (the
    section counted a new note too). Both count new error / warning findings; new notes
    have a section of their own."""
    from agent_eval.compare import attach
    from agent_eval.results import assign_fingerprints

    def run(found: list[Finding]) -> Results:
        assign_fingerprints(found)
        return results_of([make_test("a", found)])

    old = finding(1, rule="args_valid/maximum")
    base = run([old])
    head = run([finding(1, rule="args_valid/maximum"), finding(2, rule="args_valid/enum"),
                finding(3, "warning", rule="args_valid/pattern"),
                finding(4, "note", rule="args_valid/format")])
    attach(head, base)
    assert isinstance(head.baseline, Comparison) and head.baseline.new_violations == 2
    text = markdown.render(head)
    assert "0 regressions, 2 new violations, 0 fixes, 0 violations gone." in text
    assert "### 🆕 New violations (2)" in text
    assert "<details><summary>New notes (1)</summary>" in text
    assert "<details><summary>Unchanged findings (1)</summary>" in text
    fresh = text[text.index("### 🆕 New violations"):text.index("<details><summary>New notes")]
    assert fresh.count("\n- ") == 2  # the two it counts, and nothing else


_TALLIED: tuple[tuple[Severity, str | None], ...] = (
    ("error", "a"), ("error", "a"), ("warning", "b"), ("error", None), ("note", "c"),
    ("error", "b"))


def test_the_tally_counts_what_each_walk_counted() -> None:
    """Markdown and HTML count the rule tests' findings in one walk (markdown.tally): the
    failing traces of each test and of all, and the findings of each severity, as
    failing_traces and a count over each test's findings give them."""
    res = example_results()
    extra = [Finding(rule="r", severity=sev, message="m", test="t",
                     config=ConfigRef("p.yaml", 1, 1, "k"),
                     trace=None if trace is None else TraceRef("f.jsonl", 1, trace))
             for sev, trace in _TALLIED]
    res.tests.append(TResult("extra", "args_valid", "error", "fail", 0, 3, 2, 6, extra))
    counted = markdown.tally(res)
    assert counted.failing == tuple(len(failing_traces(t.violations)) for t in res.tests)
    assert counted.failing[-1] == 2  # a and b: the finding without a trace counts none
    assert counted.traces_failing == len(failing_traces(res.violations)) == res.traces_failing
    severities = {v.severity for v in res.violations}
    assert counted.by_severity == {s: sum(1 for v in res.violations if v.severity == s)
                                   for s in severities}
    assert counted.tests_by_severity == {
        s: {t.id for t in res.tests if any(v.severity == s for v in t.violations)}
        for s in severities}
    assert counted.tests_by_severity["note"] >= {"extra"}


@pytest.mark.parametrize("limit", [200, 1_000, 5_000])
def test_a_hard_cut_closes_the_blocks_it_leaves_open(limit: int) -> None:
    """A cut inside a <details> block (or a code fence) left the note that says so folded
    away (or shown as code): the blocks the kept lines open are closed before the note."""
    from agent_eval.renderers.markdown import CUT_NOTE, _hard_cut

    text = ("# Summary\n\n<details><summary>Metrics (9999)</summary>\n\n```text\n"
            + "".join(f"metric_{n} = {n}\n" for n in range(9999)) + "```\n\n</details>\n")
    cut = _hard_cut(text, limit)
    assert len(cut) <= limit
    note = CUT_NOTE.format(limit)
    assert cut.endswith("\n```\n\n</details>" + note)
    kept = cut[:-len("\n```\n\n</details>" + note)]
    assert text.startswith(kept) and text[len(kept)] == "\n"  # whole lines kept
    # nothing left open: as many closers as openers, an even number of fences
    assert cut.count("<details>") == cut.count("</details>") and cut.count("```") % 2 == 0


@pytest.mark.parametrize("limit", [300, 301, 302, 1_000, 1_001])
def test_a_hard_cut_opens_no_code_block_for_the_backticks_of_code_spans(limit: int) -> None:
    """Three backticks inside a line are a code span's (``cell`` fences a name holding
    a backtick run with a longer one): counted as fences, an odd number of them made the
    cut add a line of three backticks that opened a code block, and the note that says
    the summary was cut showed as code."""
    from agent_eval.renderers.markdown import CUT_NOTE, _hard_cut

    row = "| ```` cat```{} ```` | by_category | ❌ fail |\n"  # 3 runs of 3+ backticks
    text = "## s: fail\n\n| criterion | kind | status |\n|:--|:--|:--|\n" + "".join(
        row.format(n) for n in range(999))
    cut = _hard_cut(text, limit)
    note = CUT_NOTE.format(limit)
    assert len(cut) <= limit and cut.endswith(" ❌ fail |" + note)  # after a row: no closer
    kept = cut[:-len(note)]
    assert text.startswith(kept) and text[len(kept)] == "\n"


def test_a_scenario_the_head_run_dropped_is_shown(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull request that deletes its failing scenario (and its trace) raised the pass
    rate and the mean score, and the comment said nothing of the scenario: it was in the
    comparison (`removed`) but in no section. It has one now, and the HTML report names
    it too. By hand: the base ran S-ok (passes) and S-bad (no refund: fails, score 0)."""
    from agent_eval._cli import main as cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    scenario = ("  - id: {0}\n    expect:\n      output: {{contains: [refund]}}\n")
    head = 'version: "1"\nsuite: s\ntraces: traces/*.jsonl\nscenarios:\n'
    for sid, answer in (("S-ok", "refund done"), ("S-bad", "no")):
        (tmp_path / "traces" / f"{sid}.jsonl").write_text(
            f'{{"type":"trace_start","trace_id":"{sid}","scenario":"{sid}"}}\n'
            f'{{"type":"output","output":"{answer}"}}\n')
    (tmp_path / "agent-eval.yaml").write_text(
        head + scenario.format("S-ok") + scenario.format("S-bad"))
    assert cli(["run", "-q", "-o", "base"]) == 1
    (tmp_path / "traces" / "S-bad.jsonl").unlink()
    (tmp_path / "agent-eval.yaml").write_text(head + scenario.format("S-ok"))
    assert cli(["run", "-q", "-o", "head", "--baseline", "base/results.json",
                "--format", "markdown,html"]) == 0
    lines = (tmp_path / "head" / "summary.md").read_text(encoding="utf-8").splitlines()
    at = lines.index("### ➖ Scenarios gone since the base branch (1)")
    assert lines[at + 2:at + 7] == [
        "The base branch ran this scenario; this run has it no more, and the suite's "
        "figures leave it out.", "",
        "| scenario | base | score on the base branch |", "|:--|:--|:--|",
        "| `S-bad` | fail | 0 |"]
    html = (tmp_path / "head" / "report.html").read_text(encoding="utf-8")
    assert "1 scenario(s) of the base branch not run here (S-bad)." in html


def test_an_unknown_scenario_id_is_not_given_as_a_coverage_finding() -> None:
    """The traces naming a scenario the suite does not have are a `scenario/unknown_id`
    warning kept with the coverage findings (results.unexercised); the reason of a run
    warned by one said "1 warning-severity coverage finding". By hand: one warning of
    each kind, each named as what it is."""
    r = results_of([make_test("a", [], "pass")], verdict="warn")
    unknown = Finding(rule="scenario/unknown_id", severity="warning",
                      message="1 trace names scenario 'REFUND-002', which this suite does "
                              "not have", test="scenarios",
                      config=ConfigRef("agent-eval.yaml", 9, 3, "scenarios"), trace=None)
    r.unexercised = [unknown]
    assert markdown.render(r).splitlines()[1:4] == [
        "## ⚠️ s: warn", "", "1 warning-severity scenario finding"]
    r.unexercised = [unknown, unexercised("warning")]
    assert markdown.render(r).splitlines()[3] == (
        "1 warning-severity coverage finding; 1 warning-severity scenario finding")
