"""The range-normalised distance, Gower's distance and change counts (vectorised).

The range-normalised distance compares a counterfactual with its query feature
by feature -- the change divided by the feature's range for numeric features,
0 or 1 for categorical ones -- and averages over the features.  It is the
distance of MACE (Karimi et al. 2020, Sec. 4.2, eq. (3)), shared by every
method and metric of the package.  Per-feature deviation::

    delta_j = |x_j - q_j| / R_j      numeric (real, integer)
    delta_j = |r(x_j) - r(q_j)| / R_j  ordinal, r = rank, R_j = levels - 1
    delta_j = 1[x_j != q_j]           binary, categorical

with ``R_j`` the feature's range (:meth:`counterfact.schema.Schema.ranges`:
the domain width, observed when the schema was inferred; zero widths count
as 1), so ``delta_j`` lies in [0, 1] for values inside the domain.  A numeric
difference below the relative tolerance of
:func:`counterfact.constraints._bounds.changed` (1e-7) counts as no change, so that
float noise from a solver never counts as a changed feature.

Distances, normalised by the number of features ``J``::

    l0   = ||delta||_0 / J          (fraction of features changed)
    l1   = ||delta||_1 / J          (mean deviation)
    linf = ||delta||_inf            (largest deviation)
    l2   = ||delta||_2 / sqrt(J)    (root mean square; not in MACE, for methods with norm="l2")
    (alpha, beta, gamma): alpha * l0 + beta * l1 + gamma * linf, weights rescaled to sum to 1

MACE writes ``alpha ||delta||_0 + beta ||delta||_1 + gamma ||delta||_inf``
with ``(alpha + beta) / J + gamma = 1``; we fold the ``1/J`` into the norms so
that the three weights form a convex combination and every distance lies in
[0, 1] (the same convention as :mod:`counterfact.methods.mace`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ValidationError
from ..schema import Schema
from ._common import (
    NUM_TOL,
    as_frame,
    as_row,
    is_result,
    need_schema,
    observed_ranges,
    resolve_ranges,
    train_parts,
)

__all__ = [
    "NORMS",
    "DistanceEncoder",
    "distance",
    "feature_deltas",
    "gower",
    "n_changes",
    "norm_weights",
]

Norm = str | tuple[float, float, float] | Sequence[float]

#: named norms -> weights (alpha, beta, gamma) of l0, l1, linf; "l2" has none (see module doc)
NORMS: dict[str, tuple[float, float, float] | None] = {
    "l0": (1.0, 0.0, 0.0),
    "l1": (0.0, 1.0, 0.0),
    "linf": (0.0, 0.0, 1.0),
    "l2": None,
}


def norm_weights(norm: Norm) -> tuple[float, float, float] | None:
    """``(alpha, beta, gamma)`` of a norm name or weights (rescaled to sum 1); None for ``"l2"``."""
    if isinstance(norm, str):
        if norm not in NORMS:
            raise ValidationError(
                f"norm must be one of {list(NORMS)} or weights (alpha, beta, gamma). Got {norm!r}."
            )
        return NORMS[norm]
    try:
        a, b, g = (float(v) for v in norm)
    except (TypeError, ValueError):
        raise ValidationError(
            f"norm must be one of {list(NORMS)} or three weights (alpha, beta, gamma). Got "
            f"{norm!r}."
        ) from None
    s = a + b + g
    if not (np.isfinite(s) and s > 0) or min(a, b, g) < 0:
        raise ValidationError(
            f"norm weights (alpha, beta, gamma) must be finite, >= 0 and not all 0. Got {norm!r}."
        )
    return a / s, b / s, g / s


def compare(A: np.ndarray, B: np.ndarray, numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``|A - B|`` and the changed mask for coded rows (broadcasting): numeric
    columns differ beyond a relative 1e-7, coded columns when the codes differ."""
    D = np.abs(A - B)
    thr = np.where(numeric, NUM_TOL * np.maximum(1.0, np.maximum(np.abs(A), np.abs(B))), 0.5)
    return D, D > thr


