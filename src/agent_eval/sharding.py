"""``run --shard i/n`` and ``merge`` (docs/results.md "Shards").

A shard reads every trace file (traces are grouped per file while reading, so the
partition is made after reading, at trace granularity) and evaluates the traces whose id
hashes to it (:func:`shard_of`: sha-256 of the trace id, stable across machines and
Python versions). The reader's own records (input errors, ignored events, the format of
each file) belong to shard 1.

A shard's results are ordinary results of its traces plus ``results.shard``: its index
and count, the config digest, and one *record* per evaluated item holding everything the
accumulator got from it (the findings, the trace summary, each scenario's row, figures
and findings) with the item's position in the unsharded read order. :func:`merge`
replays the records of all shards in that order into one accumulator and finishes it
as an unsharded run does, so the merged results are identical to an unsharded run's
(byte for byte with ``--no-timings``).

That holds only if every shard read the same files: each shard also records what it read
(``results.shard.sources``: the files, their sizes, the traces in them, digests), and
:func:`merge` refuses shards that differ, as a shard that found no file (a failed
checkout or download) would otherwise just add nothing. An input error in a part's own
results that its records do not hold is carried into the merged results.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from array import array
from collections import Counter
from collections.abc import Iterable
from itertools import islice
from typing import Any

from agent_eval._version import __version__
from agent_eval.engine import Accumulator
from agent_eval.errors import ConfigError, InputError
from agent_eval.findings import Finding
from agent_eval.limits import DEFAULT
from agent_eval.live.outcome import LiveOutcome
from agent_eval.model import Trace
from agent_eval.readers import read_sources
from agent_eval.readers.base import FileRead, ReadItem, SourceFile
from agent_eval.results import (
    Results,
    TraceSummary,
    clean_scenario,
    clean_test,
    clean_trace,
    clean_trace_status,
    finding_dict,
    finding_from,
    finding_ok,
    test_dict,
    trace_dict,
    trace_ok,
    verdict_of,
)
from agent_eval.rule_ids import INPUT_NO_TRACES
from agent_eval.safetext import clean_name
from agent_eval.sections import ShardInfo
from agent_eval.suite import Suite, inventory

FORMAT = 1  # version of the record format in results.shard
_NAMED = 20  # missing shards named in merge's error (the others counted)


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` with 1 ≤ i ≤ n."""
    try:
        i_text, n_text = text.split("/", 1)
        i, n = int(i_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard {text!r}: expected i/n, e.g. 1/4") from None
    if n < 1 or not 1 <= i <= n:
        raise ValueError(f"--shard {text!r}: i must be between 1 and n")
    return i, n


def shard_of(trace_id: str, count: int) -> int:
    """The shard (1-based) a trace id belongs to."""
    digest = hashlib.sha256(trace_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


# ------------------------------------------------------------------ records
def _record(seq: list[int], acc: Accumulator, suite: Suite) -> dict[str, Any]:
    """What one item added to an (empty) accumulator."""
    rec: dict[str, Any] = {"seq": seq}
    if acc.traces:
        rec["trace"] = trace_dict(acc.traces[0])
        rec["tool_calls"] = acc.tool_calls
        rec["llm_calls"] = acc.llm_calls
        found = {tid: [finding_dict(v) for v in t.violations]
                 for tid, t in acc.tests.items() if t.violations}
        if found:
            rec["violations"] = found
        calls = next(iter(acc.tests.values())).calls_checked if acc.tests else 0
        rec["calls"] = calls
    if acc.input_errors:
        rec["input_errors"] = [{"rule": e.rule, "file": e.file, "line": e.line,
                                "message": e.message} for e in acc.input_errors]
    if acc.ignored:
        rec["ignored"] = dict(acc.ignored)
    if acc.formats:
        rec["formats"] = dict(acc.formats)
    sc = acc.scenarios
    if sc is not None:
        per = []
        for i, a in enumerate(sc.per):
            if not a.rows:
                continue
            entry = {"index": i, "rows": [list(r) for r in a.rows],
                     "figures": [None if math.isnan(x) else x for x in a.figures],
                     "findings": [finding_dict(f) for f in a.findings]}
            if a.judge is not None:  # the judge checks' counts (judge/summary.py)
                entry["judge"] = a.judge.to_record()
            per.append(entry)
        if per:
            rec["scenarios"] = per
        if sc.unknown_ids:
            rec["unknown_ids"] = sorted(sc.unknown_ids)
    return rec


def _count(rec: dict[str, Any], key: str) -> int:
    """A count of a record (absent: 0): a whole number, at least 0."""
    n = rec.get(key, 0)
    if type(n) is not int or n < 0:
        raise ValueError(f"{key} is {clean_name(repr(n), 40)}, not a count")
    return n


def _finding(d: Any, test: str | None = None) -> Finding:
    """A finding of a record, as :func:`_record` wrote it (its fingerprint not given yet);
    of the test ``test`` when one is named."""
    if not finding_ok(d, fingerprinted=False) or (test is not None and d["test"] != test):
        raise ValueError("a finding that is not one of the results' findings"
                         + (f" of test {clean_name(test, 40)!r}" if test is not None else ""))
    return finding_from(d)


def _input_error(d: Any) -> InputError:
    """An input error of a record, as the results JSON Schema's ``input_error``."""
    if not (type(d) is dict and type(d.get("rule")) is str
            and _ERROR_RULE.search(d["rule"]) is not None and type(d.get("file")) is str
            and type(d.get("line")) is int and d["line"] >= 0
            and type(d.get("message")) is str and d["message"]):
        raise ValueError("an input error that is not one of the results' input errors")
    return InputError(d["rule"], d["file"], d["line"], d["message"])


_ERROR_RULE = re.compile(r"^(input|judge)/[a-z_]+$")  # the results JSON Schema's


def _row(r: Any) -> tuple[str, int, str, int]:
    """A scenario's row of a record: the trace's file, line and id, and its status."""
    from agent_eval.scenarios.evaluate import ERROR, FAIL, PASS, WARN  # (as engine's)

    if not (type(r) is list and len(r) == 4 and type(r[0]) is str and type(r[1]) is int
            and r[1] >= 0 and type(r[2]) is str and r[3] in (PASS, WARN, FAIL, ERROR)
            and type(r[3]) is int):
        raise ValueError(f"a scenario row {clean_name(str(r), 80)} that no trace gives")
    return r[0], r[1], r[2], r[3]


def _replay(rec: dict[str, Any], suite: Suite) -> Accumulator:
    """The accumulator a record was made from (timings aside). A record that
    :func:`_record` cannot have written (a value of another type, a finding of a test
    the suite does not have, findings without their trace) raises ValueError: what the
    merge would make of it is not a run's (a finding dropped unsaid passed what failed,
    a trace id that is no text stopped the merge with a traceback)."""
    acc = Accumulator.for_suite(suite)
    if "trace" in rec:
        t = rec["trace"]
        if not trace_ok(t):
            raise ValueError("its trace is not a trace summary of the results")
        acc.traces.append(TraceSummary(t["id"], t["file"], t["line"], t["scenario"],
                                       t["tool_calls"], tuple(t["failed_tests"])))
        acc.tool_calls = _count(rec, "tool_calls")
        acc.llm_calls = _count(rec, "llm_calls")
        calls = _count(rec, "calls")
        failed = rec.get("violations") or {}
        if type(failed) is not dict:
            raise ValueError("its violations are not findings by test")
        unknown = [tid for tid in failed if tid not in acc.tests]
        if unknown:
            raise ValueError(f"findings of test {clean_name(str(unknown[0]), 40)!r}, which "
                             f"{suite.file} does not have")
        for tid, test in acc.tests.items():
            test.traces_checked = 1
            test.calls_checked = calls
            if tid in failed:
                test.violations = [_finding(v, tid) for v in failed[tid]]
                test.traces_failed = 1
    elif any(key in rec for key in ("violations", "tool_calls", "llm_calls", "calls",
                                    "scenarios", "unknown_ids")):
        raise ValueError("what a trace gave, without the trace")
    acc.input_errors = [_input_error(e) for e in rec.get("input_errors", [])]
    ignored = rec.get("ignored", {})
    if type(ignored) is not dict:
        raise ValueError("its ignored events are not counts by file")
    acc.ignored = {f: _count(ignored, f) for f in ignored}
    formats = rec.get("formats", {})
    if type(formats) is not dict or not all(type(k) is str and type(v) is str
                                            for k, v in formats.items()):
        raise ValueError("its formats are not reader names by file")
    acc.formats = dict(formats)
    if acc.scenarios is not None:
        from agent_eval.scenarios.evaluate import K

        for entry in rec.get("scenarios", []):
            i = entry["index"]
            if type(i) is not int or not 0 <= i < len(acc.scenarios.per):  # not from the end
                raise IndexError(f"scenario index {clean_name(str(i), 40)} out of range")
            a = acc.scenarios.per[i]
            a.rows = [_row(r) for r in entry["rows"]]
            a.figures = array("d", (math.nan if x is None else x for x in entry["figures"]))
            if len(a.figures) != K * len(a.rows):
                raise ValueError(f"{len(a.figures)} figures for {len(a.rows)} trace(s)")
            a.findings = [_finding(f) for f in entry["findings"]]
            if a.judge is not None and "judge" in entry:
                a.judge.load_record(entry["judge"])
        for sid in rec.get("unknown_ids", []):  # the record's one trace names it
            if type(sid) is not str:
                raise ValueError("a scenario id that is not text")
            t = rec["trace"]
            acc.scenarios.unknown(sid, 1, (t["file"], t["line"], t["id"]))
    return acc


# --------------------------------------------------------------------- shard run
def evaluate_shard(suite: Suite, files: list[SourceFile], errors: Iterable[ReadItem] = (),
                   *, index: int, count: int, timings: bool = True,
                   fmt: str | None = None, pinned: list[SourceFile] | None = None,
                   strict_coverage: bool = False) -> Results:
    """The partial results of shard ``index`` of ``count``. The traces of ``pinned``
    files (the live probes' sessions, which only shard 1 records) all belong to shard 1,
    after the other files, as in an unsharded run. ``strict_coverage`` is recorded: the
    shard decides no coverage, the merge does, as errors (``--strict-coverage`` on a shard
    was dropped unsaid, and the merge passed what the unsharded run failed)."""
    fmt = fmt or suite.format
    acc = Accumulator.for_suite(suite)
    records: list[dict[str, Any]] = []
    total = 0
    read = hashlib.sha256()  # every item read from the files, in order (see _sources)
    from_files = 0  # traces read from the files (not the probes' sessions)

    def take(seq: list[int], item: ReadItem, first: bool = False) -> None:
        nonlocal total, from_files
        if not first:
            read.update(_item_key(item))
        if isinstance(item, Trace):
            total += 1
            if first:
                if index != 1:
                    return
            else:
                from_files += 1
                if shard_of(item.id, count) != index:
                    # every shard's coverage is of every trace file's traces: merge
                    # refuses shards whose coverage differs (_same_coverage)
                    acc.see_calls(item, suite)
                    return
        elif index != 1:  # the reader's records belong to shard 1
            return
        one = Accumulator.for_suite(suite)
        one.coverage = acc.coverage  # coverage is kept for the shard as a whole
        one.add(item, suite)
        records.append(_record(seq, one, suite))
        acc.merge(one)

    for k, item in enumerate(errors):
        take([0, k], item)
    for n, source in enumerate(files, 1):
        for k, item in enumerate(read_sources([source], fmt)):
            take([n, k], item)
    for n, source in enumerate(pinned or (), len(files) + 1):
        for k, item in enumerate(read_sources([source], fmt)):
            take([n, k], item, first=True)
    results = acc.finish(suite, timings=timings, any_traces=total > 0)
    _partial_view(results)
    seconds = {tid: t.seconds for tid, t in acc.tests.items()} if timings else {}
    scen_seconds = ([a.seconds for a in acc.scenarios.per]
                    if timings and acc.scenarios is not None else [])
    results.shard = ShardInfo(
        index=index, count=count,
        config_digest=None if results.inventory is None else results.inventory.digest,
        traces_read=total, records=tuple(records), format=FORMAT, seconds=seconds,
        scenario_seconds=tuple(scen_seconds), coverage=acc.coverage.to_dict(),
        sources=_sources(files, from_files, read.hexdigest()),
        strict_coverage=strict_coverage)
    return results


def _text(value: str) -> str:
    """A string in a digest, length first (so no two lists of strings hash alike)."""
    return f"{len(value)}:{value}"


def _item_key(item: ReadItem) -> bytes:
    """What an item read tells of the files, for the digest of what a shard read: the
    same files give every shard the same items (a message is left out: it may name
    something of the machine)."""
    if isinstance(item, Trace):
        return _key("T", item.id, item.source, item.location.line)
    if isinstance(item, InputError):
        return _key("E", item.rule, item.file, item.line)
    if isinstance(item, FileRead):
        return _key("F", item.file, item.format)
    return _key("I", item.file, item.count)


def _key(kind: str, *values: str | int) -> bytes:
    text = "".join(_text(v) if isinstance(v, str) else str(v) for v in values)
    return f"{kind}{text}\n".encode("utf-8", "surrogatepass")


def _records_read_digest(records: list[dict[str, Any]]) -> str:
    """The digest of what was read (``sources.read_digest``) as the records of every
    shard give it: each record is the item it was made from (its trace, or the reader's
    note), in the order read."""
    read = hashlib.sha256()
    for rec in records:
        if "trace" in rec:
            t = rec["trace"]
            read.update(_key("T", t["id"], t["file"], t["line"]))
        for e in rec.get("input_errors", ()):
            read.update(_key("E", e["rule"], e["file"], e["line"]))
        for file, fmt in rec.get("formats", {}).items():
            read.update(_key("F", file, fmt))
        for file, count in rec.get("ignored", {}).items():
            read.update(_key("I", file, count))
    return read.hexdigest()


def _sources(files: list[SourceFile], traces: int, read_digest: str) -> dict[str, Any]:
    """What a shard read (results.shard.sources): how many trace files, their total size,
    how many traces they held, a digest of the files' names and sizes and one of every
    item read from them. Every shard reads every file: :func:`merge` refuses shards
    that did not read the same."""
    digest = hashlib.sha256()
    total = 0
    for source in files:
        try:
            size = os.stat(source.path).st_size
        except OSError:
            size = -1  # unreadable: the reader says so (an input error, in shard 1)
        total += max(size, 0)
        digest.update(f"{_text(source.file)}{size}\n".encode("utf-8", "surrogatepass"))
    return {"files": len(files), "bytes": total, "traces": traces,
            "files_digest": digest.hexdigest(), "read_digest": read_digest}


def _partial_view(results: Results) -> None:
    """A shard reports only what its own traces say: the scenarios with traces in it
    (no "missing trace" for the others), no suite-level criteria (they need every
    scenario: the merged results have them), and the verdict of that."""
    results.scenarios = [s for s in results.scenarios if s.traces_total]
    results.criteria = []
    results.unexercised = []  # decided by `merge`, once every shard's traces are known
    results.counts["unexercised"] = 0
    for t in results.tests:
        if (t.traces_checked == 0 and t.status == "error") or t.status == "not_exercised":
            t.status = "pass"  # none of the traces fell to this shard; or see above
    results.verdict = verdict_of(results)


# ------------------------------------------------------------------------ merge
def merge(suite: Suite, parts: list[Results], *, timings: bool = True,
          strict_coverage: bool = False) -> Results:
    """One results object from the partial results of all shards."""
    if not parts:
        raise ConfigError(["merge: no results files given"])
    shards = []
    for p in parts:
        if p.shard is None:
            raise ConfigError([f"merge: the results of suite {p.suite!r} are not a shard's "
                               "partial results (write them with `agent-eval run --shard "
                               "i/n`)"])
        shards.append(p.shard)
    _same_version(parts)
    counts = {s.count for s in shards}
    if len(counts) != 1:
        raise ConfigError([f"merge: the parts come from different shard counts: "
                           f"{sorted(counts)}"])
    count = counts.pop()
    seen = sorted(s.index for s in shards)
    # a part may come from anyone: its count is never made into a list (10**8 took GBs)
    if len(seen) != count or seen != list(range(1, count + 1)):
        have = set(seen)
        lacking = count - sum(1 for i in have if i <= count)  # (every index is >= 1)
        missing = list(islice((i for i in range(1, count + 1) if i not in have),
                              _NAMED))
        dup = sorted({i for i in seen if seen.count(i) > 1})
        beyond = sorted(i for i in have if i > count)
        what = []
        if missing:
            more = f" and {lacking - len(missing)} more" if lacking > len(missing) else ""
            what.append(f"shard(s) {', '.join(map(str, missing))}{more} missing")
        if beyond:
            what.append(f"shard(s) {', '.join(map(str, beyond))} beyond {count}")
        if dup:
            what.append(f"shard(s) {', '.join(map(str, dup))} given twice")
        raise ConfigError([f"merge: expected shards 1..{count}: {'; '.join(what)}"])
    digest = inventory(suite).digest
    other = {s.config_digest for s in shards} - {digest}
    if other:
        raise ConfigError([f"merge: the parts were evaluated with another version of "
                           f"{suite.file} (or its policies) than the one here; merge with "
                           "the same config the shards ran with"])
    _same_sources(shards)
    if suite.live is not None and all(s.live is None for s in shards):
        # the probes run in shard 1 only (docs/mcp.md "Shards"): without their outcome the
        # merge would pass what they failed
        raise ConfigError([f"merge: {suite.file} has live probes, but no part holds their "
                           "results (shard 1 runs them: `run --shard 1/N`); run shard 1 "
                           "again with this version and merge the new results"])
    records = sorted(((r, s.index) for s in shards for r in s.records),
                     key=lambda item: item[0]["seq"])
    acc = Accumulator.for_suite(suite)
    for rec, index in records:
        try:  # a part may come from anyone: a record it did not write is said, no traceback
            acc.merge(_replay(rec, suite))
        except _UNREADABLE as exc:
            raise _unreadable(index, f"its record {clean_name(str(rec['seq']), 40)}",
                              exc) from None
    _records_add_up(suite, parts)  # each record is one; together, one run's?
    _same_coverage(suite, shards)
    lives = [_live_of(suite, p) for p in parts]
    for s in shards:
        try:
            acc.coverage.merge_dict(s.coverage or {})
        except _UNREADABLE as exc:
            raise _unreadable(s.index, "its coverage", exc) from None
        for tid, sec in (s.seconds or {}).items():
            _check_seconds(s.index, sec)
            if tid in acc.tests:
                acc.tests[tid].seconds += sec
        if acc.scenarios is not None:
            for a, sec in zip(acc.scenarios.per, s.scenario_seconds or (),
                              strict=False):
                _check_seconds(s.index, sec)
                a.seconds += sec
    # a shard run with --strict-coverage asked for it: the merge cannot make it a note
    strict_coverage = strict_coverage or any(s.strict_coverage for s in shards)
    results = acc.finish(suite, timings=timings, strict_coverage=strict_coverage)
    for live in lives:  # the live probes ran in shard 1 (docs/mcp.md "Shards")
        if live is not None:
            live.apply(results, has_trace_globs=bool(suite.trace_globs))
    _carry_errors(results, parts, count)
    return results


# what a record or coverage that `run --shard` did not write raises when replayed
_UNREADABLE = (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError)
_MAX_SECONDS = 10**9  # a test's or scenario's time in one shard (about 31 years)


def _unreadable(index: int, what: str, exc: Exception) -> ConfigError:
    return ConfigError([f"merge: the partial results of shard {index} cannot be merged: "
                        f"{what} is not what `agent-eval run --shard` writes "
                        f"({type(exc).__name__}: {clean_name(str(exc), 200)}); the file "
                        "was edited or written by another version: run the shard again "
                        "and merge the new results"])


def _check_seconds(index: int, sec: float) -> None:
    """A part's time of a test or scenario: a number of seconds a run can take (1e308
    summed was infinite, an OverflowError when written in milliseconds)."""
    if not 0 <= sec <= _MAX_SECONDS:
        raise ConfigError([f"merge: the partial results of shard {index} cannot be merged: "
                           f"they give a test or scenario {clean_name(str(sec), 40)} "
                           f"seconds (at most {_MAX_SECONDS}); the file was edited: run the "
                           "shard again and merge the new results"])


def _same_version(parts: list[Results]) -> None:
    """Refuse parts written by another agent-eval than this one: their records are what
    that version found in the traces, so the merge would pass what this version (a
    single run with it, the merged results' ``tool.version``) fails, or the reverse."""
    other: dict[str, list[int]] = {}
    for p in parts:
        if p.tool_version != __version__:
            other.setdefault(p.tool_version, []).append(p.shard.index if p.shard else 0)
    if other:
        said = "; ".join(f"shard(s) {', '.join(map(str, sorted(indexes)))} by "
                         f"agent-eval {clean_name(version, 40)!r}"
                         for version, indexes in sorted(other.items()))
        raise ConfigError([f"merge: the parts were written by another agent-eval than this "
                           f"one ({__version__}): {said}; run every shard and the merge with "
                           "the same version (pin it in every job), then merge again"])


def _same_sources(shards: list[ShardInfo]) -> None:
    """Refuse shards that did not read the same trace files (and the same traces in
    them): their records would not add up to one run. A shard that found no files (a
    failed checkout or download) would otherwise just add nothing."""
    missing = [s.index for s in shards if not s.sources]
    if missing:
        raise ConfigError([f"merge: the partial results of shard(s) "
                           f"{', '.join(map(str, sorted(missing)))} do not say which trace "
                           "files they read (written by an older agent-eval); run every "
                           "shard again with this version"])
    keys = ("files", "bytes", "traces", "files_digest", "read_digest")
    groups: dict[tuple[Any, ...], list[int]] = {}
    for s in sorted(shards, key=lambda s: s.index):
        src = s.sources or {}
        groups.setdefault(tuple(src.get(k) for k in keys), []).append(s.index)
    if len(groups) == 1:
        return
    differ = [k for i, k in enumerate(keys) if len({g[i] for g in groups}) > 1]
    what = ("the number of trace files" if "files" in differ
            else "the total size of the trace files" if "bytes" in differ
            else "the names or sizes of the trace files" if "files_digest" in differ
            else None)
    traces = ("the number of traces" if "traces" in differ
              else "the traces in them" if "read_digest" in differ else None)
    differs = " and ".join(x for x in (what, traces) if x)
    empty = any(g[0] == 0 for g in groups)
    lines = [f"merge: the shards did not read the same traces ({differs} differ), so "
             "their parts are not one run; run every shard on the same checkout with the "
             "same `traces:` or --traces"
             + (" (a shard that read no file may have run on an empty checkout or "
                "download)" if empty else "") + ", then merge again"]
    same_counts = not {"files", "bytes", "traces"} & set(differ)
    for (files, size, read, files_digest, read_digest), indexes in groups.items():
        digests = "".join(f", {name} {value[:12]}" for name, value, key in (
            ("files digest", files_digest, "files_digest"),
            ("read digest", read_digest, "read_digest"))
            if same_counts and key in differ and isinstance(value, str))
        lines.append(f"shard{'s' if len(indexes) > 1 else ''} "
                     f"{', '.join(map(str, indexes))}: {read} trace(s) read from {files} "
                     f"file(s), {size} bytes{digests}")
    raise ConfigError(lines)


def _same_coverage(suite: Suite, shards: list[ShardInfo]) -> None:
    """Refuse shards whose coverage (what the calls of every trace file's traces
    exercised, which every shard works out) differs: it is what the merged
    ``coverage/unexercised`` findings are decided from, and a part whose coverage was
    edited to claim every tool called merged into a pass what the run fails. Shard 1 of
    a live suite also saw the probes' sessions: it must hold the others' coverage."""
    def hits(s: ShardInfo, key: str) -> frozenset[str]:
        values = (s.coverage or {}).get(key)
        return frozenset(map(repr, values)) if type(values) is list else frozenset({"?"})

    def seen(s: ShardInfo) -> tuple[frozenset[str], ...]:
        return hits(s, "matched"), hits(s, "touched"), hits(s, "names")

    first = next((s for s in shards if s.index == 1), None) if suite.live else None
    groups: dict[tuple[frozenset[str], ...], list[int]] = {}
    for s in sorted(shards, key=lambda s: s.index):
        if s is not first:
            groups.setdefault(seen(s), []).append(s.index)
    if len(groups) > 1:
        differ = " / ".join(f"shard(s) {', '.join(map(str, indexes))}"
                            for indexes in groups.values())
    elif first is not None and groups:
        [others] = groups
        narrower = not (others[0] <= hits(first, "matched")
                        and others[1] <= hits(first, "touched"))
        differ = "shard 1 and the others" if narrower else ""
    else:
        differ = ""
    if differ:
        raise ConfigError([f"merge: the shards' coverage differs ({differ}): every shard "
                           "works out what the calls of every trace exercised, so their "
                           "parts are not one run's (a part edited, or of another run); "
                           "run the shards again and merge the new results"])


def _records_add_up(suite: Suite, parts: list[Results]) -> None:
    """Refuse parts whose records are not one run's: a record given twice (a part given
    again as another shard, or a record copied), trace records that are not the traces
    every shard read (``sources.traces``: a record dropped or added), and a part whose
    records do not hold what its own results list (its traces, each test's findings).
    Replayed, they counted a trace twice or not at all, and a part whose failing records
    were dropped merged into a pass."""
    held: dict[tuple[int, ...], int] = {}  # a record's seq -> the shard holding it
    traces = 0
    files = expected = 0
    digest = ""
    for p in parts:
        assert p.shard is not None and p.shard.sources  # (merge checked)
        files, expected = p.shard.sources["files"], p.shard.sources["traces"]
        digest = p.shard.sources["read_digest"]  # (the same in every part: merge checked)
        index = p.shard.index
        # a test's findings by severity (what its status and the verdict follow from)
        found: dict[str, Counter[str]] = {t.id: Counter() for t in suite.tests}
        rows: dict[int, list[list[Any]]] = {}  # a scenario's index -> its rows held
        own = 0
        for rec in p.shard.records:
            seq = tuple(rec["seq"])
            if seq in held:
                twice = (f"shard {index} holds it twice" if held[seq] == index
                         else f"shards {held[seq]} and {index} both hold it")
                raise ConfigError([f"merge: the record {list(seq)} is given twice ({twice}): "
                                   "the parts are not one run's (a part given again as "
                                   "another shard, or edited); run the shards again and "
                                   "merge the new results"])
            held[seq] = index
            if "trace" not in rec:
                continue
            own += 1
            if len(seq) == 2 and 1 <= seq[0] <= files:
                traces += 1
            elif not (len(seq) == 2 and seq[0] > files and index == 1
                      and suite.live is not None):  # (a live probe's session: shard 1's)
                raise ConfigError([f"merge: the partial results of shard {index} cannot be "
                                   f"merged: its record {list(seq)} holds a trace where no "
                                   "trace file gives one; the file was edited: run the "
                                   "shard again and merge the new results"])
            violations = rec.get("violations")
            if type(violations) is dict:
                for tid, items in violations.items():
                    if tid in found and type(items) is list:  # (as _replay read them)
                        found[tid].update(v["severity"] for v in items)
            if suite.scenarios is not None:  # (as _replay read them; else not read)
                for entry in rec.get("scenarios", []):
                    rows.setdefault(entry["index"], []).extend(entry["rows"])
        listed: dict[str, Counter[str]] = {
            t.id: Counter(v.severity for v in t.violations) for t in p.tests if t.id in found}
        what = (f"{own} trace(s), where its results list {len(p.traces)}"
                if own != len(p.traces) else _findings_differ(found, listed))
        if what is None:
            scenario = _rows_differ(suite, rows, p)
            if scenario is not None:
                what = (f"other traces or trace statuses of scenario {scenario!r} than its "
                        "results list")
        if what is None:
            what = _scenarios_differ(suite, p) or _traces_differ(suite, p)
        if what is not None:
            raise ConfigError([f"merge: the partial results of shard {index} cannot be "
                               f"merged: its records hold {what}; the file was edited: "
                               "run the shard again and merge the new results"])
    if traces != expected:
        raise ConfigError([f"merge: the parts' records hold {traces} of the {expected} "
                           f"trace(s) every shard read from the {files} trace file(s): "
                           "records were dropped or added (a part edited, or of another "
                           "run); run the shards again and merge the new results"])
    read = sorted((rec for p in parts if p.shard is not None for rec in p.shard.records
                   if not rec["seq"] or rec["seq"][0] <= files),  # (not the probes' sessions)
                  key=lambda rec: rec["seq"])
    if _records_read_digest(read) != digest:
        raise ConfigError(["merge: the parts' records are not the traces and reader notes "
                           "every shard read (`sources.read_digest`): records were dropped, "
                           "added or edited (a part edited, or of another run); run the "
                           "shards again and merge the new results"])


def _findings_differ(found: dict[str, Counter[str]], listed: dict[str, Counter[str]]
                     ) -> str | None:
    """What first differs between the findings of a part's records and of its own
    results, each test's by severity (its status and the verdict follow from them); None
    when nothing does. A record whose findings were edited to the severity note merged
    into a pass what the part's own results fail."""
    for tid, held in found.items():
        given = listed.get(tid, Counter())
        if held.total() != given.total():
            return (f"{held.total()} finding(s) of test {tid!r}, where its results list "
                    f"{given.total()}")
        for severity in sorted(held | given):
            if held[severity] != given[severity]:
                return (f"{held[severity]} {severity} finding(s) of test {tid!r}, where its "
                        f"results list {given[severity]}")
    return None


def _rows_differ(suite: Suite, rows: dict[int, list[list[Any]]], part: Results
                 ) -> str | None:
    """The first scenario (its id) whose rows in a part's records are not the traces its
    own results give the scenario (how many, and each one that did not pass, with its
    status); None when they all are. A record whose failing row was made a pass merged
    into a pass what the part's own results fail."""
    if suite.scenarios is None:
        return None
    from agent_eval.scenarios.evaluate import PASS, STATUS_NAMES

    def shown(f: str, line: int, tid: str, st: int) -> tuple[str, int, str, str]:
        t = clean_trace_status({"file": f, "line": line, "trace_id": tid,
                                "status": STATUS_NAMES[st]})  # as the part was read
        return t["file"], t["line"], t["trace_id"], t["status"]

    ids = [sc.id for sc in suite.scenarios.scenarios]
    held = {ids[i]: (len(r), Counter(shown(*row) for row in r if row[3] != PASS))
            for i, r in rows.items() if r}
    listed = {s.id: (s.traces_total, Counter((t.file, t.line, t.trace_id, t.status)
                                             for t in s.traces_not_passed))
              for s in part.scenarios if s.traces_total}
    return next((sid for sid in [*ids, *listed] if held.get(sid) != listed.get(sid)),
                None)


def _traces_differ(suite: Suite, part: Results) -> str | None:
    """What first differs between the traces of a part's records and of its own results
    (each one's id, file, line, the scenario it names, its calls and the tests it
    failed), or between the scenario id a trace names and the unknown ids its record
    holds; None when nothing does. A record whose unknown scenario id was dropped merged
    the run's scenario/unknown_id warning away (a pass under --fail-on warn)."""
    assert part.shard is not None  # (merge checked)
    records = sorted((r for r in part.shard.records if "trace" in r),
                     key=lambda r: r["seq"])
    for rec, listed in zip(records, part.traces, strict=True):  # (as many: checked)
        t = rec["trace"]
        held = clean_trace(TraceSummary(t["id"], t["file"], t["line"], t["scenario"],
                                        t["tool_calls"], tuple(t["failed_tests"])))
        if held != listed:
            return f"other traces than its results list (first trace {held.id!r})"
        sid = t["scenario"]
        if suite.scenarios is not None:
            which = tuple(entry["index"] for entry in rec.get("scenarios", []))
            unknown = ([sid] if sid is not None and not suite.scenarios.took_named(sid, which)
                       else [])
            if rec.get("unknown_ids", []) != unknown:
                return (f"other unknown scenario ids for trace {held.id!r} than the "
                        "scenario it names")
    return None


def _scenarios_differ(suite: Suite, part: Results) -> str | None:
    """What first differs between each scenario as a part's records alone give it (as
    the shard worked it out from them) and as its own results list it, timings aside; None
    when nothing does. The merged metrics and criteria are worked out from the records'
    figures: a record whose latency or cost was edited down, its results still listing
    the figure the trace gave, merged into a pass what the run fails."""
    if suite.scenarios is None:
        return None
    from agent_eval.scenarios.evaluate import ScenarioAccumulator

    assert part.shard is not None  # (merge checked)
    acc = ScenarioAccumulator.for_scenarios(suite.scenarios)
    for rec in sorted(part.shard.records, key=lambda r: r["seq"]):
        replayed = _replay(rec, suite).scenarios  # (each replayed once already)
        if replayed is not None:
            acc.merge(replayed)
    held = {s.id: s for s in acc.finish(suite.scenarios, timings=False).scenarios
            if s.traces_total}  # (as _partial_view)
    listed = {s.id: s for s in part.scenarios}
    for sid in [*held, *listed]:
        if sid not in held or sid not in listed:
            return f"other scenarios ({sid!r}) than its results list"
        mine, theirs = clean_scenario(held[sid]).to_dict(), listed[sid].to_dict()
        key = next((k for k in [*mine, *theirs]
                    if k != "duration_ms" and mine.get(k) != theirs.get(k)), None)
        if key is not None:
            return f"other {key} of scenario {sid!r} than its results list"
    return None


def _live_of(suite: Suite, part: Results) -> LiveOutcome | None:
    """The live probes' outcome a part holds (``shard.live``: shard 1's), refused unless
    its probes' entries are the ones the part's own results list after the suite's tests
    (timings aside). A failing probe made a pass in ``shard.live`` only merged into a pass
    what shard 1's own results fail, and a probe entry that is no test's stopped the merge
    with a traceback."""
    assert part.shard is not None  # (merge checked)
    live = part.shard.live
    try:
        held = LiveOutcome.from_dict(live).tests if live else []
        for t in held:
            clean_test(t, DEFAULT)  # as the part's own tests were read
        shown = [_without_time(test_dict(t)) for t in held]
    except _UNREADABLE as exc:
        raise _unreadable(part.shard.index, "its live probes' outcome", exc) from None
    ids = {t.id for t in suite.tests}
    listed = [_without_time(test_dict(t)) for t in part.tests if t.id not in ids]
    if shown != listed:
        raise ConfigError([f"merge: the partial results of shard {part.shard.index} cannot "
                           "be merged: its live probes' outcome (`shard.live`) is not the "
                           "probes' entries its results list; the file was edited: run the "
                           "shard again and merge the new results"])
    return LiveOutcome.from_dict(live) if live else None


def _without_time(test: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in test.items() if k != "duration_ms"}


def _carry_errors(results: Results, parts: list[Results], count: int) -> None:
    """Carry into the merged results each input error of a part that they do not have
    (a part's records hold the reader's errors; its own results may hold more), marked
    with the shard. A part's ``input/no_traces`` (no trace in the files) is not carried
    when the merged results have one: every shard read the same files
    (:func:`_same_sources`), and the reader or the glob said why, in shard 1's records.
    A part whose verdict is ``error`` with no input error, when the merge's is not,
    is refused (a results file edited, or of another version)."""
    have = {(e.rule, e.file, e.line, e.message) for e in results.input_errors}
    no_traces = any(e.rule == INPUT_NO_TRACES.id for e in results.input_errors)
    carried = []
    for p in sorted(parts, key=lambda p: p.shard.index if p.shard else 0):
        index = p.shard.index if p.shard else 0
        for e in p.input_errors:
            key = (e.rule, e.file, e.line, e.message)
            if key in have or (e.rule == INPUT_NO_TRACES.id and no_traces):
                continue
            have.add(key)
            carried.append(InputError(e.rule, e.file, e.line,
                                      f"shard {index}/{count}: {e.message}"))
    if carried:
        results.input_errors = sorted([*results.input_errors, *carried],
                                      key=lambda e: (e.file, e.line, e.rule, e.message))
        results.counts["input_errors"] = len(results.input_errors)
        results.verdict = "error"
    unexplained = [p.shard.index for p in parts
                   if p.shard and p.verdict == "error" and not p.input_errors]
    if unexplained and results.verdict != "error":
        names = ", ".join(map(str, sorted(unexplained)))
        raise ConfigError([f"merge: the verdict of shard(s) {names} is `error`, but "
                           "neither their input errors nor their tests say why; run the "
                           "shard(s) again and merge the new results"])
