"""Validity and coverage.

A counterfactual is *valid* when the model's own ``predict`` returns the
desired class (``target``).  Without a model (a result read back from JSON has
none) validity cannot be recomputed and these metrics are NaN: the rows were
verified when the result was produced, but a metric never takes that on trust.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ValidationError
from ..models._adapter import as_adapter
from ._common import is_result, query_frames

__all__ = ["coverage", "is_valid", "validity"]


def valid_rows(res: Any) -> pd.Series:
    """Validity of every counterfactual of a result (all False without a model)."""
    cfs = res.counterfactuals
    out = pd.Series(np.zeros(len(cfs), dtype=bool), index=cfs.index, name="valid")
    if res.model is None or len(cfs) == 0:
        return out
    pred = np.asarray(as_adapter(res.model).predict(cfs.loc[:, res.schema.names]))
    tgt = res.target.reindex(cfs.index.get_level_values(0)).to_numpy()
    out[:] = np.array([_py(p) == _py(t) for p, t in zip(pred, tgt, strict=True)], dtype=bool)
    return out


def is_valid(counterfactuals: Any, model: Any = None, target: Any = None) -> np.ndarray | pd.Series:
    """Whether each counterfactual is classified as ``target`` by ``model``.

    Parameters
    ----------
    counterfactuals : DataFrame or CounterfactualResult
        Raw rows; or a result (then ``model`` and per-query targets come from it).
    model : fitted classifier or ModelAdapter
    target : class label
        The desired class.

    Returns
    -------
    ndarray of bool (one per row); for a result, a boolean Series indexed like
    ``result.counterfactuals`` (all False when the result carries no model --
    check ``result.model`` first, or use :func:`validity`, which gives NaN).
    """
    if is_result(counterfactuals):
        return valid_rows(counterfactuals)
    if model is None:
        raise ValidationError(
            "is_valid needs the model (a fitted classifier) and the target class."
        )
    if not isinstance(counterfactuals, pd.DataFrame):
        raise ValidationError(
            "counterfactuals must be a DataFrame of raw rows. Got "
            f"{type(counterfactuals).__name__}."
        )
    if len(counterfactuals) == 0:
        return np.zeros(0, dtype=bool)
    pred = np.asarray(as_adapter(model).predict(counterfactuals))
    t = _py(target)
    return np.array([_py(p) == t for p in pred], dtype=bool)


def validity(
    counterfactuals: Any, model: Any = None, target: Any = None, *, n_requested: int | None = None
) -> float | pd.Series:
    """Fraction of the counterfactuals that the model classifies as the target.

    ``validity = |{c in C : f(c) = y'}| / |C|`` -- L2C's "Validity"
    (proportion of samples in C that counter the original decision), MD-PSO's
    validity, UFCE's ``z_valid`` averaged.  With ``n_requested`` it is DiCE's
    (Mothilal et al. 2020, "Evaluating counterfactuals"; CE-OCL Tables 2-3):
    ``|{unique valid c}| / k``, the number of distinct valid counterfactuals
    over the number requested, so that a method returning fewer than asked is
    penalised.  Higher is better.

    No counterfactual: NaN (0 / 0), or 0.0 with ``n_requested``.  For a result:
    a Series per query; NaN everywhere when the result has no model.
    """
    if is_result(counterfactuals):
        res = counterfactuals
        if res.model is None:
            return pd.Series(np.nan, index=res.queries.index, name="validity", dtype=float)
        valid = valid_rows(res)
        values = []
        for _q, _x, cf in query_frames(res):
            v = valid.loc[cf.index].to_numpy() if len(cf) else np.zeros(0, dtype=bool)
            values.append(_validity_value(cf, v, n_requested))
        return pd.Series(values, index=res.queries.index, name="validity", dtype=float)
    v = is_valid(counterfactuals, model, target)
    return _validity_value(counterfactuals, np.asarray(v), n_requested)


def _validity_value(cf: pd.DataFrame, valid: np.ndarray, n_requested: int | None) -> float:
    if n_requested is not None:
        if n_requested < 1:
            raise ValidationError(f"n_requested must be a positive int. Got {n_requested!r}.")
        if not valid.any():
            return 0.0
        uniq = cf[valid].drop_duplicates()
        return float(len(uniq)) / float(n_requested)
    return float(valid.mean()) if valid.size else float("nan")


def coverage(counterfactuals: Any, model: Any = None, target: Any = None) -> float:
    """Coverage: fraction of queries with at least one valid counterfactual.

    ``Omega = (1/N) sum_n 1[exists c in C_n : f(c) = y'_n]`` -- MACE's coverage
    (Karimi et al. 2020, Sec. 5, "Metrics"), L2C's "Coverage", MD-PSO's
    coverage.  Given a result: that fraction over its queries (NaN without a
    model or without queries).  Given one query's counterfactuals, a model and
    a target: 1.0 or 0.0, the per-query indicator to average.  Higher is better.
    """
    if is_result(counterfactuals):
        res = counterfactuals
        if res.model is None or len(res.queries) == 0:
            return float("nan")
        valid = valid_rows(res)
        if len(valid) == 0:
            return 0.0
        hit = valid.groupby(level=0).any().reindex(res.queries.index, fill_value=False)
        return float(hit.mean())
    v = is_valid(counterfactuals, model, target)
    return 1.0 if np.asarray(v).any() else 0.0
