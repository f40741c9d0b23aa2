"""Line numbers inside a single-document JSON file.

``container_lines(text)`` maps the JSON path of every object and array, e.g.
``("events", 3)``, to the 1-based line where it starts, so findings can point into
the original file. One regex pass; no parse tree.
"""

from __future__ import annotations

import json
import re

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
