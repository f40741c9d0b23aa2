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
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import attr
import orjson
import sarif_om as om  # type: ignore[import-untyped]

from agent_eval import rules
from agent_eval.errors import InputError
from agent_eval.findings import SEVERITIES, Finding, TraceRef, severity_rank
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results
from agent_eval.sections import Comparison

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
TOOL_NAME = "agent-eval"
INFORMATION_URI = "https://github.com/agent-eval/agent-eval"
RULE_DOC_URI = "https://github.com/agent-eval/agent-eval/blob/main/src/agent_eval/rules/docs/{}.md"
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


_Fields = dict[str, tuple[int, str, Any, bool]]
_FIELDS: dict[type, _Fields] = {}
_WRITTEN: dict[type, tuple[tuple[str, Any], ...]] = {}  # always written, with their default


def _json(cls: type, **values: Any) -> _Json:
    """``to_json(cls(**values))`` without making the object: the same members in the
    same order, for the results of a large run (tests/renderers/test_sarif.py checks
    the two agree)."""
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = {attribute: (rank, name, default, always) for rank, (
            attribute, name, default, always) in enumerate(_plan(cls))}
        _WRITTEN[cls] = tuple((attribute, default) for attribute, (_, _, default, always)
                              in fields.items() if always and default is not _NO_DEFAULT)
    for attribute, default in _WRITTEN[cls]:
        if attribute not in values:
            values[attribute] = default  # written even when not given (level)
    out = _Json()
    last = -1
    ordered = True
    for attribute, value in values.items():
        rank, name, default, always = fields[attribute]
        if value is None or (not always and value == default
                             and type(value) is type(default)):
            continue
        out[name] = value if type(value) in _SCALARS or type(value) is _Json else to_json(
            value)
        ordered = ordered and rank > last
        last = rank
    if ordered:  # the arguments were given in the specification's order
        return out
    rank_of = {name: rank for rank, name, _, _ in fields.values()}
    return _Json(sorted(out.items(), key=lambda item: rank_of[item[0]]))


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
    return _build(results, ctx or RenderContext())[1]


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


def build(results: Results, ctx: RenderContext) -> Any:
    """The ``om.SarifLog`` for ``results``, GitHub's limits applied."""
    return _build(results, ctx)[0]


def _build(results: Results, ctx: RenderContext) -> tuple[Any, str]:
    """The log and its text."""
    catalogue = rules.catalogue()
    findings = results.findings  # rule violations, scenario findings, missed criteria
    # the rules that fired (as zizmor and semgrep do), in the catalogue's order: the whole
    # catalogue would be most of the file (GitHub reads each rule from the run it is in)
    used = {v.rule for v in findings} | {e.rule for e in results.input_errors}
    ids = [*(r for r in catalogue if r in used), *sorted(used - set(catalogue))]
    index = {rule_id: i for i, rule_id in enumerate(ids)}
    descriptors = [_descriptor(catalogue[r]) if r in catalogue else _undocumented(r)
                   for r in ids]
    sources = _Sources(ctx)

    compared = results.baseline if isinstance(results.baseline, Comparison) else None
    room = max(MAX_LOCATIONS_PER_RESULT - 1, 0)  # a finding's result has one location
    dropped = _Dropped()
    items: list[_Item] = []
    for n, v in enumerate(findings):
        related = (v.trace is not None) + len(v.related)
        if related > room:  # counted now: the result itself may never be made
            dropped.locations += related - room
            dropped.results_with_locations += 1
        items.append(_Item(None, v.severity, n, v))
    seen: dict[str, int] = {}
    for e in results.input_errors:
        level = catalogue[e.rule].level if e.rule in catalogue else "error"
        item = _Item(_input_result(e, index, level, sources, seen, results.config), level,
                     len(items))
        _cap_locations(item.result, dropped)
        items.append(item)
    ranked = sorted(items, key=lambda it: (severity_rank(it.level), it.order))

    def result(it: _Item) -> Any:
        if it.result is None:
            assert it.finding is not None
            it.result = _finding_result(it.finding, index, sources, room, compared)
        return it.result

    def make(keep: int, for_size: int = 0) -> Any:
        """The log with the ``keep`` most severe results, in their original order."""
        lost = _Dropped(dict(dropped.results), for_size, dropped.locations,
                        dropped.results_with_locations)
        for it in ranked[keep:]:
            lost.results[it.level] = lost.results.get(it.level, 0) + 1
        vcs = None
        if ctx.repo_url:
            vcs = [om.VersionControlDetails(  # the repository's root is %SRCROOT%
                repository_uri=ctx.repo_url, revision_id=ctx.sha,
                mapped_to=om.ArtifactLocation(uri_base_id=SRCROOT))]
        run = om.Run(
            tool=om.Tool(driver=om.ToolComponent(
                name=TOOL_NAME, version=results.tool_version,
                semantic_version=results.tool_version,
                information_uri=INFORMATION_URI, rules=descriptors)),
            invocations=[_invocation(results, lost)],
            version_control_provenance=vcs,
            results=[result(it) for it in sorted(ranked[:keep], key=lambda it: it.order)],
            automation_details=om.RunAutomationDetails(id=_category(results, ctx)),
            column_kind="unicodeCodePoints",
            properties={"suite": results.suite, "config": results.config,
                        "verdict": results.verdict, "counts": dict(results.counts)},
        )
        return om.SarifLog(version=SARIF_VERSION, schema_uri=SCHEMA_URI, runs=[run])

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
    """A repo-relative path as a relative URI reference (percent-encoded)."""
    return quote(path.replace("\\", "/"), safe="/-._~!$&'()*+,;=:@")