def _level_lookup(levels: Any) -> tuple[pd.Index, dict[Any, int]]:
    """A categorical feature's levels as an index and as a level -> position map."""
    return pd.Index(list(levels)), {c: i for i, c in enumerate(levels)}


class DistanceEncoder:
    """Fast range-normalised distances between one query and many raw rows.

    :meth:`transform` codes raw rows once as a float matrix with one column
    per feature (numeric values as they are, ordinal features as ranks,
    binary and categorical features as category indices); :meth:`deltas`
    and :meth:`distances` then compare a whole matrix with a query vector in
    a few numpy operations (30,000 rows x 12 features: a few milliseconds).
    No fitting: the ranges come from the schema or are given.

    Parameters
    ----------
    schema : Schema
    ranges : array-like or mapping, optional
        ``R_j`` per feature (schema order, or ``{name: range}``); default
        :meth:`Schema.ranges`.  Ignored for binary/categorical features.

    Examples
    --------
    >>> enc = DistanceEncoder(schema)
    >>> M = enc.transform(pool)                 # once
    >>> q = enc.transform(query)[0]
    >>> d = enc.distances(M, q, "l1")           # per row of pool
    """

    def __init__(self, schema: Schema, ranges: Any = None) -> None:
        self.schema = need_schema(schema, "DistanceEncoder")
        self.ranges = resolve_ranges(schema, ranges)
        self.n_features = len(schema)
        self._cat = np.array([f.is_categorical for f in schema], dtype=bool)
        self._num = np.array([f.is_numeric for f in schema], dtype=bool)
        self._weight = np.where(self._cat, 0.0, 1.0 / self.ranges)
        self._cat_idx = np.flatnonzero(self._cat)
        self._lookups = [None if f.is_numeric else _level_lookup(f.categories) for f in schema]

    # ------------------------------------------------------------- encoding
    def transform(self, X: pd.DataFrame | pd.Series) -> np.ndarray:
        """Raw rows -> float matrix (n, n_features): values, ranks or category indices."""
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        X = as_frame(X, self.schema, "rows")
        out = np.empty((len(X), self.n_features), dtype=float)
        for j, f in enumerate(self.schema):
            col = X[f.name]
            if f.is_numeric:
                try:
                    out[:, j] = pd.to_numeric(col).to_numpy(dtype=float)
                except (TypeError, ValueError):
                    raise ValidationError(
                        f"Column '{f.name}' is {f.kind} but holds non-numeric values."
                    ) from None
                continue
            index, lookup = self._lookups[j]  # type: ignore[misc]
            codes = index.get_indexer(col)
            if (codes < 0).any():  # e.g. 1 vs True, numpy scalars: retry through Python equality
                vals = col.tolist()
                codes = np.array([lookup.get(_py(v), -1) for v in vals])
                if (codes < 0).any():
                    bad = sorted({repr(v) for v, c in zip(vals, codes, strict=True) if c < 0})
                    raise ValidationError(
                        f"Column '{f.name}' has values {bad[:5]} that are not among its categories "
                        f"{list(f.categories or ())}."
                    )
            out[:, j] = codes
        return out

    # ------------------------------------------------------------ comparing
    def _diff(self, matrix: np.ndarray, query_vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``|M - q|`` (a new array) and the changed mask.

        The relative tolerance uses ``max(1, |q_j|) / (1 - 1e-7)`` as the scale,
        a per-column threshold (one broadcast comparison instead of three
        full-size temporaries); it agrees with :func:`counterfact.constraints._bounds.changed`
        except for differences within 1e-14 of the tolerance itself.
        """
        M = np.asarray(matrix, dtype=float)
        if M.ndim == 1:
            M = M.reshape(1, -1)
        q = np.asarray(query_vector, dtype=float).reshape(-1)
        if M.shape[1] != self.n_features or q.size != self.n_features:
            raise ValidationError(
                f"Expected {self.n_features} columns (one per feature); got a matrix with "
                f"{M.shape[1]} and a query vector with {q.size}. Use "
                "DistanceEncoder.transform to build them."
            )
        D = np.subtract(M, q)
        np.abs(D, out=D)
        thr = np.where(self._num, NUM_TOL * np.maximum(1.0, np.abs(q)) / (1.0 - NUM_TOL), 0.5)
        return D, D > thr

    def _delta(self, D: np.ndarray, ch: np.ndarray) -> np.ndarray:
        """Turn ``|M - q|`` into ``delta`` in place (zero where unchanged, indicators for
        categories)."""
        np.multiply(D, ch, out=D)
        np.multiply(D, self._weight, out=D)
        if self._cat_idx.size:
            D[:, self._cat_idx] = ch[:, self._cat_idx]
        return D

    def changed(self, matrix: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
        """Boolean (n, n_features): which features differ from the query."""
        return self._diff(matrix, query_vector)[1]

    def deltas(self, matrix: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
        """Per-feature ``delta_j`` (n, n_features), see the module docstring."""
        return self._delta(*self._diff(matrix, query_vector))

    def distances(
        self, matrix: np.ndarray, query_vector: np.ndarray, norm: Norm = "l1"
    ) -> np.ndarray:
        """The range-normalised distance of each row to the query (shape (n,))."""
        weights = norm_weights(norm)
        D, ch = self._diff(matrix, query_vector)
        delta = self._delta(D, ch)
        J = float(max(self.n_features, 1))
        if weights is None:  # l2
            np.multiply(delta, delta, out=delta)
            return np.sqrt(delta.sum(axis=1) / J)
        a, b, g = weights
        out = np.zeros(delta.shape[0])
        if a:
            out += (a / J) * np.count_nonzero(ch, axis=1)
        if b:
            out += (b / J) * delta.sum(axis=1)
        if g and delta.shape[1]:
            out += g * delta.max(axis=1)
        return out


# ------------------------------------------------------------------ functions
def _encode(
    query: Any, counterfactuals: Any, schema: Schema, ranges: Any
) -> tuple[DistanceEncoder, np.ndarray, np.ndarray]:
    enc = DistanceEncoder(schema, ranges)
    return enc, enc.transform(as_frame(counterfactuals, schema)), enc.transform(as_row(query))[0]


def _ranges_from(schema: Schema, ranges: Any, train: Any) -> Any:
    if ranges is None and train is not None:
        return observed_ranges(train_parts(train, schema)[0], schema)
    return ranges


def feature_deltas(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    ranges: Any = None,
) -> np.ndarray | pd.DataFrame:
    """Per-feature range-normalised deviations ``delta_j`` (see the module docstring).

    ``delta_j = |x_j - q_j| / R_j`` (numeric), ``|rank - rank_q| / (levels - 1)``
    (ordinal), ``1[x_j != q_j]`` (binary, categorical).

    Parameters
    ----------
    query : Series or CounterfactualResult
        The raw query row; or a result, for the deltas of all its counterfactuals.
    counterfactuals : DataFrame
        Raw rows with the schema's columns.
    schema : Schema
    ranges : array-like or mapping, optional
        ``R_j`` per feature; default the schema's ranges.

    Returns
    -------
    ndarray of shape (n_counterfactuals, n_features)
        For a result: a DataFrame indexed like ``result.counterfactuals`` with
        one column per feature.
    """
    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema, ranges)
        out = per_query_rows(res, enc, enc.deltas, width=enc.n_features)
        return pd.DataFrame(out, index=res.counterfactuals.index, columns=res.schema.names)
    schema = need_schema(schema, "feature_deltas")
    enc, M, q = _encode(query, counterfactuals, schema, ranges)
    return enc.deltas(M, q)


def distance(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    norm: Norm = "l1",
    ranges: Any = None,
) -> np.ndarray | pd.Series:
    """The range-normalised distance of each counterfactual to its query.

    The mean over features of ``delta_j``: the change divided by the feature's
    range (numeric), the rank change over ``levels - 1`` (ordinal), 0 or 1
    (binary, categorical); see the module docstring.

    ``norm``: ``"l0"`` (fraction of features changed), ``"l1"`` (mean of
    ``delta_j``), ``"linf"`` (max of ``delta_j``), ``"l2"`` (root mean square
    of ``delta_j``), or weights ``(alpha, beta, gamma)`` of the convex
    combination ``alpha * l0 + beta * l1 + gamma * linf`` (rescaled to sum 1).
    Lower is better; 0 means identical to the query.

    Returns an array (one value per counterfactual); given a result, a Series
    indexed like ``result.counterfactuals``.  For many rows against one query
    build a :class:`DistanceEncoder` once instead.
    """
    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema, ranges)
        return _per_cf(
            res, enc, lambda M, q: enc.distances(M, q, norm), f"distance_{_norm_name(norm)}"
        )
    schema = need_schema(schema, "distance")
    enc, M, q = _encode(query, counterfactuals, schema, ranges)
    return enc.distances(M, q, norm)


def gower(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    ranges: Any = None,
    train: Any = None,
) -> np.ndarray | pd.Series:
    """Gower distance of each counterfactual to its query (MD-PSO, Shekhar et al., eqs. 5-6).

    ``l2(x0, x_cf) = (1/p) sum_j delta_G(x0_j, x_cf_j)`` with
    ``delta_G = |x0_j - x_cf_j| / R_j`` for numeric features and
    ``1[x0_j != x_cf_j]`` for categorical ones (ordinal features: ranks, as
    numeric).  ``R_j`` is Gower's range of the feature: ``ranges`` if given,
    else the range observed in ``train`` if given, else the schema's range.
    With the same ranges this equals the range-normalised l1 (:func:`distance`).
    """
    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema, _ranges_from(res.schema, ranges, train))
        return _per_cf(res, enc, lambda M, q: enc.distances(M, q, "l1"), "gower")
    schema = need_schema(schema, "gower")
    enc, M, q = _encode(query, counterfactuals, schema, _ranges_from(schema, ranges, train))
    return enc.distances(M, q, "l1")


def n_changes(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> np.ndarray | pd.Series:
    """Number of features each counterfactual changes: ``||x - q||_0`` (MD-PSO eq. 7; UFCE's
    "number of changed features"; MACE's un-normalised l0).  Numeric values equal
    within a relative 1e-7 count as unchanged."""
    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema)
        return _per_cf(
            res, enc, lambda M, q: enc.changed(M, q).sum(axis=1).astype(float), "changes"
        )
    schema = need_schema(schema, "n_changes")
    enc, M, q = _encode(query, counterfactuals, schema, None)
    return enc.changed(M, q).sum(axis=1)


def _norm_name(norm: Norm) -> str:
    if isinstance(norm, str):
        return norm
    a, b, g = norm_weights(norm) or (0.0, 0.0, 0.0)
    return f"{a:g}_{b:g}_{g:g}"


def per_query_rows(res: Any, enc: DistanceEncoder, fn: Any, width: int | None = None) -> np.ndarray:
    """``fn(matrix, query_vector)`` applied to each query's counterfactuals of a result;
    rows in the order of ``res.counterfactuals`` (NaN for rows of unknown queries)."""
    cfs = res.counterfactuals
    shape: tuple[int, ...] = (len(cfs),) if width is None else (len(cfs), width)
    out = np.full(shape, np.nan)
    if len(cfs) == 0:
        return out
    M = enc.transform(cfs)
    Q = enc.transform(res.queries)
    qpos = pd.Index(res.queries.index).get_indexer(cfs.index.get_level_values(0))
    for i in np.unique(qpos[qpos >= 0]):
        rows = np.flatnonzero(qpos == i)
        out[rows] = fn(M[rows], Q[i])
    return out


def _per_cf(res: Any, enc: DistanceEncoder, fn: Any, name: str) -> pd.Series:
    return pd.Series(
        per_query_rows(res, enc, fn), index=res.counterfactuals.index, name=name, dtype=float
    )
