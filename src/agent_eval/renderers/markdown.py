"""Markdown (docs/outputs.md "Markdown"): the pull-request comment and the job summary.

The text comes from ``templates/summary.md.j2`` (jinja2, autoescape off); this module
prepares plain values for it. Every string that comes from a trace, a results file or a
baseline (messages, ids, values, statuses, reasons) is neutralised at this boundary, by
one of two helpers (the template's filters ``md`` and ``code`` are these):

- :func:`md_text` for running text: backslash escapes for everything that could start
  Markdown or HTML (links, images, emphasis, code, tables, entities, autolinks), a
  zero-width space after ``@`` and ``#`` (and ``GH-``) so that no ``@mention``,
  ``@org/team``, ``#123`` or ``GH-123`` reference is made, one line;
- :func:`md_code` for a code span (nothing is parsed inside one: no link, no mention),
  fenced against the backticks it holds; :func:`cell` is one inside a table.

Control, zero-width and bidirectional-override characters are dropped by both. The
hidden marker (:func:`marker`) is the first line of the document and comes from the
suite name only; the action finds its comment by that first line (docs/security.md).

Policy locations are reference-style links (``[file:line][3]`` with ``[3]: URL`` at the
end of the section) to ``{repo_url}/blob/{sha}/{file}#L{line}`` when the repository and
commit are known, so the text still reads well in a terminal; plain ``file:line``
otherwise.

The document is at most :data:`MAX_CHARS` characters: violations are listed most severe
first, and those that do not fit are dropped from the end with a line saying how many
(the per-test table is cut the same way if even that is not enough).

A comparison with a base run (``results.baseline``) adds *base* and *Δ* columns to the
metrics table and the sections of what changed; when none could be made, the summary
says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import chain
from typing import TYPE_CHECKING, Any, overload
from urllib.parse import quote

import orjson

from agent_eval._version import __version__
from agent_eval.findings import Finding, severity_rank
from agent_eval.renderers import _judge as j
from agent_eval.renderers._templates import environment
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import (
    Results,
    blocking_checks,
    missing_trace_only,
    partial_note,
    tolerated,
)
from agent_eval.sections import Comparison, NoBaseline, ScenarioChange

if TYPE_CHECKING:
    import jinja2

MAX_CHARS = 60_000
DETAILS_OVER = 10  # tables with more rows than this are collapsed in <details>
MAX_INPUT_ERRORS = 20
VALUE_CHARS = 80

ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "💥", "not_exercised": "➖"}
SEVERITY_ICON = {"error": "❌", "warning": "⚠️", "note": "ℹ️"}


# ---------------------------------------------------------------- text filters
# C0/C1 controls (whitespace is folded separately), zero-width and bidi-override characters:
# the Arabic letter mark (U+061C) is a bidi mark as U+200E/U+200F are; the tag characters
# (U+E0000-U+E007F) and the interlinear annotation marks (U+FFF9-U+FFFB) show nothing, and
# tags spell ASCII text no reader of the comment sees (U+E0041 is an invisible "A")
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb"
                        "\U000e0000-\U000e007f]")
ZWSP = "\u200b"  # breaks @mentions and #references without showing
# characters that can open Markdown, HTML, an entity or a table cell anywhere in a line
_MARKUP = re.compile(r"([\\`*\[\]<>|~&$])")
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # not inside a word
_MENTION = re.compile(r"([@#])(?=[0-9A-Za-z])")
# GitHub's other issue reference, "GH-26" (docs "Autolinked references"): a ZWSP after "-"
_GH_REF = re.compile(r"(?i)(gh-)(?=[0-9])")
# every "://" and "www." whatever precedes it: GFM autolinks "www." after "_", "*", "~" or "("
# (a "\b" misses "_www.": "_" is a word character for Python, not for GFM); a bare e-mail
# address (also "mailto:"/"xmpp:") is broken by _MENTION's ZWSP after its "@"
_AUTOLINK = re.compile(r"(?i)(://)|(www)\.")
# a heading, list item or setext underline where the text starts a line
_BLOCK_START = re.compile(r"^(?:#{1,6}|[=+-]|\d{1,9}(?=[.)]))(?=[.)]? |[.)]?$)")


def _one_line(text: object) -> str:
    return " ".join(_INVISIBLE.sub("", str(text)).split())


def md_text(text: object) -> str:
    """Running text from a trace, results or baseline file, made inert: it shows as the
    characters it holds and never as a link, image, mention, reference, HTML, heading,
    list or table break."""
    s = _MARKUP.sub(r"\\\1", _one_line(text))
    s = _UNDERSCORE.sub(r"\\_", s)
    s = _AUTOLINK.sub(lambda m: "\\://" if m.group(1) else m.group(2) + "\\.", s)
    s = _MENTION.sub(lambda m: m.group(1) + ZWSP, s)
    s = _GH_REF.sub(lambda m: m.group(1) + ZWSP, s)
    m = _BLOCK_START.match(s)
    if m:  # escape the marker's punctuation: ``\#``, ``\-``, ``1\.``
        s = (s[:m.end()] + "\\" + s[m.end():]) if m.group().isdigit() else "\\" + s
    return s


def md_code(text: object) -> str:
    """A code span: shown verbatim, nothing inside it is parsed; backticks inside are
    fenced by a longer run."""
    s = _one_line(text)
    if not s:
        return "` `"
    if "`" not in s:
        return f"`{s}`"
    fence = "`" * (_longest_tick_run(s) + 1)
    return f"{fence} {s} {fence}"


def linktext(text: object) -> str:
    """The text of a link (brackets are escaped by :func:`md_text`)."""
    return md_text(text)


def marker(suite: str) -> str:
    """The suite name as it can stand in the hidden ``<!-- agent-eval:… -->`` marker."""
    return _one_line(suite).replace(">", "&gt;")


def cell(text: object) -> str:
    """A code span inside a GitHub table cell (``|`` splits cells even inside one)."""
    return md_code(str(text).replace("|", "\\|"))


def _longest_tick_run(s: str) -> int:
    best = cur = 0
    for ch in s:
        cur = cur + 1 if ch == "`" else 0
        best = max(best, cur)
    return best


def _value(v: Finding) -> str:
    if v.value is None and v.argument is not None:
        return "(missing)"
    try:
        text = orjson.dumps(v.value).decode()
    except TypeError:
        text = repr(v.value)
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


# ------------------------------------------------------------------ view model
@dataclass(frozen=True)
class Item:
    """One violation as the template shows it."""

    severity: str
    what: str  # markdown (already escaped)
    policy: str  # the policy's file:line (raw text)
    url: str | None  # the policy line on GitHub, when known
    trace: str | None  # markdown (already escaped)
    ref: int = 0  # number of the reference link to ``url`` (set when cut)


class _Items(Sequence[Item]):
    """A group's items, each made when first read: a summary shows a few hundred of
    them at most, and a run may have tens of thousands of findings."""

    def __init__(self, make: Callable[[Finding], Item], found: list[Finding]) -> None:
        self._make = make
        self._found = found
        self._made: list[Item] = []

    def __len__(self) -> int:
        return len(self._found)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._found)))]
        if index < 0:
            index += len(self._found)
        if not 0 <= index < len(self._found):
            raise IndexError(index)
        while len(self._made) <= index:
            self._made.append(self._make(self._found[len(self._made)]))
        return self._made[index]


@dataclass
class Group:
    rule: str
    icon: str
    count: int  # all findings of the rule (and severity), shown or not
    items: Sequence[Item] = field(default_factory=list)
    # "" (no baseline), "new" (new violations), "new_notes" (new notes) or "unchanged"
    # (against the baseline; the last two are shown in <details>)
    section: str = ""


@dataclass
class Metric:
    name: str
    head: int
    base: int | None = None

    @property
    def delta(self) -> str:
        if self.base is None:
            return ""
        d = self.head - self.base
        if d > 0:
            return f"▲ +{d}"
        if d < 0:
            return f"▼ −{-d}"
        return "="


def base_counts(results: Results) -> dict[str, int] | None:
    """The base run's numbers of the metrics table (None: not compared)."""
    b = results.baseline
    return b.summary_counts() if isinstance(b, Comparison) else None


