"""The last step of global recourse: each covered person gets the cheapest chosen action
that works for them, the rows they reach are rebuilt and checked once more, and the
per-person table and the run's facts are assembled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import Constraints
from ...constraints._bounds import QueryBounds, satisfied_many
from ...result import changes
from ...result._json import constraints_json, jsonable
from ...result._text import describe_changes
from .._actions import Action, ActionSpace
from .._cover import Choice
from .._individual import Individual

__all__ = ["Picked", "assemble", "meta"]


@dataclass
class Picked:
    """The chosen actions, what each costs each person, and the coverage curve."""

    actions: list[Action]
    works: np.ndarray
    cost: np.ndarray
    curve: pd.DataFrame
    choice: Choice


@dataclass
class People:
    """The rejected people of one run: who they are, their own answers and bounds."""

    ids: pd.Index
    ind: Individual
    own: np.ndarray
    bounds: list[QueryBounds | None]
    reasons: dict[Any, str]


def assemble(
    space: ActionSpace,
    method: Any,
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    rejected: np.ndarray,
    people: People,
    picked: Picked,
    target: Any,
    capped: bool,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-person table and the rows reached (step 6)."""
    ids = people.ids
    k = len(picked.actions)
    cost = np.where(picked.works, picked.cost, np.inf)
    best = np.argmin(cost, axis=0) if k else np.zeros(len(ids), dtype=int)
    covered = (
        np.asarray(picked.works.any(axis=0), dtype=bool) if k else np.zeros(len(ids), dtype=bool)
    )
    reached, covered = _reach(
        space, method, frame.loc[ids], people.bounds, picked.actions, best, covered, target
    )
    pr = pd.DataFrame(index=frame.index)
    for g in labels.columns:
        pr[f"group:{g}"] = labels[g]
    pr["rejected"] = rejected
    _individual_columns(pr, people, type(method).tags.proves_optimality)
    mine = np.where(covered, cost[best, np.arange(len(ids))] if k else np.nan, np.nan)
    _action_columns(pr, people, picked, best, covered, mine, capped)
    pr["changes"] = pd.Series("", index=frame.index, dtype=object)
    pr.loc[reached.index, "changes"] = [
        describe_changes(changes(method.schema_, frame.loc[q], reached.loc[q]))
        for q in reached.index
    ]
    for a, name in enumerate(_names(k)):
        pr[f"works:{name}"] = False
        pr.loc[ids, f"works:{name}"] = picked.works[a]
        pr[f"cost:{name}"] = np.nan
        pr.loc[ids, f"cost:{name}"] = picked.cost[a]
    return pr, reached


def _names(k: int) -> list[str]:
    return [f"A{a + 1}" for a in range(k)]


def _column(pr: pd.DataFrame, name: str, fill: Any, ids: pd.Index, values: Any) -> None:
    """Column ``name``: ``fill`` for everyone, ``values`` for the rejected people ``ids``."""
    pr[name] = pd.Series(fill, index=pr.index, dtype=object) if isinstance(fill, str) else fill
    pr.loc[ids, name] = values


def _individual_columns(pr: pd.DataFrame, people: People, proves_optimality: bool) -> None:
    """Each rejected person's own answer: outcome, status, whether proven, its cost."""
    ids, ind = people.ids, people.ind
    _column(pr, "individual", "accepted", ids, ind.outcome.to_numpy())
    _column(pr, "individual_status", "", ids, ind.status.to_numpy())
    proven = (ind.status == "optimal").to_numpy() & proves_optimality
    _column(pr, "individual_proven", False, ids, proven)
    _column(pr, "individual_cost", np.nan, ids, people.own)


