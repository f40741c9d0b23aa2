"""globre: globs from configs in RE2. ``tool_match: exact`` globs against fnmatch itself,
classes against Python's ``re``, and globs that a backtracking engine takes minutes on."""

from __future__ import annotations

import fnmatch
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from re2 import _re2  # type: ignore[import-untyped]

from agent_eval import globre
from agent_eval.globre import (
    NEVER,
    TREE_MIN,
    FullMatch,
    GlobTree,
    class_end,
    fnmatch_class,
    literal,
    python_class,
    translate,
)
from agent_eval.matching import ToolMatcher, translate_normalized
from agent_eval.scenarios.compile import glob_regex

# the characters that mean something to a glob, to a class or to RE2, and a few others
SPECIAL = "*?[]!-^\\.(){}|+$&~# \n/"
CHARS = st.sampled_from("ab" + SPECIAL + "é\u00e9\u0130ß𝔸")


@settings(max_examples=2000, deadline=None)
@given(pattern=st.text(CHARS, max_size=10), name=st.text(CHARS, max_size=8))
def test_exact_globs_match_as_fnmatch(pattern: str, name: str) -> None:
    assert bool(FullMatch(translate(pattern)).match(name)) == fnmatch.fnmatchcase(name, pattern)


@settings(max_examples=1000, deadline=None)
@given(body=st.text(CHARS, min_size=1, max_size=8),
       chars=st.lists(st.sampled_from("ab" + SPECIAL + "é\u00e9\u0130ß𝔸c_Z"), max_size=6))
def test_classes_match_as_pythons(body: str, chars: list[str]) -> None:
    if class_end(f"[{body}]", 1) != len(body) + 1:
        return  # "[body]" is not one class (unclosed, or closed before its end)
    made = fnmatch.translate(f"[{body}]")
    if not made.startswith("(?s:["):
        return  # fnmatch makes no class of it: "(?!)" (empty) or "." ("[!]")
    inner = made[len("(?s:["):-len(r"])\Z")]
    python = re.compile(f"[{inner}]", re.S)
    ours = FullMatch(python_class(inner))
    for c in chars:
        assert bool(ours.match(c)) == bool(python.fullmatch(c)), (body, inner, c)


def test_literals_and_empty_classes() -> None:
    assert literal("a") == "a" and literal("_") == "_" and literal("*") == r"\x{2a}"
    assert literal("\ud800") == r"\x{fffd}"  # what a lone surrogate of a name becomes
    assert FullMatch(NEVER).match("a") is None and FullMatch(NEVER).match("") is None
    assert fnmatch_class("b-a") == NEVER  # an empty range: no character, as in fnmatch
    assert FullMatch(translate("x[b-a]")).match("xa") is None
    assert FullMatch(translate("[!]")).match("[!]")  # no class: literal text
    assert FullMatch(translate("a?")).match("a\n")  # ? and * match a line break (re.S)
    assert FullMatch(translate("?")).match("\ud800")  # one character, not three bytes


def test_a_compiled_glob_survives_pickling() -> None:
    import pickle

    rx = pickle.loads(pickle.dumps(FullMatch(translate("delete_*"))))
    assert rx.match("delete_user") and not rx.match("deleted")


CATASTROPHIC = "*a*a*a*a*a*a*a*a*a*a*a*a*b"  # Python's re: minutes on 200 a's


def test_globs_that_backtrack_run_in_linear_time() -> None:
    name = "a" * 20_000
    start = time.monotonic()
    for mode in ("normalized", "exact"):
        assert not ToolMatcher([CATASTROPHIC, "?" * 30 + "*b"], mode)(name)
        assert ToolMatcher([CATASTROPHIC], mode)(name + "b")
    rx = glob_regex("traces/" + CATASTROPHIC.replace("*b", "*b.jsonl"))
    assert not rx.match("traces/" + "a" * 20_000 + ".jsonl")
    assert rx.match("traces/" + "a" * 20_000 + "b.jsonl")
    assert time.monotonic() - start < 5


def test_a_lone_surrogate_is_read_as_u_fffd_on_both_sides() -> None:
    """What docs/security.md says of them (UTF-8, which RE2 reads, cannot hold one)."""
    assert FullMatch(translate("\ud800")).match("\ufffd")
    assert FullMatch(translate("*\udfff")).match("x\ud800")
    assert FullMatch(translate("[!\ud800]")).match("\udc00") is None
    assert FullMatch(translate("delete_*")).match("delete_\ud800")  # as fnmatch


