"""results.sarif: SARIF 2.1.0 for GitHub code scanning (docs/outputs.md "SARIF 2.1.0").

Built from ``sarif-om`` objects. ``sarif-om`` has no serializer, so :func:`to_json` writes
one from the attrs metadata of its classes (each field's ``schema_property_name``),
leaving out fields that hold their default value. The output is deterministic: no
timestamps, a fixed key order, 2-space indentation.

One ``run`` per suite. The primary location of every result is the policy or config line
that was violated; the trace lines are ``relatedLocations``. GitHub's upload limits are
enforced here (module constants, so tests can lower them): over a limit the most severe
results are kept and a ``toolExecutionNotifications`` entry says what was dropped.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import queue
import re
import threading
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO
from urllib.parse import quote

import attr
import orjson
import sarif_om as om  # type: ignore[import-untyped]

from agent_eval import rules
from agent_eval._version import REPOSITORY
from agent_eval.errors import InputError
from agent_eval.findings import SEVERITIES, UNRANKED, Finding, TraceRef, severity_rank
from agent_eval.paths import repo_relative
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results
from agent_eval.sections import Comparison

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "agent-eval"
INFORMATION_URI = f"https://github.com/{REPOSITORY}"
RULE_DOC_URI = INFORMATION_URI + "/blob/main/src/agent_eval/rules/docs/{}.md"
SRCROOT = "%SRCROOT%"

# GitHub's limits for one SARIF upload (docs: "SARIF results exceed limits"). Read at
# render time, so a test may lower them with monkeypatch.
MAX_RESULTS = 25_000  # results per run
MAX_LOCATIONS_PER_RESULT = 1_000  # locations + relatedLocations of one result
MAX_GZIP_BYTES = 10_000_000  # the whole file, gzip-compressed (GitHub: 10 MB)

_LEVELS = (*SEVERITIES, "none")  # SARIF's levels, the most severe first
# The specification's property order (as in the official schema) for the objects written
# here; any other object keeps the object model's order.
_ORDER: dict[str, tuple[str, ...]] = {
    "SarifLog": ("$schema", "version", "runs", "properties"),
    "Run": ("tool", "invocations", "versionControlProvenance", "originalUriBaseIds",
            "artifacts", "results", "automationDetails", "baselineGuid", "columnKind",
            "properties"),
    "VersionControlDetails": ("repositoryUri", "revisionId", "branch", "revisionTag",
                              "asOfTimeUtc", "mappedTo", "properties"),
    "Tool": ("driver", "extensions", "properties"),
    "ToolComponent": ("guid", "name", "organization", "product", "shortDescription",
                      "fullDescription", "fullName", "version", "semanticVersion",
                      "informationUri", "rules", "properties"),
    "ReportingDescriptor": ("id", "guid", "name", "shortDescription", "fullDescription",
                            "messageStrings", "defaultConfiguration", "helpUri", "help",
                            "relationships", "properties"),
    "ReportingConfiguration": ("enabled", "level", "rank", "parameters", "properties"),
    "MultiformatMessageString": ("text", "markdown", "properties"),
    "Result": ("ruleId", "ruleIndex", "rule", "kind", "level", "message", "locations",
               "partialFingerprints", "fingerprints", "relatedLocations", "baselineState",
               "properties"),
    "Location": ("id", "physicalLocation", "logicalLocations", "message", "properties"),
    "PhysicalLocation": ("address", "artifactLocation", "region", "contextRegion",
                         "properties"),
    "ArtifactLocation": ("uri", "uriBaseId", "index", "description", "properties"),
    "Region": ("startLine", "startColumn", "endLine", "endColumn", "snippet", "message",
               "properties"),
    "Message": ("text", "markdown", "id", "arguments", "properties"),
    "Invocation": ("exitCode", "toolExecutionNotifications", "toolConfigurationNotifications",
                   "executionSuccessful", "properties"),
    "Notification": ("locations", "message", "level", "descriptor", "associatedRule",
                     "properties"),
    "RunAutomationDetails": ("description", "id", "guid", "correlationGuid", "properties"),
}
# Written even when equal to the schema default: a reader should not need to know that
# SARIF's default level is "warning".
_ALWAYS = frozenset({"level"})


# ------------------------------------------------------------------ serializer
_NO_DEFAULT = object()
_SCALARS = frozenset({str, int, float, bool})
_Plan = tuple[tuple[str, str, Any, bool], ...]
_PLANS: dict[type, _Plan] = {}


def _plan(cls: type) -> _Plan:
    """For a sarif-om class: (attribute, JSON name, default, always written) per field,
    in the specification's order."""
    if cls in _PLANS:
        return _PLANS[cls]
    order = _ORDER.get(cls.__name__, ())
    rank = {k: i for i, k in enumerate(order)}
    fields = []
    for f in attr.fields(cls):
        name = f.metadata["schema_property_name"]
        default: Any = f.default
        if default is attr.NOTHING:  # a required property
            default = _NO_DEFAULT
        elif getattr(default, "factory", None) is not None:  # attr.Factory(list) ...
            default = default.factory()
        fields.append((f.name, name, default, name in _ALWAYS))
    fields.sort(key=lambda f: rank.get(f[1], len(order)))  # stable: the rest keep theirs
    plan = _PLANS[cls] = tuple(fields)
    return plan


