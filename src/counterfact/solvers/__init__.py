"""Solver backends for the exact methods.

* :mod:`counterfact.solvers.z3_backend` -- the compiled-model IR as Z3 formulas
  (MACE's default oracle for linear models and tree ensembles);
* :mod:`counterfact.solvers.mip` -- the in-house sparse MIP layer (HiGHS, SCIP)
  and the MIP encoding of the IR (CE-OCL, and MACE's oracle for ReLU networks).

Each backend is a lookup table from IR node to solver constraints; a node a
backend cannot encode raises :class:`~counterfact.exceptions.UnsupportedModelError`
naming the node, the backend and the alternative.  Nothing here imports a
solver until it is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["has_relu"]


def has_relu(compiled: Any) -> bool:
    """Whether a compiled model contains ReLU units (then MACE's MIP oracle is the default)."""
    from .z3_backend import has_relu as _has_relu

    return _has_relu(compiled)
