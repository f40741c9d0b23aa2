"""Regular expressions compiled when first used (lazyre.py): the same answers as the
compiled pattern, compiled once, and afterwards called without a step of their own."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_eval.lazyre import LazyPattern

PATTERNS = [(r'"type"\s*:\s*"(?:a|b)"', 0), (r"^x:", re.M), (r"\d+\Z", re.ASCII),
            (r"[A-Z]+", re.I)]


@pytest.mark.parametrize("method", ["search", "match", "finditer"])
@given(st.text(alphabet='"type: ab1x\nXZ٣', max_size=30), st.integers(0, 5),
       st.sampled_from(PATTERNS))
def test_a_lazy_pattern_answers_as_the_compiled_one(method: str, text: str, pos: int,
                                                    spec: tuple[str, int]) -> None:
    def answer(p: object) -> object:
        found = getattr(p, method)(text, pos)
        spans = [m.span() for m in found] if method == "finditer" else (
            found and found.span())
        return spans

    lazy = LazyPattern(*spec)
    assert answer(lazy) == answer(re.compile(*spec))
    assert answer(lazy) == answer(re.compile(*spec))  # and again, compiled


def test_bytes_patterns_answer_bytes() -> None:
    lazy = LazyPattern(rb"^interactions:", re.M)
    m = lazy.search(b"x\ninteractions:\n")
    assert m is not None and m.group() == b"interactions:"


def test_it_compiles_on_first_use_once_then_calls_the_patterns_own_methods() -> None:
    lazy = LazyPattern(r"a+", re.I)
    assert lazy.compiled is None
    assert lazy.match("AAb") is not None
    compiled = lazy.compiled
    assert compiled is not None and compiled.pattern == "a+" and compiled.flags & re.I
    for method in ("search", "match", "finditer"):
        bound = getattr(lazy, method)
        assert bound.__self__ is compiled and bound.__name__ == method
    assert list(lazy.finditer("a b aa")) and lazy.compiled is compiled


def test_an_invalid_pattern_fails_when_first_used_and_stays_lazy() -> None:
    lazy = LazyPattern(r"(")
    with pytest.raises(re.error):
        lazy.search("x")
    assert lazy.compiled is None
    with pytest.raises(re.error):
        lazy.search("x")
