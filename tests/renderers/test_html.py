"""HTML report: the bundled example as a reviewed golden file, facts checked by hand
(self-contained: nothing loaded from the network; escaping; snippets with hand-checked
line numbers; baseline bars; the row caps), and the real thing in headless Chromium
(tests/renderers/browser/check.mjs with playwright-core: no console or page errors,
sorting by a header click, the text filter, the severity select, a screenshot).

The browser test needs node, ``node_modules/playwright-core`` (``npm ci``, package.json)
and Debian's ``/usr/bin/chromium`` (``scripts/install-debian-packages``): without them it
skips (saying what is missing), or fails when AGENT_EVAL_REQUIRE_SYSTEM=1 (set by .ci/run and
the CI workflow)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import assert_golden, example_results, missing_system

from agent_eval.compare import compare
from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, Severity, TraceRef, by_severity, severity_rank
from agent_eval.renderers import RENDERERS, RenderContext, html
from agent_eval.results import Results, Status, finding_dict
from agent_eval.results import TestResult as TResult
from agent_eval.sections import Comparison, CriterionResult, ScenarioResult

REPO = Path(__file__).resolve().parents[2]
CHECK = Path(__file__).parent / "browser" / "check.mjs"
PLAYWRIGHT = REPO / "node_modules" / "playwright-core" / "package.json"
CHROMIUM = Path(os.environ.get("AGENT_EVAL_CHROMIUM", "/usr/bin/chromium"))
REPO_URL = "https://github.com/acme/agent"
SHA = "0123456789abcdef0123456789abcdef01234567"
RUN_URL = "https://github.com/acme/agent/actions/runs/1"
CTX = RenderContext.for_root(REPO, repo_url=REPO_URL, sha=SHA, run_url=RUN_URL)
MORE = re.compile(r"(\d+) more not shown; all are in results\.json")


def finding(i: int, severity: Severity = "error", *, tool: str = "apply_discount",
            message: str = "m", rule: str | None = None, policy: str = "policies/p.yaml",
            line: int = 5, trace: str = "traces/t.jsonl", trace_line: int = 3,
            argument: str | None = "percent", value: object = 50) -> Finding:
    return Finding(rule=rule or f"args_valid/r{i % 7}", severity=severity, message=message,
                   test="a", config=ConfigRef(policy, line, 9, "k"),
                   trace=TraceRef(trace, trace_line, f"t{i}"), tool=tool,
                   argument=argument, value=value, constraint="max: 30",
                   details={"violation": "Value exceeds maximum"})


def scenarios(*entries: dict[str, Any]) -> list[ScenarioResult]:
    """Scenarios as a results file holds them (the keys it lacks: their neutral value)."""
    return [ScenarioResult.from_dict(e) for e in entries]


def scenario_finding(i: int) -> dict[str, Any]:
    """A scenario's finding as results.json holds it (at a line of the example suite)."""
    return finding_dict(Finding(
        rule="scenario/output", severity="error", message=f"Output check {i} failed",
        test="S", config=ConfigRef("examples/customer-service/agent-eval.yaml", 60 + i, 7,
                                   f"scenarios.S.expect.output.{i}"),
        trace=TraceRef("traces/t.jsonl", 3, f"s{i}"), scenario="S", fingerprint=f"{i:032x}"))


def make_test(tid: str, violations: list[Finding], status: Status = "fail") -> TResult:
    return TResult(tid, "args_valid", "error", status, 0, 10,
                   len({v.trace.trace_id for v in violations if v.trace}), 30, violations)


def results_of(tests: list[TResult], *, verdict: str = "fail", suite: str = "s",
               input_errors: list[InputError] | None = None) -> Results:
    total = sum(len(t.violations) for t in tests)
    errors = input_errors or []
    return Results(suite=suite, config="agent-eval.yaml", verdict=verdict,  # type: ignore[arg-type]
                   counts={"traces": 10, "tool_calls": 30, "violations": total,
                           "input_errors": len(errors)},
                   tests=tests, traces=[], input_errors=errors)


def files(mapping: dict[str, str]) -> RenderContext:
    return RenderContext(read=mapping.get)


