"""VCR cassettes: the YAML files vcrpy (and the recorders built on it) write of HTTP calls.

``interactions:`` is a list of ``{request: {uri, body, ...}, response: {body, ...}}``.
The cassette is read once, within the suite's limits (:func:`agent_eval.yamlpos.guard_yaml`
first), and every line number comes from the YAML parser's positions: the line of each
interaction, of its ``request:`` / ``response:`` keys and of their bodies (with the
bodies' character offsets, so a reader can find the line of a value inside a body).
What a body holds is each reader's business (the Anthropic and OpenAI readers).
"""

from __future__ import annotations

import re
import zlib
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import yaml

from agent_eval.errors import InputError
from agent_eval.limits import Limits
from agent_eval.readers._foreign import read_bytes
from agent_eval.readers.base import SourceFile
from agent_eval.rule_ids import (
    INPUT_INVALID_EVENT,
    INPUT_LIMIT_EXCEEDED,
    INPUT_PARSE_ERROR,
    Rule,
)
from agent_eval.yamlpos import CheckedConstructor, YamlLimitError, guard_yaml

__all__ = ["Body", "BodyError", "Cassette", "Interaction", "body_text", "no_response",
           "read_cassette"]

_NEWLINE = re.compile("\n")  # line starts: the offset after each newline


@dataclass(frozen=True, slots=True)
class Body:
    """Where a request's or response's ``body:`` value is written."""

    line: int  # the line its value starts on
    start: int  # its character offsets in the cassette's text
    end: int


@dataclass(frozen=True, slots=True)
class Interaction:
    value: Any  # the interaction as plain data (a reader checks its shape)
    line: int  # the line of its list item
    parts: dict[str, int]  # "request" / "response" -> the line of that key
    bodies: dict[str, Body]  # "request" / "response" -> where its body is written


@dataclass(frozen=True, slots=True)
class Cassette:
    text: str
    interactions: list[Interaction]
    _starts: list[int]  # the offset of every line's first character

    def line_at(self, offset: int) -> int:
        """The line of a character offset in the text."""
        return bisect_right(self._starts, offset)


class BodyError(Exception):
    """A recorded body that cannot be read (:func:`body_text`): the rule and message of
    the input error a reader reports at the body's line."""

    def __init__(self, rule: Rule, message: str) -> None:
        super().__init__(message)
        self.rule, self.message = rule, message

    def input_error(self, file: str, line: int, part: str) -> InputError:
        """The input error for the ``part`` ("request" / "response") body at ``line``."""
        return self.rule.input_error(file, line, f"the {part} body {self.message}")


_GZIP = b"\x1f\x8b"


def body_text(body: bytes, limits: Limits) -> str:
    """The text of a body vcrpy recorded as bytes (``!!binary``): gzip-compressed when the
    server compressed it (decompressed to at most ``limits.max_file_bytes``: a small
    body may expand a thousandfold), then UTF-8 (an invalid byte becomes U+FFFD).
    Raises :class:`BodyError` for gzip data that is corrupt, cut off or too large."""
    if body[:2] != _GZIP:
        return body.decode("utf-8", errors="replace")
    cap, out, rest = limits.max_file_bytes, bytearray(), body
    while rest[:2] == _GZIP:  # one gzip member after another, as gzip.decompress reads
        inflate = zlib.decompressobj(wbits=31)
        try:
            out += inflate.decompress(rest, cap + 1 - len(out))
        except zlib.error as exc:
            raise BodyError(INPUT_PARSE_ERROR, f"is gzip data that cannot be decompressed "
                            f"({exc}); record the cassette again") from None
        if len(out) > cap:
            raise BodyError(INPUT_LIMIT_EXCEEDED, f"decompresses to more than "
                            f"{cap} bytes (limits.max_file_bytes)")
        if not inflate.eof:
            raise BodyError(INPUT_PARSE_ERROR, "is gzip data cut off before its end; "
                            "record the cassette again")
        rest = inflate.unused_data
    return bytes(out).decode("utf-8", errors="replace")


def no_response(it: Interaction, file: str) -> InputError | None:
    """The input error of an interaction that sent a request with a body and recorded no
    response body (no ``response:``, or one without a ``body:`` value), else None. vcrpy
    writes a request and its response together: an interaction without one is a cassette
    cut off after a request (a truncated file is still YAML when it ends at a line
    break) or an edited one, and what the model answered, the calls it made, was never
    read: the trace is incomplete, never a pass. A request without a body (a GET) is
    passed over, and so is a response whose body is empty (recorded, with no content)."""
    value = it.value
    if type(value) is not dict:
        return None
    response = value.get("response")
    answer = response.get("body") if isinstance(response, dict) else None
    if isinstance(answer, dict):
        answer = answer.get("string", answer)
    if answer is not None:  # (an empty body is one: a call answered with no content)
        return None
    request = value.get("request")
    body = request.get("body") if isinstance(request, dict) else None
    if isinstance(body, dict):
        body = body.get("string", body)
    if body is None or (isinstance(body, str | bytes) and not body.strip()):
        return None
    return INPUT_INVALID_EVENT.input_error(
        file, it.line, "this interaction recorded a request but no response body: the "
        "cassette is cut off (or was edited), so the answer to this request, and any tool "
        "call in it, was not read; record the cassette again")


def _member(node: Any, key: str) -> tuple[Any, Any]:
    """The key node and value node of ``key`` in a mapping node (None, None if absent)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k, v
    return None, None


def _interaction(value: Any, node: Any) -> Interaction:
    parts: dict[str, int] = {}
    bodies: dict[str, Body] = {}
    for part in ("request", "response"):
        key, part_node = _member(node, part)
        if key is None:
            continue
        parts[part] = key.start_mark.line + 1
        _, body = _member(part_node, "body")
        if body is not None:
            bodies[part] = Body(body.start_mark.line + 1, body.start_mark.index,
                                body.end_mark.index)
    return Interaction(value, node.start_mark.line + 1, parts, bodies)


def read_cassette(source: SourceFile) -> Cassette | InputError:
    """The cassette in ``source``, or the input error that says why it cannot be read: not
    readable, not YAML, over a limit, or without an ``interactions:`` list."""
    data = read_bytes(source)
    if isinstance(data, InputError):
        return data
    text = data.decode("utf-8", errors="replace")
    try:
        guard_yaml(text, source.limits)
        tree = yaml.compose(text, Loader=yaml.SafeLoader)  # offsets in characters
        doc = (CheckedConstructor().construct_document(tree)
               if tree is not None else None)
    except YamlLimitError as exc:
        return INPUT_LIMIT_EXCEEDED.input_error(source.file, exc.line, exc.message)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return INPUT_PARSE_ERROR.input_error(source.file, mark.line + 1 if mark else 1,
                                             f"the cassette is not valid YAML ({exc})")
    values = doc.get("interactions") if isinstance(doc, dict) else None
    _, nodes = _member(tree, "interactions")
    if not isinstance(values, list) or not isinstance(nodes, yaml.SequenceNode):
        return INPUT_INVALID_EVENT.input_error(source.file, 1,
                                               "a VCR cassette needs an 'interactions:' list")
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    return Cassette(text, [_interaction(v, n) for v, n in zip(values, nodes.value, strict=False)],
                    starts)