NOTHING_BLOCKING = ("Nothing in this suite can fail the run: no test has severity error, "
                    "every scenario is advisory (gate: warn) and no blocking criterion is set.")
# ... when some scenario is not advisory but takes any share of failed traces
NOTHING_BLOCKING_BUT_MISSING = (
    "Nothing in this suite can fail the run but a missing trace: no test has severity "
    "error, every scenario is advisory (gate: warn) or accepts any share of failed traces "
    "(min_pass_ratio: 0), and no blocking criterion is set; a scenario with "
    "min_pass_ratio: 0 still fails the run when no trace of it is found (or a judge check "
    "of its traces could not be made).")


def nothing_blocking(results: Results) -> str | None:
    """The note of a suite in which no failed trace can fail the run (None: some can)."""
    if blocking_checks(results):
        return None
    return NOTHING_BLOCKING_BUT_MISSING if missing_trace_only(results) else NOTHING_BLOCKING


@dataclass(frozen=True)
class Tally:
    """What the Markdown summary and the HTML report count over the rule tests' findings,
    from one walk over them (they may be on disk: every walk reads them again)."""

    failing: tuple[int, ...]  # per test: the traces with an error-severity finding of it
    traces_failing: int  # the traces with an error-severity finding of any test
    tests_by_severity: dict[str, set[str]]  # severity -> the tests with findings of it
    by_severity: dict[str, int]  # severity -> how many findings


