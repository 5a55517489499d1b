"""Emit a MILP (or MIQP) to SCIP (``pyscipopt``) and read the answer back.

:func:`solve_scip` runs named steps: :func:`_set_params`, the columns
(:func:`_add_columns`), the rows (:func:`_add_rows`), the objective with its
quadratic terms in one convex row over an epigraph variable
(:func:`_set_objective`), the run, and :func:`_read_answer`.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np

from ..._utils._deadline import CancelToken
from ..._utils._deps import import_optional
from ._solution import Solution, SolverError
from ._sparse import SparseModel
from ._tolerance import dropped_coefficient

__all__ = ["solve_scip"]

#: SCIP statuses that end a run early: an incumbent is ``feasible``, none a ``timeout``
_LIMITS = frozenset(
    (
        "timelimit",
        "nodelimit",
        "totalnodelimit",
        "stallnodelimit",
        "memlimit",
        "sollimit",
        "bestsollimit",
        "userinterrupt",
    )
)
#: SCIP statuses that answer the question without a solution
_NO_SOLUTION = {"infeasible": "infeasible", "unbounded": "unbounded", "inforunbd": "infeasible"}


def solve_scip(
    m: SparseModel,
    time_limit: float | None,
    gap: float,
    seed: int,
    feastol: float | None,
    keep: bool,
    max_solutions: int,
    verbose: bool,
    options: dict[str, Any] | None = None,
    *,
    cancel: CancelToken | None = None,
) -> Solution:
    """Solve ``m`` with SCIP (:class:`~._solution.SolveSettings` explains the
    arguments)."""
    scip = import_optional("pyscipopt", purpose="Solving a MILP with SCIP")
    dropped = dropped_coefficient(m)
    if dropped is not None:
        raise SolverError(f"SCIP cannot search this model as written: it has {dropped}.")
    t0 = time.perf_counter()
    if cancel is not None and cancel.cancelled:
        return Solution(
            status="timeout", backend="scip", message="cancelled before the solve started"
        )
    s = scip.Model()
    _set_params(
        s,
        time_limit=time_limit,
        gap=gap,
        seed=seed,
        feastol=feastol,
        max_solutions=max_solutions,
        verbose=verbose,
        options=options,
    )
    X = _add_columns(s, m)
    _add_rows(scip, s, m, X)
    _set_objective(scip, s, m, X)
    if cancel is None:
        s.optimize()
    elif not _optimize_cancellable(s, cancel):
        s.freeProb()
        return Solution(
            status="timeout", backend="scip", message="cancelled before the solve started"
        )
    sol = _read_answer(s, X, gap=gap, keep=keep, seconds=time.perf_counter() - t0)
    s.freeProb()
    return sol


def _optimize_cancellable(s: Any, cancel: CancelToken) -> bool:
    """``optimize`` without the GIL, interrupted (``interruptSolve``) when ``cancel`` is
    cancelled from another thread; the interrupt is never sent once the run is over.
    False when the token was cancelled before the run started (nothing ran)."""
    lock = threading.Lock()
    running = [True]

    def interrupt() -> None:
        with lock:
            if running[0]:
                try:
                    s.interruptSolve()
                except (
                    Exception
                ):  # pragma: no cover - a stage that cannot be interrupted: it ends soon
                    pass

    forget = cancel.on_cancel(interrupt)
    try:
        if cancel.cancelled:
            return False
        run = getattr(s, "optimizeNogil", None) or s.optimize
        run()
    finally:
        forget()
        with lock:
            running[0] = False
    return True


def _set_params(
    s: Any,
    *,
    time_limit: float | None,
    gap: float,
    seed: int,
    feastol: float | None,
    max_solutions: int,
    verbose: bool,
    options: dict[str, Any] | None,
) -> None:
    """Our parameters (output, gap, seed, solution store, limits), then the caller's."""
    if not verbose:
        s.hideOutput()
    s.setParam("limits/gap", float(gap))
    s.setParam("randomization/randomseedshift", int(seed) % 2**31)
    s.setParam("limits/maxsol", int(max(1, max_solutions)))
    if time_limit is not None:
        s.setParam("limits/time", max(float(time_limit), 1e-3))
    if feastol is not None:
        s.setParam("numerics/feastol", float(feastol))
    for key, val in (options or {}).items():
        try:
            s.setParam(key, val)
        except (KeyError, ValueError, TypeError) as exc:
            raise SolverError(
                f"SCIP rejected the parameter {key}={val!r} ({exc}); see SCIP's parameter list."
            ) from exc