def _physical(file: str, line: int, col: int = 0, snippet: str | None = None) -> Any:
    region = None
    if line > 0:
        region = om.Region(start_line=line, start_column=col if col > 0 else None,
                           snippet=None if snippet is None else om.ArtifactContent(text=snippet))
    return om.PhysicalLocation(
        artifact_location=om.ArtifactLocation(uri=_uri(file), uri_base_id=SRCROOT),
        region=region)


def _physical_json(file: str, line: int, col: int = 0, snippet: str | None = None) -> _Json:
    """``to_json(_physical(...))``."""
    region = None
    if line > 0:
        region = _json(om.Region, start_line=line, start_column=col if col > 0 else None,
                       snippet=None if snippet is None else _json(om.ArtifactContent,
                                                                  text=snippet))
    return _json(om.PhysicalLocation,
                 artifact_location=_json(om.ArtifactLocation, uri=_uri(file),
                                         uri_base_id=SRCROOT),
                 region=region)


def _where(ref: TraceRef) -> str:
    return f"{ref.file}:{ref.line}" if ref.line > 0 else ref.file


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


def _finding_result(v: Finding, index: dict[str, int], sources: _Sources, room: int,
                    compared: Comparison | None) -> _Json:
    """The result of one finding, in its JSON form (what ``to_json`` makes of the
    ``om.Result``), with at most ``room`` related locations."""
    parts = [_sentence(v.message)]
    related: list[_Json] = []
    if v.trace is not None:
        parts.append(f"Trace {v.trace.trace_id} at {_where(v.trace)}.")
    if v.trace is not None and room > 0:
        related.append(_json(
            om.Location, id=1, physical_location=_physical_json(v.trace.file, v.trace.line),
            message=_json(om.Message,
                          text=f"Trace {v.trace.trace_id}: where the rule is violated.")))
    if v.scenario:
        parts.append(f"Scenario {v.scenario}.")
    if v.related:
        parts.append(f"{len(v.related)} more related trace line(s).")
    for n, ref in enumerate(v.related, 2 if v.trace is not None else 1):
        if n > room:
            break
        related.append(_json(
            om.Location, id=n, physical_location=_physical_json(ref.file, ref.line),
            message=_json(om.Message, text=f"Trace {ref.trace_id}: a related line.")))
    props: dict[str, Any] = {"test": v.test}
    for key, value in (("scenario", v.scenario),
                       ("trace_id", v.trace.trace_id if v.trace else None),
                       ("tool", v.tool), ("argument", v.argument), ("value", v.value),
                       ("constraint", v.constraint)):
        if value is not None:
            props[key] = value
    total = (v.trace is not None) + len(v.related)
    if total > room:
        props["relatedLocationsDropped"] = total - room
    c = v.config
    text = sources.line(c.file, c.line)
    snippet = text[max(c.col, 1) - 1:] if text is not None else None
    return _json(
        om.Result,
        rule_id=v.rule,
        rule_index=index[v.rule],
        level=v.severity,
        message=_json(om.Message, text=" ".join(parts)),
        locations=[_json(om.Location,
                         physical_location=_physical_json(c.file, c.line, c.col, snippet))],
        partial_fingerprints={"primaryLocationLineHash": v.fingerprint} if v.fingerprint
        else None,
        related_locations=related or None,
        baseline_state=compared.state_of(v) if compared is not None else None,
        properties=props,
    )


def _input_result(e: InputError, index: dict[str, int], level: str, sources: _Sources,
                  seen: dict[str, int], config: str) -> Any:
    where = f"{e.file}:{e.line}" if e.line > 0 else e.file
    # '--traces' and 'load_traces' name an option, not a file: point at the config.
    is_file = not (e.file.startswith("-") or e.file == "load_traces")
    return om.Result(
        rule_id=e.rule,
        rule_index=index[e.rule],
        level=level,
        message=om.Message(text=f"Input error in {where}: {_sentence(e.message)}"),
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
                text=f"Test '{t.id}' checked no trace.")))
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
