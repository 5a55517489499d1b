"""Proximity and sparsity as DiCE / CE-OCL, UFCE, L2C and MD-PSO report them.

Feature groups used throughout: *continuous* features are the numeric ones
and the ordinal ones (compared by rank); *categorical* features are the binary
and categorical ones (compared by equality).  A metric over a group that the
schema does not have is NaN.

Conventions for a query with no counterfactual: every proximity and sparsity
value is NaN (there is nothing to measure); see :func:`counterfact.metrics.evaluate`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..schema import Schema
from ._common import (
    as_frame,
    as_row,
    cat_mask,
    cont_mask,
    is_result,
    mean_or_nan,
    need_schema,
    per_feature,
    per_query,
    resolve_mad,
    std_scale,
)
from ._distances import DistanceEncoder, _per_cf

__all__ = [
    "categorical_proximity",
    "continuous_proximity",
    "dice_sparsity",
    "l2c_proximity_cat",
    "l2c_proximity_num",
    "prox_euc",
    "prox_jac",
    "sparsity",
]


def _abs_diff(enc: DistanceEncoder, M: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|x - q| per feature (zero where unchanged) and the changed mask."""
    D, ch = enc._diff(M, q)
    return np.where(ch, D, 0.0), ch


def _mad_l1_rows(
    enc: DistanceEncoder, M: np.ndarray, q: np.ndarray, mad: np.ndarray, *, mean: bool
) -> np.ndarray:
    """sum (or mean) over continuous features of |x_j - q_j| / MAD_j, per row."""
    cont = cont_mask(enc.schema)
    if not cont.any():
        return np.full(M.shape[0], np.nan)
    D, _ = _abs_diff(enc, M, q)
    s = (D[:, cont] / mad[cont]).sum(axis=1)
    return s / cont.sum() if mean else s


def _cat_rows(enc: DistanceEncoder, M: np.ndarray, q: np.ndarray, *, mean: bool) -> np.ndarray:
    """Number (or fraction) of categorical features that differ, per row."""
    cat = cat_mask(enc.schema)
    if not cat.any():
        return np.full(M.shape[0], np.nan)
    _, ch = _abs_diff(enc, M, q)
    s = ch[:, cat].sum(axis=1).astype(float)
    return s / cat.sum() if mean else s


def _setup(
    query: Any, counterfactuals: Any, schema: Any, fn: str
) -> tuple[DistanceEncoder, np.ndarray, np.ndarray]:
    schema = need_schema(schema, fn)
    enc = DistanceEncoder(schema)
    return enc, enc.transform(as_frame(counterfactuals, schema)), enc.transform(as_row(query))[0]


def _query_level(result: Any, row_fn: Any, name: str, post: Any = None) -> pd.Series:
    """Per-query mean of a row-level function ``row_fn(enc, M, q)`` (NaN without
    counterfactuals)."""
    enc = DistanceEncoder(result.schema)

    def one(_q: Any, x: pd.Series, cf: pd.DataFrame) -> float:
        if len(cf) == 0:
            return float("nan")
        v = mean_or_nan(row_fn(enc, enc.transform(cf), enc.transform(x)[0]))
        return post(v) if post is not None else v

    return per_query(result, one, name)


# ------------------------------------------------------------------- DiCE
def continuous_proximity(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    mad: Any = None,
    train: Any = None,
) -> float | pd.Series:
    """DiCE's continuous proximity, as CE-OCL reports it (Mothilal et al. 2020, "Evaluating
    counterfactuals"; CE-OCL, Maragno et al., Tables 2-3).

    ``proximity_cont = -(1/k) sum_i dist_cont(c_i, x)`` with
    ``dist_cont(c, x) = (1/d_cont) sum_p |c_p - x_p| / MAD_p`` over the
    continuous features (ordinal ones by rank).  **Sign:** negated, as DiCE and
    CE-OCL report it, so that it is <= 0 and higher (closer to 0) is better.
    MD-PSO's eqs. (8)-(9) are the same average without the minus sign.

    ``MAD_p`` comes from ``mad`` (per feature) or is computed from ``train``
    (:func:`counterfact.data._dataset.mad`, with its documented fallback where MAD is 0).
    NaN without counterfactuals or without continuous features.
    """
    if is_result(query):
        m = resolve_mad(query.schema, mad, train, "continuous_proximity")
        return _query_level(
            query,
            lambda e, M, q: _mad_l1_rows(e, M, q, m, mean=True),
            "proximity_cont",
            post=lambda v: 0.0 - v,
        )
    enc, M, q = _setup(query, counterfactuals, schema, "continuous_proximity")
    m = resolve_mad(enc.schema, mad, train, "continuous_proximity")
    return 0.0 - mean_or_nan(_mad_l1_rows(enc, M, q, m, mean=True)) if len(M) else float("nan")