def _action_columns(
    pr: pd.DataFrame,
    people: People,
    picked: Picked,
    best: np.ndarray,
    covered: np.ndarray,
    cost: np.ndarray,
    capped: bool,
) -> None:
    """Who is covered, by which action, at what cost, and why not."""
    ids, k = people.ids, len(picked.actions)
    names = _names(k)
    _column(pr, "covered", False, ids, covered)
    action = np.array(
        [names[b] if c else "" for b, c in zip(best, covered, strict=True)], dtype=object
    )
    _column(pr, "action", "", ids, action)
    _column(pr, "cost", np.nan, ids, cost)
    pr["cost_ratio"] = pr["cost"] / pr["individual_cost"].where(pr["individual"] == "recourse")
    _column(pr, "n_working", 0, ids, picked.works.sum(axis=0) if k else 0)
    reasons = [_reason(q, c, people.reasons, k, capped) for q, c in zip(ids, covered, strict=True)]
    _column(pr, "reason", "", ids, reasons)


def _reason(qid: Any, covered: bool, reasons: dict[Any, str], k: int, capped: bool) -> str:
    if covered:
        return ""
    if qid in reasons:
        return reasons[qid]
    within = "within their constraints and the cost cap" if capped else "within their constraints"
    return f"none of the {k} actions, applied to their row {within}, reaches the target"


def _reach(
    space: ActionSpace,
    method: Any,
    Xr: pd.DataFrame,
    bounds: list[QueryBounds | None],
    actions: list[Action],
    best: np.ndarray,
    covered: np.ndarray,
    target: Any,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The row each covered person reaches with their action, checked once more (their
    bounds and the model, in one batched call); a row that fails is not covered."""
    if not covered.any():
        return pd.DataFrame(columns=space.schema.names), covered
    M = space.encode(Xr)
    V = M.copy()
    for a, action in enumerate(actions):
        rows = np.flatnonzero(covered & (best == a))
        if rows.size:
            V[rows] = space.apply(action, M[rows])[0]
    take = np.flatnonzero(covered)
    rows = space.decode(V[take], index=Xr.index[take])
    owners = [bounds[i] for i in take]
    ok = np.array([b is not None for b in owners], dtype=bool)
    if ok.any():
        keep = np.flatnonzero(ok)
        ok[keep] = satisfied_many(  # type: ignore[misc]
            [owners[i] for i in keep], rows.iloc[keep], np.arange(keep.size)
        )
    if ok.any():
        ok[ok] = np.asarray(method.model_.predict(rows[ok])) == target
    out = covered.copy()
    out[take[~ok]] = False
    return rows[ok], out


def meta(
    method: Any,
    settings: dict[str, Any],
    measure: Any,
    constraints: Any,
    target: Any,
    info: dict[str, Any],
    data: Any,
    found: dict[str, Any],
    seconds: dict[str, float],
) -> dict[str, Any]:
    """The run's settings, facts about the method and timings (kept in the JSON)."""
    tags = type(method).tags
    per_row = constraints is not None and not isinstance(constraints, Constraints)
    same = measure in ("method", "effort") or (
        measure == "l1" and tags.measure == "distance" and getattr(method, "norm", None) == "l1"
    )
    return {
        "method": method.name or type(method).__name__,
        "display_name": tags.display_name,
        "params": jsonable(method.get_params()),
        "proves_optimality": tags.proves_optimality,
        "proves_infeasibility": tags.proves_infeasibility,
        "individual_lower_bound": bool(tags.proves_optimality and same),
        "guarantee": type(method).guarantee(method.get_params()),
        "measure": jsonable(dict(measure)) if isinstance(measure, Mapping) else measure,
        "constraints": "per row" if per_row else constraints_json(constraints),
        "target": jsonable(target),
        "target_label": _label(data, target),
        "groups": info,
        "features": list(method.schema_.names),
        "schema": method.schema_.to_dict(),
        "settings": settings,
        "candidates": found,
        "seconds": {**seconds, "total": float(sum(seconds.values()))},
        "dataset": getattr(data, "name", None),
        "model": type(method.model_.model).__name__,
    }


def _label(data: Any, target: Any) -> str | None:
    """The dataset's name for class ``target`` (``metadata["target_labels"]``), if any."""
    labels = getattr(data, "metadata", {}).get("target_labels") or {}
    for key, name in labels.items():
        if str(key) == str(target):
            return str(name)
    return None
