"""Choosing at most ``k`` actions that cover the most people, and then cost them the least:
greedy max-coverage or an exact MILP on HiGHS.

``works[a, p]`` says whether action ``a`` (verified) gets person ``p`` to the target, and
``cost[a, p]`` what it costs them.  The *coverage* of a set of actions is the number of
people at least one of them works for; each covered person is assigned the cheapest of
them.  The objective is lexicographic: the most people covered, then, among the sets
that cover as many, the least total cost.

* :func:`greedy` adds, while it covers someone new, the action that covers the most
  people not yet covered (ties: the least cost to them, then the lower index) --
  max-coverage is submodular, so this reaches at least ``1 - (1 - 1/k)^k >= 1 - 1/e``
  (63 %) of the best coverage among the candidates (Nemhauser, Wolsey & Fisher 1978) --
  and fills the slots left with the actions that lower the total cost most.
* :func:`exact` solves the MILP: binary ``z_a`` (action chosen), ``x_ap`` in [0, 1]
  for every pair that works (person ``p`` assigned to ``a``), ``x_ap <= z_a``,
  ``sum_a x_ap <= 1``, ``sum_a z_a <= k``, minimising ``sum (eps * cost_ap - 1) x_ap``
  with ``eps`` small enough that no saving of cost is worth one person less.  Started
  from the greedy set; optimal when HiGHS proves it within the time limit.
* :func:`choose` picks one of them (``solver="auto"``: the MILP when it is small) and
  states the guarantee: an upper bound on the best coverage among the candidates.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils._deps import is_available
from ..exceptions import ValidationError
from ..solvers.milp import Expr, Model

__all__ = ["AUTO_MILP_PAIRS", "SOLVERS", "Choice", "choose", "exact", "greedy"]

SOLVERS = ("auto", "greedy", "milp")
#: ``solver="auto"`` solves the MILP when at most this many (action, person) pairs work
AUTO_MILP_PAIRS = 100_000


@dataclass(frozen=True)
class Choice:
    """The chosen actions (candidate positions, in the order greedy would add them) and
    what is known of the choice: people covered, whether that coverage is proven the
    best among the candidates (``optimal``) and, for the MILP, whether the total cost is
    too (``cost_optimal``), an upper bound on the best coverage, the solver, its status."""

    chosen: tuple[int, ...]
    n_covered: int
    optimal: bool
    cost_optimal: bool
    bound: float
    solver: str
    status: str
    seconds: float


def _cost(works: np.ndarray, cost: np.ndarray | None) -> np.ndarray:
    """Costs where an action works, +inf elsewhere (zeros when no cost is given)."""
    c = np.zeros(works.shape) if cost is None else np.nan_to_num(np.asarray(cost, dtype=float), nan=0.0)
    return np.where(works, c, np.inf)


def greedy(works: np.ndarray, k: int, cost: np.ndarray | None = None) -> list[int]:
    """At most ``k`` actions: the widest new coverage first, then the largest cost savings."""
    A, P = works.shape
    C = _cost(works, cost)
    best = np.full(P, np.inf)  # each person's cheapest cost so far (inf: not covered)
    chosen: list[int] = []
    W = works.astype(float)
    while len(chosen) < min(k, A):
        left = ~np.isfinite(best)
        gain = W @ left.astype(float)
        gain[chosen] = -1.0
        if gain.max() > 0:
            cand = np.flatnonzero(gain >= gain.max() - 1e-9)
            spend = np.where(works[cand] & left, C[cand], 0.0).sum(axis=1)
            a = int(cand[np.lexsort((cand, spend))[0]])
        else:
            with np.errstate(invalid="ignore"):  # inf - inf where neither works: masked out
                saving = np.where(works & ~left, np.maximum(best - C, 0.0), 0.0).sum(axis=1)
            saving[chosen] = -1.0
            if saving.max() <= 1e-12:
                break
            a = int(np.flatnonzero(saving >= saving.max() - 1e-12)[0])
        chosen.append(a)
        best = np.minimum(best, C[a])
    return chosen


def _covered(works: np.ndarray, chosen: list[int] | tuple[int, ...]) -> int:
    return int(works[list(chosen)].any(axis=0).sum()) if len(chosen) else 0


def _order(works: np.ndarray, cost: np.ndarray | None, chosen: list[int]) -> tuple[int, ...]:
    """``chosen`` in the order greedy would add them."""
    if not chosen:
        return ()
    sub = greedy(works[chosen], len(chosen), None if cost is None else cost[chosen])
    rest = [i for i in range(len(chosen)) if i not in sub]
    return tuple(int(chosen[i]) for i in [*sub, *rest])


def _greedy_bound(works: np.ndarray, k: int, n_greedy: int) -> float:
    """An upper bound on the best coverage of ``k`` actions: the least of everyone
    coverable, the ``k`` largest single coverages summed, and greedy's guarantee."""
    everyone = float(works.any(axis=0).sum())
    singles = float(np.sort(works.sum(axis=1))[::-1][:k].sum())
    ratio = 1.0 - (1.0 - 1.0 / k) ** k
    return float(min(everyone, singles, math.floor(n_greedy / ratio + 1e-9)))