class _Json(dict[str, Any]):
    """A SARIF object already in its JSON form: :func:`to_json` passes it through."""


def to_json(obj: Any) -> Any:
    """Plain JSON data for a ``sarif-om`` object (recursively), default values left out.

    Lists, dicts (property bags, partialFingerprints) and scalars pass through, with
    their items converted."""
    kind = type(obj)
    if kind in _SCALARS or kind is _Json or obj is None:
        return obj
    plan = _PLANS.get(kind)
    if plan is None:
        if isinstance(obj, dict):
            return {str(k): to_json(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [to_json(v) for v in obj]
        if not attr.has(type(obj)):
            return obj
        plan = _plan(type(obj))
    out: dict[str, Any] = {}
    fields = vars(obj)  # sarif-om classes are attrs classes without slots
    for attribute, name, default, always in plan:
        value = fields[attribute]
        if value is None or (not always and value == default
                             and type(value) is type(default)):
            continue
        out[name] = value if type(value) in _SCALARS else to_json(value)
    return out


def dumps(log: Any) -> str:
    data = to_json(log)
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    except TypeError:  # e.g. an integer beyond 64 bits in a trace value
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------ rendering
def render(results: Results, ctx: RenderContext | None = None) -> str:
    buffer = io.BytesIO()
    write(results, ctx, buffer)
    return buffer.getvalue().decode("utf-8")


def write(results: Results, ctx: RenderContext | None, out: BinaryIO) -> None:
    """The bytes of :func:`render` to ``out`` (a seekable file): written as a stream,
    result by result, while gzip counts the size; should the file not fit GitHub's size
    limit, or not be orjson's to write, it is written again from the start by
    :func:`_build` (which looks for the largest number of results that fits)."""
    ctx = ctx or RenderContext()
    start = out.tell()
    if not _stream(_Prepared(results, ctx), out):
        out.seek(start)
        out.truncate()
        out.write(_build(results, ctx)[1].encode("utf-8"))


@dataclass
class _Item:
    """One result to be, with what the limits need to know about it: an input error's
    ``om.Result``, or a finding whose result is made when first written (a run may hold
    far more findings than a SARIF file keeps)."""

    result: Any  # om.Result, or the _Json of the finding's result once made
    level: str
    order: int
    finding: Finding | None = None


@dataclass
class _Dropped:
    results: dict[str, int] = field(default_factory=dict)  # by level
    for_size: int = 0  # of those, dropped for the gzip size limit
    locations: int = 0
    results_with_locations: int = 0


class _Sources:
    """Lines of the repository's files (for snippets and input-error fingerprints)."""

    def __init__(self, ctx: RenderContext) -> None:
        self._read = ctx.read
        self._cache: dict[str, list[str] | None] = {}

    def line(self, file: str, line: int) -> str | None:
        if file not in self._cache:
            text = self._read(file)
            self._cache[file] = None if text is None else text.splitlines()
        lines = self._cache[file]
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]


class _Prepared:
    """What every SARIF file of ``results`` shares, from one walk over the findings
    before any result is made: the rules that fired, how many results of each level
    there are (which ones GitHub's result limit keeps), the related locations over
    its limit, and the input errors' results."""

    def __init__(self, results: Results, ctx: RenderContext) -> None:
        self.results, self.ctx = results, ctx
        catalogue = rules.catalogue()
        self.findings = findings = results.findings  # rule violations, scenarios, criteria
        self.room = room = max(MAX_LOCATIONS_PER_RESULT - 1, 0)  # one location per result
        self.dropped = dropped = _Dropped()
        used: set[str] = set()
        self.levels: dict[str, int] = {}  # results per level
        self.unranked: list[str] = []  # the levels of no severity, in order
        levels = self.levels
        for v in findings:
            used.add(v.rule)
            level: str = v.severity
            if level in levels:
                levels[level] += 1
            else:
                levels[level] = 1
            if level not in SEVERITIES:  # severity_rank(level) == UNRANKED
                self.unranked.append(level)
            if len(v.related) >= room:  # counted now: the result may never be made
                related = (v.trace is not None) + len(v.related)
                if related > room:
                    dropped.locations += related - room
                    dropped.results_with_locations += 1
        used.update(e.rule for e in results.input_errors)
        # the rules that fired (as zizmor and semgrep do), in the catalogue's order: the
        # whole catalogue would be most of the file (GitHub reads each rule from its run)
        ids = [*(r for r in catalogue if r in used), *sorted(used - set(catalogue))]
        self.index = {rule_id: i for i, rule_id in enumerate(ids)}
        self.descriptors = [_descriptor(catalogue[r]) if r in catalogue
                            else _undocumented(r) for r in ids]
        self.sources = _Sources(ctx)
        self.compared = (results.baseline if isinstance(results.baseline, Comparison)
                         else None)
        seen: dict[str, int] = {}
        self.inputs: list[tuple[str, Any]] = []  # (level, om.Result) of each input error
        for e in results.input_errors:
            level = catalogue[e.rule].level if e.rule in catalogue else "error"
            made = _input_result(e, self.index, level, self.sources, seen, results.config)
            _cap_locations(made, dropped)
            self.inputs.append((level, made))
            self._count(level)

    def _count(self, level: str) -> None:
        self.levels[level] = self.levels.get(level, 0) + 1
        if severity_rank(level) == UNRANKED:
            self.unranked.append(level)

    @property
    def total(self) -> int:
        return sum(self.levels.values())

    def cut(self, keep: int) -> tuple[int, int, dict[str, int]]:
        """Which results the ``keep`` most severe are (the results sorted by severity,
        then by their order): all of a rank below the first, the first ``quota`` of
        that rank; and how many of each level are dropped."""
        by_rank: dict[int, int] = {}
        for level, n in self.levels.items():
            rank = severity_rank(level)
            by_rank[rank] = by_rank.get(rank, 0) + n
        first, quota = UNRANKED + 1, 0
        for rank in sorted(by_rank):
            if by_rank[rank] > keep:
                first, quota = rank, keep
                break
            keep -= by_rank[rank]
        lost = dict(self.dropped.results)
        for level, n in self.levels.items():
            rank = severity_rank(level)
            if rank == first == UNRANKED:
                continue
            if rank >= first:
                lost[level] = lost.get(level, 0) + (n - quota if rank == first else n)
        if first == UNRANKED:
            for level in self.unranked[quota:]:
                lost[level] = lost.get(level, 0) + 1
        return first, quota, lost

    def result(self, v: Finding) -> _Json:
        return _finding_result(v, self.index, self.sources, self.room, self.compared)

    def log(self, lost: dict[str, int], results: Any, for_size: int = 0) -> Any:
        """The ``om.SarifLog`` with these results (a list, or a placeholder)."""
        res, ctx, dropped = self.results, self.ctx, self.dropped
        vcs = None
        if ctx.repo_url:
            vcs = [om.VersionControlDetails(  # the repository's root is %SRCROOT%
                repository_uri=ctx.repo_url, revision_id=ctx.sha,
                mapped_to=om.ArtifactLocation(uri_base_id=SRCROOT))]
        run = om.Run(
            tool=om.Tool(driver=om.ToolComponent(
                name=TOOL_NAME, version=res.tool_version,
                semantic_version=res.tool_version,
                information_uri=INFORMATION_URI, rules=self.descriptors)),
            invocations=[_invocation(res, _Dropped(lost, for_size, dropped.locations,
                                                   dropped.results_with_locations))],
            version_control_provenance=vcs,
            results=results,
            automation_details=om.RunAutomationDetails(id=_category(res, ctx)),
            column_kind="unicodeCodePoints",
            properties={"suite": res.suite, "config": res.config,
                        "verdict": res.verdict, "counts": dict(res.counts)},
        )
        return om.SarifLog(version=SARIF_VERSION, schema_uri=SCHEMA_URI, runs=[run])


_RESULTS = "\x00results\x00"  # where the results go in the text of the log
_BATCH = 512  # results dumped, joined and written at a time


def _stream(run: _Prepared, out: BinaryIO) -> bool:
    """Write the log with the :data:`MAX_RESULTS` most severe results, one result at a
    time; False when it does not fit :data:`MAX_GZIP_BYTES` compressed, or a value is
    not orjson's to write (then what was written is to be thrown away)."""
    first, quota, lost = run.cut(min(run.total, MAX_RESULTS))
    dumps = orjson.dumps
    try:
        text = dumps(to_json(run.log(lost, _RESULTS)), option=orjson.OPT_INDENT_2)
    except TypeError:
        return False
    marker = dumps(_RESULTS)
    if text.count(marker) != 1:  # a value of the log is the marker itself (a hostile
        return False             # results file's rule id, say): the whole log at once
    head, tail = text.split(marker, 1)
    del text
    with _GzipSize() as gz:
        return _write_results(run, out, head, tail, first, quota, gz)


class _GzipSize:
    """The size of what ``gzip.compress(data, 6, mtime=0)`` makes of everything given
    to :meth:`add`, counted by a thread of its own: zlib lets go of the interpreter
    while it compresses, so the 40 MB of a large run are compressed on the second core
    while the results are made on the first."""

    def __init__(self) -> None:
        self._gz = zlib.compressobj(6, zlib.DEFLATED, 31)
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=8)
        self.size = 0  # so far (a lower bound of the final size)
        self._thread = threading.Thread(target=self._run, name="sarif-gzip", daemon=True)

    def __enter__(self) -> _GzipSize:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            self.size += len(self._gz.compress(data))
        self.size += len(self._gz.flush())

    def add(self, data: bytes) -> None:
        self._queue.put(data)

    def close(self) -> int:
        """The final size (once every piece is compressed)."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        return self.size


def _write_results(run: _Prepared, out: BinaryIO, head: bytes, tail: bytes, first: int,
                   quota: int, gz: _GzipSize) -> bool:
    """:func:`_stream`'s writing: the head, the kept results, the tail."""
    dumps = orjson.dumps

    def put(data: bytes) -> bool:
        out.write(data)
        gz.add(data)
        return gz.size <= MAX_GZIP_BYTES

    line = head[head.rfind(b"\n") + 1:]
    pad = b"\n" + b" " * (len(line) - len(line.lstrip(b" ")) + 2)
    indent = orjson.OPT_INDENT_2
    batch: list[bytes] = []
    written = False

    def flush() -> bool:
        nonlocal written
        data = b",".join(batch)
        batch.clear()
        ok = put(b"," + data if written else b"[" + data)
        written = True
        return ok

    def kept(level: str) -> bool:
        nonlocal quota
        rank = severity_rank(level)
        if rank < first:
            return True
        if rank == first and quota > 0:
            quota -= 1
            return True
        return False

    if not put(head):
        return False
    try:
        for v in run.findings:
            if kept(v.severity):
                batch.append(pad + dumps(run.result(v), option=indent).replace(b"\n", pad))
                if len(batch) >= _BATCH and not flush():
                    return False
        for level, made in run.inputs:
            if kept(level):
                batch.append(pad + dumps(to_json(made), option=indent).replace(b"\n", pad))
    except TypeError:  # e.g. an integer beyond 64 bits in a trace value
        return False
    if batch and not flush():
        return False
    end = pad[:-2] + b"]" if written else b"[]"
    return put(end + tail + b"\n") and gz.close() <= MAX_GZIP_BYTES


