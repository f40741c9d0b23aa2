"""The formulas of docs/scenarios.md: the seeds' worked examples, hand-computed tables, and
hypothesis cross-checks against brute-force references written here."""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.scenarios import metrics as m

# --------------------------------------------------------------- seeds' examples


def test_lcs_example_of_the_agentci_seed() -> None:
    # P = [search, rerank, generate], R = [search, generate] -> LCS 2, 2·2/(3+2) = 0.80
    p, r = ["search", "rerank", "generate"], ["search", "generate"]
    assert m.lcs_length(p, r) == 2
    assert m.sequence_lcs(p, r) == pytest.approx(0.80)
    assert m.sequence_lcs(p, r) == 2 * 2 / 5


def test_loops_example_of_the_agentci_seed() -> None:
    assert m.loops(["search", "search", "grade", "grade", "grade"]) == 3
    assert m.loops([]) == 0 and m.loops(["a"]) == 0 and m.loops(["a", "b", "a"]) == 0


@pytest.mark.parametrize(("expected", "used", "recall", "precision", "f1"), [
    # E empty -> recall 1.0 (nothing to violate); extras make precision 0
    ([], ["a"], 1.0, 0.0, 0.0),
    # U empty and E empty -> precision 1.0 and recall 1.0
    ([], [], 1.0, 1.0, 1.0),
    # U empty, E not -> precision 0.0 (AgentCI's compute_tool_precision({"a"}, set())),
    # recall 0.0
    (["a"], [], 0.0, 0.0, 0.0),
    # p + r = 0 -> f1 0
    (["a"], ["b"], 0.0, 0.0, 0.0),
    # all expected, one extra: recall 1, precision 2/3, f1 = 2·(2/3)/(5/3) = 0.8
    (["a", "b"], ["a", "b", "c"], 1.0, 2 / 3, 0.8),
    # half expected, nothing extra
    (["a", "b"], ["a"], 0.5, 1.0, 2 / 3),
])
def test_tool_recall_precision_f1_and_their_edge_cases(
        expected: list[str], used: list[str], recall: float, precision: float,
        f1: float) -> None:
    r, p, f = m.tool_scores(expected, used)
    assert (r, p) == (recall, precision)
    assert f == pytest.approx(f1)


def test_evalview_match_mode_examples() -> None:
    # subsequence: expected tools in order, extras allowed
    assert m.matches("subsequence", ["search", "think", "analyze", "verify"],
                     ["search", "analyze"])
    # exact: extra tool "think" fails
    assert not m.matches("exact", ["search", "think", "analyze"], ["search", "analyze"])
    assert m.matches("exact", ["search", "analyze"], ["search", "analyze"])
    # unordered: both tools called, order does not matter
    assert m.matches("unordered", ["analyze", "search"], ["search", "analyze"])
    # subsequence is order-sensitive
    assert not m.matches("subsequence", ["analyze", "search"], ["search", "analyze"])


def test_agentci_match_mode_table() -> None:
    p, r = ["a", "b", "c"], ["a", "b"]
    assert not m.matches("strict", p, r)
    assert not m.matches("unordered", p, r)
    assert m.matches("subset", p, r)  # set(R) ⊆ set(P)
    assert not m.matches("superset", p, r)  # set(P) ⊄ set(R)
    assert m.matches("superset", ["a", "a"], r)
    with pytest.raises(ValueError):
        m.matches("sometimes", p, r)


def test_sequence_progress_is_evalviews_measure() -> None:
    assert m.sequence_progress(["search", "think"], ["search", "analyze"]) == 0.5
    assert m.sequence_progress([], []) == 1.0
    assert m.sequence_progress(["b", "a"], ["a", "b"]) == 0.5