def tally(results: Results) -> Tally:
    """:class:`Tally` of ``results``: ``failing_traces`` of each test's findings and of
    them all, and the findings of each severity, in one walk."""
    out: list[Tally] = []
    for _ in tallied(results, out):
        pass
    return out[0]


def tallied(results: Results, out: list[Tally]) -> Iterator[Finding]:
    """``results.findings``, in order, with the rule tests' findings tallied on the way
    (the :class:`Tally` appended to ``out`` once they are walked): one walk for both,
    where the findings may be on disk."""
    own = type(results).findings is Results.findings  # tests, scenarios, criteria, rest
    every: set[tuple[str, str]] = set()
    failing = []
    tests_by_severity: dict[str, set[str]] = {}
    by_severity: dict[str, int] = {}
    for t in results.tests:
        mine: set[tuple[str, str]] = set()
        for v in t.violations:
            severity = v.severity
            if severity in by_severity:
                by_severity[severity] += 1
                tests_by_severity[severity].add(t.id)
            else:
                by_severity[severity] = 1
                tests_by_severity[severity] = {t.id}
            if severity == "error" and v.trace is not None:
                mine.add((v.trace.file, v.trace.trace_id))
            if own:
                yield v
        failing.append(len(mine))
        every |= mine
    out.append(Tally(tuple(failing), len(every), tests_by_severity, by_severity))
    if own:
        yield from chain(results.scenario_findings, results.criteria_findings,
                         results.unexercised)
    else:  # a kind of results that lists findings of its own: walked apart
        yield from results.findings


