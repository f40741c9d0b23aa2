"""Evaluation: stream traces through the compiled tests into one Results object.

The accumulator is mergeable, so files can be evaluated in several processes
(``--jobs``) and combined into exactly what one process would produce.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_eval import spill as spilling
from agent_eval.coverage import CoverageAcc
from agent_eval.coverage import unexercised as coverage_findings
from agent_eval.errors import InputError, WorkerDied
from agent_eval.findings import Finding, Severity
from agent_eval.gcpause import gc_paused
from agent_eval.limits import deep_enough
from agent_eval.model import Trace, call_names, log_folder
from agent_eval.readers import ErrorBound, native, pick_reader, read_file, read_sources
from agent_eval.readers.base import FileRead, IgnoredEvents, ReadItem, SourceFile
from agent_eval.readers.native import NativeRange, trace_start_line
from agent_eval.results import (
    Results,
    Status,
    TestResult,
    TraceSummary,
    assign_fingerprints,
    clean_finding,
    clean_results,
    fingerprint,
    fingerprint_base,
    sort_key,
    verdict_of,
)
from agent_eval.rule_ids import INPUT_NO_TRACES
from agent_eval.safetext import log_block, one_line
from agent_eval.sections import CriterionResult, Metrics, ScenarioResult
from agent_eval.spill import Segment, Source, Spill, SpilledFindings
from agent_eval.suite import Suite, inventory

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from agent_eval.scenarios.evaluate import ScenarioAccumulator


@dataclass
class _TestAcc:
    """What one rule test found so far."""

    violations: list[Finding] = field(default_factory=list)  # in memory, in the order found
    traces_checked: int = 0
    traces_failed: int = 0
    calls_checked: int = 0
    seconds: float = 0.0
    # the findings found before ``violations``, in order: lists set aside by a merge and
    # runs written to the spill (spill.py); empty unless a run was ever written
    earlier: list[Source] = field(default_factory=list)

    def sources(self) -> list[Source]:
        """Every finding, in the order found: one stable sort of their concatenation
        is what the results list."""
        return [s for s in (*self.earlier, self.violations) if s]

    def held(self) -> int:
        """Findings held in memory."""
        return len(self.violations) + sum(len(s) for s in self.earlier
                                          if isinstance(s, list))


@dataclass
class Accumulator:
    """Partial results of some traces (picklable, mergeable)."""

    tests: dict[str, _TestAcc]
    traces: list[TraceSummary] = field(default_factory=list)
    input_errors: list[InputError] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)  # file -> the reader that read it
    tool_calls: int = 0
    llm_calls: int = 0
    scenarios: ScenarioAccumulator | None = None
    coverage: CoverageAcc = field(default_factory=lambda: CoverageAcc(bytearray(),
                                                                      bytearray()))
    # where findings go beyond spill.SPILL_AT held in memory (None: they stay in memory)
    spill: Spill | None = None
    held: int = 0  # findings held in memory (of the tests)
    # trace id -> the last (file, line) of its findings, for the findings in runs: where a
    # walk of the sorted findings can forget the trace's fingerprint counts (_final_run)
    ends: dict[str, tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def for_suite(cls, suite: Suite, spill: Spill | None = None) -> Accumulator:
        scenarios = None
        if suite.scenarios is not None:
            # lazy for start-up time: the scenario modules load only for suites with scenarios
            from agent_eval.scenarios.evaluate import ScenarioAccumulator

            scenarios = ScenarioAccumulator.for_scenarios(suite.scenarios)
        return cls({t.id: _TestAcc() for t in suite.tests}, scenarios=scenarios,
                   coverage=CoverageAcc.for_plan(suite.coverage), spill=spill)

    def add(self, item: ReadItem, suite: Suite) -> None:
        if isinstance(item, Trace):
            self.add_trace(item, suite)
        elif isinstance(item, IgnoredEvents):
            self.ignored[item.file] = self.ignored.get(item.file, 0) + item.count
        elif isinstance(item, FileRead):
            self.formats[item.file] = item.format
        elif isinstance(item, InputError):
            self.input_errors.append(item)
        else:  # (kept as an input error, it was an AttributeError when the run was read)
            raise TypeError(f"evaluate() takes what load_traces() gives (Trace, InputError, "
                            f"IgnoredEvents, FileRead), not {type(item).__name__}: give it "
                            "load_traces(PATHS, suite)")

    def add_trace(self, trace: Trace, suite: Suite) -> None:
        n = len(trace.tool_calls)
        self.tool_calls += n
        self.llm_calls += len(trace.llm_calls)
        failed: list[str] = []
        clock = time.perf_counter
        spill = self.spill
        for test in suite.tests:
            acc = self.tests[test.id]
            start = clock()
            found = 0
            # one at a time: beyond SPILL_AT held, to a run at once, even within one trace
            for finding in test.findings(trace):
                acc.violations.append(finding)
                found += 1
                self.held += 1
                if self.held > spilling.SPILL_AT and spill is not None:
                    paused = clock()
                    self.write_run()  # every test's findings: not this test's time
                    start += clock() - paused
            acc.seconds += clock() - start
            acc.traces_checked += 1
            acc.calls_checked += n
            if found:
                acc.traces_failed += 1
                failed.append(test.id)
        self.traces.append(TraceSummary(trace.id, trace.source, trace.location.line,
                                        trace.scenario, n, tuple(failed)))
        if self.scenarios is not None and suite.scenarios is not None:
            self.scenarios.add(trace, suite.scenarios)
        self.see_calls(trace, suite)

    def see_calls(self, trace: Trace, suite: Suite) -> None:
        """What a trace's calls exercise of the config (coverage), and nothing else: a
        shard sees every trace so (sharding.py)."""
        coverage = self.coverage
        seen = coverage.names
        for name in call_names(trace.tool_calls):  # a CallLog's without reading its calls
            if name not in seen:
                coverage.see(name, suite.coverage)

    def write_run(self) -> None:
        """Every finding held in memory written to one new run of the spill, each list
        sorted (in the order found when keys tie) and replaced by its segment."""
        if self.spill is None or not self.held:
            return
        lists: list[tuple[_TestAcc, int]] = []
        for acc in self.tests.values():
            acc.earlier = acc.sources()
            acc.violations = []
            lists += [(acc, i) for i, s in enumerate(acc.earlier) if isinstance(s, list)]
        for acc, i in lists:
            self._note_ends(acc.earlier[i])  # type: ignore[arg-type]
        segments = spilling.write_run(self.spill, (
            sorted(acc.earlier[i], key=sort_key) for acc, i in lists), sort_key)
        for (acc, i), segment in zip(lists, segments, strict=True):
            acc.earlier[i] = segment
        self.held = 0

    def _note_ends(self, findings: list[Finding]) -> None:
        for f in findings:
            t = f.trace
            if t is not None:
                self._note_end(t.trace_id, (t.file, t.line))

    def _note_end(self, trace_id: str, end: tuple[str, int]) -> None:
        seen = self.ends.get(trace_id)
        if seen is None or seen < end:
            self.ends[trace_id] = end

    def merge(self, other: Accumulator) -> None:
        for tid, end in other.ends.items():
            self._note_end(tid, end)
        for tid, acc in other.tests.items():
            mine = self.tests[tid]
            self.held += acc.held()
            if acc.earlier:  # what the other found comes after all that was found here
                mine.earlier = mine.sources()
                mine.violations = []
                mine.earlier += acc.earlier
            mine.violations.extend(acc.violations)
            mine.traces_checked += acc.traces_checked
            mine.traces_failed += acc.traces_failed
            mine.calls_checked += acc.calls_checked
            mine.seconds += acc.seconds
        self.traces.extend(other.traces)
        self.input_errors.extend(other.input_errors)
        for f, c in other.ignored.items():
            self.ignored[f] = self.ignored.get(f, 0) + c
        self.formats.update(other.formats)
        self.tool_calls += other.tool_calls
        self.llm_calls += other.llm_calls
        if self.scenarios is not None and other.scenarios is not None:
            self.scenarios.merge(other.scenarios)
        if other.coverage is not self.coverage:
            self.coverage.merge(other.coverage)
        if self.held > spilling.SPILL_AT and self.spill is not None:
            self.write_run()

    @gc_paused()  # sorts, fingerprints and cleans every finding: no cycles made
    def finish(self, suite: Suite, *, timings: bool = True,
               any_traces: bool | None = None, strict_coverage: bool = False) -> Results:
        """The results (``any_traces``: whether any trace was read at all, when this
        accumulator holds only some of them, as a shard's does; ``strict_coverage``:
        a rule that never touched a call is an error, whatever the suite says)."""
        tests: list[TestResult] = []
        touched = self.coverage.touched
        if any(isinstance(s, Segment) for acc in self.tests.values() for s in acc.earlier):
            for acc in self.tests.values():
                for s in acc.sources():
                    if isinstance(s, list):
                        self._note_ends(s)
        for j, test in enumerate(suite.tests):
            acc = self.tests[test.id]
            violations: list[Finding] | SpilledFindings
            if self.spill is not None and any(isinstance(s, Segment) for s in acc.earlier):
                violations, severities = self._final_run(acc, suite, self.spill, self.ends)
            else:
                violations = sorted((v for s in acc.sources() for v in s), key=sort_key)
                assign_fingerprints(violations)
                severities = {v.severity for v in violations}
            status = _status(severities, acc.traces_checked)
            if status == "pass" and not touched[j]:
                status = "not_exercised"  # no call it checks was ever made
            tests.append(TestResult(
                id=test.id, metric=test.metric, severity=test.severity,
                status=status,
                duration_ms=round(acc.seconds * 1000) if timings else 0,
                traces_checked=acc.traces_checked, traces_failed=acc.traces_failed,
                calls_checked=acc.calls_checked, violations=violations,
            ))
        severity: Severity = "error" if strict_coverage else suite.model.unexercised
        unexercised = coverage_findings(suite.coverage, self.coverage, severity,
                                        len(self.traces))
        unexercised = [*suite.notes, *unexercised]  # a peer config's unsupported keys
        assign_fingerprints(unexercised)
        errors = list(self.input_errors)
        no_traces = not self.traces if any_traces is None else not any_traces
        if no_traces and not any(e.rule == INPUT_NO_TRACES.id for e in errors):
            line = suite.positions.get(("traces",)).line if suite.model.traces else 0
            errors.append(INPUT_NO_TRACES.input_error(suite.file, line,
                                     "no traces were read from the trace files; nothing was "
                                     "checked"))
        total = sum(len(t.violations) for t in tests)
        scenarios: list[ScenarioResult] = []
        metrics: Metrics = {}
        criteria: list[CriterionResult] = []
        judge = None
        if self.scenarios is not None and suite.scenarios is not None:
            outcome = self.scenarios.finish(suite.scenarios, timings=timings)
            scenarios, metrics, criteria = outcome.scenarios, outcome.metrics, outcome.criteria
            errors.extend(outcome.judge_errors)  # judgements missing: docs/judge.md
            judge = outcome.judge
            # traces naming a scenario id the suite does not have (fingerprinted by it)
            unexercised.extend(outcome.unknown_ids)
        errors.sort(key=lambda e: (e.file, e.line, e.rule, e.message))
        results = Results(
            inventory=inventory(suite),
            suite=suite.name,
            config=suite.file,
            verdict="pass",
            counts={"traces": len(self.traces), "tool_calls": self.tool_calls,
                    "llm_calls": self.llm_calls, "violations": total,
                    "input_errors": len(errors),
                    "ignored_events": sum(self.ignored.values()),
                    "unexercised": len(unexercised)},
            tests=tests,
            traces=self.traces,
            input_errors=errors,
            ignored_events=dict(sorted(self.ignored.items())),
            formats=dict(sorted(self.formats.items())),
            scenarios=scenarios,
            metrics=metrics,
            criteria=criteria,
            unexercised=unexercised,
            judge=judge,
        )
        results.verdict = verdict_of(results)
        if self.spill is not None and self.spill.path is not None:
            final = {s.path for t in tests if isinstance(t.violations, SpilledFindings)
                     for s in t.violations.segments}
            for entry in os.scandir(self.spill.path):  # every finding is in a final run
                if entry.path not in final:
                    with contextlib.suppress(OSError):
                        os.remove(entry.path)
        return clean_results(results, suite.limits)

    @staticmethod
    def _final_run(acc: _TestAcc, suite: Suite, spill: Spill,
                   ends: dict[str, tuple[str, int]]) -> tuple[SpilledFindings, set[str]]:
        """A test's findings merge-sorted from their runs, given their fingerprints and
        made safe to show (as :func:`assign_fingerprints` and :func:`clean_results` do
        with findings in memory), written to one final run.

        The occurrence counts of the fingerprints are kept per trace id only until the
        walk has passed the last finding of that id (``ends``: the findings are sorted by
        file and line first), so they are held for the traces around the walk, not for
        every finding."""
        seen: dict[str, int] = {}
        of_trace: dict[str, list[str]] = {}  # trace id -> its bases in seen
        due: list[tuple[str, int, str]] = []  # heap: (last file, last line, trace id)
        severities: set[str] = set()
        limits = suite.limits
        sources = [sorted(s, key=sort_key) if isinstance(s, list) else s
                   for s in acc.sources()]

        def final() -> Iterable[Finding]:
            for v in spilling.merged(spill, sources, sort_key):
                base = fingerprint_base(v)
                t = v.trace
                if t is not None:
                    while due and (due[0][0], due[0][1]) < (t.file, t.line):
                        for gone in of_trace.pop(heapq.heappop(due)[2]):
                            del seen[gone]
                    if base not in seen:
                        bases = of_trace.get(t.trace_id)
                        if bases is None:
                            bases = of_trace[t.trace_id] = []
                            heapq.heappush(due, (*ends[t.trace_id], t.trace_id))
                        bases.append(base)
                fingerprint(v, seen, base)
                clean_finding(v, limits)
                severities.add(v.severity)
                yield v

        return SpilledFindings(spill, spilling.write_run(spill, [final()])), severities


def _status(severities: set[str], checked: int) -> Status:
    if checked == 0:
        return "error"
    if "error" in severities:
        return "fail"
    if "warning" in severities:
        return "warn"
    return "pass"


def evaluate(suite: Suite, items: Iterable[ReadItem], *, timings: bool = True,
             progress: Callable[[int], None] | None = None,
             strict_coverage: bool = False,
             spill_dir: str | os.PathLike[str] | None = None) -> Results:
    """Evaluate a stream of traces (and reader records) against the suite. Beyond
    :data:`spill.SPILL_AT` findings, findings are kept in a private folder made in
    ``spill_dir`` (default: the system's temporary folder), removed with them."""
    # values as deep as limits.max_depth allows are checked, not a crash: the library's
    # evaluate() comes here without evaluate_files (a RecursionError at Python's default
    # limit, where `run` checked the same trace)
    deep_enough()
    spill = Spill(spill_dir)
    with _removed_on_error(spill):
        acc = Accumulator.for_suite(suite, spill)
        add = acc.add
        count = 0
        for item in items:
            add(item, suite)
            if progress is not None:
                count += 1
                if count % 1000 == 0:
                    progress(count)
        return acc.finish(suite, timings=timings, strict_coverage=strict_coverage)


@contextlib.contextmanager
def _removed_on_error(spill: Spill) -> Iterator[None]:
    """The spill folder removed at once when the evaluation stops (an error, Ctrl-C).
    Meanwhile the very long traces' calls (:class:`agent_eval.model.CallLog`) are kept in
    unnamed files beside it (:meth:`Spill.beside`)."""
    before = log_folder(spill.beside)
    try:
        yield
    except BaseException:
        spill.close()
        raise
    finally:
        log_folder(before)


# ------------------------------------------------------------------ files, jobs
# ``--jobs auto``: one process below AUTO_MIN_BYTES of input (starting workers and merging
# their results would cost more than they save); above it one worker per CPU, the work cut
# into parts of at least PART_MIN_BYTES (whole files, or byte ranges of a large native
# JSONL file cut at trace_start lines), about PARTS_PER_JOB parts per worker so that the
# workers finish together. docs/performance.md has the measurements behind the figures.
AUTO_MIN_BYTES = 8 << 20
PART_MIN_BYTES = 2 << 20
PARTS_PER_JOB = 4


@dataclass(frozen=True, slots=True)
class Part:
    """A unit of work for a worker: a whole file (``end`` < 0), or the byte range
    [start, end) of a native JSONL file that starts at line ``first_line``."""

    file: int  # index in the files
    start: int = 0
    end: int = -1
    first_line: int = 1
    last: bool = True  # the file's last range


class WorkerTraceback(Exception):
    """The traceback of an exception raised in a ``--jobs`` worker, as the cause of the
    parent's internal error: printed before it, so that "report it with the traceback
    above" has the worker's (the parent's own says only where it received the news).
    Escaped as any text a log shows (the exception's message may quote a trace), each
    line behind a bar."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = log_block(text.rstrip("\n"), MAX_TRACEBACK_CHARS)

    def __str__(self) -> str:
        return "the worker's traceback:\n" + self.text


MAX_TRACEBACK_CHARS = 20_000
# --jobs N starts at most this many workers per CPU: a number past it is no faster, and
# --jobs 1000 over 2,000 files started 1,000 processes (each a copy of the suite)
MAX_JOBS_PER_CPU = 4


def cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _size(source: SourceFile) -> int:
    try:
        return os.path.getsize(source.path)
    except OSError:
        return 0


def resolve_jobs(jobs: int | str, files: list[SourceFile]) -> int:
    """``--jobs``: a number as it is (at most :data:`MAX_JOBS_PER_CPU` per CPU), ``auto``
    one process for a small input (below :data:`AUTO_MIN_BYTES`) and one per CPU
    otherwise."""
    if jobs != "auto":
        return max(1, min(int(jobs), MAX_JOBS_PER_CPU * cpu_count()))
    if sum(_size(f) for f in files) < AUTO_MIN_BYTES:
        return 1
    return cpu_count()


def plan(files: list[SourceFile], fmt: str, jobs: int) -> list[Part]:
    """The parts of the work, in read order: every file whole, except a large native
    JSONL file, which is cut into byte ranges at ``trace_start`` lines."""
    sizes = [_size(f) for f in files]
    target = max(PART_MIN_BYTES, sum(sizes) // max(1, jobs * PARTS_PER_JOB))
    parts: list[Part] = []
    for i, (source, size) in enumerate(zip(files, sizes, strict=True)):
        if 2 * size >= 3 * target and _native_lines(source, fmt):
            parts += _ranges(i, source, size, target)
        else:
            parts.append(Part(i))
    return parts


def _native_lines(source: SourceFile, fmt: str) -> bool:
    fmt = source.format or fmt
    if source.path.endswith(".json"):
        return False  # a document: read whole
    return (fmt == "native" if fmt not in ("auto", "")
            else pick_reader(source, fmt) is native.READER)


def _ranges(index: int, source: SourceFile, size: int, target: int) -> list[Part]:
    """Byte ranges of about ``target`` bytes, each starting at a trace_start line (found
    by reading forward from each cut), with their first line numbers."""
    cap = source.limits.max_file_bytes
    step = size // max(1, round(size / target))
    cuts = [0]
    try:
        with open(source.path, "rb") as fh:
            for k in range(1, round(size / target)):
                at = k * step
                if at <= cuts[-1]:
                    continue
                fh.seek(at - 1)
                fh.readline(cap + 1)  # to the start of the next line
                while True:
                    pos = fh.tell()
                    raw = fh.readline(cap + 1)
                    if not raw or len(raw) > cap or pos >= at + step:
                        break  # no trace starts near this cut: the range runs on
                    if trace_start_line(raw):
                        cuts.append(pos)
                        break
            if len(cuts) == 1:
                return [Part(index)]
            lines = [1]
            fh.seek(0)
            pos, count = 0, 0
            for cut in cuts[1:]:
                while pos < cut:
                    block = fh.read(min(1 << 20, cut - pos))
                    if not block:
                        return [Part(index)]  # the file shrank meanwhile
                    count += block.count(b"\n")
                    pos += len(block)
                lines.append(count + 1)
    except OSError:
        return [Part(index)]  # the worker reads it whole and reports the error
    ends = [*cuts[1:], size]
    return [Part(index, start, end, line, k == len(cuts) - 1)
            for k, (start, end, line) in enumerate(zip(cuts, ends, lines, strict=True))]


def _eval_part(suite: Suite, files: list[SourceFile], part: Part, fmt: str,
               spill: Spill | None = None) -> tuple[Accumulator, bool, list[str]]:
    """A part's accumulator; for a byte range, also whether it is clean (reading it alone
    cannot differ from reading the whole file) and the trace ids it opened."""
    source = files[part.file]
    acc = Accumulator.for_suite(suite, spill)
    if part.end < 0:
        for item in read_sources([source], fmt):
            acc.add(item, suite)
        return acc, True, []
    rng = NativeRange(part.start, part.end, part.first_line, part.last)
    if part.start == 0:
        acc.add(FileRead(source.file, rng.name), suite)
    for item in read_file(rng, source):
        acc.add(item, suite)
    return acc, rng.clean, rng.ids


def _worker(conn: Connection, suite: Suite, files: list[SourceFile], fmt: str,
            spill: Spill) -> None:
    """A --jobs process: evaluates each part it is sent, until None. Its findings beyond
    spill.SPILL_AT go to runs in the parent's spill folder (the parent receives their
    segments, not the findings). Its very long traces' calls go beside the spill folder,
    as in the parent (a spawned worker starts without the parent's setting)."""
    log_folder(spill.beside)
    deep_enough()  # a spawned worker starts with Python's default limit
    try:
        while True:
            task = conn.recv()
            if task is None:
                return
            key, part = task
            try:
                _send(conn, (key, _eval_part(suite, files, part, fmt, spill), None))
            except Exception as exc:  # a bug: the parent reports it as an internal error
                import traceback  # (only on a bug: start-up time)

                _send(conn, (key, None, (f"{type(exc).__name__}: {exc}",
                                         traceback.format_exc())))
    except KeyboardInterrupt:
        # Ctrl-C reaches every process of the group: the parent says "interrupted" and
        # removes the spill; a worker's traceback of it would read as a crash. (A worker
        # interrupted alone still ends the run: the parent finds it gone, WorkerDied.)
        return


# what a worker's results hold by the thousand
_WIRE = {**spilling.WIRE, TraceSummary: spilling.by_fields(TraceSummary)}


def _send(conn: Connection, obj: object) -> None:
    import pickle  # (start-up time: as multiprocessing, only in runs with workers)

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _WIRE
    pickler.dump(obj)
    conn.send_bytes(buffer.getbuffer())


def _death(code: int | None) -> str:
    if code is not None and code < 0:
        import signal  # (start-up time: its enums are made when imported)

        try:
            return f"it was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"it was killed by signal {-code}"
    return f"it exited with code {code}"


def _same_as_whole(results: list[tuple[Accumulator, bool, list[str]]]) -> bool:
    """Whether a file's parts, merged in order, are what reading it whole gives."""
    if len(results) == 1:
        return True
    seen: set[str] = set()
    for _, clean, ids in results:
        if not clean:
            return False
        for tid in ids:
            if tid in seen:
                return False
            seen.add(tid)
    return True


def _bound_errors(parts: list[Accumulator], source: SourceFile) -> None:
    """The input errors of a file's parts bounded again as the whole file's are
    (``limits.max_input_errors``): each part kept its first ones and counted the others;
    in read order, the file keeps its first ones and one error counts all the others."""
    bound = ErrorBound(source.file, source.limits.max_input_errors)
    for part in parts:
        part.input_errors = [e for e in part.input_errors if bound.keep(e)]
    more = bound.more()
    if more is not None:
        parts[-1].input_errors.append(more)


def _evaluate_in_processes(suite: Suite, files: list[SourceFile], parts: list[Part],
                           fmt: str, jobs: int, acc: Accumulator,
                           progress: Callable[[int], None] | None) -> None:
    """Each part in one of ``jobs`` worker processes, merged in read order. A file whose
    ranges are not interchangeable with the whole file (:func:`_same_as_whole`) is read
    again whole. A worker that dies (a crash, the OOM killer) stops the run at once with
    :class:`WorkerDied` naming the file it was reading, never a hang."""
    # lazy for start-up time: a run in one process (a small input) never needs them
    import multiprocessing
    import pickle
    from multiprocessing.connection import wait

    spill = acc.spill or Spill()
    spill.folder()  # made before the workers start: they write their runs into it
    methods = multiprocessing.get_all_start_methods()
    ctx: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    workers: list[tuple[Any, Connection]] = []
    busy: dict[int, tuple[int, Part]] = {}  # worker -> (key, part) it is reading
    todo: deque[tuple[int, Part]] = deque(enumerate(parts))
    of_file: dict[int, list[int]] = {}  # file -> the keys of its parts, in order
    for key, part in enumerate(parts):
        of_file.setdefault(part.file, []).append(key)
    done: dict[int, tuple[Accumulator, bool, list[str]]] = {}
    next_key = len(parts)
    merged = 0  # files merged so far
    try:
        for _ in range(min(jobs, len(parts))):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, suite, files, fmt, spill),
                               daemon=True)
            proc.start()
            child.close()
            workers.append((proc, parent))
        # The parent only receives, unpickles and merges here: many objects and no
        # cycles, where each full collection would walk every finding merged so far
        # again. Paused once the workers are started (a forked worker keeps the
        # collector's state, and its reading may make cycles).
        with gc_paused():
            while merged < len(files):
                for w, (_, conn) in enumerate(workers):
                    if w not in busy and todo:
                        busy[w] = todo.popleft()
                        conn.send(busy[w])
                while merged < len(files) and all(k in done for k in of_file[merged]):
                    results = [done.pop(k) for k in of_file[merged]]
                    if not _same_as_whole(results):  # read again, whole, first
                        of_file[merged] = [next_key]
                        todo.appendleft((next_key, Part(merged)))
                        next_key += 1
                        break
                    if len(results) > 1:  # one file's input errors: one bound
                        _bound_errors([r[0] for r in results], files[merged])
                    for part_acc, _, _ in results:  # in read order: as one process
                        acc.merge(part_acc)
                    merged += 1
                    if progress is not None:
                        progress(len(acc.traces))
                if merged == len(files) or not busy:
                    continue
                ready = wait([workers[w][1] for w in busy] + [workers[w][0].sentinel
                                                            for w in busy])
                for w in list(busy):
                    proc, conn = workers[w]
                    if conn not in ready and proc.sentinel not in ready:
                        continue
                    try:
                        key, result, failure = pickle.loads(conn.recv_bytes())
                    except (EOFError, OSError):
                        proc.join(1)
                        source = files[busy[w][1].file]
                        raise WorkerDied([
                            f"{source.file}: the worker process reading this file died "
                            f"({_death(proc.exitcode)}); nothing was written. Run again with "
                            "--jobs 1 to see the problem, or check the machine's memory"
                        ]) from None
                    if failure is not None:  # the worker's traceback is what to report
                        raise RuntimeError(f"while reading {files[busy[w][1].file].file}: "
                                           f"{one_line(failure[0])}"
                                           ) from WorkerTraceback(failure[1])
                    done[key] = result
                    del busy[w]
                    if sum(r[0].held for r in done.values()) > spilling.SPILL_AT:
                        for r in done.values():  # results waiting for their turn: to runs
                            r[0].write_run()
    finally:
        for _, conn in workers:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        for proc, _ in workers:
            proc.join(0.5)
            if proc.is_alive():
                proc.kill()
                proc.join()


