"""MILP: the in-house modelling layer, its HiGHS / SCIP emitters, and the MILP encoder of the IR.

Used by CE-OCL (the whole counterfactual MILP) and by MACE's MILP oracle for
ReLU networks (:mod:`._oracle`).  The backends :class:`HighsSolver` and
:class:`ScipSolver` (:mod:`._backend`) are registered in :mod:`counterfact.solvers`.  Private
modules, everything re-exported here:

* :mod:`._expr` -- affine expressions (:class:`Var`, :class:`Expr`,
  :func:`lin`, :func:`quicksum`);
* :mod:`._sparse` -- the stored columns, rows (CSR) and objective
  (:class:`SparseModel`), what the emitters read;
* :mod:`._model` -- the modelling layer (:class:`Model`: rows from
  expressions, big-M helpers from bounds, :meth:`Model.solve`);
* :mod:`._solution` -- :class:`Solution` and :class:`SolverError`;
* :mod:`._highs`, :mod:`._scip` -- the emitters the backends call;
* :mod:`._inputs`, :mod:`._encoder`, :mod:`._trees` -- the encoder of the
  compiled model's IR (:data:`ENCODERS`: IR estimator node -> encoder);
* :mod:`._regressor` -- fitted regressors for learned causal constraints;
* :mod:`._relations` -- relations between features (:func:`encode_relations`).

The encoder runs in three steps, each a plain function:

1. :func:`encode_inputs` -- the raw input vector ``z`` of one query (the
   :class:`~counterfact.models._compile.InputSpace` layout: numeric raw values,
   one 0/1 indicator per category, ordinal ranks) as variables whose domain is
   the query's :class:`~counterfact.constraints._bounds.QueryBounds`: one-hot
   coherence (``sum = 1``, disallowed categories fixed to 0), integer domains,
   immutables (fixed), directions and ranges (bounds), finite allowed values
   (value indicators), and optionally *change indicators* ``b_j`` with direction
   binaries ``u_j + w_j = b_j`` (``u_j => x_j >= q_j + step``, ``w_j => x_j <=
   q_j - step``, ``b_j = 0 => x_j = q_j``; ``reference/solvers.md`` §4: without
   the direction binaries a no-good cut can be dodged with a zero change), the
   change cap ``sum_j b_j <= K``.
2. :func:`encode_model` -- the estimator on ``z`` by its :data:`ENCODERS`
   entry: :class:`~counterfact.models._compile.Linear` as rows,
   :class:`~counterfact.models._compile.MLP` with big-M ReLUs whose bounds come
   from interval arithmetic over the query's box (stable units need no binary),
   :class:`~counterfact.models._compile.TreeEnsemble` in Mišić's split-variable
   formulation (one binary per distinct raw cut per feature,
   ``y_{j,k} = 1 <=> z_j <= t_k``, ordered ``y_{j,k} <= y_{j,k+1}``;
   continuous leaf variables per tree; categorical splits read the one-hot
   indicators directly), then the decision rule's target region with every
   condition as ``coef @ y >= rhs + margin`` (margin 1e-4 by default; a
   disjunction gets one binary per conjunction).  A node without an entry
   raises :class:`~counterfact.exceptions.UnsupportedModelError`.
3. :func:`feature_deltas` -- per-feature normalised deviations
   ``|x_j - q_j| / scale_j`` (categorical: the change indicator), from which
   callers build their distance (MACE's normalised l0/l1/linf, CE-OCL's l1/l2).

:func:`cost_terms` (:mod:`._costs`) gives each feature's cost under
:class:`~counterfact.constraints.Costs` as exact terms (epigraphs, one-hot
sums, a segment formulation for a percentile curve).

:func:`cut_cost_bounds` and :func:`link_changes` (:mod:`._intervals`) tie a
feature's cost and change indicators to the tree cuts it crosses (valid rows
that tighten the relaxation of a tree ensemble's template,
:attr:`Template.cuts`); :func:`snap_to_cuts` moves an answer's real values
onto the sides of the cuts its binaries chose.

:func:`decode` turns a solution back into a raw row, :func:`no_good_superset`
adds the cut that excludes every superset of an earlier change set, and
:func:`encode_regressor` embeds a fitted regressor (linear models, ReLU
``MLPRegressor``, optionally behind scalers) for learned causal constraints.

Example (MACE-style feasibility of "a counterfactual within distance ``d``")::

    m = Model()
    inp = encode_inputs(m, compiled.inputs, query.bounds, changes=False)
    encode_model(m, compiled, inp.z, query.target_index)
    deltas = feature_deltas(m, inp, scales=schema.ranges())
    m.add_le(quicksum(deltas) * (1 / len(deltas)), d)      # normalised l1
    sol = m.solve("highs", time_limit=10)
    row = decode(inp, sol.x) if sol.has_solution else None
"""

from ._backend import HighsSolver, ScipSolver
from ._costs import cost_terms
from ._encoder import (
    ENCODERS,
    Template,
    encode_decision,
    encode_model,
    encode_outputs,
    encode_template,
)
from ._expr import Expr, Term, Var, as_expr, lin, quicksum
from ._inputs import (
    REAL_STEP,
    FeatureVars,
    RawInputs,
    add_change_limit,
    changed_set,
    declare_inputs,
    decode,
    encode_inputs,
    exclude_point,
    feature_deltas,
    no_good_superset,
    restrict_inputs,
)
from ._intervals import cut_cost_bounds, link_changes, snap_to_cuts
from ._model import Model
from ._oracle import MipOracle
from ._regressor import SCALERS, encode_regressor
from ._relations import encode_relations, lattice_steps
from ._solution import Solution, SolverError, SolveSettings
from ._sparse import INF, SparseModel
from ._tolerance import FEASIBILITY_TOLERANCE, bound_slack
from ._trees import SPLIT_ABS, SPLIT_TOL, FeatureCuts, encode_trees

__all__ = [
    "ENCODERS",
    "FEASIBILITY_TOLERANCE",
    "INF",
    "REAL_STEP",
    "SCALERS",
    "SPLIT_ABS",
    "SPLIT_TOL",
    "Expr",
    "FeatureCuts",
    "FeatureVars",
    "HighsSolver",
    "MipOracle",
    "Model",
    "RawInputs",
    "ScipSolver",
    "Solution",
    "SolveSettings",
    "SolverError",
    "SparseModel",
    "Template",
    "Term",
    "Var",
    "add_change_limit",
    "as_expr",
    "bound_slack",
    "changed_set",
    "cost_terms",
    "cut_cost_bounds",
    "declare_inputs",
    "decode",
    "encode_decision",
    "encode_inputs",
    "encode_model",
    "encode_outputs",
    "encode_regressor",
    "encode_relations",
    "encode_template",
    "encode_trees",
    "exclude_point",
    "feature_deltas",
    "lattice_steps",
    "lin",
    "link_changes",
    "no_good_superset",
    "quicksum",
    "restrict_inputs",
    "snap_to_cuts",
]
