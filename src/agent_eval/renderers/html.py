"""HTML (docs/outputs.md "HTML"): one self-contained report file, ``report.html``.

The page comes from ``templates/report.html.j2`` (jinja2, autoescape on: every value is
escaped by the template) with its stylesheet and script inlined from ``templates/report.css``
and ``templates/report.js``. Nothing is fetched: no external stylesheet, script, font or
image, and a Content-Security-Policy ``<meta>`` forbids it anyway. The only absolute URLs
are plain links to the repository (the policy lines at the head commit) and the workflow
run, when the :class:`RenderContext` knows them.

It shows the verdict with its reason (the same reason as the Markdown summary), the suite
metrics (the Markdown summary's numbers plus ``results.metrics``; with a baseline, base and
head side by side with bars and Δ), the criteria, the input errors, a findings table, the
per-test table and the scenarios table (sortable by clicking a column header, filtered by a
text box and a severity / status select: vanilla JS that only reorders and hides rows), and,
for each violation, the policy snippet around the violated line (±3 lines) and the trace
snippet around the call (±2 lines, long lines shortened), read through ``ctx.read``.

The output is a pure function of the results and the context (no timestamps). Its size is
bounded: at most :data:`MAX_ROWS` rows per table (most severe findings first) with a row
saying how many more are in results.json, and at most :data:`MAX_DETAILS` violations with
snippets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import orjson
from markupsafe import Markup, escape

from agent_eval._version import __version__
from agent_eval.findings import SEVERITIES, Finding, severity_rank
from agent_eval.renderers import markdown
from agent_eval.renderers._templates import environment
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results, partial_note
from agent_eval.safetext import clean_text
from agent_eval.sections import Comparison

if TYPE_CHECKING:
    import jinja2

MAX_ROWS = 5_000  # per table
MAX_DETAILS = 500  # violations shown with their snippets
MAX_INPUT_ERRORS = 200
POLICY_CONTEXT = 3  # lines either side of the violated policy line
TRACE_CONTEXT = 2  # lines either side of the trace line
LINE_CHARS = 300  # longer snippet lines are shortened to this many characters + "…"
DETAIL_VALUE_CHARS = 300

STATUSES = ("pass", "not_exercised", "warn", "fail", "error")
# metrics where a rise is bad (Δ shown as worse / better)
LOWER_IS_BETTER = frozenset({"violations", "input errors", "traces failing"})


# ------------------------------------------------------------------ view model
@dataclass(frozen=True)
class Line:
    number: int
    text: str
    hit: bool


@dataclass(frozen=True)
class Snippet:
    """Lines of a repository file around ``line``; ``lines`` is None when the file cannot
    be read (or is shorter than ``line``)."""

    file: str
    line: int
    url: str | None
    lines: tuple[Line, ...] | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def width(self) -> int:  # characters of the widest line number
        return len(str(self.lines[-1].number)) if self.lines else 1


@dataclass(frozen=True)
class MetricRow:
    name: str
    head: str
    base: str | None
    delta: str
    trend: str  # "worse", "better" or "" (no colour)
    head_pct: str | None  # bar widths, e.g. "62.5%"; None: no bars for this row
    base_pct: str | None


@dataclass(frozen=True)
class Detail:
    n: int
    rule: str
    severity: str
    message: str
    facts: tuple[tuple[str, str], ...]  # (label, text), only those present
    related: tuple[str, ...]
    policy: Snippet
    trace: Snippet | None


# ------------------------------------------------------------------ helpers
def _number(x: object) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return _short(x, 80)
    if isinstance(x, int):
        return str(x)
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _is_number(x: object) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _short(x: object, limit: int) -> str:
    if isinstance(x, str):
        text = x
    else:
        try:
            text = orjson.dumps(x, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:
            text = repr(x)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _value(v: Finding, limit: int = markdown.VALUE_CHARS) -> str:
    """The argument's value as JSON, shortened ("" when the finding has none)."""
    if v.argument is None and v.value is None:
        return ""
    if v.value is None:
        return "(missing)"
    try:
        text = orjson.dumps(v.value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        text = repr(v.value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def reason(results: Results, counted: markdown.Tally) -> str:
    """The verdict's one-line reason, as plain text (the Markdown summary's reason)."""
    errors = results.input_errors
    if errors:
        if len(errors) == 1:
            return f"1 input error: {errors[0]}"
        return f"{len(errors)} input errors, the first: {errors[0]}"
    # without input errors the Markdown reason holds only counts and fixed words
    return markdown._reason(results, counted)


def _breaks(html: str) -> str:
    """Escaped text whose line breaks are character references: the same page, and no
    text of a trace or a results file starts a line of the file (printed to a CI log by
    ``report -f html``, a line ``::error::…`` would be a workflow command)."""
    if "\n" not in html and "\r" not in html:
        return html
    return html.replace("\r", "&#13;").replace("\n", "&#10;")


def text(value: object) -> Markup:
    """Escape for element content (never an attribute): ``&``, ``<`` and ``>`` only, so
    the JSON of trace lines does not turn every quote into ``&#34;``."""
    s = str(value)
    return Markup(_breaks(s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")))


def _finalize(value: Any) -> Any:
    """A value of the template, escaped as autoescape would, its line breaks as
    :func:`_breaks` writes them (what the renderer made, Markup, is left as it is)."""
    if type(value) is str and ("\n" in value or "\r" in value):
        return Markup(_breaks(escape(value)))
    return value


def _blob(ctx: RenderContext) -> str | None:
    if ctx.repo_url and ctx.sha:
        return f"{ctx.repo_url.rstrip('/')}/blob/{quote(ctx.sha, safe='/')}/"
    return None


def _lines(text: str) -> list[str]:
    """A file's lines (``\\n`` or ``\\r\\n`` ends), without the last empty one."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    if "\r" not in text:
        return parts
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _snippets(ctx: RenderContext, wanted: list[tuple[str, int, int, str | None]]
              ) -> list[Snippet]:
    """The snippet of each (path, line, context, url): each file read through
    ``ctx.read`` once, and its lines let go before the next file is read (the trace
    files of a large run are many megabytes each)."""
    by_file: dict[str, list[int]] = {}
    for n, (path, _, _, _) in enumerate(wanted):
        by_file.setdefault(path, []).append(n)
    out: list[Snippet | None] = [None] * len(wanted)
    for path, numbers in by_file.items():
        text = ctx.read(path)
        lines = None if text is None else _lines(text)
        del text
        for n in numbers:
            _, line, context, url = wanted[n]
            if lines is None or not 1 <= line <= len(lines):
                out[n] = Snippet(path, line, url, None)
                continue
            first, last = max(1, line - context), min(len(lines), line + context)
            out[n] = Snippet(path, line, url, tuple(
                Line(k, shorten(lines[k - 1]), k == line) for k in range(first, last + 1)))
    return [s for s in out if s is not None]


def shorten(text: str, limit: int = LINE_CHARS) -> str:
    """A snippet line: at most ``limit`` characters of it, then "…" when cut, its
    control characters written ``\\xNN`` (a trace line may hold raw C1 characters)."""
    return clean_text(text if len(text) <= limit else text[:limit] + "…")


# ------------------------------------------------------------------ sections
def _metric_rows(results: Results, counted: markdown.Tally) -> list[MetricRow]:
    head: dict[str, Any] = dict(results.summary_counts(counted.traces_failing))
    base: dict[str, Any] | None = None
    got = markdown.base_counts(results)
    if got is not None:
        base = dict(got)
    extra = results.metrics
    compared = results.baseline
    base_extra = compared.metrics if isinstance(compared, Comparison) else {}
    for key, value in extra.items():
        head[str(key)] = value
    if base is not None:
        for key, value in base_extra.items():
            base[str(key)] = value
        for key in sorted(str(k) for k in base_extra if str(k) not in head):
            head[key] = None  # a metric only the base run has
    rows = []
    for name, h in head.items():
        b = None if base is None else base.get(name)
        rows.append(_metric_row(name, h, b, base is not None))
    return rows


def _has_base(results: Results) -> bool:
    return isinstance(results.baseline, Comparison)


def _metric_row(name: str, head: Any, base: Any, has_base: bool) -> MetricRow:
    head_text = "—" if head is None else _number(head)
    base_text = ("—" if base is None else _number(base)) if has_base else None
    delta, trend, head_pct, base_pct = "", "", None, None
    if has_base and _is_number(head) and _is_number(base):
        d = head - base
        if d > 0:
            delta = f"▲ +{_number(d)}"
        elif d < 0:
            delta = f"▼ −{_number(-d)}"
        else:
            delta = "="
        if d and name in LOWER_IS_BETTER:
            trend = "worse" if d > 0 else "better"
        unit = isinstance(head, float) or isinstance(base, float)
        scale = 1.0 if unit and 0 <= head <= 1 and 0 <= base <= 1 else max(abs(head), abs(base))
        head_pct = _pct(abs(head), scale)
        base_pct = _pct(abs(base), scale)
    return MetricRow(name, head_text, base_text, delta, trend, head_pct, base_pct)


def _pct(x: float, scale: float) -> str:
    return "0%" if not scale else f"{min(100.0, 100.0 * x / scale):.1f}%"


def _most_severe(findings: Iterable[Finding], limit: int
                 ) -> tuple[list[Finding], int, set[str]]:
    """The first ``limit`` of ``by_severity(findings)``, how many findings there are and
    their severities: one walk over the findings, holding at most ``limit`` of each
    severity (no sort of them all)."""
    kept: dict[int, list[Finding]] = {}
    present: set[str] = set()
    total = 0
    for v in findings:
        total += 1
        present.add(v.severity)
        bucket = kept.setdefault(severity_rank(v.severity), [])
        if len(bucket) < limit:
            bucket.append(v)
    shown = [v for rank in sorted(kept) for v in kept[rank]][:limit]
    return shown, total, present


def _finding_rows(found: list[Finding], blob: str | None) -> Markup:
    """The findings table's rows, made here rather than in the template (thousands of
    them): each value escaped with markupsafe's ``escape``, as autoescape does, the
    message with :func:`text`."""
    wrapped: dict[str, str] = {}

    def wrappable(path: str) -> str:
        """A path that may break after each "/" (the same path made once)."""
        done = wrapped.get(path)
        if done is None:
            *dirs, name = path.split("/")
            done = wrapped[path] = "".join(
                [f'<span class="nw">{esc(d)}/</span><wbr>' for d in dirs]
                + [f'<span class="nw">{esc(name)}</span>'])
        return done

    escaped: dict[str, str] = {}

    def esc(value: str) -> str:
        """``escape(value)``; a name repeated on many rows (rule, tool...) done once."""
        if type(value) is not str:
            return escape(value)
        done = escaped.get(value)
        if done is None:
            done = escaped[value] = _breaks(escape(value))
        return done

    def code(value: str) -> str:
        return f"<code>{esc(value)}</code>" if value else ""

    rows = []
    for n, v in enumerate(found, 1):
        c = v.config
        policy = wrappable(f"{c.file}:{c.line}")
        url = markdown.policy_url(blob, c.file, c.line)
        if url is not None:
            policy = f'<a href="{escape(url)}">{policy}</a>'

        trace = f"{v.trace.file}:{v.trace.line}" if v.trace is not None else ""
        sev, rule = esc(v.severity), esc(v.rule)
        number = f'<a href="#v{n}">{n}</a>' if n <= MAX_DETAILS else str(n)
        rows.append(
            f'<tr data-cat="{sev}">\n'
            f'<td class="num">{number}</td>\n'
            f'<td data-sort="{rule}"><code>{rule}</code><div class="msg">'
            f'{text(" ".join(v.message.split()))}</div></td>\n'
            f'<td data-sort="{severity_rank(v.severity)} {sev}"><span class="sev sev-{sev}">'
            f"{sev}</span></td>\n"
            f'<td class="tool">{code(v.tool or "")}</td>\n'
            f"<td>{code(v.argument or '')}</td>\n"
            f'<td class="value">{code(_value(v))}</td>\n'
            f"<td>{code(v.constraint or '')}</td>\n"
            f'<td class="loc">{policy}</td>\n'
            f'<td class="loc">{wrappable(trace)}</td>\n'
            "</tr>")
    return Markup("\n".join(rows))


def _details(found: list[Finding], ctx: RenderContext, blob: str | None) -> list[Detail]:
    wanted: list[tuple[str, int, int, str | None]] = []  # the snippets, two per finding
    facts_of = []
    for v in found:
        url = markdown.policy_url(blob, v.config.file, v.config.line)
        facts: list[tuple[str, str]] = [("test", v.test)]
        for label, value in (("tool", v.tool), ("argument", v.argument)):
            if value is not None:
                facts.append((label, value))
        if v.argument is not None or v.value is not None:
            facts.append(("value", _value(v, DETAIL_VALUE_CHARS)))
        if v.constraint:
            facts.append(("constraint", v.constraint))
        for key in ("expected", "actual"):
            if v.details.get(key) is not None:
                facts.append((key, _short(v.details[key], DETAIL_VALUE_CHARS)))
        if v.trace is not None:
            facts.append(("trace id", v.trace.trace_id))
        if v.scenario:
            facts.append(("scenario", v.scenario))
        facts.append(("policy key", v.config.key_path))
        if v.fingerprint:
            facts.append(("fingerprint", v.fingerprint))
        facts_of.append(tuple(facts))
        wanted.append((v.config.file, v.config.line, POLICY_CONTEXT, url))
        if v.trace is not None:
            wanted.append((v.trace.file, v.trace.line, TRACE_CONTEXT, None))
    snippets = iter(_snippets(ctx, wanted))
    return [Detail(
        n=n, rule=v.rule, severity=v.severity, message=v.message, facts=facts,
        related=tuple(f"{r.file}:{r.line} ({r.trace_id})" for r in v.related),
        policy=next(snippets), trace=None if v.trace is None else next(snippets))
        for n, (v, facts) in enumerate(zip(found, facts_of, strict=True), 1)]


def _test_rows(results: Results, counted: markdown.Tally) -> list[dict[str, Any]]:
    rows = []
    for t, failing in zip(results.tests[:MAX_ROWS], counted.failing, strict=False):
        rows.append({"id": t.id, "metric": t.metric, "severity": t.severity,
                     "status": t.status, "violations": len(t.violations),
                     "failing": failing, "checked": t.traces_checked,
                     "calls": t.calls_checked, "duration_ms": t.duration_ms})
    return rows


def _scenario_rows(results: Results) -> list[dict[str, Any]]:
    compared = results.baseline
    base = {s.id: s for s in compared.scenarios} if isinstance(compared, Comparison) else {}
    rows = []
    for s in results.scenarios[:MAX_ROWS]:
        score: Any = s.score
        b = base.get(s.id)
        bscore: Any = None if b is None else b.base_score
        rows.append({"id": s.id, "status": s.status,
                     "score": "" if not _is_number(score) else f"{float(score):.1f}",
                     "findings": len(s.findings),
                     "base_status": str((b and b.base_status) or "—"),
                     "base_score": "" if not _is_number(bscore) else f"{float(bscore):.1f}",
                     "change": "" if b is None else b.change})
    return rows


def _comparison(results: Results) -> dict[str, Any] | None:
    """The comparison's headline numbers (None when the run was not compared)."""
    b = results.baseline
    if not isinstance(b, Comparison):
        return None
    source = b.source
    return {"source": str(source.get("description") or source.get("path")
                          or source.get("kind") or ""),
            "regressed": list(b.regressed), "fixed": list(b.fixed),
            "removed": [s.id for s in b.removed],
            "new": b.new_violations, "absent": b.absent_violations,
            "policy": b.policy.message if b.policy.changed else None,
            "versions": b.versions_differ(results.tool_version),
            # a baseline file the pull request changed (baseline/__init__.py file_at_base)
            "source_warning": str(source.get("warning") or "") or None}


def _criteria_rows(results: Results) -> list[dict[str, str]]:
    return [{"name": c.name, "kind": c.kind,
             "threshold": "" if c.threshold is None else _number(c.threshold),
             "value": "" if c.value is None else _number(c.value), "status": c.status}
            for c in results.criteria]


@cache
def _template() -> jinja2.Template:
    env = environment(autoescape=True, finalize=_finalize)
    env.filters["text"] = text
    return env.get_template("report.html.j2")


def render(results: Results, ctx: RenderContext | None = None) -> str:
    ctx = ctx or RenderContext()
    blob = _blob(ctx)
    # rule tests, scenarios, criteria, any other: the most severe first
    tallies: list[markdown.Tally] = []  # one walk over the findings picks and counts them
    shown, total, present = _most_severe(markdown.tallied(results, tallies), MAX_ROWS)
    counted = tallies[0]
    metric_rows = _metric_rows(results, counted)
    severities = [s for s in SEVERITIES if s in present]
    return _template().render(
        suite=results.suite,
        verdict=results.verdict,
        reason=reason(results, counted),
        nothing_blocking=markdown.nothing_blocking(results),
        partial=partial_note(results),
        config=results.config,
        sha=ctx.sha,
        has_base=_has_base(results),
        comparison=_comparison(results),
        no_base=markdown.no_base(results),
        metrics=metric_rows,
        has_bars=any(m.head_pct is not None for m in metric_rows),
        criteria=_criteria_rows(results),
        input_errors=results.input_errors[:MAX_INPUT_ERRORS],
        input_errors_more=max(0, len(results.input_errors) - MAX_INPUT_ERRORS),
        total=total,
        severities=severities or list(SEVERITIES[:1]),
        findings=len(shown),
        finding_rows=_finding_rows(shown, blob),
        findings_more=total - len(shown),
        details=_details(shown[:MAX_DETAILS], ctx, blob),
        details_more=max(0, total - MAX_DETAILS),
        tests=_test_rows(results, counted),
        tests_total=len(results.tests),
        tests_more=max(0, len(results.tests) - MAX_ROWS),
        scenarios=_scenario_rows(results),
        scenarios_total=len(results.scenarios),
        scenarios_more=max(0, len(results.scenarios) - MAX_ROWS),
        test_statuses=[s for s in STATUSES if any(t.status == s for t in results.tests)],
        scenario_statuses=sorted({s.status for s in results.scenarios},
                                 key=lambda s: (STATUSES.index(s) if s in STATUSES else 9, s)),
        version=results.tool_version or __version__,
        run_url=ctx.run_url,
        **markdown._judge(results),
    )
