"""globre: globs from configs in RE2. ``tool_match: exact`` globs against fnmatch itself,
classes against Python's ``re``, and globs that a backtracking engine takes minutes on."""

from __future__ import annotations

import fnmatch
import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.globre import (
    NEVER,
    FullMatch,
    class_end,
    fnmatch_class,
    literal,
    python_class,
    translate,
)
from agent_eval.matching import ToolMatcher
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
