"""Write a translation as native YAML, each key with a comment naming the line of the peer
file it came from (``agent-eval import``)."""

from __future__ import annotations

from typing import Any

import yaml

from agent_eval.safetext import one_line
from agent_eval.yamlpos import Path, Positions


def _scalar(value: Any) -> str:
    """``value`` as one YAML scalar on one line that reads back as it is, in a flow list
    as well as a block (the emitter quotes it for a flow context, where a plain ``a,b``
    would be two items and ``a]`` no YAML), and with its own whitespace kept (a plain
    scalar of a no-break space or one ending in U+3000 keeps it)."""
    if isinstance(value, str) and any(c in value for c in "\n\r\x85\u2028\u2029"):
        # one line: double-quoted, the breaks escaped (and nothing a YAML escape cannot
        # say: JSON's \ud83d surrogate pairs are not YAML)
        return yaml.safe_dump(value, default_style='"', allow_unicode=True,
                              width=10**9).rstrip("\n")
    text = yaml.safe_dump([value], default_flow_style=True, allow_unicode=True, width=10**9)
    return text[1:-2]  # the one item of "[item]\n"


# a longer "key:" is an explicit "? key" line (YAML reads a simple key of at most 1024
# characters: a tool argument's name of 1,100 characters was a file import could not read)
_MAX_SIMPLE_KEY = 1000


def _leaf(value: Any) -> bool:
    if isinstance(value, dict):
        return not value
    if isinstance(value, list):
        return all(not isinstance(v, dict | list) for v in value)
    return True


def _flow(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    return _scalar(value)


class _Emitter:
    def __init__(self, positions: Positions, header: str) -> None:
        self.positions = positions
        self.lines = [f"# {line}" if line else "#" for line in header.splitlines()]

    def origin(self, path: Path) -> str:
        if not self.positions.has(path):
            return ""
        pos = self.positions.get(path)
        # one line, as the header's copy of the name: a peer file named 'a\nsuite: x.yaml'
        # (a line break is allowed in a file name) wrote a YAML line of its own after each key
        return f"  # {one_line(self.positions.file_of(pos))}:{pos.line}"

    def mapping(self, node: dict[str, Any], path: Path, indent: int) -> None:
        pad = " " * indent
        for key, value in node.items():
            here = (*path, key)
            head = f"{pad}{_scalar(key)}:"
            if len(head) - indent > _MAX_SIMPLE_KEY:  # YAML reads no longer simple key
                self.lines.append(f"{pad}? {_scalar(key)}")
                head = f"{pad}:"
            if _leaf(value):
                self.lines.append(f"{head} {_flow(value)}{self.origin(here)}")
            else:
                self.lines.append(f"{head}{self.origin(here)}")
                self.node(value, here, indent + 2)

    def sequence(self, node: list[Any], path: Path, indent: int) -> None:
        pad = " " * indent
        for i, value in enumerate(node):
            here = (*path, i)
            if _leaf(value) or not isinstance(value, dict):
                if isinstance(value, list):
                    self.lines.append(f"{pad}- {_flow(value)}{self.origin(here)}")
                else:
                    self.lines.append(f"{pad}- {_flow(value)}{self.origin(here)}")
                continue
            start = len(self.lines)
            self.mapping(value, here, indent + 2)
            first = self.lines[start]
            self.lines[start] = pad + "- " + first[indent + 2:]

    def node(self, value: Any, path: Path, indent: int) -> None:
        if isinstance(value, dict):
            self.mapping(value, path, indent)
        else:
            self.sequence(value, path, indent)


def to_yaml(data: dict[str, Any], positions: Positions, header: str) -> str:
    e = _Emitter(positions, header)
    e.mapping(data, (), 0)
    return "\n".join(e.lines) + "\n"