def evaluate_files(suite: Suite, files: list[SourceFile], errors: Iterable[ReadItem] = (),
                   *, jobs: int | str = 1, timings: bool = True, fmt: str | None = None,
                   progress: Callable[[int], None] | None = None,
                   strict_coverage: bool = False,
                   spill_dir: str | os.PathLike[str] | None = None) -> Results:
    """Evaluate trace files, in several processes when ``jobs`` (a number, or ``"auto"``:
    :func:`resolve_jobs`) is more than 1. The merged result is identical to a
    single-process run (parts are merged in read order). ``spill_dir``: as
    :func:`evaluate`."""
    fmt = fmt or suite.format
    deep_enough()  # values as deep as limits.max_depth allows are checked, not a crash
    spill = Spill(spill_dir)
    with _removed_on_error(spill):
        acc = Accumulator.for_suite(suite, spill)
        for item in errors:
            acc.add(item, suite)
        n = resolve_jobs(jobs, files)
        parts = plan(files, fmt, n) if n > 1 else []
        if len(parts) <= 1:
            for count, item in enumerate(read_sources(files, fmt), 1):
                acc.add(item, suite)
                if progress is not None and count % 1000 == 0:
                    progress(len(acc.traces))
        else:
            _evaluate_in_processes(suite, files, parts, fmt, n, acc, progress)
        return acc.finish(suite, timings=timings, strict_coverage=strict_coverage)