def _reason(results: Results, counted: Tally) -> str:
    errors = results.input_errors
    if errors:
        first = md_text(str(errors[0]))
        if len(errors) == 1:
            return f"1 input error: {first}"
        return f"{len(errors)} input errors, the first: {first}"
    unchecked = [t.id for t in results.tests if t.status == "error"]
    if results.verdict == "error" and unchecked:
        return f"{_plural(len(unchecked), 'test')} could not be checked"
    by_sev, counts = counted.tests_by_severity, counted.by_severity
    failed = [s for s in results.scenarios if s.status in ("fail", "error")]
    blocking = [s for s in failed if not tolerated(s, results.criteria)]
    crit = [c for c in results.criteria if c.status == "fail"]
    parts = []
    for sev in ("error", "warning") if results.verdict != "pass" else ():
        if sev in counts:
            parts.append(f"{_plural(counts[sev], sev + '-severity violation')} in "
                         f"{_plural(len(by_sev[sev]), 'test')}")
    if blocking:
        parts.append(f"{_plural(len(blocking), 'scenario')} failed")
    if len(failed) > len(blocking):
        parts.append(f"{_plural(len(failed) - len(blocking), 'failed scenario')} "
                     "tolerated")
    if crit:
        parts.append(f"{_plural(len(crit), 'criterion', 'criteria')} missed")
    # coverage/unexercised made to count (``unexercised: error|warning``,
    # --strict-coverage): without them a run failed by them read "No violations in …";
    # named by their kind, as the console counts them: the scenario/unknown_id warnings
    # (traces naming a scenario the suite does not have) are among them too
    for sev in ("error", "warning") if results.verdict != "pass" else ():
        kinds: dict[str, int] = {}
        for f in results.unexercised:
            if f.severity == sev:  # (fixed words: the HTML report shows them as text)
                kind = f.rule.split("/", 1)[0]
                kind = kind if kind in ("coverage", "scenario") else "other"
                kinds[kind] = kinds.get(kind, 0) + 1
        for kind, n in sorted(kinds.items()):
            parts.append(_plural(n, f"{sev}-severity {kind} finding"))
    if parts:
        return "; ".join(parts)
    if results.verdict == "warn":
        return "warnings only"
    c = results.counts
    notes = f", {_plural(counts['note'], 'note')}" if counts.get("note") else ""
    return (f"No violations in {_plural(c.get('traces', 0), 'trace')} "
            f"({_plural(c.get('tool_calls', 0), 'tool call')}){notes}")


def _what(v: Finding) -> str:
    if v.argument is not None and v.tool is not None:
        violation = md_text(v.details.get("violation") or v.message)
        constraint = f" ({md_code(v.constraint)})" if v.constraint else ""
        return (f"{md_code(v.tool)} · {md_code(v.argument)} = {md_code(_value(v))} — "
                f"{violation}{constraint}")
    return md_text(v.message)


def _groups(results: Results, ctx: RenderContext, unchanged: set[str] | None = None,
            findings: Iterable[Finding] | None = None) -> list[Group]:
    """Every finding (rule tests, scenarios, criteria and any other kind) grouped by
    (severity, rule): most severe first, then larger groups. With ``unchanged``
    (fingerprints of the findings the base run had too), the new violations first, then
    the new notes, then the unchanged findings."""
    by_rule: dict[tuple[str, str, str], list[Finding]] = {}
    for v in results.findings if findings is None else findings:
        section = ""
        if unchanged is not None:
            section = ("unchanged" if v.fingerprint in unchanged
                       else "new" if v.severity in ("error", "warning") else "new_notes")
        by_rule.setdefault((section, v.severity, v.rule), []).append(v)
    order = {"": 0, "new": 0, "new_notes": 1, "unchanged": 2}
    ordered = sorted(by_rule.items(), key=lambda kv: (
        order[kv[0][0]], severity_rank(kv[0][1]), -len(kv[1]), kv[0][2]))
    blob = (f"{ctx.repo_url.rstrip('/')}/blob/{ctx.sha}/"
            if ctx.repo_url and ctx.sha else None)

    def item(v: Finding) -> Item:
        url = policy_url(blob, v.config.file, v.config.line)
        trace = None
        if v.trace is not None:
            at = f"{v.trace.file}:{v.trace.line}"
            trace = f"{md_code(v.trace.trace_id)} at {md_code(at)}"
        return Item(v.severity, _what(v), _policy(v), url, trace)

    return [Group(rule, SEVERITY_ICON.get(severity, "•"), len(found), _Items(item, found),
                  section) for (section, severity, rule), found in ordered]


def policy_url(blob: str | None, file: str, line: int) -> str | None:
    """The link to a policy line on GitHub (``blob`` is ``REPO/blob/SHA/``), or None:
    without a repository and commit, and for a path that is not a plain repository-relative
    one. A results file's locations may say anything (``report``, ``merge``): with a ``..``
    segment the link climbed out of the repository (``REPO/blob/SHA/../../../../evil/x``
    is ``https://github.com/evil/x`` once a browser resolves it); such a location is shown
    as plain ``file:line``."""
    if blob is None or not file or file.startswith(("/", "\\")):
        return None
    if any(part in ("", ".", "..") for part in re.split(r"[/\\]", file)):
        return None
    return f"{blob}{quote(file, safe='/')}#L{line}"