def build(results: Results, ctx: RenderContext) -> Any:
    """The ``om.SarifLog`` for ``results``, GitHub's limits applied."""
    return _build(results, ctx)[0]


def _build(results: Results, ctx: RenderContext) -> tuple[Any, str]:
    """The log and its text, the whole log made at once: over the size limit, the
    largest number of most severe results that fits is searched for."""
    run = _Prepared(results, ctx)
    items = [_Item(None, v.severity, n, v) for n, v in enumerate(run.findings)]
    items += [_Item(made, level, len(items) + n) for n, (level, made) in enumerate(run.inputs)]
    ranked = sorted(items, key=lambda it: (severity_rank(it.level), it.order))

    def result(it: _Item) -> Any:
        if it.result is None:
            assert it.finding is not None
            it.result = run.result(it.finding)
        return it.result

    def make(keep: int, for_size: int = 0) -> Any:
        """The log with the ``keep`` most severe results, in their original order."""
        lost = dict(run.dropped.results)
        for it in ranked[keep:]:
            lost[it.level] = lost.get(it.level, 0) + 1
        return run.log(lost, [result(it) for it in sorted(ranked[:keep],
                                                          key=lambda it: it.order)],
                       for_size)

    def fits(log: Any) -> tuple[Any, str] | None:
        text = dumps(log)
        small = len(gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0))
        return (log, text) if small <= MAX_GZIP_BYTES else None

    keep = min(len(ranked), MAX_RESULTS)
    whole = make(keep)
    found = fits(whole)
    if found is not None:
        return found
    # Over the size limit: the largest number of most severe results that fits.
    lo, hi = 0, keep - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(make(mid, keep - mid)) is not None:
            lo = mid
        else:
            hi = mid - 1
    last = make(lo, keep - lo)
    return last, dumps(last)


