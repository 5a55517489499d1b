"""The CE-OCL mixed-integer program of one query (Maragno et al. 2022, eq. (2) and Appendix A/C.2).

``min  dist(x, xhat) + alpha * sum_j b_j``  subject to

* validity: the compiled model embedded by
  :func:`~counterfact.solvers._milp.encode_model` with the target
  region ``>= margin`` (eq. 2c);
* coherence, integer domains, immutables, directions, ranges, allowed values
  and the change cap ``sum_j b_j <= K`` (eqs. 4, 5, 6) through
  :func:`~counterfact.solvers._milp.encode_inputs`;
* the trust region (eq. 3, :mod:`._trust`) and causal relations (eq. 7,
  :mod:`._causal`);
* relations between features (:func:`~counterfact.solvers._milp.encode_relations`:
  linear rows, implications with one binary and big-M rows from the bounds;
  a condition whose negation is a strict inequality over a continuous feature
  raises :class:`~counterfact.exceptions.UnsupportedConstraintError`).

Distances (per feature ``j``, ``q`` the query):

* ``l2``: ``sum_j ((x_j - q_j) / range_j)^2`` over numeric values and ordinal
  ranks, ``+ 1[changed]`` per categorical feature (the squared one-hot
  difference divided by 2).  SCIP takes the squares exactly (convex MIQP).
  HiGHS has no MIQP: with integer variables present each square becomes its
  secant interpolant (:meth:`Model.add_pwl_square`, 32 segments plus a finer
  grid near 0; over-estimate at most ``h^2/4`` on a segment of width ``h``),
  and the solution is *polished*: with the integer variables fixed, the
  breakpoints are refined around the solution and the LP re-solved until the
  exact objective stops improving.  The reported objective is always the
  exact l2 of the returned point.  HiGHS always takes this route: its QP
  solver returned non-optimal points on some of these models.  The secant
  model can pick a sub-optimal *integer* assignment (its error grows with the
  width of a feature's box), so the result is then *certified* by outer
  approximation (Kelley's cutting planes for a convex MIQP): the secants are
  replaced by tangents ``t >= 2 a dev - a^2`` (an under-estimate), whose MIP
  bound is a proven lower bound on the true optimum; its solution is polished
  into a new candidate, tangents are added at its deviations, and this repeats
  until upper and lower bound agree (``OA_GAP``) or ``OA_ROUNDS`` /
  the time limit run out -- then the status is ``feasible`` with the gap.
  An integer feature or ordinal rank with at most ``INTEGER_BREAKPOINTS``
  values in its box gets a breakpoint at every value instead, so its
  interpolant equals its square wherever the feature can be; when every
  square is of that kind the MIP's proven optimum is the l2 optimum and
  neither polish nor certificate is run.
* ``l1``: ``sum_j |x_j - q_j| / MAD_j`` (+ ``1[changed]`` per categorical).
* ``l0``: ``sum_j b_j``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._utils._deadline import CancelToken, Deadline
from ...solvers._milp import (
    FeatureCuts,
    Model,
    RawInputs,
    Solution,
    Template,
    Var,
    add_change_limit,
    cost_terms,
    cut_cost_bounds,
    encode_inputs,
    encode_model,
    encode_relations,
    lattice_steps,
    link_changes,
    quicksum,
    snap_to_cuts,
)
from ...solvers._milp._timeline import encode_timeline, time_moved, waiting_term
from ._causal import encode_causal
from ._trust import HullData, encode_hull

__all__ = ["Formulation", "build", "fixed_point", "narrow_box", "solve"]

#: segments of the piecewise-linear square (per feature)
PWL_SEGMENTS = 32
#: an integer feature (or ordinal rank) with at most this many values in its box
#: gets a breakpoint at each value: its interpolant is then exact wherever the
#: feature can be, and a model whose squares are all exact needs neither the
#: polish nor the outer-approximation certificate (the MIP's optimum is the
#: optimum; COMPAS: every feature integer)
INTEGER_BREAKPOINTS = 1000
#: outer-approximation certification of the HiGHS l2 optimum: rounds, and the
#: (absolute, relative) gap at which upper and lower bound count as equal
OA_ROUNDS = 8
OA_GAP = (1e-7, 1e-5)
#: HiGHS presolve is turned off above this many trust-region points: on the
#: dense lambda columns it cost more than the whole branch and bound
#: (Adult MLP, 4000 points, epsilon 0.05: 10 s -> 5 s per solve)
HULL_PRESOLVE_OFF = 1000
#: HiGHS presolve without probing (its rule bit 2^15).  Probing the split binaries
#: took 1-1.5 s of a 2-4 s solve on a 50-tree depth-6 forest, and 3-5 s on a
#: 100-tree depth-8 one, where HiGHS checks its time limit only between probing
#: rounds (a 5 s limit overrun by up to 2 s); without it the plain model solved
#: about a third faster (Graduate Admission, 5 queries)
PROBING_OFF = {"presolve_rule_off": 2**15}
#: HiGHS on a tree ensemble's model (which starts from the local search's verified
#: incumbent): no restart after root fixings and no RINS / RENS sub-MIPs.  With a
#: near-optimal start those sub-MIPs took half of a 1-node solve and the restarts
#: repeated the root's cut rounds; off, the same optima were proven 2.3x faster
#: (22 solves of 50-tree depth-6 forests behind a one-hot pipeline: German
#: Credit and Student Performance l2, Graduate Admission l1; 82 s -> 36 s)
TREE_OPTIONS = {
    "mip_allow_restart": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}
#: seconds left below which the polish and the certificate start no further solve
MIN_SOLVE = 0.05


@dataclass
class _Square:
    """A piecewise-linear square: epigraph ``t``, deviation ``dev`` in ``[lo, hi]``, its rows."""

    t: Var
    dev: Var
    lo: float
    hi: float
    rows: list[int]
    #: a breakpoint at every integer value of the feature: exact at every feasible point
    exact: bool = False


@dataclass
class Formulation:
    """A built model plus what is needed to decode and polish it."""

    m: Model
    inputs: RawInputs
    squares: list[_Square] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    #: the query's cancel token: every solve of this model stops when it is cancelled
    cancel: CancelToken | None = None
    #: HiGHS runs a tree ensemble's model with :data:`TREE_OPTIONS` (False: its defaults)
    tree_options: bool = True
    #: a tree ensemble's split variables per feature (the template's), for :func:`_snapped`
    cuts: Mapping[str, FeatureCuts] | None = None


def build(
    *,
    compiled: Any,
    schema: Any,
    query: Any,
    norm: str,
    scales: np.ndarray,
    alpha: float,
    solver: str,
    margin: float,
    changes: bool,
    hull: HullData | None,
    hull_scales: np.ndarray | None,
    trust_epsilon: float,
    trust_norm: str,
    trust_scope: str = "mutable",
    template: Template | None = None,
    radius: float | None = None,
    others: Sequence[tuple[Any, int]] = (),
    cut_bounds: bool = True,
    tree_options: bool = True,
) -> Formulation:
    """The MIP of one query (module docstring).  With a ``template`` (the model
    embedded once per fitted method) only the query-dependent parts are built.

    ``radius``: the cost of a known counterfactual; the query's box is then
    narrowed by :func:`narrow_box` (before a per-query estimator is embedded,
    so that its big-M constants use the narrowed box).

    ``cut_bounds``: bound each numeric / ordinal term of the objective by the
    tree cuts its feature crosses (:mod:`counterfact.solvers._milp._intervals`;
    valid rows, the optimum is unchanged); ``tree_options``: solve a tree
    ensemble's model with :data:`TREE_OPTIONS`.  False only to measure the
    plain model."""
    need_changes = changes or norm == "l0" or alpha > 0 or query.bounds.max_changes is not None
    m, inputs, inst = _start(template, compiled, query, margin, need_changes)
    diag: dict[str, Any] = {"template": inst is not None}
    costs = query.feature_costs() if getattr(query, "costs", None) is not None else None
    if radius is not None and math.isfinite(radius):
        diag.update(_narrow(m, inputs, float(radius), costs, norm, scales, alpha))
    _validity(m, inputs, compiled, query, margin, others, embedded=inst is not None)
    if query.bounds.max_changes is not None:
        skip = time_moved(query.bounds.timeline)  # waiting is no change one makes
        add_change_limit(m, inputs, int(query.bounds.max_changes), skip=skip)
    if hull is not None:
        trust = (hull, hull_scales, trust_epsilon, trust_norm, trust_scope)
        diag.update(_trust_region(m, inputs, *trust))
    diag.update(_query_constraints(m, inputs, query, schema))
    cuts = template.cuts if inst is not None and template is not None else None
    form = Formulation(
        m,
        inputs,
        diagnostics=diag,
        cancel=getattr(query, "cancel", None),
        tree_options=tree_options,
        cuts=cuts,
    )
    _full_objective(form, costs, norm, scales, alpha, solver, cuts if cut_bounds else None)
    diag.update(n_vars=m.n_vars, n_rows=m.n_rows, n_integer=m.n_integer)
    return form


def _validity(
    m: Model,
    inputs: RawInputs,
    compiled: Any,
    query: Any,
    margin: float,
    others: Sequence[tuple[Any, int]],
    *,
    embedded: bool,
) -> None:
    """Eq. (2c): the model's decision in the target region (unless the template has it
    ``embedded``), and every other model's decision (``robust_to``) over the same inputs."""
    if not embedded:
        encode_model(m, compiled, inputs.z, query.target_index, margin=margin)
    for other, target in others:
        encode_model(m, other, inputs.z, target, margin=margin)