class Page(HTMLParser):
    """The parts of a rendered page the tests look at."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows: dict[str, list[list[str]]] = {}  # table id -> rows of cell texts
        self.row_cats: dict[str, list[str | None]] = {}
        self.lines: list[tuple[str, bool]] = []  # snippet lines (text, highlighted)
        self._table: str | None = None
        self._section = ""
        self._cell: list[str] | None = None
        self._line: list[str] | None = None
        self._line_hit = False
        self._depth = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.rows.setdefault(a["id"] or "", [])
            self.row_cats.setdefault(a["id"] or "", [])
        elif tag in ("thead", "tbody", "tfoot"):
            self._section = tag
        elif tag == "tr" and self._table and self._section == "tbody":
            self.rows[self._table].append([])
            self.row_cats[self._table].append(a.get("data-cat"))
        elif tag == "td" and self._table and self._section == "tbody":
            self._cell = []
        elif tag == "span" and "line" in (a.get("class") or "").split():
            self._line, self._line_hit, self._depth = [], "hit" in (a.get("class") or ""), 0
        elif tag == "span" and self._line is not None:
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag == "td" and self._cell is not None and self._table:
            self.rows[self._table][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "span" and self._line is not None:
            if self._depth == 0:
                self.lines.append(("".join(self._line).rstrip("\n"), self._line_hit))
                self._line = None
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._line is not None:
            self._line.append(data)

    def attrs(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def snippet_lines(text: str) -> list[tuple[int, str, bool]]:
    """(number, text, highlighted) of every snippet line in the page."""
    out = []
    for line, hit in Page(text).lines:
        m = re.fullmatch(r"\s*(\d+) (.*)", line, flags=re.S)
        assert m, line
        out.append((int(m.group(1)), m.group(2), hit))
    return out


# ------------------------------------------------------------------ golden file
def test_example_matches_the_reviewed_golden_file() -> None:
    assert_golden(html.render(example_results(), CTX), "example.html")


def test_registered_as_report_html() -> None:
    assert RENDERERS["html"].filename == "report.html"
    # the registry imports the module at the first render (start-up time): the same text
    assert RENDERERS["html"].render(example_results(), CTX) == html.render(
        example_results(), CTX)


def test_output_is_deterministic() -> None:
    assert html.render(example_results(), CTX) == html.render(example_results(), CTX)


def test_example_facts_by_hand() -> None:
    text = html.render(example_results(), CTX)
    page = Page(text)
    assert '<span class="badge" id="verdict">FAIL</span>' in text
    # REFUND-002 fails within by_category happy_path: 0.75 (3 of 4 pass): tolerated
    assert ('<p class="reason" id="reason">10 error-severity violations in 3 tests; '
            '4 scenarios failed; 1 failed scenario tolerated; 5 criteria missed</p>') in text
    assert "<title>customer-service-agent: fail — agent-eval</title>" in text
    for name, value in (("traces", 10), ("tool calls", 34), ("violations", 10),
                        ("input errors", 0), ("traces failing", 6)):
        assert f'<tr><th scope="row">{name}</th><td class="num">{value}</td></tr>' in text
    rows = page.rows["findings-table"]
    # every finding: 10 rule violations, 10 scenario findings (7 error, 2 warning, 1
    # note), 7 missed criteria (5 fail, 2 warn), 5 coverage/unexercised notes; most
    # severe first
    assert len(rows) == 32
    assert page.row_cats["findings-table"] == ["error"] * 22 + ["warning"] * 4 + ["note"] * 6
    assert [r[1].split("/")[0] for r in rows[10:17]] == ["scenario"] * 7
    # the apply_discount finding, cell by cell
    row = next(r for r in rows if r[3] == "apply_discount")
    assert row[1].startswith("args_valid/maximumapply_discount: argument 'percent' = 50")
    assert row[2:] == ["error", "apply_discount", "percent", "50", "max: 30",
                       "examples/customer-service/policies/customer.yaml:74",
                       "examples/customer-service/traces/discount-too-high.jsonl:7"]
    assert (f'<a href="{REPO_URL}/blob/{SHA}/examples/customer-service/policies/'
            'customer.yaml#L74">') in text
    assert page.rows["tests-table"] == [
        ["args_valid", "args_valid", "error", "fail", "5", "4", "10", "34", "0"],
        ["auth_flow", "sequence_valid", "error", "fail", "4", "3", "10", "34", "0"],
        ["no_destructive", "tool_blocklist", "error", "fail", "1", "1", "10", "34", "0"]]
    assert len(page.rows["scenarios-table"]) == 10  # the example's scenarios
    assert MORE.search(text) is None
    assert text.count('<article class="violation') == 32
    assert "source not available" not in text
    assert text.rstrip().endswith("</html>")
    assert f'agent-eval 0.1.0 · <a href="{RUN_URL}">workflow run</a></footer>' in text


# ------------------------------------------------------------------ self-contained
def test_nothing_is_loaded_from_the_network() -> None:
    r = example_results()
    r.baseline = Comparison.from_dict({"counts": {"traces": 9, "violations": 12}})
    r.scenarios = scenarios({"id": "S-1", "status": "pass", "score": 90, "findings": []})
    text = html.render(r, CTX)
    page = Page(text)
    loads = [(t, a) for t, a in page.tags if t in ("script", "img", "iframe", "embed",
                                                   "object", "source", "video", "audio",
                                                   "track", "input", "frame")]
    assert all(not a.get("src") for _, a in loads), loads
    assert [a.get("rel") for a in page.attrs("link")] == ["icon"]
    assert [a.get("href") for a in page.attrs("link")] == ["data:,"]
    for tag, a in page.tags:
        for name in ("href", "src", "srcset", "action", "poster", "data", "background"):
            value = a.get(name)
            if value and re.match(r"\s*(https?:)?//", value, flags=re.I):
                assert tag == "a" and name == "href", (tag, a)
                assert value.startswith(REPO_URL + "/"), value  # plain links to the repo
    assert re.search(r"url\(|@import|@font-face", text, flags=re.I) is None
    # the hrefs of the links are the policy blobs and the run, nothing else absolute
    absolute = {a["href"] for a in page.attrs("a") if (a.get("href") or "").startswith("http")}
    assert absolute == {RUN_URL} | {f"{REPO_URL}/blob/{SHA}/{v.config.file}#L{v.config.line}"
                                    for v in r.findings}
    csp = next(a for a in page.attrs("meta") if a.get("http-equiv") ==
               "Content-Security-Policy")
    assert (csp.get("content") or "").startswith("default-src 'none';")


def test_without_repository_no_absolute_links_at_all() -> None:
    text = html.render(example_results(), RenderContext.for_root(REPO))
    assert re.search(r"""(href|src)=["']?\s*(https?:)?//""", text) is None
    assert "examples/customer-service/policies/customer.yaml:74" in text


