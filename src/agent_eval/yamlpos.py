"""YAML loading that remembers where every key and item was written.

``load_yaml`` returns plain data (dict / list / scalars; mapping keys are always the
text as written, so ``on:`` stays ``"on"``) and a :class:`Positions` map from a path
(tuple of keys and list indexes) to the 1-based line and column of that key or item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from agent_eval.errors import ConfigError

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Pos:
    line: int
    col: int


class Positions:
    """Positions of keys (for mapping entries) and items (for list entries)."""

    __slots__ = ("_map", "file")

    def __init__(self, file: str) -> None:
        self.file = file
        self._map: dict[Path, Pos] = {}

    def set(self, path: Path, pos: Pos) -> None:
        self._map[path] = pos

    def get(self, path: Path) -> Pos:
        """The position of ``path``, or of its nearest recorded ancestor."""
        while path not in self._map and path:
            path = path[:-1]
        return self._map.get(path, Pos(1, 1))

    def has(self, path: Path) -> bool:
        return path in self._map

    def error(self, path: Path, message: str) -> ConfigError:
        pos = self.get(path)
        return ConfigError.at(self.file, pos.line, pos.col, message)

    def where(self, path: Path) -> str:
        pos = self.get(path)
        return f"{self.file}:{pos.line}:{pos.col}"


MAX_ALIAS_NODES = 100_000  # nodes that aliases (*name) may add, against "billion laughs"


class _Builder:
    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.constructor = yaml.constructor.SafeConstructor()
        self.built: set[int] = set()  # ids of the nodes built once (a repeat is an alias)
        self.open: set[int] = set()  # ids of the collections being built (recursion)
        self.alias_depth = 0
        self.alias_nodes = 0
        self.alias_at: yaml.Node | None = None  # the outermost alias being expanded

    def build(self, node: yaml.Node, path: Path) -> Any:
        key = id(node)
        if key in self.open:
            raise self._err(node, "a YAML alias refers to the collection that contains it "
                            "(a recursive alias); write the data out")
        repeat = key in self.built
        self.built.add(key)
        if repeat:
            if not self.alias_depth:
                self.alias_at = node
            self.alias_depth += 1
        if self.alias_depth:
            self.alias_nodes += 1
            if self.alias_nodes > MAX_ALIAS_NODES:
                raise self._err(self.alias_at or node, f"YAML aliases expand to more than "
                                f"{MAX_ALIAS_NODES} values; write the data out")
        collection = isinstance(node, yaml.MappingNode | yaml.SequenceNode)
        if collection:
            self.open.add(key)
        try:
            return self._build(node, path)
        finally:
            if collection:
                self.open.discard(key)
            if repeat:
                self.alias_depth -= 1

    def _build(self, node: yaml.Node, path: Path) -> Any:
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise self._err(key_node, "YAML merge keys (<<) are not supported; "
                                    "write the keys out")
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self._err(key_node, "a mapping key must be a plain scalar")
                key = str(key_node.value)
                if key in out:
                    raise self._err(key_node, f"duplicate key '{key}' (the first one is at "
                                    f"line {self.positions.get((*path, key)).line})")
                sub = (*path, key)
                self.positions.set(sub, _pos(key_node))
                out[key] = self.build(value_node, sub)
            return out
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, item in enumerate(node.value):
                sub = (*path, i)
                self.positions.set(sub, _pos(item))
                items.append(self.build(item, sub))
            return items
        if node.tag == _TIMESTAMP:
            return str(node.value)
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise self._err(node, f"cannot read this value: {exc}") from None

    def _err(self, node: yaml.Node, message: str) -> ConfigError:
        pos = _pos(node)
        return ConfigError.at(self.positions.file, pos.line, pos.col, message)


def _pos(node: yaml.Node) -> Pos:
    mark = node.start_mark
    return Pos(mark.line + 1, mark.column + 1)


def load_yaml(text: str, file: str) -> tuple[Any, Positions]:
    """Parse one YAML document; errors are ``ConfigError`` with file:line:col."""
    positions = Positions(file)
    positions.set((), Pos(1, 1))
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or str(exc)
        raise ConfigError.at(file, line, col, f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError.at(file, 1, 1, f"invalid YAML: {exc}") from None
    except RecursionError:
        raise ConfigError.at(file, 1, 1, "invalid YAML: nested too deeply") from None
    if node is None:
        return None, positions
    try:
        return _Builder(positions).build(node, ()), positions
    except RecursionError:
        raise ConfigError.at(file, 1, 1, "the YAML is nested too deeply") from None
