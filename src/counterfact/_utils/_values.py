"""Value helpers shared by every layer: numpy scalars to Python values, numeric blocks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["_is_missing", "_numeric_block", "_numeric_column", "_py", "_py_array", "share_percent"]


def _py(value: Any) -> Any:
    """Turn numpy scalars into plain Python scalars (for hashing, JSON, comparisons)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def as_float(value: Any) -> float:
    """``value`` as a Python float, a narrower numpy float by its shortest decimal
    (``np.float32(0.9) -> 0.9``, not 0.8999999761581421: the share the user typed)."""
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return float(str(value))
    return float(value)


def share_percent(x: float) -> str:
    """A share asked for or required, in percent, to four significant digits, and more
    where four would round a share short of all (or above none) to "100 %" ("0 %"):
    ``0.95 -> "95 %"``, ``0.995 -> "99.5 %"``, ``0.716 -> "71.6 %"``,
    ``0.99999 -> "99.999 %"``."""
    value = 100 * float(x)
    digits, text = 4, f"{value:.4g}"
    while digits < 15 and float(text) in (0.0, 100.0) and value not in (0.0, 100.0):
        digits += 1
        text = f"{value:.{digits}g}"
    return f"{text} %"


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


_py_ufunc = np.frompyfunc(_py, 1, 1)


def _py_array(arr: np.ndarray) -> np.ndarray:
    """:func:`_py` over an object array (fast path when it holds no numpy scalars)."""
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    if kind == "string":  # all str: nothing to convert
        return arr
    if kind in _HOMOGENEOUS:  # one numpy cast, then numpy's own cast to Python scalars
        try:
            return arr.astype(_HOMOGENEOUS[kind]).astype(object)
        except (OverflowError, TypeError, ValueError):  # e.g. Python ints beyond int64
            pass
    return np.asarray(_py_ufunc(arr), dtype=object)


def _numeric_column(col: pd.Series) -> np.ndarray:
    """One column as a float array (``pd.to_numeric`` when it is not numeric)."""
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.to_numpy(dtype=float)
    return pd.to_numeric(col).to_numpy(dtype=float)


def _numeric_block(X: pd.DataFrame, names: list[str]) -> np.ndarray | None:
    """The columns ``names`` of ``X`` as one float matrix (a copy), or None when
    a column needs :func:`pandas.to_numeric`'s parsing (text, missing markers),
    so that the caller converts column by column with the same results."""
    if not names:
        return np.zeros((len(X), 0))
    if X.columns.has_duplicates:
        return None
    sub = X[names]
    if all(isinstance(dt, np.dtype) and dt.kind in "biuf" for dt in sub.dtypes):
        return np.array(sub.to_numpy(dtype=float), dtype=float, copy=True)
    obj = sub.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(obj.ravel(), skipna=False) not in (
        "integer",
        "floating",
        "mixed-integer-float",
    ):
        return None  # text, booleans, missing markers, decimals...: column by column
    try:
        return np.asarray(obj, dtype=float)
    except (OverflowError, TypeError, ValueError):
        return None


_HOMOGENEOUS: dict[str, type] = {"integer": np.int64, "boolean": np.bool_, "floating": np.float64}
