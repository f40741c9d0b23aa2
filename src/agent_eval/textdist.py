"""Edit distance and the "did you mean" hints built on it."""

from __future__ import annotations

import difflib


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): a swap of two
    neighbouring letters, as in ``tset``, counts as one edit. With ``limit``, a distance
    above it comes back as ``limit + 1``, found early (length difference, the letters
    only one word has, or a row of the table already above the limit), and only the cells
    within ``limit`` of the table's diagonal are worked out: time ``len(a) * limit``, not
    ``len(a) * len(b)`` (the hints compare every unmatched name of a suite with every name
    a trace called: 100 names against 1,000 took ten minutes with the whole table)."""
    if limit is None:
        return _table(a, b)
    if abs(len(a) - len(b)) > limit or len(set(a) ^ set(b)) > 2 * limit:
        # an edit changes the letters that one word has and the other has not by at most
        # two, so more than 2 * limit of them takes more than limit edits
        return limit + 1
    # the letters both words start or end with take no edit (nor a swap: see the tests)
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    i, j = len(a), len(b)
    while i > start and j > start and a[i - 1] == b[j - 1]:
        i -= 1
        j -= 1
    return _band(a[start:i], b[start:j], limit)


def _band(a: str, b: str, limit: int) -> int:
    """:func:`edit_distance` with a limit, over the cells ``|i - j| <= limit`` only: a cell
    off that band is more than ``limit`` edits away (it needs that many insertions or
    deletions), so it is ``limit + 1`` here, as is every value above the limit."""
    big = limit + 1
    n, m = len(a), len(b)
    before: list[int] = []
    prev = [j if j <= limit else big for j in range(m + 1)]
    for i in range(1, n + 1):
        row = [big] * (m + 1)
        if i <= limit:
            row[0] = i
        lo, hi = max(1, i - limit), min(m, i + limit)
        x = a[i - 1]
        low = row[lo - 1]
        for j in range(lo, hi + 1):
            v = prev[j - 1] + (x != b[j - 1])
            if prev[j] + 1 < v:
                v = prev[j] + 1
            if row[j - 1] + 1 < v:
                v = row[j - 1] + 1
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == b[j - 1] \
                    and before[j - 2] + 1 < v:
                v = before[j - 2] + 1
            row[j] = v if v < big else big
            if v < low:
                low = v
        if low > limit:
            # a cell of the next row comes from this row, or (a swap) from a cell of the
            # row before whose diagonal neighbour here is at most one more: none is within
            return big
        before, prev = prev, row
    return prev[m]


def _table(a: str, b: str) -> int:
    """The whole table of :func:`edit_distance` without a limit."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def did_you_mean(word: str, options: list[str] | set[str]) -> str:
    """`` (did you mean 'x'?)`` for a close option by ``difflib``'s ratio, or ``""``."""
    close = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def suggest(word: str, options: list[str] | set[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or an empty string."""
    hint = did_you_mean(word, options)
    if hint:
        return hint
    # within two edits only: a whole table of two long names (a scenario id of the suite
    # against the ids traces name) took seconds each, and more than two is no hint
    most = min(2, max(1, len(word) // 2))
    scored = sorted((edit_distance(word.lower(), o.lower(), most), o) for o in options)
    if scored and scored[0][0] <= most:
        return f" (did you mean '{scored[0][1]}'?)"
    return ""
