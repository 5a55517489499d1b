"""Choosing at most ``k`` actions that cover the most people, and then cost them the least:
greedy max-coverage or an exact max-coverage MILP on HiGHS, then a local search on cost.

``works[a, p]`` says whether action ``a`` (verified) gets person ``p`` to the target, and
``cost[a, p]`` what it costs them.  The *coverage* of a set of actions is the number of
people at least one of them works for; each covered person is assigned the cheapest of
them.  The objective is lexicographic: the most people covered, then the least total cost.

1. **Coverage.**  :func:`greedy` adds the action that covers the most people not yet
   covered (ties: the least cost to them, then the lower index); max-coverage is
   submodular, so this reaches at least ``1 - (1 - 1/k)^k >= 1 - 1/e`` (63 %) of the best
   coverage among the candidates (Nemhauser, Wolsey & Fisher 1978).  :func:`exact`
   solves the max-coverage MILP instead: binary ``z_a``, ``y_u <= sum_{a covers u} z_a``
   in [0, 1] per *pattern* ``u`` (people who share a column of ``works`` are one pattern,
   weighted by their number), ``sum_a z_a <= k``, maximising ``sum_u w_u y_u``; started
   from the greedy set, optimal when HiGHS proves it within the time limit.
2. **Cost.**  The slots left are filled with the actions that lower the total cost most,
   then single swaps (one chosen action for another) are made while one keeps at least the
   coverage and lowers the total cost (:func:`improve`): a local optimum of the cost
   (for ``k = 1`` the cheapest of the actions with the best coverage).

:func:`choose` runs both and states the guarantee of the coverage: an upper bound on the
best coverage among the candidates.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils._deps import is_available
from ..exceptions import ValidationError
from ..solvers._milp import Expr, Model

__all__ = [
    "AUTO_MILP_NONZEROS",
    "SOLVERS",
    "Choice",
    "choose",
    "exact",
    "greedy",
    "improve",
    "patterns",
]

SOLVERS = ("auto", "greedy", "milp")
#: ``solver="auto"`` solves the MILP when (patterns x covering actions) is at most this
AUTO_MILP_NONZEROS = 300_000
#: rounds of swaps at most
MAX_SWAP_ROUNDS = 50


@dataclass(frozen=True)
class Choice:
    """The chosen actions (candidate positions, in the order greedy would add them) and
    what is known of their coverage: people covered, whether that is proven the best
    among the candidates, an upper bound on the best, the solver and its status."""

    chosen: tuple[int, ...]
    n_covered: int
    optimal: bool
    bound: float
    solver: str
    status: str
    seconds: float


def _costs(works: np.ndarray, cost: np.ndarray | None) -> np.ndarray:
    """Costs where an action works, +inf elsewhere (zeros when no cost is given)."""
    c = (
        np.zeros(works.shape)
        if cost is None
        else np.nan_to_num(np.asarray(cost, dtype=float), nan=0.0)
    )
    return np.where(works, c, np.inf)


def patterns(works: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``works`` that some action covers, and how many people
    share each (people nobody can help are dropped)."""
    cols = works[:, works.any(axis=0)]
    if cols.shape[1] == 0:
        return np.zeros((works.shape[0], 0), dtype=bool), np.zeros(0, dtype=int)
    uniq, counts = np.unique(cols.T, axis=0, return_counts=True)
    return uniq.T.astype(bool), counts.astype(int)


def greedy(
    works: np.ndarray, k: int, cost: np.ndarray | None = None, *, fill: bool = True
) -> list[int]:
    """At most ``k`` actions: the widest new coverage first, then (``fill``) the largest
    cost savings."""
    A, P = works.shape
    C = _costs(works, cost)
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
        elif fill:
            with np.errstate(invalid="ignore"):  # inf - inf where neither works: masked out
                saving = np.where(works & ~left, np.maximum(best - C, 0.0), 0.0).sum(axis=1)
            saving[chosen] = -1.0
            if saving.max() <= 1e-12:
                break
            a = int(np.flatnonzero(saving >= saving.max() - 1e-12)[0])
        else:
            break
        chosen.append(a)
        best = np.minimum(best, C[a])
    return chosen


def _score(C: np.ndarray, chosen: list[int] | tuple[int, ...]) -> tuple[int, float]:
    """(people covered, their total cost) of a set of actions."""
    if not len(chosen):
        return 0, 0.0
    best = C[list(chosen)].min(axis=0)
    ok = np.isfinite(best)
    return int(ok.sum()), float(best[ok].sum())


def improve(works: np.ndarray, cost: np.ndarray | None, chosen: list[int], k: int) -> list[int]:
    """Fill the free slots with the actions that lower the total cost most, then swap one
    chosen action for another while that covers more people or as many at a lower cost."""
    C = _costs(works, cost)
    chosen = list(chosen)
    while len(chosen) < min(k, len(C)):
        a, score = _best_addition(C, chosen)
        if a < 0 or not _better(score, _score(C, chosen)):
            break
        chosen.append(a)
    for _ in range(MAX_SWAP_ROUNDS):
        current = _score(C, chosen)
        move: tuple[int, int, tuple[int, float]] | None = None
        for i in range(len(chosen)):
            a, score = _best_addition(C, chosen[:i] + chosen[i + 1 :], exclude=chosen)
            if a >= 0 and _better(score, current) and (move is None or _better(score, move[2])):
                move = (i, a, score)
        if move is None:
            break
        chosen[move[0]] = move[1]
    return chosen


