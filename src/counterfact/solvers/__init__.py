"""The solvers behind the exact methods, as a registry of backends (the ``solver=`` choice).

Each backend is one class (a :class:`Solver` subclass) with a ``name``, the
modules it ``requires``, :meth:`Solver.supports` (``None``, or the reason it
cannot take a problem) and :meth:`Solver.build` (the oracle that searches
it); MILP backends (:class:`MilpSolver`) also solve a whole MILP model.
Registered here:

* ``"z3"`` -- Z3 (SMT, exact rationals): linear models, MLPs, tree ensembles;
* ``"highs"``, ``"scip"`` -- HiGHS and SCIP (MILP): every model the MILP
  encoder states (ReLU networks, scorecards, linear models, tree ensembles);
  CE-OCL's whole program;
* ``"cpsat"`` -- CP-SAT (OR-Tools): tree ensembles;
* ``"bnb"`` -- branch and bound over a tree ensemble's boxes (pure numpy).

``MACE(solver=...)`` and ``CEOCL(solver=...)`` take these names or ``"auto"``;
:func:`names` lists them, :func:`get` returns one, and :func:`register` adds
yours (its tests beside it)::

    from counterfact.solvers import Solver, register

    @register
    class MySolver(Solver):
        name = "mine"
        requires = ("mysolver",)

        def supports(self, problem=None):
            return self.missing() or ...  # None, or why not

        def build(self, search):
            return MyOracle(search.problem, search.compiled)

The encoders and modelling layers are private subpackages (``_milp``,
``_smt``, ``_cpsat``, ``_bnb``); nothing imports a solver package (z3,
highspy, pyscipopt, ortools) until a problem is built.
"""

from __future__ import annotations

from . import _bnb, _cpsat, _milp, _smt  # noqa: F401  (each registers its backends)
from ._registry import MilpSolver, Solver, get, names, register

__all__ = ["MilpSolver", "Solver", "get", "names", "register"]