def _cap_locations(result: Any, dropped: _Dropped) -> None:
    related = result.related_locations or []
    room = max(MAX_LOCATIONS_PER_RESULT - len(result.locations or []), 0)
    if len(related) <= room:
        return
    result.related_locations = related[:room] or None
    result.properties["relatedLocationsDropped"] = len(related) - room
    dropped.locations += len(related) - room
    dropped.results_with_locations += 1


# ------------------------------------------------------------------ rules
def _pascal(name: str) -> str:
    """SARIF's friendly rule name is one Pascal-case identifier (argument-above-maximum
    -> ArgumentAboveMaximum)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name))


def _descriptor(doc: rules.RuleDoc) -> Any:
    props: dict[str, Any] = {"tags": list(doc.tags)}
    if doc.security_severity is not None:
        props["security-severity"] = doc.security_severity
    return om.ReportingDescriptor(
        id=doc.id,
        name=_pascal(doc.name),
        short_description=om.MultiformatMessageString(text=doc.short),
        full_description=om.MultiformatMessageString(text=doc.full or doc.short),
        default_configuration=om.ReportingConfiguration(level=doc.level),
        help_uri=RULE_DOC_URI.format(doc.id),
        help=om.MultiformatMessageString(text=doc.text, markdown=doc.markdown),
        properties=props,
    )


def _undocumented(rule_id: str) -> Any:
    """A rule id without a page (should not happen: a test keeps the catalogue complete)."""
    text = f"{rule_id}: reported by agent-eval; this version has no documentation page for it."
    return om.ReportingDescriptor(
        id=rule_id, name=_pascal(rule_id),
        short_description=om.MultiformatMessageString(text=text),
        full_description=om.MultiformatMessageString(text=text),
        default_configuration=om.ReportingConfiguration(level="error"),
        help=om.MultiformatMessageString(text=text, markdown=text),
        properties={"tags": []},
    )


# ------------------------------------------------------------------ results
@functools.lru_cache(maxsize=4096)
def _uri(path: str) -> str:
    """A repo-relative path as a relative URI reference (percent-encoded). A ``:`` is
    encoded too: in the first segment (``https:x.jsonl``, ``c:x.jsonl``) it made the
    reference an absolute URI of that scheme (RFC 3986 section 4.2), which the SARIF
    validator refuses beside a ``uriBaseId``."""
    return quote(path.replace("\\", "/"), safe="/-._~!$&'()*+,;=@")


def _physical(file: str, line: int, col: int = 0, snippet: str | None = None) -> Any:
    region = None
    if line > 0:
        region = om.Region(start_line=line, start_column=col if col > 0 else None,
                           snippet=None if snippet is None else om.ArtifactContent(text=snippet))
    return om.PhysicalLocation(
        artifact_location=om.ArtifactLocation(uri=_uri(file), uri_base_id=SRCROOT),
        region=region)


def _physical_json(file: str, line: int, col: int = 0, snippet: str | None = None) -> _Json:
    """``to_json(_physical(...))``, made directly."""
    out = _Json(artifactLocation={"uri": _uri(file), "uriBaseId": SRCROOT})
    if line > 0:
        region: dict[str, Any] = {"startLine": line}
        if col > 0:
            region["startColumn"] = col
        if snippet is not None:
            region["snippet"] = {"text": snippet}
        out["region"] = region
    return out


def _where(ref: TraceRef) -> str:
    return f"{ref.file}:{ref.line}" if ref.line > 0 else ref.file


_LINK_CHARS = re.compile(r"(\\*)([\[\]])")


def message_text(text: str) -> str:
    """Text for a plain-text ``message``: each ``[`` and ``]`` escaped with a backslash
    (and the backslashes before one doubled), as SARIF 2.1.0 asks of a message's literal
    brackets (3.11.6, embedded links). Left as they were, a tool name or trace id
    ``[dismiss: false positive](1)`` was an embedded link in Code Scanning's alert (and
    VS Code's viewer): a link to the result's first related location, with the text a
    trace chose. Shown, the message reads as the trace wrote it."""
    if "[" not in text and "]" not in text:
        return text
    return _LINK_CHARS.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def _category(results: Results, ctx: RenderContext) -> str:
    """The run's ``automationDetails.id``: the category given (with a trailing ``/``, as
    the CodeQL action writes it), else ``agent-eval/SUITE/`` and, for a shard's partial
    results, ``shard-i-of-n/``: each its own category, so that uploads for the same
    commit live side by side."""
    if ctx.sarif_category:
        cat = ctx.sarif_category
        return cat if cat.endswith("/") else cat + "/"
    shard = "" if results.shard is None else results.shard.automation_suffix
    return f"{TOOL_NAME}/{results.suite}/{shard}"


def _plain(value: Any) -> Any:
    """A property's value as :func:`to_json` passes it on (scalars as they are)."""
    return value if value is None or type(value) in _SCALARS else to_json(value)