# ------------------------------------------------------------------ escaping
def test_user_text_is_escaped() -> None:
    evil = "<script>alert(1)</script>"
    v = finding(1, tool=evil, message=f"bad {evil} & more", rule="rule<b>x</b>",
                value={"k": evil}, argument='arg"><img src=x onerror=alert(2)>',
                policy="policies/<p>.yaml", line=2, trace="traces/<t>.jsonl")
    r = results_of([make_test("test<i>", [v])], suite="suite <b>bold</b>")
    r.scenarios = scenarios({"id": evil, "status": "fail<x>", "score": 1, "findings": []})
    r.metrics = {"<m>": 1}
    r.input_errors = [InputError("input/parse_error", "traces/<e>.jsonl", 2, evil)]
    ctx = files({"policies/<p>.yaml": "a: 1\nb: <script>alert(3)</script>\n",
                 "traces/<t>.jsonl": '{"x": 1}\n{"y": 2}\n{"tool": "' + evil + '"}\n'})
    text = html.render(r, ctx)
    assert "<script>alert" not in text
    assert "<img" not in text and "<b>" not in text and "<i>" not in text
    assert "<p>" not in text and "<t>" not in text and "<m>" not in text
    assert text.count("<script>") == 1  # the report's own script
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in text  # inside the policy snippet
    assert "suite &lt;b&gt;bold&lt;/b&gt;" in text
    page = Page(text)
    assert page.rows["findings-table"][0][3] == evil  # shown as text
    assert page.rows["scenarios-table"][0][0] == evil
    assert ("2", "b: " + "<script>alert(3)</script>") in [
        (str(n), t) for n, t, _ in snippet_lines(text)]


