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

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{},:\n]')

JsonPath = tuple[str | int, ...]


def container_lines(text: str) -> dict[JsonPath, int]:
    out: dict[JsonPath, int] = {}
    kinds: list[str] = []
    path: list[str | int] = []
    line = 1
    last = ""
    for m in _TOKEN.finditer(text):
        t = m.group()
        c = t[0]
        if c == "\n":
            line += 1
        elif c == '"':
            last = t
        elif c == ":":
            if kinds and kinds[-1] == "{":
                try:
                    path[-1] = json.loads(last)
                except ValueError:
                    path[-1] = last.strip('"')
        elif c in "{[":
            out[tuple(path)] = line
            kinds.append(c)
            path.append(0 if c == "[" else "")
        elif c in "}]":
            if kinds:
                kinds.pop()
                path.pop()
        elif c == "," and kinds and kinds[-1] == "[":
            index = path[-1]
            path[-1] = index + 1 if isinstance(index, int) else 0
    return out


_VALUE_TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|[\[\]{},:\n]|-?[0-9][0-9.eE+\-]*|true|false|null')


def _key(token: str) -> str:
    try:
        key = json.loads(token)
    except ValueError:
        return token.strip('"')
    return key if isinstance(key, str) else token.strip('"')


def value_lines(text: str) -> dict[JsonPath, int]:
    """Like :func:`container_lines`, for every value: strings, numbers, ``true``,
    ``false`` and ``null`` too (so a non-object element of an event array can be
    located)."""
    out: dict[JsonPath, int] = {}
    kinds: list[str] = []
    path: list[str | int] = []
    line = 1
    last = ""
    after_colon = False
    for m in _VALUE_TOKEN.finditer(text):
        t = m.group()
        c = t[0]
        if c == "\n":
            line += 1
            continue
        if c == ":":
            if kinds and kinds[-1] == "{":
                path[-1] = _key(last)
            after_colon = True
            continue
        if c == '"':
            last = t
        if c in "{[" or (c not in "]}," and (not kinds or kinds[-1] == "[" or after_colon)):
            out.setdefault(tuple(path), line)
        after_colon = False
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
    return out


def string_members(text: str, key: str) -> Iterator[tuple[JsonPath, str]]:
    """``(path of the object, value)`` of every member named ``key`` whose value is a
    string, in document order. Works on a prefix of a document too (for sniffing)."""
    kinds: list[str] = []
    path: list[str | int] = []
    last = ""
    after_colon = False
    for m in _TOKEN.finditer(text):
        t = m.group()
        c = t[0]
        if c == "\n":
            continue
        if c == ":":
            if kinds and kinds[-1] == "{":
                path[-1] = _key(last)
            after_colon = True
            continue
        if c == '"':
            if after_colon and kinds and kinds[-1] == "{" and path[-1] == key:
                try:
                    value = json.loads(t)
                except ValueError:
                    value = None
                if isinstance(value, str):
                    yield tuple(path[:-1]), value
            last = t
        after_colon = False
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
