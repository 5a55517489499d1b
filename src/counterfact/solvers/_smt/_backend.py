"""The Z3 backend: MACE's satisfiability oracle on exact rationals (:mod:`._oracle`)."""

from __future__ import annotations

from typing import Any

from .._problem import Search
from .._registry import Solver, register
from ._encoder import ENCODERS
from ._oracle import Z3Oracle

__all__ = ["Z3Solver"]


@register
class Z3Solver(Solver):
    """Z3 (SMT): linear models, MLPs and tree ensembles, every constraint kind, exactly."""

    name = "z3"
    requires = ("z3",)
    summary = "Z3 (SMT, exact rationals): linear models, MLPs, tree ensembles"

    def supports(self, problem: Any = None) -> str | None:
        why = self.missing()
        if why is not None or problem is None:
            return why
        if not isinstance(problem, Search):
            return "Z3 decides SMT formulas; it does not solve MILP models"
        for model in (problem.compiled, *(o for o, _ in problem.others)):
            if not any(cls in ENCODERS for cls in type(model.estimator).__mro__):
                return (
                    f"the Z3 encoder does not encode the IR node {type(model.estimator).__name__}"
                )
        return None

    def build(self, problem: Search) -> Z3Oracle:
        return Z3Oracle(
            problem.problem,
            problem.compiled,
            random_seed=problem.seed,
            cache=problem.cache,
            others=problem.others,
        )
