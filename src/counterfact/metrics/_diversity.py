"""Diversity of a query's set of counterfactuals.

Every diversity here averages a distance over the ``k (k - 1) / 2`` pairs of
counterfactuals of one query, so it is **undefined (NaN) with fewer than two
counterfactuals** -- including none.  Higher is more diverse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..data._dataset import quantile_bins
from ..exceptions import ValidationError
from ..schema import Schema
from ._common import (
    as_frame,
    as_row,
    cat_mask,
    cont_mask,
    is_result,
    need_schema,
    per_query,
    resolve_mad,
    train_parts,
)
from ._distances import DistanceEncoder, compare
from ._proximity import sparsity
from ._validity import is_valid, valid_rows

__all__ = [
    "categorical_diversity",
    "continuous_diversity",
    "count_diversity",
    "harmonic_mean",
    "l2c_bins",
    "l2c_diversity",
    "l2c_score",
    "normalized_diversity",
]


def _pairs(M: np.ndarray, numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|c_i - c_j| and the changed mask over all pairs i < j (shape (k(k-1)/2, d))."""
    i, j = np.triu_indices(M.shape[0], 1)
    return compare(M[i], M[j], numeric)


def _enc_matrix(counterfactuals: Any, schema: Any, fn: str) -> tuple[DistanceEncoder, np.ndarray]:
    schema = need_schema(schema, fn)
    enc = DistanceEncoder(schema)
    return enc, enc.transform(as_frame(counterfactuals, schema))


def _cont_div(enc: DistanceEncoder, M: np.ndarray, mad: np.ndarray) -> float:
    cont = cont_mask(enc.schema)
    if M.shape[0] < 2 or not cont.any():
        return float("nan")
    D, ch = _pairs(M, enc._num)
    D = np.where(ch, D, 0.0)
    return float((D[:, cont] / mad[cont]).mean(axis=1).mean())


def _cat_div(enc: DistanceEncoder, M: np.ndarray) -> float:
    cat = cat_mask(enc.schema)
    if M.shape[0] < 2 or not cat.any():
        return float("nan")
    _, ch = _pairs(M, enc._num)
    return float(ch[:, cat].mean(axis=1).mean())


def _count_div(enc: DistanceEncoder, M: np.ndarray) -> float:
    if M.shape[0] < 2 or enc.n_features == 0:
        return float("nan")
    _, ch = _pairs(M, enc._num)
    return float(ch.mean(axis=1).mean())


def _each_query(result: Any, fn: Any, name: str) -> pd.Series:
    enc = DistanceEncoder(result.schema)
    return per_query(
        result,
        lambda _q, _x, cf: fn(enc, enc.transform(cf)) if len(cf) >= 2 else float("nan"),
        name,
    )


def continuous_diversity(
    counterfactuals: Any, schema: Schema | None = None, *, mad: Any = None, train: Any = None
) -> float | pd.Series:
    """DiCE's continuous diversity (Mothilal et al. 2020, "Evaluating counterfactuals"; CE-OCL Table
    3 "cont. diversity"; MD-PSO eq. 14).

    ``(1 / C(k,2)) sum_{i<j} dist_cont(c_i, c_j)`` with
    ``dist_cont(a, b) = (1/d_cont) sum_p |a_p - b_p| / MAD_p`` over the
    continuous features (ordinal ones by rank).  >= 0, higher is more diverse.
    NaN with fewer than two counterfactuals or no continuous feature.
    """
    if is_result(counterfactuals):
        m = resolve_mad(counterfactuals.schema, mad, train, "continuous_diversity")
        return _each_query(counterfactuals, lambda e, M: _cont_div(e, M, m), "diversity_cont")
    enc, M = _enc_matrix(counterfactuals, schema, "continuous_diversity")
    return _cont_div(enc, M, resolve_mad(enc.schema, mad, train, "continuous_diversity"))


def categorical_diversity(counterfactuals: Any, schema: Schema | None = None) -> float | pd.Series:
    """DiCE's categorical diversity (Mothilal et al. 2020, "Evaluating counterfactuals"; CE-OCL
    Table 3 "cat. diversity"; MD-PSO eq. 14).

    ``(1 / C(k,2)) sum_{i<j} (1/d_cat) sum_p 1[c_i^p != c_j^p]`` over the
    binary/categorical features; in [0, 1].  NaN with fewer than two
    counterfactuals or no categorical feature.
    """
    if is_result(counterfactuals):
        return _each_query(counterfactuals, _cat_div, "diversity_cat")
    enc, M = _enc_matrix(counterfactuals, schema, "categorical_diversity")
    return _cat_div(enc, M)


