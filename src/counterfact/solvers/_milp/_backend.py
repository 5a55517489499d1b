"""The MILP backends, HiGHS and SCIP: they solve a :class:`~._model.Model`
(:meth:`~._model.Model.solve`, CE-OCL) and answer MACE's searches through the
MILP oracle (:mod:`._oracle`)."""

from __future__ import annotations

from typing import Any

from .._problem import Search
from .._registry import MilpSolver, register
from ._highs import solve_highs
from ._oracle import MipOracle
from ._scip import solve_scip
from ._solution import Solution, SolveSettings
from ._sparse import SparseModel

__all__ = ["HighsSolver", "ScipSolver"]


class _Milp(MilpSolver):
    """What both MILP backends share: a search becomes a :class:`MipOracle`."""

    def supports(self, problem: Any = None) -> str | None:
        return self.missing()

    def build(self, problem: Search) -> MipOracle:
        return MipOracle(
            problem.problem,
            problem.compiled,
            problem.schema,
            rel_gap=float(problem.rel_gap),
            random_seed=problem.seed,
            backend=self.name,
            others=problem.others,
        )


@register
class HighsSolver(_Milp):
    """HiGHS: LPs, MILPs and convex QPs without integer variables (``threads``, warm starts)."""

    name = "highs"
    requires = ("highspy",)
    summary = "HiGHS (MILP)"

    def solve(self, model: SparseModel, settings: SolveSettings) -> Solution:
        s = settings
        return solve_highs(
            model,
            s.time_limit,
            s.gap,
            s.threads,
            s.seed,
            s.feastol,
            s.keep_solutions,
            s.verbose,
            s.options,
            s.start,
            cancel=s.cancel,
        )


@register
class ScipSolver(_Milp):
    """SCIP: MILPs and convex MIQPs (quadratic terms in one epigraph row)."""

    name = "scip"
    requires = ("pyscipopt",)
    summary = "SCIP (MILP, MIQP)"

    def solve(self, model: SparseModel, settings: SolveSettings) -> Solution:
        s = settings
        return solve_scip(
            model,
            s.time_limit,
            s.gap,
            s.seed,
            s.feastol,
            s.keep_solutions,
            s.max_solutions,
            s.verbose,
            s.options,
            cancel=s.cancel,
        )