def _finding_result(v: Finding, index: dict[str, int], sources: _Sources, room: int,
                    compared: Comparison | None) -> _Json:
    """The result of one finding, in its JSON form (what ``to_json`` makes of the
    ``om.Result``: the same members in the specification's order, ``None`` left out),
    with at most ``room`` related locations. Made directly, not from sarif-om objects:
    a large run makes 25,000 of them (tests/renderers/test_sarif.py checks the two
    agree)."""
    trace = v.trace
    parts = [_sentence(v.message)]
    related: list[_Json] = []
    if trace is not None:
        parts.append(f"Trace {trace.trace_id} at {_where(trace)}.")
        if room > 0 and repo_relative(trace.file):
            related.append(_Json(
                id=1, physicalLocation=_physical_json(trace.file, trace.line),
                message={"text": message_text(
                    f"Trace {trace.trace_id}: where the rule is violated.")}))
    if v.scenario:
        parts.append(f"Scenario {v.scenario}.")
    if v.related:
        parts.append(f"{len(v.related)} more related trace line(s).")
        for n, ref in enumerate(v.related, 2 if trace is not None else 1):
            if n > room:
                break
            if not repo_relative(ref.file):
                continue
            related.append(_Json(
                id=n, physicalLocation=_physical_json(ref.file, ref.line),
                message={"text": message_text(f"Trace {ref.trace_id}: a related line.")}))
    props: dict[str, Any] = {"test": _plain(v.test)}
    for key, value in (("scenario", v.scenario),
                       ("trace_id", trace.trace_id if trace else None),
                       ("tool", v.tool), ("argument", v.argument), ("value", v.value),
                       ("constraint", v.constraint)):
        if value is not None:
            props[key] = _plain(value)
    total = (trace is not None) + len(v.related)
    if total > room:
        props["relatedLocationsDropped"] = total - room
    c = v.config
    text = sources.line(c.file, c.line)
    snippet = text[max(c.col, 1) - 1:] if text is not None else None
    out = _Json()
    if v.rule is not None:
        out["ruleId"] = v.rule
    out["ruleIndex"] = index[v.rule]
    if v.severity is not None:
        out["level"] = v.severity
    out["message"] = {"text": message_text(" ".join(parts))}
    out["locations"] = [{"physicalLocation": _physical_json(c.file, c.line, c.col, snippet)}]
    if v.fingerprint:
        out["partialFingerprints"] = {"primaryLocationLineHash": _plain(v.fingerprint)}
    if related:
        out["relatedLocations"] = related
    if compared is not None:
        out["baselineState"] = compared.state_of(v)
    out["properties"] = props
    return out