def count_diversity(counterfactuals: Any, schema: Schema | None = None) -> float | pd.Series:
    """DiCE's count diversity, CE-OCL's "sparsity-based diversity" (Mothilal et al. 2020,
    "Evaluating counterfactuals"; CE-OCL Table 3).

    ``(1 / (C(k,2) d)) sum_{i<j} sum_l 1[c_i^l != c_j^l]`` over all ``d``
    features: the mean fraction of features on which two counterfactuals
    differ; in [0, 1].  NaN with fewer than two counterfactuals.
    """
    if is_result(counterfactuals):
        return _each_query(counterfactuals, _count_div, "diversity_count")
    enc, M = _enc_matrix(counterfactuals, schema, "count_diversity")
    return _count_div(enc, M)


# -------------------------------------------------------------------- L2C
def l2c_bins(schema: Schema, train: Any, n_bins: int = 4) -> dict[str, np.ndarray]:
    """L2C's discretisation of the numeric features (Learning to Counter, App. A.3):
    up to ``n_bins`` (4) quantile buckets of the training values, duplicate
    edges merged (:func:`counterfact.data._dataset.quantile_bins`, like ``pandas.qcut``)."""
    X, _ = train_parts(train, schema)
    return {
        f.name: quantile_bins(pd.to_numeric(X[f.name]).to_numpy(dtype=float), n_bins)
        for f in schema
        if f.is_numeric
    }


def _discretize(enc: DistanceEncoder, M: np.ndarray, bins: Mapping[str, Any]) -> np.ndarray:
    """Numeric columns -> bucket index (right-closed buckets as qcut; out-of-range values
    go to the first/last bucket); ordinal/categorical codes unchanged."""
    out = M.copy()
    for j, f in enumerate(enc.schema):
        if f.is_numeric:
            edges = np.asarray(bins[f.name], dtype=float)
            out[:, j] = np.searchsorted(edges[1:-1], M[:, j], side="left")
    return out


def _resolve_bins(schema: Schema, bins: Any, train: Any, fn: str) -> Mapping[str, Any]:
    if bins is None and train is not None:
        return l2c_bins(schema, train)
    if bins is None:
        raise ValidationError(
            f"{fn} discretises numeric features into L2C's quantile buckets: pass train= "
            f"(the training Dataset) or bins= ({{feature: edges}}, the bucket edges of "
            "every numeric feature)."
        )
    missing = [f.name for f in schema if f.is_numeric and f.name not in bins]
    if missing:
        raise ValidationError(f"bins lacks edges for the numeric features {missing}.")
    return bins


def _l2c_div(enc: DistanceEncoder, M: np.ndarray, bins: Mapping[str, Any]) -> float:
    if M.shape[0] < 2:
        return float("nan")
    B = _discretize(enc, M, bins)
    i, j = np.triu_indices(B.shape[0], 1)
    return float((B[i] != B[j]).mean(axis=1).mean())


def l2c_diversity(
    counterfactuals: Any,
    schema: Schema | None = None,
    *,
    bins: Any = None,
    train: Any = None,
    model: Any = None,
    target: Any = None,
) -> float | pd.Series:
    """L2C's diversity (Learning to Counter, Sec. 4.1 and Table 1).

    The Hamming distance between two counterfactuals over *all* features,
    numeric ones discretised into L2C's quantile buckets (:func:`l2c_bins`),
    divided by the number of features (so that it lies in [0, 1] and can enter
    the harmonic mean of :func:`l2c_score`; the paper does not state the
    normalisation), averaged over all pairs of *valid* counterfactuals
    (when ``model`` and ``target`` are given; a result uses its own).

    Departure: the paper sets diversity to 0 when no counterfactual is valid;
    here, as for every diversity, fewer than two valid counterfactuals give NaN
    (use ``.fillna(0)`` for the paper's convention).
    """
    if is_result(counterfactuals):
        res = counterfactuals
        b = _resolve_bins(res.schema, bins, train, "l2c_diversity")
        enc = DistanceEncoder(res.schema)
        valid = valid_rows(res) if res.model is not None else None

        def one(_q: Any, _x: pd.Series, cf: pd.DataFrame) -> float:
            if valid is not None and len(cf):
                cf = cf[valid.loc[cf.index].to_numpy()]
            return _l2c_div(enc, enc.transform(cf), b) if len(cf) >= 2 else float("nan")

        return per_query(res, one, "diversity_l2c")
    enc, M = _enc_matrix(counterfactuals, schema, "l2c_diversity")
    b = _resolve_bins(enc.schema, bins, train, "l2c_diversity")
    if model is not None and len(M):
        M = M[np.asarray(is_valid(counterfactuals, model, target), dtype=bool)]
    return _l2c_div(enc, M, b)


