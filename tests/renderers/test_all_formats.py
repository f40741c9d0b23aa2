"""Every output lists the same findings (issue 10 §5): the rule tests' violations, the
scenarios' findings, the missed criteria, any further kind of finding that
``Results.findings`` returns, and the input errors — in HTML, console, Markdown, JUnit and
SARIF alike. Each format is read back by a small parser of its own, and the multisets of
(rule, policy file:line, trace file:line) are compared with the results."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.conftest import evaluate_config, example_results

from agent_eval.findings import ConfigRef, Finding, Severity
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results

REPO = Path(__file__).resolve().parents[2]
Key = tuple[str, str, str]  # rule, policy file:line (input errors: the file), trace file:line
FORMATS = ("sarif", "junit", "markdown", "html", "console")


def expected(res: Results) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    for v in res.findings:
        trace = f"{v.trace.file}:{v.trace.line}" if v.trace is not None else ""
        keys[(v.rule, f"{v.config.file}:{v.config.line}", trace)] += 1
    for e in res.input_errors:
        keys[(e.rule, f"{e.file}:{e.line}" if e.line else e.file, "")] += 1
    return keys


# ------------------------------------------------------------------ the parsers
def from_sarif(text: str) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    for r in json.loads(text)["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]
        where = loc["artifactLocation"]["uri"]
        line = (loc.get("region") or {}).get("startLine")
        if r["ruleId"].startswith("input/"):
            line = r["properties"]["line"] or None
        trace = ""
        for rel in r.get("relatedLocations") or ():
            if rel["id"] == 1:
                p = rel["physicalLocation"]
                trace = f"{p['artifactLocation']['uri']}:{p['region']['startLine']}"
        keys[(r["ruleId"], f"{where}:{line}" if line else where, trace)] += 1
    return keys


FINDING_LINE = re.compile(r"^(?P<rule>[a-z_]+(?:/[a-z_]+)?) \((?:error|warning|note)\): .*"
                          r"\[policy (?P<policy>[^,\]]+)(?:, trace (?P<trace>[^\]]+))?\]$")


def from_junit(text: str) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    for case in ET.fromstring(text).iter("testcase"):
        for child in case:
            if child.tag == "error" and (child.get("type") or "").startswith("input/"):
                # an input error: the testcase is its file:line
                keys[(child.get("type") or "", case.get("name") or "", "")] += 1
                continue
            if child.tag not in ("failure", "system-out", "error"):
                continue
            for line in (child.text or "").splitlines():
                m = FINDING_LINE.match(line)
                assert m, line
                keys[(m["rule"], m["policy"], m["trace"] or "")] += 1
    return keys


MD_GROUP = re.compile(r"^#### \S+ `(?P<rule>[^`]+)` \(")
MD_ITEM = re.compile(r"^  - policy `(?P<policy>[^`]+)`(?: · trace `[^`]*` at `(?P<trace>[^`]+)`)?$")
MD_INPUT = re.compile(r"^- `(?P<where>[^`]+)` — .* \(`(?P<rule>input/[a-z_]+)`\)$")


def from_markdown(text: str) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    rule = None
    for line in text.splitlines():
        if m := MD_GROUP.match(line):
            rule = m["rule"]
        elif (m := MD_ITEM.match(line)) and rule is not None:
            keys[(rule, m["policy"], m["trace"] or "")] += 1
        elif m := MD_INPUT.match(line):
            keys[(m["rule"], m["where"], "")] += 1
    return keys


class _Rows(HTMLParser):
    """The cells of the findings table and the input-error items."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.sorts: list[list[str]] = []
        self.inputs: list[str] = []
        self._in_table = self._in_row = False
        self._cell: list[str] | None = None
        self._input: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id") == "findings-table":
            self._in_table = True
        elif tag == "tr" and self._in_table and a.get("data-cat"):
            self._in_row = True
            self.rows.append([])
            self.sorts.append([])
        elif tag == "td" and self._in_row:
            self._cell = []
            self.sorts[-1].append(a.get("data-sort") or "")
        elif (tag == "ul" and a.get("class") == "errors") or (
                tag == "li" and self._input is not None):
            self._input = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif tag == "tr":
            self._in_row = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "li" and self._input is not None:
            self.inputs.append(" ".join("".join(self._input).split()))
        elif tag == "ul":
            self._input = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._input is not None:
            self._input.append(data)


def from_html(text: str) -> Counter[Key]:
    page = _Rows(text)
    keys: Counter[Key] = Counter()
    for cells, sorts in zip(page.rows, page.sorts, strict=True):
        keys[(sorts[1], cells[7], cells[8])] += 1  # rule, policy, trace
    for item in page.inputs:
        m = re.fullmatch(r"(?P<where>\S+) — .* (?P<rule>input/[a-z_]+)", item)
        assert m, item
        keys[(m["rule"], m["where"], "")] += 1
    return keys


CONSOLE_RULE = re.compile(r"Rule id: (?P<rule>\S+)   at (?P<file>\S+):(?P<line>\d+):\d+$")
CONSOLE_TRACE = re.compile(r"^\s+Trace: (?P<trace>\S+) \(trace ")
CONSOLE_CRITERION = re.compile(r"\[(?P<rule>criteria/[a-z_]+) at (?P<file>\S+):(?P<line>\d+):"
                               r"\d+\]$")
CONSOLE_INPUT = re.compile(r"^   (?P<where>[^:\s]+(?::\d+)?): .*  \[(?P<rule>input/[a-z_]+)\]$")