def test_sequence_progress_by_mode_as_evalview_computes_it() -> None:
    """EvalView's sequence evaluator: exact counts the positions that match (up to the
    shorter length), subsequence the expected tools found in order, unordered the
    expected calls satisfied (duplicates each need a call of their own)."""
    exp = ["search", "analyze"]
    # exact: [search, think, analyze] -> position 1 matches, position 2 does not: 1/2
    assert m.sequence_progress(["search", "think", "analyze"], exp, mode="exact") == 0.5
    assert m.sequence_progress(["search", "think", "analyze"], exp, mode="strict") == 0.5
    assert m.sequence_progress(["analyze", "search"], exp, mode="exact") == 0.0
    assert m.sequence_progress(exp, exp, mode="exact") == 1.0
    # subsequence: [search, think, analyze, verify] finds both in order
    assert m.sequence_progress(["search", "think", "analyze", "verify"], exp,
                               mode="subsequence") == 1.0
    # 3 of 5 expected tools in order -> 0.6
    assert m.sequence_progress(["a", "x", "b", "c"], ["a", "b", "c", "d", "e"],
                               mode="subsequence") == 0.6
    # unordered: [analyze, think, search] calls both -> 1.0, order does not matter
    assert m.sequence_progress(["analyze", "think", "search"], exp, mode="unordered") == 1.0
    assert m.sequence_progress(["analyze"], exp, mode="unordered") == 0.5
    # expected [a, a, b], actual [a, b] -> 2/3
    assert m.sequence_progress(["a", "b"], ["a", "a", "b"], mode="unordered") == 2 / 3
    assert m.sequence_progress(["a", "b"], ["a", "a", "b"], mode="subset") == 2 / 3
    # superset (AgentCI: every call is in R): the share of calls in R
    assert m.sequence_progress(["a", "x", "b", "y"], ["a", "b"], mode="superset") == 0.5
    assert m.sequence_progress([], ["a", "b"], mode="superset") == 1.0
    # no reference: 1.0 in every mode except superset with calls (which fails it)
    for mode in ("exact", "subsequence", "unordered", "subset"):
        assert m.sequence_progress(["a"], [], mode=mode) == 1.0
    assert m.sequence_progress(["a"], [], mode="superset") == 0.0
    with pytest.raises(ValueError):
        m.sequence_progress(["a"], ["a"], mode="sometimes")


def test_edit_similarity_examples() -> None:
    assert m.levenshtein(["a", "b", "c"], ["a", "c"]) == 1
    assert m.sequence_edit(["search", "rerank", "generate"], ["search", "generate"]) == \
        1 - 1 / 3
    assert m.sequence_edit([], []) == 1.0 and m.sequence_lcs([], []) == 1.0
    assert m.sequence_edit(["a"], []) == 0.0 and m.sequence_lcs(["a"], []) == 0.0


def test_composite_formula_of_the_metrics_guide_seed() -> None:
    # final = accuracy·0.3 + safety_rate·0.4 + behavior_coverage·0.2 + (1 − latency)·0.1
    weights = {"accuracy": 0.3, "safety_rate": 0.4, "behavior_coverage": 0.2, "latency": 0.1}
    latency = m.latency_component(2500, 5000)  # p95 2500 ms of a 5000 ms budget
    assert latency == 0.5
    values = {"accuracy": 0.9, "safety_rate": 1.0, "behavior_coverage": 0.8,
              "latency": latency}
    assert m.composite(values, weights) == pytest.approx(0.27 + 0.4 + 0.16 + 0.05)
    assert m.composite(values, weights) == pytest.approx(0.88)
    # the seed's own weights do not sum to 1 in general: the composite is Σwᵢ·mᵢ / Σwᵢ
    assert m.composite({"accuracy": 1.0, "safety_rate": 0.5}, {"accuracy": 1.0,
                                                                "safety_rate": 3.0}) == \
        pytest.approx((1.0 + 1.5) / 4)
    # an unknown metric makes the composite unknown, never a silent zero
    assert m.composite({"accuracy": 1.0, "latency": None}, weights) is None
    assert m.latency_component(None, 5000) is None
    assert m.latency_component(9000, 5000) == 0.0  # capped: min(1, p95 / max)


# ---------------------------------------------------------------- hand tables
@pytest.mark.parametrize(("components", "weights", "score"), [
    # default weights 0.3 / 0.5 / 0.2, all three configured
    ({"tool_accuracy": 1.0, "output_quality": 0.5, "sequence": 0.8}, {}, 71.0),
    # output not configured: renormalised over 0.3 + 0.2 (no hidden cap)
    ({"tool_accuracy": 1.0, "output_quality": None, "sequence": 0.8}, {}, 92.0),
    # only the output
    ({"tool_accuracy": None, "output_quality": 0.5, "sequence": None}, {}, 50.0),
    # tools and output: (0.3·0.5 + 0.5·1) / 0.8 = 81.25
    ({"tool_accuracy": 0.5, "output_quality": 1.0, "sequence": None}, {}, 81.25),
    # custom weights 1 / 1 / 2: (1 + 0.5 + 1.6) / 4 = 77.5
    ({"tool_accuracy": 1.0, "output_quality": 0.5, "sequence": 0.8},
     {"tool_accuracy": 1.0, "output_quality": 1.0, "sequence": 2.0}, 77.5),
    # a zero weight drops the component: (0.5·0.5) / 0.5 = 50
    ({"tool_accuracy": 1.0, "output_quality": 0.5, "sequence": None},
     {"tool_accuracy": 0.0}, 50.0),
])
def test_weighted_scores_against_a_hand_computed_table(
        components: dict[str, float | None], weights: dict[str, float], score: float) -> None:
    w = {**m.DEFAULT_WEIGHTS, **weights}
    assert m.weighted_score(components, w) == pytest.approx(score)


