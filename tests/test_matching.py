"""ToolMatcher against an independent brute-force glob matcher (config.md "Tool names").

The reference below is written from the rules, not from ``fnmatch``:

* ``*`` any run of characters, ``?`` one character, ``[...]`` one character of a class,
  ``[!...]`` one character not in it; ``a-c`` inside a class is a range, a ``-`` that
  cannot form a range (first, last, or right after a range) is literal; a ``]`` right
  after ``[`` or ``[!`` is literal; a ``[`` with no closing ``]`` is a literal ``[``.
* the whole name must match.
* normalized mode: every character is *folded* (lower-cased, ``-`` -> ``_``) on both
  sides; a class member (literal or range) matches a name character when some character
  of the member folds to the same thing as the name character.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agent_eval.matching as matching
from agent_eval.matching import ToolMatcher


# ---------------------------------------------------------------- the reference
@dataclass(frozen=True)
class _Lit:
    ch: str


@dataclass(frozen=True)
class _One:
    pass


@dataclass(frozen=True)
class _Star:
    pass


@dataclass(frozen=True)
class _Class:
    negated: bool
    members: tuple[tuple[str, str], ...]  # inclusive (low, high); a literal is (c, c)


_Token = _Lit | _One | _Star | _Class


def _parse(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            out.append(_Star())
            i += 1
        elif c == "?":
            out.append(_One())
            i += 1
        elif c == "[":
            j = i + 1
            negated = j < n and pattern[j] == "!"
            if negated:
                j += 1
            start = j
            if j < n and pattern[j] == "]":
                j += 1  # a leading ] is a member
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # never closed: a literal [
                out.append(_Lit("["))
                i += 1
                continue
            body = pattern[start:j]
            members: list[tuple[str, str]] = []
            k = 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    members.append((body[k], body[k + 2]))
                    k += 3
                else:
                    members.append((body[k], body[k]))
                    k += 1
            out.append(_Class(negated, tuple(members)))
            i = j + 1
        else:
            out.append(_Lit(c))
            i += 1
    return tuple(out)


def _fold(c: str, normalized: bool) -> str:
    if not normalized:
        return c
    return "_" if c == "-" else c.lower()


def _in_class(tok: _Class, c: str, normalized: bool) -> bool:
    want = _fold(c, normalized)
    hit = any(
        _fold(chr(code), normalized) == want
        for low, high in tok.members
        for code in range(ord(low), ord(high) + 1)
    )
    return hit != tok.negated


def ref_match(name: str, pattern: str, normalized: bool) -> bool:
    tokens = _parse(pattern)

    @cache
    def go(t: int, k: int) -> bool:
        if t == len(tokens):
            return k == len(name)
        tok = tokens[t]
        if isinstance(tok, _Star):
            return any(go(t + 1, m) for m in range(k, len(name) + 1))
        if k == len(name):
            return False
        c = name[k]
        if isinstance(tok, _One):
            ok = True
        elif isinstance(tok, _Lit):
            ok = _fold(tok.ch, normalized) == _fold(c, normalized)
        else:
            ok = _in_class(tok, c, normalized)
        return ok and go(t + 1, k + 1)

    return go(0, 0)


def ref_which(name: str, patterns: list[str], normalized: bool) -> int | None:
    for i, p in enumerate(patterns):
        if ref_match(name, p, normalized):
            return i
    return None


# ------------------------------------------------------------ the reference itself
@pytest.mark.parametrize(
    ("name", "pattern", "normalized", "expected"),
    [
        ("abc", "a*c", False, True),
        ("ac", "a*c", False, True),
        ("abd", "a*c", False, False),
        ("abc", "a?c", False, True),
        ("ac", "a?c", False, False),
        ("b", "[a-c]", False, True),
        ("d", "[a-c]", False, False),
        ("d", "[!a-c]", False, True),
        ("]", "[]a]", False, True),
        ("-", "[a-]", False, True),
        ("[", "[", False, True),
        ("[x", "[x", False, True),
        ("B", "[a-c]", True, True),
        ("b", "[A-C]", True, True),
        ("a-b", "a_b", True, True),
        ("a_b", "a[-]b", True, True),
        ("a-b", "a[_]b", True, True),
    ],
)
def test_reference_examples(name: str, pattern: str, normalized: bool, expected: bool) -> None:
    assert ref_match(name, pattern, normalized) is expected


# ------------------------------------------------------------ examples from config.md
@pytest.mark.parametrize("name", ["EditFile", "edit-file", "edit_file", "EDIT-FILE", "editfile"])
def test_edit_file_spellings_are_one_tool(name: str) -> None:
    # EditFile -> "editfile"; edit-file / edit_file -> "edit_file": config.md says the
    # three are one tool, which they are as far as case and -/_ go. "EditFile" has no
    # separator at all, so it equals "editfile", not "edit_file".
    m = ToolMatcher(["editfile", "edit_file"])
    assert m(name)


def test_edit_file_dash_and_underscore() -> None:
    m = ToolMatcher(["edit-file"])
    assert m("edit_file")
    assert m("Edit_File")
    assert m("EDIT-FILE")
    assert not m("editfile")


def test_admin_glob_normalized_and_exact() -> None:
    assert ToolMatcher(["admin_*"])("Admin-Delete")
    assert ToolMatcher(["admin_*"], "normalized")("ADMIN_delete")
    assert not ToolMatcher(["admin_*"], "exact")("Admin-Delete")
    assert not ToolMatcher(["admin_*"], "exact")("admin-delete")
    assert ToolMatcher(["admin_*"], "exact")("admin_delete")
    assert not ToolMatcher(["admin_delete"], "exact")("Admin_delete")


def test_whole_name_match() -> None:
    assert not ToolMatcher(["admin"])("admin_delete")
    assert not ToolMatcher(["delete"])("admin_delete")
    assert not ToolMatcher(["admin_?"])("admin_de")
    assert ToolMatcher(["*delete"])("admin_delete")


def test_dash_inside_class_is_a_range() -> None:
    m = ToolMatcher(["tool_[a-c]"])
    assert m("tool_b")
    assert m("TOOL-B")
    assert not m("tool_d")
    assert not m("tool_-")


def test_which_returns_first_matching_index() -> None:
    m = ToolMatcher(["x", "admin_*", "*delete", "admin_delete"])
    assert m.which("admin_delete") == 1
    assert m.which("purge_delete") == 2
    assert m.which("X") == 0
    assert m.which("other") is None
    assert not m("other")


def test_empty_pattern_list_matches_nothing() -> None:
    m = ToolMatcher([])
    assert m.which("a") is None
    assert not m("")


def test_memo_limit_keeps_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matching, "_MEMO_LIMIT", 3)
    m = ToolMatcher(["a*", "b"])
    names = ["a1", "b", "c", "a2", "B", "d", "a1", "c", "b"]
    expected = [0, 1, None, 0, 1, None, 0, None, 1]
    for _ in range(3):
        assert [m.which(n) for n in names] == expected
        assert [m(n) for n in names] == [e is not None for e in expected]


# ------------------------------------------------------------------- properties
NAME_CHARS = "aAbBzZ-_[]^`"
PATTERN_CHARS = NAME_CHARS + "*?!"
names = st.text(alphabet=NAME_CHARS, max_size=6)
patterns = st.text(alphabet=PATTERN_CHARS, max_size=7)


@st.composite
def bracket_patterns(draw: st.DrawFn) -> str:
    """Patterns that surely hold a class (ranges, negations, odd members)."""
    parts = draw(st.lists(st.one_of(
        st.text(alphabet=NAME_CHARS.replace("[", "").replace("]", "") + "*?", max_size=2),
        st.builds(lambda neg, body: "[" + ("!" if neg else "") + body + "]",
                  st.booleans(), st.text(alphabet="aAbBzZ-_^`]", min_size=1, max_size=4)),
    ), min_size=1, max_size=3))
    return "".join(parts)


SETTINGS = settings(max_examples=200, deadline=None)


@SETTINGS
@given(name=names, pattern=st.one_of(patterns, bracket_patterns()))
def test_normalized_agrees_with_reference(name: str, pattern: str) -> None:
    m = ToolMatcher([pattern], "normalized")
    assert m(name) is ref_match(name, pattern, True), (name, pattern)


@SETTINGS
@given(name=names, pattern=st.one_of(patterns, bracket_patterns()))
def test_exact_agrees_with_reference(name: str, pattern: str) -> None:
    m = ToolMatcher([pattern], "exact")
    assert m(name) is ref_match(name, pattern, False), (name, pattern)


@SETTINGS
@given(name=names, pats=st.lists(st.one_of(patterns, bracket_patterns()), max_size=4),
       normalized=st.booleans())
def test_which_is_first_match(name: str, pats: list[str], normalized: bool) -> None:
    m = ToolMatcher(pats, "normalized" if normalized else "exact")
    expected = ref_which(name, pats, normalized)
    assert m.which(name) == expected
    # memoised: the same answer again, through both entry points
    assert m(name) is (expected is not None)
    assert m.which(name) == expected
    assert m(name) is (expected is not None)


def _swap(name: str) -> str:
    return name.translate(str.maketrans("-_", "_-"))


@SETTINGS
@given(name=names, pattern=st.text(alphabet="aAbBzZ-_^`*?", max_size=7))
def test_normalized_ignores_case_and_separator(name: str, pattern: str) -> None:
    m = ToolMatcher([pattern])
    answer = m(name)
    assert m(name.upper()) is answer
    assert m(name.lower()) is answer
    assert m(_swap(name)) is answer
    # the pattern side too
    assert ToolMatcher([pattern.upper()])(name) is answer
    assert ToolMatcher([_swap(pattern)])(name) is answer


@SETTINGS
@given(name=names, pattern=st.one_of(patterns, bracket_patterns()))
def test_memo_gives_the_same_answer(name: str, pattern: str) -> None:
    m = ToolMatcher([pattern])
    first = m(name)
    assert [m(name) for _ in range(3)] == [first] * 3
    assert m.which(name) == (0 if first else None)
    fresh = ToolMatcher([pattern])
    assert fresh.which(name) == (0 if first else None)
