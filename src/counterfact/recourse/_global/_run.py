"""``cf.global_recourse``: the few actions that help most of the rejected people.

The pipeline, each step a function below:

1. **per-person recourse** -- every rejected row explained by the method through
   :func:`counterfact.methods.explain_in_chunks` (the audit's batch layer: loky, Dask,
   Ray; resumable), or taken from an audit already run (``individual=``), with each
   person's bounds (:mod:`._individual`);
2. **candidates** -- each person's own action and its generalisations
   (:mod:`._candidates`);
3. **screening** -- when there are more than ``max_candidates``, all are verified on a
   seeded sample of people and the most useful kept (the greedy choice on the sample,
   then the widest coverage);
4. **verification** -- every kept action applied to every rejected person's own row,
   snapped to the grids, checked against that person's constraints and with the real
   model (:func:`._actions.verify`);
5. **choice** -- at most ``max_actions`` of them maximising coverage (:mod:`._cover`),
   for every size from 1 to ``max_actions``;
6. **assignment** -- each covered person gets the cheapest chosen action that works for
   them; the rows reached are rebuilt and checked once more.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from ...constraints import Constraints, QueryBounds, satisfied_many
from ...data import Dataset
from ...exceptions import NotFittedError, ValidationError
from ...models import desired_class
from ...result import CounterfactualResult, changes, describe_changes
from ...result._json import constraints_json, jsonable
from .._actions import Action, ActionSpace, Cost, Coverage, verify
from .._candidates import candidates
from .._cover import SOLVERS, Choice, choose, greedy
from .._groups import resolve_groups
from .._individual import Individual, individual_costs
from .._individual import bounds as person_bounds
from .._individual import individual as per_person
from .._result import AuditResult
from .._run import _population, _rejected, _Run
from ._result import GlobalRecourse

__all__ = ["global_recourse"]

#: people on whom candidates are screened when there are more than max_candidates
SCREEN_ROWS = 400


@dataclass(frozen=True)
class GlobalSettings:
    """What a global-recourse run was asked for (kept in its JSON)."""

    max_actions: int = 3
    max_features: int = 2
    solver: str = "auto"
    time_limit: float = 10.0
    max_candidates: int = 200
    max_cost: float | None = None
    max_cost_ratio: float | None = None
    confidence: float = 0.95
    n_bootstrap: int = 1000
    random_state: int = 0
    min_group_size: int = 30


def global_recourse(
    method: Any,
    X: pd.DataFrame | Dataset,
    *,
    max_actions: int = 3,
    groups: str | Sequence[Any] | pd.Series | pd.DataFrame | None = None,
    cost: str | Mapping[str, float] = "l1",
    constraints: Constraints | Sequence[Constraints | None] | None = None,
    target: Any = None,
    max_features: int = 2,
    max_cost: float | None = None,
    max_cost_ratio: float | None = None,
    individual: AuditResult | CounterfactualResult | None = None,
    n_counterfactuals: int = 1,
    solver: str = "auto",
    time_limit: float = 10.0,
    max_candidates: int = 200,
    data: Any = None,
    bins: int | Mapping[str, Any] = 4,
    min_group_size: int = 30,
    confidence: float = 0.95,
    n_bootstrap: int = 1000,
    random_state: int = 0,
    backend: str | None = None,
    n_jobs: int = 1,
    chunk_size: int = 200,
    out_dir: str | Path | None = None,
    address: str | None = None,
) -> GlobalRecourse:
    """Global recourse: at most ``max_actions`` readable actions that get the most
    rejected people to the target class, each verified on each person's own row.

    An *action* sets a category, moves a number by a delta, or raises / lowers it to at
    least / at most a value, on one or a few features ("reduce duration_months by 12").
    Candidates come from the per-person counterfactuals of ``method`` and their
    generalisations; each is applied to every rejected person's own row, snapped to the
    grids, checked against *that person's* constraints and with the real model.  The
    chosen set covers the most people (then costs them the least): an exact MILP on
    HiGHS when small, else greedy max-coverage with its 1 - 1/e guarantee.

    Parameters
    ----------
    method : fitted CounterfactualMethod
        Gives the per-person counterfactuals and each person's own cost (with MACE, whose
        ``optimal`` is a proof, the lowest possible under its distance).
    X : DataFrame or Dataset
        The population (raw rows, unique index); only the rejected rows are considered.
    max_actions : int
        At most this many actions are chosen.
    groups : str, list, Series or DataFrame, optional
        Grouping columns, as in :func:`counterfact.audit` (numeric ones binned).
    cost : {"l1", "n_changed", "method"} or mapping
        The cost of a person's move: normalised l1 (MACE eq. 3, as the audit), the number
        of changed features, the method's own distance (methods whose ``tags.cost`` is
        ``"distance"``), or ``{feature: weight}`` for a weighted normalised l1 (features
        not named weigh 1).
    constraints : Constraints or sequence of Constraints, optional
        One for everyone, or one per row of ``X`` (each person's own, as in ``explain``);
        an action applied to a person must satisfy theirs.
    target : label, optional
        The favourable class (default as :func:`counterfact.models.desired_class`).
    max_features : int
        Features an action may change (1 to 5).
    max_cost : float, optional
        An action counts for a person only if it costs them at most this much, in the unit
        of ``cost`` (by default the normalised l1: the mean over all features of each
        change as a share of the feature's range).
    max_cost_ratio : float, optional
        An action counts for a person only if it costs them at most this many times their
        own counterfactual's cost (no cap from this for people without one). Pure
        max-coverage favours sweeping actions ("raise capital_gain to at least 99,999");
        a cap keeps the actions within reach of the people they are meant for.
    individual : AuditResult or CounterfactualResult, optional
        Per-person counterfactuals already computed for these rows under the same
        constraints and target (an audit's result): reused instead of explaining again.
    n_counterfactuals : int
        Counterfactuals per person (more give more candidates; costs use the first).
    solver : {"auto", "greedy", "milp"}
        How the actions are chosen; ``"auto"`` solves the MILP when it is small.
    time_limit : float
        Seconds per MILP solve (one per number of actions from 1 to ``max_actions``); on
        expiry the best set found is kept and its coverage bound reported.
    max_candidates : int
        Candidates verified on everyone (more are screened on a seeded sample first).
    data, bins, min_group_size, confidence, n_bootstrap, random_state
        As in :func:`counterfact.audit` (``random_state`` also seeds the screening sample).
    backend, n_jobs, chunk_size, out_dir, address
        The per-person step's :func:`counterfact.methods.explain_in_chunks`.

    Returns
    -------
    GlobalRecourse
    """
    s = GlobalSettings(
        max_actions,
        max_features,
        solver,
        time_limit,
        max_candidates,
        max_cost,
        max_cost_ratio,
        confidence,
        n_bootstrap,
        random_state,
        min_group_size,
    )
    X, data = _population(X, data, method)
    frame = _check(method, X, s, cost, n_counterfactuals, n_jobs, chunk_size)
    run = _Run(
        method,
        None,
        target,
        int(n_counterfactuals),
        int(chunk_size),
        int(n_jobs),
        backend,
        address,
        Path(out_dir) if out_dir is not None else None,
        None,
        "l1",
    )
    return _global(run, X, frame, s, groups, cost, constraints, individual, data, bins)


def _global(
    run: _Run,
    X: Any,
    frame: pd.DataFrame,
    s: GlobalSettings,
    groups: Any,
    cost: Any,
    constraints: Any,
    individual: Any,
    data: Any,
    bins: Any,
) -> GlobalRecourse:
    """:func:`global_recourse` once its arguments are checked (see the module docstring)."""
    method = run.method
    per_row_c = _row_constraints(constraints, frame)
    target = desired_class(
        method.model_.model,
        target=run.target,
        data=data if isinstance(data, Dataset) else method.data_,
    )
    run = replace(run, target=target)
    labels, info = resolve_groups(groups, X if isinstance(X, pd.DataFrame) else frame, data, bins)
    spec = _cost(method, cost)
    rejected = _rejected(method, frame, target)
    ids = frame.index[rejected]
    mine = [per_row_c[i] for i in np.flatnonzero(rejected)]
    t0 = time.perf_counter()
    ind = per_person(run, frame.loc[ids], mine, individual, constraints)
    seconds = {"individual": time.perf_counter() - t0}
    space = ActionSpace(method.schema_)
    bounds, reasons = person_bounds(method.schema_, frame.loc[ids], mine)
    own = individual_costs(space, frame.loc[ids], ind, spec)
    picked, found = _search(
        space, method, frame.loc[ids], ind, bounds, target, spec, s, _caps(s, own), seconds
    )
    per_row, reached = _assemble(
        space, method, frame, labels, rejected, ind, own, bounds, reasons, picked, target, s
    )
    meta = _meta(method, s, spec, cost, constraints, target, info, data, found, seconds)
    return GlobalRecourse(
        per_row, [a.to_dict() for a in picked.actions], reached, meta, picked.curve
    )


@dataclass
class _Picked:
    """The chosen actions, what each costs each person, and the coverage curve."""

    actions: list[Action]
    works: np.ndarray
    cost: np.ndarray
    curve: pd.DataFrame
    choice: Choice


def _search(
    space: ActionSpace,
    method: Any,
    Xr: pd.DataFrame,
    ind: Individual,
    bounds: list[QueryBounds | None],
    target: Any,
    spec: Cost,
    s: GlobalSettings,
    cap: np.ndarray,
    seconds: dict[str, float],
) -> tuple[_Picked, dict[str, Any]]:
    """Candidates, screening, verification on everyone and the choice (steps 2-5)."""
    t = time.perf_counter()
    M = space.encode(Xr) if len(Xr) else np.zeros((0, len(space.schema)))
    pos = {q: i for i, q in enumerate(Xr.index)}
    have = [q for q in Xr.index if q in ind.cfs]
    pool, found = candidates(
        space, M[[pos[q] for q in have]], [space.encode(ind.cfs[q]) for q in have], s.max_features
    )
    found["pool"] = len(pool)
    kept = _screen(space, pool, M, bounds, method.model_, target, spec, s, cap)
    seconds["candidates"] = time.perf_counter() - t
    t = time.perf_counter()
    cov = _capped(verify(space, kept, M, bounds, method.model_, target, spec), cap)
    seconds["verify"] = time.perf_counter() - t
    found.update(verified=len(kept), pairs=int(len(kept) * len(M)), predicted=cov.n_predicted)
    t = time.perf_counter()
    choices = [
        choose(cov.works, cov.cost, k, s.solver, s.time_limit) for k in range(1, s.max_actions + 1)
    ]
    seconds["select"] = time.perf_counter() - t
    final = choices[-1]
    P = max(len(M), 1)
    curve = pd.DataFrame(
        [
            {
                "k": k + 1,
                "n_covered": c.n_covered,
                "coverage": c.n_covered / P if len(M) else np.nan,
                "bound": c.bound,
                "optimal": c.optimal,
                "solver": c.solver,
                "status": c.status,
                "seconds": c.seconds,
            }
            for k, c in enumerate(choices)
        ]
    )
    idx = list(final.chosen)
    return _Picked([kept[a] for a in idx], cov.works[idx], cov.cost[idx], curve, final), found


def _caps(s: GlobalSettings, own: np.ndarray) -> np.ndarray:
    """Each person's cap on the cost of an action that counts for them (inf: none)."""
    cap = np.full(len(own), np.inf if s.max_cost is None else s.max_cost)
    if s.max_cost_ratio is not None:
        with np.errstate(invalid="ignore"):
            cap = np.where(np.isfinite(own), np.minimum(cap, s.max_cost_ratio * own), cap)
    return cap


def _capped(cov: Coverage, cap: np.ndarray) -> Coverage:
    """Pairs that cost more than the person's cap do not count."""
    if not np.isfinite(cap).any():
        return cov
    works = cov.works & (cov.cost <= cap[None, :] * (1 + 1e-9) + 1e-12)
    return Coverage(works, np.where(works, cov.cost, np.nan), cov.n_predicted)


def _opt_float(v: Any, name: str) -> float | None:
    if v is None:
        return None
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float, np.integer, np.floating))
        or not np.isfinite(v)
        or v <= 0
    ):
        raise ValidationError(
            f"The {name!r} parameter of global_recourse must be a number > 0 or None. Got {v!r}."
        )
    return float(v)


