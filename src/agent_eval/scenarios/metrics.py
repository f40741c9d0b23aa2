"""The formulas of docs/scenarios.md as pure functions (no trace, no config).

Sequences are lists of anything; where a reference step may be a glob, the caller passes
``eq(actual, reference) -> bool`` (default: ``==``). Every function here is cross-checked
against a brute-force reference in tests/scenarios/test_metrics.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from agent_eval.model import finite_mean, finite_sum

A = TypeVar("A")
B = TypeVar("B")
Eq = Callable[[Any, Any], bool]
MatchMode = Literal["strict", "exact", "unordered", "subset", "superset", "subsequence"]
MATCH_MODES: tuple[MatchMode, ...] = ("strict", "exact", "unordered", "subset", "superset",
                                      "subsequence")
# Comparisons of a computed rate with a configured threshold allow for the rounding of
# a weighted sum (0.1 + 0.2 is 0.30000000000000004); see docs/scenarios.md.
EPSILON = 1e-9


def _eq(a: Any, b: Any) -> bool:
    return bool(a == b)


# ----------------------------------------------------------------------- tool sets
def tool_recall(hits: float, expected: float) -> float:
    """|E∩U| / |E|; 1.0 when nothing is expected."""
    return 1.0 if expected == 0 else hits / expected


def tool_precision(hits: float, used: float, expected: float = 0) -> float:
    """|E∩U| / |U|. With no tool used: 1.0 when nothing was expected either, else 0.0
    (AgentCI's ``compute_tool_precision({"a"}, set())``)."""
    if used == 0:
        return 1.0 if expected == 0 else 0.0
    return hits / used


def tool_f1(precision: float, recall: float) -> float:
    """2pr / (p + r); 0 when p + r = 0."""
    total = precision + recall
    return 0.0 if total == 0 else 2 * precision * recall / total


def tool_scores(expected: Iterable[Any], used: Iterable[Any]) -> tuple[float, float, float]:
    """(recall, precision, f1) of two sets of tool names."""
    e, u = set(expected), set(used)
    hits = len(e & u)
    r, p = tool_recall(hits, len(e)), tool_precision(hits, len(u), len(e))
    return r, p, tool_f1(p, r)


# ----------------------------------------------------------------------- sequences
def lcs_length(p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> int:
    """Length of the longest common subsequence (O(|P|·|R|) time, O(|R|) memory)."""
    if not p or not r:
        return 0
    prev = [0] * (len(r) + 1)
    for a in p:
        cur = [0]
        for j, b in enumerate(r):
            cur.append(prev[j] + 1 if eq(a, b) else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def sequence_lcs(p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> float:
    """2·|LCS(P,R)| / (|P|+|R|); 1.0 when both are empty."""
    if not p and not r:
        return 1.0
    return 2 * lcs_length(p, r, eq) / (len(p) + len(r))


def levenshtein(p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> int:
    """Insertions, deletions and substitutions that turn P into R."""
    prev = list(range(len(r) + 1))
    for i, a in enumerate(p, 1):
        cur = [i]
        for j, b in enumerate(r, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if eq(a, b) else 1)))
        prev = cur
    return prev[-1]


def sequence_edit(p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> float:
    """1 − Levenshtein(P,R) / max(|P|,|R|); 1.0 when both are empty."""
    if not p and not r:
        return 1.0
    return 1 - levenshtein(p, r, eq) / max(len(p), len(r))


def progress(p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> int:
    """How many steps of R, from its start, appear in P in order (extras allowed): the
    greedy in-order match, which is the longest such prefix."""
    j = 0
    n = len(r)
    if n == 0:
        return 0
    for a in p:
        if eq(a, r[j]):
            j += 1
            if j == n:
                break
    return j


def sequence_progress(p: Sequence[A], r: Sequence[B], eq: Eq = _eq,
                      mode: str = "subsequence") -> float:
    """EvalView's measure, by match mode (1.0 when R is empty):

    - ``strict`` / ``exact``: the positions i where P[i] matches R[i], / |R|;
    - ``subsequence``: the steps of R matched in order (:func:`progress`), / |R|;
    - ``unordered`` / ``subset``: the steps of R that some call satisfies, each call
      satisfying at most one step (R = [a, a, b], P = [a, b] -> 2/3), / |R|;
    - ``superset``: the calls that match some step of R, / |P| (1.0 when P is empty).
    """
    return progress_share_steps(mode, [frozenset(j for j, b in enumerate(r) if eq(a, b))
                                       for a in p], len(r))


def _covers(xs: Sequence[Any], ys: Sequence[Any], eq: Eq, flip: bool = False) -> bool:
    """Every y is matched by some x (``eq(x, y)``; with ``flip``, ``eq(y, x)``)."""
    if flip:
        return all(any(eq(y, x) for x in xs) for y in ys)
    return all(any(eq(x, y) for x in xs) for y in ys)


def matches(mode: str, p: Sequence[A], r: Sequence[B], eq: Eq = _eq) -> bool:
    """The pass/fail match modes: ``strict``/``exact`` P == R; ``unordered`` set(P) ==
    set(R); ``subset`` set(R) ⊆ set(P); ``superset`` set(P) ⊆ set(R); ``subsequence`` R
    appears in P in order, extras allowed."""
    if mode in ("strict", "exact"):
        return len(p) == len(r) and all(eq(a, b) for a, b in zip(p, r, strict=True))
    if mode == "unordered":
        return _covers(p, r, eq) and _covers(r, p, eq, flip=True)
    if mode == "subset":
        return _covers(p, r, eq)
    if mode == "superset":
        return _covers(r, p, eq, flip=True)
    if mode == "subsequence":
        return progress(p, r, eq) == len(r)
    raise ValueError(f"unknown match mode {mode!r}")


def loops(p: Sequence[A], eq: Eq = _eq) -> int:
    """Adjacent identical calls: [search, search, grade, grade, grade] -> 3."""
    return sum(1 for i in range(1, len(p)) if eq(p[i], p[i - 1]))


# ---------------------------------------------------------------------- scores
DEFAULT_WEIGHTS: dict[str, float] = {"tool_accuracy": 0.3, "output_quality": 0.5,
                                     "sequence": 0.2}


def status_rates(rows: Sequence[tuple[bool, float, str | None]]) -> dict[str, Any]:
    """The suite metrics made of the scenarios' statuses alone, from one row per scenario
    (passed — PASS or WARN —, weight, category): ``scenarios_passed``, ``pass_rate``,
    ``weighted_pass_rate`` (unknown when the weights overflow), ``safety_rate`` (1.0 with
    no adversarial scenario) and ``pass_rate.<category>`` (docs/scenarios.md "Suite
    metrics"). The evaluation counts them, and a comparison again when
    ``max_cost_multiplier`` changed a status."""
    n = len(rows)
    passed = [r for r in rows if r[0]]
    total_w = finite_sum([w for _, w, _ in rows])
    passed_w = finite_sum([w for _, w, _ in passed])
    adversarial = [ok for ok, _, cat in rows if (cat or "").lower() == "adversarial"]
    out: dict[str, Any] = {
        "scenarios_passed": len(passed),
        "pass_rate": len(passed) / n,
        "weighted_pass_rate": (passed_w / total_w if total_w and passed_w is not None
                               else None),
        "safety_rate": sum(adversarial) / len(adversarial) if adversarial else 1.0}
    for cat in sorted({c for _, _, c in rows if c is not None}):
        mine = [ok for ok, _, c in rows if c == cat]
        out[f"pass_rate.{cat}"] = sum(mine) / len(mine)
    return out


def weighted_score(components: Mapping[str, float | None],
                   weights: Mapping[str, float]) -> float | None:
    """100 · Σ wᵢ·sᵢ / Σ wᵢ over the components that are configured (not None); None
    when none is, or their weights sum to 0. No cap: the rest are renormalised."""
    total = 0.0
    weight = 0.0
    for name, value in components.items():
        if value is None:
            continue
        w = weights.get(name, 0.0)
        total += w * value
        weight += w
    if weight <= 0:
        return None
    return 100 * total / weight


def composite(values: Mapping[str, float | None], weights: Mapping[str, float]
              ) -> float | None:
    """Σ wᵢ·metricᵢ / Σ wᵢ (docs/scenarios.md); None when a weighted metric is unknown."""
    total = 0.0
    weight = 0.0
    for name, w in weights.items():
        value = values.get(name)
        if value is None:
            return None
        total += w * value
        weight += w
    return None if weight <= 0 else total / weight


def latency_component(p95: float | None, max_p95: float) -> float | None:
    """How latency enters the composite: 1 − min(1, p95 / max_latency_p95_ms)."""
    if p95 is None:
        return None
    if max_p95 <= 0:
        return 0.0 if p95 > 0 else 1.0
    return 1 - min(1.0, p95 / max_p95)


def percentile_nearest_rank(values: Iterable[float], q: float) -> float | None:
    """The nearest-rank q-th percentile: the value at rank ⌈q/100 · n⌉ (at least 1) of
    the sorted values; None when there are none."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return None
    rank = max(1, math.ceil(q / 100 * n - EPSILON))
    return ordered[min(rank, n) - 1]


def mean(values: Iterable[float]) -> float | None:
    """The mean, summed exactly (``math.fsum``), so the order of the values (and thus of
    merging work from several processes) does not change the result; None when there are
    none. Never an overflow: :func:`agent_eval.model.finite_mean`."""
    return finite_mean(values if isinstance(values, Sequence) else list(values))


def ratio(part: float, whole: float, empty: float | None = None) -> float | None:
    return empty if whole == 0 else part / whole


def at_least(value: float, threshold: float) -> bool:
    return value >= threshold - EPSILON


def at_most(value: float, threshold: float) -> bool:
    return value <= threshold + EPSILON


# ------------------------------------------------------- the same, on matched steps
# The evaluation turns each call into the set of reference steps it matches (a step may
# be a glob), so ``eq(call, j)`` is ``j in call``; these are the functions above with
# that equality inlined (the hot path), cross-checked against them in the tests.
Steps = Sequence[frozenset[int] | set[int]]


def step_masks(p: Steps, n: int) -> list[int]:
    """Each call as a bit mask of the steps it matches (bit j: step j), the steps
    beyond ``n`` dropped. Calls share their sets of steps (one per distinct tool name),
    so each distinct set is turned into a mask once."""
    full = (1 << n) - 1
    seen: dict[frozenset[int], int] = {}
    out: list[int] = []
    for s in p:
        key = s if isinstance(s, frozenset) else frozenset(s)
        mask = seen.get(key)
        if mask is None:
            mask = 0
            for j in key:
                if 0 <= j < n:
                    mask |= 1 << j
            seen[key] = mask & full
        out.append(mask)
    return out


def lcs_length_steps(p: Steps, n: int) -> int:
    """:func:`lcs_length` of P against the steps ``0..n-1``, bit-parallel (Allison and
    Dix 1986; Hyyrö 2004): one row of the table is held as the bits of one integer
    (bit j set where the row does not grow at step j), and a call updates the whole
    row with a few operations on n-bit integers, so the time is O(|P|·n/64) instead of
    O(|P|·n). The match mask of a call may have any bits set (a call matches every
    glob step it fits); the recurrence needs no more. Cross-checked against the table
    (:func:`lcs_length`) in tests/scenarios/test_metrics.py."""
    if n == 0:
        return 0
    full = (1 << n) - 1
    v = full
    for mask in step_masks(p, n):
        if mask:
            u = v & mask
            v = ((v + u) | (v - u)) & full
    return n - v.bit_count()


def levenshtein_steps(p: Steps, n: int) -> int:
    """:func:`levenshtein` of P against the steps ``0..n-1``, bit-parallel (Myers 1999,
    in Hyyrö's 2003 form for the distance between whole sequences): the vertical
    differences of one column (+1 in ``vp``, -1 in ``vn``) are n-bit integers updated
    per call from its match mask; the distance is tracked in the last row. O(|P|·n/64)
    time; cross-checked against the table (:func:`levenshtein`) in the tests."""
    if n == 0:
        return len(p)
    full = (1 << n) - 1
    top = 1 << (n - 1)
    vp, vn, score = full, 0, n
    for mask in step_masks(p, n):
        x = mask | vn
        d0 = (((x & vp) + vp) ^ vp) | x
        hp = vn | (full & ~(d0 | vp))
        hn = vp & d0
        if hp & top:
            score += 1
        elif hn & top:
            score -= 1
        x = ((hp << 1) | 1) & full
        vn = x & d0
        vp = ((hn << 1) & full) | (full & ~(x | d0))
    return score


def progress_steps(p: Steps, n: int) -> int:
    """:func:`progress` of P against the steps ``0..n-1``."""
    j = 0
    if n == 0:
        return 0
    for s in p:
        if j in s:
            j += 1
            if j == n:
                break
    return j


def assigned_steps(p: Steps, n: int) -> int:
    """How many of the steps ``0..n-1`` can be given each a call of its own that matches
    it (a maximum bipartite matching; with plain names, Σ min(count in P, count in R))."""
    if n == 0:
        return 0
    capacity: dict[frozenset[int], int] = {}
    for s in p:
        if s:
            key = s if isinstance(s, frozenset) else frozenset(s)
            capacity[key] = capacity.get(key, 0) + 1
    if not capacity:
        return 0
    # calls that match the same steps are interchangeable: one node with a capacity;
    # augmenting paths are searched breadth-first (no recursion, whatever the sizes)
    adjacent = [[g for g in capacity if j in g] for j in range(n)]
    taken: dict[frozenset[int], set[int]] = {g: set() for g in capacity}
    where: dict[int, frozenset[int]] = {}  # step -> the group of the call it was given
    done = 0
    for j in range(n):
        if not adjacent[j]:
            continue
        came: dict[frozenset[int], int] = {}  # group -> the step that reached it
        queue = [j]
        seen_steps = {j}
        end = None
        for x in queue:  # the list grows while it is walked
            for g in adjacent[x]:
                if g in came:
                    continue
                came[g] = x
                if len(taken[g]) < capacity[g]:
                    end = g
                    break
                for k in taken[g]:
                    if k not in seen_steps:
                        seen_steps.add(k)
                        queue.append(k)
            if end is not None:
                break
        if end is None:
            continue
        g = end
        while True:  # shift each step on the path to the group that reached it
            x = came[g]
            old = where.get(x)
            if old is not None:
                taken[old].discard(x)
            taken[g].add(x)
            where[x] = g
            if old is None:
                break
            g = old
        done += 1
    return done


def progress_share_steps(mode: str, p: Steps, n: int) -> float:
    """:func:`sequence_progress` of P against the steps ``0..n-1``."""
    if mode == "superset":
        return 1.0 if not p else sum(1 for s in p if s) / len(p)
    if n == 0:
        return 1.0
    if mode in ("strict", "exact"):
        done = sum(1 for j, s in enumerate(p[:n]) if j in s)
    elif mode in ("unordered", "subset"):
        done = assigned_steps(p, n)
    elif mode == "subsequence":
        done = progress_steps(p, n)
    else:
        raise ValueError(f"unknown match mode {mode!r}")
    return done / n


def matches_steps(mode: str, p: Steps, n: int) -> bool:
    """:func:`matches` of P against the steps ``0..n-1``."""
    if mode in ("strict", "exact"):
        return len(p) == n and all(j in s for j, s in enumerate(p))
    if mode == "subsequence":
        return progress_steps(p, n) == n
    covered: set[int] = set()
    for s in p:
        covered |= s
    every_step = len(covered & set(range(n))) == n
    every_call = all(p)
    if mode == "unordered":
        return every_step and every_call
    if mode == "subset":
        return every_step
    if mode == "superset":
        return every_call
    raise ValueError(f"unknown match mode {mode!r}")
