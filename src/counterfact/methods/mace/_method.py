"""``cf.MACE``: the method class (a thin adapter around Algorithm 1 and its oracles)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ..._utils._deps import import_optional
from ..._utils._validation import Interval, Options, TypeSpec
from ...exceptions import MissingDependencyError, UnsupportedConstraintError
from ...metrics._distances import DistanceEncoder
from ...models._compile import TreeEnsemble, compile_model
from ...result import Certificate
from ...solvers import get
from ...solvers._milp._tolerance import TIE_MARGIN, bound_slack
from ...solvers._problem import Problem, Search
from ...solvers._registry import SolverChoice, build_first, milp_names
from .._base import CounterfactualMethod
from .._pipeline import Candidates, Query, solver_steps
from .._pipeline._exact import CompiledViews, ExactModels
from .._tags import SEARCH_KINDS, MethodTags
from ._certify import certificate_record, percent
from ._polish import Polisher
from ._problem import build_problem, decode, norm_weights, solver_values
from ._proof import distance_floor, grid_of, margin_tolerance, refuse_off_grid
from ._search import Answer, SearchOutcome, Tolerance, binary_search

__all__ = ["MACE"]

#: backends "auto" skips when their package is missing (a measured speed-up, not a need)
_OPTIONAL = frozenset({"cpsat"})
#: what further answers of a query exclude (``blocking=``; see the class docstring)
BLOCKINGS: tuple[str, ...] = ("options", "points", "features")
#: what a named solver hands to another when it does not encode a search (CP-SAT: Z3)
_HANDOFF: dict[str, tuple[str, ...]] = {"cpsat": ("z3",)}


def _valid_norm(v: Any) -> bool:
    return (
        len(v) == 3
        and all(isinstance(a, (int, float)) and not isinstance(a, bool) and a >= 0 for a in v)
        and sum(v) > 0
    )


class MACE(CounterfactualMethod):
    """Model-Agnostic Counterfactual Explanations: provably nearest counterfactuals.

    Karimi, Barthe, Balle & Valera, "Model-Agnostic Counterfactual Explanations
    for Consequential Decisions", AISTATS 2020.  The model (through
    :func:`counterfact.models._compile.compile_model`), the distance, the
    plausibility constraints and the diversity clauses become one formula;
    Algorithm 1 binary-searches the distance bound ``delta`` over a
    satisfiability oracle and returns a counterfactual at distance
    ``delta_max`` together with a proof that none lies at ``delta_min`` or
    closer, with ``delta_max - delta_min <= max(rel_gap * delta_max, floor)``
    (``floor``: a thousandth of the smallest one-step distance of the data).

    Distance (eq. 3): per feature ``|x_j - q_j| / R_j`` for numeric features
    (``R_j`` = the schema's range), ``|rank - rank_q| / R_j`` for ordinal ones and
    ``1[x_j != q_j]`` for categorical ones; ``norm="l0"|"l1"|"linf"`` or a convex
    combination ``(alpha, beta, gamma)`` of the normalised ``||.||_0 / J``,
    ``||.||_1 / J`` and ``||.||_inf``.  Plausibility: integers stay integral,
    exactly one category, ordinals as levels, observed ranges, and every
    constraint kind except causal relations (immutable, increasing, decreasing,
    ranges, allowed values, features to vary, max changes, relations between
    features).  Relations are encoded exactly by the Z3 oracle (exact
    rationals, strict inequalities included) and the MILP oracle (implications
    with a binary and big-M rows from the variables' bounds; a strict
    inequality only over integral or gridded features, else ``solver="auto"``
    uses Z3 and ``solver="highs"`` raises); the CP-SAT oracle does not encode
    them (``"auto"`` uses Z3, ``"cpsat"`` raises
    :class:`~counterfact.exceptions.UnsupportedConstraintError`).

    Departures from the paper, and why:

    * **Solvers** (:mod:`counterfact.solvers`, ``solver=``).  Z3 through its direct API (exact
    rationals, push/pop) for
      linear models and tree ensembles, as the paper (which used PySMT + Z3);
      for ReLU networks a MILP oracle solved by HiGHS, because Z3 finds no
      counterfactual for a 2x10 MLP in 60 s while HiGHS solves it exactly in
      0.1 s (``reference/solvers.md``).  The MILP oracle returns the nearest
      point under the bound and its proven dual bound, so the same
      ``delta_min``/``delta_max`` certificate comes in one or two calls.
      ``solver="cpsat"`` (tree ensembles, OR-Tools): a Boolean/integer model
      over the ensemble's split intervals whose integer scaling rounds leaf
      values up and distance increments down, so that its proven bound is a
      valid lower bound on the true optimum; it minimises the distance
      directly, so one call usually closes the search
      (:mod:`counterfact.solvers._cpsat`).  Searches it does not encode
      (diversity clauses, finite value sets of numeric features) run on Z3.
      ``solver="auto"`` picks by model class and measure, as measured: the
      branch and bound for every tree ensemble, then, for what it does not
      search, CP-SAT for scikit-learn's and LightGBM's boosted ensembles when
      OR-Tools is installed and Z3 otherwise; HiGHS for ReLU networks, and for
      linear models under costs (the default measure of effort); Z3 for linear
      models under the method's own norm (``costs="own"``);
      ``"z3"``/``"highs"``/``"scip"``/``"cpsat"`` force one.  Each search
      walks a preference list of the registry's solvers and takes the first
      whose ``supports()`` accepts it; when none does, the error names every
      solver's reason.
    * **Branch and bound for tree ensembles** (``solver="bnb"``, what
      ``"auto"`` uses for every forest and boosted ensemble): instead of a
      satisfiability call per step of Algorithm 1, a best-first search over
      the boxes the ensemble's splits cut finds the nearest counterfactual
      outright, with per-tree bounds on the reachable leaves (as Veritas and
      treecf) and the exact least distance of each box (the distance is
      separable); its answer comes with ``delta_min == delta_max``, the
      optimum itself rather than one within ``rel_gap``
      (:mod:`counterfact.solvers._bnb`).  It encodes the same problem as the
      Z3 and CP-SAT oracles (margin, probability floor, grids, integers,
      categories, bounds, change cap, ``robust_to`` forests); a second and
      further counterfactual (diversity clauses), relations between features
      and other ``robust_to`` models run on the next solver ``"auto"`` chose
      (CP-SAT for scikit-learn's and LightGBM's boosted ensembles, Z3
      otherwise), and ``solver="bnb"`` raises
      :class:`~counterfact.exceptions.UnsupportedConstraintError` for them.
      Measured against treecf's exact search on the same forests
      (``benchmarks/trees_vs_peers.py``, docs/performance.md).  On a time-out
      it returns the nearest counterfactual it has found (``feasible``).
    * **Search.**  An unbounded first check (so that "no counterfactual
      exists" is answered in one call, status ``infeasible``), and
      ``delta_max := d(x)`` for the point found rather than the midpoint, and
      a warm start: the nearest observed rows that the oracle proves to be
      counterfactuals give the first ``delta_max`` (``warm_start``), so MACE is
      never farther than the nearest observed counterfactual.
    * **Polishing** (``polish``).  Every point an oracle (or the warm start)
      returns is moved toward the query with the compiled model in numpy
      (segment search, then greedy per-feature reverts and partial reverts);
      the proposal replaces the point only when the exact oracle certifies it
      (``check_point``), so ``delta_max`` drops far below the midpoint without
      a hard SMT call, and lower bounds still come only from UNSAT proofs.
      Measured: Adult forest l1 median 1.0 s -> 0.19 s.  Forests stay on Z3:
      on Default-of-credit (23 features, 14 with ranges of ~10^6) HiGHS on
      the Mišić MILP needed 60-80 s for the unbounded check and found nothing
      in 90 s at ``delta <= 0.0022``, where Z3 also times out.
    * **Resolution grid.**  A real feature's changed value is a multiple of
      its resolution (``Feature.resolution``, e.g. whole units of money) in the
      Z3 oracle (``x = k * resolution``, ``k`` an integer) and in polishing,
      so the answer is the value reported and ``delta_min`` is proven for
      the grid.  Without it the nearest point may lie between two grid values
      that the model both rejects (a forest split at 1805.0 and another at
      1805.5), and the pipeline's rounding of the answer fails.  The CP-SAT
      oracle searches the same grid (its cuts between grid values), the MIP
      oracle too (an integer grid index per real feature).  An integer feature
      whose resolution is above 1 (a loan in steps of 500) takes its multiples
      as listed values for Z3, HiGHS and the branch and bound, when the query's
      value is on that grid and the range holds at most 63 of them (the branch
      and bound's limit on a value set); otherwise, and for CP-SAT, the answer
      is rounded after the search.  Only a real
      feature whose query value lies off its grid stays continuous (the query's
      own value must stay reachable); its answers are rounded by the base
      class.
    * **Decision margin.**  The target class must win by ``margin`` (on the
      logit, or on the mean probability for forests, float32-safe tree splits
      from the compiler), and every decoded counterfactual is re-checked with
      the real model; on failure the search is re-run with a 10x larger margin
      (at most ``max_retries`` times).  ``delta_min`` is proven for the encoded
      model with the margin used.  The proofs hold with a stated tolerance
      instead (``Certificate.margin_tolerance``): once a search ends
      ``optimal`` or ``infeasible``, one more oracle call on the problem whose
      conditions are ``>= threshold - tolerance`` confirms the lower bound or
      the infeasibility -- 1e-6 below a ``min_probability`` (``infeasible``
      there says "no answer reaches p minus the tolerance"), 1e-6 above the
      model's strict decision otherwise (ties, which the model rejects, stay
      out).  When that call finds a point,
      Algorithm 1 runs on that problem: its lower bound is the one proven,
      every point it meets that the real model accepts is an answer (points
      between the threshold and the margin, which the first search skips),
      and the status is ``optimal`` only if the tolerance closes the gap.
    * **Multi-class.**  The target class must beat every other class (the
      paper treats binary models; its Sec. 6 names this extension).
    * **Diversity: options, not copies.**  Counterfactual k+1 re-runs
      Algorithm 1 for the nearest point that *no earlier answer dominates*
      (``blocking="options"``, the default): for each earlier answer, at
      least one feature it changes keeps the query's value, moves less far
      on the same side by at least the feature's step, or moves the other
      way (another category) -- a disjunction of linear conditions per
      earlier answer (:mod:`counterfact.solvers._options`; Z3 and the MILP
      oracle encode it, the branch and bound and CP-SAT hand further answers
      to them).  A point that repeats an earlier answer's changes, each at
      least as far, is that answer plus unnecessary moves
      (``#1 = #0 plus loan_amount 3446 -> 3334``) and is never searched; the
      step is the feature's meaningful step (the larger of its resolution
      and a fraction of its MAD, the rule every method's answers follow; one
      unit under ``alternatives="method"``), so "less far" is never a
      one-unit hair.  When the oracle proves that no such point exists
      within the constraints (infeasible, not a time-out), the query has no
      further option: ``diagnostics["alternatives_exhausted"]`` is True and
      the result says so instead of padding.
      ``blocking="points"``: the paper's blocking clauses, generalised to
      "differs from every earlier one in at least ``min_diff`` features"; a
      numeric feature differs only when it moves by *more than its diversity
      step* (with the paper's literal clause, ``explain(alternatives="method")``,
      the second answer may be the first moved by one unit).
      ``blocking="features"``: each further counterfactual changes a set of
      features that contains no earlier one's (CE-OCL's no-good cuts).
      Under every blocking, further answers move each numeric feature by at
      least its meaningful step or not at all, and the search for k+1 starts
      from the lower bound of k (more clauses can only push the optimum up).
    * **Grids.**  ``optimal`` and ``infeasible`` are proven over the grids of
      the real features with a resolution (above); the certificate names them
      (``Certificate.grid``).  An equality relation whose solutions all lie
      between two grid values is refused with a
      :class:`~counterfact.exceptions.ConstraintError` naming the resolution.
    * **Time limit.**  Per query; each oracle call gets the time left.  On
      expiry the best counterfactual so far is returned with status
      ``feasible`` and both bounds in the diagnostics; ``timeout`` if none was
      found; ``infeasible`` when the unbounded check is UNSAT.

    Parameters
    ----------
    norm : {"l0", "l1", "linf"} or tuple (alpha, beta, gamma)
        Distance (eq. 3).
    rel_gap : float
        Relative tolerance of ``optimal``, in (0, 1): the search stops when the
        proven lower bound is at least ``(1 - rel_gap)`` times the answer's
        distance (or within an absolute floor a thousand times smaller than one
        grid step of the data), so with the default 0.01 no answer is more
        than 1 % closer.  An answer whose gap stays larger (time limit) is
        ``feasible``.  The branch-and-bound oracle (``"bnb"``) usually proves
        the optimum itself (``delta_min == delta_max``).  The certificate
        states the tolerance and the proven gap
        (:meth:`CounterfactualResult.certificate_record`).
    solver : {"auto", "bnb", "z3", "highs", "scip", "cpsat"} or another registered name
        The solver of Algorithm 1's oracle (:func:`counterfact.solvers.names`;
        ``"bnb"``, ``"cpsat"``: tree ensembles only).  ``"auto"`` picks by model
        class (above); the one that searched is ``diagnostics["solver"]``.
    min_diff : int
        Diversity: each further counterfactual differs from every earlier one
        in at least this many features (``blocking="points"`` only).
    blocking : {"options", "points", "features"}
        What the blocking clauses of further counterfactuals exclude (see
        above): every point an earlier answer dominates (``"options"``), earlier
        points (differ in ``min_diff`` features by more than a step), or
        earlier sets of changed features.
    margin : float
        Decision margin (logit, or mean probability for forests) of the first
        search: its answers reach the threshold by this much.  Proofs cover every
        point up to the certificate's ``margin_tolerance`` (1e-6 below a
        ``min_probability``, 1e-6 above the decision), whatever the margin.
    max_retries : int
        Re-runs with a 10x larger margin when the real model disagrees.
    warm_start : int
        How many of the nearest observed counterfactuals (training rows the
        model assigns to the target, within the constraints) the Z3 oracle
        checks to start the search at their distance instead of with the
        unbounded check; 0 disables it.  The result keeps the same guarantee.
    polish : bool
        Move each point found toward the query (compiled model in numpy) and
        keep the move when the exact oracle certifies it (Z3 oracle only).
    time_limit : float, optional
        Seconds per query.
    random_state : int, optional
        Seeds the solvers (results are deterministic for a seed).
    verbose : int
        Progress output.

    Examples
    --------
    >>> mace = cf.MACE(norm="l1", rel_gap=0.01).fit(model, train)  # doctest: +SKIP
    >>> result = mace.explain(test.X.iloc[:5], n_counterfactuals=2)  # doctest: +SKIP
    >>> result.diagnostics[["delta_min", "delta_max"]]  # doctest: +SKIP
    """

    name: ClassVar[str] = "mace"
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="MACE",
        summary=(
            "provably nearest counterfactual within a stated relative gap, with a lower bound "
            "(SMT / MILP / CP-SAT)"
        ),
        paper="Karimi et al., AISTATS 2020",
        constraints=SEARCH_KINDS | {"timeline"},
        proves_optimality=True,
        proves_infeasibility=True,
        fast_params={"norm": "l1", "rel_gap": 0.05, "time_limit": 20.0},
        order=0,
        measure="distance",
        costs="exact",
        own_objective=("norm",),
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "norm": [
            Options(("l0", "l1", "linf")),
            TypeSpec(
                (tuple, list),
                "a tuple (alpha, beta, gamma) of non-negative floats with a positive sum",
                _valid_norm,
            ),
        ],
        "rel_gap": [Interval(float, 0, 1, closed="neither")],
        "solver": [SolverChoice()],
        "min_diff": [Interval(int, 1, None)],
        "margin": [Interval(float, 0, None, closed="neither")],
        "max_retries": [Interval(int, 0, None)],
        "warm_start": [Interval(int, 0, None)],
        "polish": [TypeSpec((bool,), "a bool")],
        "blocking": [Options(BLOCKINGS)],
    }

    def __init__(
        self,
        *,
        norm: str | tuple[float, float, float] = "l1",
        rel_gap: float = 0.01,
        solver: str = "auto",
        min_diff: int = 1,
        margin: float = 1e-4,
        max_retries: int = 2,
        warm_start: int = 3,
        polish: bool = True,
        blocking: str = "options",
        time_limit: float | None = None,
        random_state: int | None = None,
        verbose: int = 0,
    ) -> None:
        self.norm = norm
        self.rel_gap = rel_gap
        self.solver = solver
        self.min_diff = min_diff
        self.margin = margin
        self.max_retries = max_retries
        self.warm_start = warm_start
        self.polish = polish
        self.blocking = blocking
        self.time_limit = time_limit
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def _fit(self) -> None:
        self.compiled_ = compile_model(self.model_.model, self.schema_)
        #: the solvers each search walks, first choice first (registry names)
        self.solvers_ = self._auto_solvers() if self.solver == "auto" else self._named_solvers()
        #: the first choice (a search it does not take goes down :attr:`solvers_`)
        self.solver_ = self.solvers_[0]
        self.weights_ = norm_weights(tuple(self.norm) if isinstance(self.norm, list) else self.norm)
        self._dist = _Distance(self.schema_, self.norm)
        self._cache: dict[str, Any] = {}  # per-model solver artefacts (the ensemble's SMT-LIB text)
        #: what the solver embeds per query: the model (with a margin) and any robust_to models
        self.exact_ = ExactModels.of(
            self.compiled_, self.model_, self.schema_, self.data_.X, "MACE"
        )
        self._pool: dict[int, tuple[pd.DataFrame, np.ndarray]] | None = (
            None  # observed rows per predicted class
        )
        #: the shared diversity rule's steps plus one grid unit, in solver units
        self._steps = solver_steps(self.schema_, self.diversity_steps_)
        if self.solver_ == "z3" and self.warm_start > 0:
            self._observed(0)

    def _encodes_margin(self) -> bool:
        """A margin is exact only where the model's probability is a linear function of
        its compiled outputs (the link measured at fit)."""
        return bool(self.exact_.link)

    @classmethod
    def certificate_record(
        cls, status: str, diagnostics: Mapping[str, Any] | None = None
    ) -> Certificate:
        """The fields of what the search proved (measure, bounds, tolerances, grid) and
        the sentence worded from them (:mod:`._certify`)."""
        return certificate_record(cls.tags.display_name, status, diagnostics)

    def answer_value(self, query: Query, row: pd.Series) -> float | None:
        """The returned answer's distance (eq. (3) under ``norm``), or its cost under the
        call's costs, in the units of ``delta_max``."""
        return self._dist(query.x, dict(row), query.costs, query.bounds.timeline)

    @classmethod
    def certificate(cls, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        return cls.certificate_record(status, diagnostics).sentence

    @classmethod
    def guarantee(cls, params: Mapping[str, Any]) -> dict[str, str]:
        tol = params.get("rel_gap", 0.01)
        tol_text = percent(float(tol)) if isinstance(tol, (int, float)) else str(tol)
        return {
            "recourse": (
                "MACE: every counterfactual was re-checked with the real model; with status "
                f"'optimal' no counterfactual is more than {tol_text} cheaper in the measure "
                "the search minimised (the run's costs, by default the measure of effort; "
                f"MACE's own distance, norm {params.get('norm', '')!s}, only with "
                "costs='own'; each row's certificate states its bound), proven by the solver "
                "for the encoded model, on the grids of the features with a resolution, "
                "among the points that pass the decision threshold, up to the margin "
                "tolerance each row's certificate states."
            ),
            "none": "MACE 'infeasible': proven that no counterfactual exists under the "
            "audit's constraints (on the features' grids, up to the margin tolerance each "
            "row's certificate states about the decision threshold).",
        }

    def _named_solvers(self) -> tuple[str, ...]:
        """The walk of a solver the user named (with CP-SAT's hand-off to Z3); every one
        must be installed."""
        walk = (str(self.solver), *_HANDOFF.get(str(self.solver), ()))
        for name in walk:
            for module in get(name).requires:
                import_optional(module, purpose=f"MACE(solver={name!r})")
        return walk

    def _auto_solvers(self) -> tuple[str, ...]:
        """The walk ``"auto"`` stands for, chosen per model class by measurement
        (``benchmarks/mace.py --solvers z3 cpsat``, 50 queries per cell on Adult,
        COMPAS and Credit under l0, l1 and linf; the table is in
        docs/performance.md): HiGHS for ReLU networks; for tree ensembles the
        branch and bound, then, for what it does not search, CP-SAT (when
        OR-Tools is installed) for boosted ensembles other than XGBoost
        (scikit-learn's gradient boosting: faster in median in 8 of 9 cells,
        the ninth within 2 %; LightGBM in 6 of 9, proving every query where Z3
        missed two on COMPAS; HistGradientBoosting follows the same rule, not
        measured separately); Z3 for XGBoost (CP-SAT faster in 4 of 9 cells,
        Z3 up to 1.7x faster on Credit l1 / linf), random forests (Z3 faster
        in median in 6 of 9 cells and proving more queries on the largest
        forest) and everything else.  Z3 last: it encodes every constraint."""
        est = self.compiled_.estimator
        if self.compiled_.has_relu:
            walk: tuple[str, ...] = ("highs", "z3")
        elif isinstance(est, TreeEnsemble):
            boosted = getattr(est, "aggregation", None) == "sum_margin"
            xgboost = self.compiled_.estimator_class == "XGBClassifier"
            walk = ("bnb", "cpsat", "z3") if boosted and not xgboost else ("bnb", "z3")
        else:
            walk = ("z3",)
        kept = []
        for name in walk:
            why = get(name).supports(None)
            if why is None:
                kept.append(name)
            elif name not in _OPTIONAL:
                raise MissingDependencyError(f"MACE (solver={name!r}) cannot run: {why}.")
        return tuple(kept)

    # -------------------------------------------------------------- explain
    def _walk(self, search: Search) -> tuple[str, ...]:
        """The solvers one search tries, in order (the first that takes it searches)."""
        if self.solver == "cpsat" and search.problem.relations:
            return ("cpsat",)  # named CP-SAT with relations: it raises, naming the relation
        if self.solver != "auto":
            return self.solvers_
        if search.problem.costs is not None:
            if not _sum_of_trees(search.compiled):
                # costs: HiGHS proves their optimum in seconds where Z3's If chains need minutes
                return ("highs", "z3")
            # a tree ensemble under costs: the branch and bound and CP-SAT price each
            # interval between cuts exactly; Z3's If chains are the slow last resort
            return tuple(n for n in ("bnb", "cpsat", "z3") if get(n).supports(None) is None)
        return self.solvers_

    def _search(self, problem: Problem, seed: int, views: CompiledViews) -> Search:
        return Search(
            problem,
            views.main,
            views.others,
            self.schema_,
            float(self.rel_gap),
            seed,
            self._cache,
        )

    def _make_oracle(self, problem: Problem, seed: int, views: CompiledViews) -> tuple[str, Any]:
        """The first solver of the walk that takes the search: (its name, its oracle)."""
        search = self._search(problem, seed, views)
        try:
            return build_first(self._walk(search), search)  # type: ignore[no-any-return]
        except UnsupportedConstraintError as exc:
            raise UnsupportedConstraintError(
                f"MACE(solver={self.solver!r}): {exc} Use solver='auto'."
            ) from None

    def _before_search(self, queries: list[Query], parallel: bool) -> None:
        """A query a named solver cannot search raises here, before any search.

        Each query is checked as its hardest search (with earlier answers
        blocked when it asks for several) against the solvers it would walk.
        """
        if not queries or self.solver == "auto":
            return
        views = self.exact_.views(queries[0])
        for query in queries:
            search = self._search(self._problem(query), 0, views)
            if query.n_counterfactuals > 1:
                search.problem.blocked.append(solver_values(self.schema_, query.x))
            walk = self._walk(search)
            reasons = [(n, get(n).supports(search)) for n in walk]
            if all(why is not None for _, why in reasons):
                said = "; ".join(f"{n}: {why}" for n, why in reasons)
                raise UnsupportedConstraintError(
                    f"MACE(solver={self.solver!r}) cannot search this query ({said}). "
                    "Use solver='auto'."
                )

    def _observed(self, target_index: int) -> tuple[pd.DataFrame, np.ndarray]:
        """Training rows the model assigns to class ``target_index`` (raw, and in distance
        units)."""
        if self._pool is None:
            X = self.data_.X
            pred = np.asarray(self.model_.predict(X))
            enc = self._dist.encoder.transform(X)
            self._pool = {}
            for i, c in enumerate(self.classes_):
                m = pred == c
                self._pool[i] = (X[m], enc[m])
        return self._pool[int(target_index)]

    def _warm_start(self, query: Query, oracle: Any, deadline: Deadline) -> tuple[Any, int]:
        """A proven counterfactual to start the search from: the nearest observed rows.

        The training rows the model assigns to the target and that satisfy the
        query's bounds, nearest first (the ``nearest`` baseline's candidates),
        are checked by the oracle with every variable fixed; the first one that
        satisfies the whole formula (margin, diversity clauses, change cap)
        gives ``delta_max`` without the unbounded check.  This keeps Algorithm
        1's guarantee, makes MACE never worse than the nearest observed
        counterfactual, and skips the costly first calls on large forests.
        Returns (answer or None, oracle calls).
        """
        if self.warm_start <= 0 or not hasattr(oracle, "check_point"):
            return None, 0
        calls = 0
        frame = self._observed(query.target_index)[0]
        for i in self._nearest_rows(query, int(self.warm_start)):
            if deadline.expired():
                break
            ans = oracle.check_point(solver_values(self.schema_, frame.iloc[int(i)]), deadline)
            calls += 1
            if ans.verdict == "sat":
                return ans, calls
        return None, calls

    def _nearest_observed(self, query: Query, k: int) -> pd.DataFrame:
        """The ``k`` nearest training rows the model assigns to the target that satisfy
        the query's bounds (eq. 3 distance), nearest first."""
        frame = self._observed(query.target_index)[0]
        return frame.iloc[self._nearest_rows(query, k)]

    def _nearest_rows(self, query: Query, k: int) -> np.ndarray:
        """Positions (in the observed pool of the query's target) of the ``k`` nearest
        rows that satisfy the query's bounds (and reach the target with the call's
        margin in every model it asked for), nearest first (ties: pool order).

        Every row's distance is computed (numpy), but the bounds are checked
        only on the nearest rows, a growing block at a time, until ``k`` pass:
        the same rows as checking the whole pool first, without a constraint
        check of thousands of rows per query.
        """
        frame, enc = self._observed(query.target_index)
        k = max(0, int(k))
        if not len(frame) or k == 0:
            return np.zeros(0, dtype=int)
        q = self._dist.encoder.transform(query.x.to_frame().T)[0]
        d = (
            query.costs.matrix(enc, q)
            if query.costs is not None
            else self._dist.encoder.distances(enc, q, self._dist.norm)
        )
        order = np.argsort(d, kind="stable")
        found: list[int] = []
        lo, size = 0, max(64, 8 * k)
        while lo < len(order) and len(found) < k:
            block = order[lo : lo + size]
            ok = np.asarray(query.bounds.satisfied(frame.iloc[block]), dtype=bool)
            if query.judge is not None and query.judge.demanding and ok.any():
                # a margin or other models: only rows that reach the target in all of them
                n = int(ok.sum())
                ok[ok] = query.judge(
                    frame.iloc[block[ok]], [query.target] * n, [query.target_index] * n
                )[0]
            found.extend(block[ok][: k - len(found)].tolist())
            lo += size
            size *= 4
        return np.asarray(found, dtype=int)

    def _problem(self, query: Query) -> Problem:
        """The query in solver units, with the call's costs when it has them."""
        problem = build_problem(
            self.schema_,
            query.bounds,
            weights=self.weights_,
            target_index=query.target_index,
            margin=float(self.margin),
            min_diff=int(self.min_diff),
            # alternatives="method": the paper's clauses (any other value differs)
            steps=self._steps if query.alternatives == "distinct" else None,
            blocking=str(self.blocking),
            min_moves=self.diversity_steps_ if query.alternatives == "distinct" else None,
            # CP-SAT takes no set of numeric values: it searches whole numbers, then rounds
            listed_grids=self.solver_ != "cpsat",
        )
        if query.costs is not None:  # the call's costs replace eq. (3)
            problem.costs, problem.weights = query.feature_costs(), (0.0, 0.0, 0.0)
        refuse_off_grid(problem)
        return problem

    def _explain_one(self, query: Query) -> Candidates:
        """Algorithm 1 per counterfactual: the k-th search blocks the earlier answers and
        starts from the lower bound of the one before (more clauses only raise it)."""
        deadline = query.deadline.reserve(_reserve(query.time_limit))
        problem = self._problem(query)
        run = _Run(int(query.rng.integers(0, 2**31 - 1)), self.exact_.views(query))
        run.margin = float(self.margin)
        run.floor = distance_floor(problem)
        run.n_terms = sum(not v.fixed for v in problem.vars)
        run.grid = grid_of(problem)
        for k in range(query.n_counterfactuals):
            if k > 0 and query.expired():
                break
            outcome, row, ok = self._answer(query, problem, run, deadline)
            if k == 0:
                run.first = outcome
            if row is None or outcome is None:
                # proven: every other point within the limits repeats an earlier answer
                run.exhausted = _exhausted(problem, outcome, k)
                break
            run.rows.append(row)
            run.distances.append(self._dist(query.x, row, query.costs, query.bounds.timeline))
            if not ok:
                break
            problem.blocked.append(outcome.point)
            run.lower = max(run.lower, outcome.delta_min)
        return self._candidates(query, run)

    def _answer(
        self, query: Query, problem: Problem, run: _Run, deadline: Deadline
    ) -> tuple[SearchOutcome | None, dict[str, Any] | None, bool]:
        """One counterfactual: a search, re-checked with the real model; on a
        disagreement the search re-runs with a 10x larger margin (``max_retries``).
        Returns (the search's outcome, the decoded row, whether the model accepts it)."""
        outcome, row, ok = None, None, False
        for _attempt in range(int(self.max_retries) + 1):
            problem.margin = run.margin
            outcome = self._search_once(query, problem, run, deadline)
            if outcome.point is None:
                break
            row = decode(self.schema_, outcome.point)
            valid, _, _ = self.verify(query, pd.DataFrame([row], columns=self.schema_.names))
            ok = bool(valid[0])
            if ok or deadline.expired():
                break
            run.retries += 1
            run.margin *= 10.0
        return outcome, row, ok

    def _search_once(
        self, query: Query, problem: Problem, run: _Run, deadline: Deadline
    ) -> SearchOutcome:
        """Algorithm 1 over the first solver that takes the search (polished, warm-started)."""
        t0 = time.perf_counter()
        name, oracle = self._make_oracle(problem, run.seed, run.views)
        run.used += [name] if name not in run.used else []
        if self.polish and hasattr(oracle, "check_point"):
            polisher = Polisher(problem, run.views.main, others=run.views.others)
            oracle = _Polished(oracle, polisher, deadline)
        start, n_warm = self._warm_start(query, oracle, deadline)
        if start is not None and isinstance(oracle, _Polished):
            start = oracle.improve(start)
        if name in milp_names():
            # a bound the solver's feasibility tolerance leaves unproven cannot close the gap
            run.milp = True
            run.floor = max(run.floor, 2.0 * bound_slack(run.n_terms))
        tol = Tolerance(float(self.rel_gap), run.floor)
        outcome = binary_search(oracle, tol, lower=run.lower, deadline=deadline, initial=start)
        run.calls += outcome.n_calls + n_warm
        if isinstance(oracle, _Polished):
            run.polished += oracle.n_polished
        run.warm += start is not None
        if name in milp_names():
            # a MILP solver's integrality and feasibility tolerances (1e-6 per binary) make
            # a smaller tolerance unprovable: its proofs are stated for the margin it used
            run.proof_margin = -float(problem.margin)
            if outcome.status == "infeasible":
                outcome = self._near_threshold(query, problem, run, outcome, deadline)
            elif outcome.status == "optimal" and self.exact_.ties_at_floor(query):
                outcome = self._with_ties(query, problem, run, outcome, deadline)
        else:
            run.proof_margin = margin_tolerance(query.min_probability)
            outcome = self._confirm(query, problem, run, outcome, deadline)
        # the certificate states the narrowest margin any of the query's searches proved for
        # (a further answer's search on another solver must not widen the first one's claim)
        m = run.proof_margin
        run.stated_margin = m if run.stated_margin is None else min(run.stated_margin, m)
        run.t_solve += time.perf_counter() - t0
        return outcome

    def _with_ties(
        self, query: Query, problem: Problem, run: _Run, outcome: SearchOutcome, deadline: Deadline
    ) -> SearchOutcome:
        """A MILP's ``optimal`` (proven for the points past the floor by its margin)
        re-proven down to :data:`TIE_MARGIN` below it (:meth:`_confirm`), so that a point
        exactly at ``min_probability`` is neither lost nor left out of the proof; when that
        search neither re-proves nor improves the answer, the first claim stands."""
        used = run.proof_margin
        run.proof_margin = TIE_MARGIN
        out = self._confirm(query, problem, run, outcome, deadline)
        if out.status != "optimal" and out.point is outcome.point:
            run.proof_margin = used
            return outcome
        return out

    def _near_threshold(
        self, query: Query, problem: Problem, run: _Run, outcome: SearchOutcome, deadline: Deadline
    ) -> SearchOutcome:
        """A MILP's ``infeasible`` (proven for the margin it used) checked once more with
        the margin tolerance subtracted (:meth:`_confirm`): a point there that the real
        model accepts is an answer (``feasible``) where the margin alone hid it."""
        used = run.proof_margin
        run.proof_margin = margin_tolerance(query.min_probability)
        out = self._confirm(query, problem, run, outcome, deadline)
        if out.status == "infeasible":
            run.proof_margin = used
        return out

    def _confirm(
        self, query: Query, problem: Problem, run: _Run, outcome: SearchOutcome, deadline: Deadline
    ) -> SearchOutcome:
        """An ``optimal`` or ``infeasible`` outcome re-proven with a stated tolerance.

        One oracle call on the same problem with the margin tolerance
        (:func:`~._proof.margin_tolerance`) subtracted (every condition
        ``>= threshold - tolerance``: a superset of the answers, whatever the
        margin of the answers): no point there at the lower bound (or anywhere,
        for ``infeasible``) confirms the proof for every point within the
        tolerance of the threshold.  A point there starts Algorithm 1 on that
        problem (:meth:`_relaxed_search`).
        """
        if outcome.status not in ("optimal", "infeasible"):
            return outcome
        if deadline.expired():
            return _unconfirmed(outcome, run.lower)
        relaxed = replace(problem, margin=-run.proof_margin, blocked=list(problem.blocked))
        _, oracle = self._make_oracle(relaxed, run.seed, run.views)
        bound = None if outcome.status == "infeasible" else outcome.delta_min
        ans = oracle.check(bound, deadline)
        run.calls += 1
        if ans.verdict == "unsat":
            return outcome
        if ans.verdict == "unknown" or ans.point is None:
            return _unconfirmed(outcome, run.lower)
        if outcome.status == "infeasible":
            valid = self._accepts(query, ans.point)
            run.boundary = not valid
            status = "feasible" if valid else "failed"
            return replace(outcome, status=status, point=ans.point if valid else None)
        return self._relaxed_search(query, oracle, ans, outcome, run, deadline)

    def _relaxed_search(
        self,
        query: Query,
        oracle: Any,
        found: Answer,
        outcome: SearchOutcome,
        run: _Run,
        deadline: Deadline,
    ) -> SearchOutcome:
        """Algorithm 1 on the problem with the margin subtracted, from the point ``found``
        there: its lower bound holds for every answer; every point it meets that the
        real model accepts is an answer, and the nearest one replaces ``outcome``'s
        when nearer.  ``optimal`` when the tolerance closes the gap between that bound
        and the answer, else ``feasible``."""
        recorder = _Recording(oracle, lambda point: self._accepts(query, point))
        recorder.see(found)
        tol = Tolerance(float(self.rel_gap), run.floor)
        out = binary_search(recorder, tol, lower=run.lower, deadline=deadline, initial=found)
        run.calls += out.n_calls
        point, hi = outcome.point, outcome.delta_max
        best = recorder.best
        if best is not None and best.distance is not None and float(best.distance) < hi:
            point, hi = best.point, float(best.distance)
        lo = min(float(out.delta_min), hi)
        status = "optimal" if tol.closed(lo, hi) else "feasible"
        return replace(outcome, status=status, point=point, delta_min=lo, delta_max=hi)

    def _accepts(self, query: Query, point: Any) -> bool:
        """Whether the real model (and the constraints) accept a point in solver units."""
        row = decode(self.schema_, point)
        valid, _, _ = self.verify(query, pd.DataFrame([row], columns=self.schema_.names))
        return bool(valid[0])

    def _candidates(self, query: Query, run: _Run) -> Candidates:
        """The answers, or on a time-out without one the nearest observed
        counterfactuals (verified by the pipeline like any answer, never claimed
        nearest), with the search's diagnostics."""
        names = self.schema_.names
        first = run.first
        if first is None:  # pragma: no cover - the first search always runs
            return Candidates(pd.DataFrame(columns=names), "failed", {"solver": self.solver_})
        status, fallback = first.status, None
        if not run.rows and status == "timeout":
            observed = self._nearest_observed(query, query.n_counterfactuals)
            run.rows = [dict(r) for _, r in observed.iterrows()]
            if run.rows:
                status = "feasible"
                fallback = (
                    "nearest observed counterfactual (no oracle answer within the time limit)"
                )
                tl = query.bounds.timeline
                run.distances = [self._dist(query.x, r, query.costs, tl) for r in run.rows]
        diag = self._diagnostics(query, run, first)
        if fallback is not None:
            diag["fallback"] = fallback
        return Candidates(pd.DataFrame(run.rows, columns=names), status, diag)

    def _diagnostics(self, query: Query, run: _Run, first: SearchOutcome) -> dict[str, Any]:
        """The per-query diagnostics: the solvers that searched, the proven bounds, counts."""
        if run.distances:
            delta_max = float(run.distances[0])
        else:
            delta_max = np.inf if first.delta_max == np.inf else float(first.delta_max)
        diag: dict[str, Any] = {
            "solver": ", then ".join(run.used) or self.solver_,
            **(cost_words(query.costs) if query.costs is not None else {}),
            "delta_min": float(first.delta_min),
            "delta_max": delta_max,
            "n_oracle_calls": int(run.calls),
            "margin": run.margin,
            "n_margin_retries": int(run.retries),
            "warm_starts": int(run.warm),
            "n_polished": int(run.polished),
            "solver_seconds": run.t_solve,
            **self._tolerances(query, run),
        }
        if len(run.distances) > 1:
            diag["distances"] = [float(d) for d in run.distances]
        if run.exhausted:
            diag["alternatives_exhausted"] = True
        if run.boundary and not run.rows:  # (a further answer's search: no such claim)
            diag["reason"] = (
                f"no counterfactual reaches the target by the margin {float(self.margin):g}; "
                "a point within the margin tolerance of the decision threshold is rejected by "
                "the model (not a proof that none exists)"
            )
        return diag

    def _tolerances(self, query: Query, run: _Run) -> dict[str, Any]:
        """What the certificate states the proofs up to: the search's relative gap and
        absolute floor, the margin tolerance (and the probability the proofs reach
        down to under ``min_probability``), the grids they are over."""
        m = run.proof_margin if run.stated_margin is None else run.stated_margin
        link = self.exact_.link
        out: dict[str, Any] = {
            "rel_gap": float(self.rel_gap),
            "abs_floor": float(run.floor),
            "solver_slack": _slack_of(run),
            "margin_tolerance": m,
            "margin_scale": {"sigmoid": "logit", "identity": "probability"}.get(
                link, "model output"
            ),
            "grid": json.dumps([[n, g] for n, g in run.grid]),
        }
        p = query.min_probability
        if p is not None and 0.0 < float(p) < 1.0 and link in ("sigmoid", "identity"):
            out["target_probability"] = float(p)
            out["proof_probability"] = (
                float(1.0 / (1.0 + math.exp(m - math.log(p / (1.0 - p)))))
                if link == "sigmoid"
                else float(p) - m
            )
        return out


def _slack_of(run: _Run) -> float | None:
    """What the stated bounds allow for a MILP solver's tolerances (None: none searched)."""
    if not run.milp:
        return None
    hi = run.first.delta_max if run.first is not None else 1.0
    return bound_slack(run.n_terms, hi if math.isfinite(hi) else 1.0)


@dataclass
class _Run:
    """One query's searches so far: what the next search needs and what the diagnostics say."""

    seed: int
    views: CompiledViews
    margin: float = 0.0
    lower: float = 0.0
    #: the absolute floor of the search's tolerance (:func:`._proof.distance_floor`)
    floor: float = 0.0
    #: the features whose grids the proofs are over (:func:`._proof.grid_of`)
    grid: tuple[tuple[str, float], ...] = ()
    #: the only points found lie within the margin of the threshold, and the model rejects them
    boundary: bool = False
    #: how far below the threshold the proofs reach (negative: above; :mod:`._proof`)
    proof_margin: float = 0.0
    #: what the certificate states: the narrowest ``proof_margin`` of the query's searches
    stated_margin: float | None = None
    #: movable features: the terms of the distance a MILP solver's slack grows with
    n_terms: int = 0
    #: whether a MILP solver searched (its bounds carry :func:`bound_slack`)
    milp: bool = False
    #: a further answer's search proved that no point is left that no earlier answer
    #: dominates (``blocking="options"``, infeasible rather than a time-out)
    exhausted: bool = False
    first: SearchOutcome | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)
    used: list[str] = field(default_factory=list)  # the solvers that searched, in order
    calls: int = 0
    retries: int = 0
    warm: int = 0
    polished: int = 0
    t_solve: float = 0.0


