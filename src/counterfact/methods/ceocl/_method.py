"""``cf.CEOCL``: the method class (a thin adapter around the MIP of :mod:`._formulation`)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from ..._utils._validation import Interval, Options, TypeSpec
from ..._utils._values import _py
from ...constraints._bounds import changed
from ...data._dataset import mad
from ...models._compile import TreeEnsemble, compile_model
from ...result import Certificate
from ...result._certificate import coverage_words
from ...solvers import get
from ...solvers._milp import REAL_STEP, changed_set, decode, encode_template, exclude_point
from ...solvers._milp._options import exclude_dominated, require_meaningful
from ...solvers._milp._tolerance import TIE_MARGIN, bound_slack
from ...solvers._options import OPTIONS_PROVEN, options_proven
from ...solvers._problem import solver_values
from ...solvers._registry import SolverChoice, first_available, milp_names
from .._base import CounterfactualMethod, diagnostic
from .._pipeline import Candidates, Query, resolution, solver_steps
from .._pipeline._exact import CompiledViews, ExactModels
from .._tags import MethodTags
from ._formulation import build, solve
from ._starts import MAX_CANDIDATES, StartPool, Starts, objective_values
from ._trust import HullData, prepare_hull
from ._warm import Prepared, prepare, room, solve_limit, z_of

__all__ = ["CEOCL"]

#: A point-diverse counterfactual moves a real feature by at least this share of its range.
DIVERSITY_STEP = 1e-2
#: what further answers of a query exclude (``blocking=``; see the class docstring)
BLOCKINGS: tuple[str, ...] = ("options", "features", "points")
#: Under a time limit with several counterfactuals requested, the first (certified)
#: solve may use at most this share of the time left; the diverse ones share the rest.
FIRST_SHARE = 0.6


class CEOCL(CounterfactualMethod):
    """Counterfactual explanations using optimization with constraint learning.

    Maragno, Röber & Birbil, "Counterfactual Explanations Using Optimization
    With Constraint Learning" (OPT 2022 workshop / arXiv 2209.10997).  The fitted
    model is compiled (:func:`counterfact.models._compile.compile_model`) and
    embedded in a mixed-integer program whose optimum is the nearest
    counterfactual under every requested criterion: validity (eq. 2c, with a
    decision margin), proximity (``norm``), coherence of one-hot groups (eq. 4),
    sparsity penalised by ``alpha`` or capped by ``Constraints(max_changes=K)``
    (eq. 5), actionability (immutables eq. 6, monotone directions, ranges,
    non-negativity through the schema's bounds, allowed values, features to
    vary), data-manifold closeness (the trust region, eq. 3) and causality
    (eq. 7: linear structural equations or fitted regressors through
    :class:`~counterfact.constraints.Causal`).  Distances and the trust region
    are defined in :mod:`._formulation` and :mod:`._trust`.

    *Conditionally immutable* features (Ustun et al. 2019; CE-OCL Table 4's
    employment) are features that may move in one direction only: declare them
    ``increasing``/``decreasing`` (ordinal features by rank; a yes/no feature
    that may only become "yes" is a two-level ordinal).

    Departures from the paper, and why:

    * **Solvers.**  Open-source HiGHS (default) and SCIP through an in-house
      sparse model layer instead of Gurobi through Pyomo/OptiCL
      (``reference/solvers.md``).  HiGHS has no MIQP, so the ``l2`` objective
      uses an exact-at-breakpoints piecewise-linear square followed by an exact
      QP polish of the continuous part, and the integer assignment is then
      certified (or improved) by outer approximation with tangent cuts, so
      ``optimal`` is proven on both backends (``feasible`` with the remaining
      gap when the time limit cuts the certificate short); SCIP solves the
      MIQP exactly.  Above 1000 trust-region points HiGHS runs without
      presolve (2x faster on those dense columns).
    * **Diversity: options, not copies.**  The paper returns the solver's
      pool of incumbents (Gurobi's pool); no open-source solver has Gurobi's
      k-best pool, and incumbents are mostly 10-75x worse than the optimum
      or near-duplicates.  We re-solve up to ``n_counterfactuals - 1`` times
      (the paper's Discussion recommends such iterative cuts when diversity
      matters), by ``blocking``:

      - ``"options"`` (default): the nearest point that *no earlier answer
        dominates* -- for each earlier answer, at least one feature it
        changes keeps the query's value, moves less far on the same side by
        at least the feature's step (integers: the larger of 1 and the
        shared diversity step; reals: that step plus one resolution unit,
        as the answer is snapped to the grid afterwards), or moves the other
        way (another category): one binary per such feature and a sum of at
        least one per earlier answer
        (:func:`counterfact.solvers._milp._options.exclude_dominated`); each
        numeric move is then at least its diversity step, or none.  A point
        that repeats an earlier answer's changes, each at least as far, is
        never searched.  When the MIP is proven infeasible (not a time-out)
        the query has no further option:
        ``diagnostics["alternatives_exhausted"]`` is True and the result
        says so instead of padding; ``n_options`` counts these answers.
      - ``"features"``: exclude every *superset* of each earlier change set
        (``sum_{j in S} b_j <= |S| - 1``: one of the earlier changes must be
        dropped); when no other change set is left, the next nearest points
        that differ from every earlier one in at least one feature (as
        ``"points"``).
      - ``"points"``: the next nearest points that differ from every earlier
        one in at least one feature (the paper's own diversity criterion,
        Sec. 1; a numeric feature must move by more than the shared
        diversity step and a real one by at least 1% of its range);
        ``n_point_diverse`` in the diagnostics counts them.

      With ``solution_pool=True`` the solver's stored incumbents (SCIP's
      solution store, HiGHS's improving solutions) are appended as extra
      candidates (the shared selection drops those an answer dominates).
    * **Validity.**  The classification constraint has a margin (1e-4 on the
      logit / mean probability; the original code put the optimum on the
      boundary and 20-80% of its answers did not flip the model); tree splits
      use scikit-learn's float32 semantics; every answer is re-checked with the
      real model, and a failure is retried once with a 10x larger margin.  A
      forest under ``min_probability`` is first solved down to 1e-5 below the
      required probability instead, since points exactly at it are common
      (``_margins``).
    * **Per-model work in** ``fit``.  A tree ensemble is embedded once (the
      Mišić formulation over the whole input domain, big-M constants from the
      domain); each query copies it and adds only its bounds, change
      indicators, decision region, trust region, causal rows and objective.
      Other models are small and built per query, on the query's box.
    * **Incumbent first** (our addition, for speed; :mod:`._incumbent`).
      Before each solve a short local search in the model's raw space (from
      the nearest observed counterfactuals, single-feature sweeps over the
      tree cuts and a greedy walk from the query) finds a counterfactual;
      its cost ``U`` narrows every feature's box to the values whose own
      cost term is at most ``U`` (the objective is a sum of non-negative
      per-feature terms, so the optimum lies inside: the proven optimum is
      unchanged), and the point, checked in the narrowed MIP with every
      input fixed, is the solver's start.  On 50-tree depth-6 forests this
      made queries 2-15x faster on German Credit and Graduate Admission
      (same optima; on COMPAS, where proving the bound dominates, no
      gain).  When the MIP rejects the point (it does not check the trust
      region) the plain model is solved.
    * **Time limit.**  Per query, building, the incumbent search and
      emitting the model included; a HiGHS run that is still in presolve or
      root cut rounds at the deadline is abandoned (:mod:`counterfact.solvers`).
      On expiry the best verified answer so far is returned (``feasible``);
      with no solver incumbent at all, the local search's counterfactual
      (without a trust region) and the nearest observed counterfactuals
      (``warm_start``), else ``timeout``.  With several counterfactuals
      requested, the first solve may use 60% of the time left.  Only the
      first answer's l2 optimum is certified; the diverse ones are polished.
      HiGHS runs without presolve probing (it dominated the presolve time
      and ignored the clock on 100-tree forests).
    * **Trust region size.**  A seeded subsample or k-means representatives cap
      the hull at ``max_hull_points`` (the paper does not discuss scale).  Every
      answer still lies in the paper's region, but a search of the kept points
      proves nothing about the rest: when the cap leaves points out, ``optimal``
      becomes ``feasible`` (no bound over the whole trust region) and
      ``infeasible`` becomes ``failed``, each saying so
      (``diagnostics["hull_subsampled"]``).

    Parameters
    ----------
    norm : {"l2", "l1", "l0"}
        Distance: squared Euclidean over range-normalised values (the paper's
        case study), MAD-weighted l1, or the number of changed features.
    alpha : float
        Sparsity penalty per changed feature (eq. 5 relaxed into the objective),
        under the method's own objective (``costs="own"``); a measure of effort
        (the default, or the call's costs) is the whole objective and counts
        changes itself.
    distance_scale : {"auto", "range", "mad"}
        Per-feature normaliser of numeric / ordinal differences; ``"auto"``: the
        training data's observed range for l2, MAD for l1.  ``"range"`` uses the
        schema's range (MACE's normalisation, for known-answer comparisons).
    trust_region : {None, "hull", "clusters"}
        Data-manifold constraint: none, the convex hull of target-class training
        points predicted as the target, or the union of per-cluster hulls.
    trust_epsilon : float
        Enlargement of the hull (eq. 3), in range-normalised units.
    trust_norm : {"linf", "l1"}
        Norm of the enlargement slack.
    trust_scope : {"mutable", "all"}
        Coordinates the hull constrains: the ones the query may change
        (default; the query's fixed features are the same for every candidate,
        see :mod:`._trust`) or every feature (the paper's literal region: a
        query whose immutable values no hull point shares is infeasible).
    n_clusters : int
        Clusters of the ``"clusters"`` trust region (k-means, seeded).
    max_hull_points : int or None
        At most this many hull points per class (``None``: all; fewer than the class
        has means no proof over the whole trust region, above).
    hull_sampling : {"random", "kmeans"}
        How points are kept when there are more than ``max_hull_points``.
    solver : {"auto", "highs", "scip"} or another registered MILP solver
        MIP solver (a MILP backend of :mod:`counterfact.solvers`); ``"auto"``: the
        first one installed, HiGHS before SCIP.  The one used is ``solver_``.
    margin : float
        Decision margin of the classification constraint.
    rel_gap : float
        Relative tolerance of ``optimal``, in (0, 1): the first answer is
        ``optimal`` only when the solver's proven relative gap (objective
        minus its lower bound, over the objective) is at most this; a larger
        gap, or one the solver does not prove, is ``feasible`` with the gap in
        the diagnostics and the certificate.
    solution_pool : bool
        Also propose the solver's stored incumbents as candidates.
    blocking : {"options", "features", "points"}
        What further counterfactuals exclude (see *Diversity* above): every
        point an earlier answer dominates, supersets of earlier change sets
        (then points), or points within a step of an earlier answer.
    warm_start : bool
        When the time limit runs out before the solver has any incumbent,
        return the nearest observed counterfactuals (training rows the model
        assigns to the target, within the constraints; :mod:`._starts`) with
        status ``feasible`` instead of none (``timeout``).
    time_limit : float, optional
        Seconds per query (all solves of the query together).
    random_state : int, optional
        Seeds the solvers, k-means and subsampling.
    verbose : int
        Progress output.

    Examples
    --------
    >>> ceocl = cf.CEOCL(norm="l1", alpha=0.1, trust_region="hull", time_limit=30)
    >>> result = ceocl.fit(model, train).explain(test.X.iloc[:5], n_counterfactuals=3)
    """

    name: ClassVar[str] = "ceocl"
    #: search for an incumbent first and narrow the box to its cost (:mod:`._incumbent`);
    #: off only to compare with the plain model
    _narrow: ClassVar[bool] = True
    #: bound each distance term by the tree cuts its feature crosses (:mod:`._formulation`);
    #: off only to compare with the plain model
    _cut_bounds: ClassVar[bool] = True
    #: HiGHS settings for a tree ensemble's model (:data:`._formulation.TREE_OPTIONS`);
    #: off only to compare with HiGHS's defaults
    _tree_options: ClassVar[bool] = True
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="CE-OCL",
        summary=(
            "mixed-integer optimisation embedding the model: sparse, actionable, causal, trust "
            "region, diverse"
        ),
        paper="Maragno, Röber & Birbil, arXiv:2209.10997 (2022)",
        proves_optimality=True,
        proves_infeasibility=True,
        constraints=frozenset(
            {
                "immutable",
                "increasing",
                "decreasing",
                "ranges",
                "allowed_values",
                "features_to_vary",
                "max_changes",
                "causal",
                "relations",
                "timeline",
            }
        ),
        fast_params={"norm": "l1", "time_limit": 20.0, "random_state": 0},
        order=1,
        measure="objective",
        costs="exact",
        own_objective=("norm", "alpha", "distance_scale"),
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "norm": [Options(("l2", "l1", "l0"))],
        "alpha": [Interval(float, 0, None)],
        "distance_scale": [Options(("auto", "range", "mad"))],
        "trust_region": [None, Options(("hull", "clusters"))],
        "trust_epsilon": [Interval(float, 0, None)],
        "trust_norm": [Options(("linf", "l1"))],
        "trust_scope": [Options(("mutable", "all"))],
        "n_clusters": [Interval(int, 2, None)],
        "max_hull_points": [None, Interval(int, 1, None)],
        "hull_sampling": [Options(("random", "kmeans"))],
        "solver": [SolverChoice(milp=True)],
        "margin": [Interval(float, 0, None, closed="neither")],
        "rel_gap": [Interval(float, 0, 1, closed="neither")],
        "solution_pool": [TypeSpec((bool,), "a bool")],
        "warm_start": [TypeSpec((bool,), "a bool")],
        "blocking": [Options(BLOCKINGS)],
    }

    @classmethod
    def certificate_record(
        cls, status: str, diagnostics: Mapping[str, Any] | None = None
    ) -> Certificate:
        """The returned answer's objective (``answer_value``, after rounding to the
        grids), the proven lower bound (the solver's, from its relative gap, less its
        tolerances' slack, never above the answer), the stated tolerance and the
        sentence worded from them (which says when the search proved that no further
        option is left, ``alternatives_exhausted``)."""
        value, lower, slack = _bounds(status, diagnostics)
        record = Certificate(
            status=status,
            sentence="",
            measure=f"{cls.tags.display_name} objective",
            value=value,
            lower_bound=lower,
            rel_gap=diagnostic(diagnostics, "rel_gap"),
            abs_floor=None if slack is None else 2.0 * slack,
            solver_slack=slack,
            answer_margin=diagnostic(diagnostics, "margin"),
            margin_tolerance=_margin_tolerance(diagnostics),
            margin_scale="model output",
            threshold=diagnostic(diagnostics, "target_probability"),
        )
        words = _sentence(cls.tags.display_name, record, diagnostic(diagnostics, "gap"))
        subset = (diagnostics or {}).get("hull_subsampled")
        if subset and status == "feasible":
            words = (
                f"{cls.tags.display_name}: valid; not proven nearest in the trust region: the "
                f"solver searched the hull of {subset} only"
            )
        if words is None:
            words = super().certificate(status, diagnostics)
        if status in ("optimal", "feasible") and options_proven(diagnostics):
            words += OPTIONS_PROVEN
        return replace(record, sentence=words)

    @classmethod
    def certificate(cls, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        return cls.certificate_record(status, diagnostics).sentence

    def answer_value(self, query: Query, row: pd.Series) -> float | None:
        """The returned answer's CE-OCL objective (``norm`` over the scaled features,
        plus ``alpha`` per change; or the call's costs), plus its waiting under a timeline."""
        cost, _ = objective_values(
            self.schema_,
            query.x,
            row.to_frame().T,
            self.scales_,
            self.norm,
            self._alpha(query),
            query.costs,
        )
        timeline = query.bounds.timeline  # the waiting is part of the objective too
        wait = 0.0 if timeline is None else float(timeline.waiting(row.to_frame().T)[0])
        return float(cost[0]) + wait

    def _alpha(self, query: Query) -> float:
        """The sparsity penalty of ``query``'s objective: ``alpha`` under the method's own
        objective, 0 under the call's costs (they are the whole objective, so that a
        proof is about the measure the answer reports)."""
        return 0.0 if query.costs is not None else float(self.alpha)

    def _before_search(self, queries: list[Query], parallel: bool) -> None:
        """A margin or other models the MIP cannot encode exactly raise here, before any search."""
        if queries:
            self.exact_.views(queries[0])

    def _own_region(self) -> bool:
        """With a trust region, the answers' moves are the MIP's own: the pipeline keeps them."""
        return self.trust_region is not None

    def _encodes_margin(self) -> bool:
        """A margin is exact only where the model's probability is a linear function of
        its compiled outputs (the link measured at fit)."""
        return bool(self.exact_.link)

    def measure_name(self) -> str | None:
        return f"CE-OCL objective (norm {self.norm}, alpha {self.alpha})"

    @classmethod
    def guarantee(cls, params: Mapping[str, Any]) -> dict[str, str]:
        tr = params.get("trust_region")
        where = f" inside the trust region ({tr})" if tr else ""
        return {
            "recourse": (
                "CE-OCL: every counterfactual was re-checked with the real model; status "
                "'optimal' is the "
                "proven optimum of its mixed-integer objective, 'feasible' leaves a MIP gap."
            ),
            "none": "CE-OCL 'infeasible': the MIP solver proved that no counterfactual "
            f"exists{where} under the audit's constraints.",
        }

    def __init__(
        self,
        *,
        norm: str = "l2",
        alpha: float = 0.0,
        distance_scale: str = "auto",
        trust_region: str | None = None,
        trust_epsilon: float = 0.0,
        trust_norm: str = "linf",
        trust_scope: str = "mutable",
        n_clusters: int = 5,
        max_hull_points: int | None = 4000,
        hull_sampling: str = "random",
        solver: str = "auto",
        margin: float = 1e-4,
        rel_gap: float = 1e-4,
        solution_pool: bool = True,
        warm_start: bool = True,
        blocking: str = "options",
        time_limit: float | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.norm = norm
        self.alpha = alpha
        self.distance_scale = distance_scale
        self.trust_region = trust_region
        self.trust_epsilon = trust_epsilon
        self.trust_norm = trust_norm
        self.trust_scope = trust_scope
        self.n_clusters = n_clusters
        self.max_hull_points = max_hull_points
        self.hull_sampling = hull_sampling
        self.solver = solver
        self.margin = margin
        self.rel_gap = rel_gap
        self.solution_pool = solution_pool
        self.warm_start = warm_start
        self.blocking = blocking
        self.time_limit = time_limit
        self.random_state = random_state
        self.verbose = verbose

    def _choose_solver(self) -> str:
        """The registry's MILP solver ``solver`` names (``"auto"``: the first installed)."""
        if self.solver == "auto":
            return first_available(milp_names())
        for module in get(str(self.solver)).requires:
            import_optional(module, purpose=f"CE-OCL(solver={self.solver!r})")
        return str(self.solver)

    # ------------------------------------------------------------------ fit
    def _fit(self) -> None:
        #: the MILP solver every query uses (a registry name)
        self.solver_ = self._choose_solver()
        self.compiled_ = compile_model(self.model_.model, self.schema_)
        #: what the MIP embeds per query: the model (with a margin) and any robust_to models
        self.exact_ = ExactModels.of(
            self.compiled_, self.model_, self.schema_, self.data_.X, "CE-OCL"
        )
        self.template_ = self._template()
        X = self.data_.X
        self.starts_ = StartPool(
            self.schema_,
            X,
            np.asarray(self.model_.predict(X)),
            self.classes_,
            0 if self.random_state is None else int(self.random_state),
        )
        self.scales_ = self._scales(X)
        self.hulls_: dict[int, HullData] = {}
        if self.trust_region is not None:
            space = self.compiled_.inputs
            self.hull_scales_ = self._z_scales(X)
            Z = space.encode(X)
            y = self.data_.y.to_numpy()
            pred = np.asarray(self.model_.predict(X))
            seed = 0 if self.random_state is None else int(self.random_state)
            for ci, label in enumerate(self.classes_):
                mask = (y == label) & (pred == label)
                self.hulls_[ci] = prepare_hull(
                    Z[mask],
                    self.hull_scales_,
                    clusters=self.n_clusters if self.trust_region == "clusters" else 1,
                    max_points=self.max_hull_points,
                    sampling=self.hull_sampling,
                    seed=seed,
                )

    def _template(self) -> Any:
        """The tree ensemble embedded once (per-query building cost more than the
        solve on large forests: 2.8 s per query on a 100-tree depth-8 forest)."""
        if isinstance(self.compiled_.estimator, TreeEnsemble):
            return encode_template(self.compiled_)
        return None

    def _scales(self, X: pd.DataFrame) -> np.ndarray:
        """Per-feature normaliser of numeric / ordinal differences (see ``distance_scale``)."""
        kind = self.distance_scale
        if kind == "auto":
            kind = "mad" if self.norm == "l1" else "observed"
        if kind == "mad":
            return mad(X, self.schema_)
        if kind == "range":
            return self.schema_.ranges()
        return self._observed_ranges(X)

    def _observed_ranges(self, X: pd.DataFrame) -> np.ndarray:
        out = np.ones(len(self.schema_))
        for j, f in enumerate(self.schema_):
            if f.is_numeric:
                v = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
                w = float(v.max() - v.min()) if len(v) else 0.0
            elif f.kind == "ordinal":
                w = float(len(f.categories) - 1)  # type: ignore[arg-type]
            else:
                w = 1.0
            out[j] = w if w > 0 else 1.0
        return out

    def _z_scales(self, X: pd.DataFrame) -> np.ndarray:
        rng = self._observed_ranges(X)
        out = np.ones(self.compiled_.inputs.n)
        for j, blk in enumerate(self.compiled_.inputs.blocks):
            if not blk.is_indicator:
                out[blk.start] = rng[j]
        return out

    # -------------------------------------------------------------- explain
    def _explain_one(self, query: Query) -> Candidates:
        seed = int(query.rng.integers(0, 2**31 - 1))
        hull = self.hulls_.get(query.target_index) if self.trust_region is not None else None
        t0 = time.perf_counter()
        starts = Starts(self.starts_, query, self.scales_, self.norm, self._alpha(query))
        solves = _Solves(
            self,
            query,
            seed,
            hull,
            self._observed_z(starts),
            float(self.margin),
            self.exact_.views(query),
        )
        diag: dict[str, Any] = {"solver": self.solver_}
        if query.min_probability is not None:  # what the margin is measured from
            diag["target_probability"] = float(query.min_probability)
        first, obj, form, row, searched = self._first_answer(solves, diag, t0)
        diag.update(form.diagnostics)
        diag.update(
            objective=obj if first.has_solution else float("nan"),
            gap=float(first.gap),
            nodes=int(first.nodes),
            solver_status=first.message,
            margin=solves.margin,
        )
        diag["rel_gap"] = float(self.rel_gap)
        if first.has_solution:  # one distance term per feature (:func:`bound_slack`)
            diag["solver_slack"] = bound_slack(len(self.schema_), obj)
        status = "failed" if first.status in ("unbounded", "error") else first.status
        if status == "optimal" and not float(first.gap) <= float(self.rel_gap):
            status = "feasible"  # the solver's proven gap is larger than the stated one
        status = _subset_proof(status, diag, hull, self.max_hull_points)
        if not first.has_solution:
            diag.update(n_solves=solves.n_solves, solve_seconds=solves.seconds)
            if status == "timeout" and self.warm_start:
                return self._fallback(query, starts, diag, searched)
            return Candidates(pd.DataFrame(columns=self.schema_.names), status, diag)
        found = _Answers([row], [np.asarray(first.x)])
        self._collect_pool(form, first, found.pool)
        # further answers keep a margin above the threshold: a point just below it that the
        # real model rejects must not become a row the next solves are built around
        solves.margin = max(solves.margin, float(self.margin))
        diag.update(self._further(solves, form, found))
        found.pool.sort(key=lambda t: t[0])
        frame = pd.DataFrame(found.rows + [r for _, r in found.pool], columns=self.schema_.names)
        diag.update(n_solves=solves.n_solves, n_pool=len(found.pool), solve_seconds=solves.seconds)
        if status == "timeout":
            status = "feasible"
        return Candidates(frame, status, diag)

    def _first_answer(
        self, solves: _Solves, diag: dict[str, Any], t0: float
    ) -> tuple[Any, float, Any, Any, Any]:
        """The nearest counterfactual: ``(solution, objective, model, decoded row,
        local-search point)``.  When the real model rejects the answer (boundary
        trouble), solved once more with a ten times larger margin."""
        query = solves.query
        searched: Any = None  # the local search's best point (a fallback answer)
        margins = self._margins(query)
        for attempt, margin in enumerate(margins):
            solves.margin = margin
            prep = solves.prepared(query.n_counterfactuals > 1, [])
            searched = prep.incumbent if prep.incumbent is not None else searched
            diag["build_seconds"] = time.perf_counter() - t0
            diag.update(prep.diagnostics)
            sol, obj = solves.run(prep)
            row = None
            if not sol.has_solution:
                break
            row = decode(prep.form.inputs, sol.x)
            valid, _, _ = self.verify(query, pd.DataFrame([row]))
            if valid[0] or attempt == len(margins) - 1 or query.expired():
                break
            t0 = time.perf_counter()
        return sol, obj, prep.form, row, searched

    def _margins(self, query: Query) -> list[float]:
        """The decision margins of the first answer's solves, tried in turn while the real
        model rejects the answer: ``margin``, then ten times it.  A forest's probability
        is an average of leaf values, so under ``min_probability`` a point exactly at the
        required probability is common, and a margin above it would hide it: there the
        first solve asks the probability down to :data:`TIE_MARGIN` below ``p``, which
        covers every point at ``p``; an answer the real model rejects falls back to the
        margins above (no point at all there is a proof that none reaches ``p``).  Further
        answers are searched with ``margin``."""
        m = float(self.margin)
        return [-TIE_MARGIN, m, 10.0 * m] if self.exact_.ties_at_floor(query) else [m, 10.0 * m]

    def _further(self, solves: _Solves, form: Any, found: _Answers) -> dict[str, Any]:
        """The further answers under ``blocking`` (class docstring); their diagnostics."""
        if self.blocking == "options":
            n, exhausted = self._option_diverse(solves, found)
            return {"n_options": n, **({"alternatives_exhausted": True} if exhausted else {})}
        if self.blocking == "features":
            self._superset_diverse(solves, form, found)
        return {"n_point_diverse": self._point_diverse(solves, found)}

    def _option_diverse(self, solves: _Solves, found: _Answers) -> tuple[int, bool]:
        """Diversity by options: the next nearest point that no earlier answer dominates
        (fresh model; :func:`~counterfact.solvers._milp._options.exclude_dominated`).
        Returns the number of such answers and whether the MIP proved that none is left
        (infeasible, not a time-out)."""
        query = solves.query
        if len(found.rows) >= query.n_counterfactuals or not room(query):
            return 0, False
        form = self._build(query, solves.margin, solves.hull, changes=True)
        inputs, distinct = form.inputs, query.alternatives == "distinct"
        steps = self._option_steps(inputs, distinct)
        if distinct:  # every numeric move at least its step, as the pipeline counts moves
            require_meaningful(form.m, inputs, self._by_name(inputs, self.diversity_steps_))
        for row in found.rows:
            exclude_dominated(form.m, inputs, self._point(inputs, row), steps)
        n = 0
        while len(found.rows) < query.n_counterfactuals and room(query):
            sol, _obj = solves.run(Prepared(form), ("options", found.rows))
            if not sol.has_solution:
                return n, sol.status == "infeasible"
            n += 1
            self._add(found, form, sol)
            exclude_dominated(form.m, inputs, self._point(inputs, found.rows[-1]), steps)
        return n, False

    def _point(self, inputs: Any, row: dict[str, Any]) -> tuple[Any, ...]:
        """A decoded answer in solver units, in the order of ``inputs.features``."""
        values = solver_values(self.schema_, pd.Series(row))
        vals = dict(zip(self.schema_.names, values, strict=True))
        return tuple(vals[f.name] for f in inputs.features)

    def _by_name(self, inputs: Any, per_feature: np.ndarray) -> list[float]:
        """A per-feature array (schema order) in the order of ``inputs.features``."""
        return [float(per_feature[self.schema_.index(f.name)]) for f in inputs.features]

    def _option_steps(self, inputs: Any, distinct: bool) -> list[float]:
        """By how much a further answer must move a feature less far than an earlier one
        to escape it (solver units): integers the larger of 1 and the diversity step,
        reals that step plus one resolution unit (answers are snapped to the grid
        afterwards), ranks 1; without ``distinct`` one resolution unit (reals
        without one: 1e-5 of the range)."""
        out = []
        for f in inputs.features:
            feat = self.schema_[f.name]
            d = float(self.diversity_steps_[self.schema_.index(f.name)]) if distinct else 0.0
            if feat.kind == "real":
                res = float(resolution(feat) or 0.0)
                out.append(d + res if distinct else max(res, REAL_STEP * feat.range))
            else:
                out.append(max(1.0, d))
        return out

    def _superset_diverse(self, solves: _Solves, form: Any, found: _Answers) -> None:
        """Diversity, stage 1: re-solve excluding supersets of every earlier change set
        (each solve is prepared afresh: its incumbent must satisfy every cut)."""
        query = solves.query
        excluded: list[list[str]] = []
        while len(found.rows) < query.n_counterfactuals and room(query):
            changed = changed_set(form.inputs, found.xs[-1]) or _changed(
                self.schema_, query.x, found.rows[-1]
            )
            if query.alternatives == "distinct":  # only the meaningful changes must be dropped
                changed = _meaningful(
                    self.schema_, self.diversity_steps_, query.x, found.rows[-1], changed
                )
            if not changed:
                break
            excluded.append(list(changed))
            prep = solves.prepared(True, excluded)
            form = prep.form
            sol, _obj = solves.run(prep, ("superset", excluded))
            if not sol.has_solution:
                break
            self._add(found, form, sol)

    def _point_diverse(self, solves: _Solves, found: _Answers) -> int:
        """Diversity, stage 2, when no other change set is left: the next nearest point
        that differs from every earlier one in at least one feature (fresh model, same
        layout).  Returns the number of such answers."""
        query = solves.query
        n_point = 0
        if len(found.rows) >= query.n_counterfactuals or not room(query):
            return n_point
        form = self._build(query, solves.margin, solves.hull, changes=True)
        # alternatives="method": the paper's criterion (any other value differs)
        steps = (
            solver_steps(self.schema_, self.diversity_steps_)
            if query.alternatives == "distinct"
            else None
        )
        for x_prev in found.xs:
            exclude_point(form.m, form.inputs, x_prev, real_step=DIVERSITY_STEP, steps=steps)
        while len(found.rows) < query.n_counterfactuals and room(query):
            sol, _obj = solves.run(Prepared(form), ("point", found.rows))
            if not sol.has_solution:
                break
            n_point += 1
            self._add(found, form, sol)
            exclude_point(form.m, form.inputs, found.xs[-1], real_step=DIVERSITY_STEP, steps=steps)
        return n_point

    def _add(self, found: _Answers, form: Any, sol: Any) -> None:
        """A diverse answer: its decoded row, its solution vector, the solver's pool."""
        found.rows.append(decode(form.inputs, sol.x))
        found.xs.append(np.asarray(sol.x))
        self._collect_pool(form, sol, found.pool)

    def _observed_z(self, starts: Starts) -> np.ndarray:
        """Raw vectors of the query's nearest observed counterfactuals (local-search starts)."""
        frame = starts.nearest(MAX_CANDIDATES)
        if not len(frame):
            return np.zeros((0, self.compiled_.inputs.n))
        return np.asarray(self.compiled_.inputs.encode(frame), dtype=float)

    def _fallback(
        self, query: Query, starts: Starts, diag: dict[str, Any], searched: Any = None
    ) -> Candidates:
        """The time limit ran out before the solver had an incumbent: the local
        search's point (:mod:`._incumbent`; only without a trust region, which
        the search does not check) and the nearest observed counterfactuals
        (training rows the model assigns to the target, within the
        constraints), verified like any answer, with status ``feasible`` --
        never claimed optimal."""
        rows = starts.nearest(query.n_counterfactuals)
        diag["fallback"] = (
            "nearest observed counterfactual (no solver incumbent within the time limit)"
        )
        if searched is not None and self.trust_region is None:
            found = self.compiled_.inputs.decode(np.atleast_2d(searched.z))
            rows = pd.concat([found[self.schema_.names], rows], ignore_index=True).iloc[
                : max(1, query.n_counterfactuals)
            ]
            diag["fallback"] = (
                "local-search counterfactual (no solver incumbent within the time limit)"
            )
        if not len(rows):
            return Candidates(pd.DataFrame(columns=self.schema_.names), "timeout", diag)
        return Candidates(rows.reset_index(drop=True), "feasible", diag)

    def _build(
        self,
        query: Query,
        margin: float,
        hull: HullData | None,
        *,
        changes: bool,
        radius: float | None = None,
    ) -> Any:
        views = self.exact_.views(query)
        return build(
            compiled=views.main,
            others=views.others,
            schema=self.schema_,
            query=query,
            norm=self.norm,
            scales=self.scales_,
            alpha=self._alpha(query),
            solver=self.solver_,
            margin=margin,
            changes=changes,
            hull=hull,
            hull_scales=getattr(self, "hull_scales_", None),
            trust_epsilon=float(self.trust_epsilon),
            trust_norm=self.trust_norm,
            trust_scope=self.trust_scope,
            template=getattr(self, "template_", None),
            radius=radius,
            cut_bounds=self._cut_bounds,
            tree_options=self._tree_options,
        )

    def _collect_pool(self, form: Any, sol: Any, out: list[tuple[float, dict[str, Any]]]) -> None:
        if not self.solution_pool:
            return
        for x in sol.pool:
            out.append((float(form.m.objective_value(x)), decode(form.inputs, x)))


@dataclass
class _Answers:
    """One query's answers so far: decoded rows, their solution vectors, and the
    solvers' pools as ``(objective, decoded row)``."""

    rows: list[dict[str, Any]]
    xs: list[np.ndarray]
    pool: list[tuple[float, dict[str, Any]]] = field(default_factory=list)


@dataclass
class _Solves:
    """One query's solves (:meth:`CEOCL._explain_one`): what the first and the
    diverse answers share, and the counts reported in the diagnostics."""

    method: CEOCL
    query: Query
    seed: int
    hull: HullData | None
    #: raw vectors of the query's nearest observed counterfactuals (local-search starts)
    observed: np.ndarray
    #: the decision margin (ten times larger after a rejected first answer)
    margin: float
    #: the compiled models the answers must reach the target in (with the call's margin)
    views: CompiledViews
    #: raw vectors of solver incumbents (later local-search starts)
    seen: list[np.ndarray] = field(default_factory=list)
    n_solves: int = 0
    seconds: float = 0.0

    def prepared(self, changes: bool, excluded: list[list[str]]) -> Prepared:
        """One solve's model, built inside the radius of a verified incumbent
        (:func:`._warm.prepare`)."""
        m = self.method
        extra = np.array(self.seen) if self.seen else np.zeros((0, self.observed.shape[1]))
        return prepare(
            lambda mg, ch, radius: m._build(self.query, mg, self.hull, changes=ch, radius=radius),
            compiled=self.views.main,
            others=self.views.others,
            query=self.query,
            margin=self.margin,
            changes=changes,
            norm=m.norm,
            scales=m.scales_,
            alpha=m._alpha(self.query),
            excluded=excluded,
            starts=np.vstack([self.observed, extra]),
            narrow=m._narrow,
        )

    def run(self, prep: Prepared, rule: Any = None) -> tuple[Any, float]:
        """Solve ``prep`` within the query's time; ``rule`` None for the first answer.

        Only the first answer's optimality is reported (certified): the diverse ones
        are polished but not certified (outer approximation costs a MIP per round).
        """
        m, query = self.method, self.query
        t1 = time.perf_counter()
        limit = solve_limit(query)
        if rule is None and query.n_counterfactuals > 1 and limit is not None:
            limit = FIRST_SHARE * limit  # leave time for the diverse answers
        out = solve(
            prep.form,
            m.solver_,
            time_limit=limit,
            seed=self.seed,
            keep_solutions=m.solution_pool,
            certify=rule is None,
            start=prep.start if m.solver_ == "highs" else None,
        )
        self.seconds += time.perf_counter() - t1
        self.n_solves += 1
        sol = out[0]
        for x in ([sol.x] if sol.x is not None else []) + list(sol.pool):
            self.seen.append(z_of(prep.form, x))
        return out


def _meaningful(
    schema: Any, steps: np.ndarray, x: pd.Series, row: dict[str, Any], names: list[str]
) -> list[str]:
    """The features of ``names`` that ``row`` moves by at least their meaningful step
    (any change of a discrete feature); all of ``names`` when none does."""
    keep = []
    for n in names:
        j = schema.index(n)
        f = schema[n]
        if not f.is_numeric or abs(float(row[n]) - float(_py(x[n]))) >= float(steps[j]) * (
            1 - 1e-9
        ):
            keep.append(n)
    return keep or names


def _changed(schema: Any, x: pd.Series, row: dict[str, Any]) -> list[str]:
    """Names of the features a decoded row changes (the same tolerance as the checker)."""
    return [f.name for f in schema if changed(f, _py(x[f.name]), row[f.name])]


def _bounds(
    status: str, diagnostics: Mapping[str, Any] | None
) -> tuple[float | None, float | None, float | None]:
    """(the answer's value, the stated lower bound, the solver's slack) of one query.

    The value is the returned answer's objective when the pipeline measured it,
    else the solver's.  The solver proves ``objective * (1 - gap)`` for the points
    its tolerances accept; less :func:`bound_slack` it holds for exact points, and
    a bound above the (valid) answer's value is clamped to it."""
    if status not in ("optimal", "feasible"):
        return None, None, None
    obj, gap = diagnostic(diagnostics, "objective"), diagnostic(diagnostics, "gap")
    if (diagnostics or {}).get("hull_subsampled"):  # a bound over the kept points only
        own = diagnostic(diagnostics, "answer_value")
        return (own if own is not None and math.isfinite(own) else obj), None, None
    own = diagnostic(diagnostics, "answer_value")
    value = own if own is not None and math.isfinite(own) else obj
    if obj is None or gap is None or not math.isfinite(obj) or not math.isfinite(gap):
        return value, None, None
    slack = diagnostic(diagnostics, "solver_slack")
    slack = bound_slack(0, obj) if slack is None else slack
    lower = max(0.0, obj - gap * abs(obj) - slack)
    if value is not None:
        lower = min(lower, value)
    return value, lower, slack


def _subset_proof(status: str, diag: dict[str, Any], hull: Any, cap: int | None) -> str:
    """The status of a search inside a subsampled hull (``max_hull_points``): its proofs
    are about the kept points only, so ``optimal`` is ``feasible`` (no bound over the
    whole trust region) and ``infeasible`` is ``failed``, with the reason."""
    if hull is None or not hull.subsampled or status not in ("optimal", "infeasible"):
        return status
    kept = f"{len(hull.points)} of the {hull.n_unique} target-class points"
    diag["hull_subsampled"] = f"{kept} (max_hull_points={cap})"
    if status == "infeasible":
        diag["reason"] = (
            f"no counterfactual inside the hull of the {kept} kept (max_hull_points={cap}); "
            "the full trust region may hold one: raise max_hull_points, or set it to None"
        )
        return "failed"
    return "feasible"


def _margin_tolerance(diagnostics: Mapping[str, Any] | None) -> float | None:
    """How far below the threshold the proofs reach: negative, the margin the MIP asks
    of every point (its proofs cover only the points that pass the threshold by it)."""
    margin = diagnostic(diagnostics, "margin")
    return None if margin is None else -margin


def _sentence(name: str, record: Certificate, solver_gap: float | None) -> str | None:
    """The certificate of an answer in words, from the record's fields (the solver's
    own relative gap where they hold no bound; None without an answer: the base class
    words it)."""
    tol, gap = record.rel_gap, record.proven_gap
    within = f" within {100 * tol:.2g} %" if tol is not None else ""
    if record.status == "optimal":
        text = "optimal (solver-proven nearest under the model encoding)"
        gap = solver_gap if gap is None else gap
        if gap is not None and gap > 1e-9:
            text = (
                f"proven optimal{within}: no answer has an objective more than "
                f"{100 * gap:.2g} % lower"
            )
        return f"{name}: {text}{_covered(record)}"
    if record.status == "feasible":
        text = f"valid; not proven nearest{within}"
        if gap is not None and gap < 1.0:
            text += f": an answer may be up to {100 * gap:.2g} % closer"
        elif gap is None and solver_gap is not None:
            text += f" (relative gap {100 * solver_gap:.2g} % when the solver stopped)"
        return f"{name}: {text}{_covered(record)}"
    if record.status == "infeasible" and record.answer_margin and record.answer_margin < 0:
        return (
            f"{name}: proven: no counterfactual comes within {-record.answer_margin:.2g} of "
            f"{record.threshold_words} under these constraints"
        )
    if record.status == "infeasible" and record.answer_margin:
        return (
            f"{name}: proven: no counterfactual passes {record.threshold_words} by more than "
            f"{record.answer_margin:.2g} on the model output under these constraints (the "
            "margin the solver asks of every point)"
        )
    return None


def _covered(record: Certificate) -> str:
    """The answers the MIP's bound covers (:func:`coverage_words`)."""
    scale = record.margin_scale or "model output"
    return coverage_words(record.margin_tolerance, scale, record.threshold)