def _full_objective(
    form: Formulation,
    costs: Any,
    norm: str,
    scales: np.ndarray,
    alpha: float,
    solver: str,
    ties: Mapping[str, FeatureCuts] | None,
) -> None:
    """The call's costs (exact terms, :func:`cost_terms`; they are the whole objective,
    ``alpha`` is not added), or the distance under ``norm`` plus ``alpha`` per change,
    whose terms a tree ensemble's cuts (``ties``, from the template) tie to the
    distance each feature must travel."""
    if costs is not None:
        for term in cost_terms(form.m, form.inputs, costs, cuts=ties):
            form.m.add_objective(term)
    else:
        _objective(form, norm, scales, alpha, solver, cuts=ties)


def _start(
    template: Template | None, compiled: Any, query: Any, margin: float, changes: bool
) -> tuple[Model, Any, Any]:
    """The model and the query's inputs: an instance of the fitted template (the
    estimator already embedded), or a fresh model.  Returns (model, inputs, instance)."""
    if template is not None:
        inst = template.instance(
            query.bounds, query.target_index, margin, changes=changes, decision=compiled
        )
        if inst is not None:
            m, inputs = inst
            return m, inputs, inst
    m = Model("ceocl")
    return m, encode_inputs(m, compiled.inputs, query.bounds, changes=changes), None


