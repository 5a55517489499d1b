"""The spread of each feature in a population: the scale of a "move" (:func:`mad`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._schema import Schema

__all__ = ["mad"]


def mad(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Median absolute deviation of each numeric/ordinal feature.

    ``MAD_j = median_i |x_ij - median(x_j)|`` (Wachter et al. 2017, used by DiCE,
    CE-OCL and UFCE to weight l1 distances).  Ordinal features use their ranks.

    Fallback where MAD is 0 (a feature with more than half its values equal,
    such as capital-gain): the mean absolute deviation from the median; if that
    is also 0 (a constant feature), 1.  Categorical features get 1 (their
    distance is an indicator).  The fallback keeps ``|Δ| / MAD`` finite without
    giving a rarely-varying feature an infinite price.
    """
    out = np.ones(len(schema), dtype=float)
    for j, f in enumerate(schema):
        if f.is_numeric:
            v = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
        elif f.kind == "ordinal":
            v = np.array([f.rank(x) for x in X[f.name]], dtype=float)
        else:
            continue
        med = np.median(v)
        dev = np.abs(v - med)
        m = float(np.median(dev))
        if m <= 0:
            m = float(np.mean(dev))
        out[j] = m if m > 0 else 1.0
    return out
