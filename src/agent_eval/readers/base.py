"""The reader interface: a format turns one file into canonical traces.

A reader yields :class:`Trace` objects and :class:`InputError` records in file order
and never raises for bad content: a bad line is an error record and reading goes on.
Adding a format is one module with a ``READER`` object plus one line in the registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from agent_eval.errors import InputError
from agent_eval.limits import DEFAULT, Limits
from agent_eval.model import Trace
from agent_eval.rule_ids import INPUT_INVALID_EVENT


@dataclass(frozen=True, slots=True)
class IgnoredEvents:
    """Not an error: how many events of unknown type a file held (they are ignored,
    for forward compatibility, and counted in the results)."""

    file: str
    count: int


@dataclass(frozen=True, slots=True)
class FileRead:
    """Which reader read a file (``format: auto`` reports its choice per file)."""

    file: str
    format: str


ReadItem = Trace | InputError | IgnoredEvents | FileRead


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A trace file to read: where it is on disk and in the repository."""

    path: str  # absolute path on disk
    file: str  # repo-relative path, used in every location
    trace_id: str  # default trace id: the path relative to the config's folder
    limits: Limits = DEFAULT  # the suite's limits: a reader reads the file within them


class Reader(Protocol):
    name: str

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        """True when ``head`` (the first KiB of the file) looks like this format."""
        ...

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        ...


# The largest token count, cost (USD) or latency/duration (ms) a trace may hold: far over
# any real one (10^15 ms is 31,000 years), and small enough that no sum of such figures
# over any number of calls a trace can hold overflows a float (docs/formats.md "Numbers").
FIGURE_MAX = 10**15


def bad_figure(value: float) -> bool:
    """A figure no real trace holds: below 0, NaN, over :data:`FIGURE_MAX` or infinite
    (a comparison, so as cheap as the check for below 0 it extends)."""
    return not 0 <= value <= FIGURE_MAX


def negative_figure(what: str, key: str, value: object, file: str, line: int) -> InputError:
    """The input error of a figure below 0 or over :data:`FIGURE_MAX` (or NaN, or
    infinite), in every format (``what``: whose figure, as a prefix of the message:
    "the trace's ", "send_email: ")."""
    if isinstance(value, int | float) and value > FIGURE_MAX:
        return InputError(INPUT_INVALID_EVENT.id, file, line,
                          f"{what}'{key}' must be a number of at most 10^15 (no real trace "
                          f"holds more), not {value!r}; it is treated as not recorded")
    return InputError(INPUT_INVALID_EVENT.id, file, line,
                      f"{what}'{key}' must be a number of at least 0, not {value!r}; it is "
                      "treated as not recorded")
