"""Encoders of the compiled model's IR for the exact methods, one subpackage per solver kind.

* :mod:`counterfact.solvers.milp` -- the in-house MILP modelling layer
  (:class:`~counterfact.solvers.milp.Model`, expressions,
  :class:`~counterfact.solvers.milp.Solution`), its HiGHS and SCIP emitters,
  and the MILP encoder of the IR (CE-OCL, and MACE's oracle for ReLU networks);
* :mod:`counterfact.solvers.smt` -- the Z3 encoder of the IR and its SMT-LIB
  text helper (MACE's default oracle for linear models and tree ensembles).

Each encoder is a lookup table from IR node class (imported from
:mod:`counterfact.models._compile`) to the function that encodes it:

* ``milp.ENCODERS``: ``Linear``, ``MLP``, ``TreeEnsemble``, ``StepMLP`` -> the estimator's
  outputs as MILP rows (:func:`~counterfact.solvers.milp.encode_decision` then
  adds the target region);
* ``smt.ENCODERS``: ``Linear``, ``MLP``, ``TreeEnsemble`` -> the target region
  as Z3 formulas;
* ``smt.OUTPUT_ENCODERS``: ``Linear``, ``MLP`` -> the outputs as Z3 terms.

Both look a node up by its class, then its base classes (:mod:`._dispatch`); a
node without an entry raises :class:`~counterfact.exceptions.UnsupportedModelError`
naming the node, the encoder and the alternative.  Nothing here imports a
solver (z3, highspy, pyscipopt) until it is used.
"""

from __future__ import annotations

from typing import Any

__all__ = ["has_relu"]


def has_relu(compiled: Any) -> bool:
    """Whether a compiled model contains ReLU units (then MACE's MILP oracle is the default)."""
    return bool(getattr(compiled, "has_relu", False))