def _screen(
    space: ActionSpace,
    pool: list[Action],
    M: np.ndarray,
    bounds: list[QueryBounds | None],
    model: Any,
    target: Any,
    spec: Cost,
    s: GlobalSettings,
    cap: np.ndarray,
) -> list[Action]:
    """At most ``max_candidates`` of ``pool``: verified on a seeded sample of people, the
    greedy choice on it first (complementary actions), then the widest coverage."""
    if len(pool) <= s.max_candidates:
        return pool
    rng = np.random.default_rng([s.random_state, 30])
    P = len(M)
    sample = (
        np.sort(rng.choice(P, size=min(P, SCREEN_ROWS), replace=False))
        if P
        else np.zeros(0, dtype=int)
    )
    cov = _capped(
        verify(space, pool, M[sample], [bounds[i] for i in sample], model, target, spec),
        cap[sample],
    )
    with np.errstate(all="ignore"):
        tie = np.array([np.nanmedian(c) if np.isfinite(c).any() else np.inf for c in cov.cost])
    first = greedy(cov.works, s.max_candidates // 2, cov.cost)
    n = cov.works.sum(axis=1)
    rest = [int(a) for a in np.lexsort((np.arange(len(pool)), tie, -n)) if a not in set(first)]
    keep = sorted(first + rest[: s.max_candidates - len(first)])
    return [pool[a] for a in keep]


def _check(
    method: Any, X: Any, s: GlobalSettings, cost: Any, n_cf: Any, n_jobs: Any, chunk_size: Any
) -> pd.DataFrame:
    """Every argument checked before any work; the population validated."""
    if not getattr(method, "fitted_", False):
        raise NotFittedError(
            "global_recourse needs a fitted method: call method.fit(model, train) first."
        )
    ints = {
        "max_actions": (s.max_actions, 1, None),
        "max_features": (s.max_features, 1, 5),
        "max_candidates": (s.max_candidates, 1, None),
        "n_counterfactuals": (n_cf, 1, None),
        "chunk_size": (chunk_size, 1, None),
        "min_group_size": (s.min_group_size, 0, None),
        "n_bootstrap": (s.n_bootstrap, 0, None),
    }
    for name, (v, lo, hi) in ints.items():
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, np.integer))
            or v < lo
            or (hi is not None and v > hi)
        ):
            span = f"[{lo}, {hi}]" if hi is not None else f"[{lo}, inf)"
            raise ValidationError(
                f"The {name!r} parameter of global_recourse must be an int in {span}. Got {v!r}."
            )
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValidationError(
            f"The 'n_jobs' parameter of global_recourse must be a non-zero int. Got {n_jobs!r}."
        )
    if s.solver not in SOLVERS:
        raise ValidationError(
            f"The 'solver' parameter of global_recourse must be one of {list(SOLVERS)}. Got {s.solver!r}."
        )
    if s.solver == "milp":
        import_optional("highspy", purpose="global_recourse(solver='milp')")
    for key, val, low, high in (
        ("time_limit", s.time_limit, 0.0, np.inf),
        ("confidence", s.confidence, 0.0, 1.0),
    ):
        if (
            isinstance(val, bool)
            or not isinstance(val, (int, float, np.integer, np.floating))
            or not low < val < high
        ):
            raise ValidationError(
                f"The {key!r} parameter of global_recourse must be a number in ({low:g}, {high:g}). "
                f"Got {val!r}."
            )
    _opt_float(s.max_cost, "max_cost")
    _opt_float(s.max_cost_ratio, "max_cost_ratio")
    if isinstance(s.random_state, bool) or not isinstance(s.random_state, (int, np.integer)):
        raise ValidationError(
            f"The 'random_state' parameter of global_recourse must be an int. Got {s.random_state!r}."
        )
    _cost(method, cost)
    frame = method.schema_.validate_frame(X, what="X")
    if frame.index.has_duplicates:
        raise ValidationError(
            "X has duplicate index labels; row ids must be unique (reset_index())."
        )
    return frame  # type: ignore[no-any-return]


