"""Line numbers inside a single-document JSON file.

``container_lines(text)`` maps the JSON path of every object and array, e.g.
``("events", 3)``, to the 1-based line where it starts, so findings can point into
the original file. One regex pass; no parse tree. ``value_lines`` does the same for
every value, ``string_members`` finds members such as ``"type": "..."`` by path.
All of them expect valid JSON (or a prefix of it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from agent_eval.lazyre import LazyPattern

_TOKEN = LazyPattern(r'"(?:[^"\\\n]|\\.)*"|[\[\]{},:\n]')

JsonPath = tuple[str | int, ...]


class _Walk:
    """The tokens of a JSON text, with the path and line where each one stands.

    Iterating yields ``(token, at_value)`` for every token but newlines and colons;
    ``at_value`` is true when the token starts a value. While a token is handled,
    ``path`` is the path of the value it starts or belongs to, ``line`` its line and
    ``after_colon`` whether it follows a member's colon."""

    def __init__(self, text: str, token: LazyPattern[str]) -> None:
        self._tokens = token.finditer(text)
        self.kinds: list[str] = []
        self.path: list[str | int] = []
        self.line = 1
        self.after_colon = False

    def __iter__(self) -> Iterator[tuple[str, bool]]:
        kinds, path = self.kinds, self.path
        last = ""
        for m in self._tokens:
            t = m.group()
            c = t[0]
            if c == "\n":
                self.line += 1
                continue
            if c == ":":
                if kinds and kinds[-1] == "{":
                    path[-1] = _key(last)
                self.after_colon = True
                continue
            at_value = c in "{[" or (
                c not in "]}," and (not kinds or kinds[-1] == "[" or self.after_colon))
            yield t, at_value
            if c == '"':
                last = t
            self.after_colon = False
            if c in "{[":
                kinds.append(c)
                path.append(0 if c == "[" else "")
            elif c in "}]":
                if kinds:
                    kinds.pop()
                    path.pop()
            elif c == "," and kinds and kinds[-1] == "[":
                index = path[-1]
                path[-1] = index + 1 if isinstance(index, int) else 0


def _key(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token.strip('"')
    return key if isinstance(key, str) else token.strip('"')


def container_lines(text: str) -> dict[JsonPath, int]:
    out: dict[JsonPath, int] = {}
    walk = _Walk(text, _TOKEN)
    for t, _ in walk:
        if t[0] in "{[":
            out[tuple(walk.path)] = walk.line
    return out


_VALUE_TOKEN = LazyPattern(
    r'"(?:[^"\\\n]|\\.)*"|[\[\]{},:\n]|-?[0-9][0-9.eE+\-]*|true|false|null')


def nearest_line(lines: dict[JsonPath, int], path: JsonPath) -> int:
    """The line of the container at ``path``, else of the closest one enclosing it (the
    document's first line when none is known)."""
    p = path
    while p:
        found = lines.get(p)
        if found is not None:
            return found
        p = p[:-1]
    return lines.get((), 1)


def value_lines(text: str) -> dict[JsonPath, int]:
    """Like :func:`container_lines`, for every value: strings, numbers, ``true``,
    ``false`` and ``null`` too (so a non-object element of an event array can be
    located)."""
    out: dict[JsonPath, int] = {}
    walk = _Walk(text, _VALUE_TOKEN)
    for _, at_value in walk:
        if at_value:
            out.setdefault(tuple(walk.path), walk.line)
    return out


def string_members(text: str, key: str) -> Iterator[tuple[JsonPath, str]]:
    """``(path of the object, value)`` of every member named ``key`` whose value is a
    string, in document order. Works on a prefix of a document too (for sniffing)."""
    walk = _Walk(text, _TOKEN)
    kinds, path = walk.kinds, walk.path
    for t, _ in walk:
        if t[0] == '"' and walk.after_colon and kinds and kinds[-1] == "{" and path[-1] == key:
            try:
                value = json.loads(t)
            except ValueError:
                value = None
            if isinstance(value, str):
                yield tuple(path[:-1]), value


# Strings and everything between brackets in one token, so that the inside of a large
# value (ten million numbers, a long string) costs one regex step, not one per item.
_COARSE = LazyPattern(r'(?:[^"\[\]{}\n]+|"(?:[^"\\\n]|\\.)*")+|[\[\]{}]|\n')
_PIECE = LazyPattern(r'"(?:[^"\\\n]|\\.)*"|,|[^",]+')


def element_lines(text: str, key: str | None = None) -> list[int]:
    """The line where each element of a document's array starts: the top-level array
    (``key`` None) or the array under ``key`` in the top-level object. Only that array's
    own level is looked at token by token; the inside of each element is skipped in
    bulk (what :func:`value_lines` would walk value by value)."""
    lines: list[int] = []
    line, depth = 1, 0
    target = 0  # the depth of the array, once inside it
    pending = False  # an element starts at the next value
    last_run = ""
    want = None if key is None else re.compile(rf'{re.escape(json.dumps(key))}\s*:\s*\Z')
    for m in _COARSE.finditer(text):
        t = m.group()
        c = t[0]
        if c == "\n":
            line += 1
        elif c == "[" or c == "{":
            depth += 1
            if not target and c == "[" and (
                    (want is None and depth == 1)
                    or (want is not None and depth == 2 and want.search(last_run))):
                target, pending = depth, True
            elif target and pending and depth == target + 1:
                lines.append(line)
                pending = False
        elif c == "]" or c == "}":
            if target and depth == target:
                break
            depth -= 1
        elif target and depth == target:
            for piece in _PIECE.finditer(t):
                p = piece.group()
                if p == ",":
                    pending = True
                elif pending and p.strip():
                    lines.append(line)
                    pending = False
        elif depth == 1 and not t.isspace():
            last_run = t
    return lines