ITEM_LEAST = len("\n  - policy ")  # literal text of summary.md.j2 per finding shown


def _policy(v: Finding) -> str:
    return f"{v.config.file}:{v.config.line}"


def _kept_first(groups: list[Group]) -> list[int]:
    """The groups' indexes in the order a cut keeps their findings: the new violations
    (all findings when there is no baseline), then the others by severity (an unchanged
    error before a new note: the base branch had it, it still fails the run), each in
    group order. Shown in group order all the same."""
    return sorted(range(len(groups)), key=lambda n: (
        groups[n].section not in ("", "new"), severity_rank(groups[n].items[0].severity)
        if groups[n].items else 9, n))


def _cut(groups: list[Group], keep: int) -> tuple[list[Group], list[tuple[int, str]]]:
    """``keep`` violations (those of :func:`_kept_first`'s order, shown in group order),
    with their reference-link numbers (1, 2, … in order of first use), and the links."""
    taken = [0] * len(groups)
    left = keep
    for n in _kept_first(groups):
        if left <= 0:
            break
        taken[n] = min(len(groups[n].items), left)
        left -= taken[n]
    out: list[Group] = []
    refs: dict[str, int] = {}
    for g, k in zip(groups, taken, strict=True):
        if not k:
            continue
        items = []
        for item in g.items[:k]:
            if item.url is not None:
                item = replace(item, ref=refs.setdefault(item.url, len(refs) + 1))
            items.append(item)
        out.append(Group(g.rule, g.icon, g.count, items, g.section))
    return out, [(n, url) for url, n in refs.items()]


def _test_rows(results: Results, counted: Tally) -> list[dict[str, Any]]:
    rows = []
    for t, failing in zip(results.tests, counted.failing, strict=True):
        rows.append({"id": t.id, "metric": t.metric, "icon": ICON.get(t.status, ""),
                     "status": t.status.replace("_", " "), "violations": len(t.violations),
                     "failing": failing, "checked": t.traces_checked})
    return rows


def _scenario_rows(results: Results) -> list[dict[str, Any]]:
    rows = []
    for s in results.scenarios:
        rows.append({"id": s.id, "icon": ICON.get(s.status, ""), "status": s.status,
                     "category": s.category or "", "required": s.required,
                     "traces": f"{s.traces_passed} / {s.traces_total}",
                     "score": "" if s.score is None else f"{float(s.score):.1f}",
                     "findings": len(s.findings)})
    return rows


def _number(x: object) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return "—" if x is None else str(x)
    if isinstance(x, int):
        return str(x)
    return f"{x:.4f}".rstrip("0").rstrip(".") or "0"


def _suite_metric_rows(results: Results) -> list[dict[str, str]]:
    """The suite metrics (docs/scenarios.md; ``results.metrics``), with base and Δ
    when compared."""
    compared = results.baseline
    base = compared.metrics if isinstance(compared, Comparison) else {}
    rows = []
    for k, v in results.metrics.items():
        b = base.get(k)
        rows.append({"name": str(k), "value": _number(v), "base": _number(b),
                     "delta": arrow(str(k), v, b)})
    return rows


LOWER_IS_BETTER = {"violations", "input errors", "traces failing", "latency_p95_ms",
                   "token_efficiency"}


def arrow(name: str, head: Any, base: Any) -> str:
    """``▲ +0.1 ✅`` / ``▼ −2 ⚠️``: the change, and whether it is for the better."""
    if isinstance(head, bool) or isinstance(base, bool):
        return ""
    if not isinstance(head, int | float) or not isinstance(base, int | float):
        return ""
    d = head - base
    if abs(d) < 1e-9:
        return "="
    better = (d < 0) if name in LOWER_IS_BETTER else (d > 0)
    mark = " ✅" if better else " 🔻"
    text = f"▲ +{_number(d)}" if d > 0 else f"▼ −{_number(-d)}"
    return text + mark


