"""The one way agent-eval reads YAML: bounded, and remembering where things were written.

Every YAML read (the suite, policies, JSON Schema files, VCR cassettes, …) goes through
:func:`guard_yaml` first: one pass over the parser's events (libyaml's parser is not
recursive) that refuses nesting deeper than ``max_depth`` and aliases that would expand
to more than ``max_alias_nodes`` values (or refer to themselves), before anything is
built. Only then is the document composed. What aliases repeat is also counted in
characters (of the scalars they stand for): at most as many as the file holds (1 MiB for a
smaller file, never more than ``max_file_bytes``), so a document with its aliases expanded
costs at most what a file of twice its size (or of 1 MiB) would.

``load_yaml`` returns plain data (dict / list / scalars; mapping keys are always the
text as written, so ``on:`` stays ``"on"``) and a :class:`Positions` map from a path
(tuple of keys and list indexes) to the 1-based line and column of that key or item.
``safe_load`` returns plain data only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from agent_eval.errors import ConfigError
from agent_eval.limits import CONFIG, Limits

_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_TAG = "tag:yaml.org,2002:"
_TIMESTAMP = _YAML_TAG + "timestamp"
_PLAIN = (_YAML_TAG + "map", _YAML_TAG + "seq")  # the tags of untagged collections
Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Pos:
    """Where a key or an item was written: its 1-based line and column."""

    line: int
    col: int
    file: str | None = None  # another file than the Positions' own (an imported config)


class Positions:
    """Positions of keys (for mapping entries) and items (for list entries)."""

    __slots__ = ("_map", "_words", "file")

    def __init__(self, file: str) -> None:
        self.file = file
        self._map: dict[Path, Pos] = {}
        # values YAML 1.1 reads as other than they look (off: false, 0777: 511): their
        # text, what they were read as and their place, by each path at or above them
        # (the first in the document): :meth:`misread` is one lookup, however many
        self._words: dict[Path, tuple[str, Any, Pos]] = {}

    def set(self, path: Path, pos: Pos) -> None:
        self._map[path] = pos

    def get(self, path: Path) -> Pos:
        """The position of ``path``, or of its nearest recorded ancestor."""
        while path not in self._map and path:
            path = path[:-1]
        return self._map.get(path, Pos(1, 1))

    def has(self, path: Path) -> bool:
        return path in self._map

    def word(self, path: Path, text: str, value: Any, pos: Pos) -> None:
        """Note a value that YAML 1.1 read as other than it looks (:func:`_misread`)."""
        for k in range(len(path), -1, -1):
            if self._words.setdefault(path[:k], (text, value, pos)) != (text, value, pos):
                break  # an earlier one is noted from here up

    def misread(self, path: Path) -> str | None:
        """The problem (``FILE:LINE:COL: message``) of the first value at or under ``path``
        that YAML 1.1 read as other than it looks (:func:`_misread`): one of its boolean
        words, ``yes``, ``no``, ``on`` or ``off`` (any case), an octal ``0777`` (511) or a
        base-60 ``1:30`` (90), unquoted. Where a value is compared with a trace's (``enum``,
        ``const``, an argument condition), the author meant the text more likely than not,
        and a condition on what YAML made of it would silently never hold (``{tool:
        firewall, args: {state: off}}`` blocked no call of ``state: "off"``, ``{tool: chmod,
        args: {mode: 0777}}`` none of ``mode: "0777"``); None when there is none."""
        found = self._words.get(path)
        if found is None:
            return None
        text, value, pos = found
        if type(value) is bool:
            shown, kind = str(value).lower(), "boolean"
        else:
            shown, kind = str(value), "number"
        return (f"{self.file_of(pos)}:{pos.line}:{pos.col}: '{text}' is read by YAML as the "
                f"{kind} {shown}, not as the text '{text}'; quote it (\"{text}\") to compare "
                f"with the text, or write {shown} for the {kind}")

    def file_of(self, pos: Pos) -> str:
        """The file a position is in: its own, else this map's."""
        return pos.file or self.file

    def error(self, path: Path, message: str) -> ConfigError:
        pos = self.get(path)
        return ConfigError.at(self.file_of(pos), pos.line, pos.col, message)

    def where(self, path: Path) -> str:
        pos = self.get(path)
        return f"{self.file_of(pos)}:{pos.line}:{pos.col}"