def _input_result(e: InputError, index: dict[str, int], level: str, sources: _Sources,
                  seen: dict[str, int], config: str) -> Any:
    where = f"{e.file}:{e.line}" if e.line > 0 else e.file
    # '--traces' and 'load_traces' name an option, not a file: point at the config.
    # (and a file outside the repository, named in the message only)
    is_file = not (e.file.startswith("-") or e.file == "load_traces") and repo_relative(e.file)
    return om.Result(
        rule_id=e.rule,
        rule_index=index[e.rule],
        level=level,
        message=om.Message(text=message_text(f"Input error in {where}: {_sentence(e.message)}")),
        locations=[om.Location(physical_location=_physical(
            e.file, e.line) if is_file else _physical(config, 0))],
        partial_fingerprints={"primaryLocationLineHash": _input_fingerprint(e, sources, seen)},
        properties={"file": e.file, "line": e.line},
    )


def _input_fingerprint(e: InputError, sources: _Sources, seen: dict[str, int]) -> str:
    """Rule + file + the offending line's text (not its number, like GitHub's own line
    hash), with an occurrence suffix for repeats."""
    text = sources.line(e.file, e.line)
    base = f"{e.rule}|{e.file}|{e.message if text is None else text.strip()}"
    n = seen[base] = seen.get(base, 0) + 1
    key = base if n == 1 else f"{base}:{n}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