def _best_addition(
    C: np.ndarray, base_set: list[int], exclude: list[int] | None = None
) -> tuple[int, tuple[int, float]]:
    """The action that, added to ``base_set``, gives the best (coverage, -cost), and that score."""
    base = C[base_set].min(axis=0) if base_set else np.full(C.shape[1], np.inf)
    new = np.minimum(base[None, :], C)
    ok = np.isfinite(new)
    covs = ok.sum(axis=1)
    totals = np.where(ok, new, 0.0).sum(axis=1)
    taken = list(base_set) + list(exclude or [])
    covs[taken], totals[taken] = -1, np.inf
    if not len(covs) or covs.max() < 0:
        return -1, (0, 0.0)
    a = int(np.lexsort((np.arange(len(covs)), totals, -covs))[0])
    return a, (int(covs[a]), float(totals[a]))


def _better(x: tuple[int, float], y: tuple[int, float]) -> bool:
    """More people covered, or as many at a lower total cost."""
    return x[0] > y[0] or (x[0] == y[0] and x[1] < y[1] - 1e-12 * max(1.0, abs(y[1])))


def _greedy_bound(works: np.ndarray, k: int, n_greedy: int) -> float:
    """An upper bound on the best coverage of ``k`` actions: the least of everyone
    coverable, the ``k`` largest single coverages summed, and greedy's guarantee."""
    everyone = float(works.any(axis=0).sum())
    singles = float(np.sort(works.sum(axis=1))[::-1][:k].sum())
    ratio = 1.0 - (1.0 - 1.0 / k) ** k
    return float(min(everyone, singles, math.floor(n_greedy / ratio + 1e-9)))


def exact(
    works: np.ndarray, k: int, start: list[int], time_limit: float
) -> tuple[list[int], bool, float, str]:
    """The max-coverage MILP on the patterns of ``works`` (see the module docstring),
    started from ``start``: the chosen actions, whether proven optimal, the bound, the status."""
    cols, w = patterns(works)
    A, U = cols.shape
    m = Model("global-recourse")
    z = m.add_vars(A, 0.0, 1.0, integer=True, name="z")
    y = m.add_vars(U, 0.0, 1.0, name="y")
    if U:  # y_u - sum_{a covers u} z_a <= 0
        rows = sp.hstack(
            [sp.identity(U, format="csr"), -sp.csr_matrix(cols.T.astype(float))], format="csr"
        )
        m.add_rows([*y, *z], rows, -np.inf, 0.0)
        m.add_objective(Expr({v.index: -float(c) for v, c in zip(y, w, strict=True)}))
    m.add_rows(z, np.ones((1, A)), -np.inf, float(k))
    x0 = np.zeros(A + U)
    if start:
        x0[start] = 1.0
        x0[A:] = cols[start].any(axis=0)
    sol = m.solve("highs", time_limit=time_limit, start=x0)
    covered = int(works[start].any(axis=0).sum()) if start else 0
    chosen = list(start)
    if sol.x is not None:
        picked = [a for a in range(A) if sol.x[a] > 0.5]
        if picked and int(works[picked].any(axis=0).sum()) >= covered:
            chosen, covered = picked, int(works[picked].any(axis=0).sum())
    optimal = sol.status == "optimal"
    if optimal:
        bound = float(covered)
    elif math.isfinite(sol.bound):  # the objective is minus the people covered
        bound = float(min(math.floor(-sol.bound + 1e-6), w.sum()))
    else:
        bound = _greedy_bound(works, k, covered)
    return chosen, optimal, max(bound, float(covered)), sol.status


def choose(
    works: np.ndarray,
    cost: np.ndarray | None,
    k: int,
    solver: str = "auto",
    time_limit: float = 10.0,
) -> Choice:
    """At most ``k`` actions: the most people covered, then the least cost (see the module
    docstring)."""
    if solver not in SOLVERS:
        raise ValidationError(f"solver must be one of {list(SOLVERS)}. Got {solver!r}.")
    t0 = time.perf_counter()
    start = greedy(works, k, cost, fill=False)
    n_greedy = int(works[start].any(axis=0).sum()) if start else 0
    everyone = n_greedy >= int(works.any(axis=0).sum())  # greedy covers everyone any candidate can
    small = int(patterns(works)[0].sum()) <= AUTO_MILP_NONZEROS and is_available("highspy")
    if not everyone and (solver == "milp" or (solver == "auto" and small)):
        chosen, optimal, bound, status = exact(works, k, start, time_limit)
        name = "milp"
    else:
        bound = float(n_greedy) if everyone else _greedy_bound(works, k, n_greedy)
        chosen, optimal, status, name = (
            start,
            bound <= n_greedy,
            "optimal" if bound <= n_greedy else "greedy",
            "greedy",
        )
    chosen = improve(works, cost, chosen, k)
    n = int(works[chosen].any(axis=0).sum()) if chosen else 0
    order = _order(works, cost, chosen)
    return Choice(
        order,
        n,
        optimal or n >= bound,
        max(bound, float(n)),
        name,
        status,
        time.perf_counter() - t0,
    )


def _order(works: np.ndarray, cost: np.ndarray | None, chosen: list[int]) -> tuple[int, ...]:
    """``chosen`` in the order greedy would add them."""
    if not chosen:
        return ()
    sub = greedy(works[chosen], len(chosen), None if cost is None else cost[chosen])
    rest = [i for i in range(len(chosen)) if i not in sub]
    return tuple(int(chosen[i]) for i in [*sub, *rest])
