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
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import Constraints, Requirements
from ...constraints._bounds import QueryBounds
from ...constraints._requirements import OWN_MEASURE
from ...data import Dataset
from ...models import desired_class
from ...result import CounterfactualResult
from .._actions import Action, ActionSpace, Cost, Coverage, verify
from .._batch import Run, population, rejected
from .._candidates import candidates
from .._cover import choose, greedy
from .._groups import resolve_groups
from .._individual import bounds as person_bounds
from .._individual import individual as per_person
from .._individual import individual_costs
from .._result import AuditResult
from .._settings import ActionSearch, Batch, Statistics, given
from ._assemble import People, Picked, assemble, meta
from ._check import checked_frame, measure_of, positive_or_none, row_constraints
from ._result import GlobalRecourse

__all__ = ["global_recourse"]

#: people on whom candidates are screened when there are more than max_candidates
SCREEN_ROWS = 400
#: what ``groups=`` accepts
Groups = str | Sequence[Any] | pd.Series | pd.DataFrame | None


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

    @property
    def capped(self) -> bool:
        """Whether an action counts for a person only up to a cost."""
        return self.max_cost is not None or self.max_cost_ratio is not None


def global_recourse(
    method: Any,
    X: pd.DataFrame | Dataset,
    *,
    max_actions: int = 3,
    groups: Groups = None,
    measure: str | Mapping[str, float] = "effort",
    constraints: Constraints | Sequence[Constraints | None] | None = None,
    target: Any = None,
    max_cost: float | None = None,
    max_cost_ratio: float | None = None,
    individual: AuditResult | CounterfactualResult | None = None,
    n_counterfactuals: int = 1,
    data: Any = None,
    bins: int | Mapping[str, Any] = 4,
    search: ActionSearch | None = None,
    statistics: Statistics | None = None,
    batch: Batch | None = None,
) -> GlobalRecourse:
    """At most ``max_actions`` readable actions, the same for everyone, that get the most
    rejected people to the target class, each verified on each person's own row.

    An *action* changes a few features ("reduce duration_months by 12"); it works for a
    person when their own row, so changed, meets *their* constraints and gets the target
    from the real model.  The chosen set covers the most people, then costs them least.

    Parameters
    ----------
    method : fitted CounterfactualMethod
    X : DataFrame or Dataset
        The population (unique index); only the rejected rows are considered.
    max_actions : int
        At most this many actions are chosen.
    groups, data, bins, constraints, target, n_counterfactuals
        As in :func:`counterfact.audit`, but ``constraints`` may also give one Constraints
        per row of ``X`` (each person's own): an action must satisfy theirs.
    measure : {"effort", "l1", "n_changed", "method"} or mapping
        The cost of a move: the measure of effort (default, as in ``audit``; own answers
        minimised in it too), the range-normalised l1 distance, the changed features, the
        method's own distance, or ``{feature: weight}``.
    max_cost, max_cost_ratio : float, optional
        An action counts for a person only if it costs them at most ``max_cost`` (in the
        measure's unit), and at most ``max_cost_ratio`` times their own answer's cost.
    individual : AuditResult or CounterfactualResult, optional
        These rows' per-person answers (same constraints and target), reused if given.
    search, statistics, batch : ActionSearch, Statistics, Batch, optional
        How the actions are searched, how the figures are estimated, and how the rows are
        explained; the defaults of :class:`ActionSearch`, :class:`Statistics`, :class:`Batch`.

    Returns
    -------
    GlobalRecourse
    """
    X, data = population(X, data, method)
    frame = checked_frame(method, X, max_actions, n_counterfactuals)
    s = _settings(max_actions, max_cost, max_cost_ratio, search, statistics)
    run = _run(method, target, n_counterfactuals, batch, measure)
    labels, info = resolve_groups(groups, X if isinstance(X, pd.DataFrame) else frame, data, bins)
    how = (measure, measure_of(method, measure))
    return _global(run, frame, s, (labels, info), how, constraints, individual, data)


def _run(method: Any, target: Any, n_counterfactuals: int, batch: Any, measure: Any) -> Run:
    """What every per-person explanation shares (the target is resolved later): under
    ``measure="effort"`` each person's own answer is minimised in the measure of effort,
    under the other measures in the method's own objective."""
    b = given(batch, Batch, "batch", "global_recourse")
    req = Requirements(costs=None if measure == "effort" else OWN_MEASURE)
    return Run(method, None, target, int(n_counterfactuals), b, None, "l1", requirements=req)


def _settings(
    max_actions: int, max_cost: Any, max_cost_ratio: Any, search: Any, statistics: Any
) -> GlobalSettings:
    """The run's settings, each checked (the groups' own checks in their constructors)."""
    found = given(search, ActionSearch, "search", "global_recourse")
    stats = given(statistics, Statistics, "statistics", "global_recourse")
    found.check_installed()
    return GlobalSettings(
        int(max_actions),
        found.max_features,
        found.solver,
        found.time_limit,
        found.max_candidates,
        positive_or_none(max_cost, "max_cost"),
        positive_or_none(max_cost_ratio, "max_cost_ratio"),
        stats.confidence,
        stats.n_bootstrap,
        stats.random_state,
        stats.min_group_size,
    )