# ------------------------------------------------------------------ invocation
def _invocation(results: Results, dropped: _Dropped) -> Any:
    notes: list[Any] = []
    if results.input_errors:
        notes.append(om.Notification(level="error", message=om.Message(
            text=f"{len(results.input_errors)} input error(s) in the traces; each is "
                 "reported as a result of its input/* rule. The run's verdict is 'error'.")))
    for t in results.tests:
        if t.status == "error":
            notes.append(om.Notification(level="error", message=om.Message(
                text=message_text(f"Test '{t.id}' checked no trace."))))
    notes.extend(_limit_notes(dropped))
    return om.Invocation(execution_successful=results.verdict != "error",
                         tool_execution_notifications=notes or None)


def _limit_notes(dropped: _Dropped) -> Iterable[Any]:
    total = sum(dropped.results.values())
    if total:
        by_level = ", ".join(f"{dropped.results[lv]} {lv}" for lv in _LEVELS
                             if dropped.results.get(lv))
        why = []
        if total > dropped.for_size:
            why.append(f"GitHub accepts at most {MAX_RESULTS} results per run")
        if dropped.for_size:
            why.append(f"the file must stay under {MAX_GZIP_BYTES} bytes gzip-compressed")
        yield om.Notification(level="warning", message=om.Message(
            text=f"{total} result(s) were dropped from this SARIF file ({by_level}) because "
                 f"{' and '.join(why)}; the most severe results were kept. results.json "
                 "keeps every finding."))
    if dropped.locations:
        yield om.Notification(level="warning", message=om.Message(
            text=f"{dropped.locations} related location(s) were dropped from "
                 f"{dropped.results_with_locations} result(s) because GitHub accepts at "
                 f"most {MAX_LOCATIONS_PER_RESULT} locations per result. results.json keeps "
                 "every location."))
