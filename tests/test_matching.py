"""ToolMatcher against an independent brute-force reference (docs/config.md "Tool names").

The reference below is written from the rules, not from ``fnmatch`` or matching.py:

* ``*`` any run of characters, ``?`` one character, ``[...]`` one character of a class,
  ``[!...]`` one character not in it; ``a-c`` inside a class is a range, a ``-`` that
  cannot form a range (first, last, or right after a range) is literal; a ``]`` right
  after ``[`` or ``[!`` is literal; a ``[`` with no closing ``]`` is a literal ``[``.
* the whole name must match.
* exact mode: characters compare as they are.
* normalized mode: the name is brought to its normal form (format characters dropped,
  NFKC, words split at ``-``, ``_``, whitespace and camelCase boundaries, case-folded,
  joined with ``_``); each literal run of the pattern is normalised the same way, but a
  separator at an end of the run that touches a glob token stays as one ``_``; a class
  member matches a character of the normal form when some character of the member
  folds to it. Then the tokens are matched against the normal form by backtracking.
"""

from __future__ import annotations

import unicodedata
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


def _separator(c: str) -> bool:
    return c in "-_" or c.isspace()


def _visible_nfkc(text: str) -> str:
    return unicodedata.normalize(
        "NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf"))


def ref_normalize(name: str) -> str:
    """The normal form, the slow way: mark every word break with a space, then split."""
    text = _visible_nfkc(name)
    marked = ""
    for i, c in enumerate(text):
        if _separator(c):
            marked += " "
            continue
        before = text[i - 1] if i > 0 else ""
        after = text[i + 1] if i + 1 < len(text) else ""
        camel = c.isupper() and (before.islower() or before.isdigit())
        acronym = c.isupper() and before.isupper() and after.islower()
        if camel or acronym:
            marked += " "
        marked += c
    folded = "_".join(word.casefold() for word in marked.split(" ") if word)
    return unicodedata.normalize("NFKC", folded)


@cache
def ref_fold(c: str) -> str:
    """What one class member character stands for in a normal form."""
    if unicodedata.category(c) == "Cf":
        return ""
    text = unicodedata.normalize("NFKC", c)
    if len(text) == 1 and _separator(text):
        return "_"
    return unicodedata.normalize("NFKC", text.casefold())


def _normalized_tokens(tokens: tuple[_Token, ...]) -> tuple[_Token, ...]:
    """Literal runs replaced by the characters of their normal form (separators that
    touch a glob token kept as one ``_``)."""
    out: list[_Token] = []
    k = 0
    while k < len(tokens):
        if not isinstance(tokens[k], _Lit):
            out.append(tokens[k])
            k += 1
            continue
        j = k
        while j < len(tokens) and isinstance(tokens[j], _Lit):
            j += 1
        run = "".join(t.ch for t in tokens[k:j])  # type: ignore[union-attr]
        text = _visible_nfkc(run)
        core = ref_normalize(run)
        lead = k > 0 and text[:1] != "" and _separator(text[0])
        trail = j < len(tokens) and text[-1:] != "" and _separator(text[-1])
        if not core:
            core = "_" if lead or trail else ""
        else:
            core = ("_" if lead else "") + core + ("_" if trail else "")
        out.extend(_Lit(ch) for ch in core)
        k = j
    return tuple(out)


def _in_class(tok: _Class, c: str, normalized: bool) -> bool:
    def fold(x: str) -> str:
        return ref_fold(x) if normalized else x

    hit = any(
        fold(chr(code)) == c
        for low, high in tok.members
        for code in range(ord(low), ord(high) + 1)
    )
    return hit != tok.negated