def _narrow(
    m: Model,
    inputs: Any,
    radius: float,
    costs: Any,
    norm: str,
    scales: np.ndarray,
    alpha: float,
) -> dict[str, Any]:
    """The query's box narrowed to what lies within ``radius`` (the cost of a known
    counterfactual): by the call's costs, or by the norm.  Returns its diagnostics."""
    if costs is not None:
        narrowed = narrow_costs(m, inputs, radius, costs, alpha=alpha)
    else:
        narrowed = narrow_box(m, inputs, radius, norm=norm, scales=scales, alpha=alpha)
    return {"radius": radius, "narrowed_features": narrowed}


def _trust_region(
    m: Model,
    inputs: Any,
    hull: HullData,
    hull_scales: np.ndarray | None,
    epsilon: float,
    norm: str,
    scope: str,
) -> dict[str, Any]:
    """The trust region over the inputs; with ``scope="mutable"`` the fixed features'
    coordinates are left out.  Returns its diagnostics."""
    skip = np.zeros(len(inputs.z), dtype=bool)
    if scope == "mutable":
        for blk, f in zip(inputs.space.blocks, inputs.features, strict=True):
            if f.fixed:
                skip[blk.start : blk.start + blk.size] = True
    return encode_hull(
        m,
        inputs.z,
        hull,
        hull_scales,  # type: ignore[arg-type]
        epsilon=epsilon,
        norm=norm,
        skip=skip,
    )


def _query_constraints(m: Model, inputs: Any, query: Any, schema: Any) -> dict[str, Any]:
    """The query's causal equations and relations between features."""
    diag: dict[str, Any] = {}
    if query.bounds.causal:
        diag["causal_relations"] = encode_causal(m, inputs, query.bounds.causal, query.x, schema)
    if query.bounds.relations:
        # relations between features; a strict inequality only over integral features
        encode_relations(m, inputs, query.bounds.bound_relations(), lattice_steps(inputs))
    timeline = query.bounds.timeline
    if timeline is not None:  # elapsed months; waiting joins the objective
        m.add_objective(waiting_term(timeline, encode_timeline(m, inputs, timeline)))
        diag["horizon_months"] = timeline.horizon
    return diag