def categorical_proximity(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> float | pd.Series:
    """DiCE's categorical proximity (Mothilal et al. 2020, "Evaluating counterfactuals"; CE-OCL
    Tables 2-3).

    ``proximity_cat = 1 - (1/k) sum_i dist_cat(c_i, x)`` with
    ``dist_cat(c, x) = (1/d_cat) sum_p 1[c_p != x_p]`` over the binary and
    categorical features.  In [0, 1], higher is better.  (MD-PSO's eqs. 10-11
    report the un-complemented average ``1 - proximity_cat``.)  NaN without
    counterfactuals or without categorical features.
    """
    if is_result(query):
        return _query_level(
            query,
            lambda e, M, q: _cat_rows(e, M, q, mean=True),
            "proximity_cat",
            post=lambda v: 1.0 - v,
        )
    enc, M, q = _setup(query, counterfactuals, schema, "categorical_proximity")
    return 1.0 - mean_or_nan(_cat_rows(enc, M, q, mean=True)) if len(M) else float("nan")


# ------------------------------------------------------------------- UFCE
def prox_euc(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    mad: Any = None,
    train: Any = None,
) -> np.ndarray | pd.Series:
    """UFCE's numerical proximity of each counterfactual (Suffian et al., eq. 6).

    ``prox_Euc(z, x) = sum_i sqrt((z_i - x_i)^2) / MAD_i`` over the continuous
    features -- despite its name a MAD-weighted l1 *sum* (the square root of a
    square is an absolute value); we implement the equation as printed.
    Lower is better.  One value per counterfactual (a result gives a Series
    indexed like ``result.counterfactuals``).
    """
    if is_result(query):
        m = resolve_mad(query.schema, mad, train, "prox_euc")
        enc = DistanceEncoder(query.schema)
        return _per_cf(query, enc, lambda M, q: _mad_l1_rows(enc, M, q, m, mean=False), "prox_euc")
    enc, M, q = _setup(query, counterfactuals, schema, "prox_euc")
    return _mad_l1_rows(enc, M, q, resolve_mad(enc.schema, mad, train, "prox_euc"), mean=False)


def _jaccard_rows(enc: DistanceEncoder, M: np.ndarray, q: np.ndarray) -> np.ndarray:
    cat = cat_mask(enc.schema)
    m = float(cat.sum())
    if m == 0:
        return np.full(M.shape[0], np.nan)
    c = _cat_rows(enc, M, q, mean=False)
    return 2.0 * c / (m + c)


def prox_jac(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> np.ndarray | pd.Series:
    """UFCE's categorical proximity of each counterfactual (Suffian et al., eq. 5).

    ``prox_Jac(z, x) = 1 - Jacc(z, x)``, the Jaccard index taken over the sets
    of (feature, value) pairs of the binary/categorical features -- the same
    as over the active one-hot columns.  With ``m`` such features of which
    ``c`` changed, ``Jacc = (m - c) / (m + c)`` and ``prox_Jac = 2c / (m + c)``:
    0 when identical, 1 when every categorical feature differs, as the paper
    states.  Lower is better; NaN without categorical features.
    """
    if is_result(query):
        enc = DistanceEncoder(query.schema)
        return _per_cf(query, enc, lambda M, q: _jaccard_rows(enc, M, q), "prox_jac")
    enc, M, q = _setup(query, counterfactuals, schema, "prox_jac")
    return _jaccard_rows(enc, M, q)


# -------------------------------------------------------------------- L2C
def l2c_proximity_num(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    scale: Any = None,
    train: Any = None,
) -> float | pd.Series:
    """L2C's "Prox Num" (Learning to Counter, Sec. 4.1 and Table 1).

    ``(1/k) sum_i sum_{j continuous} |c_ij - x_j| / s_j``: the l1 distance over
    the numerical features, averaged over the counterfactuals.  The paper
    compares methods on numerical features standardised to unit variance, so
    ``s_j`` is the training standard deviation (from ``train``) unless
    ``scale`` gives it (``scale=1`` for raw units).  Lower is better.
    """

    def scales(schema: Schema) -> np.ndarray:
        if scale is not None:
            return np.where(cont_mask(schema), per_feature(scale, schema, "scale"), 1.0)
        if train is not None:
            return std_scale(train, schema)
        raise ValidationError(
            "l2c_proximity_num needs the per-feature scale: pass train= (standard "
            "deviations, as L2C) or scale= (one value per feature, or 1 for raw units)."
        )

    if is_result(query):
        s = scales(query.schema)
        return _query_level(
            query, lambda e, M, q: _mad_l1_rows(e, M, q, s, mean=False), "l2c_distance_num"
        )
    enc, M, q = _setup(query, counterfactuals, schema, "l2c_proximity_num")
    return mean_or_nan(_mad_l1_rows(enc, M, q, scales(enc.schema), mean=False))


def l2c_proximity_cat(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> float | pd.Series:
    """L2C's "Prox Cat": the Hamming distance (number of differing binary/categorical
    features) between the query and each counterfactual, averaged over the
    counterfactuals (Learning to Counter, Table 1).  Lower is better."""
    if is_result(query):
        return _query_level(
            query, lambda e, M, q: _cat_rows(e, M, q, mean=False), "l2c_distance_cat"
        )
    enc, M, q = _setup(query, counterfactuals, schema, "l2c_proximity_cat")
    return mean_or_nan(_cat_rows(enc, M, q, mean=False))


# --------------------------------------------------------------- sparsity
def _changed_fraction(enc: DistanceEncoder, M: np.ndarray, q: np.ndarray) -> np.ndarray:
    return enc.changed(M, q).mean(axis=1) if enc.n_features else np.zeros(M.shape[0])


def sparsity(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> float | pd.Series:
    """Fraction of features changed, averaged over the counterfactuals.

    ``(1/k) sum_i (1/d) sum_j 1[c_ij != x_j]`` -- L2C's "Sparsity"
    (proportion of features changed, averaged over C), UFCE's sparsity
    (Sec. 3.3, "percentage of feature changes") and MD-PSO's eqs. (12)-(13).
    **Lower is better.**  DiCE and CE-OCL report the complement, see
    :func:`dice_sparsity`; the count is :func:`n_changes`.  NaN without
    counterfactuals.
    """
    if is_result(query):
        return _query_level(query, _changed_fraction, "sparsity")
    enc, M, q = _setup(query, counterfactuals, schema, "sparsity")
    return mean_or_nan(_changed_fraction(enc, M, q))


def dice_sparsity(
    query: Any, counterfactuals: pd.DataFrame | None = None, schema: Schema | None = None
) -> float | pd.Series:
    """DiCE's sparsity as CE-OCL reports it: ``1 - (1/(k d)) sum_i sum_l 1[c_i^l != x^l]``
    (Mothilal et al. 2020, "Evaluating counterfactuals"; CE-OCL Tables 2-3) -- the fraction of
    features left unchanged, in [0, 1], **higher is better**; ``1 - sparsity``."""
    if is_result(query):
        return _query_level(query, _changed_fraction, "dice_sparsity", post=lambda v: 1.0 - v)
    enc, M, q = _setup(query, counterfactuals, schema, "dice_sparsity")
    return 1.0 - mean_or_nan(_changed_fraction(enc, M, q))
