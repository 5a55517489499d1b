"""CP-SAT (OR-Tools): MACE's oracle for tree ensembles (:mod:`._oracle`) and its backend
(:mod:`._backend`).  OR-Tools is imported only when an oracle is built."""

from ._backend import CpsatSolver
from ._oracle import CpsatOracle

__all__ = ["CpsatOracle", "CpsatSolver"]