# ------------------------------------------------------------------ snippets
POLICY = "".join(f"policy line {n}\n" for n in range(1, 21))  # 20 lines
TRACE = "".join(f'{{"n": {n}}}\n' for n in range(1, 10))  # 9 lines


def render_one(v: Finding, ctx: RenderContext) -> list[tuple[int, str, bool]]:
    return snippet_lines(html.render(results_of([make_test("a", [v])]), ctx))


def test_policy_snippet_is_three_lines_either_side_and_trace_two() -> None:
    ctx = files({"policies/p.yaml": POLICY, "traces/t.jsonl": TRACE})
    got = render_one(finding(1, line=10, trace_line=5), ctx)
    assert got == [
        (7, "policy line 7", False), (8, "policy line 8", False),
        (9, "policy line 9", False), (10, "policy line 10", True),
        (11, "policy line 11", False), (12, "policy line 12", False),
        (13, "policy line 13", False),
        (3, '{"n": 3}', False), (4, '{"n": 4}', False), (5, '{"n": 5}', True),
        (6, '{"n": 6}', False), (7, '{"n": 7}', False)]


def test_snippets_at_the_edges_of_the_files() -> None:
    ctx = files({"policies/p.yaml": POLICY, "traces/t.jsonl": TRACE})
    got = render_one(finding(1, line=2, trace_line=9), ctx)
    assert [(n, hit) for n, _, hit in got] == [
        (1, False), (2, True), (3, False), (4, False), (5, False),  # policy 1..5
        (7, False), (8, False), (9, True)]  # trace 7..9
    got = render_one(finding(1, line=20, trace_line=1), ctx)
    assert [(n, hit) for n, _, hit in got] == [
        (17, False), (18, False), (19, False), (20, True),
        (1, True), (2, False), (3, False)]


def test_line_numbers_are_right_aligned_and_crlf_is_dropped() -> None:
    ctx = files({"policies/p.yaml": POLICY.replace("\n", "\r\n"), "traces/t.jsonl": TRACE})
    text = html.render(results_of([make_test("a", [finding(1, line=9)])]), ctx)
    assert '<span class="ln"> 6</span> <span class="src">policy line 6</span>' in text
    assert '<span class="ln">12</span> <span class="src">policy line 12</span>' in text
    assert "\r" not in text


def test_long_trace_lines_are_shortened_to_300_characters() -> None:
    long = '{"tool": "x", "arguments": {"text": "' + "y" * 1000 + '"}}'
    trace = f'{{"a": 1}}\n{long}\n{{"b": 2}}\n'
    ctx = files({"policies/p.yaml": POLICY, "traces/t.jsonl": trace})
    got = render_one(finding(1, line=5, trace_line=2), ctx)
    trace_lines = got[-3:]
    assert [(n, hit) for n, _, hit in trace_lines] == [(1, False), (2, True), (3, False)]
    assert trace_lines[1][1] == long[:300] + "…"
    assert html.shorten("z" * 300) == "z" * 300
    assert html.shorten("z" * 301) == "z" * 300 + "…"


def test_the_example_snippets_by_hand() -> None:
    """customer.yaml:74 is the `max: 30` under apply_discount.percent; the call is line 7
    of discount-too-high.jsonl (checked by reading the files)."""
    policy = (REPO / "examples/customer-service/policies/customer.yaml").read_text(
        encoding="utf-8").splitlines()
    assert policy[73].strip().startswith("max: 30")
    text = html.render(example_results(), CTX)
    article = text[text.index('id="v2"'):text.index('id="v3"')]
    assert "apply_discount" in article
    got = snippet_lines(article)
    assert [(n, hit) for n, _, hit in got] == [
        (71, False), (72, False), (73, False), (74, True), (75, False), (76, False),
        (77, False), (5, False), (6, False), (7, True), (8, False), (9, False)]
    assert [t for _, t, _ in got[:7]] == policy[70:77]
    assert got[3][1].strip().startswith("max: 30")
    assert '"tool":"apply_discount"' in got[9][1] and '"percent":50' in got[9][1]


