"""What a MILP solve returns (:class:`Solution`) and the error it raises (:class:`SolverError`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...exceptions import CounterfactError
from ._expr import Term, as_expr

__all__ = ["Solution", "SolverError"]


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
