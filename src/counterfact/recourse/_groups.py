"""Grouping columns of an audit: lookup, alignment with ``X`` and binning of numeric ones."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data import Dataset
from ..data._dataset import quantile_bins
from ..exceptions import ValidationError

__all__ = ["MISSING", "resolve_groups"]

#: label of a row whose group value is missing
MISSING = "(missing)"
#: a numeric column with more distinct values than this is binned
MAX_LEVELS = 10


def _source(name: str, X: pd.DataFrame, data: Any) -> pd.Series:
    if name in X.columns:
        return X[name]
    frame = data.frame if isinstance(data, Dataset) else data
    if isinstance(frame, pd.DataFrame) and name in frame.columns:
        return frame[name]
    where = "X" + (" or data" if frame is not None else "")
    raise ValidationError(
        f"groups names column {name!r}, which is not in {where}. Pass a column name of X (or of "
        "data=, a DataFrame or Dataset holding X's rows), or the values themselves as a Series or "
        "DataFrame indexed like X."
    )


def _align(col: pd.Series, X: pd.DataFrame, name: str) -> pd.Series:
    if col.index.has_duplicates:
        raise ValidationError(
            f"groups column {name!r} has duplicate index labels; it must be indexed like X."
        )
    missing = ~X.index.isin(col.index)
    if missing.any():
        ids = list(X.index[missing][:5])
        raise ValidationError(
            f"groups column {name!r} is not aligned with X: {int(missing.sum())} of X's row ids "
            f"(e.g. {ids}) are not in its index. Index the group values like X."
        )
    return col.reindex(X.index)


def _columns(groups: Any, X: pd.DataFrame, data: Any) -> list[tuple[str, pd.Series]]:
    if groups is None:
        return []
    items = [groups] if isinstance(groups, (str, pd.Series, pd.DataFrame)) else groups
    if not isinstance(items, Sequence):
        raise ValidationError(
            "groups must be a column name, a list of names, a Series or a DataFrame aligned with "
            f"X. Got {type(groups).__name__}."
        )
    out: list[tuple[str, pd.Series]] = []
    for item in items:
        if isinstance(item, str):
            out.append((item, _align(_source(item, X, data), X, item)))
        elif isinstance(item, pd.Series):
            name = str(item.name) if item.name is not None else f"group{len(out)}"
            out.append((name, _align(item, X, name)))
        elif isinstance(item, pd.DataFrame):
            for c in item.columns:
                out.append((str(c), _align(item[c], X, str(c))))
        else:
            raise ValidationError(
                f"groups entries must be names, Series or DataFrames. Got {type(item).__name__}."
            )
    names = [n for n, _ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValidationError(f"groups lists the columns {dup} more than once.")
    return out


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _bin(values: pd.Series, spec: Any, name: str) -> tuple[pd.Series, list[str], list[float]]:
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(v)
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 1:
            raise ValidationError(f"bins for {name!r} must be >= 1. Got {spec}.")
        if not ok.any():
            raise ValidationError(f"groups column {name!r} has no numeric values to bin.")
        edges = quantile_bins(v[ok], int(spec))
        whole = np.unique(np.ceil(edges - 1e-9))
        if np.all(v[ok] == np.round(v[ok])) and whole.size == edges.size:
            # whole-number data (ages, counts): an edge between two integers is moved up to the
            # next integer; the bins [low, high) hold exactly the same rows and read "[44, 74]"
            edges = whole
    else:
        try:
            edges = np.asarray(sorted(float(e) for e in spec), dtype=float)
        except (TypeError, ValueError):
            raise ValidationError(
                f"bins for {name!r} must be an int or a list of edges. Got {spec!r}."
            ) from None
        if edges.size < 2 or np.unique(edges).size != edges.size:
            raise ValidationError(
                f"bins for {name!r} need at least two distinct edges. Got {spec!r}."
            )
    k = edges.size - 1
    labels = [f"[{_fmt(edges[i])}, {_fmt(edges[i + 1])})" for i in range(k - 1)]
    labels.append(f"[{_fmt(edges[-2])}, {_fmt(edges[-1])}]")
    pos = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, k - 1)
    inside = ok & (v >= edges[0]) & (v <= edges[-1])
    outside = ok & ~inside
    if outside.any():
        raise ValidationError(
            f"bins for {name!r} cover [{_fmt(edges[0])}, {_fmt(edges[-1])}], but "
            f"{int(outside.sum())} rows lie outside (values from {_fmt(v[ok].min())} to "
            f"{_fmt(v[ok].max())}). Give edges that cover every row, or leave those rows out "
            "of the population."
        )
    out = np.full(v.shape, MISSING, dtype=object)
    out[inside] = np.array(labels, dtype=object)[pos[inside]]
    order = list(labels)
    if (~ok).any():
        order.append(MISSING)
    return pd.Series(out, index=values.index, dtype=object), order, [float(e) for e in edges]


def resolve_groups(
    groups: Any, X: pd.DataFrame, data: Any = None, bins: int | Mapping[str, Any] = 4
) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """Group labels (strings, index of ``X``) and, per grouping, its level order and bin edges.

    A numeric column (not bool) with more than 10 distinct values is cut into
    ``bins`` quantile bins over the rows of ``X`` (or by the edges given in
    ``bins={name: edges}``; an int there gives that many quantile bins).  Bins
    are ``[low, high)``, the last one closed.  Missing values form the group
    ``"(missing)"``.
    """
    per_col = dict(bins) if isinstance(bins, Mapping) else {}
    default = bins if not isinstance(bins, Mapping) else 4
    cols = _columns(groups, X, data)
    unknown = sorted(set(per_col) - {n for n, _ in cols})
    if unknown:
        raise ValidationError(
            f"bins names {unknown}, which are not among the groups {[n for n, _ in cols]}."
        )
    labels: dict[str, pd.Series] = {}
    info: dict[str, dict[str, Any]] = {}
    for name, col in cols:
        numeric = pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(
            col.dtype
        )
        as_numbers = pd.to_numeric(col.dropna(), errors="coerce")
        if name in per_col and not (numeric or as_numbers.notna().all()):
            raise ValidationError(
                f"bins for {name!r}: the column is not numeric ({col.dtype}), so it cannot be "
                f"cut into bins; its values are the groups. Drop {name!r} from bins."
            )
        if name in per_col or (numeric and col.nunique(dropna=True) > MAX_LEVELS):
            lab, order, edges = _bin(col, per_col.get(name, default), name)
            info[name] = {"order": order, "edges": edges}
        else:
            lab = col.map(
                lambda v: MISSING if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
            )
            lab = lab.astype(object)
            order = sorted(set(lab) - {MISSING}) + ([MISSING] if MISSING in set(lab) else [])
            info[name] = {"order": order, "edges": None}
        labels[name] = lab
    frame = pd.DataFrame(labels, index=X.index)
    return frame, info