#: relative and absolute slack on a radius (rounding must never cut the optimum off)
RADIUS_SLACK = (1e-7, 1e-9)


def narrow_box(
    m: Model, inputs: RawInputs, radius: float, *, norm: str, scales: np.ndarray, alpha: float
) -> int:
    """Narrow every feature's box to the values whose own objective term is at
    most ``radius`` (the cost of a known counterfactual).

    Every term of the objective is non-negative and belongs to one feature, so
    a point costing at most ``radius`` has each feature's term at most
    ``radius``: a changed feature pays ``alpha`` plus its distance, so a
    numeric value or ordinal rank stays within ``sqrt(radius - alpha)`` (l2)
    or ``radius - alpha`` (l1) scale units of the query, and a feature whose
    cheapest change (1 per categorical change, l0: 1 per change, plus
    ``alpha``) exceeds ``radius`` keeps the query's value.  The optimum lies
    in the narrowed box, so the optimum proven there is the optimum.  Returns
    how many features were narrowed."""
    r = float(radius) * (1 + RADIUS_SLACK[0]) + RADIUS_SLACK[1]
    left = r - alpha  # what a changed feature may spend beyond its change cost
    n = 0
    for j, f in enumerate(inputs.features):
        if f.fixed:
            continue
        if f.value is None:  # categorical: a change costs 1 + alpha
            qi = int(f.query)
            if left < 1.0 and m.var_bounds(f.indicators[qi])[1] >= 1.0:
                for k, v in enumerate(f.indicators):
                    if k != qi:
                        m.set_bounds(v, 0.0, 0.0)
                n += 1
            continue
        lo, hi = m.var_bounds(f.value)
        if not lo <= f.query <= hi:
            continue  # the query is outside its own box: nothing to centre on
        if norm == "l0":
            if left >= 1.0:
                continue
            width = 0.0
        elif left <= 0:
            width = 0.0
        else:
            width = (math.sqrt(left) if norm == "l2" else left) * float(scales[j])
            width = width * (1 + RADIUS_SLACK[0]) + RADIUS_SLACK[1]
        nlo, nhi = max(lo, f.query - width), min(hi, f.query + width)
        if m.is_integer(f.value):
            nlo, nhi = float(math.ceil(nlo - 1e-9)), float(math.floor(nhi + 1e-9))
        if nlo > lo or nhi < hi:
            m.set_bounds(f.value, nlo, nhi)
            n += 1
    return n


def fixed_point(
    form: Formulation, z: np.ndarray, *, time_limit: float | None = None
) -> np.ndarray | None:
    """The full solution vector of the model with every input fixed at ``z``
    (a raw vector): None when ``z`` is not a point of the model (its trust
    region, causal rows, change cap, diversity cuts or decision margin reject
    it).  With the inputs fixed, presolve settles almost everything: a few
    hundredths of a second on a 50-tree forest."""
    m = form.m.copy()
    for k, v in enumerate(form.inputs.z):
        lo, hi = m.var_bounds(v)
        val = float(z[k])
        if val < lo - 1e-9 or val > hi + 1e-9:
            return None
        val = min(max(val, lo), hi)
        m.set_bounds(v, val, val)
    # exact squares (SCIP's l2) need SCIP; the rest solves with HiGHS
    sol = m.solve("scip" if m.has_quadratic else "highs", time_limit=time_limit, cancel=form.cancel)
    if not sol.has_solution or sol.status not in ("optimal", "feasible"):
        return None
    return sol.x