def ref_match(name: str, pattern: str, normalized: bool) -> bool:
    tokens = _parse(pattern)
    if normalized:
        tokens = _normalized_tokens(tokens)
        name = ref_normalize(name)

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
            ok = tok.ch == c
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
        ("EditFile", "edit_file", True, True),
        ("DeleteUser", "delete_*", True, True),
        ("deleted_records", "delete_*", True, False),
        ("HTTPServer", "http_server", True, True),
        ("ab", "a\u200b*", True, True),
        ("K", "[k]", True, True),  # the Kelvin sign folds to k
    ],
)
def test_reference_examples(name: str, pattern: str, normalized: bool, expected: bool) -> None:
    assert ref_match(name, pattern, normalized) is expected


# ------------------------------------------------------- examples from docs/config.md
@pytest.mark.parametrize("name", ["EditFile", "editFile", "edit_file", "edit-file",
                                  "EDIT FILE", "  edit_file ", "Edit__File", "edit\u200bFile",
                                  "\uff25dit\uff26ile", "edit\u3000file"])
def test_edit_file_spellings_are_one_tool(name: str) -> None:
    # issue 10 §2: EditFile = editFile = edit_file = edit-file = "EDIT FILE"; also with
    # spaces around, doubled separators, a zero-width space, full-width letters (NFKC)
    # and an ideographic space
    assert matching.normalize_name(name) == "edit_file"
    for pattern in ("EditFile", "edit_file", "edit-file", "EDIT FILE", "editFile"):
        assert ToolMatcher([pattern])(name), (pattern, name)
    assert not ToolMatcher(["editfile"])(name)
    assert not ToolMatcher(["EditFile"], "exact")(name) or name == "EditFile"


@pytest.mark.parametrize(("name", "normal"), [
    ("HTTPServer", "http_server"),
    ("getHTTPResponse", "get_http_response"),
    ("file2Go", "file2_go"),
    ("v2", "v2"),
    ("already_snake_case", "already_snake_case"),
    ("SCREAMING_SNAKE", "screaming_snake"),
    ("__init__", "init"),
    ("a--b", "a_b"),
    ("Straße", "strasse"),
    ("", ""),
    ("-_- ", ""),
])
def test_normal_forms(name: str, normal: str) -> None:
    assert matching.normalize_name(name) == normal
    assert ref_normalize(name) == normal


def test_globs_keep_separators_next_to_a_token() -> None:
    # issue 10 §2: delete_* matches DeleteUser and delete-user, not deleted_records
    m = ToolMatcher(["delete_*"])
    assert m("DeleteUser")
    assert m("delete-user")
    assert m("delete user")
    assert not m("deleted_records")
    assert not m("delete")  # a normal form never ends with a separator
    assert ToolMatcher(["delete*"])("deleted_records")
    assert ToolMatcher(["*_user"])("DeleteUser")
    assert not ToolMatcher(["*_user"])("superuser")
    assert ToolMatcher(["*User"])("superuser")  # a glob token is no word break
    assert ToolMatcher(["Delete*"])("delete_user")
    assert ToolMatcher(["get-*-by-id"])("getUserById")
    assert ToolMatcher(["[Dd]elete_*"])("deleteUser")


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


def test_a_literal_is_looked_up_and_the_first_place_still_wins() -> None:
    """Literal patterns are looked up by name, globs tried in order: the index is still
    the first pattern's that matches, literal or glob, in either mode."""
    m = ToolMatcher(["get_*", "Delete-User", "delete_*", "delete_user", "get_user"])
    assert m.which("delete_user") == 1  # the literal, in normal form, before delete_*
    assert m.which("delete_all") == 2
    assert m.which("get_user") == 0  # the glob before the literal
    assert m.which("put") is None
    exact = ToolMatcher(["a*", "b", "B", "a"], "exact")
    assert (exact.which("a"), exact.which("b"), exact.which("B")) == (0, 1, 2)
    assert exact.literals() is None
    assert ToolMatcher(["B", "b"], "exact").literals() == frozenset({"B", "b"})
    assert ToolMatcher(["Delete-User", "delete_user"]).literals() == frozenset({"delete_user"})


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
# Names and patterns over characters that exercise every step: case, separators (also
# whitespace other than a space), digits, a zero-width space (Cf), NFKC (full-width
# letters, a ligature, the Kelvin sign, a no-break space, a full-width hyphen),
# case folds of more than one character (ß, İ), a combining accent, class syntax.
NAME_CHARS = ("aAbBzZ09-_ \t[]^`"
              "\u200b\uff21\uff42\ufb01\u212a\u00a0\uff0d\u00df\u0130\u0301\u00e9")