def _exhausted(problem: Problem, outcome: SearchOutcome | None, k: int) -> bool:
    """Whether the search for answer ``k`` (``k > 0``) proved that the query has no
    further option: infeasible (not a time-out) under ``blocking="options"``."""
    return (
        k > 0
        and problem.blocking == "options"
        and outcome is not None
        and outcome.status == "infeasible"
    )


def _sum_of_trees(compiled: Any) -> bool:
    """Whether the model is a tree ensemble summed over its trees (not one plain tree)."""
    est = compiled.estimator
    return isinstance(est, TreeEnsemble) and not (len(est.trees) == 1 and not np.any(est.base))


def cost_words(costs: Any) -> dict[str, Any]:
    """Diagnostics that say ``delta_min``/``delta_max`` are costs, and in which unit."""
    return {"cost_unit": costs.unit or "", "cost_unit_scale": float(costs.costs.unit_scale or 1.0)}


def _unconfirmed(outcome: SearchOutcome, lower: float) -> SearchOutcome:
    """An outcome whose proof the tolerance call could not confirm (time): ``optimal``
    keeps its answer as ``feasible`` with the bound it started from; ``infeasible``
    becomes ``timeout``."""
    if outcome.status == "infeasible":
        return replace(outcome, status="timeout")
    return replace(outcome, status="feasible", delta_min=min(outcome.delta_min, lower))