def test_unreadable_files_say_source_not_available() -> None:
    v = finding(1, line=4, trace_line=2)
    text = html.render(results_of([make_test("a", [v])]), RenderContext())
    assert text.count("source not available") == 2
    assert snippet_lines(text) == []
    # a line past the end of the file is not available either
    text = html.render(results_of([make_test("a", [finding(1, line=99, trace_line=2)])]),
                       files({"policies/p.yaml": POLICY, "traces/t.jsonl": TRACE}))
    assert text.count("source not available") == 1
    # a finding without a trace location
    v = finding(1)
    v.trace = None
    text = html.render(results_of([make_test("a", [v])]), files({"policies/p.yaml": POLICY}))
    assert "no trace location" in text and "source not available" not in text


def test_each_file_is_read_once() -> None:
    reads: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return {"policies/p.yaml": POLICY, "traces/t.jsonl": TRACE}.get(path)

    vs = [finding(i, line=i + 1, trace_line=2) for i in range(5)]
    html.render(results_of([make_test("a", vs)]), RenderContext(read=read))
    assert sorted(reads) == ["policies/p.yaml", "traces/t.jsonl"]


# ------------------------------------------------------------------ metrics
def test_baseline_counts_side_by_side_with_bars() -> None:
    r = results_of([make_test("a", [finding(1), finding(2)])])
    r.baseline = Comparison.from_dict({
        "counts": {"traces": 12, "tool_calls": 30, "violations": 1, "input_errors": 0,
                   "traces_failing": 4},
        "metrics": {"pass_rate": 0.8, "mean_cost_usd": 0.5, "old_metric": 3}})
    r.metrics = {"pass_rate": 0.9, "mean_cost_usd": 0.25}
    text = html.render(r)
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', text)
    got = {name: re.sub(r"<[^>]+>", "|", cells) for name, cells in rows}
    assert len(got) == 8
    bars = {name: re.findall(r'class="bar (base|head)" style="width: ([\d.]+%)"', cells)
            for name, cells in rows}
    assert "|12||10||▼ −2|" in got["traces"]
    assert bars["traces"] == [("base", "100.0%"), ("head", "83.3%")]
    assert '<td class="delta worse">▲ +1</td>' in dict(rows)["violations"]
    assert bars["violations"] == [("base", "50.0%"), ("head", "100.0%")]
    assert '<td class="delta better">▼ −2</td>' in dict(rows)["traces failing"]
    assert '<td class="delta">=</td>' in dict(rows)["tool calls"]
    # rates in [0, 1] are drawn against 1, not against the larger value
    assert "|0.8||0.9||▲ +0.1|" in got["pass_rate"]
    assert bars["pass_rate"] == [("base", "80.0%"), ("head", "90.0%")]
    assert bars["mean_cost_usd"] == [("base", "50.0%"), ("head", "25.0%")]
    assert "|3||—||" in got["old_metric"] and bars["old_metric"] == []
    assert "No baseline" not in text


def test_baseline_compared_with_a_base_run() -> None:
    base = results_of([make_test("a", [finding(1)])])
    r = results_of([make_test("a", [finding(1), finding(2), finding(3)])])
    r.baseline = compare(r, base)
    text = html.render(r)
    assert ('<tr><th scope="row">violations</th><td class="num">1</td><td class="num">3</td>'
            '<td class="delta worse">▲ +2</td>') in text


def test_without_baseline_head_only() -> None:
    text = html.render(results_of([make_test("a", [])], verdict="pass"))
    assert "No baseline" in text and 'class="bar' not in text and "Δ" not in text
    assert "No violations in 10 traces (30 tool calls)" in text
    assert "No findings." in text


def test_a_verdict_made_by_coverage_findings_gives_them_as_its_reason() -> None:
    """A run failed by a coverage/unexercised finding of severity error (and nothing
    else) said "No violations in 10 traces" beside FAIL."""
    r = results_of([make_test("a", [], "pass")])  # verdict fail
    r.unexercised = [Finding(rule="coverage/unexercised", severity="error",
                             message="No call to 'x' (blocklist entry) in any of the 10 "
                                     "trace(s)", test="t",
                             config=ConfigRef("agent-eval.yaml", 7, 17, "k"), trace=None)]
    text = html.render(r)
    assert '<p class="reason" id="reason">1 error-severity coverage finding</p>' in text
    assert "No violations" not in text


