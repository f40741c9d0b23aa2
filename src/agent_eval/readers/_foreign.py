"""Helpers shared by the foreign-format readers (Anthropic, Claude Code, LangChain,
LangSmith, MCP, Inspect): reading a file as one JSON document or as JSON lines,
line numbers of JSON paths, numbers that may be missing, message text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import JsonLimitError, file_lines, json_type, read_whole
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.lazyre import LazyPattern
from agent_eval.model import Location, ToolCall, Trace
from agent_eval.readers._head import ESCAPE, head_tokens
from agent_eval.readers.base import SourceFile
from agent_eval.readers.jsonpos import JsonPath, container_lines, nearest_line
from agent_eval.readers.native import EVENT_TOKENS as NATIVE_EVENT_TOKENS
from agent_eval.readers.native import READER as NATIVE_READER
from agent_eval.rule_ids import (
    INPUT_INVALID_EVENT,
    INPUT_LIMIT_EXCEEDED,
    INPUT_PARSE_ERROR,
    INPUT_UNREADABLE_FILE,
)

_loads = bounded_loads
JSONDecodeError = orjson.JSONDecodeError
BOM = b"\xef\xbb\xbf"
LINE_SUFFIXES = (".jsonl", ".ndjson", ".log", ".txt")


def head_text(head: bytes) -> str:
    return head.removeprefix(BOM).decode("utf-8", errors="replace")


_last_native: tuple[bytes, str, bool] = (b"", "", False)


def is_native(head: bytes, source: SourceFile) -> bool:
    """Native files always go to the native reader, whatever else they contain.

    Every other reader's sniff asks this of the same head while one file's format is
    detected (:func:`agent_eval.readers.pick_reader` reads the head once and passes the
    same bytes to each): the answer for the last head is kept, so the native sniff (a
    walk over the head's JSON for ``.json`` files) runs at most once per file, not once
    per reader."""
    global _last_native
    last_head, last_path, answer = _last_native
    if head is not last_head or source.path != last_path:
        answer = _may_be_native(head) and NATIVE_READER.sniff(head, source)
        _last_native = (head, source.path, answer)
    return answer




def _may_be_native(head: bytes) -> bool:
    """False only when the native sniff must say no: it needs a JSON string whose value
    is a native event type, which the head then holds as that very token in quotes (the
    names have no character that an escape other than ``\\u`` could write)."""
    return (not head_tokens(head).isdisjoint(NATIVE_EVENT_TOKENS)
            or ESCAPE.search(head) is not None)


def all_of(text: str, *patterns: re.Pattern[str] | LazyPattern[str]) -> bool:
    return all(p.search(text) is not None for p in patterns)


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


# ----------------------------------------------------------------------- numbers
def num(value: Any) -> int | float | None:
    """A recorded number, or None (missing, null, a string, a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def count(value: Any) -> int | None:
    """A recorded token count (an integer, or a float with an integral value)."""
    v = num(value)
    if v is None:
        return None
    if isinstance(v, float):
        return int(v) if v.is_integer() else None
    return v


def add(*values: int | None) -> int | None:
    """The sum, or None when any part is unknown."""
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def token_counts(usage: dict[str, Any], inputs: tuple[str, str],
                 outputs: tuple[str, str]) -> tuple[int | None, int | None, int | None]:
    """(input, output, total) tokens of a usage object: each count under the first of
    its two names that is present; the total is the sum when it is not recorded."""
    i = count(usage.get(inputs[0], usage.get(inputs[1])))
    o = count(usage.get(outputs[0], usage.get(outputs[1])))
    t = count(usage.get("total_tokens"))
    return i, o, t if t is not None else add(i, o)


def epoch_ms(value: Any) -> float | None:
    """A timestamp in milliseconds: ISO 8601 text, or epoch seconds / milliseconds."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp() * 1000.0
        except ValueError:
            return None
    v = num(value)
    if v is None:
        return None
    return float(v) * 1000.0 if v < 1e11 else float(v)  # seconds before ~5138 AD


def span_ms(start: Any, end: Any) -> float | None:
    a, b = epoch_ms(start), epoch_ms(end)
    if a is None or b is None or b < a:
        return None
    return round(b - a, 3)


# -------------------------------------------------------------------------- text
def text_of(content: Any) -> str | None:
    """The text of a message content: a string, a text block, or a list of blocks
    (text blocks joined by newlines). None when it holds no text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        t = content.get("text")
        return t if isinstance(t, str) else None
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (
                    None, "text", "output_text", "input_text"):
                t = block.get("text")
                if isinstance(t, str):
                    parts.append(t)
        return "\n".join(parts) if parts else None
    return None


def result_error_text(result: Any) -> str:
    """The message of a failed call: its text, or its JSON."""
    text = text_of(result)
    if text is not None:
        return text
    if result is None:
        return "error"
    return orjson.dumps(result, default=str).decode()


# ----------------------------------------------------------------- trace building
def new_trace(tid: str, source: SourceFile, line: int, fmt: str) -> Trace:
    loc = Location(source.file, line)
    return Trace(id=tid, source=source.file, location=loc, end_location=loc, format=fmt)


def touch(trace: Trace, line: int) -> None:
    """Extend the trace to ``line`` (the last line that belongs to it)."""
    if line > trace.end_location.line:
        trace.end_location = Location(trace.end_location.file, line)
    if line < trace.location.line:
        trace.location = Location(trace.location.file, line)


def set_result(call: ToolCall, result: Any, error: str | None, ok: bool,
               loc: Location | None) -> None:
    call.result = result
    call.has_result = True
    call.ok = ok
    call.error = None if ok else (error if error is not None else result_error_text(result))
    call.result_location = loc


# -------------------------------------------------------------------- documents
class JsonDoc:
    """A whole-file JSON document with lazily computed line numbers of its paths."""

    def __init__(self, value: Any, text: str) -> None:
        self.value = value
        self.text = text
        self._lines: dict[JsonPath, int] | None = None

    def line(self, *path: str | int) -> int:
        """The line where the object/array at ``path`` starts (or its closest
        enclosing container's line)."""
        if self._lines is None:
            self._lines = container_lines(self.text)
        return nearest_line(self._lines, tuple(path))


def parse_document(data: bytes, file: str) -> JsonDoc | InputError:
    data = data.removeprefix(BOM)
    try:
        value = _loads(data)
    except JSONDecodeError as exc:
        line = data[: getattr(exc, "pos", 0) or 0].count(b"\n") + 1
        return INPUT_PARSE_ERROR.input_error(file, line, f"file is not valid JSON ({exc})")
    return JsonDoc(value, data.decode("utf-8", errors="replace"))


def read_bytes(source: SourceFile) -> bytes | InputError:
    try:
        with open(source.path, "rb") as fh:
            return read_whole(fh, source.limits)
    except OSError as exc:
        return INPUT_UNREADABLE_FILE.input_error(source.file, 0, f"cannot read the file: {exc}")


class _Lines:
    """The file is read line by line (see :func:`open_records`)."""


LINES = _Lines()


def _looks_like_lines(data: bytes) -> bool:
    """The document does not parse, but its first two non-empty lines each do."""
    try:
        _loads(data)
        return False
    except JSONDecodeError:
        pass
    lines = [ln for ln in data.split(b"\n", 50)[:50] if ln.strip()]
    if len(lines) < 2:
        return False
    for ln in lines[:2]:
        try:
            _loads(ln)
        except JSONDecodeError:
            return False
    return True


def open_records(source: SourceFile, text_log: bool = False) -> JsonDoc | _Lines | InputError:
    """How to read a file: ``LINES`` for JSON lines (by the name: .jsonl, .ndjson, .log,
    .txt; or when the document does not parse but its first lines do; or, with
    ``text_log``, when it does not start like JSON), else the parsed document. JSON lines
    are not loaded whole: read them with :func:`iter_lines`."""
    if source.path.lower().endswith(LINE_SUFFIXES):
        return LINES
    data = read_bytes(source)
    if isinstance(data, InputError):
        return data
    data = data.removeprefix(BOM)
    if text_log and not data.lstrip().startswith((b"{", b"[")):
        return LINES
    if _looks_like_lines(data):
        return LINES
    return parse_document(data, source.file)


def iter_lines(source: SourceFile) -> Iterator[tuple[int, Any] | InputError]:
    """``(line number, value)`` for every non-empty line; a line that is not JSON is an
    ``input/parse_error`` record, and reading goes on."""
    try:
        with open(source.path, "rb") as fh:
            for number, raw in file_lines(fh, source.limits):
                if number == 1:
                    raw = raw.removeprefix(BOM)
                if not raw.strip():
                    continue
                try:
                    value = _loads(raw)
                except JSONDecodeError as exc:
                    yield INPUT_PARSE_ERROR.input_error(
                        source.file, number,
                        f"line is not valid JSON ({exc}); fix or remove the line")
                    continue
                yield number, value
    except OSError as exc:
        yield INPUT_UNREADABLE_FILE.input_error(source.file, 0, f"cannot read the file: {exc}")
    except JsonLimitError as exc:  # the lines before are kept
        yield INPUT_LIMIT_EXCEEDED.input_error(source.file, exc.line, str(exc))


def not_an_object(file: str, line: int, value: Any, what: str = "a record") -> InputError:
    return INPUT_INVALID_EVENT.input_error(file, line,
                                           f"{what} must be a JSON object, not {json_type(value)}")


def read_document(source: SourceFile) -> JsonDoc | InputError:
    """The file as one parsed JSON document (with its line lookup)."""
    data = read_bytes(source)
    if isinstance(data, InputError):
        return data
    return parse_document(data, source.file)


def records(source: SourceFile, key: str) -> Iterator[tuple[int, Any] | InputError]:
    """``(line, record)`` for every record of a file that is JSON lines, or one JSON
    document holding a list of records (under ``key``, or at the top), or one record;
    a line that is not JSON is an input error record and reading goes on."""
    doc = open_records(source)
    if isinstance(doc, InputError):
        yield doc
        return
    if not isinstance(doc, JsonDoc):
        yield from iter_lines(source)
        return
    value = doc.value
    if isinstance(value, dict) and isinstance(value.get(key), list):
        for i, item in enumerate(value[key]):
            yield doc.line(key, i), item
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield doc.line(i), item
    else:
        yield doc.line(), value