class _Recording:
    """An oracle whose SAT answers are kept when ``accepts`` (the real model) takes
    their point: :attr:`best` is the nearest such answer."""

    def __init__(self, oracle: Any, accepts: Any) -> None:
        self.oracle = oracle
        self.accepts = accepts
        self.best: Answer | None = None

    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        return self.see(self.oracle.check(bound, deadline))

    def see(self, ans: Answer) -> Answer:
        if ans.verdict != "sat" or ans.point is None or ans.distance is None:
            return ans
        best = None if self.best is None else self.best.distance
        nearer = best is None or float(ans.distance) < float(best)
        if nearer and self.accepts(ans.point):
            self.best = ans
        return ans


def _reserve(limit: float | None) -> float:
    """Seconds kept back from a query's search budget for decoding and verifying
    the answer with the real model after the last solver call."""
    return 0.0 if limit is None else min(0.25, 0.1 * float(limit))


class _Polished:
    """An oracle whose SAT answers are polished (:mod:`._polish`) and re-certified.

    Each SAT point is moved toward the query by :class:`Polisher`; the proposal
    replaces the oracle's point only if the exact oracle proves it is a
    counterfactual under every constraint (``check_point``).  UNSAT and unknown
    answers pass through unchanged.
    """

    def __init__(self, oracle: Any, polisher: Polisher, deadline: Deadline) -> None:
        self.oracle = oracle
        self.polisher = polisher
        self.deadline = deadline
        self.n_polished = 0

    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        return self.improve(self.oracle.check(bound, deadline))

    def check_point(self, point: tuple[Any, ...], deadline: Deadline) -> Answer:
        return self.oracle.check_point(point, deadline)  # type: ignore[no-any-return]

    def improve(self, ans: Answer) -> Answer:
        if ans.verdict != "sat" or ans.point is None:
            return ans
        proposal = self.polisher(ans.point, self.deadline)
        if proposal is None:
            return ans
        if self.deadline.expired():
            return ans
        better = self.oracle.check_point(proposal, self.deadline)
        if (
            better.verdict != "sat"
            or better.distance is None
            or ans.distance is None
            or better.distance >= ans.distance
        ):
            return ans
        self.n_polished += 1
        return Answer("sat", better.point, better.distance, ans.lower_bound)


class _Distance:
    """Eq. (3) distance of a decoded raw row to the query, through :mod:`counterfact.metrics`
    (or its cost under the call's costs), plus its waiting under the query's timeline."""

    def __init__(self, schema: Any, norm: Any) -> None:
        self.encoder = DistanceEncoder(schema)
        self.norm = tuple(norm) if isinstance(norm, list) else norm

    def __call__(
        self, x: pd.Series, row: dict[str, Any], costs: Any = None, timeline: Any = None
    ) -> float:
        frame = pd.DataFrame([row])
        wait = 0.0 if timeline is None else float(timeline.waiting(frame)[0])
        if costs is not None:  # the call's costs replace eq. (3)
            return float(costs.evaluate(x, frame)[0]) + wait
        q = self.encoder.transform(x.to_frame().T)
        r = self.encoder.transform(frame)
        return float(self.encoder.distances(r, q[0], self.norm)[0]) + wait