def test_a_location_that_leaves_the_repository_is_not_a_link() -> None:
    """A results file may name any path: ``../../../../evil/x.yaml`` at the blob URL is
    https://github.com/evil/x.yaml once the browser resolves it."""
    bad = finding(1)
    bad.config = ConfigRef("../../../../evil/x.yaml", 8, 1, "k")
    r = results_of([make_test("a", [bad, finding(2)])])
    text = html.render(r, RenderContext(repo_url="https://github.com/acme/agent", sha="abc"))
    hrefs = re.findall(r'href="(https://[^"]*)"', text)
    assert hrefs and all(h.startswith("https://github.com/acme/agent/blob/abc/policies/")
                         for h in hrefs), hrefs
    assert "evil/x.yaml" in text  # shown, as text


def test_input_errors_and_criteria() -> None:
    r = results_of([make_test("a", [], "pass")], verdict="error", input_errors=[
        InputError("input/parse_error", "traces/x.jsonl", 7, "not JSON")])
    r.criteria = [CriterionResult.from_dict({"name": "min_pass_rate", "kind": "blocking",
                                             "threshold": 0.8, "value": 0.9,
                                             "status": "pass"})]
    text = html.render(r)
    assert '<p class="reason" id="reason">1 input error: traces/x.jsonl:7: not JSON</p>' in text
    assert "<li><code>traces/x.jsonl:7</code> — not JSON" in text
    assert ('<tr><td><code>min_pass_rate</code></td><td>blocking</td><td class="num">0.8</td>'
            '<td class="num">0.9</td>') in text


# ------------------------------------------------------------------ tables, caps
def test_findings_most_severe_first_and_severity_options() -> None:
    vs = [finding(0, "note", tool="n"), finding(1, "warning", tool="w"), finding(2, tool="e")]
    text = html.render(results_of([make_test("a", vs)]))
    page = Page(text)
    assert [r[3] for r in page.rows["findings-table"]] == ["e", "w", "n"]
    assert page.row_cats["findings-table"] == ["error", "warning", "note"]
    select = text[text.index('aria-label="Severity"'):]
    select = select[:select.index("</select>")]
    assert re.findall(r'<option value="(\w*)">', select) == ["", "error", "warning", "note"]


def test_scenarios_table_when_there_are_scenarios() -> None:
    r = results_of([make_test("a", [])], verdict="pass")
    r.scenarios = scenarios({"id": "REFUND-001", "status": "pass", "score": 92.5,
                             "metrics": {}, "findings": []},
                            {"id": "REFUND-002", "status": "fail", "score": 40,
                             "findings": [scenario_finding(1), scenario_finding(2)]})
    page = Page(html.render(r))
    assert page.rows["scenarios-table"] == [["REFUND-001", "pass", "92.5", "0"],
                                            ["REFUND-002", "fail", "40.0", "2"]]
    assert page.row_cats["scenarios-table"] == ["pass", "fail"]


def test_findings_table_is_capped_at_5000_rows_keeping_the_most_severe() -> None:
    n = 3000
    warnings = [finding(i, "warning", tool="w", line=i % 50 + 1) for i in range(n)]
    errors = [finding(i, tool="e", line=i % 50 + 1) for i in range(n, 2 * n)]
    r = results_of([make_test("w", warnings, "warn"), make_test("e", errors)])
    text = html.render(r, files({"policies/p.yaml": POLICY * 3, "traces/t.jsonl": TRACE}))
    page = Page(text)
    rows = page.rows["findings-table"]
    assert len(rows) == html.MAX_ROWS == 5000
    assert [r[3] for r in rows] == ["e"] * n + ["w"] * (5000 - n)
    assert '<tfoot><tr class="more"><td colspan="9">1000 more not shown; all are in ' \
           "results.json</td></tr></tfoot>" in text
    assert text.count('<article class="violation') == html.MAX_DETAILS
    assert f"{2 * n - html.MAX_DETAILS} more findings not shown here; all are in " \
           "results.json" in text
    # rows beyond the detailed ones do not link to a detail
    assert 'href="#v500"' in text and 'href="#v501"' not in text
    assert len(text.encode()) < 8_000_000


