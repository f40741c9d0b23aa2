"""Edit distance and the "did you mean" hints built on it."""

from __future__ import annotations

import difflib


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): a swap of two
    neighbouring letters, as in ``tset``, counts as one edit. With ``limit``, a distance
    above it comes back as ``limit + 1``, found early (length difference, the letters
    only one word has, or a row of the table already above the limit)."""
    if limit is not None and (abs(len(a) - len(b)) > limit
                              or len(set(a) ^ set(b)) > 2 * limit):
        # an edit changes the letters that one word has and the other has not by at most
        # two, so more than 2 * limit of them takes more than limit edits
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


def did_you_mean(word: str, options: list[str] | set[str]) -> str:
    """`` (did you mean 'x'?)`` for a close option by ``difflib``'s ratio, or ``""``."""
    close = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def suggest(word: str, options: list[str] | set[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest option, or an empty string."""
    hint = did_you_mean(word, options)
    if hint:
        return hint
    scored = sorted((edit_distance(word.lower(), o.lower()), o) for o in options)
    if scored and scored[0][0] <= min(2, max(1, len(word) // 2)):
        return f" (did you mean '{scored[0][1]}'?)"
    return ""