def narrow_costs(
    m: Model, inputs: RawInputs, radius: float, costs: Sequence[Any], *, alpha: float
) -> int:
    """:func:`narrow_box` under the call's costs: a feature keeps the values whose own
    cost (plus ``alpha`` for a change) is at most ``radius``; returns how many
    features were narrowed."""
    r = float(radius) * (1 + RADIUS_SLACK[0]) + RADIUS_SLACK[1]
    left = r - alpha
    n = 0
    for f, c in zip(inputs.features, costs, strict=True):
        if f.fixed:
            continue
        if f.value is None or c.kind == "table":
            inds = f.indicators if (f.value is None or f.values is not None) else []
            keys = range(len(inds)) if f.value is None else (f.values or ())
            hit = False
            for v, key in zip(inds, keys, strict=True):
                if float(c(key)[()]) > left and m.var_bounds(v)[1] > 0:
                    m.set_bounds(v, 0.0, 0.0)
                    hit = True
            n += hit
            if f.value is None or f.values is not None:
                continue
        lo, hi = m.var_bounds(f.value)
        if not lo <= f.query <= hi:
            continue
        if c.kind == "table":  # an ordinal rank: the ranks within the budget around the query
            ok = [k for k in range(round(lo), round(hi) + 1) if float(c(k)[()]) <= left]
            nlo, nhi = float(min(ok, default=f.query)), float(max(ok, default=f.query))
        else:
            nlo, nhi = c.interval(max(left, 0.0), lo, hi)
        if m.is_integer(f.value):
            nlo, nhi = float(math.ceil(nlo - 1e-9)), float(math.floor(nhi + 1e-9))
        nlo, nhi = min(nlo, f.query), max(nhi, f.query)
        if nlo > lo or nhi < hi:
            m.set_bounds(f.value, max(lo, nlo), min(hi, nhi))
            n += 1
    return n


def _objective(
    form: Formulation,
    norm: str,
    scales: np.ndarray,
    alpha: float,
    solver: str,
    *,
    distance: bool = True,
    cuts: Mapping[str, FeatureCuts] | None = None,
) -> None:
    """The distance under ``norm`` (``distance=False``: only the ``alpha`` term) plus
    ``alpha`` per change.  With a tree ensemble's ``cuts`` each numeric / ordinal
    term is also bounded by the cuts its feature crosses (:func:`_tie_to_cuts`)."""
    m, inputs = form.m, form.inputs
    # HiGHS: no MIQP, and its QP solver proved unreliable here
    use_pwl = norm == "l2" and solver == "highs"
    if distance:
        for j, f in enumerate(inputs.features):
            if f.fixed:
                continue
            term = _distance_term(form, f, norm, scales[j], use_pwl)
            if cuts and f.name in cuts and term is not None:
                _tie_to_cuts(m, term, f, cuts[f.name], float(scales[j]), norm)
        if cuts:
            for f in inputs.features:
                if f.name in cuts:
                    link_changes(m, f, cuts[f.name])
    if alpha > 0:
        ch = inputs.changed()
        if ch:
            m.add_objective(quicksum(ch) * float(alpha))


def _distance_term(form: Formulation, f: Any, norm: str, scale: Any, use_pwl: bool) -> Any:
    """Add feature ``f``'s distance term to the objective; returns the variable or
    expression that holds it when a numeric / ordinal term has one (else None)."""
    m = form.m
    if norm == "l0":
        m.add_objective(f.changed)
        return None
    if f.value is None:  # categorical: 1[changed]
        m.add_objective(1 - f.indicators[int(f.query)])
        return None
    s = float(scale)
    d = (f.value - f.query) * (1.0 / s)
    lo, hi = m.var_bounds(f.value)
    if norm == "l1":
        term = d if lo >= f.query else (-d if hi <= f.query else m.add_abs(d, name=f"d_{f.name}"))
        m.add_objective(term)
        return term
    # a well-scaled deviation variable: squares of raw values lose precision
    dv = m.add_var((lo - f.query) / s, (hi - f.query) / s, name=f"dev_{f.name}")
    m.add_eq(dv - d, 0.0)
    if not use_pwl:
        m.add_square(dv, 1.0)
        return None
    return _pwl_square(form, f, dv, s, lo, hi)


def _pwl_square(form: Formulation, f: Any, dv: Var, s: float, lo: float, hi: float) -> Var:
    """The secant interpolant of ``dv**2`` (feature ``f``'s scaled deviation) added to the
    objective and recorded in ``form.squares``; an integer feature with at most
    :data:`INTEGER_BREAKPOINTS` values gets a breakpoint at each (exact there)."""
    m = form.m
    dlo, dhi = (lo - f.query) / s, (hi - f.query) / s
    r0 = m.n_rows
    pts = None
    if m.is_integer(f.value) and hi - lo <= INTEGER_BREAKPOINTS:
        pts = (np.arange(lo, hi + 1.0) - f.query) / s  # every value the feature can take
    term = m.add_pwl_square(dv, dlo, dhi, segments=PWL_SEGMENTS, points=pts, name=f"sq_{f.name}")
    m.add_objective(term)
    form.squares.append(
        _Square(term, dv, dlo, dhi, list(range(r0, m.n_rows)), exact=pts is not None)
    )
    return term