def _cost(method: Any, cost: Any) -> Cost:
    """The ``cost`` argument as a :class:`Cost`."""
    schema = method.schema_
    ones = np.ones(len(schema))
    if isinstance(cost, Mapping):
        unknown = sorted(set(map(str, cost)) - set(schema.names))
        if unknown:
            raise ValidationError(
                f"The 'cost' weights name unknown features {unknown}. Known features: {schema.names}."
            )
        w = ones.copy()
        for name, v in cost.items():
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float, np.integer, np.floating))
                or not np.isfinite(v)
                or v < 0
            ):
                raise ValidationError(
                    f"The 'cost' weight of {name!r} must be a finite number >= 0. Got {v!r}."
                )
            w[schema.index(str(name))] = float(v)
        return Cost("l1", w)
    if cost in ("l1", "n_changed"):
        return Cost(str(cost), ones)
    if cost == "method":
        norm = getattr(method, "norm", None)
        if type(method).tags.cost != "distance" or norm is None:
            raise ValidationError(
                f"The 'cost' parameter is 'method', but {type(method).__name__} has no distance of its own; "
                "use cost='l1' (normalised l1), 'n_changed' or {feature: weight}."
            )
        return Cost("norm", ones, tuple(norm) if isinstance(norm, list) else norm)
    raise ValidationError(
        f"The 'cost' parameter of global_recourse must be 'l1', 'n_changed', 'method' or a "
        f"mapping {{feature: weight}}. Got {cost!r}."
    )


