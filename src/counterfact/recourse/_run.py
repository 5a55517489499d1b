"""``cf.audit``: explain every rejected row of a population and aggregate.

The steps, each a function below: the arguments are checked (:func:`_checked`); the
rejected rows are explained, all under the same constraints and requirements, and each
answer becomes a row of the per-row table (:func:`_per_row`); with ``protected``, the rows
whose answer changes that feature are explained again with it frozen
(:func:`_sensitivity`); the settings and timings are kept (:func:`_meta`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..constraints import Constraints, Costs, Requirements
from ..data import Dataset
from ..exceptions import NotFittedError, ValidationError
from ..methods._pipeline._prepare import check_n_counterfactuals
from ..models import desired_class
from ._batch import Run, explain_rows, population, rejected
from ._groups import resolve_groups
from ._result import AuditResult
from ._rows import COST_COLUMNS, EFFORT_UNIT, explained_rows, method_distance_name
from ._settings import Batch, Statistics, given

__all__ = ["Settings", "audit"]

#: what ``groups=`` accepts
Groups = str | Sequence[Any] | pd.Series | pd.DataFrame | None


@dataclass(frozen=True)
class Settings:
    """Statistical settings of an audit (kept in its JSON)."""

    confidence: float = 0.95
    n_bootstrap: int = 1000
    random_state: int = 0
    min_group_size: int = 30
    top_change_sets: int = 10

    @classmethod
    def of(cls, s: Statistics) -> Settings:
        return cls(s.confidence, s.n_bootstrap, s.random_state, s.min_group_size)


def audit(
    method: Any,
    X: pd.DataFrame | Dataset,
    *,
    groups: Groups = None,
    constraints: Constraints | None = None,
    requirements: Requirements | None = None,
    target: Any = None,
    measure: str | None = None,
    n_counterfactuals: int = 1,
    protected: str | None = None,
    data: Any = None,
    bins: int | Mapping[str, Any] = 4,
    statistics: Statistics | None = None,
    batch: Batch | None = None,
) -> AuditResult:
    """Recourse audit of a population: who has recourse, who provably has none, at what cost.

    Each row of ``X`` the model does not assign to ``target`` is explained by ``method``
    under the same constraints and requirements, and is *recourse* (an answer verified with
    the real model), *proven_none* (an exact method's proof that none exists) or *unknown*
    (time limit, failure, a heuristic's "none found"); see :class:`AuditResult`.

    Parameters
    ----------
    method : fitted CounterfactualMethod
    X : DataFrame or Dataset
        The population (unique index; a Dataset also serves as ``data``).
    groups, bins : str, list, Series or DataFrame, optional; int or mapping
        Columns of ``X`` or ``data``, or labels indexed like ``X``; a numeric column with
        over 10 values is cut into ``bins`` quantile bins (or ``{name: edges or n}``).
    constraints, requirements : Constraints, Requirements, optional
        One of each for every row, as in ``explain`` (a list of Constraints is refused).
    target : label, optional
        The favourable class (default: :func:`counterfact.models.desired_class`).
    measure : {"effort", "l1", "method", "n_changed", "costs"}, optional
        The per-row cost aggregated: the measure of effort (1 per change plus each move in
        MAD-units; one scale for every method: the default), the range-normalised l1, the
        method's own distance, the changed features, or the requirements' costs in their
        unit (the default with your own ``cf.Costs``).
    n_counterfactuals : int (counterfactuals per row; the cost is the first's)
    protected : str, optional
        A feature whose sensitivity is measured (:meth:`AuditResult.sensitivity`).
    data : Dataset or DataFrame, optional
        Where group columns and the favourable class are looked up.
    statistics, batch : Statistics, Batch, optional
        How the figures are estimated, and how the rows are explained (in chunks, in
        parallel, resumably); the defaults of :class:`Statistics` and :class:`Batch`.

    Returns
    -------
    AuditResult
    """
    X, data = population(X, data, method)
    frame, req, measure = _checked(method, X, constraints, requirements, measure, protected)
    settings = Settings.of(given(statistics, Statistics, "statistics", "audit"))
    how = (check_n_counterfactuals(n_counterfactuals), given(batch, Batch, "batch", "audit"))
    run = _run(method, constraints, req, target, measure, protected, data, how)
    labels, info = resolve_groups(groups, X if isinstance(X, pd.DataFrame) else frame, data, bins)
    return _audit(run, frame, labels, info, settings, data)


def _run(
    method: Any,
    constraints: Constraints | None,
    requirements: Requirements,
    target: Any,
    measure: str,
    protected: str | None,
    data: Any,
    how: tuple[int, Batch],
) -> Run:
    """What every explanation of this audit shares (``how``: the counterfactuals per row
    and the batch settings)."""
    n_counterfactuals, batch = how
    target = desired_class(
        method.model_.model, target=target, data=data if isinstance(data, Dataset) else method.data_
    )
    return Run(
        method,
        constraints,
        target,
        n_counterfactuals,
        batch,
        protected,
        measure,
        requirements=requirements,
    )


def _audit(
    run: Run,
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    info: dict[str, Any],
    settings: Settings,
    data: Any,
) -> AuditResult:
    """:func:`audit` once its arguments are checked: explain, re-explain, keep the facts."""
    per_row, res, seconds = _per_row(run, frame, labels)
    t1 = time.perf_counter()
    paired = None
    if run.protected is not None:
        paired = _sensitivity(run, frame, per_row, labels, run.protected)
    seconds_sensitivity = time.perf_counter() - t1 if run.protected is not None else 0.0
    meta = _meta(run, info, settings, data, seconds, seconds_sensitivity)
    return AuditResult(per_row, meta, sensitivity_rows=paired, result=res)


def _checked(
    method: Any,
    X: Any,
    constraints: Any,
    requirements: Any,
    measure: str | None,
    protected: str | None,
) -> tuple[pd.DataFrame, Requirements, str]:
    """The population validated, the requirements and the measure: every argument that
    decides the answers checked before any work."""
    if not getattr(method, "fitted_", False):
        raise NotFittedError("audit needs a fitted method: call method.fit(model, train) first.")
    frame = method.schema_.validate_frame(X, what="X")
    if frame.index.has_duplicates:
        raise ValidationError(
            "X has duplicate index labels; row ids must be unique (reset_index())."
        )
    _check_constraints(constraints)
    req = given(requirements, Requirements, "requirements", "audit")
    measure = _measure(method, measure, req)
    if protected is not None:
        _check_protected(method, constraints, protected)
    return frame, req, measure


def _check_constraints(constraints: Any) -> None:
    if isinstance(constraints, list | tuple):
        raise ValidationError(
            "audit takes one Constraints for every row (so that all rows are explained under "
            "the same rules and their aggregates are comparable); run one audit per set of "
            "constraints."
        )
    if constraints is not None and not isinstance(constraints, Constraints):
        raise ValidationError(
            f"constraints must be a cf.Constraints or None. Got {type(constraints).__name__}."
        )


def _measure(method: Any, measure: str | None, requirements: Requirements) -> str:
    """The measure the audit aggregates: by default the requirements' costs when they are
    the user's own (not a named measure), else the measure of effort."""
    costs = requirements.costs
    own_costs = isinstance(costs, Costs) and costs.preset_name is None
    if measure is None:
        return "costs" if own_costs else "effort"
    if measure not in COST_COLUMNS:
        raise ValidationError(f"measure must be one of {sorted(COST_COLUMNS)}. Got {measure!r}.")
    if measure == "costs" and not isinstance(costs, Costs):
        raise ValidationError(
            "measure='costs' needs the costs themselves: pass "
            "requirements=cf.Requirements(costs=cf.Costs(...)) or a named measure; or use "
            "measure='effort' (the default measure of effort)."
        )
    if measure == "method" and method_distance_name(method) is None:
        raise ValidationError(
            f"{type(method).__name__} reports no distance of its own; use measure='l1' (the "
            "range-normalised l1 distance) or 'n_changed'."
        )
    return measure


def _check_protected(method: Any, constraints: Constraints | None, protected: str) -> None:
    """The protected feature is a feature the audit's answers may change."""
    schema = method.schema_
    if protected not in schema.names:
        raise ValidationError(
            f"protected={protected!r} is not a feature of the model ({schema.names})."
        )
    resolved = (constraints or Constraints()).resolve(schema)
    if protected not in resolved.immutable:
        return
    if schema[protected].actionability == "time":
        raise ValidationError(
            f"The protected feature {protected!r} moves only with time, and the audit's "
            "constraints give no timeline, so no answer can change it. Give one to measure "
            "what waiting is worth: constraints=cf.Constraints(timeline=cf.datasets.timeline"
            "(data, horizon=24)) (--horizon 24 on the command line)."
        )
    raise ValidationError(
        f"The protected feature {protected!r} may not change under the audit's constraints "
        "(schema actionability or constraints make it immutable), so no answer can change "
        "it and freezing it costs nothing. Make it mutable (Schema/Feature actionability) "
        "to measure the sensitivity."
    )


def _unexplained(index: pd.Index, failed: Mapping[Any, str], protected: str | None) -> pd.DataFrame:
    out = pd.DataFrame(index=index)
    out["status"] = "failed"
    out["outcome"] = "unknown"
    out["reason"] = [failed.get(q, "not explained") for q in index]
    out["certificate"] = "not explained (not a proof)"
    out["n_found"] = 0
    out["runtime"] = np.nan
    for col in COST_COLUMNS.values():
        out[col] = np.nan
    out["changed"] = pd.Series([() for _ in range(len(index))], index=index, dtype=object)
    out["changes"] = ""
    if protected is not None:
        out["protected_changed"] = np.nan
    return out


def _only_time_moves(constraints: Constraints | None, feature: str, schema: Any) -> bool:
    """Whether only time moves ``feature`` under ``constraints``' timeline (age, when one is
    given): it is then frozen by allowing no waiting."""
    timeline = constraints.timeline if constraints is not None else None
    return timeline is not None and feature in timeline.moved_by_time(schema)


def _frozen(constraints: Constraints | None, protected: str, schema: Any) -> Constraints:
    """``constraints`` with ``protected`` frozen, all else kept (the timeline too).

    Decision: a feature only time moves (age under a timeline) is frozen by allowing no
    time to pass, the timeline kept with a horizon of 0 months: every answer holds today,
    and a feature the timeline paces (savings, one level per 6 months) cannot move either.
    Any other feature is made immutable, its direction, range and allowed values dropped.
    """
    c = constraints or Constraints()
    if _only_time_moves(c, protected, schema):
        return replace(c, timeline=c.timeline.with_horizon(0))
    ftv = None
    if c.features_to_vary is not None:
        ftv = tuple(f for f in c.features_to_vary if f != protected)
        if not ftv:
            raise ValidationError(
                f"features_to_vary allows only the protected feature {protected!r}; with it "
                "frozen no feature may change, so the sensitivity is trivial. Allow more "
                "features."
            )
    return replace(
        c,
        immutable=(*c.immutable, protected),
        increasing=[f for f in c.increasing if f != protected],
        decreasing=[f for f in c.decreasing if f != protected],
        ranges={k: v for k, v in c.ranges.items() if k != protected},
        allowed_values={k: v for k, v in c.allowed_values.items() if k != protected},
        features_to_vary=ftv,
    )


def _answers(
    run: Run, res: Any, ids: pd.Index, failed: Mapping[Any, str], protected: str | None
) -> pd.DataFrame:
    """One row per id of ``ids``: the explained ones from ``res``, the others as unexplained
    (``failed``: why)."""
    got = explained_rows(res, run.method, protected) if res is not None else None
    missing = ids if got is None else ids.difference(got.index, sort=False)
    parts = [
        p
        for p in (got, _unexplained(missing, failed, protected) if len(missing) else None)
        if p is not None
    ]
    return pd.concat(parts) if parts else _unexplained(ids, {}, protected)


def _per_row(
    run: Run, frame: pd.DataFrame, labels: pd.DataFrame
) -> tuple[pd.DataFrame, Any, float]:
    """Explain the rejected rows of ``frame``: the per-row table (groups, prediction, answer,
    cost), the result, and the seconds it took (the seconds of resumed chunks included)."""
    t0 = time.perf_counter()
    pred = run.method.model_.predict(frame)
    mask = rejected(run.method, frame, run.target)
    Xr = frame[mask]
    res, failed = explain_rows(run, Xr, run.constraints, run.folder("explained"))
    rows = _answers(run, res, Xr.index, failed, run.protected)
    per_row = pd.DataFrame(index=frame.index)
    for g in labels.columns:
        per_row[f"group:{g}"] = labels[g]
    per_row["predicted"] = pd.Series(list(pred), index=frame.index, dtype=object)
    per_row["rejected"] = mask
    acc = _unexplained(frame.index[~mask], {}, run.protected).assign(
        status="", outcome="accepted", reason="", certificate=""
    )
    body = pd.concat([rows, acc]).reindex(frame.index)
    body["changed"] = body["changed"].map(lambda t: tuple(t) if isinstance(t, tuple) else ())
    per_row = pd.concat([per_row, body], axis=1)
    per_row["cost"] = per_row[COST_COLUMNS[run.measure]].astype(float)
    return per_row, res, time.perf_counter() - t0 + run.clock.get("resumed", 0.0)


def _meta(
    run: Run,
    groups: dict[str, Any],
    settings: Settings,
    data: Any,
    seconds: float,
    seconds_sensitivity: float,
) -> dict[str, Any]:
    """The audit's settings and timings, as kept in :attr:`AuditResult.meta`."""
    method, req = run.method, run.requirements
    return {
        "method": method.name or type(method).__name__,
        "params": method.get_params(),
        # what the method's class says of its answers, kept so a saved audit reads the same
        "proves_infeasibility": type(method).tags.proves_infeasibility,
        "guarantee": type(method).guarantee(method.get_params()),
        "constraints": run.constraints,
        "target": run.target,
        "n_counterfactuals": run.n_counterfactuals,
        "measure": run.measure,
        "cost_method_name": method_distance_name(method),
        "cost_unit": _cost_unit(run.measure, req),
        "min_probability": req.min_probability,
        "robust_to": len(req.robust_to),
        "robustness": req.robustness,
        "min_vote_share": req.min_vote_share,
        "protected": run.protected,
        # frozen by allowing no waiting (only time moves it): the report says so
        "protected_by_time": run.protected is not None
        and _only_time_moves(run.constraints, run.protected, method.schema_),
        "groups": groups,
        "features": list(method.schema_.names),
        "seconds": seconds,
        "seconds_sensitivity": seconds_sensitivity,
        "n_jobs": run.batch.n_jobs,
        "parallel": run.batch.parallel,
        "settings": settings,
        "dataset": getattr(data, "name", None),
        "model": type(method.model_.model).__name__,
    }


def _cost_unit(measure: str, req: Requirements) -> str | None:
    """The unit of the aggregated cost (None: the measure has none, such as a distance)."""
    if measure == "effort":
        return EFFORT_UNIT
    if measure == "n_changed":
        return "changed features"
    if measure == "costs" and isinstance(req.costs, Costs):
        return req.costs.unit or "cost"
    return None


def _sensitivity(
    run: Run, frame: pd.DataFrame, per_row: pd.DataFrame, labels: pd.DataFrame, protected: str
) -> pd.DataFrame:
    """Re-explain the rows whose answer changes ``protected`` with that feature frozen:
    paired costs."""
    rec = per_row["rejected"] & (per_row["outcome"] == "recourse")
    mask = rec & (per_row["protected_changed"] == 1.0)
    ids = per_row.index[mask.to_numpy()]
    res, failed = explain_rows(
        run,
        frame.loc[ids],
        _frozen(run.constraints, protected, run.method.schema_),
        run.folder(f"frozen-{protected}"),
    )
    rows = _answers(run, res, ids, failed, None).reindex(ids)
    paired = pd.DataFrame(index=ids)
    for g in labels.columns:
        paired[f"group:{g}"] = labels.loc[ids, g]
    paired["cost_allowed"] = per_row.loc[ids, "cost"].astype(float)
    paired["status_frozen"] = rows["status"]
    paired["outcome_frozen"] = rows["outcome"]
    paired["reason_frozen"] = rows["reason"]
    paired["cost_frozen"] = (
        rows[COST_COLUMNS[run.measure]].astype(float).where(rows["outcome"] == "recourse")
    )
    paired["increase"] = paired["cost_frozen"] - paired["cost_allowed"]
    paired["changes_frozen"] = rows["changes"]
    return paired
