"""MACE's Algorithm 1: binary search on the distance bound over a satisfiability oracle.

The search is a plain function over an :class:`Oracle`; it knows nothing about
models, features or solvers.  Karimi et al. (AISTATS 2020), Algorithm 1, with
these refinements that keep its guarantee:

* the upper bound is tightened to the distance of the point the oracle
  returned (``hi := d(x)``, never more than the midpoint) instead of the
  midpoint itself, which saves calls;
* the search starts with an *unbounded* check (or, given a known
  counterfactual such as an observed row, at its distance), so that a query with no
  counterfactual at all is reported ``infeasible`` after one call, and queries
  whose nearest counterfactual lies beyond 1 (a query outside the observed
  range) are still handled;
* an oracle may return a proven lower bound with its answer (a MILP's dual
  bound, or the next attainable value of a discrete distance such as l0
  after an UNSAT answer); the search then raises ``lo`` to it.  The
  certificate is: no counterfactual lies at a distance below ``delta_min``
  (the paper's is strict, ``> delta_min``; with these bounds it can be
  attained, so ``delta_min == delta_max`` is possible and means exact).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["Answer", "Oracle", "SearchOutcome", "binary_search"]

Verdict = Literal["sat", "unsat", "unknown"]


@dataclass
class Answer:
    """One oracle call's answer.

    ``point`` is the satisfying assignment (oracle-specific, decoded later),
    ``distance`` its distance as the oracle computed it, and ``lower_bound`` an
    optional proof that no counterfactual lies at a distance below it (for a
    SAT answer: none of those within the asked bound).
    """

    verdict: Verdict
    point: Any = None
    distance: float | None = None
    lower_bound: float | None = None


class Oracle(Protocol):
    """``check(bound, time_limit)``: is there a counterfactual at distance <= ``bound``?

    ``bound=None`` is the unbounded check.  ``time_limit`` is in seconds (None:
    no limit).  A timed-out call answers ``unknown``.
    """

    def check(self, bound: float | None, time_limit: float | None) -> Answer: ...


@dataclass
class SearchOutcome:
    """What Algorithm 1 returns, plus bookkeeping.

    ``status``: ``optimal`` (``delta_max - delta_min <= epsilon``), ``feasible``
    (a point was found but the search stopped early: time limit or an
    ``unknown`` answer), ``infeasible`` (the unbounded check was UNSAT) or
    ``timeout`` (no point found in time).
    """

    status: str
    point: Any
    delta_min: float
    delta_max: float
    n_calls: int
    seconds: float


def binary_search(
    oracle: Oracle,
    epsilon: float,
    *,
    lower: float = 0.0,
    deadline: float | None = None,
    initial: Answer | None = None,
) -> SearchOutcome:
    """Nearest counterfactual within ``epsilon`` (Karimi et al. 2020, Algorithm 1).

    Parameters
    ----------
    oracle : Oracle
        Satisfiability oracle over "counterfactual and distance <= bound".
    epsilon : float
        Stop when ``delta_max - delta_min <= epsilon``.
    lower : float
        A distance already proven to admit no counterfactual (e.g. the bound of
        a previous, less constrained search); the search starts there.
    deadline : float, optional
        ``time.perf_counter()`` value after which no new call starts; each call
        gets the time left as its limit.
    initial : Answer, optional
        A known SAT answer (a point proven to be a counterfactual, e.g. an
        observed row checked by the oracle): the search starts with
        ``delta_max = d(point)`` instead of the unbounded check.

    Returns
    -------
    SearchOutcome
    """
    start = time.perf_counter()
    calls = 0

    def left() -> float | None:
        if deadline is None:
            return None
        return deadline - time.perf_counter()

    def done(status: str, point: Any, lo: float, hi: float) -> SearchOutcome:
        return SearchOutcome(status, point, lo, hi, calls, time.perf_counter() - start)

    lo = max(0.0, float(lower))
    budget = left()
    if initial is not None and initial.verdict == "sat":
        first = initial  # a known counterfactual is kept even when no time is left
    else:
        if budget is not None and budget <= 0:
            return done("timeout", None, lo, math.inf)
        first = oracle.check(None, budget)
        calls += 1
    if first.verdict == "unsat":
        return done("infeasible", None, lo, math.inf)
    if first.verdict == "unknown":
        return done("timeout", None, lo, math.inf)
    best = first.point
    hi = float(first.distance)  # type: ignore[arg-type]
    if first.lower_bound is not None:
        lo = max(lo, float(first.lower_bound))
    lo = min(lo, hi)
    while hi - lo > epsilon:
        budget = left()
        if budget is not None and budget <= 0:
            return done("feasible", best, lo, hi)
        mid = (lo + hi) / 2.0
        ans = oracle.check(mid, budget)
        calls += 1
        if ans.verdict == "sat":
            best = ans.point
            hi = min(mid, float(ans.distance)) if ans.distance is not None else mid
            if ans.lower_bound is not None:
                lo = max(lo, min(float(ans.lower_bound), hi))
        elif ans.verdict == "unsat":
            lo = mid if ans.lower_bound is None else max(mid, min(float(ans.lower_bound), hi))
        else:
            return done("feasible", best, lo, hi)
    return done("optimal", best, lo, hi)