PATTERN_CHARS = NAME_CHARS + "*?!"
names = st.text(alphabet=NAME_CHARS, max_size=7)
patterns = st.text(alphabet=PATTERN_CHARS, max_size=8)
CLASS_CHARS = "aAbBzZ9-_ ^`]\u200b\uff21\u212a\u00df\u00e9"


@st.composite
def bracket_patterns(draw: st.DrawFn) -> str:
    """Patterns that surely hold a class (ranges, negations, odd members)."""
    literal = "".join(c for c in NAME_CHARS if c not in "[]") + "*?"
    parts = draw(st.lists(st.one_of(
        st.text(alphabet=literal, max_size=3),
        st.builds(lambda neg, body: "[" + ("!" if neg else "") + body + "]",
                  st.booleans(), st.text(alphabet=CLASS_CHARS, min_size=1, max_size=4)),
    ), min_size=1, max_size=3))
    return "".join(parts)


SETTINGS = settings(max_examples=400, deadline=None)


@SETTINGS
@given(name=names)
def test_normal_form_agrees_with_reference(name: str) -> None:
    normal = matching.normalize_name(name)
    assert normal == ref_normalize(name)
    assert matching.normalize_name(normal) == normal  # idempotent
    assert not normal.startswith("_") and not normal.endswith("_") and "__" not in normal


@SETTINGS
@given(name=names, pattern=st.one_of(patterns, bracket_patterns()))
def test_normalized_agrees_with_reference(name: str, pattern: str) -> None:
    m = ToolMatcher([pattern], "normalized")
    assert m(name) is ref_match(name, pattern, True), (name, pattern)


@settings(max_examples=40, deadline=None)
@given(name=names, low=st.sampled_from("\x00 A"), high=st.sampled_from("\uffff\U0001ffff"),
       negated=st.booleans())
def test_wide_class_ranges_agree_with_reference(name: str, low: str, high: str,
                                                 negated: bool) -> None:
    # a range wider than matching._SMALL_RANGE takes the other path (the fold table)
    pattern = f"*[{'!' if negated else ''}{low}-{high}]*"
    assert ToolMatcher([pattern])(name) is ref_match(name, pattern, True), (name, pattern)


def test_every_character_of_a_normal_form_folds_to_itself() -> None:
    # what the wide-range path relies on: a class range stands for the characters in it
    # that fold to themselves, and a normal form holds no other kind
    normalize = matching.normalize_name.__wrapped__  # not through the cache
    category = unicodedata.category
    for cp in range(0x80, 0x110000):  # ASCII: checked by the reference tests
        c = chr(cp)
        if category(c) in ("Cn", "Cs", "Co"):
            continue  # unassigned, surrogates, private use: no case, no decomposition
        for ch in normalize(c):
            assert matching.fold_char(ch) == ch, (hex(cp), ch)


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


@settings(max_examples=150, deadline=None)
@given(names=st.lists(names, min_size=1, max_size=6),
       pats=st.lists(st.one_of(patterns, bracket_patterns(), st.sampled_from(
           ["*", "a*", "*_b", "A?", "a_b", "A-B", "aB"])), min_size=10, max_size=45),
       normalized=st.booleans())