def no_base(results: Results) -> str | None:
    """Why the run was not compared with a base run, when one was looked for."""
    b = results.baseline
    return b.reason if isinstance(b, NoBaseline) else None


def _change(b: Comparison, head_version: str | None) -> dict[str, Any]:
    """What changed against the base run, for the template."""

    def row(s: ScenarioChange) -> dict[str, str]:
        return {"id": s.id, "base": str(s.base_status or "—"),
                "head": str(s.head_status or "—"),
                "score": f"{_number(s.base_score)} → {_number(s.head_score)}"}

    source = b.source
    where = source.get("description") or source.get("path") or source.get("kind") or ""
    return {
        "source": str(where),
        "policy": b.policy.message if b.policy.changed else None,
        # a baseline file the pull request changed (baseline/__init__.py file_at_base)
        "source_warning": str(source.get("warning") or "") or None,
        "versions": b.versions_differ(head_version),
        "regressions": [row(s) for s in b.scenarios if s.change == "regression"],
        "fixes": [row(s) for s in b.scenarios if s.change == "fix"],
        "removed": [{"id": s.id, "base": str(s.base_status or "—"),
                     "score": _number(s.base_score)} for s in b.removed],
        "scenario_changes": [row(s) for s in b.scenarios
                             if s.change in ("added", "removed", "changed")],
        "new": b.new_violations,
        "absent": [{"rule": f.rule, "message": f.message}
                   for f in b.absent[:20] if f.severity in ("error", "warning")],
        "absent_total": b.absent_violations,
        "unchanged_fps": list(b.unchanged),
        "base_scores": {s.id: {
            "base_status": s.base_status,
            "score_text": f"{_number(s.base_score)} → {_number(s.head_score)}"
            if s.base_score is not None else ""} for s in b.scenarios},
    }


def _criteria_rows(results: Results) -> list[dict[str, str]]:
    icons = {**ICON, "skip": "⏭️"}
    return [{"name": c.name, "kind": c.kind, "icon": icons.get(c.status, ""),
             "status": c.status, "threshold": _number(c.threshold),
             "value": _number(c.value), "message": c.message}
            for c in results.criteria]


def _judge(results: Results) -> dict[str, Any]:
    """The judge section (renderers/_judge.py)."""
    line = j.summary_line(results)
    if line is None:
        return {"judge_line": None, "judge_verdicts": [], "judge_more": 0,
                "judge_store_warning": None}
    shown, total = j.verdicts(results)
    return {"judge_line": line, "judge_verdicts": shown, "judge_more": total - len(shown),
            "judge_store_warning": j.store_warning(results)}


@cache
def _template() -> jinja2.Template:
    env = environment(autoescape=False)
    env.filters["md"] = md_text
    env.filters["code"] = md_code
    env.filters["cell"] = cell
    env.filters["linktext"] = linktext
    return env.get_template("summary.md.j2")