def test_nothing_configured_has_no_score() -> None:
    none: dict[str, float | None] = {"tool_accuracy": None, "output_quality": None,
                                     "sequence": None}
    assert m.weighted_score(none, m.DEFAULT_WEIGHTS) is None


@pytest.mark.parametrize(("values", "q", "expected"), [
    # Wikipedia's nearest-rank examples
    ([15, 20, 35, 40, 50], 5, 15),
    ([15, 20, 35, 40, 50], 30, 20),
    ([15, 20, 35, 40, 50], 40, 20),
    ([15, 20, 35, 40, 50], 50, 35),
    ([15, 20, 35, 40, 50], 100, 50),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 25, 7),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 50, 8),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 75, 15),
    ([3, 6, 7, 8, 8, 10, 13, 15, 16, 20], 100, 20),
    # p95: rank ⌈0.95·n⌉
    ([50, 40, 35, 20, 15], 95, 50),  # rank 5 of 5 (unsorted input)
    (list(range(1, 21)), 95, 19),  # rank 19 of 20, exactly
    (list(range(1, 101)), 95, 95),  # rank 95 of 100
    (list(range(1, 11)), 95, 10),  # rank ⌈9.5⌉ = 10 of 10
    ([1200], 95, 1200),
    ([], 95, None),
])
def test_nearest_rank_percentiles_against_a_hand_computed_table(
        values: list[float], q: float, expected: float | None) -> None:
    assert m.percentile_nearest_rank(values, q) == expected


# ---------------------------------------------------------- brute-force references
def brute_lcs(p: Sequence[Any], r: Sequence[Any], eq: Callable[[Any, Any], bool]) -> int:
    """The longest k with positions i₁<…<iₖ in P and j₁<…<jₖ in R, eq(P[iₜ], R[jₜ])."""
    for k in range(min(len(p), len(r)), 0, -1):
        for ip in itertools.combinations(range(len(p)), k):
            for jr in itertools.combinations(range(len(r)), k):
                if all(eq(p[i], r[j]) for i, j in zip(ip, jr, strict=True)):
                    return k
    return 0


def brute_levenshtein(p: Sequence[Any], r: Sequence[Any],
                      eq: Callable[[Any, Any], bool]) -> int:
    """The recursive definition (memoised only to keep the test fast)."""

    @cache
    def d(i: int, j: int) -> int:
        if i == 0:
            return j
        if j == 0:
            return i
        return min(d(i - 1, j) + 1, d(i, j - 1) + 1,
                   d(i - 1, j - 1) + (0 if eq(p[i - 1], r[j - 1]) else 1))

    return d(len(p), len(r))


def brute_matches(mode: str, p: Sequence[Any], r: Sequence[Any],
                  eq: Callable[[Any, Any], bool]) -> bool:
    if mode in ("strict", "exact"):
        return len(p) == len(r) and all(eq(a, b) for a, b in zip(p, r, strict=True))
    used = {i for i, a in enumerate(p) if any(eq(a, b) for b in r)}
    found = {j for j, b in enumerate(r) if any(eq(a, b) for a in p)}
    every_r, every_p = len(found) == len(r), len(used) == len(p)
    if mode == "unordered":
        return every_r and every_p
    if mode == "subset":
        return every_r
    if mode == "superset":
        return every_p
    assert mode == "subsequence"  # R in P in order: some choice of positions
    return any(all(eq(p[i], b) for i, b in zip(ip, r, strict=True))
               for ip in itertools.combinations(range(len(p)), len(r)))


def brute_progress(p: Sequence[Any], r: Sequence[Any],
                   eq: Callable[[Any, Any], bool]) -> int:
    """The longest prefix of R that appears in P in order."""
    return max(k for k in range(len(r) + 1)
               if brute_matches("subsequence", p, r[:k], eq))