# ------------------------------------------------------------------ in a real browser
def need_browser() -> str:
    """node, playwright-core and Chromium, or the test does not run (tests/conftest.py)."""
    node = shutil.which("node")
    if node is None or not PLAYWRIGHT.is_file():
        missing_system("node and playwright-core (the browser test drives Chromium with them)",
                       "install Node.js and run 'npm ci' at the repository root")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        missing_system(f"Chromium at {CHROMIUM} (the browser test)",
                       "install it with scripts/install-debian-packages (as root or with "
                       "sudo), or point AGENT_EVAL_CHROMIUM at a Chromium binary")
    assert node is not None
    return node


def rich_results() -> Results:
    """The example plus warnings and notes, scenarios and a baseline."""
    r = example_results()
    extra = [finding(1, "warning", tool="zeta_tool", policy="policies/missing.yaml"),
             finding(2, "warning", tool="beta_tool", argument="amount", value="x" * 200,
                     policy="examples/customer-service/policies/customer.yaml", line=60,
                     trace="examples/customer-service/traces/refund-happy.jsonl"),
             finding(3, "note", tool="apply_discount", message="just a note")]
    r.tests.append(make_test("style", extra, "warn"))
    r.counts["violations"] += len(extra)
    r.scenarios = scenarios({"id": "REFUND-001", "status": "pass", "score": 92.5,
                             "findings": []},
                            {"id": "REFUND-002", "status": "fail", "score": 41.0,
                             "findings": [scenario_finding(4)]},
                            {"id": "GDPR-DELETE-001", "status": "fail", "score": 10.0,
                             "findings": [scenario_finding(5), scenario_finding(6)]})
    r.metrics = {"pass_rate": 0.4}
    r.baseline = Comparison.from_dict({
        "counts": {"traces": 10, "tool_calls": 30, "violations": 6, "input_errors": 0,
                   "traces_failing": 3},
        "metrics": {"pass_rate": 0.7}})
    return r


def expectations(r: Results, page: Page, filter_text: str) -> dict[str, Any]:
    found = by_severity(r.findings)
    tools = [v.tool or "" for v in found]
    by_violations = sorted(r.tests, key=lambda t: len(t.violations))
    severities: list[str] = [v.severity for v in found]
    severity = "warning" if "warning" in severities else "error"
    out: dict[str, Any] = {
        "verdict": r.verdict.upper(),
        "findings_rows": len(found),
        "tools_sorted": sorted(tools),
        "filter": {"text": filter_text,
                   "rows": sum(filter_text.lower() in " ".join(row).lower()
                               for row in page.rows["findings-table"])},
        "severity": {"value": severity, "rows": severities.count(severity)},
        "tests_by_violations": [t.id for t in by_violations],
        "hits": sum(hit for _, hit in page.lines),
    }
    if r.scenarios:
        out["scenarios"] = {"rows": len(r.scenarios), "status": "fail",
                            "status_rows": sum(s.status == "fail" for s in r.scenarios)}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("which", ["example", "rich"])