def _add_columns(s: Any, m: SparseModel) -> list[Any]:
    """One SCIP variable per column (binary, integer or continuous; infinite bounds as None)."""
    X = []
    for k in range(m.n_vars):
        lb, ub = m._lb[k], m._ub[k]
        vt = "I" if m._int[k] else "C"
        if vt == "I" and lb >= 0 and ub <= 1:
            vt = "B"
        X.append(
            s.addVar(
                name=f"x{k}",
                vtype=vt,
                lb=lb if math.isfinite(lb) else None,
                ub=ub if math.isfinite(ub) else None,
            )
        )
    return X


def _add_rows(scip: Any, s: Any, m: SparseModel, X: list[Any]) -> None:
    """Each row ``lo <= a.x <= hi`` as an equality, a range or a one-sided constraint."""
    start, index, value = m._csr()
    for r in range(m.n_rows):
        a, b = start[r], start[r + 1]
        e = scip.quicksum(float(value[p]) * X[index[p]] for p in range(a, b))
        lo, hi = m._row_lo[r], m._row_hi[r]
        if lo == hi:
            s.addCons(e == lo)
        elif lo > -math.inf and hi < math.inf:
            s.addCons(lo <= (e <= hi))
        elif lo > -math.inf:
            s.addCons(e >= lo)
        elif hi < math.inf:
            s.addCons(e <= hi)


def _set_objective(scip: Any, s: Any, m: SparseModel, X: list[Any]) -> None:
    """Minimise the linear objective; quadratic terms bound an epigraph variable ``t``."""
    linear = scip.quicksum(float(c) * X[k] for k, c in m._obj.terms.items() if c != 0.0)
    if m.has_quadratic:
        t = s.addVar(name="quad_obj", lb=None, ub=None)
        q = scip.quicksum(float(w) * X[k] * X[k] for k, w in m._quad.items() if w != 0.0)
        s.addCons(q - t <= 0)
        s.setObjective(linear + t + m._obj.const, "minimize")
    else:
        s.setObjective(linear + m._obj.const, "minimize")


def _read_answer(s: Any, X: list[Any], *, gap: float, keep: bool, seconds: float) -> Solution:
    """The answer of a finished run: status, objective, bound, gap, nodes, values, store."""
    raw = s.getStatus()
    nsol = s.getNSols()
    x = None
    obj = math.nan
    if nsol > 0:
        best = s.getBestSol()
        x = np.array([s.getSolVal(best, v) for v in X], dtype=float)
        obj = float(s.getSolObjVal(best))
    try:
        bound = float(s.getDualbound())
    except Exception:  # pragma: no cover
        bound = math.nan
    status, g = _status(raw, nsol > 0, float(s.getGap()) if nsol > 0 else math.inf, gap)
    pool: list[np.ndarray] = []
    if keep and nsol > 1:
        for sol in s.getSols()[1:]:
            pool.append(np.array([s.getSolVal(sol, v) for v in X], dtype=float))
    try:
        nodes = int(s.getNNodes())
    except Exception:  # pragma: no cover
        nodes = 0
    return Solution(
        status=status,
        backend="scip",
        objective=obj,
        bound=bound,
        gap=g,
        nodes=nodes,
        seconds=seconds,
        x=x,
        pool=pool,
        message=str(raw),
    )


def _status(raw: str, has_sol: bool, g: float, gap: float) -> tuple[str, float]:
    """Our status word and the reported gap for SCIP's status ``raw``."""
    if raw in ("optimal", "gaplimit"):
        status = "optimal" if has_sol else "infeasible"
        if raw == "gaplimit":
            g = min(g, gap)
    elif raw in _NO_SOLUTION:
        status = _NO_SOLUTION[raw]
    elif raw in _LIMITS:
        status = "feasible" if has_sol else "timeout"
    else:
        status = "feasible" if has_sol else "error"
    if status == "optimal" and not math.isfinite(g):
        g = 0.0  # proven optimal where the relative gap is undefined (an objective of 0)
    return status, g
