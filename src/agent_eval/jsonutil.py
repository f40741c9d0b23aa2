"""JSON helpers shared by every layer."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from agent_eval.limits import DEFAULT, LimitError, Limits

# JSON Schema's type names by Python class, bool before int (a bool is an int)
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (type(None), "null"), (bool, "boolean"), (int, "integer"), (float, "number"),
    (str, "string"), (list, "array"), (dict, "object"))
_JSON_TYPE_OF = dict(_JSON_TYPES)  # the exact classes json decoding makes


def json_type(value: Any) -> str:
    """The JSON Schema type name of a decoded JSON value."""
    name = _JSON_TYPE_OF.get(type(value))
    if name is not None:
        return name
    for cls, name in _JSON_TYPES:  # a subclass (an OrderedDict, an IntEnum)
        if isinstance(value, cls):
            return name
    return type(value).__name__


# ------------------------------------------------------------------ bounded decoding
class JsonLimitError(orjson.JSONDecodeError, LimitError):
    """A JSON text exceeds a limit. A ``JSONDecodeError`` too, so that every reader's
    "not valid JSON" handling catches it: nothing crashes, and ``read_sources`` files
    the error under ``input/limit_exceeded``."""

    def __init__(self, message: str, line: int = 0) -> None:
        orjson.JSONDecodeError.__init__(self, message, "", 0)
        self.line = line

    def __str__(self) -> str:
        return str(self.msg)


_current = DEFAULT  # the limits of the file being read (set by read_sources)


def reading(limits: Limits) -> None:
    """Set the limits :func:`loads` applies (the file being read is the only one)."""
    global _current
    _current = limits


def too_deep(value: Any, max_depth: int) -> bool:
    """Whether objects and arrays nest more than ``max_depth`` levels (no recursion)."""
    if type(value) is not dict and type(value) is not list:
        return max_depth < 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if type(v) is dict else v
        if depth > max_depth:
            return True
        for c in children:
            if type(c) is dict or type(c) is list:
                stack.append((c, depth + 1))
    return False


def loads(data: bytes | str, limits: Limits | None = None) -> Any:
    """``orjson.loads`` within the limits of the file being read: at most
    ``max_containers`` objects and arrays and ``max_depth`` levels. Counting ``{`` and
    ``[`` is a fast upper bound; the parsed value is walked only when the count could
    exceed ``max_depth``. Raises :class:`JsonLimitError` (a ``JSONDecodeError``)."""
    lim = limits or _current
    if type(data) is bytes:
        opens = data.count(b"{") + data.count(b"[")
    else:
        opens = data.count("{") + data.count("[")  # type: ignore[arg-type]
    if opens <= lim.max_depth:
        return _orjson_loads(data)
    if opens > lim.max_containers:
        raise JsonLimitError(f"holds more than {lim.max_containers} objects and arrays "
                             "(limits.max_containers)")
    value = _orjson_loads(data)
    if (type(value) is dict or type(value) is list) and too_deep(value, lim.max_depth):
        raise JsonLimitError(f"nests objects and arrays more than {lim.max_depth} levels "
                             "deep (limits.max_depth)")
    return value


_orjson_loads = orjson.loads


def repeated_name(text: str) -> str | None:
    """Why the JSON ``text`` (valid JSON, as :func:`loads` took it) is ambiguous: an object
    that gives a name twice, which orjson (as JSON allows) reads as its last value, so that
    ``{"score": 1, "score": 5}`` is 5 to the program and 1 to a reader who stops at the
    first. None when every name is given once."""
    import json  # (start-up time: only the judge's verdicts and store lines need it)

    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> None:
        seen: set[str] = set()
        for name, _ in items:
            if name in seen and not found:
                found.append(f"the name {name[:40]!r} is given twice in one object")
            seen.add(name)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except (RecursionError, ValueError):  # deeper than the stack, a number of 4300 digits
        return "it cannot be checked for a name given twice (too deep, or a number too long)"
    return found[0] if found else None


def check_size(size: int, limits: Limits, what: str = "the file") -> None:
    if size > limits.max_file_bytes:
        raise JsonLimitError(f"{what} is larger than {limits.max_file_bytes} bytes "
                             "(limits.max_file_bytes); it was not read")


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``open(path, "rb")`` for a regular file only, its links followed: a FIFO, a socket
    or a device (a committed link to ``/proc/self/fd/1``, the process's own output pipe,
    or to ``/dev/zero``) is an OSError "not a regular file", found without waiting (a
    folder is one "a folder, not a file"): a
    FIFO opened for reading waits for a writer, and reading the process's own pipe never
    ends."""
    # O_NONBLOCK: opening a FIFO does not wait for a writer (where the system has it);
    # O_BINARY: Windows opens a file as text without it
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):  # (opened: O_RDONLY opens a folder where open() does not)
            raise OSError(errno.EISDIR, "a folder, not a file")
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device, "
                          "its links followed)")
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_whole(fh: BinaryIO, limits: Limits | None = None) -> bytes:
    """The rest of an open file, refused (:class:`JsonLimitError`) when it is larger than
    ``max_file_bytes``."""
    lim = limits or _current
    try:
        size = os.fstat(fh.fileno()).st_size - fh.tell()
    except (OSError, AttributeError, ValueError):
        size = lim.max_file_bytes
    check_size(size, lim)
    # read(n) allocates n bytes up front: ask for what the file holds (plus one, to see a
    # file that grew meanwhile), never for the limit itself
    data = fh.read(max(size, 0) + 1)
    check_size(len(data), lim)
    return data


def file_lines(fh: BinaryIO, limits: Limits | None = None) -> Iterator[tuple[int, bytes]]:
    """``enumerate(fh, 1)`` for a binary file, with no line longer than
    ``max_file_bytes`` read into memory (:class:`JsonLimitError` at that line)."""
    lim = limits or _current
    try:
        size = os.fstat(fh.fileno()).st_size
    except (OSError, AttributeError, ValueError):
        size = lim.max_file_bytes + 1
    if size <= lim.max_file_bytes:
        return enumerate(fh, 1)  # no line can be too long: the fast path, as it is
    return _bounded_lines(fh, lim.max_file_bytes)


def _bounded_lines(fh: BinaryIO, cap: int) -> Iterator[tuple[int, bytes]]:
    number = 0
    while True:
        raw = fh.readline(cap + 1)
        if not raw:
            return
        number += 1
        if len(raw) > cap and not raw.endswith(b"\n"):
            raise JsonLimitError(f"line {number} is longer than {cap} bytes "
                                 "(limits.max_file_bytes); the rest of the file was not "
                                 "read", number)
        yield number, raw