def render(results: Results, ctx: RenderContext | None = None,
           max_chars: int = MAX_CHARS) -> str:
    ctx = ctx or RenderContext()
    change = (_change(results.baseline, results.tool_version)
              if isinstance(results.baseline, Comparison) else None)
    tallies: list[Tally] = []  # one walk over the findings groups and counts them
    groups = _groups(results, ctx, None if change is None else set(change["unchanged_fps"]),
                     tallied(results, tallies))
    counted = tallies[0]
    head = results.summary_counts(counted.traces_failing)
    base = base_counts(results)
    rows = [Metric(name, value, None if base is None else base.get(name))
            for name, value in head.items()]
    total = sum(g.count for g in groups)
    # one count for the headline and the section: the new error / warning findings
    new_total = sum(g.count for g in groups if g.section == "new")
    new_notes = sum(g.count for g in groups if g.section == "new_notes")
    tests = _test_rows(results, counted)
    fixed: dict[str, Any] = {
        "suite": results.suite,
        "marker": marker(results.suite),
        "verdict": results.verdict,
        "icon": ICON.get(results.verdict, ""),
        "reason": _reason(results, counted),
        "metrics": rows,
        "has_base": base is not None,
        "change": change,
        "no_base": no_base(results),
        "new_total": new_total,
        "new_notes": new_notes,
        "nothing_blocking": nothing_blocking(results),
        "partial": partial_note(results),
        "input_errors": results.input_errors[:MAX_INPUT_ERRORS],
        "input_errors_more": max(0, len(results.input_errors) - MAX_INPUT_ERRORS),
        "suite_metrics": _suite_metric_rows(results),
        "criteria": _criteria_rows(results),
        "details_over": DETAILS_OVER,
        "version": results.tool_version or __version__,
        "run_url": ctx.run_url,
        **_judge(results),
    }
    scenarios = _scenario_rows(results)
    template = _template()

    def page(keep: int, keep_tests: int, keep_scenarios: int) -> str:
        shown, links = _cut(groups, keep)
        return template.render(
            **fixed, groups=shown, links=links, total=total, hidden=total - keep,
            tests=tests[:keep_tests], tests_hidden=len(tests) - keep_tests,
            scenarios=scenarios[:keep_scenarios],
            scenarios_hidden=len(scenarios) - keep_scenarios)

    # the whole page is rendered only when it may fit: each finding shown adds at least
    # the template's own "\n  - policy " to it (tens of thousands of findings never fit)
    if ITEM_LEAST * total <= max_chars:
        text = page(total, len(tests), len(scenarios))
        if len(text) <= max_chars:
            return text
    # a table too long even without findings is cut from its end: the scenarios' first
    # (each failed scenario is a finding above), then the tests'
    keep_tests, keep_scen = len(tests), len(scenarios)
    if len(page(0, keep_tests, keep_scen)) > max_chars:
        keep_scen = _largest(lambda n: len(page(0, keep_tests, n)) <= max_chars, keep_scen)
        if keep_scen == 0 and len(page(0, keep_tests, 0)) > max_chars:
            keep_tests = _largest(lambda n: len(page(0, n, 0)) <= max_chars, keep_tests)
    # an upper bound first: each shown violation costs at least its own text
    upper, used = 0, len(page(0, keep_tests, keep_scen))
    for g in (groups[n] for n in _kept_first(groups)):
        for item in g.items:
            used += len(item.what) + len(item.policy)
            if used > max_chars:
                break
            upper += 1
        else:
            continue
        break
    keep = _largest(lambda n: len(page(n, keep_tests, keep_scen)) <= max_chars, upper)
    return _hard_cut(page(keep, keep_tests, keep_scen), max_chars)


_FENCE = re.compile(r"^ {0,3}```", re.M)  # a line that opens or closes a code block
CUT_NOTE = ("\n\n**Cut:** this summary is limited to {:,} characters — see the job summary "
            "/ results.json artifact.\n")


def _hard_cut(text: str, max_chars: int) -> str:
    """``text``, or, when what is left without findings, tests and scenarios is still
    too long (thousands of regressions, criteria or suite metrics), its first lines and
    a note that says so: GitHub refuses a longer comment or check run summary."""
    if len(text) <= max_chars:
        return text
    note = CUT_NOTE.format(max_chars)
    closers = ""
    for _ in range(2):  # a shorter head may close fewer blocks: cut again to fit them
        head = text[:max(0, max_chars - len(note) - len(closers))]
        head = head[:head.rfind("\n") + 1].rstrip("\n")
        closers = _closers(head)
    return head + closers + note


def _closers(head: str) -> str:
    """What closes the blocks a cut left open in ``head``: a code fence, then each
    ``<details>`` (else the note after it would be folded away, or shown as code). A
    fence is a line that starts with three backticks: those inside a line are a code
    span's (``cell`` of a name holding a backtick run), and counted they opened a
    code block that showed the note as code."""
    out = "\n```" if len(_FENCE.findall(head)) % 2 else ""
    return out + "\n\n</details>" * max(0, head.count("<details>") - head.count("</details>"))


def _largest(fits: Callable[[int], bool], upper: int) -> int:
    """The largest n in [0, upper] with fits(n) (fits is monotone, fits(0) assumed)."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
