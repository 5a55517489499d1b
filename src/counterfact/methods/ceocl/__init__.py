"""CE-OCL: counterfactual explanations as a mixed-integer program (Maragno, Röber & Birbil 2022).

* :mod:`._method` -- the :class:`CEOCL` class (parameters, fit, the per-query loop:
  solve, re-check, margin retry, diversity re-solves);
* :mod:`._formulation` -- the MIP of one query (distance, sparsity, validity,
  actionability) on :mod:`counterfact.solvers._milp`;
* :mod:`._trust` -- the (epsilon-enlarged, clustered) convex-hull trust region;
* :mod:`._causal` -- structural equations and learned causal constraints (eq. 7).
"""

from ._method import CEOCL

__all__ = ["CEOCL"]
