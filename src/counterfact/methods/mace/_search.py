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

The search stops on a gap *relative* to the answer's distance
(:class:`Tolerance`): ``delta_max - delta_min <= max(rel_gap * delta_max,
abs_floor)``, where ``abs_floor`` lies far below the smallest distance step of
the data.  An absolute gap alone says nothing about a distance smaller than it
(a range-normalised distance is divided by the number of features and is often
below 1e-3).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..._utils._deadline import Deadline
from ...solvers._oracle import Answer, Oracle

__all__ = ["Answer", "Oracle", "SearchOutcome", "Tolerance", "binary_search"]


@dataclass(frozen=True)
class Tolerance:
    """When the search may stop: the gap relative to the answer's distance, with an
    absolute floor far below the smallest distance step of the data."""

    rel_gap: float
    abs_floor: float = 0.0

    def closed(self, lo: float, hi: float) -> bool:
        """Whether ``[lo, hi]`` proves ``hi`` within the tolerance of the optimum."""
        return hi - lo <= max(self.rel_gap * hi, self.abs_floor)


@dataclass
class SearchOutcome:
    """What Algorithm 1 returns, plus bookkeeping.

    ``status``: ``optimal`` (``tolerance.closed(delta_min, delta_max)``), ``feasible``
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
    tolerance: Tolerance,
    *,
    lower: float = 0.0,
    deadline: Deadline | None = None,
    initial: Answer | None = None,
) -> SearchOutcome:
    """Nearest counterfactual within ``tolerance`` (Karimi et al. 2020, Algorithm 1).

    Parameters
    ----------
    oracle : Oracle
        Satisfiability oracle over "counterfactual and distance <= bound".
    tolerance : Tolerance
        Stop when ``delta_max - delta_min <= max(rel_gap * delta_max, abs_floor)``.
    lower : float
        A distance already proven to admit no counterfactual (e.g. the bound of
        a previous, less constrained search); the search starts there.
    deadline : Deadline, optional
        No new call starts after it; each call ends by it.
    initial : Answer, optional
        A known SAT answer (a point proven to be a counterfactual, e.g. an
        observed row checked by the oracle): the search starts with
        ``delta_max = d(point)`` instead of the unbounded check.

    Returns
    -------
    SearchOutcome
    """
    clock = _Clock(time.perf_counter())
    deadline = deadline or Deadline.none()
    lo = max(0.0, float(lower))
    if initial is not None and initial.verdict == "sat":
        first = initial  # a known counterfactual is kept even when no time is left
    else:
        if deadline.expired():
            return clock.done("timeout", None, lo, math.inf)
        first = oracle.check(None, deadline)
        clock.calls += 1
    if first.verdict == "unsat":
        return clock.done("infeasible", None, lo, math.inf)
    if first.verdict == "unknown":
        return clock.done("timeout", None, lo, math.inf)
    hi = float(first.distance)  # type: ignore[arg-type]
    if first.lower_bound is not None:
        lo = max(lo, float(first.lower_bound))
    return _bisect(oracle, tolerance, deadline, clock, first.point, min(lo, hi), hi)


@dataclass
class _Clock:
    """The search's start time and oracle calls so far."""

    start: float
    calls: int = 0

    def done(self, status: str, point: Any, lo: float, hi: float) -> SearchOutcome:
        return SearchOutcome(status, point, lo, hi, self.calls, time.perf_counter() - self.start)


def _bisect(
    oracle: Oracle,
    tolerance: Tolerance,
    deadline: Deadline,
    clock: _Clock,
    best: Any,
    lo: float,
    hi: float,
) -> SearchOutcome:
    """Halve ``[lo, hi]`` (``best`` lies at ``hi``) until ``tolerance`` closes it."""
    while not tolerance.closed(lo, hi):
        if deadline.expired():
            return clock.done("feasible", best, lo, hi)
        mid = (lo + hi) / 2.0
        ans = oracle.check(mid, deadline)
        clock.calls += 1
        if ans.verdict == "sat":
            best = ans.point
            hi = min(mid, float(ans.distance)) if ans.distance is not None else mid
            if ans.lower_bound is not None:
                lo = max(lo, min(float(ans.lower_bound), hi))
        elif ans.verdict == "unsat":
            lo = mid if ans.lower_bound is None else max(mid, min(float(ans.lower_bound), hi))
        else:
            return clock.done("feasible", best, lo, hi)
    return clock.done("optimal", best, lo, hi)
