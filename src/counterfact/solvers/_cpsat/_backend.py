"""The CP-SAT backend: MACE's oracle for tree ensembles on OR-Tools (:mod:`._oracle`)."""

from __future__ import annotations

from typing import Any

from ...models._compile import TreeEnsemble
from .._problem import Search
from .._registry import Solver, register
from ._oracle import CpsatOracle

__all__ = ["CpsatSolver"]


@register
class CpsatSolver(Solver):
    """CP-SAT (OR-Tools): a Boolean/integer model over a tree ensemble's split intervals."""

    name = "cpsat"
    requires = ("ortools",)
    summary = "CP-SAT (OR-Tools): tree ensembles"

    def supports(self, problem: Any = None) -> str | None:
        why = self.missing()
        if why is not None or problem is None:
            return why
        if not isinstance(problem, Search):
            return (
                "CP-SAT searches a tree ensemble's split intervals; it does not solve MILP models"
            )
        return _refusal(problem)

    def build(self, problem: Search) -> CpsatOracle:
        return CpsatOracle(problem.problem, problem.compiled, random_seed=problem.seed)


def _refusal(search: Search) -> str | None:
    """What of ``search`` the CP-SAT oracle does not encode (None: it may take it; value
    sets and diversity clauses it finds out while encoding)."""
    p = search.problem
    if p.relations:
        return (
            "the CP-SAT oracle does not encode relations between features (here "
            f"'{p.relations[0].text}'): it searches the ensemble's split intervals, not the "
            "features' values"
        )
    if getattr(p, "timeline", None) is not None:
        return "the CP-SAT oracle does not encode a timeline (elapsed months)"
    if search.others:
        return "the CP-SAT oracle does not encode other models (robust_to)"
    if not isinstance(search.compiled.estimator, TreeEnsemble):
        return f"the CP-SAT oracle searches tree ensembles, not {search.compiled.estimator_class}"
    return None