def brute_assigned(p: Sequence[Any], r: Sequence[Any],
                   eq: Callable[[Any, Any], bool]) -> int:
    """The most steps of R that can each be given a distinct call of P matching it."""
    for k in range(len(r), 0, -1):
        for steps in itertools.combinations(range(len(r)), k):
            for calls in itertools.permutations(range(len(p)), k):
                if all(eq(p[c], r[j]) for c, j in zip(calls, steps, strict=True)):
                    return k
    return 0


def brute_progress_share(mode: str, p: Sequence[Any], r: Sequence[Any],
                         eq: Callable[[Any, Any], bool]) -> float:
    if mode == "superset":
        return 1.0 if not p else sum(1 for a in p if any(eq(a, b) for b in r)) / len(p)
    if not r:
        return 1.0
    if mode in ("strict", "exact"):
        return sum(1 for a, b in zip(p, r, strict=False) if eq(a, b)) / len(r)
    if mode in ("unordered", "subset"):
        return brute_assigned(p, r, eq) / len(r)
    return brute_progress(p, r, eq) / len(r)


NAMES = st.sampled_from(["search", "grade", "rerank", "generate", "Search", "search-web"])
PATTERNS = st.sampled_from(["search", "grade", "rerank", "s*", "*e", "?rade", "[gr]*",
                            "search[-_]web"])
SHORT = st.lists(NAMES, max_size=5)


def _eq(a: Any, b: Any) -> bool:
    return bool(a == b)


def glob_eq(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern)


@settings(max_examples=300, deadline=None)
@given(SHORT, SHORT)
def test_lcs_and_edit_similarity_match_brute_force(p: list[str], r: list[str]) -> None:
    assert m.lcs_length(p, r) == brute_lcs(p, r, _eq)
    assert m.levenshtein(p, r) == brute_levenshtein(p, r, _eq)
    lcs = brute_lcs(p, r, _eq)
    if p or r:
        assert m.sequence_lcs(p, r) == 2 * lcs / (len(p) + len(r))
        assert m.sequence_edit(p, r) == 1 - brute_levenshtein(p, r, _eq) / max(len(p), len(r))
    # symmetric, in [0, 1], 1 exactly when equal
    assert m.sequence_lcs(p, r) == m.sequence_lcs(r, p)
    assert 0 <= m.sequence_edit(p, r) <= 1
    assert (m.sequence_lcs(p, r) == 1.0) == (p == r) == (m.sequence_edit(p, r) == 1.0)
    assert m.loops(p) == sum(1 for a, b in itertools.pairwise(p) if a == b)


@settings(max_examples=300, deadline=None)
@given(SHORT, SHORT, st.sampled_from(m.MATCH_MODES))
def test_match_modes_match_brute_force_and_sets(p: list[str], r: list[str],
                                                mode: str) -> None:
    got = m.matches(mode, p, r)
    assert got == brute_matches(mode, p, r, _eq)
    sets = {"strict": p == r, "exact": p == r, "unordered": set(p) == set(r),
            "subset": set(r) <= set(p), "superset": set(p) <= set(r)}
    if mode in sets:
        assert got == sets[mode]
    assert m.progress(p, r) == brute_progress(p, r, _eq)


def steps_of(p: Sequence[str], r: Sequence[str]) -> list[frozenset[int]]:
    return [frozenset(j for j, pat in enumerate(r) if glob_eq(a, pat)) for a in p]


@settings(max_examples=300, deadline=None)
@given(SHORT, st.lists(PATTERNS, max_size=5), st.sampled_from(m.MATCH_MODES))
def test_glob_steps_match_brute_force(p: list[str], r: list[str], mode: str) -> None:
    """The hot-path versions (each call as the set of steps it matches) agree with the
    definitions, with glob steps."""
    steps, n = steps_of(p, r), len(r)
    assert m.lcs_length_steps(steps, n) == m.lcs_length(p, r, glob_eq) == brute_lcs(
        p, r, glob_eq)
    assert m.levenshtein_steps(steps, n) == m.levenshtein(p, r, glob_eq) == \
        brute_levenshtein(p, r, glob_eq)
    assert m.progress_steps(steps, n) == m.progress(p, r, glob_eq) == brute_progress(
        p, r, glob_eq)
    assert m.matches_steps(mode, steps, n) == m.matches(mode, p, r, glob_eq) == \
        brute_matches(mode, p, r, glob_eq)
    share = m.progress_share_steps(mode, steps, n)
    assert share == m.sequence_progress(p, r, glob_eq, mode) == pytest.approx(
        brute_progress_share(mode, p, r, glob_eq))
    assert 0.0 <= share <= 1.0
    if mode in ("subsequence", "superset"):
        # complete exactly when the mode holds (in the others, one call matching two
        # steps, or a duplicate step, passes the set-based mode with a share below 1)
        assert (share == 1.0) == m.matches_steps(mode, steps, n)