def _global(
    run: Run,
    frame: pd.DataFrame,
    s: GlobalSettings,
    grouping: tuple[pd.DataFrame, dict[str, Any]],
    measure: tuple[Any, Cost],
    constraints: Any,
    individual: Any,
    data: Any,
) -> GlobalRecourse:
    """:func:`global_recourse` once its arguments are checked (see the module docstring)."""
    method, (labels, info), (asked, spec) = run.method, grouping, measure
    per_row_c = row_constraints(constraints, frame)
    target = desired_class(
        method.model_.model,
        target=run.target,
        data=data if isinstance(data, Dataset) else method.data_,
    )
    run = replace(run, target=target)
    mask = rejected(method, frame, target)
    space = ActionSpace(method.schema_)
    people, seconds = _people(run, space, frame, mask, per_row_c, (individual, constraints), spec)
    cap = _caps(s, people.own)
    Xr = frame.loc[people.ids]
    picked, found = _search(space, method, Xr, people, target, spec, s, cap, seconds)
    per_row, reached = assemble(
        space, method, frame, labels, mask, people, picked, target, s.capped
    )
    facts = meta(method, asdict(s), asked, constraints, target, info, data, found, seconds)
    if not _same_measure(individual, run.requirements):  # answers minimised in another measure
        facts["individual_lower_bound"] = False
    actions = [a.to_dict() for a in picked.actions]
    return GlobalRecourse(per_row, actions, reached, facts, picked.curve)


def _same_measure(individual: Any, req: Requirements) -> bool:
    """Whether given per-person answers were minimised in the measure this run asks of them
    (answers computed here always are)."""
    res = individual.result if isinstance(individual, AuditResult) else individual
    if res is None:
        return individual is None
    bound = getattr(res, "costs", None)
    if req.costs == OWN_MEASURE:
        return bound is None
    return bound is not None and bound.costs.preset_name == "effort"


def _people(
    run: Run,
    space: ActionSpace,
    frame: pd.DataFrame,
    mask: np.ndarray,
    per_row_c: list[Constraints | None],
    given_answers: tuple[Any, Any],
    spec: Cost,
) -> tuple[People, dict[str, float]]:
    """The rejected people's own answers (explained, or ``given_answers``: the answers and
    the constraints they were computed under), their costs and bounds (step 1)."""
    ids = frame.index[mask]
    mine = [per_row_c[i] for i in np.flatnonzero(mask)]
    t0 = time.perf_counter()
    ind = per_person(run, frame.loc[ids], mine, *given_answers)
    seconds = {"individual": time.perf_counter() - t0}
    bounds, reasons = person_bounds(run.method.schema_, frame.loc[ids], mine)
    own = individual_costs(space, frame.loc[ids], ind, spec)
    return People(ids, ind, own, bounds, reasons), seconds


def _search(
    space: ActionSpace,
    method: Any,
    Xr: pd.DataFrame,
    people: People,
    target: Any,
    spec: Cost,
    s: GlobalSettings,
    cap: np.ndarray,
    seconds: dict[str, float],
) -> tuple[Picked, dict[str, Any]]:
    """Candidates, screening, verification on everyone and the choice (steps 2-5)."""
    t = time.perf_counter()
    M = space.encode(Xr) if len(Xr) else np.zeros((0, len(space.schema)))
    pos = {q: i for i, q in enumerate(Xr.index)}
    have = [q for q in Xr.index if q in people.ind.cfs]
    pool, found = candidates(
        space,
        M[[pos[q] for q in have]],
        [space.encode(people.ind.cfs[q]) for q in have],
        s.max_features,
    )
    found["pool"] = len(pool)
    kept = _screen(space, pool, M, people.bounds, method.model_, target, spec, s, cap)
    seconds["candidates"] = time.perf_counter() - t
    t = time.perf_counter()
    cov = _capped(verify(space, kept, M, people.bounds, method.model_, target, spec), cap)
    seconds["verify"] = time.perf_counter() - t
    found.update(verified=len(kept), pairs=int(len(kept) * len(M)), predicted=cov.n_predicted)
    t = time.perf_counter()
    choices = [
        choose(cov.works, cov.cost, k, s.solver, s.time_limit) for k in range(1, s.max_actions + 1)
    ]
    seconds["select"] = time.perf_counter() - t
    idx = list(choices[-1].chosen)
    curve = _curve(choices, len(M))
    picked = Picked([kept[a] for a in idx], cov.works[idx], cov.cost[idx], curve, choices[-1])
    return picked, found


def _curve(choices: list[Any], n_people: int) -> pd.DataFrame:
    """Per number of actions: the people covered, the bound, the solver and its status."""
    P = max(n_people, 1)
    return pd.DataFrame(
        [
            {
                "k": k + 1,
                "n_covered": c.n_covered,
                "coverage": c.n_covered / P if n_people else np.nan,
                "bound": c.bound,
                "optimal": c.optimal,
                "solver": c.solver,
                "status": c.status,
                "seconds": c.seconds,
            }
            for k, c in enumerate(choices)
        ]
    )


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
