"""The branch-and-bound backend for tree ensembles (:mod:`._oracle`); pure numpy."""

from __future__ import annotations

from typing import Any

from .._problem import Search
from .._registry import Solver, register
from ._oracle import BnbOracle, bnb_unsupported

__all__ = ["BnbSolver"]


@register
class BnbSolver(Solver):
    """Best-first branch and bound over the boxes a tree ensemble's splits cut: the exact
    nearest counterfactual, for one answer per query."""

    name = "bnb"
    requires = ()
    summary = "branch and bound over a tree ensemble's boxes (exact, one answer per query)"

    def supports(self, problem: Any = None) -> str | None:
        if problem is None:
            return None
        if not isinstance(problem, Search):
            return "the branch-and-bound searches tree ensembles; it does not solve MILP models"
        p = problem.problem
        why = bnb_unsupported(
            bool(p.blocked), problem.compiled, problem.others, relations=bool(p.relations)
        )
        if why is None and p.timeline is not None:
            why = "a timeline (elapsed months)"
        return None if why is None else f"the branch-and-bound does not search {why}"

    def build(self, problem: Search) -> BnbOracle:
        return BnbOracle(
            problem.problem, problem.compiled, others=problem.others, cache=problem.cache
        )
