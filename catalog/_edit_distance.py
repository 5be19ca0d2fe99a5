"""The order of the close matches a mistyped name is shown (``close_matches``).

Close matches rank by edit distance (optimal string alignment: a swap of two neighbouring
letters is one edit), ties by difflib's ratio: 'us-esat-1' suggested 'us-west-1' (its ratio
is the higher) before 'us-east-1'. Apart from ``_errors`` (which imports this only when an
error is made) so that neither imports the other at import time.
"""

from __future__ import annotations


def osa_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, or swap of two neighbouring characters) from ``a`` to
    ``b``, each substring edited once (optimal string alignment)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def ranked(name: str, close: list[str]) -> list[str]:
    """``close`` (difflib's, best ratio first) by edit distance from ``name``, ties in
    difflib's order."""
    return sorted(close, key=lambda m: osa_distance(name, m))
