"""The canonical trace model. Every reader produces it; the checks see nothing else.

Plain slotted dataclasses: cheap to build per event and picklable. Numbers that a
trace did not record are ``None`` (unknown), never zero.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, Any, TypeVar, overload


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was recorded: a repo-relative file and a 1-based line."""

    file: str
    line: int


_new = object.__new__
_set_file = vars(Location)["file"].__set__  # the slots' own setters
_set_line = vars(Location)["line"].__set__


def location(file: str, line: int) -> Location:
    """``Location(file, line)``, built without the frozen dataclass's ``__init__`` (which
    sets each field through ``object.__setattr__``): readers make one per event line, so
    it counts."""
    loc: Location = _new(Location)
    _set_file(loc, file)
    _set_line(loc, line)
    return loc


@dataclass(slots=True)
class ToolCall:
    """One call of a tool in a trace: its name, arguments and result, and where the
    trace holds them."""

    name: str
    arguments: Any  # a dict when decodable; otherwise the raw value (see arguments_error)
    location: Location
    id: str | None = None
    result: Any = None
    error: str | None = None
    ok: bool = True
    latency_ms: float | None = None
    result_location: Location | None = None
    arguments_error: str | None = None  # why ``arguments`` is not a JSON object
    has_result: bool = False
    # False when the trace does not hold the call's arguments at all (``arguments`` is
    # then None): a result without its call, or a format that records them only on
    # request (OpenTelemetry, Agents SDK, Vercel AI SDK). Not the same as ``null``.
    arguments_recorded: bool = True


# ------------------------------------------------------------------ very long traces
# A trace's calls are a list. A reader may hand a very long trace's calls over as a
# CallLog instead (the native reader does beyond LONG_TRACE calls), which keeps only its
# latest KEEP calls in memory and the others on disk, so that one trace costs about 40-60
# bytes of memory a call (its name, its id's slot) instead of about 700
# (docs/architecture.md "Very long traces").
LONG_TRACE = 50_000  # calls of one trace held as a list; beyond, a CallLog
LOG_CHUNK = 4_096  # calls written to disk together (and read back together)
LOG_KEEP = 4_096  # the latest calls kept in memory, where a reader still updates them
_intern = sys.intern
# where a CallLog makes its temporary file: a function giving the folder (the engine's
# gives where its spill folder goes: the output folder, or RUNNER_TEMP for the action;
# None from it, or no function, is the system's temporary folder). A context variable:
# each thread (and asyncio task) has its own, so that evaluations running at once in one
# process each keep their long traces beside their own output.
_log_folder: ContextVar[Callable[[], str | None] | None] = ContextVar(
    "agent_eval_log_folder", default=None)


def log_folder(where: Callable[[], str | None] | None) -> Callable[[], str | None] | None:
    """Set where the CallLogs made in this thread (this context) make their temporary
    file; returns the setting it replaces."""
    before = _log_folder.get()
    _log_folder.set(where)
    return before


class CallLogError(RuntimeError):
    """A CallLog could not write its temporary file: the reader reports it as an input
    error of the trace's file (``read_file``), never as a file it could not read."""


