"""Per-row facts of an audit from a :class:`~counterfact.result.CounterfactualResult`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..metrics._distances import feature_deltas
from ..result import SUCCESS
from ..result._robustness import REACHED
from ..result._time import moved_by_time

__all__ = [
    "COST_COLUMNS",
    "EFFORT_UNIT",
    "effort_costs",
    "explained_rows",
    "method_distance_name",
    "outcome",
]

#: the unit of the default measure of effort: one per changed feature, one per MAD moved
EFFORT_UNIT = "changes + MAD-units"

#: cost= choices -> per-row column
COST_COLUMNS = {
    "effort": "cost_effort",
    "l1": "cost_l1",
    "method": "cost_method",
    "n_changed": "n_changed",
    "costs": "cost_user",
}


def outcome(status: str, proves_infeasibility: bool) -> str:
    """``recourse`` / ``proven_none`` (only a method whose ``infeasible`` is a proof) /
    ``unknown``."""
    if status in SUCCESS:
        return "recourse"
    if status == "infeasible" and proves_infeasibility:
        return "proven_none"
    return "unknown"


def method_distance_name(method: Any) -> str | None:
    """What ``cost_method`` is for this method (None: it reports no cost of its own)."""
    return method.measure_name()  # type: ignore[no-any-return]


def _reason(status: str, diag: dict[str, Any], proves_infeasibility: bool) -> str:
    text = diag.get("reason")
    if isinstance(text, str) and text:
        base = text
    elif status in SUCCESS:
        return ""
    else:
        base = {
            "timeout": "time limit reached",
            "infeasible": "no counterfactual exists",
            "failed": "the search found no counterfactual",
            "invalid": "contradictory constraints",
        }.get(status, status)
    if status == "infeasible" and not proves_infeasibility:
        base += " (heuristic: not a proof)"
    return base


def effort_costs(method: Any) -> Any:
    """The default measure of effort (``cf.Costs()``) bound to ``method``'s training data:
    the same scale for every method, whatever measure it searched in (bound at fit)."""
    return method.effort_


def explained_rows(res: Any, method: Any, protected: str | None = None) -> pd.DataFrame:
    """One row per query of ``res``: status, outcome, reason, certificate, costs, changes."""
    proves = type(method).tags.proves_infeasibility
    q = res.queries
    out = pd.DataFrame(index=q.index)
    out["status"] = res.status.reindex(q.index).astype(object)
    out["outcome"] = [outcome(s, proves) for s in out["status"]]
    diags = _diagnostics(res.diagnostics.reindex(q.index), len(q))
    out["reason"] = [_reason(s, d, proves) for s, d in zip(out["status"], diags, strict=True)]
    out["certificate"] = [res.certificate(qid) for qid in q.index]
    out["n_found"] = res.found.reindex(q.index).astype(int)
    out["runtime"] = res.runtime.reindex(q.index).astype(float)
    for col in COST_COLUMNS.values():
        out[col] = np.nan
    out["changed"] = [() for _ in range(len(q))]
    out["changes"] = ""
    if protected is not None:
        out["protected_changed"] = np.nan
    if len(res.counterfactuals):
        _first_answers(out, res, method, protected)
    if res.requirements.get("robustness") is not None:
        _robustness_columns(out, res)
    return out


def _robustness_columns(out: pd.DataFrame, res: Any) -> None:
    """Under ``Requirements(robustness=p)``: each row's first answer's estimated share of
    retrained models that accept it, and whether the row is said to reach ``p`` (missing
    for a row without an answer)."""
    found = res.found.reindex(out.index).fillna(0).to_numpy() > 0
    estimate = pd.Series(np.nan, index=out.index)
    if len(res.counterfactuals):
        first = res.robustness().xs(0, level="rank")["estimate"]
        estimate = first.reindex(out.index).astype(float)
    out["robustness_estimate"] = estimate
    said = res.diagnostics.get(REACHED)
    said = said.reindex(out.index) if said is not None else pd.Series(False, index=out.index)
    out["robustness_reached"] = pd.array(
        [bool(v) if f else pd.NA for v, f in zip(said, found, strict=True)], dtype="boolean"
    )


def _diagnostics(diag: pd.DataFrame, n: int) -> list[dict[str, Any]]:
    """Each query's diagnostics as a dict, without the missing (NaN) entries."""
    if not len(diag.columns):
        return [{} for _ in range(n)]
    return [
        {k: v for k, v in d.items() if not (isinstance(v, float) and np.isnan(v))}
        for d in diag.to_dict("records")
    ]


def _put(out: pd.DataFrame, col: str, pos: np.ndarray, values: Any) -> None:
    """Write ``values`` into column ``col`` at the row positions ``pos``."""
    arr = out[col].to_numpy(dtype=object if col in ("changed", "changes") else float, copy=True)
    for p, v in zip(pos, values, strict=True):
        arr[p] = v
    out[col] = arr


def _first_answers(out: pd.DataFrame, res: Any, method: Any, protected: str | None) -> None:
    """The costs and changes of each query's first answer, written into ``out``.  Under a
    timeline a feature only time moves is not an action: it is left out of ``changed`` and
    ``n_changed`` (the change text says it: "in 12 months, if ... (then age 26 -> 27
    years)"), its move costs nothing in ``cost_effort`` and the waiting is priced instead,
    as :meth:`~counterfact.CounterfactualResult.cost` does; ``months`` (only under a
    timeline) is the first answer's elapsed months; ``protected_changed`` counts a change by
    waiting too; ``cost_l1`` is the whole move."""
    cfs, q = res.counterfactuals, res.queries
    first = cfs.index.get_level_values(1) == 0
    deltas = feature_deltas(res)
    assert isinstance(deltas, pd.DataFrame)  # a result gives a frame (internal invariant)
    d0 = deltas[first]
    names = list(d0.columns)
    D = d0.to_numpy(dtype=float)
    ids = d0.index.get_level_values(0)
    pos = out.index.get_indexer(ids)
    # every feature whose value differs, by an action or by waiting; then the actions
    differs = [tuple(n for n, v in zip(names, row, strict=True) if v > 0) for row in D]
    by_time = [moved_by_time(res, qid) for qid in ids]  # once per answer
    changed = [tuple(n for n in d if n not in t) for d, t in zip(differs, by_time, strict=True)]
    _put(out, "cost_l1", pos, D.sum(axis=1) / max(len(names), 1))
    _put(out, "n_changed", pos, [float(len(c)) for c in changed])
    _put(out, "changed", pos, changed)
    if protected is not None:
        _put(out, "protected_changed", pos, [float(protected in d) for d in differs])
    _put(out, "changes", pos, [res.change_text(qid, 0) for qid in ids])
    effort = res.cost(costs=effort_costs(method))  # waiting priced, time's moves free
    _put(out, "cost_effort", pos, effort[first].to_numpy(dtype=float))
    months = res.elapsed()[first].to_numpy(dtype=float)
    if not np.isnan(months).all():  # under a timeline: how long the first answer waits
        out["months"] = np.nan
        _put(out, "months", pos, months)
    if getattr(res, "costs", None) is not None:  # costs required: each cost in their unit
        user = res.cost()[first].to_numpy(dtype=float)
        _put(out, "cost_user", pos, [res.costs.amount(v) for v in user])
    costs = method.measure_values(res)
    if costs is not None:
        _put(out, "cost_method", pos, costs.reindex(q.index).to_numpy(dtype=float)[pos])