def test_report_in_headless_chromium(which: str, tmp_path: Path) -> None:
    node = need_browser()
    r = example_results() if which == "example" else rich_results()
    text = html.render(r, CTX)
    page = Page(text)
    expect = expectations(r, page, "apply_discount")
    # example: the args_valid row and the scenario/args row of apply_discount; rich: the
    # args_valid row and the extra note (its scenarios are replaced)
    assert expect["filter"]["rows"] == 2
    # a highlighted line per readable snippet: example 10 rule violations and 10 scenario
    # findings x (policy + trace) + 7 criteria (policy only) + 5 coverage/unexercised
    # notes (policy only) = 52; rich: its 10 rule violations x 2 + 2 of the 3 extras'
    # snippets (the others unreadable) + 3 scenario findings (policy only:
    # traces/t.jsonl is not in the repository) + 7 criteria + the 5 unexercised = 37
    assert expect["hits"] == (52 if which == "example" else 37)
    report = tmp_path / "report.html"
    report.write_text(text, encoding="utf-8")
    (tmp_path / "expect.json").write_text(json.dumps(expect), encoding="utf-8")
    shot = tmp_path / f"{which}.png"
    proc = subprocess.run([node, str(CHECK), str(report), str(shot),
                           str(tmp_path / "expect.json")],
                          capture_output=True, text=True, timeout=180, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["problems"] == [] and summary["failures"] == []
    assert summary["first_tool_ascending"] == expect["tools_sorted"][0]
    assert summary["first_tool_descending"] == expect["tools_sorted"][-1]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == 1280 and height > 2000, (width, height)
    assert len(data) > 50_000


# The findings table's rows as the template once made them (before html._finding_rows):
# what the rows made in Python must be, character for character.
_ROWS_TEMPLATE = """\
{% macro wrappable(path) %}{% for part in path.split("/") %}<span class="nw">{{ part }}\
{{ "/" if not loop.last }}</span>{% if not loop.last %}<wbr>{% endif %}{% endfor %}\
{% endmacro %}
{% for f in findings %}
<tr data-cat="{{ f.severity }}">
<td class="num">{% if f.detailed %}<a href="#v{{ f.n }}">{{ f.n }}</a>{% else %}{{ f.n }}\
{% endif %}</td>
<td data-sort="{{ f.rule }}"><code>{{ f.rule }}</code><div class="msg">{{ f.message | text }}\
</div></td>
<td data-sort="{{ f.rank }} {{ f.severity }}"><span class="sev sev-{{ f.severity }}">\
{{ f.severity }}</span></td>
<td class="tool">{% if f.tool %}<code>{{ f.tool }}</code>{% endif %}</td>
<td>{% if f.argument %}<code>{{ f.argument }}</code>{% endif %}</td>
<td class="value">{% if f.value %}<code>{{ f.value }}</code>{% endif %}</td>
<td>{% if f.constraint %}<code>{{ f.constraint }}</code>{% endif %}</td>
<td class="loc">{% if f.policy_url %}<a href="{{ f.policy_url }}">{{ wrappable(f.policy) }}</a>\
{% else %}{{ wrappable(f.policy) }}{% endif %}</td>
<td class="loc">{{ wrappable(f.trace) }}</td>
</tr>
{% endfor %}
"""
def _plain(path: str) -> bool:
    return not path.startswith("/") and all(
        part not in ("", ".", "..") for part in path.replace("\\", "/").split("/"))


_AWKWARD = st.text(st.sampled_from('a/<>&"\' \n\té'), max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.builds(
    Finding, rule=_AWKWARD, severity=st.sampled_from(["error", "warning", "note", "<b>"]),
    message=_AWKWARD, test=_AWKWARD,
    config=st.builds(ConfigRef, _AWKWARD, st.integers(0, 9), st.integers(0, 9), _AWKWARD),
    trace=st.none() | st.builds(TraceRef, _AWKWARD, st.integers(0, 9), _AWKWARD),
    tool=st.none() | _AWKWARD, argument=st.none() | _AWKWARD,
    value=st.none() | _AWKWARD | st.integers(), constraint=st.none() | _AWKWARD),
    min_size=1, max_size=4), st.sampled_from([None, "https://x/blob/a&b/"]), st.integers(1, 3))
def test_the_findings_rows_are_escaped_as_the_template_escaped_them(
        found: list[Finding], blob: str | None, details: int) -> None:
    """Trace and policy text in the findings table (made in Python, not by the template):
    escaped exactly as jinja2's autoescape does in the template (line breaks written as
    character references), so never markup."""
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined, finalize=html._finalize)
    env.filters["text"] = html.text
    rows = [{
        "n": n, "rule": v.rule, "message": " ".join(v.message.split()),
        "severity": v.severity, "rank": severity_rank(v.severity), "tool": v.tool or "",
        "argument": v.argument or "", "value": html._value(v),
        "constraint": v.constraint or "", "policy": f"{v.config.file}:{v.config.line}",
        # a link only to a plain repository-relative path (no "", "." or ".." segment)
        "policy_url": None if blob is None or not _plain(v.config.file)
        else f"{blob}{quote(v.config.file, safe='/')}#L{v.config.line}",
        "trace": f"{v.trace.file}:{v.trace.line}" if v.trace is not None else "",
        "detailed": n <= details} for n, v in enumerate(found, 1)]
    expected = env.from_string(_ROWS_TEMPLATE).render(findings=rows)
    saved, html.MAX_DETAILS = html.MAX_DETAILS, details  # rows past it link to no detail
    try:
        made = str(html._finding_rows(found, blob))
    finally:
        html.MAX_DETAILS = saved
    assert made + "\n" == expected.lstrip("\n")