class CallLog(Sequence[ToolCall]):
    """The tool calls of a very long trace, in order: a sequence like the list it
    replaces, but all except the latest :data:`LOG_KEEP` calls are pickled in chunks of
    :data:`LOG_CHUNK` to an anonymous temporary file (unlinked when made: nothing is left
    on disk, whatever ends the process) and made again each time their chunk is read
    (the chunk read last is kept).

    So a change made to a call read from the log is lost once its chunk is read again;
    :meth:`update` is how a call is changed (how a reader attaches a result to a call that
    may be on disk already, and how ``clean_trace`` renames one)."""

    __slots__ = ("_cache", "_cache_at", "_chunks", "_file", "_names", "_patches", "_spilled",
                 "_tail")

    def __init__(self, calls: Sequence[ToolCall] = ()) -> None:
        self._file: IO[bytes] | None = None
        self._chunks: list[tuple[int, int]] = []  # (offset, size) of each written chunk
        self._spilled = 0  # calls in the written chunks: the first ones
        self._tail: list[ToolCall] = []  # the calls after them, in memory
        # index of a written call -> the fields set on it since (see update)
        self._patches: dict[int, dict[str, Any]] = {}
        self._cache: list[ToolCall] = []  # the calls of the chunk read last
        self._cache_at = -1  # that chunk's number
        # every call's name, in memory (8 bytes a call: the names are interned), for the
        # walks that need only them (call_names)
        self._names: list[str] = []
        for call in calls:
            self.append(call)

    # ------------------------------------------------------------ writing
    def append(self, call: ToolCall) -> None:
        self._names.append(_intern(call.name))
        tail = self._tail
        tail.append(call)
        if len(tail) >= LOG_KEEP + LOG_CHUNK:
            self._write(tail[:LOG_CHUNK])
            del tail[:LOG_CHUNK]

    def _write(self, calls: list[ToolCall]) -> None:
        import pickle  # lazy for start-up time, as tempfile: only a very long trace needs it

        fh = self._file
        data = pickle.dumps([_pack(c) for c in calls], protocol=pickle.HIGHEST_PROTOCOL)
        folder = None
        try:
            if fh is None:
                import tempfile  # lazy for start-up time: only a very long trace needs it

                where = _log_folder.get()
                folder = None if where is None else where()
                fh = self._file = tempfile.TemporaryFile(  # noqa: SIM115 (closed by __del__)
                    prefix=".agent-eval-calls-", dir=folder)
            offset = fh.seek(0, 2)
            fh.write(data)
        except OSError as exc:  # the disk is full, the folder cannot be written
            raise CallLogError(
                f"cannot keep the calls of a trace of more than {LONG_TRACE:,} calls in a "
                f"temporary file ({folder or 'the temporary folder'}: {exc}); free space "
                "there, or point TMPDIR (or run's --output-dir) at a disk with room") from exc
        self._chunks.append((offset, len(data)))
        self._spilled += len(calls)

    def update(self, index: int, fields: dict[str, Any]) -> None:
        """Set fields of the call at ``index`` (``call.result = ...``), wherever it is."""
        if "name" in fields:
            self._names[index] = _intern(fields["name"])
        if index >= self._spilled:
            call = self._tail[index - self._spilled]
            for name, value in fields.items():
                setattr(call, name, value)
            return
        if "name" in fields:  # a call read from disk takes its name from _names: no patch
            fields = {k: v for k, v in fields.items() if k != "name"}
        if fields:
            self._patches.setdefault(index, {}).update(fields)
        if index // LOG_CHUNK == self._cache_at:
            self._cache_at = -1  # read again, with the change

    def names(self) -> Sequence[str]:
        """The calls' names, in order: the log's own list (no copy of a million names for
        each check that reads them), so not to be changed."""
        return self._names

    # ------------------------------------------------------------ reading
    def _chunk(self, number: int) -> list[ToolCall]:
        if number == self._cache_at:
            return self._cache
        fh = self._file
        assert fh is not None
        offset, size = self._chunks[number]
        fh.seek(offset)
        data = fh.read(size)
        if len(data) != size:
            raise OSError("the temporary file of a long trace's calls was cut short")
        import pickle  # (start-up time: see _write)

        first = number * LOG_CHUNK
        calls = [_unpack(p, name) for p, name in zip(pickle.loads(data),
                                                     self._names[first:first + LOG_CHUNK],
                                                     strict=True)]
        patches = self._patches
        if patches:
            for i, call in enumerate(calls, first):
                fields = patches.get(i)
                if fields is not None:
                    for name, value in fields.items():
                        setattr(call, name, value)
        self._cache, self._cache_at = calls, number
        return calls

    def __len__(self) -> int:
        return self._spilled + len(self._tail)

    def __iter__(self) -> Iterator[ToolCall]:
        for number in range(len(self._chunks)):
            yield from self._chunk(number)
        yield from list(self._tail)  # a copy: appending while walking is not seen

    def pick(self, indexes: Iterable[int]) -> Iterator[ToolCall]:
        """The calls at these indexes (ascending), each chunk read once: how a check
        reads only the calls it needs (its names tell which)."""
        spilled, tail = self._spilled, self._tail
        number, chunk = -1, self._cache
        for i in indexes:
            if i >= spilled:
                yield tail[i - spilled]
                continue
            if i // LOG_CHUNK != number:
                number = i // LOG_CHUNK
                chunk = self._chunk(number)
            yield chunk[i - number * LOG_CHUNK]

    @overload
    def __getitem__(self, index: int) -> ToolCall: ...

    @overload
    def __getitem__(self, index: slice) -> list[ToolCall]: ...

    def __getitem__(self, index: int | slice) -> ToolCall | list[ToolCall]:
        n = len(self)
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(n))]
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("call index out of range")
        if index >= self._spilled:
            return self._tail[index - self._spilled]
        return self._chunk(index // LOG_CHUNK)[index % LOG_CHUNK]

    def __del__(self) -> None:
        if self._file is not None:
            self._file.close()

    def __reduce__(self) -> tuple[Any, ...]:
        return (CallLog, (list(self),))  # the calls themselves, not the file

    def __repr__(self) -> str:
        return f"CallLog({len(self)} calls, {self._spilled} on disk)"


def call_names(calls: Sequence[ToolCall]) -> Sequence[str]:
    """The names of the calls, in order (of a CallLog without reading its calls)."""
    if isinstance(calls, CallLog):
        return calls.names()
    return [c.name for c in calls]


def calls_to_read(calls: Sequence[ToolCall], wanted: Callable[[str], object]
                  ) -> Iterable[ToolCall]:
    """The calls a check walks: all of a list; of a CallLog only those whose name
    ``wanted`` accepts, read from disk (the others would be read for nothing). The check
    still tests each call it gets, as for a list."""
    if isinstance(calls, CallLog):
        return calls.pick(i for i, name in enumerate(calls.names()) if wanted(name))
    return calls


def _pack(c: ToolCall) -> tuple[Any, ...]:
    """A call as written to disk, without its name (the log holds the names)."""
    rl = c.result_location
    return (c.arguments, c.location.file, c.location.line, c.id, c.result, c.error,
            c.ok, c.latency_ms, None if rl is None else rl.file,
            None if rl is None else rl.line, c.arguments_error, c.has_result,
            c.arguments_recorded)


def _unpack(p: tuple[Any, ...], name: str) -> ToolCall:
    """The call packed as ``p``, with its name as the log has it now (a rename is not
    written to disk)."""
    (args, file, line, cid, result, error, ok, latency, rfile, rline, why, has_result,
     recorded) = p
    return ToolCall(name, args, location(file, line), cid, result, error, ok, latency,
                    None if rfile is None else location(rfile, rline), why, has_result,
                    recorded)


@dataclass(slots=True)
class LlmCall:
    """One call of a model in a trace: the model, its tokens, cost and latency."""

    location: Location
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Handoff:
    """Control passed from one agent to another (an OpenAI Agents SDK handoff span, a
    native handoff event, a LangGraph node transition between agent nodes)."""

    to_agent: str
    location: Location
    from_agent: str | None = None


@dataclass(slots=True)
class Score:
    """A score (feedback, evaluation result) recorded in the trace by an evaluator: a
    LangSmith feedback, an Inspect scorer's value, an OpenTelemetry GenAI evaluation event
    or a native ``score`` event. ``value`` is numeric when the format has a number (or a
    label with a standard meaning: see :func:`score_value`), else None."""

    name: str
    value: float | None
    location: Location
    label: str | None = None
    comment: str | None = None  # the evaluator's explanation (untrusted text)
    source: str = "native"  # the reader that found it


# Labels with a standard numeric meaning: Inspect's CORRECT / INCORRECT / PARTIAL /
# NOANSWER letters (``value_to_float``), booleans and the usual pass/fail words.
STANDARD_LABELS: dict[str, float] = {
    "c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0,
    "correct": 1.0, "incorrect": 0.0, "partial": 0.5,
    "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "pass": 1.0, "fail": 0.0,
    "passed": 1.0, "failed": 0.0,
}


def score_value(value: object) -> float | None:
    """A recorded score's value as a number: numbers as they are (booleans 1/0), strings
    that are numbers or standard labels (:data:`STANDARD_LABELS`), else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        f = float(value)
        return f if f == f and f not in (float("inf"), float("-inf")) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in STANDARD_LABELS:
            return STANDARD_LABELS[text]
        try:
            f = float(text)
        except ValueError:
            return None
        return f if f == f and f not in (float("inf"), float("-inf")) else None
    return None


_N = TypeVar("_N", int, float)


def _known_sum(values: list[_N | None], start: _N) -> _N | None:
    """``start`` plus the values in order; None when there are none or one is unknown."""
    total = start
    for value in values:
        if value is None:
            return None
        total += value
    return total if values else None


def finite_sum(values: Iterable[float]) -> float | None:
    """The exact sum (``math.fsum``: the order of the values does not change it); None,
    unknown, when it is not a finite float: a total that overflows (figures are at most
    10^15 each, so no sum of theirs does; a config's weights or a trace's recorded scores
    might), or a value that is infinite or NaN. Never an OverflowError, never infinity
    (written as null where results.json needs a number: docs/formats.md "Numbers")."""
    try:
        total = math.fsum(values)
    except (OverflowError, ValueError):  # intermediate overflow; inf + -inf
        return None
    return total if math.isfinite(total) else None


def finite_mean(values: Sequence[float]) -> float | None:
    """The mean of ``values``, summed exactly; None when there are none or one is not
    finite. A mean of finite values is finite even when their total overflows: it is
    then the exact sum of each value divided by their number."""
    n = len(values)
    if not n:
        return None
    total = finite_sum(values)
    if total is not None:
        return total / n
    if not all(math.isfinite(v) for v in values):
        return None
    return finite_sum([v / n for v in values])


@dataclass(slots=True)
class Trace:
    """One run of the agent, read from a trace file: its tool and model calls, output
    and figures (the canonical trace model every reader makes)."""

    id: str
    source: str  # repo-relative path of the file it was read from
    location: Location  # the first line of the trace
    end_location: Location  # the last line of the trace
    scenario: str | None = None
    input: Any = None
    output: Any = None
    # a list; for a very long trace, a CallLog (the same calls, most of them on disk)
    tool_calls: list[ToolCall] | CallLog = field(default_factory=list)
    llm_calls: list[LlmCall] = field(default_factory=list)
    duration_ms: float | None = None
    cost_usd: float | None = None  # recorded on the trace itself (trace_end)
    total_tokens: int | None = None  # recorded on the trace itself (trace_end)
    metadata: dict[str, Any] = field(default_factory=dict)
    format: str = "native"
    handoffs: list[Handoff] = field(default_factory=list)  # in order
    scores: list[Score] = field(default_factory=list)  # recorded by evaluators
    # whether the trace's format records handoffs, so that none recorded means none
    # happened (the native format, the OpenAI Agents SDK's, a LangGraph run); a trace
    # with a handoff recorded them whatever this says. Without it, expect.handoffs and
    # max_handoffs cannot be checked (docs/scenarios.md), never a pass.
    handoffs_recorded: bool = False

    # Derived totals: unknown (None) when any contributing figure is unknown. A total the
    # trace records itself is at least what its LLM calls recorded (no figure is below 0):
    # one below their sum contradicts them and would hide a budget overrun, so the larger.
    @property
    def tokens(self) -> int | None:
        if self.total_tokens is not None:
            if not self.llm_calls:
                return self.total_tokens
            return max(self.total_tokens, int(self.recorded_part("total_tokens")[0]))
        return _known_sum([call.total_tokens for call in self.llm_calls], 0)

    @property
    def cost(self) -> float | None:
        if self.cost_usd is not None:
            if not self.llm_calls:
                return self.cost_usd
            return max(self.cost_usd, self.recorded_part("cost_usd")[0])
        return _known_sum([call.cost_usd for call in self.llm_calls], 0.0)

    def recorded_part(self, figure: str) -> tuple[float, int]:
        """The sum of the values of a figure (``total_tokens``, ``cost_usd`` or
        ``latency_ms``) the trace's calls recorded, and how many calls recorded none. No
        value is below 0 (a reader's negative one is an input error and unknown:
        :func:`agent_eval.readers.negative_figures`), so the figure is at least that
        sum."""
        total: float = 0
        missing = 0
        if figure == "latency_ms":
            for calls in (self.tool_calls, self.llm_calls):  # one walk: a CallLog is on disk
                for c in calls:
                    if c.latency_ms is None:
                        missing += 1
                    else:
                        total += c.latency_ms
            return total, missing
        tokens = figure == "total_tokens"
        for call in self.llm_calls:
            value = call.total_tokens if tokens else call.cost_usd
            if value is None:
                missing += 1
                if tokens:  # an unknown total is at least its known parts
                    total += (call.input_tokens or 0) + (call.output_tokens or 0)
            else:
                total += value
        return total, missing

    @property
    def latency_ms(self) -> float | None:
        if self.duration_ms is not None:
            return self.duration_ms
        total: float = 0
        count = 0
        for calls in (self.tool_calls, self.llm_calls):  # one walk: a CallLog is on disk
            for c in calls:
                if c.latency_ms is None:
                    return None
                total += c.latency_ms
                count += 1
        return float(total) if count else None
