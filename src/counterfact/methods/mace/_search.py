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

from ..._utils._deadline import Deadline

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
    """``check(bound, deadline)``: is there a counterfactual at distance <= ``bound``?

    ``bound=None`` is the unbounded check.  The call ends by ``deadline`` (a
    :class:`~counterfact._utils._deadline.Deadline`; the oracle takes what is
    left as its solver's time limit).  A timed-out call answers ``unknown``.
    """

    def check(self, bound: float | None, deadline: Deadline) -> Answer: ...


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
    deadline: Deadline | None = None,
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
    start = time.perf_counter()
    calls = 0
    deadline = deadline or Deadline.none()

    def done(status: str, point: Any, lo: float, hi: float) -> SearchOutcome:
        return SearchOutcome(status, point, lo, hi, calls, time.perf_counter() - start)

    lo = max(0.0, float(lower))
    if initial is not None and initial.verdict == "sat":
        first = initial  # a known counterfactual is kept even when no time is left
    else:
        if deadline.expired():
            return done("timeout", None, lo, math.inf)
        first = oracle.check(None, deadline)
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
        if deadline.expired():
            return done("feasible", best, lo, hi)
        mid = (lo + hi) / 2.0
        ans = oracle.check(mid, deadline)
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
