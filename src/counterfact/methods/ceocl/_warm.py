"""One CE-OCL solve, prepared: the model built inside the radius of a verified incumbent.

:func:`prepare` builds the MIP of one solve of a query (the first answer, or
a diverse one under the no-good cuts of the earlier change sets) as
:mod:`._incumbent` describes: it searches for a good counterfactual first,
builds the model with the query's box narrowed to that counterfactual's cost,
checks the counterfactual *in that model* (every input fixed) and returns it
as the solver's start.  When no counterfactual is found, or the model rejects
it (trust region, causal rows), the model is built on the query's whole box
without a start, as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._utils._deadline import Deadline
from ...solvers._milp import no_good_superset
from ._formulation import Formulation, exact_objective, fixed_point
from ._incumbent import Incumbent, IncumbentSearch

__all__ = ["Prepared", "prepare", "room", "solve_limit", "z_of"]

#: seconds at most spent checking one candidate start in the model
FIX_LIMIT = 2.0
#: shares of the query's time left given to the local search and to checking a start
#: (on a 100-tree depth-8 forest the check emits a 45000-row model: 0.1-0.2 s)
SEARCH_SHARE = 0.2
FIX_SHARE = 0.4
#: seconds left below which a rejected start is not retried
MIN_LEFT = 0.5


@dataclass
class Prepared:
    """A built model, its start (a full solution vector, or None) and facts."""

    form: Formulation
    start: np.ndarray | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    #: the local search's best point (reaches the target in the compiled model,
    #: inside the box; not checked against the trust region), if any
    incumbent: Incumbent | None = None


def z_of(form: Formulation, x: np.ndarray) -> np.ndarray:
    """The raw input vector of a solution vector."""
    return np.array([x[v.index] for v in form.inputs.z], dtype=float)


def prepare(
    build: Any,
    *,
    compiled: Any,
    query: Any,
    margin: float,
    changes: bool,
    norm: str,
    scales: np.ndarray,
    alpha: float,
    excluded: list[list[str]],
    starts: np.ndarray,
    narrow: bool = True,
    others: Any = (),
) -> Prepared:
    """Build one solve's model (module docstring).

    Parameters
    ----------
    build : callable
        ``build(margin, changes, radius)`` -> :class:`Formulation` (the method's builder).
    excluded : list of list of str
        Change sets whose supersets the solve must avoid (no-good cuts).
    starts : ndarray
        Candidate raw vectors (observed counterfactuals, earlier incumbents).
    narrow : bool
        Search for an incumbent and narrow the box (False: the plain model).
    """
    t0 = time.perf_counter()
    form = _with_cuts(build(margin, changes, None), excluded)
    diag: dict[str, Any] = {}
    if not narrow:
        return Prepared(form, None, diag)
    search = IncumbentSearch(
        compiled,
        form.inputs,
        form.m,
        query.target_index,
        margin,
        norm,
        scales,
        alpha,
        query.bounds.max_changes,
        others=others,
        costs=query.feature_costs() if getattr(query, "costs", None) is not None else None,
    )
    found = _search(search, form, query, starts, excluded)
    diag["search_seconds"] = time.perf_counter() - t0
    if found is None:
        return Prepared(form, None, diag)

    def rebuild(radius: float) -> Formulation:
        return _with_cuts(build(margin, changes, radius), excluded)

    prepared = _narrowed(rebuild, found, query, diag, t0)
    return prepared if prepared is not None else _whole_box(form, found, query, diag, t0)


def _search(
    search: IncumbentSearch,
    form: Formulation,
    query: Any,
    starts: np.ndarray,
    excluded: list[list[str]],
) -> tuple[Incumbent, Incumbent] | None:
    """The local search's incumbents (the improved point first, then the observed one it
    came from) within its share of the time left; None when it found none."""
    names = [f.name for f in form.inputs.features]
    ex_idx = [{names.index(n) for n in s} for s in excluded]
    deadline = Deadline.after(_share(query, SEARCH_SHARE, math.inf), token=query.cancel)
    return search.best(starts, ex_idx, deadline)


def _narrowed(
    rebuild: Callable[[float], Formulation],
    found: tuple[Incumbent, Incumbent],
    query: Any,
    diag: dict[str, Any],
    t0: float,
) -> Prepared | None:
    """The model narrowed to the first incumbent that is a point of it (checked with every
    input fixed) at its cost, with that point as the start; None when none is."""
    for k, inc in enumerate(found):
        if k and query.deadline.reserve(MIN_LEFT).expired():
            break
        narrowed = rebuild(inc.cost)
        x = fixed_point(narrowed, inc.z, time_limit=_share(query, FIX_SHARE, FIX_LIMIT))
        if x is not None and exact_objective(narrowed, x) <= inc.cost * (1 + 1e-6) + 1e-9:
            diag.update(incumbent_cost=inc.cost, prepare_seconds=time.perf_counter() - t0)
            return Prepared(narrowed, x, diag, found[0])
    return None


def _whole_box(
    form: Formulation,
    found: tuple[Incumbent, Incumbent],
    query: Any,
    diag: dict[str, Any],
    t0: float,
) -> Prepared:
    """No incumbent is a point of the model: the whole box, with the observed start if it
    is one (and time is left to check it)."""
    x = None
    if not query.deadline.reserve(MIN_LEFT).expired():
        x = fixed_point(form, found[1].z, time_limit=_share(query, FIX_SHARE, FIX_LIMIT))
    diag.update(incumbent_rejected=True, prepare_seconds=time.perf_counter() - t0)
    return Prepared(form, x, diag, found[0])


def _share(query: Any, share: float, cap: float) -> float:
    """``share`` of the query's time left (at least 0.02 s), at most ``cap``
    (``cap`` without a time limit)."""
    left = query.deadline.seconds()
    if left is None:
        return cap
    return min(cap, max(share * left, 0.02))


def _with_cuts(form: Formulation, excluded: list[list[str]]) -> Formulation:
    for s in excluded:
        no_good_superset(form.m, form.inputs, list(s))
    return form


def solve_limit(query: Any) -> float | None:
    """Seconds left for a solve (at least 0.01 s; None without a time limit): the
    query's time left, less a reserve for decoding and verifying the answer with
    the real model (``min(0.25 s, 10 %)`` of the limit)."""
    return query.deadline.reserve(min(0.25, 0.1 * _limit(query))).seconds(floor=0.01)


def room(query: Any) -> bool:
    """Whether another diverse solve can start: building it (a template copy, the
    incumbent search, checking the start) takes 0.1-0.5 s on a 100-tree depth-8
    forest, so one starts only with ``max(0.5 s, 20 %)`` of the limit left."""
    return not query.deadline.reserve(max(0.5, 0.2 * _limit(query))).expired()


def _limit(query: Any) -> float:
    """The query's time limit in seconds (0 without one: its deadline is then none,
    and keeping time back from no deadline leaves none)."""
    return float(query.time_limit or 0.0)