def test_which_is_first_match_among_many_globs(
        names: list[str], pats: list[str], normalized: bool) -> None:
    """Past TREE_MIN globs they are tried together (a GlobTree): still the first pattern
    that matches, a literal before the first glob that matches winning, in either mode."""
    m = ToolMatcher(pats, "normalized" if normalized else "exact")
    for name in names:
        expected = ref_which(name, pats, normalized)
        assert m.which(name) == expected, (name, pats)
        assert m(name) is (expected is not None)


def test_a_literal_before_the_first_matching_glob_wins_among_many() -> None:
    globs = [f"tool_{i}_*" for i in range(40)]
    m = ToolMatcher([*globs[:20], "Tool-30-X", *globs[20:], "*"])
    assert m._tree is not None  # tried together
    assert m.which("tool_30_x") == 20  # the literal (normal form), before tool_30_*
    assert m.which("tool_30_y") == 31  # tool_30_*: after the literal's place
    assert m.which("tool_3_x") == 3 and m.which("other") == 41
    exact = ToolMatcher([*globs, "tool_5_x"], "exact")
    assert exact.which("tool_5_x") == 5 and exact.which("Tool_5_x") is None


def _swap(name: str) -> str:
    return name.translate(str.maketrans("-_ ", "_ -"))


@SETTINGS
@given(name=st.text(alphabet="abz-_ ", max_size=7),
       pattern=st.text(alphabet="abz-_ *?", max_size=7))
def test_normalized_ignores_case_and_separator(name: str, pattern: str) -> None:
    # all lower case and all upper case are one spelling (no camelCase break inside
    # either; digits are left out: "a0B" breaks before B)
    m = ToolMatcher([pattern])
    answer = m(name)
    assert m(name.upper()) is answer
    assert m(_swap(name)) is answer
    assert m("\u200b" + name.replace("-", "-\u200b")) is answer
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


@settings(max_examples=200, deadline=None)
@given(patterns=st.lists(st.sampled_from(["read_*", "Edit-File", "x", "*_db", "A?"]),
                         min_size=1, max_size=3),
       names=st.lists(st.sampled_from(["read_file", "edit_file", "EditFile", "x", "drop_db",
                                       "AB", "ab", "other"]), max_size=30),
       limit=st.sampled_from([3, 65536]))
def test_flags_are_one_byte_per_name_as_the_matcher_answers(
        patterns: list[str], names: list[str], limit: int) -> None:
    """The sequence rules' flags: a bytearray (1 when the name matches), the matcher's own
    answers whether the names are memoised or not, and when the memo is cleared midway."""
    saved = matching._MEMO_LIMIT
    matching._MEMO_LIMIT = limit
    try:
        for mode in ("normalized", "exact"):
            m = ToolMatcher(patterns, mode)
            expected = [int(ToolMatcher(patterns, mode)(n)) for n in names]
            first = m.flags(names)  # nothing memoised yet
            again = m.flags(names)  # every name memoised (unless the memo was cleared)
            assert type(first) is bytearray and list(first) == expected
            assert list(again) == expected
    finally:
        matching._MEMO_LIMIT = saved


def test_one_glob_written_many_times_is_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A suite repeating one long glob (a YAML alias, a thousand times) shares one
    translation and one RE2 program; each place used to make its own (minutes, GBs)."""
    made: list[str] = []
    from agent_eval.globre import FullMatch as real

    def counting(translated: str) -> object:
        made.append(translated)
        return real(translated)

    monkeypatch.setattr(matching, "FullMatch", counting)
    matching.compile_glob.cache_clear()
    big = "a" * 5000 + "*"
    modes: tuple[matching.ToolMatchMode, ...] = ("normalized", "exact")
    for mode in modes:
        m = ToolMatcher([big, "x_*", *[big] * 200, "x_*"], mode)
        assert m.which("a" * 5000 + "b") == 0 and m.which("x_y") == 1
        assert m.which("b") is None
        assert ToolMatcher([big], mode).which("a" * 5001) == 0
    assert len(made) == 4  # two globs, in two modes
    matching.compile_glob.cache_clear()
