"""Small array helpers shared by the pipeline's phases."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["TOL", "floats"]

#: the relative tolerance under which two numeric values are the same (as
#: :func:`counterfact.constraints._bounds.changed`)
TOL = 1e-7


def floats(sub: pd.DataFrame) -> np.ndarray:
    """``sub`` as a float matrix, values that are not numbers as NaN
    (``pandas.to_numeric(errors="coerce")`` per column; one cast when every
    column already has a numeric numpy dtype)."""
    if all(isinstance(dt, np.dtype) and dt.kind in "biuf" for dt in sub.dtypes):
        return np.array(sub.to_numpy(dtype=float), dtype=float)  # a copy, writable
    return sub.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
