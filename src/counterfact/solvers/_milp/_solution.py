"""What a MILP solve takes (:class:`SolveSettings`), returns (:class:`Solution`) and raises
(:class:`SolverError`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._utils._deadline import CancelToken
from ...exceptions import CounterfactError
from ._expr import Term, as_expr

__all__ = ["Solution", "SolveSettings", "SolverError"]


@dataclass(frozen=True)
class SolveSettings:
    """The settings of one :meth:`~counterfact.solvers._milp.Model.solve` call (its
    keywords), as a MILP backend receives them.

    Attributes
    ----------
    time_limit : float, optional
        Seconds (wall clock, the solver's own timer).
    gap : float
        Relative MIP gap at which a solution counts as optimal.
    threads : int
        HiGHS threads (SCIP is single-threaded).
    seed : int
        Solver random seed.
    feastol : float, optional
        Primal feasibility tolerance (solver default otherwise).
    keep_solutions : bool
        Fill :attr:`Solution.pool` with the solver's stored incumbents.
    max_solutions : int
        How many incumbents SCIP stores (``limits/maxsol``); HiGHS: unused.
    verbose : bool
        Print the solver's log.
    options : dict, optional
        Extra native solver options (HiGHS option names / SCIP parameter
        paths), set after ours, e.g. ``{"presolve": "off"}`` for HiGHS.
    start : dict or ndarray, optional
        A starting solution for HiGHS: every variable's value (an array,
        checked as is), or a partial one, variable index -> value (HiGHS
        completes it with a sub-MIP, which can overrun the time limit on
        large models).  An infeasible start is ignored.  SCIP: ignored.
    cancel : CancelToken, optional
        Stops the solve once cancelled (from another thread): HiGHS at its
        next interrupt check, SCIP through its interrupt; the answer is then
        the best incumbent so far (``feasible``) or none (``timeout``).
    """

    time_limit: float | None = None
    gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    feastol: float | None = None
    keep_solutions: bool = False
    max_solutions: int = 100
    verbose: bool = False
    options: dict[str, Any] | None = None
    start: dict[int, float] | np.ndarray | None = None
    cancel: CancelToken | None = None


class SolverError(CounterfactError, RuntimeError):
    """A model cannot be emitted or solved (unbounded big-M, MIQP on HiGHS, bad backend)."""


@dataclass
class Solution:
    """What a solve returned.

    ``x`` holds every variable's value (``None`` without a solution);
    ``pool`` the other stored incumbents (value vectors, best first, the
    returned one excluded).  ``gap`` is the relative MIP gap (0 when proven
    optimal, ``inf`` when unknown).
    """

    status: str
    backend: str
    objective: float = math.nan
    bound: float = math.nan
    gap: float = math.inf
    nodes: int = 0
    seconds: float = 0.0
    x: np.ndarray | None = None
    pool: list[np.ndarray] = field(default_factory=list)
    message: str = ""

    @property
    def has_solution(self) -> bool:
        return self.x is not None

    def value(self, e: Term, x: np.ndarray | None = None) -> float:
        """Value of a variable or expression in this solution (or in ``x``)."""
        x = self.x if x is None else x
        if x is None:
            raise SolverError(
                f"The solve ended with status {self.status!r} and has no solution to read."
            )
        ex = as_expr(e)
        return float(sum(c * x[k] for k, c in ex.terms.items()) + ex.const)
