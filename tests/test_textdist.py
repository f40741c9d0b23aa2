"""Edit distance (textdist.py): the optimal string alignment distance, and its limit."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import within

from agent_eval.textdist import edit_distance, suggest


def _osa(a: str, b: str) -> int:
    """The textbook table: deletions, insertions, substitutions, adjacent swaps."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_known_distances() -> None:
    assert edit_distance("tset", "test") == 1
    assert edit_distance("send_emial", "send_email") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("kitten", "sitting", 2) == 3
    assert edit_distance("abcdef", "uvwxyz", 1) == 2  # six letters only one word has
    assert edit_distance("abc", "cab", 2) == 2


WORD = st.text(alphabet="abcde_", max_size=9)


@settings(max_examples=500, deadline=None)
@given(WORD, WORD, st.integers(min_value=0, max_value=4))
def test_the_distance_is_the_tables_and_above_a_limit_is_the_limit_plus_one(
        a: str, b: str, limit: int) -> None:
    full = _osa(a, b)
    assert edit_distance(a, b) == full
    assert edit_distance(a, b, limit) == min(full, limit + 1)


ENDS = st.text(alphabet="abc_", max_size=4)


@settings(max_examples=500, deadline=None)
@given(ENDS, ENDS, st.text(alphabet="abc_", max_size=30), ENDS, ENDS,
       st.integers(min_value=0, max_value=3))
def test_words_alike_but_for_their_ends_are_measured_as_the_table_does(
        a0: str, b0: str, middle: str, a1: str, b1: str, limit: int) -> None:
    """The letters both words start and end with are set aside and only the band of the
    table within the limit is worked out: the same answers as the whole table."""
    a, b = a0 + middle + a1, b0 + middle + b1
    assert edit_distance(a, b, limit) == min(_osa(a, b), limit + 1)


def test_a_hint_for_long_words_is_looked_for_within_two_edits() -> None:
    """suggest() compared a long word with each option in a whole table (a scenario id
    of the suite against the scenario ids traces name: 3,000 letters against five
    options took tens of seconds); now only as far as two edits reach. The hints are the
    same: the option within two edits, none beyond."""
    rng = random.Random(7)
    word = "".join(rng.choice(string.ascii_lowercase) for _ in range(3000))
    options = ["".join(rng.choice(string.ascii_lowercase) for _ in range(3000))
               for _ in range(5)]
    with within(10, "suggest"):
        assert suggest(word, options) == ""
        assert suggest(word, [*options, word[:1500] + "z" + word[1501:]]) == (
            f" (did you mean '{word[:1500]}z{word[1501:]}'?)")
    assert suggest("refnud", ["refund", "lookup"]) == " (did you mean 'refund'?)"
    assert suggest("ab", ["xy"]) == ""