def _row_constraints(constraints: Any, frame: pd.DataFrame) -> list[Constraints | None]:
    """One Constraints (or None) per row of ``frame``."""
    if constraints is None or isinstance(constraints, Constraints):
        return [constraints] * len(frame)
    if isinstance(constraints, (str, bytes, Mapping)) or not isinstance(constraints, Sequence):
        raise ValidationError(
            f"The 'constraints' parameter must be a cf.Constraints, one per row of X, or None. "
            f"Got {type(constraints).__name__}."
        )
    if len(constraints) != len(frame):
        raise ValidationError(
            f"The 'constraints' parameter lists {len(constraints)} Constraints for {len(frame)} "
            "rows of X; give one per row, in X's order (or one for everyone)."
        )
    for c in constraints:
        if c is not None and not isinstance(c, Constraints):
            raise ValidationError(
                f"The 'constraints' entries must be cf.Constraints or None. Got {type(c).__name__}."
            )
    return list(constraints)


def _assemble(
    space: ActionSpace,
    method: Any,
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    rejected: np.ndarray,
    ind: Individual,
    own: np.ndarray,
    bounds: list[QueryBounds | None],
    reasons: dict[Any, str],
    picked: _Picked,
    target: Any,
    s: GlobalSettings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The per-person table and the rows reached (step 6)."""
    ids = frame.index[rejected]
    names = [f"A{k + 1}" for k in range(len(picked.actions))]
    cost = np.where(picked.works, picked.cost, np.inf)
    best = np.argmin(cost, axis=0) if len(names) else np.zeros(len(ids), dtype=int)
    covered = (
        np.asarray(picked.works.any(axis=0), dtype=bool)
        if len(names)
        else np.zeros(len(ids), dtype=bool)
    )
    reached, covered = _reach(
        space, method, frame.loc[ids], bounds, picked.actions, best, covered, target
    )
    pr = pd.DataFrame(index=frame.index)
    for g in labels.columns:
        pr[f"group:{g}"] = labels[g]
    pr["rejected"] = rejected
    pr["individual"] = pd.Series("accepted", index=frame.index, dtype=object)
    pr.loc[ids, "individual"] = ind.outcome.to_numpy()
    pr["individual_status"] = pd.Series("", index=frame.index, dtype=object)
    pr.loc[ids, "individual_status"] = ind.status.to_numpy()
    pr["individual_proven"] = False
    proven = type(method).tags.proves_optimality
    pr.loc[ids, "individual_proven"] = (ind.status == "optimal").to_numpy() & proven
    pr["individual_cost"] = np.nan
    pr.loc[ids, "individual_cost"] = own
    pr["covered"] = False
    pr.loc[ids, "covered"] = covered
    action = np.array(
        [names[b] if c else "" for b, c in zip(best, covered, strict=True)], dtype=object
    )
    pr["action"] = pd.Series("", index=frame.index, dtype=object)
    pr.loc[ids, "action"] = action
    pr["cost"] = np.nan
    pr.loc[ids, "cost"] = np.where(
        covered, cost[best, np.arange(len(ids))] if len(names) else np.nan, np.nan
    )
    pr["cost_ratio"] = pr["cost"] / pr["individual_cost"].where(pr["individual"] == "recourse")
    pr["n_working"] = 0
    pr.loc[ids, "n_working"] = picked.works.sum(axis=0) if len(names) else 0
    pr["reason"] = pd.Series("", index=frame.index, dtype=object)
    capped = s.max_cost is not None or s.max_cost_ratio is not None
    pr.loc[ids, "reason"] = [
        _reason(q, c, reasons, len(names), capped) for q, c in zip(ids, covered, strict=True)
    ]
    pr["changes"] = pd.Series("", index=frame.index, dtype=object)
    pr.loc[reached.index, "changes"] = [
        describe_changes(changes(method.schema_, frame.loc[q], reached.loc[q]))
        for q in reached.index
    ]
    for k, name in enumerate(names):
        pr[f"works:{name}"] = False
        pr.loc[ids, f"works:{name}"] = picked.works[k]
        pr[f"cost:{name}"] = np.nan
        pr.loc[ids, f"cost:{name}"] = picked.cost[k]
    return pr, reached


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
        ok[keep] = satisfied_many([owners[i] for i in keep], rows.iloc[keep], np.arange(keep.size))  # type: ignore[misc]
    if ok.any():
        ok[ok] = np.asarray(method.model_.predict(rows[ok])) == target
    out = covered.copy()
    out[take[~ok]] = False
    return rows[ok], out


def _meta(
    method: Any,
    s: GlobalSettings,
    spec: Cost,
    cost: Any,
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
    same = cost == "method" or (
        cost == "l1" and tags.cost == "distance" and getattr(method, "norm", None) == "l1"
    )
    return {
        "method": method.name or type(method).__name__,
        "display_name": tags.display_name,
        "params": jsonable(method.get_params()),
        "proves_optimality": tags.proves_optimality,
        "proves_infeasibility": tags.proves_infeasibility,
        "individual_lower_bound": bool(tags.proves_optimality and same),
        "guarantee": type(method).guarantee(method.get_params()),
        "cost": jsonable(dict(cost)) if isinstance(cost, Mapping) else cost,
        "constraints": "per row" if per_row else constraints_json(constraints),
        "target": jsonable(target),
        "groups": info,
        "features": list(method.schema_.names),
        "schema": method.schema_.to_dict(),
        "settings": asdict(s),
        "candidates": found,
        "seconds": {**seconds, "total": float(sum(seconds.values()))},
        "dataset": getattr(data, "name", None),
        "model": type(method.model_.model).__name__,
    }
