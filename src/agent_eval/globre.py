"""Globs from configs, matched in linear time (RE2), never by a backtracking engine.

A tool-name glob (``blocklist: ["*a*a*a*a*b"]``) or a scenario's ``traces:`` glob is
written by whoever writes the suite, in a pull request, and the names it is matched
against come from traces. Translated for Python's ``re``, ``*a*a*a*a*a*a*a*a*b`` takes
minutes against one long name; RE2 (docs/security.md "Regular expressions") runs every
glob in time linear in the name. This module turns a glob into RE2 syntax and compiles
it: :class:`FullMatch`'s ``match(text)`` is true when the glob matches the whole text.

Characters are written to RE2 as ``\\x{HEX}`` escapes (letters, digits and ``_`` as
they are), so no character of a glob is ever read as RE2 syntax. A class is written from
the class ``fnmatch`` makes of it (:func:`fnmatch_class`), so ``tool_match: exact``
globs keep ``fnmatch``'s meaning, but for one thing: RE2 reads UTF-8, which cannot hold a
lone surrogate (U+D800 to U+DFFF), so one is read as U+FFFD, in the glob and in the name
alike (a glob holding U+FFFD, a surrogate or a range across them can then match a name
``fnmatch`` would not).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from typing import Any

from re2 import Options, _re2  # type: ignore[import-untyped]

__all__ = ["NEVER", "TREE_MIN", "FullMatch", "GlobTree", "class_end", "fnmatch_class",
           "literal", "python_class", "translate"]

_OPTIONS = Options()
_OPTIONS.log_errors = False
_OPTIONS.never_capture = True
_OPTIONS.dot_nl = True  # "*" and "?" match any character, a line break too (fnmatch: re.S)
_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH
_NO_MATCH = (-1, -1)
NEVER = r"[^\x{0}-\x{10ffff}]"  # an empty class: matches no character
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (which UTF-8 cannot hold) as U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").encode()


def literal(c: str) -> str:
    """One character as RE2 reads it literally (in or out of a class)."""
    if c in _PLAIN:
        return c
    cp = ord(c)
    if 0xD800 <= cp <= 0xDFFF:
        cp = 0xFFFD  # as _utf8 makes it in the text
    return f"\\x{{{cp:x}}}"


class FullMatch:
    """A compiled glob; ``match(text)`` is ``True`` when it matches all of ``text``,
    else ``None`` (as ``re.Pattern.match`` of a pattern ending in ``\\Z`` is truthy or
    ``None``)."""

    __slots__ = ("_match", "size", "translated")

    def __init__(self, translated: str) -> None:
        regex = _re2.RE2(translated.encode(), _OPTIONS)
        if not regex.ok():  # pragma: no cover - translate makes only valid RE2
            raise ValueError(f"glob translated to invalid RE2 {translated!r}: "
                             f"{regex.error()!r}")
        self.translated = translated
        self.size = int(regex.ProgramSize())  # RE2 instructions
        self._match = regex.Match

    def match(self, text: str) -> bool | None:
        data = _utf8(text)
        return True if self._match(_BOTH, data, 0, len(data))[0] != _NO_MATCH else None

    def __reduce__(self) -> tuple[type[FullMatch], tuple[str]]:
        return FullMatch, (self.translated,)  # compiled again


# ------------------------------------------------------------------ many globs at once
TREE_MIN = 16  # fewer globs than this are tried one by one (cheaper than a tree's nodes)
# A node's program is compiled when it holds at most _NODE_PROGRAM RE2 instructions, the
# tallest nodes first, while the tree's nodes hold at most _TREE_PROGRAM together: a few
# tens of MB, a fraction of a second to compile, however many and long the globs.
_NODE_PROGRAM = 1 << 16
_TREE_PROGRAM = 1 << 20

# A node: [number, first glob, end, the RE2 match of its globs or None, left, right]; a
# leaf (one glob) has no children and its own glob's match.
_Node = list[Any]


class GlobTree:
    """Which of many globs match a text, in O(log n) RE2 matches per text, not n.

    A balanced binary tree over the globs: each node holds ONE RE2 program, the
    alternation of its globs (anchored at both ends, as :class:`FullMatch`), and each leaf
    a glob's own. A text is tried at the root; a subtree is entered only when its node
    matches (a name that matches none of 1,000 globs costs one match, not 1,000). The
    alternation matches exactly when one of its globs does: RE2's ``Match`` falls back from
    its DFA to the NFA when the DFA runs out of memory, so a node never misses a match
    (``re2.Set`` is not used: its Python binding drops that failure and answers "none").

    A node holds nothing, and its children are tried instead, when its program would be
    too large (:data:`_NODE_PROGRAM`), when the tree's programs already hold
    :data:`_TREE_PROGRAM` instructions (the tallest nodes are compiled first), or when it
    does not compile (RE2's memory budget): no answer depends on a large program
    compiling. Below :data:`TREE_MIN` globs, the globs are tried one by one.
    """

    __slots__ = ("_leaves", "_root", "globs", "nodes")

    def __init__(self, globs: Sequence[FullMatch]) -> None:
        self.globs = tuple(globs)
        self._leaves = tuple(g._match for g in self.globs)
        self.nodes = 0  # number of nodes (the size of a ``seen`` array for :meth:`new`)
        self._root: _Node | None = None
        if len(self.globs) < TREE_MIN:
            self.nodes = len(self.globs)
            return
        inner: list[tuple[int, int, _Node]] = []  # (-height, number, node) of each node
        sizes = [0]
        for g in self.globs:
            sizes.append(sizes[-1] + g.size)  # sizes[hi] - sizes[lo]: the globs lo to hi
        self._root = self._build(0, len(self.globs), inner)
        budget = _TREE_PROGRAM
        for _, _, node in sorted(inner):
            lo, hi = node[1], node[2]
            size = sizes[hi] - sizes[lo] + hi - lo  # about: one instruction per "|"
            if size > _NODE_PROGRAM or size > budget:
                continue
            text = "|".join(f"(?:{g.translated})" for g in self.globs[lo:hi])
            regex = _re2.RE2(text.encode(), _OPTIONS)
            if regex.ok():  # else too large for RE2: the children answer
                node[3] = regex.Match
                budget -= int(regex.ProgramSize())

    def _build(self, lo: int, hi: int, inner: list[tuple[int, int, _Node]]) -> _Node:
        """The node of globs ``lo`` to ``hi`` (its program not compiled yet)."""
        number = self.nodes
        self.nodes += 1
        if hi - lo == 1:
            return [number, lo, hi, self._leaves[lo], None, None]
        mid = (lo + hi) // 2
        node = [number, lo, hi, None, self._build(lo, mid, inner),
                self._build(mid, hi, inner)]
        inner.append((-(hi - lo).bit_length(), number, node))  # the tallest first
        return node

    def first(self, text: str, stop: int | None = None) -> int:
        """Index of the first glob (before ``stop``) that matches all of ``text``, or -1."""
        data = _utf8(text)
        end = len(data)
        if stop is None:
            stop = len(self.globs)
        if self._root is None:
            for i in range(min(stop, len(self._leaves))):
                if self._leaves[i](_BOTH, data, 0, end)[0] != _NO_MATCH:
                    return i
            return -1
        return _first(self._root, data, end, stop, False)

    def matching(self, text: str) -> list[int]:
        """Indexes of every glob that matches all of ``text``, in order."""
        return self.new(text, None)

    def new(self, text: str, seen: bytearray | None) -> list[int]:
        """Indexes of the globs that match all of ``text`` and are not ``seen`` yet, in
        order; each is then marked seen. ``seen``: ``bytearray(tree.nodes)``, kept by the
        caller from text to text; a subtree whose globs were all seen is not tried."""
        data = _utf8(text)
        out: list[int] = []
        if self._root is None:
            end = len(data)
            for i, match in enumerate(self._leaves):
                if (seen is None or not seen[i]) and match(_BOTH, data, 0, end)[0] != _NO_MATCH:
                    out.append(i)
                    if seen is not None:
                        seen[i] = 1
        else:
            _new(self._root, data, len(data), seen, out)
        return out

    def __reduce__(self) -> tuple[type[GlobTree], tuple[tuple[FullMatch, ...]]]:
        return GlobTree, (self.globs,)  # compiled again


def _first(node: _Node, data: bytes, end: int, stop: int, known: bool) -> int:
    """``known``: the node's globs are known to match (its parent matched and its left
    sibling did not)."""
    lo: int
    _, lo, _, match, left, right = node
    if lo >= stop:
        return -1
    if not known and match is not None:
        if match(_BOTH, data, 0, end)[0] == _NO_MATCH:
            return -1
        known = True
    if left is None:
        return lo  # a leaf: its glob matched (a leaf's match is never None)
    found = _first(left, data, end, stop, False)
    if found >= 0:
        return found
    # the left half holds no match before stop: when this node matched, the right half
    # does (or it starts at or after stop, and answers -1)
    return _first(right, data, end, stop, known)


def _new(node: _Node, data: bytes, end: int, seen: bytearray | None, out: list[int]) -> None:
    number, lo, _, match, left, right = node
    if seen is not None and seen[number]:
        return
    if match is not None and match(_BOTH, data, 0, end)[0] == _NO_MATCH:
        return
    if left is None:
        out.append(lo)
        if seen is not None:
            seen[number] = 1
        return
    _new(left, data, end, seen, out)
    _new(right, data, end, seen, out)
    if seen is not None and seen[left[0]] and seen[right[0]]:
        seen[number] = 1


def class_end(pattern: str, i: int) -> int:
    """Index of the ``]`` closing the class whose ``[`` is at ``i - 1`` (delimited
    the way ``fnmatch`` delimits it), or -1 when the class is never closed."""
    n = len(pattern)
    j = i
    if j < n and pattern[j] == "!":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 1
    return j if j < n else -1


def python_class(inner: str) -> str:
    """A Python ``re`` class body (between ``[`` and ``]``, as ``fnmatch`` writes it: ``^``
    first negates, ``\\`` escapes the next character, an unescaped ``-`` between two
    characters is a range, a ``]`` first is literal) in RE2 syntax, with its brackets."""
    negated = inner.startswith("^")
    s = inner[1:] if negated else inner
    out: list[str] = []
    i, n = 0, len(s)

    def one() -> str:
        nonlocal i
        if s[i] == "\\" and i + 1 < n:
            i += 2
            return s[i - 1]
        i += 1
        return s[i - 1]

    while i < n:
        low = one()
        if i + 1 < n and s[i] == "-":  # a range: "-" between two characters
            i += 1
            high = one()
            out.append(f"{literal(low)}-{literal(high)}")
        else:
            out.append(literal(low))
    if not out:
        return "." if negated else NEVER
    return "[" + ("^" if negated else "") + "".join(out) + "]"


def fnmatch_class(body: str) -> str:
    """The class ``[body]`` of a glob (``body``: what is between the brackets) with the
    meaning ``fnmatch`` gives it, in RE2 syntax: ``fnmatch`` writes it as a Python
    class (its ranges, its empty ranges dropped, its escapes), which is rewritten."""
    made = fnmatch.translate(f"[{body}]")  # "(?s:[...])\Z", "(?s:(?!))\Z" or "(?s:.)\Z"
    inner = made[len("(?s:"):-len(r")\Z")]
    if inner == "(?!)":
        return NEVER
    if inner == ".":
        return "."
    return python_class(inner[1:-1])


def translate(pattern: str) -> str:
    """A ``tool_match: exact`` glob (``fnmatch``'s: ``*`` any text, ``?`` one
    character, ``[...]`` a class, ``[!...]`` a negated one, an unclosed ``[`` literal)
    in RE2 syntax, to be matched against a whole name."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            if not out or out[-1] != ".*":
                out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[" and (end := class_end(pattern, i)) >= 0:
            out.append(fnmatch_class(pattern[i:end]))
            i = end + 1
        else:
            out.append(literal(c))
    return "".join(out)