def _tie_to_cuts(m: Model, term: Any, f: Any, fc: FeatureCuts, scale: float, norm: str) -> None:
    """``term >= E`` for every bound ``E`` of :func:`~counterfact.solvers._milp.cut_cost_bounds`:
    the feature's cost (l1: ``|v - q| / scale``; l2: its square) is at least the
    cost of the last tree cut it crosses (valid at every point of the model, so
    the optimum is unchanged; the relaxation sees the distance to travel)."""
    q = float(f.query)
    power = 1 if norm == "l1" else 2
    for e in cut_cost_bounds(fc, q, lambda v: (abs(v - q) / scale) ** power):
        m.add_ge(term - e, 0.0)


def solve(
    form: Formulation,
    solver: str,
    *,
    time_limit: float | None,
    seed: int,
    keep_solutions: bool,
    feastol: float | None = None,
    start: np.ndarray | None = None,
    certify: bool = True,
) -> tuple[Solution, float]:
    """Solve; polish a piecewise-linear l2 solution into the exact QP optimum for its
    integer assignment.  Returns the solution and the exact objective of its point."""
    # the polish and the certificate share the solve's time (and its cancel token)
    deadline = Deadline.after(time_limit, token=form.cancel)
    opts = _options(form, solver)
    sol = form.m.solve(
        solver,
        time_limit=time_limit,
        seed=seed,
        keep_solutions=keep_solutions,
        feastol=feastol,
        options=opts,
        start=start,
        cancel=form.cancel,
    )
    if not sol.has_solution:
        return sol, math.nan
    if form.squares and not all(sq.exact for sq in form.squares):
        sol.x = _polish(form, sol.x, deadline)  # type: ignore[arg-type]
        if sol.status == "optimal" and certify:
            _certify(form, sol, deadline=deadline, seed=seed)
    if form.cuts:
        sol.x = _snapped(form, sol.x, deadline)  # type: ignore[arg-type]
    return sol, exact_objective(form, sol.x)  # type: ignore[arg-type]


def _snapped(form: Formulation, x: np.ndarray, deadline: Deadline) -> np.ndarray:
    """``x`` with its real values on the sides of the tree cuts that its binaries
    chose (:func:`~counterfact.solvers._milp.snap_to_cuts`; a value within the
    solver's tolerances of a cut can fall on the other branch in the real model)
    and every other variable re-derived by an LP with the integers and inputs
    fixed; ``x`` itself when nothing moves or that LP fails."""
    z = snap_to_cuts(form.m, x, form.inputs, form.cuts or {})
    if z is None or deadline.reserve(MIN_SOLVE).expired():
        return x
    m = form.m.copy()
    m.fix_integers(x)
    for v in form.inputs.z:
        m.set_bounds(v, float(z[v.index]), float(z[v.index]))
    res = m.solve(
        "scip" if m.has_quadratic else "highs", time_limit=deadline.seconds(), cancel=deadline.token
    )
    better = res.x if res.has_solution and res.status == "optimal" else None
    return x if better is None else better


def _options(form: Formulation, solver: str) -> dict[str, Any] | None:
    """Native solver options for this model (see :data:`HULL_PRESOLVE_OFF` and
    :data:`PROBING_OFF`)."""
    if solver != "highs":
        return None
    if form.diagnostics.get("hull_points", 0) >= HULL_PRESOLVE_OFF:
        return {"presolve": "off"}
    if form.diagnostics.get("template") and form.tree_options:  # a tree ensemble's template
        return {**PROBING_OFF, **TREE_OPTIONS}
    return dict(PROBING_OFF)


def _converged(upper: float, lower: float) -> bool:
    return upper - lower <= OA_GAP[0] + OA_GAP[1] * abs(upper)


