"""Edit distance for "did you mean" hints."""

from __future__ import annotations


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): a swap of two
    neighbouring letters, as in ``tset``, counts as one edit. With ``limit``, a distance
    above it comes back as ``limit + 1``, found early (length difference, or a row of
    the table already above the limit)."""
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        if limit is not None and min(row) > limit and (len(rows) < 2 or min(rows[-1]) > limit):
            return limit + 1
        rows.append(row)
    found = rows[-1][-1]
    return found if limit is None or found <= limit else limit + 1
