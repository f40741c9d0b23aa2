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

from re2 import Options, _re2  # type: ignore[import-untyped]

__all__ = ["NEVER", "FullMatch", "class_end", "fnmatch_class", "literal", "python_class",
           "translate"]

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

    __slots__ = ("_match", "translated")

    def __init__(self, translated: str) -> None:
        regex = _re2.RE2(translated.encode(), _OPTIONS)
        if not regex.ok():  # pragma: no cover - translate makes only valid RE2
            raise ValueError(f"glob translated to invalid RE2 {translated!r}: "
                             f"{regex.error()!r}")
        self.translated = translated
        self._match = regex.Match

    def match(self, text: str) -> bool | None:
        data = _utf8(text)
        return True if self._match(_BOTH, data, 0, len(data))[0] != _NO_MATCH else None

    def __reduce__(self) -> tuple[type[FullMatch], tuple[str]]:
        return FullMatch, (self.translated,)  # compiled again


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
