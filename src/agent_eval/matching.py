"""Tool-name matching: fnmatch globs over the whole name, normalized or exact.

``normalized`` (the default) compares names in a normal form (docs/config.md "Tool
names"): invisible format characters (Unicode category Cf) dropped, Unicode NFKC, split
into words at ``-``, ``_``, whitespace and camelCase boundaries, each word case-folded,
the words joined with ``_`` (and NFKC once more). ``EditFile``, ``editFile``,
``edit-file``, ``EDIT FILE`` and ``edit_file`` are all ``edit_file``; ``HTTPServer`` is
``http_server``.

A glob is matched against the normal form of the name. Its literal runs (the text
between ``*``, ``?`` and ``[...]``) are normalised the same way, except that a
separator touching a glob token is kept as one ``_``: ``delete_*`` is ``delete_*``
(it matches ``DeleteUser`` and ``delete-user``, not ``deleted_records``). Inside a
class, a member matches a name character when it folds to it (``[A-C]`` holds ``a``,
``[-]`` holds ``_``).

Patterns are compiled once, by RE2 (:mod:`agent_eval.globre`: no glob can make a run
hang), and the same glob text shares one compiled program wherever it is written
(:func:`compile_glob`); per-name answers are memoised, so the hot path is a dict lookup.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

from agent_eval.globre import (
    NEVER,
    TREE_MIN,
    FullMatch,
    GlobTree,
    class_end,
    literal,
    translate,
)

ToolMatchMode = Literal["normalized", "exact"]
# a tool field's `@NAME` names a tool group of the suite (`tool_groups:`), not a tool
GROUP_PREFIX = "@"
_GLOB_CHARS = frozenset("*?[")
_MEMO_LIMIT = 65536
_GLOB_MEMO = 4096  # compiled globs kept (by text and mode) for the suites a process loads
_SMALL_RANGE = 4096  # class ranges up to this many code points are folded one by one


# --------------------------------------------------------------------- normal form
def _is_sep(c: str) -> bool:
    return c == "-" or c == "_" or c.isspace()


def _prepare(text: str) -> str:
    """Format characters dropped, then NFKC (the order matters: a zero-width space
    between a letter and a combining accent must not keep them apart)."""
    if text.isascii():
        return text  # NFKC leaves ASCII alone and ASCII has no format characters
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", text)


def _words(text: str) -> list[str]:
    """The words of a prepared text: split at separators, where a lower-case letter or
    a digit meets an upper-case letter (``editFile``), and before the last capital of
    an acronym that starts a word (``HTTPServer`` -> HTTP, Server)."""
    words: list[str] = []
    start = -1  # start of the current word, -1 between words
    n = len(text)
    for i, c in enumerate(text):
        if _is_sep(c):
            if start >= 0:
                words.append(text[start:i])
                start = -1
            continue
        if start < 0:
            start = i
        elif c.isupper():
            prev = text[i - 1]
            if prev.islower() or prev.isdigit() or (
                    prev.isupper() and i + 1 < n and text[i + 1].islower()):
                words.append(text[start:i])
                start = i
    if start >= 0:
        words.append(text[start:])
    return words


def _fold_words(words: list[str]) -> str:
    """The words case-folded and joined with ``_``; NFKC once more, since a case fold
    may leave a decomposed character (``ß`` + accent -> ``ss`` + accent -> ``sś``)."""
    text = "_".join(w.casefold() for w in words)
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


@lru_cache(maxsize=_MEMO_LIMIT)
def normalize_name(name: str) -> str:
    """The normal form of a tool name under ``tool_match: normalized``."""
    return _fold_words(_words(_prepare(name)))


def normalize_literal(text: str, glob_before: bool, glob_after: bool) -> str:
    """A literal run of a glob pattern, normalised like a name, except that a separator
    at an end that touches a glob token is kept (as one ``_``)."""
    text = _prepare(text)
    words = _words(text)
    lead = glob_before and bool(text) and _is_sep(text[0])
    trail = glob_after and bool(text) and _is_sep(text[-1])
    if not words:
        return "_" if lead or trail else ""
    return ("_" if lead else "") + _fold_words(words) + ("_" if trail else "")


def fold_char(c: str) -> str:
    """What one character of a class stands for in a normal form: ``_`` for a
    separator, nothing for a format character, else its NFKC case fold (a fold of
    more than one character matches no single name character)."""
    if _is_sep(c):
        return "_"
    if unicodedata.category(c) == "Cf":
        return ""
    folded = unicodedata.normalize("NFKC", c)
    if len(folded) == 1 and _is_sep(folded):
        return "_"
    return _fold_words([folded])


@lru_cache(maxsize=1)
def _fold_table() -> tuple[tuple[int, str], ...]:
    """Every code point whose fold is one character other than itself (about 2,000
    of them; computed once, only for a class with a range wider than _SMALL_RANGE)."""
    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        f = fold_char(c)
        if f != c and len(f) == 1:
            out.append((cp, f))
    return tuple(out)


# ------------------------------------------------------------------------ globs
def _class_members(body: str) -> list[tuple[str, str]]:
    """Members of a class body as inclusive (low, high) pairs: ``a-c`` is a range; a
    ``-`` that cannot form one (first, last, right after a range) is literal."""
    members: list[tuple[str, str]] = []
    k, n = 0, len(body)
    while k < n:
        if k + 2 < n and body[k + 1] == "-":
            members.append((body[k], body[k + 2]))
            k += 3
        else:
            members.append((body[k], body[k]))
            k += 1
    return members


def _class_regex(body: str) -> str:
    """A regex for one class of a normalized glob, over normalised names.

    A member matches a name character ``x`` when some character of it folds to ``x``.
    Small ranges are folded character by character. A wide range is kept as a range
    (a name character in it folds to itself: every character of a normal form does)
    plus the folds of the characters in it that fold to another character."""
    negated = body.startswith("!")
    chars: set[str] = set()
    spans: list[str] = []
    for low, high in _class_members(body[1:] if negated else body):
        if low > high:
            continue  # an empty range, as in fnmatch
        if ord(high) - ord(low) < _SMALL_RANGE:
            for cp in range(ord(low), ord(high) + 1):
                f = fold_char(chr(cp))
                if len(f) == 1:
                    chars.add(f)
        else:
            spans.append(f"{literal(low)}-{literal(high)}")
            chars.update(f for cp, f in _fold_table() if ord(low) <= cp <= ord(high))
    items = "".join(literal(c) for c in sorted(chars)) + "".join(spans)
    if not items:
        return "." if negated else NEVER
    return f"[{'^' if negated else ''}{items}]"


def translate_normalized(pattern: str) -> str:
    """A regex in RE2 syntax (:mod:`agent_eval.globre`), matched against the whole of a
    :func:`normalize_name`-d name, for a glob under ``tool_match: normalized``."""
    parts: list[tuple[bool, str]] = []  # (is a glob token, raw literal text or regex)
    i, n = 0, len(pattern)
    text: list[str] = []

    def flush() -> None:
        if text:
            parts.append((False, "".join(text)))
            text.clear()

    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            flush()
            if not parts or parts[-1] != (True, ".*"):
                parts.append((True, ".*"))
        elif c == "?":
            flush()
            parts.append((True, "."))
        elif c == "[" and (end := class_end(pattern, i)) >= 0:
            flush()
            parts.append((True, _class_regex(pattern[i:end])))
            i = end + 1
        else:
            text.append(c)
    flush()
    out = []
    for k, (glob, part) in enumerate(parts):
        if glob:
            out.append(part)
        else:
            before = k > 0 and parts[k - 1][0]
            after = k + 1 < len(parts) and parts[k + 1][0]
            out.extend(literal(c) for c in normalize_literal(part, before, after))
    return "".join(out)


def is_glob(pattern: str) -> bool:
    return not _GLOB_CHARS.isdisjoint(pattern)


@lru_cache(maxsize=_GLOB_MEMO)
def compile_glob(pattern: str, normalized: bool) -> FullMatch:
    """A glob translated and compiled once, whatever the number of places that name it:
    a suite repeating one long glob (a YAML alias, a thousand times) shares one
    translation and one RE2 program (they were made anew for each place: a 53 KB
    suite took minutes and gigabytes)."""
    return FullMatch(translate_normalized(pattern) if normalized else translate(pattern))


class ToolMatcher:
    """Matches a tool name against a list of patterns ("any of"). A name is looked up
    among the literal patterns at once (a dict) and tried against the globs only; a
    blocklist of a thousand names tried each against every distinct name a trace called
    (a million comparisons per thousand names: minutes). Many globs are tried together
    (:class:`~agent_eval.globre.GlobTree`: a blocklist of 1,000 globs against 20,000
    distinct names took over five minutes, one RE2 match per glob and name)."""

    __slots__ = ("_exact", "_glob_at", "_globs", "_hits", "_memo", "_normalized", "_tree",
                 "patterns")

    def __init__(self, patterns: Sequence[str], mode: ToolMatchMode = "normalized") -> None:
        self.patterns = tuple(patterns)
        self._normalized = mode == "normalized"
        exact: dict[str, int] = {}  # a literal's name (normal form) -> its first index
        globs: list[tuple[int, FullMatch]] = []
        seen: set[str] = set()
        for i, p in enumerate(self.patterns):
            if p in seen:  # a repeat never matches first: only its first place is tried
                continue
            seen.add(p)
            if not is_glob(p):
                exact.setdefault(normalize_name(p) if self._normalized else p, i)
            else:  # globs in RE2: a suite's glob cannot make a run hang
                globs.append((i, compile_glob(p, self._normalized)))
        self._exact = exact
        self._globs = tuple(globs)
        self._glob_at = tuple(i for i, _ in globs)  # a glob's place among the patterns
        self._tree = GlobTree([g for _, g in globs]) if len(globs) >= TREE_MIN else None
        self._memo: dict[str, int] = {}
        self._hits: dict[str, int] = {}  # the same names -> 1 when one matches, else 0

    @property
    def normalized(self) -> bool:
        return self._normalized

    def literals(self) -> frozenset[str] | None:
        """The names this matcher matches (in normal form under ``tool_match:
        normalized``) when all its patterns are literal; None when one is a glob."""
        return None if self._globs else frozenset(self._exact)

    def parts(self) -> tuple[frozenset[str], tuple[FullMatch, ...]]:
        """The names its literal patterns match (in normal form under ``tool_match:
        normalized``) and its globs, compiled (each once): it matches a name when the
        name (its normal form) is one of the names or matches one of the globs."""
        return frozenset(self._exact), tuple(g for _, g in self._globs)

    def which(self, name: str) -> int | None:
        """Index of the first pattern that matches ``name``, or None."""
        hit = self._memo.get(name)
        if hit is not None:
            return hit if hit >= 0 else None
        key = normalize_name(name) if self._normalized else name
        found = self._exact.get(key, -1)
        if self._tree is not None:  # only the globs before a literal that matched
            g = self._tree.first(key, None if found < 0 else bisect_left(self._glob_at, found))
            if g >= 0:
                found = self._glob_at[g]
        else:
            for i, regex in self._globs:
                if 0 <= found < i:
                    break  # a literal before this glob matched first
                if regex.match(key) is not None:
                    found = i
                    break
        if len(self._memo) >= _MEMO_LIMIT:
            self._memo.clear()
            self._hits.clear()
        self._memo[name] = found
        self._hits[name] = found >= 0
        return found if found >= 0 else None

    def __call__(self, name: str) -> bool:
        hit = self._memo.get(name)
        if hit is not None:
            return hit >= 0
        return self.which(name) is not None

    def flags(self, names: Sequence[str]) -> bytearray:
        """``bytearray(self(n) for n in names)``: one byte per name, 1 when it matches
        (a list of booleans took 8 bytes a name: a million calls, 8 MB per rule), made in
        C once the names are memoised (the sequence rules ask this for every trace)."""
        try:
            return bytearray(map(self._hits.__getitem__, names))
        except KeyError:
            which = self.which
            return bytearray(which(n) is not None for n in names)


class NameIndex:
    """Which of many matchers (a suite's coverage references, a policy's keys) match a
    name. The names their literal patterns give are looked up (a dict); their globs are
    tried together, one :class:`~agent_eval.globre.GlobTree` per mode, each distinct glob
    once: 1,000 references of a glob each, tried one by one against 20,000 distinct
    names called, took minutes (and each reference's matcher memoised the names)."""

    __slots__ = ("_by_name", "_trees")

    def __init__(self, matchers: Sequence[ToolMatcher]) -> None:
        by_name: dict[tuple[bool, str], list[int]] = {}
        globs: dict[bool, dict[str, tuple[FullMatch, list[int]]]] = {True: {}, False: {}}
        for i, m in enumerate(matchers):
            names, compiled = m.parts()
            for n in names:
                by_name.setdefault((m.normalized, n), []).append(i)
            for g in compiled:
                globs[m.normalized].setdefault(g.translated, (g, []))[1].append(i)
        self._by_name = {k: tuple(v) for k, v in by_name.items()}
        self._trees = tuple(
            (normalized, GlobTree([g for g, _ in d.values()]),
             tuple(tuple(owners) for _, owners in d.values()))
            for normalized, d in globs.items() if d)

    def matches(self, name: str) -> bool:
        """Whether one of the matchers matches ``name``."""
        if self._by_name and ((True, normalize_name(name)) in self._by_name
                              or (False, name) in self._by_name):
            return True
        return any(tree.first(normalize_name(name) if normalized else name) >= 0
                   for normalized, tree, _ in self._trees)

    def seen(self) -> list[bytearray]:
        """A fresh record, for :meth:`matching`, of the globs that matched a name."""
        return [bytearray(tree.nodes) for _, tree, _ in self._trees]

    def matching(self, name: str, seen: list[bytearray] | None = None) -> list[int]:
        """The matchers that match ``name`` (a matcher may come more than once, in no
        set order). With ``seen`` (from :meth:`seen`, kept from name to name), a glob
        that matched an earlier name is not tried again and its matchers not given
        again: for callers that only ask which matchers ever matched."""
        out: list[int] = []
        if self._by_name:
            for key in ((True, normalize_name(name)), (False, name)):
                out += self._by_name.get(key, ())
        for k, (normalized, tree, owners) in enumerate(self._trees):
            text = normalize_name(name) if normalized else name
            for g in tree.new(text, None if seen is None else seen[k]):
                out += owners[g]
        return out
