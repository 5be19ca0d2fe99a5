"""Array helpers the model and the search share."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def distinct(values) -> np.ndarray:
    """The distinct values of ``values`` (flattened), sorted: what ``np.unique(values)`` gives
    (for values without NaN, as the planner's indices, node counts and dates are).

    ``np.unique`` without ``return_index`` asks ``np.ma.is_masked`` first, which imports
    numpy.ma: 20–23 ms of every `gpuplan plan` (numpy 2.4), for arrays of a few hundred
    values. A sort and a comparison give the same values without it.
    """
    import numpy as np  # on first use: importing planner.model stays cheap

    flat = np.sort(np.asarray(values).ravel())
    if flat.size < 2:
        return flat
    return flat[np.concatenate(([True], flat[1:] != flat[:-1]))]
