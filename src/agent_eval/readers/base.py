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
from agent_eval.model import ToolCall, Trace
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


def negative_figure(what: str, key: str, value: object, file: str, line: int) -> InputError:
    """The input error of a figure below 0, in every format (``what``: whose figure, as
    a prefix of the message: "the trace's ", "send_email: ")."""
    return InputError(INPUT_INVALID_EVENT.id, file, line,
                      f"{what}'{key}' must be a number of at least 0, not {value!r}; it is "
                      "treated as not recorded")


def reused_call_id(cid: str, first: ToolCall, file: str, line: int) -> InputError:
    """The input error of a call whose id an earlier call of the file has, with another
    tool name or other arguments (a history repeated in a log repeats both): it is read
    as a call of its own, and said, in every format."""
    return InputError(INPUT_INVALID_EVENT.id, file, line,
                      f"call id '{cid}' reused for a different call (name/arguments differ "
                      f"from the '{first.name}' call at line {first.location.line}); it is "
                      "read as a call of its own; give each call its own id")


def same_call(call: ToolCall, name: str, arguments: object, why: str | None) -> bool:
    """True when a call recorded again under the id of ``call`` is ``call``: the same tool
    name and the same (decoded) arguments."""
    return call.name == name and call.arguments == arguments and call.arguments_error == why
