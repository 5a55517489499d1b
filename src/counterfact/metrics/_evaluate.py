"""Every metric for every query of a result, in one table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ._actionability import _allowed_for, _feasible_rows, _share
from ._common import (
    TrainData,
    is_result,
    mean_or_nan,
    observed_ranges,
    resolve_mad,
    std_scale,
    train_parts,
)
from ._distances import DistanceEncoder
from ._diversity import (
    _cat_div,
    _cont_div,
    _count_div,
    _l2c_div,
    _norm_div,
    _resolve_bins,
    harmonic_mean,
)
from ._plausibility import LOFPlausibility
from ._proximity import _cat_rows, _changed_fraction, _jaccard_rows, _mad_l1_rows
from ._validity import valid_rows
from ._violations import VIOLATION_KINDS, _counts

__all__ = ["METRIC_COLUMNS", "evaluate"]

#: the columns of :func:`evaluate`, in order
METRIC_COLUMNS: tuple[str, ...] = (
    "found",
    "validity",
    "coverage",
    "distance_l0",
    "distance_l1",
    "distance_linf",
    "nearest_l0",
    "nearest_l1",
    "nearest_linf",
    "gower",
    "proximity_cont",
    "proximity_cat",
    "prox_euc",
    "prox_jac",
    "l2c_distance_num",
    "l2c_distance_cat",
    "sparsity",
    "changes",
    "diversity_cont",
    "diversity_cat",
    "diversity_count",
    "diversity_l2c",
    "l2c_harmonic",
    "diversity_normalized",
    "plausibility",
    "lof",
    "actionability",
    "feasibility",
    "violations",
    *(f"violations_{k}" for k in VIOLATION_KINDS),
    "time",
    "time_per_counterfactual",
)


def evaluate(
    result: Any,
    train: Any = None,
    *,
    mad: Any = None,
    bins: Any = None,
    n_neighbors: int = 20,
    lof_reference: Literal["target", "all"] = "target",
    features_to_vary: Iterable[str] | None = None,
    actionability_threshold: float = 0.3,
    lof: Any = None,
) -> pd.DataFrame:
    """Every metric of the five papers for every query of a result.

    Parameters
    ----------
    result : CounterfactualResult
    train : Dataset, optional
        The training data: source of the MAD (DiCE / UFCE / MD-PSO metrics),
        the standard deviations (L2C's Prox Num), L2C's quantile buckets,
        Gower's observed ranges and the LOF reference.  Without it the columns
        that need it are NaN.
    mad : array-like or mapping, optional
        Overrides the MAD computed from ``train``.
    bins : mapping, optional
        Overrides L2C's buckets computed from ``train`` (``{feature: edges}``).
    n_neighbors, lof_reference
        LOF settings (see :mod:`counterfact.metrics` plausibility).
    features_to_vary : iterable of str, optional
        The user's list for UFCE's actionability; default the result's
        ``constraints.features_to_vary``, else every non-immutable feature.
    actionability_threshold : float
        UFCE's feasibility threshold on the actionable share (0.3).
    lof : LOFPlausibility, optional
        A plausibility detector over the same training data to reuse (its
        per-class LOF fits are kept), e.g. across the cells of a benchmark;
        by default one is fitted from ``train`` with ``n_neighbors`` and
        ``lof_reference``.

    Returns
    -------
    DataFrame
        One row per query (the result's query index), the columns of
        :data:`METRIC_COLUMNS`.  Set-level metrics average over the query's
        counterfactuals: ``distance_*`` are the range-normalised distances (mean),
        ``nearest_*`` the smallest; ``proximity_cont`` is negated as DiCE and
        CE-OCL report it (higher is better), ``sparsity`` is the fraction of
        features changed (lower is better), ``changes`` the mean count.
        Conventions: a query with no counterfactual has ``found = 0``, ``coverage =
        0``, ``violations* = 0``, its search's ``time`` and NaN elsewhere; diversities
        need two counterfactuals; ``validity``, ``coverage`` and ``feasibility`` are
        NaN when the result carries no model.  Under a timeline a feature time moves
        counts as a change here (the papers compare rows), unlike in ``result.cost()``.
    """
    _check_arguments(result, actionability_threshold, lof)
    train = TrainData(train, result.schema) if train is not None else None
    scores = _plausibility(result, train, lof, n_neighbors, lof_reference)
    inputs = _prepare(result, train, mad, bins, features_to_vary, scores)
    return _metrics_table(inputs, actionability_threshold)


def _metrics_table(inputs: _Inputs, actionability_threshold: float) -> pd.DataFrame:
    """One row of :data:`METRIC_COLUMNS` per query of the result."""
    queries = inputs.result.queries
    records = [
        _query_record(inputs, i, q, actionability_threshold) for i, q in enumerate(queries.index)
    ]
    return pd.DataFrame(records, index=queries.index, columns=list(METRIC_COLUMNS))


def _check_arguments(result: Any, actionability_threshold: float, lof: Any) -> None:
    if not is_result(result):
        raise ValidationError(
            "evaluate needs a CounterfactualResult (from method.explain). Got "
            f"{type(result).__name__}."
        )
    if not 0.0 <= float(actionability_threshold) <= 1.0:
        raise ValidationError(
            f"actionability_threshold must be in [0, 1]. Got {actionability_threshold!r}."
        )
    if lof is not None and not isinstance(lof, LOFPlausibility):
        raise ValidationError(
            f"lof must be a cf.metrics.LOFPlausibility. Got {type(lof).__name__}."
        )


@dataclass
class _Inputs:
    """What the metrics of every query of one result share: encoded rows, validity, training-data
    scales."""

    result: Any
    enc: DistanceEncoder  # the schema's ranges (the range-normalised distance)
    enc_g: DistanceEncoder  # the training data's observed ranges (Gower), else ``enc``
    M: np.ndarray  # encoded counterfactuals
    Q: np.ndarray  # encoded queries
    qpos: np.ndarray  # position of each counterfactual's query in ``Q``
    has_model: bool
    valid: np.ndarray  # per counterfactual
    runtime: np.ndarray  # per query
    has_train: bool
    mad: np.ndarray | None
    std: np.ndarray | None
    bins: Any
    lof: np.ndarray  # per counterfactual
    plaus: np.ndarray  # per counterfactual
    allowed_for: Callable[[Any], Any]


def _prepare(
    result: Any,
    train: TrainData | None,
    mad: Any,
    bins: Any,
    features_to_vary: Iterable[str] | None,
    plausibility: tuple[np.ndarray, np.ndarray],
) -> _Inputs:
    """Encode the result once and compute the training-data scales.

    ``plausibility``: the LOF score and plausibility of every counterfactual.
    """
    schema = result.schema
    cfs = result.counterfactuals
    queries = result.queries
    J = len(schema)
    enc = DistanceEncoder(schema)
    M = enc.transform(cfs) if len(cfs) else np.zeros((0, J))
    Q = enc.transform(queries) if len(queries) else np.zeros((0, J))
    qpos = (
        pd.Index(queries.index).get_indexer(cfs.index.get_level_values(0))
        if len(cfs)
        else np.zeros(0, dtype=int)
    )
    has_model = result.model is not None
    valid = valid_rows(result).to_numpy() if has_model else np.zeros(len(cfs), dtype=bool)
    mad_vec = resolve_mad(schema, mad, train) if (mad is not None or train is not None) else None
    std = std_scale(train, schema) if train is not None else None
    bin_edges = (
        _resolve_bins(schema, bins, train, "evaluate")
        if (bins is not None or train is not None)
        else None
    )
    enc_g = (
        DistanceEncoder(schema, observed_ranges(train_parts(train, schema)[0], schema))
        if train is not None
        else enc
    )
    lof_val, plaus = plausibility
    return _Inputs(
        result=result,
        enc=enc,
        enc_g=enc_g,
        M=M,
        Q=Q,
        qpos=qpos,
        has_model=has_model,
        valid=valid,
        runtime=result.runtime.reindex(queries.index).to_numpy(dtype=float),
        has_train=train is not None,
        mad=mad_vec,
        std=std,
        bins=bin_edges,
        lof=lof_val,
        plaus=plaus,
        allowed_for=_allowed_for(result, features_to_vary),
    )


def _plausibility(
    result: Any,
    train: TrainData | None,
    lof: Any,
    n_neighbors: int,
    lof_reference: Literal["target", "all"],
) -> tuple[np.ndarray, np.ndarray]:
    """LOF score and plausibility of every counterfactual against its query's target class (NaN
    without ``train``)."""
    cfs = result.counterfactuals
    lof_val = np.full(len(cfs), np.nan)
    plaus = np.full(len(cfs), np.nan)
    if train is not None and len(cfs):
        det = (
            lof
            if lof is not None
            else LOFPlausibility(
                train, result.schema, n_neighbors=n_neighbors, reference=lof_reference
            )
        )
        tg = result.target.reindex(cfs.index.get_level_values(0)).to_numpy()
        for t in pd.unique(tg):
            rows = np.flatnonzero(tg == t)
            lof_val[rows], plaus[rows] = det.score(cfs.iloc[rows], t)
    return lof_val, plaus


def _query_record(inp: _Inputs, i: int, q: Any, actionability_threshold: float) -> dict[str, float]:
    """Every metric of query number ``i`` (label ``q``); NaN where it does not apply."""
    result = inp.result
    r = np.flatnonzero(inp.qpos == i)
    k = r.size
    rec: dict[str, float] = dict.fromkeys(METRIC_COLUMNS, float("nan"))
    rec["found"] = float(k)
    counts = _counts(
        result.queries.loc[q],
        result.counterfactuals.iloc[r],
        result.schema,
        result.constraints_for(q),
    )
    rec["violations"] = float(counts["total"])
    for kind in VIOLATION_KINDS:
        rec[f"violations_{kind}"] = float(counts[kind])
    rec["time"] = inp.runtime[i]
    if inp.has_model:
        rec["coverage"] = 1.0 if inp.valid[r].any() else 0.0
    if k == 0:
        return rec
    Mq, x = inp.M[r], inp.Q[i]
    rec["time_per_counterfactual"] = inp.runtime[i] / k
    if inp.has_model:
        rec["validity"] = float(inp.valid[r].mean())
    rec.update(_set_metrics(inp.enc, inp.enc_g, Mq, x))
    rec.update(
        _scaled_metrics(inp, Mq[inp.valid[r]] if inp.has_model else Mq, Mq, x, rec["sparsity"])
    )
    share = _share(inp.enc, Mq, x, inp.allowed_for(q))
    rec["actionability"] = mean_or_nan(share)
    if inp.has_train:
        rec["plausibility"] = mean_or_nan(inp.plaus[r])
        rec["lof"] = mean_or_nan(inp.lof[r])
        if inp.has_model:
            rec["feasibility"] = mean_or_nan(
                _feasible_rows(inp.valid[r], inp.plaus[r], share, actionability_threshold)
            )
    return rec


def _set_metrics(
    enc: DistanceEncoder, enc_g: DistanceEncoder, Mq: np.ndarray, x: np.ndarray
) -> dict[str, float]:
    """The metrics of a query's counterfactuals ``Mq`` that need no scale from the training data."""
    rec: dict[str, float] = {}
    for norm in ("l0", "l1", "linf"):
        d = enc.distances(Mq, x, norm)
        rec[f"distance_{norm}"] = float(d.mean())
        rec[f"nearest_{norm}"] = float(d.min())
    rec["gower"] = float(enc_g.distances(Mq, x, "l1").mean())
    rec["proximity_cat"] = 1.0 - mean_or_nan(_cat_rows(enc, Mq, x, mean=True))
    rec["prox_jac"] = mean_or_nan(_jaccard_rows(enc, Mq, x))
    rec["l2c_distance_cat"] = mean_or_nan(_cat_rows(enc, Mq, x, mean=False))
    rec["sparsity"] = mean_or_nan(_changed_fraction(enc, Mq, x))
    rec["changes"] = float(enc.changed(Mq, x).sum(axis=1).mean())
    rec["diversity_cat"] = _cat_div(enc, Mq)
    rec["diversity_count"] = _count_div(enc, Mq)
    return rec


def _scaled_metrics(
    inp: _Inputs, Mv: np.ndarray, Mq: np.ndarray, x: np.ndarray, sparsity: float
) -> dict[str, float]:
    """The metrics that need the MAD, the standard deviations or L2C's buckets (each only when
    known).

    ``Mv``: the valid counterfactuals (all of ``Mq`` without a model), for L2C's diversity.
    """
    enc = inp.enc
    rec: dict[str, float] = {}
    if inp.mad is not None:
        rec["proximity_cont"] = 0.0 - mean_or_nan(_mad_l1_rows(enc, Mq, x, inp.mad, mean=True))
        rec["prox_euc"] = mean_or_nan(_mad_l1_rows(enc, Mq, x, inp.mad, mean=False))
        rec["diversity_cont"] = _cont_div(enc, Mq, inp.mad)
        rec["diversity_normalized"] = _norm_div(enc, Mq, x, inp.mad, "mad")
    if inp.std is not None:
        rec["l2c_distance_num"] = mean_or_nan(_mad_l1_rows(enc, Mq, x, inp.std, mean=False))
    if inp.bins is not None:
        rec["diversity_l2c"] = _l2c_div(enc, Mv, inp.bins)
        rec["l2c_harmonic"] = harmonic_mean(rec["diversity_l2c"], sparsity)
    return rec
