"""What every satisfiability oracle answers: :class:`Answer`, and the :class:`Oracle` protocol.

An oracle answers "is there a counterfactual at distance <= ``bound``?" for one
query (:class:`~counterfact.solvers._problem.Problem`); MACE's search
(Algorithm 1) drives it.  The oracles live beside their solvers: Z3 in
:mod:`._smt`, HiGHS / SCIP in :mod:`._milp`, CP-SAT in :mod:`._cpsat`, the
branch-and-bound for tree ensembles in :mod:`._bnb`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .._utils._deadline import Deadline

__all__ = ["Answer", "Oracle", "Verdict"]

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
