"""JUnit XML (docs/outputs.md "JUnit XML"): what CI test reporters read.

Layout:

- ``<testsuites name=SUITE>`` with the totals;
- one ``<testsuite>`` per test id, holding one ``<testcase>`` per trace
  (``classname`` = ``SUITE.TEST``, ``name`` = trace id, ``file`` = the trace file).
  A trace with an error-severity finding of that test gets a ``<failure>`` whose
  ``message`` is ``N violation(s)``, whose ``type`` is the rule id of the first
  error-severity finding, and whose text lists every finding of the test on that trace, one
  per line with its policy ``file:line`` and trace ``file:line``. A trace with only
  warning/note findings passes; its findings are in the testcase's ``<system-out>``;
- one ``<testsuite name="scenarios">`` (only when the results have scenarios), one
  testcase per scenario, a failure when the scenario failed (its findings in the text;
  those of a passed scenario, such as tolerated failures, in ``<system-out>``);
- one ``<testsuite name="criteria">`` (only when there are pass criteria), one testcase per
  criterion: a failure when missed, ``<system-out>`` when it only warned, skipped without
  a baseline;
- one ``<testsuite name="findings">`` for findings of any other kind (one testcase per
  rule), so that every finding of the results is in the file;
- one ``<testsuite name="input">`` (only when there are input errors), one testcase with
  an ``<error>`` per input error.

Time: a test's ``duration_ms`` goes on its testsuite; the time of one trace is not
measured, so each testcase carries the test's time divided evenly over its traces.

The output is a pure function of the results: no timestamps or host names, attributes
in a fixed order, characters XML 1.0 cannot carry replaced by ``\\uFFFD``. The
``file`` attribute on ``testcase`` is the one attribute beyond the Jenkins JUnit schema
(GitLab, and GitHub reporters such as action-junit-report, read it to place results).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import BinaryIO

from agent_eval.errors import InputError
from agent_eval.findings import Finding
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results, TestResult

_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# text that _text / _attr would change: a character to escape or that XML cannot carry
_TEXT_CHANGES = re.compile(
    "[^\t\n\r\x20-\x25\x27-\x3b\x3d\x3f-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ATTR_CHANGES = re.compile(
    "[^\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_NO_TRACE = "(no trace)"


def _clean(text: str) -> str:
    return _INVALID.sub("\ufffd", text)


def _text(text: str) -> str:
    if not _TEXT_CHANGES.search(text):  # most text: nothing to do
        return text
    return _clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _lines_kept(text: str) -> str:
    """Element text whose line breaks are character references (``&#10;``): the same
    text for every XML reader, and no text of a trace or a results file starts a line of
    the file. ``agent-eval report -f junit`` prints it as it is, and an input error that
    quoted a ``tool_result`` id ``"x\n::error::…"`` wrote a line ``::error::…``: a GitHub
    workflow command in the job's log (docs/security.md)."""
    escaped = _text(text)
    if "\n" not in escaped and "\r" not in escaped:
        return escaped
    return escaped.replace("\r", "&#13;").replace("\n", "&#10;")


def _attr(text: str) -> str:
    if not _ATTR_CHANGES.search(text):
        return text
    return (_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


def _attrs(pairs: Iterable[tuple[str, object]]) -> str:
    return "".join(f' {k}="{_attr(str(v))}"' for k, v in pairs)


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.3f}"


def finding_line(v: Finding) -> str:
    """One finding on one line: rule, severity, message, policy and trace locations."""
    where = [f"policy {v.config.file}:{v.config.line}"] if v.config.file else []
    if v.trace is not None:
        where.append(f"trace {v.trace.file}:{v.trace.line}")
    message = " ".join(v.message.split())
    return f"{v.rule} ({v.severity}): {message}" + (f" [{', '.join(where)}]" if where else "")


class _Case:
    """One ``<testcase>`` being built."""

    __slots__ = ("children", "errored", "failed", "head", "skipped")

    def __init__(self, classname: str, name: str, file: str | None, ms: float,
                 head: str | None = None) -> None:
        self.head = head if head is not None else _attrs(
            [("classname", classname), ("name", name)]
            + ([("file", file)] if file is not None else []) + [("time", _seconds(ms))])
        self.children: list[str] = []
        self.failed = self.errored = self.skipped = False

    def findings(self, findings: list[Finding], *, failed: bool | None = None,
                 noun: str = "violation") -> None:
        """A failure when ``failed`` (by default: when any finding is error-severity),
        else the findings go to ``<system-out>``."""
        if not findings and failed is None:
            return
        errors = [v for v in findings if v.severity == "error"]
        text = "\n".join([finding_line(v) for v in findings])
        if failed is None:
            failed = bool(errors)
        if failed:
            self.failed = True
            kind = (errors or findings)[0].rule if findings else noun
            attrs = _attrs([("message", f"{len(findings)} {noun}(s)"), ("type", kind)])
            self.children.append(f"<failure{attrs}>{_text(text)}</failure>")
        elif findings:
            self.children.append(f"<system-out>{_text(text)}</system-out>")

    def error(self, message: str, type_: str, text: str) -> None:
        self.errored = True
        attrs = _attrs([("message", message), ("type", type_)])
        self.children.append(f"<error{attrs}>{_lines_kept(text)}</error>")

    def skip(self, message: str) -> None:
        self.skipped = True
        self.children.insert(0, f"<skipped>{_lines_kept(message)}</skipped>")


class _Suite:
    """One ``<testsuite>``: its cases' lines as they are added, and their counts."""

    def __init__(self, name: str, ms: float) -> None:
        self.name = name
        self.ms = ms
        self.lines: list[str] = []
        self.tests = self.failed = self.errored = self.skipped = 0

    def add(self, case: _Case) -> None:
        self.tests += 1
        self.failed += case.failed
        self.errored += case.errored
        self.skipped += case.skipped
        if not case.children:
            self.lines.append(f"    <testcase{case.head}/>")
            return
        self.lines.append(f"    <testcase{case.head}>")
        self.lines.extend(["      " + c for c in case.children])
        self.lines.append("    </testcase>")

    def xml(self) -> str:
        head = _attrs([("name", self.name), ("tests", self.tests),
                       ("failures", self.failed), ("errors", self.errored),
                       ("skipped", self.skipped), ("time", _seconds(self.ms))])
        if not self.tests:
            return f"  <testsuite{head}/>"
        return "\n".join([f"  <testsuite{head}>", *self.lines, "  </testsuite>"])


def _test_suite(results: Results, test: TestResult) -> _Suite:
    suite = _Suite(test.id, test.duration_ms)
    by_trace: dict[tuple[str, str], list[Finding]] = {}
    loose: list[Finding] = []
    for v in test.violations:
        if v.trace is None:
            loose.append(v)
        else:
            by_trace.setdefault((v.trace.file, v.trace.trace_id), []).append(v)
    classname = f"{results.suite}.{test.id}"
    per_trace = test.duration_ms / max(1, test.traces_checked)
    traces = results.traces if test.traces_checked else []
    # not exercised: no call it checks was made (which names were never called is listed
    # with the other findings)
    idle = "not exercised: no call to a tool this test names was made" \
        if test.status == "not_exercised" else ""
    # a testcase per trace: the attributes all but the name share escaped once
    before = f' classname="{_attr(classname)}" name="'
    after = f'" time="{_seconds(per_trace)}"'
    files: dict[str, str] = {}
    none: list[Finding] = []
    lines = suite.lines
    for t in traces:
        file = files.get(t.file)
        if file is None:
            file = files[t.file] = _attr(str(t.file))
        head = f'{before}{_attr(str(t.id))}" file="{file}{after}'
        found = by_trace.pop((t.file, t.id), none)
        if not found and not idle:  # most traces: a testcase with nothing in it
            suite.tests += 1
            lines.append(f"    <testcase{head}/>")
            continue
        case = _Case(classname, t.id, t.file, per_trace, head=head)
        case.findings(found)
        if idle:
            case.skip(idle)
        suite.add(case)
    for (file, trace_id), found in by_trace.items():  # findings on a trace not listed
        case = _Case(classname, trace_id, file, 0)
        case.findings(found)
        suite.add(case)
    if loose:
        case = _Case(classname, _NO_TRACE, None, 0)
        case.findings(loose)
        suite.add(case)
    return suite


def _scenario_suite(results: Results) -> _Suite:
    suite = _Suite("scenarios", sum(float(s.duration_ms) for s in results.scenarios))
    for s in results.scenarios:
        case = _Case(f"{results.suite}.scenarios", s.id, None, float(s.duration_ms))
        found = list(s.findings)
        status = s.status
        if status == "error":
            text = "\n".join(finding_line(v) for v in found) or "could not be checked"
            case.error("scenario could not be checked",
                       found[0].rule if found else "scenario/error", text)
        else:
            # a scenario that passed with tolerated failures (min_pass_ratio) passes
            case.findings(found, failed=status == "fail", noun="finding")
        suite.add(case)
    return suite


def _criteria_suite(results: Results) -> _Suite:
    """One testcase per criterion: a failure when missed, its finding in
    ``<system-out>`` when it only warned, skipped without a baseline."""
    suite = _Suite("criteria", 0)
    found = {v.fingerprint: v for v in results.criteria_findings}
    for c in results.criteria:
        case = _Case(f"{results.suite}.criteria", c.name, None, 0)
        status = c.status
        finding = found.get(c.fingerprint)
        if status == "skip":
            case.skip(c.message or "skipped")
        elif finding is not None:
            case.findings([finding], failed=status == "fail", noun="criterion")
        suite.add(case)
    return suite


def _other_suite(results: Results, found: list[Finding]) -> _Suite:
    """The findings of no test, scenario or criterion: one testcase per rule."""
    suite = _Suite("findings", 0)
    by_rule: dict[str, list[Finding]] = {}
    for v in found:
        by_rule.setdefault(v.rule, []).append(v)
    for rule, items in by_rule.items():
        case = _Case(f"{results.suite}.findings", rule, None, 0)
        case.findings(items, noun="finding")
        suite.add(case)
    return suite


def _input_suite(results: Results, errors: list[InputError]) -> _Suite:
    suite = _Suite("input", 0)
    for e in errors:
        where = f"{e.file}:{e.line}" if e.line else e.file
        case = _Case(f"{results.suite}.input", where, e.file, 0)
        case.error(" ".join(e.message.split()), e.rule, str(e))
        suite.add(case)
    return suite


def _suites(results: Results) -> list[_Suite]:
    suites = [_test_suite(results, t) for t in results.tests]
    if results.scenarios:
        suites.append(_scenario_suite(results))
    if results.criteria:
        suites.append(_criteria_suite(results))
    other = results.other_findings
    if other:
        suites.append(_other_suite(results, other))
    if results.input_errors:
        suites.append(_input_suite(results, results.input_errors))
    return suites


def write(results: Results, ctx: RenderContext | None, out: BinaryIO) -> None:
    """The bytes of :func:`render`, a testsuite at a time (the totals come first)."""
    suites = _suites(results)
    head = _attrs([
        ("name", results.suite),
        ("tests", sum(s.tests for s in suites)),
        ("failures", sum(s.failed for s in suites)),
        ("errors", sum(s.errored for s in suites)),
        ("time", _seconds(sum(s.ms for s in suites))),
    ])
    out.write(f'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites{head}>\n'.encode())
    for n, s in enumerate(suites):
        out.write(s.xml().encode("utf-8") + b"\n")
        suites[n] = _NO_SUITE  # its lines can go
    out.write(b"</testsuites>\n")


_NO_SUITE = _Suite("", 0)


def render(results: Results, ctx: RenderContext | None = None) -> str:
    buffer = io.BytesIO()
    write(results, ctx, buffer)
    return buffer.getvalue().decode("utf-8")