# ------------------------------------------------------------------ many globs at once
GLOB_PARTS = st.one_of(
    st.sampled_from(["*", "?", "a", "b", "_", "é", "𝔸", "ß", "[ab]", "[!a]", "[a-c]", "[é-ü]",
                     "[!é]", "[", "]", "\n"]),
    st.text(CHARS, min_size=1, max_size=2))
# as many lists of fewer globs than TREE_MIN as of more (up to a tree of 7 levels)
TREE_GLOBS = st.integers(0, 70).flatmap(lambda n: st.lists(
    st.lists(GLOB_PARTS, max_size=5).map("".join), min_size=n, max_size=n))
TREE_NAMES = st.lists(st.text(st.sampled_from("ab_cé𝔸ß[]\n\ud800"), max_size=6),
                      min_size=1, max_size=8)


def _tree_cases(globs: list[str], normalized: bool) -> tuple[GlobTree, list[FullMatch]]:
    compiled = [FullMatch(translate_normalized(g) if normalized else translate(g))
                for g in globs]
    return GlobTree(compiled), compiled


@settings(max_examples=300, deadline=None)
@given(globs=TREE_GLOBS, names=TREE_NAMES, normalized=st.booleans(),
       stop=st.integers(0, 80), node=st.sampled_from([globre._NODE_PROGRAM, 150]),
       budget=st.sampled_from([globre._TREE_PROGRAM, 1000]))
def test_a_glob_tree_answers_as_each_glob_tried_in_turn(
        globs: list[str], names: list[str], normalized: bool, stop: int, node: int,
        budget: int) -> None:
    """first, matching and new against a loop over every glob's own FullMatch: fewer
    globs than TREE_MIN (a loop) and more (a tree of several levels), with every node's
    program compiled, or some not (past the node's or the tree's size: their children
    are tried)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(globre, "_NODE_PROGRAM", node)
        patch.setattr(globre, "_TREE_PROGRAM", budget)
        tree, compiled = _tree_cases(globs, normalized)
    seen = bytearray(tree.nodes)
    ever: set[int] = set()
    for name in names:
        want = [i for i, g in enumerate(compiled) if g.match(name)]
        assert tree.matching(name) == want, (globs, name)
        assert tree.first(name) == (want[0] if want else -1)
        before = [i for i in want if i < stop]
        assert tree.first(name, stop) == (before[0] if before else -1)
        assert tree.new(name, seen) == [i for i in want if i not in ever]
        ever.update(want)
        assert tree.new(name, seen) == []  # all seen now


def test_a_glob_tree_over_many_globs_is_a_tree_and_survives_pickling() -> None:
    import pickle

    globs = [FullMatch(translate(f"tool_{i}_*")) for i in range(TREE_MIN - 1)]
    assert GlobTree(globs).nodes == TREE_MIN - 1  # a loop: one "node" per glob
    globs = [FullMatch(translate(f"tool_{i}_*")) for i in range(1000)] + [
        FullMatch(translate("*_x"))]
    tree = GlobTree(globs)
    assert tree.nodes == 2 * 1001 - 1
    for t in (tree, pickle.loads(pickle.dumps(tree))):
        assert t.first("tool_7_x") == 7 and t.matching("tool_7_x") == [7, 1000]
        assert t.first("tool_7_x", 8) == 7 and t.first("tool_7_x", 7) == -1
        assert t.first("tool_1000_x") == 1000 and t.first("tool_1000_x", 1000) == -1
        assert t.first("tool_1000_a") == -1 and t.matching("x") == []


def test_a_node_too_large_to_compile_leaves_its_children_to_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """16 globs whose alternation is past RE2's memory budget (8 MiB) though each
    compiles, with no size left out beforehand: the node that does not compile holds
    nothing, and every answer still comes from the globs themselves."""
    monkeypatch.setattr(globre, "_NODE_PROGRAM", 1 << 30)
    monkeypatch.setattr(globre, "_TREE_PROGRAM", 1 << 30)
    big = "?" * 25_000
    globs = [FullMatch(translate(f"{c}{big}")) for c in "abcdefghijklmnop"]
    assert not _re2.RE2("|".join(f"(?:{g.translated})" for g in globs).encode(),
                        globre._OPTIONS).ok()
    tree = GlobTree(globs)
    assert tree._root is not None and tree._root[3] is None  # the root did not compile
    name = "k" + "z" * 25_000
    assert tree.first(name) == 10 and tree.matching(name) == [10]
    assert tree.first("k") == -1 and tree.matching("k" + "z" * 24_999) == []