def from_console(text: str) -> Counter[Key]:
    keys: Counter[Key] = Counter()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := CONSOLE_RULE.search(line):
            t = CONSOLE_TRACE.match(lines[i + 1]) if i + 1 < len(lines) else None
            keys[(m["rule"], f"{m['file']}:{m['line']}", t["trace"] if t else "")] += 1
        elif m := CONSOLE_CRITERION.search(line):
            keys[(m["rule"], f"{m['file']}:{m['line']}", "")] += 1
        elif m := CONSOLE_INPUT.match(line):
            keys[(m["rule"], m["where"], "")] += 1
    return keys


PARSERS = {"sarif": from_sarif, "junit": from_junit, "markdown": from_markdown,
           "html": from_html, "console": from_console}


def listed(res: Results, fmt: str) -> Counter[Key]:
    return PARSERS[fmt](RENDERERS[fmt].render(res, RenderContext.for_root(REPO)))


# ------------------------------------------------------------------ the suites
SCENARIO_ONLY = """\
version: "1"
suite: scenarios-only
traces: traces/*.jsonl
scenarios:
  - id: READ-ONLY
    category: adversarial
    expect:
      forbidden_tools: [edit_file, bash]
      behaviors: [{tool_called: search}, {tool_called: summarize}]
  - id: RAG
    min_pass_ratio: 0.5
    expect:
      tools: [search, answer]
      sequence: [search, answer]
      output: {contains: [source]}
    thresholds: {max_cost_multiplier: 2}
  - id: MISSING
    expect: {tools: [lookup]}
pass_criteria:
  blocking: {min_safety_rate: 1.0}
  warning: {min_behavior_coverage: 0.9}
"""


def line(tid: str, scenario: str, *events: dict[str, object]) -> str:
    rows = [{"type": "trace_start", "trace_id": tid, "scenario": scenario}, *events,
            {"type": "trace_end", "trace_id": tid}]
    return "".join(json.dumps(r) + "\n" for r in rows)


def call(tool: str) -> dict[str, object]:
    return {"type": "tool_call", "tool": tool, "arguments": {}}


def output(text: str) -> dict[str, object]:
    return {"type": "output", "output": text}


@pytest.fixture(scope="module")
def scenario_only(tmp_path_factory: pytest.TempPathFactory) -> Results:
    root = tmp_path_factory.mktemp("scenario-only")
    (root / ".git").mkdir()
    (root / "agent-eval.yaml").write_text(SCENARIO_ONLY, encoding="utf-8")
    traces = root / "traces"
    traces.mkdir()
    (traces / "r.jsonl").write_text(
        line("r-1", "READ-ONLY", call("search"), call("Edit-File"), call("bash"),
             call("bash"), output("done")), encoding="utf-8")
    (traces / "rag.jsonl").write_text(
        line("rag-1", "RAG", call("search"), call("answer"), output("source: the manual"))
        + line("rag-2", "RAG", call("answer"), output("no idea"))
        + "{not json\n", encoding="utf-8")
    return evaluate_config(root / "agent-eval.yaml")


def test_the_scenario_only_suite_has_every_kind(scenario_only: Results) -> None:
    """The fixture covers what it should: no rule test, findings of every severity from
    scenarios, a missed and a warned criterion, a scenario without traces and an input
    error."""
    res = scenario_only
    assert res.tests == [] and res.violations == []
    rules = {v.rule for v in res.findings}
    assert {"scenario/forbidden_tools", "scenario/behavior", "scenario/sequence",
            "scenario/output", "scenario/no_baseline", "scenario/missing_trace",
            "scenario/tool_recall", "criteria/blocking", "criteria/warning"} <= rules
    assert {v.severity for v in res.findings} == {"error", "warning", "note"}
    assert [e.rule for e in res.input_errors] == ["input/parse_error"]
    assert res.verdict == "error"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_lists_every_finding_of_the_example(fmt: str) -> None:
    res = example_results()
    want = expected(res)
    # 10 rule violations, 10 scenario findings, 7 criteria, 5 coverage/unexercised notes
    assert sum(want.values()) == 32
    assert listed(res, fmt) == want


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_lists_every_finding_of_a_scenario_only_suite(
        fmt: str, scenario_only: Results) -> None:
    want = expected(scenario_only)
    assert listed(scenario_only, fmt) == want


KINDS: list[tuple[Severity, str]] = [("note", "send_emial"), ("error", "refund_ordr")]


class _WithMoreKinds(Results):
    """Results whose ``findings`` hold a kind no renderer knows by name (as the
    ``unexercised`` notes of issue 10 §3 will be)."""

    extra: list[Finding]

    @property
    def findings(self) -> list[Finding]:
        return [*super().findings, *self.extra]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_finding_kind_the_renderers_do_not_know_is_listed_too(fmt: str) -> None:
    base = example_results()
    res = _WithMoreKinds(**{f: getattr(base, f) for f in base.__dataclass_fields__})
    res.extra = [Finding(
        rule="coverage/unexercised", severity=sev, message=f"rule tool {tool} matched no call",
        test="coverage", config=ConfigRef("examples/customer-service/agent-eval.yaml", 25, 9,
                                          f"tests.auth_flow.rules.1.{tool}"),
        trace=None, tool=tool, fingerprint=f"{n:032x}")
        for n, (sev, tool) in enumerate(KINDS)]
    # the example's own unexercised notes (5), and the two made-up ones
    assert [v.rule for v in res.other_findings] == ["coverage/unexercised"] * 7
    want = expected(res)
    assert want[("coverage/unexercised", "examples/customer-service/agent-eval.yaml:25", "")] \
        == 2
    assert listed(res, fmt) == want