MAX_ALIAS_NODES = CONFIG.max_alias_nodes  # nodes aliases may add, against "billion laughs"
# the characters of scalars aliases may repeat in a file smaller than this (a larger file:
# as many as it holds); never more than limits.max_file_bytes
ALIAS_CHARS_FLOOR = 1024 * 1024


class YamlLimitError(ValueError):
    """A YAML document exceeds a limit (1-based line and column of where it does)."""

    def __init__(self, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


def guard_yaml(text: str, limits: Limits = CONFIG, loader: type[Any] | None = None) -> None:
    """Refuse, before composing, a document nested deeper than ``limits.max_depth``, whose
    aliases expand to more than ``limits.max_alias_nodes`` values or repeat more characters
    of scalars than the file holds (at least :data:`ALIAS_CHARS_FLOOR`, at most
    ``limits.max_file_bytes``: a "billion laughs" of one long string, 50 KB repeated a
    thousand times, is 50 MB to read, however few values it is), or an alias inside the
    collection it names. Raises :class:`YamlLimitError`, or ``yaml.YAMLError`` for a
    document that does not parse."""
    # anchor -> (values, characters of scalars) its node stands for
    sizes: dict[str, tuple[int, int]] = {}
    # per open collection: [values so far, characters so far, anchor]
    stack: list[list[Any]] = [[0, 0, None]]
    open_anchors: dict[str, Any] = {}  # anchors of the collections being read -> event
    expanded = expanded_chars = 0
    max_depth, max_alias = limits.max_depth, limits.max_alias_nodes
    max_chars = min(limits.max_file_bytes, max(len(text), ALIAS_CHARS_FLOOR))
    event: Any
    for event in yaml.parse(text, Loader=loader or _Loader):
        kind = type(event)
        if kind is yaml.ScalarEvent:
            top = stack[-1]
            top[0] += 1
            top[1] += len(event.value)
            if event.anchor is not None:
                sizes[event.anchor] = (1, len(event.value))
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(stack) > max_depth:
                raise _limit(event, f"the YAML is nested more than {max_depth} levels deep "
                             "(limits.max_depth)")
            stack.append([1, 0, event.anchor])
            if event.anchor is not None:
                open_anchors[event.anchor] = event
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            count, chars, anchor = stack.pop()
            if anchor is not None:
                sizes[anchor] = (count, chars)
                open_anchors.pop(anchor, None)
            top = stack[-1]
            top[0] += count
            top[1] += chars
        elif kind is yaml.AliasEvent:
            if event.anchor in open_anchors:  # located at the anchor, as the builder does
                raise _limit(open_anchors[event.anchor], "a YAML alias refers to the "
                             "collection that contains it (a recursive alias); write the "
                             "data out")
            size, chars = sizes.get(event.anchor, (1, 0))
            expanded += size
            expanded_chars += chars
            top = stack[-1]
            top[0] += size
            top[1] += chars
            if expanded > max_alias:
                raise _limit(event, f"YAML aliases expand to more than {max_alias} values "
                             "(limits.max_alias_nodes); write the data out")
            if expanded_chars > max_chars:
                raise _limit(event, f"YAML aliases repeat more than {max_chars} characters "
                             "(what they repeat may be as long as the file itself, or 1 MiB "
                             "for a smaller file, and at most limits.max_file_bytes); write "
                             "the data out")


def _limit(event: Any, message: str) -> YamlLimitError:
    mark = event.start_mark
    return YamlLimitError(mark.line + 1, mark.column + 1, message)


class _Checked:
    """A constructor mixin: a value YAML's constructors fail on with a ValueError (a date
    that does not exist, ``2001-02-30``; an integer of more than 4,300 digits) is a
    ``yaml.YAMLError`` at its node, like every other value that cannot be read."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except (ValueError, OverflowError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{exc}; quote the value to keep it as text",
                node.start_mark) from None


class CheckedConstructor(_Checked, yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor, raising only ``yaml.YAMLError`` (:class:`_Checked`)."""


class _CheckedLoader(_Checked, _Loader):  # type: ignore[misc]
    pass


def safe_load(text: str, limits: Limits = CONFIG) -> Any:
    """Plain data of one YAML document, within ``limits`` (raises
    :class:`YamlLimitError` or ``yaml.YAMLError``)."""
    guard_yaml(text, limits)
    return yaml.load(text, Loader=_CheckedLoader)


class _Builder:
    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.constructor = CheckedConstructor()
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
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.tag not in _PLAIN:
            # `!!set`, `!!omap`, `!!python/object:…`: built as a plain mapping or list,
            # the tag would be silently ignored (a scalar's is refused by the constructor)
            raise self._err(node, _unsupported_tag(node))
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
            value = self.constructor.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            if node.tag in self.constructor.yaml_constructors:
                raise self._err(node, f"cannot read this value: {exc.problem}") from None
            # a tag no constructor has (`!!python/object:…`, `!local`): said as a
            # collection's is (it was PyYAML's text, with its own "in <unicode string>,
            # line 1, column 8" on a second line)
            raise self._err(node, _unsupported_tag(node)) from None
        except yaml.YAMLError as exc:
            raise self._err(node, f"cannot read this value: {exc}") from None
        if _misread(str(node.value), value):
            self.positions.word(path, str(node.value), value, _pos(node))
        return value

    def _err(self, node: yaml.Node, message: str) -> ConfigError:
        pos = _pos(node)
        return ConfigError.at(self.positions.file, pos.line, pos.col, message)


def _unsupported_tag(node: yaml.Node) -> str:
    tag = str(node.tag).replace(_YAML_TAG, "!!")
    shown = tag if len(tag) <= 64 else f"{tag[:64]}…"
    return (f"the YAML tag '{shown}' is not supported: agent-eval reads plain mappings, "
            "lists and values; remove the tag")


# YAML 1.1 integers that YAML 1.2 (and a reader of the file) take for text: an octal
# 0777 (511), a binary 0b101 (5)
_OCTAL_OR_BINARY = re.compile(r"[-+]?0(?:b[01_]+|[0-7_]+)\Z")


def _misread(text: str, value: Any) -> bool:
    """Whether YAML 1.1 read a plain scalar ``text`` as other than it looks: one of its
    boolean words (``yes``, ``no``, ``on``, ``off``: not ``true``, ``false``), an octal or
    binary integer, or a base-60 number (``1:30`` is 90)."""
    if type(value) is bool:
        return text.lower() not in ("true", "false")
    if type(value) is int or type(value) is float:
        return ":" in text or (type(value) is int and bool(_OCTAL_OR_BINARY.match(text)))
    return False


def _pos(node: yaml.Node) -> Pos:
    mark = node.start_mark
    return Pos(mark.line + 1, mark.column + 1)


def _reader_error(exc: yaml.reader.ReaderError, text: str) -> tuple[int, int, str]:
    """The 1-based line and column of the character the YAML reader refused, and the
    message. The error has no mark, only an offset (in bytes for libyaml, in characters
    for PyYAML's own reader): the refused character's first place in ``text`` is where
    either reader stopped, as it refuses the first it meets."""
    char = exc.character
    at = text.find(chr(char)) if isinstance(char, int) else -1
    if at < 0:
        return 1, 1, f"invalid YAML: {exc.reason}"
    line = text.count("\n", 0, at) + 1
    col = at - text.rfind("\n", 0, at)
    escape = f"\\x{char:02X}" if char <= 0xFF else f"\\u{char:04X}"
    return line, col, (f"invalid YAML: the character U+{char:04X} is not allowed in a YAML "
                       f"file ({exc.reason}); remove it, or write it as the escape "
                       f"\"{escape}\" in a double-quoted string")


def load_yaml(text: str, file: str, limits: Limits = CONFIG) -> tuple[Any, Positions]:
    """Parse one YAML document; errors are ``ConfigError`` with file:line:col."""
    positions = Positions(file)
    positions.set((), Pos(1, 1))
    if len(text) > limits.max_file_bytes:
        raise ConfigError.at(file, 1, 1, f"the file is larger than {limits.max_file_bytes} "
                             "bytes; agent-eval does not read config files that large")
    try:
        guard_yaml(text, limits)
        node = yaml.compose(text, Loader=_Loader)
    except YamlLimitError as exc:
        raise ConfigError.at(file, exc.line, exc.col, exc.message) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a NUL)
        raise ConfigError.at(file, *_reader_error(exc, text)) from None
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