def exact(works: np.ndarray, cost: np.ndarray | None, k: int, start: list[int], time_limit: float) -> Choice:
    """The MILP on HiGHS (see the module docstring), started from ``start``."""
    t0 = time.perf_counter()
    A, P = works.shape
    C = _cost(works, cost)
    a_of, p_of = np.nonzero(works)
    n = a_of.size
    scale = float(np.max(C[works])) if n else 1.0
    eps = 0.5 / (max(P, 1) * (scale if scale > 0 else 1.0))
    m = Model("global-recourse")
    z = m.add_vars(A, 0.0, 1.0, integer=True, name="z")
    x = m.add_vars(n, 0.0, 1.0, name="x")
    if n:
        ones = np.ones(n)
        link = sp.csr_matrix((np.concatenate([ones, -ones]), (np.r_[np.arange(n), np.arange(n)], np.r_[np.arange(n), n + a_of])),
                             shape=(n, n + A))
        m.add_rows([*x, *z], link, -np.inf, 0.0)  # x_ap <= z_a
        m.add_rows(x, sp.csr_matrix((ones, (p_of, np.arange(n))), shape=(P, n)), -np.inf, 1.0)  # sum_a x_ap <= 1
        coef = eps * C[a_of, p_of] - 1.0
        m.add_objective(Expr({v.index: float(c) for v, c in zip(x, coef, strict=True)}))
    m.add_rows(z, np.ones((1, A)), -np.inf, float(k))
    sol = m.solve("highs", time_limit=time_limit, start=_start(works, C, start, a_of, p_of), gap=1e-9)
    chosen = list(start)
    if sol.x is not None:
        picked = [a for a in range(A) if sol.x[a] > 0.5]
        if _covered(works, picked) >= _covered(works, start):
            chosen = picked
    got = _covered(works, chosen)
    optimal = sol.status == "optimal"
    if optimal:
        bound = float(got)
    elif math.isfinite(sol.bound):  # objective >= -(people covered) - 1/2
        bound = float(min(math.floor(-sol.bound + 0.5 + 1e-9), P))
    else:
        bound = _greedy_bound(works, k, _covered(works, start))
    return Choice(_order(works, cost, chosen), got, optimal, optimal, max(bound, float(got)), "milp", sol.status,
                  time.perf_counter() - t0)


def _start(works: np.ndarray, C: np.ndarray, start: list[int], a_of: np.ndarray, p_of: np.ndarray) -> np.ndarray:
    """The greedy set as a full MILP start: ``z``, then each person on their cheapest action."""
    A = works.shape[0]
    x0 = np.zeros(A + a_of.size)
    if not start:
        return x0
    x0[start] = 1.0
    sub = np.where(works[start], C[start], np.inf)
    best = np.array(start)[np.argmin(sub, axis=0)]
    covered = np.asarray(works[start].any(axis=0), dtype=bool)
    x0[A:] = (a_of == best[p_of]) & covered[p_of]
    return x0


def choose(works: np.ndarray, cost: np.ndarray | None, k: int, solver: str = "auto", time_limit: float = 30.0) -> Choice:
    """At most ``k`` actions: the most people covered, then the least cost (see the module docstring)."""
    if solver not in SOLVERS:
        raise ValidationError(f"solver must be one of {list(SOLVERS)}. Got {solver!r}.")
    t0 = time.perf_counter()
    start = greedy(works, k, cost)
    small = int(works.sum()) <= AUTO_MILP_PAIRS and is_available("highspy")
    if solver == "milp" or (solver == "auto" and small):
        return exact(works, cost, k, start, time_limit)
    n_greedy = _covered(works, start)
    everyone = n_greedy >= int(works.any(axis=0).sum())  # greedy covered everyone any candidate can
    bound = float(n_greedy) if everyone else _greedy_bound(works, k, n_greedy)
    return Choice(_order(works, cost, start), n_greedy, bool(bound <= n_greedy), False, bound, "greedy",
                  "optimal coverage" if bound <= n_greedy else "greedy", time.perf_counter() - t0)
