"""The canonical trace model. Every reader produces it; the checks see nothing else.

Plain slotted dataclasses: cheap to build per event and picklable. Numbers that a
trace did not record are ``None`` (unknown), never zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was recorded: a repo-relative file and a 1-based line."""

    file: str
    line: int


@dataclass(slots=True)
class ToolCall:
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


@dataclass(slots=True)
class LlmCall:
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


@dataclass(slots=True)
class Trace:
    id: str
    source: str  # repo-relative path of the file it was read from
    location: Location  # the first line of the trace
    end_location: Location  # the last line of the trace
    scenario: str | None = None
    input: Any = None
    output: Any = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    llm_calls: list[LlmCall] = field(default_factory=list)
    duration_ms: float | None = None
    cost_usd: float | None = None  # recorded on the trace itself (trace_end)
    total_tokens: int | None = None  # recorded on the trace itself (trace_end)
    metadata: dict[str, Any] = field(default_factory=dict)
    format: str = "native"
    handoffs: list[Handoff] = field(default_factory=list)  # in order
    scores: list[Score] = field(default_factory=list)  # recorded by evaluators

    # Derived totals: unknown (None) when any contributing figure is unknown.
    @property
    def tokens(self) -> int | None:
        if self.total_tokens is not None:
            return self.total_tokens
        return _known_sum([call.total_tokens for call in self.llm_calls], 0)

    @property
    def cost(self) -> float | None:
        if self.cost_usd is not None:
            return self.cost_usd
        return _known_sum([call.cost_usd for call in self.llm_calls], 0.0)

    @property
    def latency_ms(self) -> float | None:
        if self.duration_ms is not None:
            return self.duration_ms
        known = [c.latency_ms for c in self.tool_calls] + [c.latency_ms for c in self.llm_calls]
        total = _known_sum(known, 0)
        return None if total is None else float(total)