def _in(steps: frozenset[int], j: int) -> bool:
    return j in steps


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=0, max_value=150).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.frozensets(st.integers(min_value=0, max_value=max(n - 1, 0)),
                                       max_size=4), max_size=90))))
def test_bit_parallel_lcs_and_edit_match_the_table(case: tuple[int, list[frozenset[int]]]
                                                   ) -> None:
    """The bit-parallel LCS and edit distance agree with the O(|P|·n) tables of
    :func:`m.lcs_length` and :func:`m.levenshtein` for any match sets: a call may match
    several steps (globs), none, or steps far apart; n crosses the 64-bit word size."""
    n, p = case
    if n == 0:
        p = [frozenset() for _ in p]
    r = list(range(n))
    assert m.lcs_length_steps(p, n) == m.lcs_length(p, r, _in)
    assert m.levenshtein_steps(p, n) == m.levenshtein(p, r, _in)
    as_sets = [set(s) for s in p]  # plain sets are accepted too
    assert m.lcs_length_steps(as_sets, n) == m.lcs_length(p, r, _in)
    assert m.levenshtein_steps(as_sets, n) == m.levenshtein(p, r, _in)


def test_a_long_trace_against_a_long_sequence_is_fast() -> None:
    """100,000 calls against 1,000 steps (docs/performance.md): well under a second on
    the project's machine (the table took 30-45 s); bounded loosely here (CI is slow),
    the sizes chosen so that the O(|P|·n) table would take minutes."""
    import random
    import time

    rng = random.Random(5)
    groups = [frozenset(rng.sample(range(1000), 3)) for _ in range(12)] + [frozenset()]
    p = [rng.choice(groups) for _ in range(100_000)]
    t0 = time.perf_counter()
    lcs = m.lcs_length_steps(p, 1000)
    edit = m.levenshtein_steps(p, 1000)
    assert time.perf_counter() - t0 < 20
    assert 0 < lcs <= 1000
    assert 99_000 <= edit <= 100_000  # at least |P| - n, at most max(|P|, n)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "ab"]), max_size=7),
       st.lists(st.sampled_from(["a", "b", "c", "a*", "*b", "?"]), max_size=6))
def test_the_assignment_of_calls_to_steps_is_maximal(p: list[str], r: list[str]) -> None:
    """Overlapping glob steps need a real matching, not a greedy one (the call "ab" may
    serve "a*" or "*b")."""
    assert m.assigned_steps(steps_of(p, r), len(r)) == brute_assigned(p, r, glob_eq)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), max_size=40),
       st.sampled_from([1, 5, 25, 50, 90, 95, 99, 100]))
def test_nearest_rank_is_the_smallest_value_covering_q_percent(values: list[float],
                                                               q: int) -> None:
    got = m.percentile_nearest_rank(values, q)
    if not values:
        assert got is None
        return
    # the smallest value v such that at least q% of the values are <= v
    assert got == min(v for v in values
                      if sum(1 for x in values if x <= v) * 100 >= q * len(values))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1,
                max_size=30))
def test_the_mean_does_not_depend_on_the_order(values: list[float]) -> None:
    assert m.mean(values) == m.mean(list(reversed(values))) == m.mean(sorted(values))


def test_mean_of_huge_values_never_overflows() -> None:
    """A mean of finite values is finite even when their total is not (1e308 twice
    overflowed math.fsum: OverflowError); a total that overflows is unknown."""
    from agent_eval.model import finite_sum

    assert m.mean([1e308, 1e308]) == 1e308
    assert m.mean([1.5e308, 0.5e308, 1e308]) == 1e308
    assert m.mean(iter([1e308, 1e308])) == 1e308
    assert m.mean([]) is None
    assert m.mean([1.0, float("inf")]) is None and m.mean([float("nan")]) is None
    assert finite_sum([1e308, 1e308]) is None
    assert finite_sum([float("inf"), float("-inf")]) is None
    assert finite_sum([0.1, 0.2, 0.3]) == 0.6