def harmonic_mean(diversity: float, sparsity: float) -> float:
    """L2C's balanced score (Learning to Counter, Sec. 5):
    ``2 D (1 - S) / (D + (1 - S))``, the harmonic mean of the diversity ``D`` and
    one minus the sparsity ``S`` (fraction of features changed); 0 when both are 0,
    NaN when either is NaN.  Higher is better."""
    d, s = float(diversity), 1.0 - float(sparsity)
    if np.isnan(d) or np.isnan(s):
        return float("nan")
    return 0.0 if d + s == 0 else 2.0 * d * s / (d + s)


def l2c_score(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    bins: Any = None,
    train: Any = None,
    model: Any = None,
    target: Any = None,
) -> float | pd.Series:
    """L2C's harmonic mean of diversity and ``1 - sparsity`` for one query
    (:func:`harmonic_mean` of :func:`l2c_diversity` and
    :func:`counterfact.metrics._proximity.sparsity` over all the counterfactuals)."""
    if is_result(query):
        res = query
        div = l2c_diversity(res, bins=bins, train=train)
        spa = sparsity(res)
        out = [harmonic_mean(d, s) for d, s in zip(div, spa, strict=True)]  # type: ignore[arg-type]
        return pd.Series(out, index=res.queries.index, name="l2c_harmonic", dtype=float)
    schema = need_schema(schema, "l2c_score")
    d = l2c_diversity(counterfactuals, schema, bins=bins, train=train, model=model, target=target)
    return harmonic_mean(d, sparsity(query, counterfactuals, schema))  # type: ignore[arg-type]


# ----------------------------------------------------------------- MD-PSO
def _norm_div(
    enc: DistanceEncoder, M: np.ndarray, q: np.ndarray, weights: np.ndarray, metric: str
) -> float:
    if M.shape[0] < 2:
        return float("nan")
    cont, cat = cont_mask(enc.schema), cat_mask(enc.schema)

    def dist(D: np.ndarray, ch: np.ndarray) -> np.ndarray:
        D = np.where(ch, D, 0.0)
        if metric == "gower":
            return np.where(cat, ch, D * weights).mean(axis=1)
        out = np.zeros(D.shape[0])
        if cont.any():
            out += (D[:, cont] / weights[cont]).mean(axis=1)
        if cat.any():
            out += ch[:, cat].mean(axis=1)
        return out

    i, j = np.triu_indices(M.shape[0], 1)
    pair = dist(*compare(M[i], M[j], enc._num))
    prox = dist(*compare(M, q, enc._num))
    den = prox[i] + prox[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(den > 0, pair / np.where(den > 0, den, 1.0), 0.0)
    return float(terms.mean())


def normalized_diversity(
    query: Any,
    counterfactuals: pd.DataFrame | None = None,
    schema: Schema | None = None,
    *,
    metric: Literal["mad", "gower"] = "mad",
    mad: Any = None,
    train: Any = None,
    ranges: Any = None,
) -> float | pd.Series:
    """MD-PSO's normalised diversity (Shekhar et al., eq. 15).

    ``(1 / C(k,2)) sum_{i<j} d(c_i, c_j) / (prox(c_i) + prox(c_j))`` with
    ``prox(c) = d(c, x0)``.  The paper takes ``d`` "as in (9) and (11)", the
    DiCE distances, so ``metric="mad"`` (default) uses
    ``d = dist_cont + dist_cat`` (MAD-weighted mean over continuous features
    plus mismatch fraction over categorical ones; MAD from ``mad`` or
    ``train``); ``metric="gower"`` uses the Gower distance of eqs. (5)-(6)
    instead (ranges from ``ranges``, else the schema).  By the triangle
    inequality each term is at most 1.  A pair whose members both equal the
    query contributes 0.  NaN with fewer than two counterfactuals.
    """
    if metric not in ("mad", "gower"):
        raise ValidationError(
            f"normalized_diversity metric must be 'mad' or 'gower'. Got {metric!r}."
        )

    def weights_for(s: Schema) -> np.ndarray:
        if metric == "gower":
            return 1.0 / DistanceEncoder(s, ranges).ranges
        return resolve_mad(s, mad, train, "normalized_diversity")

    if is_result(query):
        res = query
        enc = DistanceEncoder(res.schema)
        w = weights_for(res.schema)
        return per_query(
            res,
            lambda _q, x, cf: (
                _norm_div(enc, enc.transform(cf), enc.transform(x)[0], w, metric)
                if len(cf) >= 2
                else float("nan")
            ),
            "diversity_normalized",
        )
    schema = need_schema(schema, "normalized_diversity")
    enc = DistanceEncoder(schema)
    M = enc.transform(as_frame(counterfactuals, schema))
    return _norm_div(enc, M, enc.transform(as_row(query))[0], weights_for(schema), metric)
