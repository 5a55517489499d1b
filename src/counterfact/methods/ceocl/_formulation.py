"""The CE-OCL mixed-integer program of one query (Maragno et al. 2022, eq. (2) and Appendix A/C.2).

``min  dist(x, xhat) + alpha * sum_j b_j``  subject to

* validity: the compiled model embedded by
  :func:`~counterfact.solvers.mip_backend.encode_model` with the target
  region ``>= margin`` (eq. 2c);
* coherence, integer domains, immutables, directions, ranges, allowed values
  and the change cap ``sum_j b_j <= K`` (eqs. 4, 5, 6) through
  :func:`~counterfact.solvers.mip_backend.encode_inputs`;
* the trust region (eq. 3, :mod:`._trust`) and causal relations (eq. 7,
  :mod:`._causal`).

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
* ``l1``: ``sum_j |x_j - q_j| / MAD_j`` (+ ``1[changed]`` per categorical).
* ``l0``: ``sum_j b_j``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...solvers.mip import Model, Solution, Var, quicksum
from ...solvers.mip_backend import (
    RawInputs,
    Template,
    add_change_limit,
    encode_inputs,
    encode_model,
)
from ._causal import encode_causal
from ._trust import HullData, encode_hull

__all__ = ["Formulation", "build", "solve"]

#: segments of the piecewise-linear square (per feature)
PWL_SEGMENTS = 32
#: outer-approximation certification of the HiGHS l2 optimum: rounds, and the
#: (absolute, relative) gap at which upper and lower bound count as equal
OA_ROUNDS = 8
OA_GAP = (1e-7, 1e-5)
#: HiGHS presolve is turned off above this many trust-region points: on the
#: dense lambda columns it cost more than the whole branch and bound
#: (Adult MLP, 4000 points, epsilon 0.05: 10 s -> 5 s per solve)
HULL_PRESOLVE_OFF = 1000


@dataclass
class _Square:
    """A piecewise-linear square: epigraph ``t``, deviation ``dev`` in ``[lo, hi]``, its rows."""

    t: Var
    dev: Var
    lo: float
    hi: float
    rows: list[int]


@dataclass
class Formulation:
    """A built model plus what is needed to decode and polish it."""

    m: Model
    inputs: RawInputs
    squares: list[_Square] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)


def build(
    *,
    compiled: Any,
    schema: Any,
    query: Any,
    norm: str,
    scales: np.ndarray,
    alpha: float,
    backend: str,
    margin: float,
    changes: bool,
    hull: HullData | None,
    hull_scales: np.ndarray | None,
    trust_epsilon: float,
    trust_norm: str,
    trust_scope: str = "mutable",
    template: Template | None = None,
) -> Formulation:
    """The MIP of one query (module docstring).  With a ``template`` (the model
    embedded once per fitted method) only the query-dependent parts are built."""
    need_changes = changes or norm == "l0" or alpha > 0 or query.bounds.max_changes is not None
    inst = None
    if template is not None:
        inst = template.instance(query.bounds, query.target_index, margin, changes=need_changes)
    diag: dict[str, Any] = {"template": inst is not None}
    if inst is not None:
        m, inputs = inst
    else:
        m = Model("ceocl")
        inputs = encode_inputs(m, compiled.inputs, query.bounds, changes=need_changes)
        encode_model(m, compiled, inputs.z, query.target_index, margin=margin)
    if query.bounds.max_changes is not None:
        add_change_limit(m, inputs, int(query.bounds.max_changes))
    if hull is not None:
        skip = np.zeros(len(inputs.z), dtype=bool)
        if trust_scope == "mutable":
            for blk, f in zip(inputs.space.blocks, inputs.features, strict=True):
                if f.fixed:
                    skip[blk.start : blk.start + blk.size] = True
        diag.update(encode_hull(m, inputs.z, hull, hull_scales, epsilon=trust_epsilon, norm=trust_norm, skip=skip))  # type: ignore[arg-type]
    if query.bounds.causal:
        diag["causal_relations"] = encode_causal(m, inputs, query.bounds.causal, query.x, schema)
    form = Formulation(m, inputs, diagnostics=diag)
    _objective(form, norm, scales, alpha, backend)
    diag.update(n_vars=m.n_vars, n_rows=m.n_rows, n_integer=m.n_integer)
    return form


def _objective(form: Formulation, norm: str, scales: np.ndarray, alpha: float, backend: str) -> None:
    m, inputs = form.m, form.inputs
    use_pwl = norm == "l2" and backend == "highs"  # HiGHS: no MIQP, and its QP solver proved unreliable here
    for j, f in enumerate(inputs.features):
        if f.fixed:
            continue
        if norm == "l0":
            m.add_objective(f.changed)  # type: ignore[arg-type]
            continue
        if f.value is None:  # categorical: 1[changed]
            m.add_objective(1 - f.indicators[int(f.query)])
            continue
        s = float(scales[j])
        d = (f.value - f.query) * (1.0 / s)
        lo, hi = m.var_bounds(f.value)
        if norm == "l1":
            if lo >= f.query:
                m.add_objective(d)
            elif hi <= f.query:
                m.add_objective(-d)
            else:
                m.add_objective(m.add_abs(d, name=f"d_{f.name}"))
        else:
            # a well-scaled deviation variable: squares of raw values lose precision
            dv = m.add_var((lo - f.query) / s, (hi - f.query) / s, name=f"dev_{f.name}")
            m.add_eq(dv - d, 0.0)
            if use_pwl:
                dlo, dhi = (lo - f.query) / s, (hi - f.query) / s
                r0 = m.n_rows
                t = m.add_pwl_square(dv, dlo, dhi, segments=PWL_SEGMENTS, name=f"sq_{f.name}")
                m.add_objective(t)
                form.squares.append(_Square(t, dv, dlo, dhi, list(range(r0, m.n_rows))))
            else:
                m.add_square(dv, 1.0)
    if alpha > 0:
        ch = inputs.changed()
        if ch:
            m.add_objective(quicksum(ch) * float(alpha))


def solve(
    form: Formulation,
    backend: str,
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
    t_start = time.perf_counter()
    opts = _options(form, backend)
    sol = form.m.solve(
        backend, time_limit=time_limit, seed=seed, keep_solutions=keep_solutions, feastol=feastol, options=opts,
        start=start,
    )
    if not sol.has_solution:
        return sol, math.nan
    if form.squares:
        left = None if time_limit is None else time_limit - (time.perf_counter() - t_start)
        sol.x = _polish(form, sol.x, left)  # type: ignore[arg-type]
        if sol.status == "optimal" and certify:
            left = None if time_limit is None else time_limit - (time.perf_counter() - t_start)
            _certify(form, sol, time_limit=left, seed=seed)
    return sol, exact_objective(form, sol.x)  # type: ignore[arg-type]


def _options(form: Formulation, backend: str) -> dict[str, Any] | None:
    """Native solver options for this model (see :data:`HULL_PRESOLVE_OFF`)."""
    if backend == "highs" and form.diagnostics.get("hull_points", 0) >= HULL_PRESOLVE_OFF:
        return {"presolve": "off"}
    return None


def _converged(upper: float, lower: float) -> bool:
    return upper - lower <= OA_GAP[0] + OA_GAP[1] * abs(upper)


def _certify(form: Formulation, sol: Solution, *, time_limit: float | None, seed: int) -> None:
    """Outer approximation (module docstring): prove the polished secant solution
    optimal, or improve it, or leave it as ``feasible`` with the remaining gap.
    Updates ``sol`` in place (``x``, ``status``, ``bound``, ``gap``, ``nodes``)."""
    t0 = time.perf_counter()
    upper = exact_objective(form, sol.x)  # type: ignore[arg-type]
    lb = form.m.copy()
    lb.remove_rows([r for sq in form.squares for r in sq.rows])
    for sq in form.squares:
        pts = Model.pwl_breakpoints(sq.lo, sq.hi, PWL_SEGMENTS)
        _tangents(lb, sq, np.append(pts, sol.x[sq.dev.index]))  # type: ignore[index]
    lower = -math.inf
    for _ in range(OA_ROUNDS):
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0.05:
            break
        # the true optimum is <= upper, so nothing above it needs exploring
        opts = {**(_options(form, "highs") or {}), "objective_bound": upper + OA_GAP[0] + OA_GAP[1] * abs(upper)}
        res = lb.solve("highs", time_limit=left, seed=seed, options=opts)
        sol.nodes += int(res.nodes)
        if not res.has_solution:
            break
        bound = res.bound if math.isfinite(res.bound) else res.objective
        if res.status == "optimal":
            lower = max(lower, min(bound, res.objective))
        if _converged(upper, lower):
            break
        cand = _polish(form, res.x, left)  # type: ignore[arg-type]
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


def _polish(form: Formulation, x: np.ndarray, time_limit: float | None) -> np.ndarray:
    """Fix the integer variables and refine every piecewise-linear square around the
    current deviation (breakpoints ``v +- h/8^k``), re-solving the LP, until the
    exact objective stops improving.  (LP only: HiGHS's QP solver returned
    non-optimal points on these models.)"""
    best, best_val = x, exact_objective(form, x)
    t0 = time.perf_counter()
    if time_limit is not None and time_limit <= 0.05:
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
        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        if left is not None and left <= 0.05:
            break
        res = m3.solve("highs", time_limit=left)
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