def _certify(form: Formulation, sol: Solution, *, deadline: Deadline, seed: int) -> None:
    """Outer approximation (module docstring): prove the polished secant solution
    optimal, or improve it, or leave it as ``feasible`` with the remaining gap,
    by ``deadline``.  Updates ``sol`` in place (``x``, ``status``, ``bound``,
    ``gap``, ``nodes``)."""
    upper = exact_objective(form, sol.x)  # type: ignore[arg-type]
    lb = form.m.copy()
    lb.remove_rows([r for sq in form.squares for r in sq.rows])
    for sq in form.squares:
        pts = Model.pwl_breakpoints(sq.lo, sq.hi, PWL_SEGMENTS)
        _tangents(lb, sq, np.append(pts, sol.x[sq.dev.index]))  # type: ignore[index]
    lower = -math.inf
    for _ in range(OA_ROUNDS):
        if deadline.reserve(MIN_SOLVE).expired():
            break
        # the true optimum is <= upper, so nothing above it needs exploring
        opts = {
            **(_options(form, "highs") or {}),
            "objective_bound": upper + OA_GAP[0] + OA_GAP[1] * abs(upper),
        }
        res = lb.solve(
            "highs", time_limit=deadline.seconds(), seed=seed, options=opts, cancel=deadline.token
        )
        sol.nodes += int(res.nodes)
        if not res.has_solution:
            break
        # HiGHS's dual bound is a valid lower bound whatever the status (it may stop
        # on its absolute gap, 1e-6, which is large next to an l2 optimum of 1e-3)
        if math.isfinite(res.bound):
            lower = max(
                lower, min(res.bound, res.objective) if res.status == "optimal" else res.bound
            )
        elif res.status == "optimal":
            lower = max(lower, res.objective)
        if _converged(upper, lower):
            break
        cand = _polish(form, res.x, deadline)  # type: ignore[arg-type]
        val = exact_objective(form, cand)
        if val < upper - 1e-12:
            sol.x, upper = cand, val
        if _converged(upper, lower) or res.status != "optimal":
            break
        for sq in form.squares:
            _tangents(lb, sq, [res.x[sq.dev.index], cand[sq.dev.index]])  # type: ignore[index]
    sol.bound = lower
    sol.gap = max(0.0, upper - lower) / max(abs(upper), 1e-10) if math.isfinite(lower) else math.inf
    if not _converged(upper, lower):
        sol.status = "feasible"


def _tangents(m: Model, sq: _Square, points: Any) -> None:
    """``t >= 2 a dev - a^2`` (tangent of the square at ``a``) for each point."""
    for a in np.unique(np.clip(np.asarray(points, dtype=float), sq.lo, sq.hi)):
        m.add_ge(sq.t - (2.0 * a) * sq.dev, -a * a)


def _polish(form: Formulation, x: np.ndarray, deadline: Deadline) -> np.ndarray:
    """Fix the integer variables and refine every piecewise-linear square around the
    current deviation (breakpoints ``v +- h/8^k``), re-solving the LP, until the
    exact objective stops improving or ``deadline`` is near.  (LP only: HiGHS's
    QP solver returned non-optimal points on these models.)"""
    best, best_val = x, exact_objective(form, x)
    if deadline.reserve(MIN_SOLVE).expired():
        return best
    m2 = form.m.copy()
    m2.fix_integers(x)
    old_rows = [r for sq in form.squares for r in sq.rows]
    cur = x
    for k in range(1, 5):
        m3 = m2.copy()
        m3.remove_rows(old_rows)
        for sq in form.squares:
            v = float(cur[sq.dev.index])
            h = (sq.hi - sq.lo) / PWL_SEGMENTS
            local = v + np.array([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0]) * h / 8.0 ** (k - 1)
            pts = np.concatenate([Model.pwl_breakpoints(sq.lo, sq.hi, PWL_SEGMENTS), local])
            m3.add_pwl_square(sq.dev, sq.lo, sq.hi, points=pts, t=sq.t)
        if deadline.reserve(MIN_SOLVE).expired():
            break
        res = m3.solve("highs", time_limit=deadline.seconds(), cancel=deadline.token)
        if not (res.has_solution and res.status == "optimal"):
            break
        cur = res.x  # type: ignore[assignment]
        val = exact_objective(form, cur)
        if val < best_val - 1e-12:
            improved = best_val - val
            best, best_val = cur, val
            if improved <= 1e-9 * max(1.0, abs(val)):
                break
        else:
            break
    return best


def exact_objective(form: Formulation, x: np.ndarray) -> float:
    """The objective at ``x`` with exact squares in place of their interpolants."""
    m = form.m
    val = m.objective_value(x)
    for sq in form.squares:
        dv = x[sq.dev.index]
        val += dv * dv - x[sq.t.index]
    return float(val)
