"""``cf.audit``: explain every rejected row of a population and aggregate."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from ..constraints import Constraints, Costs
from ..data import Dataset
from ..exceptions import NotFittedError, ValidationError
from ..methods._pipeline._batch import explain_in_chunks
from ..models import desired_class, rows_to_explain
from ..result._json import constraints_json, jsonable
from ._groups import resolve_groups
from ._result import AuditResult
from ._rows import COST_COLUMNS, explained_rows, method_distance_name

__all__ = ["Settings", "audit"]


@dataclass(frozen=True)
class Settings:
    """Statistical settings of an audit (kept in its JSON)."""

    confidence: float = 0.95
    n_bootstrap: int = 1000
    random_state: int = 0
    min_group_size: int = 30
    top_change_sets: int = 10


@dataclass(frozen=True)
class _Run:
    """What every explanation of one audit shares: the method, the rules, the batching and the cost."""

    method: Any
    constraints: Constraints | None
    target: Any
    n_counterfactuals: int
    chunk_size: int
    n_jobs: int
    backend: str | None
    address: str | None
    out: Path | None
    protected: str | None
    cost: str
    #: seconds spent earlier on the chunks this run resumed (read from the chunks' folder)
    clock: dict[str, float] = field(default_factory=dict)
    #: the costs every row is explained under (``audit(costs=...)``), or None
    costs: Costs | None = None
    #: the margin every answer must reach (``audit(min_probability=...)``), or None
    min_probability: float | None = None
    #: further models every answer must be valid for (``audit(robust_to=...)``)
    robust_to: tuple[Any, ...] = ()

    def options(self) -> dict[str, Any]:
        """The explain options beyond the constraints that every row of this audit is explained under."""
        out: dict[str, Any] = {}
        if self.costs is not None:
            out["costs"] = self.costs
        if self.min_probability is not None:
            out["min_probability"] = self.min_probability
        if self.robust_to:
            out["robust_to"] = list(self.robust_to)
        return out

    def options_fingerprint(self) -> str:
        """What of :meth:`options` decides the answers, for refusing to resume a run made under other options."""
        return json.dumps(
            {
                "costs": None if self.costs is None else self.costs.to_dict(),
                "min_probability": self.min_probability,
                "robust_to": [joblib.hash(m) for m in self.robust_to],
            },
            sort_keys=True,
            default=str,
        )


def _rejected(method: Any, X: pd.DataFrame, target: Any) -> np.ndarray:
    """Rows the model does not assign to ``target`` (:func:`counterfact.rows_to_explain`)."""
    chosen = rows_to_explain(method.model_.model, X, target=target, data=method.data_)
    return np.asarray(X.index.isin(chosen.index))


def _fingerprint(
    method: Any,
    X: pd.DataFrame,
    constraints: Constraints | None,
    target: Any,
    n_cf: int,
    chunk_size: int,
) -> str:
    payload = {
        "method": method.name or type(method).__name__,
        "params": jsonable(method.get_params()),
        "constraints": constraints_json(constraints),
        "target": jsonable(target),
        "n_counterfactuals": n_cf,
        "chunk_size": chunk_size,
        "rows": jsonable(list(X.index)),
        "values": hashlib.sha256(
            pd.util.hash_pandas_object(X, index=True).to_numpy().tobytes()
        ).hexdigest(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def _explain(
    run: _Run, X: pd.DataFrame, constraints: Constraints | None, out_dir: Path | None
) -> tuple[Any, dict[Any, str]]:
    """Explain ``X`` through :func:`~counterfact.methods.explain_in_chunks`; rows of failed chunks -> reason."""
    if len(X) == 0:
        return None, {}
    method, size, n_cf = run.method, run.chunk_size, run.n_counterfactuals
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        fp = _fingerprint(method, X, constraints, run.target, n_cf, size)
        if (
            run.options()
        ):  # rows explained under other costs, margin or models are not resumed either
            fp = hashlib.sha256((fp + run.options_fingerprint()).encode()).hexdigest()
        stamp = out_dir / "audit-run.json"
        if stamp.exists() and json.loads(stamp.read_text()).get("fingerprint") != fp:
            raise ValidationError(
                f"out_dir {str(out_dir)!r} holds chunks of a different run (other method, parameters, "
                "constraints, target or rows); resuming would mix rows explained under different settings. "
                "Use a fresh out_dir, or delete that one."
            )
        earlier = _chunk_seconds(stamp)
        stamp.write_text(json.dumps({"fingerprint": fp, "chunk_seconds": earlier}))
    report = explain_in_chunks(
        method,
        X,
        chunk_size=size,
        out_dir=out_dir,
        n_jobs=run.n_jobs,
        backend=run.backend,
        address=run.address,
        n_counterfactuals=n_cf,
        constraints=constraints,
        target=run.target,
        **run.options(),
    )
    if out_dir is not None:  # a resumed run reports the seconds of the chunks it did not redo too
        done = {**earlier, **{str(i): float(t) for i, t in report.chunk_seconds.items()}}
        stamp.write_text(json.dumps({"fingerprint": fp, "chunk_seconds": done}))
        run.clock["resumed"] = run.clock.get("resumed", 0.0) + sum(
            earlier.get(str(i), 0.0) for i in report.skipped
        )
    failed: dict[Any, str] = {}
    for i, err in report.failed.items():
        last = [ln for ln in str(err).strip().splitlines() if ln.strip()][-1:] or ["error"]
        for qid in X.index[i * size : (i + 1) * size]:
            failed[qid] = f"chunk {i} failed: {last[0]}"
    res = report.result
    if res is not None and res.query_constraints is not None:
        raise ValidationError(
            "The chunks of this audit were explained under different constraints (a stale out_dir?). "
            "An audit never mixes them: re-run with a fresh out_dir."
        )
    return res, failed


def _chunk_seconds(stamp: Path) -> dict[str, float]:
    """The wall seconds of each chunk written by earlier runs into the same folder."""
    if not stamp.exists():
        return {}
    try:
        got = json.loads(stamp.read_text()).get("chunk_seconds") or {}
        return {str(k): float(v) for k, v in got.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def _unexplained(index: pd.Index, failed: Mapping[Any, str], protected: str | None) -> pd.DataFrame:
    out = pd.DataFrame(index=index)
    out["status"] = "failed"
    out["outcome"] = "unknown"
    out["reason"] = [failed.get(q, "not explained") for q in index]
    out["certificate"] = "not explained (not a proof)"
    out["n_found"] = 0
    out["runtime"] = np.nan
    for col in ("cost_l1", "cost_method", "n_changed"):
        out[col] = np.nan
    out["changed"] = pd.Series([() for _ in range(len(index))], index=index, dtype=object)
    out["changes"] = ""
    if protected is not None:
        out["protected_changed"] = np.nan
    return out


def _frozen(constraints: Constraints | None, protected: str) -> Constraints:
    c = constraints or Constraints()
    ftv = None
    if c.features_to_vary is not None:
        ftv = tuple(f for f in c.features_to_vary if f != protected)
        if not ftv:
            raise ValidationError(
                f"features_to_vary allows only the protected feature {protected!r}; with it frozen no feature "
                "may change, so the sensitivity is trivial. Allow more features."
            )
    return Constraints(
        immutable=(*c.immutable, protected),
        increasing=[f for f in c.increasing if f != protected],
        decreasing=[f for f in c.decreasing if f != protected],
        ranges={k: v for k, v in c.ranges.items() if k != protected},
        allowed_values={k: v for k, v in c.allowed_values.items() if k != protected},
        features_to_vary=ftv,
        max_changes=c.max_changes,
        causal=c.causal,
        relations=c.relations,
    )


def _cost_choice(cost: str, costs: Any) -> str:
    """The cost the audit aggregates: ``"costs"`` by default when the call has costs."""
    if costs is not None and not isinstance(costs, Costs):
        raise ValidationError(f"costs must be a cf.Costs or None. Got {type(costs).__name__}.")
    if cost == "costs" and costs is None:
        raise ValidationError("cost='costs' needs the costs themselves: pass costs=cf.Costs(...).")
    return "costs" if costs is not None and cost == "l1" else cost


def _check(
    method: Any,
    X: Any,
    constraints: Any,
    cost: str,
    protected: str | None,
    n_jobs: int,
    chunk_size: int,
    settings: Settings,
) -> pd.DataFrame:
    if not getattr(method, "fitted_", False):
        raise NotFittedError("audit needs a fitted method: call method.fit(model, train) first.")
    frame = method.schema_.validate_frame(X, what="X")
    if frame.index.has_duplicates:
        raise ValidationError(
            "X has duplicate index labels; row ids must be unique (reset_index())."
        )
    if isinstance(constraints, (list, tuple)):
        raise ValidationError(
            "audit takes one Constraints for every row (so that all rows are explained under the same rules "
            "and their aggregates are comparable); run one audit per set of constraints."
        )
    if constraints is not None and not isinstance(constraints, Constraints):
        raise ValidationError(
            f"constraints must be a cf.Constraints or None. Got {type(constraints).__name__}."
        )
    if cost not in COST_COLUMNS:
        raise ValidationError(f"cost must be one of {sorted(COST_COLUMNS)}. Got {cost!r}.")
    if cost == "method" and method_distance_name(method) is None:
        raise ValidationError(
            f"{type(method).__name__} reports no distance of its own; use cost='l1' (normalised l1) or 'n_changed'."
        )
    if protected is not None:
        if protected not in method.schema_.names:
            raise ValidationError(
                f"protected={protected!r} is not a feature of the model ({method.schema_.names})."
            )
        resolved = (constraints or Constraints()).resolve(method.schema_)
        if protected in resolved.immutable:
            raise ValidationError(
                f"The protected feature {protected!r} may not change under the audit's constraints (schema "
                "actionability or constraints make it immutable), so no answer can change it and freezing it "
                "costs nothing. Make it mutable (Schema/Feature actionability) to measure the sensitivity."
            )
    if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValidationError(f"n_jobs must be a non-zero int. Got {n_jobs!r}.")
    if not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValidationError(f"chunk_size must be an int >= 1. Got {chunk_size!r}.")
    if not 0 < settings.confidence < 1:
        raise ValidationError(f"confidence must be in (0, 1). Got {settings.confidence!r}.")
    if settings.n_bootstrap < 0 or settings.min_group_size < 0:
        raise ValidationError("n_bootstrap and min_group_size must be >= 0.")
    return frame


def audit(
    method: Any,
    X: pd.DataFrame | Dataset,
    *,
    groups: str | Sequence[Any] | pd.Series | pd.DataFrame | None = None,
    constraints: Constraints | None = None,
    target: Any = None,
    n_counterfactuals: int = 1,
    backend: str | None = None,
    n_jobs: int = 1,
    chunk_size: int = 200,
    out_dir: str | Path | None = None,
    address: str | None = None,
    protected: str | None = None,
    data: Any = None,
    cost: str = "l1",
    costs: Costs | None = None,
    min_probability: float | None = None,
    robust_to: Sequence[Any] | None = None,
    bins: int | Mapping[str, Any] = 4,
    min_group_size: int = 30,
    random_state: int = 0,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    top_change_sets: int = 10,
) -> AuditResult:
    """Recourse audit of a population: who has recourse, who provably has none, at what cost per group.

    Every row of ``X`` that the model does not assign to ``target`` is
    explained by ``method`` (through :func:`counterfact.methods.explain_in_chunks`:
    chunked, parallel on loky, Dask or Ray, resumable with ``out_dir``), all
    under the same ``constraints``; the answers are classified per row as
    *recourse* (a counterfactual verified with the real model), *proven_none*
    (``infeasible`` from an exact method -- MACE, CE-OCL -- i.e. a solver's
    proof that none exists under the constraints) or *unknown* (time limit,
    failure, or a heuristic's "none found", which is not a proof), and then
    aggregated overall and per group (see :class:`AuditResult`).

    Parameters
    ----------
    method : fitted CounterfactualMethod
    X : DataFrame or Dataset
        The population (raw rows with the model's features; unique index).  A
        :class:`~counterfact.Dataset` stands for its feature columns, and is
        also the ``data`` where group columns are looked up unless ``data`` is given.
    groups : str, list, Series or DataFrame, optional
        Grouping columns: names of columns of ``X`` or of ``data``, or the
        values themselves indexed like ``X`` (they need not be model
        features).  Numeric columns with more than 10 values are binned.
    constraints : Constraints, optional
        One set of constraints for every row (a list is refused: rows
        explained under different rules are never mixed).
    target : label, optional
        The favourable class; default (:func:`counterfact.models.desired_class`): ``data``'s
        (or the training data's) favourable class, else a binary model's last class.
    n_counterfactuals : int
        Counterfactuals per row; costs use the first (the nearest for exact methods).
    backend, n_jobs, chunk_size, out_dir, address
        Passed to :func:`counterfact.methods.explain_in_chunks`.  With
        ``out_dir`` a re-run resumes; a run with other settings is refused.
    protected : str, optional
        A model feature (e.g. ``"age"``) for the sensitivity analysis (MACE Table 4
        generalised; see :func:`counterfact.recourse._stats.sensitivity_summary`).
    data : Dataset or DataFrame, optional
        Where named group columns and the favourable class are looked up.
    cost : {"l1", "method", "n_changed", "costs"}
        The per-row cost aggregated: normalised l1 (MACE eq. 3, comparable
        across methods), the method's own distance, the number of changes, or
        (the default with ``costs``, rows explained under them) in their unit.
    min_probability, robust_to
        As in ``explain``: every answer must reach this probability of the
        target, and be valid for every listed model too (e.g.
        :func:`counterfact.models.retrained`): recourse that survives a
        recalibration or a retrain, per group.
    bins, min_group_size : int or mapping, int
        Quantile bins for numeric groups (or ``{name: edges or n}``); groups
        with fewer rejected rows than ``min_group_size`` are flagged ``small``.
    random_state, n_bootstrap, confidence : int, int, float
        The bootstrap's seed and resamples, and the level of every interval.
    top_change_sets : int
        How many of the most common change sets to keep.

    Returns
    -------
    AuditResult
    """
    settings = Settings(
        float(confidence),
        int(n_bootstrap),
        int(random_state),
        int(min_group_size),
        int(top_change_sets),
    )
    X, data = _population(X, data, method)
    cost = _cost_choice(cost, costs)
    frame = _check(method, X, constraints, cost, protected, n_jobs, chunk_size, settings)
    target = desired_class(
        method.model_.model, target=target, data=data if isinstance(data, Dataset) else method.data_
    )
    labels, info = resolve_groups(groups, X if isinstance(X, pd.DataFrame) else frame, data, bins)
    run = _Run(
        method,
        constraints,
        target,
        int(n_counterfactuals),
        int(chunk_size),
        int(n_jobs),
        backend,
        address,
        Path(out_dir) if out_dir is not None else None,
        protected,
        cost,
        costs=costs,
        robust_to=tuple(robust_to or ()),
        min_probability=None if min_probability is None else float(min_probability),
    )
    per_row, res, seconds = _per_row(run, frame, labels)
    t1 = time.perf_counter()
    paired = _sensitivity(run, frame, per_row, labels, protected) if protected is not None else None
    meta = _meta(
        run,
        info,
        settings,
        data,
        seconds,
        time.perf_counter() - t1 if protected is not None else 0.0,
    )
    return AuditResult(per_row, meta, sensitivity_rows=paired, result=res)


def _population(X: pd.DataFrame | Dataset, data: Any, method: Any) -> tuple[Any, Any]:
    """The audited rows, and where group columns and the favourable class are looked up: ``data``,
    else ``X`` when it is a Dataset (its feature columns are the population), else the method's
    training data."""
    if isinstance(X, Dataset):
        return X.X, X if data is None else data
    return X, data if data is not None else getattr(method, "data_", None)


def _answers(
    run: _Run, res: Any, ids: pd.Index, failed: Mapping[Any, str], protected: str | None
) -> pd.DataFrame:
    """One row per id of ``ids``: the explained ones from ``res``, the others as unexplained (``failed``: why)."""
    got = explained_rows(res, run.method, protected) if res is not None else None
    missing = ids if got is None else ids.difference(got.index, sort=False)
    parts = [
        p
        for p in (got, _unexplained(missing, failed, protected) if len(missing) else None)
        if p is not None
    ]
    return pd.concat(parts) if parts else _unexplained(ids, {}, protected)


def _per_row(
    run: _Run, frame: pd.DataFrame, labels: pd.DataFrame
) -> tuple[pd.DataFrame, Any, float]:
    """Explain the rejected rows of ``frame``: the per-row table (groups, prediction, answer, cost), the
    result, and the seconds it took (the total: the seconds of resumed chunks included)."""
    t0 = time.perf_counter()
    pred = run.method.model_.predict(frame)
    rejected = _rejected(run.method, frame, run.target)
    Xr = frame[rejected]
    res, failed = _explain(run, Xr, run.constraints, run.out / "explained" if run.out else None)
    rows = _answers(run, res, Xr.index, failed, run.protected)
    per_row = pd.DataFrame(index=frame.index)
    for g in labels.columns:
        per_row[f"group:{g}"] = labels[g]
    per_row["predicted"] = pd.Series(list(pred), index=frame.index, dtype=object)
    per_row["rejected"] = rejected
    acc = _unexplained(frame.index[~rejected], {}, run.protected).assign(
        status="", outcome="accepted", reason="", certificate=""
    )
    body = pd.concat([rows, acc]).reindex(frame.index)
    body["changed"] = body["changed"].map(lambda t: tuple(t) if isinstance(t, tuple) else ())
    per_row = pd.concat([per_row, body], axis=1)
    per_row["cost"] = per_row[COST_COLUMNS[run.cost]].astype(float)
    return per_row, res, time.perf_counter() - t0 + run.clock.get("resumed", 0.0)


def _meta(
    run: _Run,
    groups: dict[str, Any],
    settings: Settings,
    data: Any,
    seconds: float,
    seconds_sensitivity: float,
) -> dict[str, Any]:
    """The audit's settings and timings, as kept in :attr:`AuditResult.meta`."""
    method = run.method
    return {
        "method": method.name or type(method).__name__,
        "params": method.get_params(),
        # what the method's class says of its answers, kept so a saved audit reads the same
        "proves_infeasibility": type(method).tags.proves_infeasibility,
        "guarantee": type(method).guarantee(method.get_params()),
        "constraints": run.constraints,
        "target": run.target,
        "n_counterfactuals": run.n_counterfactuals,
        "cost": run.cost,
        "cost_method_name": method_distance_name(method),
        "cost_unit": None if run.costs is None else (run.costs.unit or "cost"),
        "min_probability": run.min_probability,
        "robust_to": len(run.robust_to),
        "protected": run.protected,
        "groups": groups,
        "features": list(method.schema_.names),
        "seconds": seconds,
        "seconds_sensitivity": seconds_sensitivity,
        "n_jobs": run.n_jobs,
        "backend": run.backend,
        "settings": settings,
        "dataset": getattr(data, "name", None),
        "model": type(method.model_.model).__name__,
    }


def _sensitivity(
    run: _Run, frame: pd.DataFrame, per_row: pd.DataFrame, labels: pd.DataFrame, protected: str
) -> pd.DataFrame:
    """Re-explain the rows whose answer changes ``protected`` with that feature frozen: paired costs."""
    rec = per_row["rejected"] & (per_row["outcome"] == "recourse")
    mask = rec & (per_row["protected_changed"] == 1.0)
    ids = per_row.index[mask.to_numpy()]
    res, failed = _explain(
        run,
        frame.loc[ids],
        _frozen(run.constraints, protected),
        run.out / f"frozen-{protected}" if run.out else None,
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
        rows[COST_COLUMNS[run.cost]].astype(float).where(rows["outcome"] == "recourse")
    )
    paired["increase"] = paired["cost_frozen"] - paired["cost_allowed"]
    paired["changes_frozen"] = rows["changes"]
    return paired
