"""Emit a MILP to HiGHS (``highspy``) and read the answer back.

:func:`solve_highs` runs named steps: :func:`_set_options`, :func:`_load` (the
model as HiGHS arrays, :func:`_highs_model`, the time left and an optional start,
:func:`_set_start`), then :func:`_run_and_read` (the run in a watched worker thread
under a time limit or a cancel token: :func:`_run_watched`, else :func:`_abandoned`
at the deadline or on cancellation; then :func:`_read_answer`).
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from ..._utils._deadline import CancelToken
from ..._utils._deps import import_optional
from ._solution import Solution, SolverError
from ._sparse import SparseModel
from ._tolerance import dropped_coefficient

__all__ = ["GRACE", "new_highs", "solve_highs"]


def _highspy() -> Any:
    return import_optional("highspy", purpose="Solving a MILP with HiGHS")


# ------------------------------------------------------------ the instance
_BANNER_LOCK = threading.Lock()
_BANNER_DONE = False


def _quiet_first_highs(highspy: Any, verbose: bool = False) -> Any:
    """The process's first ``Highs()``: HiGHS prints its banner (``Running HiGHS ...``)
    on file descriptor 1 inside the constructor, before any option can be set.
    That one construction runs with fd 1 pointed at the null device (with
    ``verbose``: at fd 2, stderr, beside the solver's log), so standard output
    carries only what the caller asked for and a quiet run prints nothing."""
    global _BANNER_DONE
    with _BANNER_LOCK:
        if _BANNER_DONE:
            return highspy.Highs()
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError):  # no usable fd 1: nothing to protect
            _BANNER_DONE = True
            return highspy.Highs()
        sink = 2 if verbose else os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(sink, 1)
            h = highspy.Highs()
            _c_flush()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            if sink != 2:
                os.close(sink)
        _BANNER_DONE = True
        return h


def _c_flush() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # pragma: no cover - no C runtime to flush
        pass


def new_highs(verbose: bool = False) -> Any:
    """A ``highspy.Highs`` with console logging off (``verbose``: its log goes to stderr)."""
    highspy = _highspy()
    h = _quiet_first_highs(highspy, verbose)
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("log_to_console", False)
    if verbose:

        def _log(_kind: Any, message: str, *_rest: Any) -> None:
            sys.stderr.write(message)

        try:
            h.setLogCallback(_log, None)
        except (AttributeError, TypeError):  # newer highspy: the callback API
            try:
                h.cbLogging.subscribe(lambda e: sys.stderr.write(str(getattr(e, "message", ""))))
            except AttributeError:  # pragma: no cover - no logging hook at all
                pass
    return h


# ---------------------------------------------------- a watched run
#: HiGHS checks its ``time_limit`` between phases only: inside probing (presolve)
#: and root cut separation of a large model (a 100-tree depth-8 forest) a 4 s
#: limit was overrun by 1-7 s on a loaded machine.  So a MIP with a time limit
#: runs in a worker thread (HiGHS releases the GIL) with interrupt callbacks
#: polled inside the simplex, IPM and branch and bound; at the deadline the
#: caller stops waiting and takes the best incumbent reported so far (the
#: improving-solution callback; else the start it passed), and the worker
#: stops at HiGHS's next check.  Seconds granted past the deadline before
#: giving up on the solver's own answer:
GRACE = 0.05


class _Watch:
    """Deadline (and cancellation) interrupt plus a record of the improving incumbents of one
    run."""

    def __init__(self, h: Any, deadline: float, n: int, cancel: CancelToken | None = None) -> None:
        self.deadline = deadline
        self.n = n
        self.cancel = cancel
        self.stop = False
        self.best: tuple[float, np.ndarray] | None = None
        self.found: list[np.ndarray] = []
        for name in ("cbSimplexInterrupt", "cbIpmInterrupt", "cbMipInterrupt"):
            try:
                getattr(h, name).subscribe(self._interrupt)
            except AttributeError:  # pragma: no cover - highspy without the callback API
                return
        try:
            h.cbMipImprovingSolution.subscribe(self._improving)
        except AttributeError:  # pragma: no cover
            pass

    def _interrupt(self, event: Any) -> None:
        if (
            self.stop
            or time.perf_counter() > self.deadline
            or (self.cancel is not None and self.cancel.cancelled)
        ):
            event.interrupt()

    def _improving(self, event: Any) -> None:
        try:
            x = np.array(event.data_out.mip_solution, dtype=float)
            obj = float(event.data_out.objective_function_value)
        except (AttributeError, TypeError, ValueError):  # pragma: no cover - unexpected payload
            return
        if x.size == self.n and (self.best is None or obj < self.best[0]):
            self.best = (obj, x)
            self.found.append(x)


#: workers given up at their deadline, still finishing; joined at exit (a HiGHS
#: thread still running while the interpreter shuts down aborts the process)
_ABANDONED: list[threading.Thread] = []


@atexit.register
def _join_abandoned() -> None:  # pragma: no cover - runs at interpreter exit
    for th in _ABANDONED:
        th.join(timeout=60.0)


def _run_watched(h: Any, watch: _Watch) -> bool:
    """Run ``h`` in a worker thread until it ends, the deadline (plus
    :data:`GRACE`) passes or the watch's token is cancelled; True when it
    ended (its answer can be read)."""
    box: dict[str, BaseException] = {}
    done = threading.Event()

    def work() -> None:
        try:
            h.run()
        except BaseException as exc:  # pragma: no cover - surfaced below
            box["error"] = exc
        finally:
            done.set()

    th = threading.Thread(target=work, name="counterfact-highs", daemon=True)
    _ABANDONED[:] = [t for t in _ABANDONED if t.is_alive()]
    forget = watch.cancel.on_cancel(done.set) if watch.cancel is not None else None
    th.start()
    try:
        wait = (
            None
            if math.isinf(watch.deadline)
            else max(watch.deadline - time.perf_counter(), 0.0) + GRACE
        )
        done.wait(wait)
        if th.is_alive() and watch.cancel is not None and watch.cancel.cancelled:
            th.join(GRACE)  # interrupted at HiGHS's next check: usually within milliseconds
    finally:
        if forget is not None:
            forget()
    if th.is_alive():
        watch.stop = True  # the worker stops at HiGHS's next check; nobody reads it
        _ABANDONED.append(th)
        return False
    if "error" in box:  # pragma: no cover
        raise box["error"]
    return True


# ----------------------------------------------------------------- solve
def solve_highs(
    m: SparseModel,
    time_limit: float | None,
    gap: float,
    threads: int,
    seed: int,
    feastol: float | None,
    keep: bool,
    verbose: bool,
    options: dict[str, Any] | None = None,
    mip_start: dict[int, float] | np.ndarray | None = None,
    *,
    cancel: CancelToken | None = None,
) -> Solution:
    """Solve ``m`` with HiGHS (:class:`~._solution.SolveSettings` explains the
    arguments)."""
    highspy = _highspy()
    _refuse_miqp(m)
    t0 = time.perf_counter()
    if cancel is not None and cancel.cancelled:
        return _cancelled("highs")
    h = new_highs(verbose)
    _set_options(
        h, highspy, threads=threads, gap=gap, seed=seed, feastol=feastol, keep=keep, options=options
    )
    _load(h, highspy, m, t0=t0, time_limit=time_limit, mip_start=mip_start)
    sol = _run_and_read(
        h,
        highspy,
        m,
        t0=t0,
        time_limit=time_limit,
        gap=gap,
        keep=keep,
        mip_start=mip_start,
        cancel=cancel,
    )
    if mip_start is not None and m.n_integer and _stale(m, sol):
        # HiGHS (1.16) can carry a start wrongly into the presolved model: it then reports the
        # reduced model's optimum with the start's own vector (seen on a scorecard's MIP, where
        # that vector is 2x worse than the objective claimed).  Solved again without the start.
        return solve_highs(
            m,
            time_limit=_time_left(time_limit, t0),
            gap=gap,
            threads=threads,
            seed=seed,
            feastol=feastol,
            keep=keep,
            verbose=verbose,
            options=options,
            mip_start=None,
            cancel=cancel,
        )
    return sol


def _refuse_miqp(m: SparseModel) -> None:
    """Raise when ``m`` has quadratic objective terms and integer variables (MIQP)."""
    if m.has_quadratic and m.n_integer:
        raise SolverError(
            "HiGHS cannot solve models with both quadratic objective terms and integer variables "
            "(MIQP). Use solver='scip', or a piecewise-linear square (Model.add_pwl_square)."
        )


def _time_left(time_limit: float | None, t0: float) -> float | None:
    """What is left of ``time_limit`` (seconds, at least 1 ms) since ``t0``; None: no limit."""
    if time_limit is None:
        return None
    return max(float(time_limit) - (time.perf_counter() - t0), 1e-3)


def _load(
    h: Any,
    highspy: Any,
    m: SparseModel,
    *,
    t0: float,
    time_limit: float | None,
    mip_start: dict[int, float] | np.ndarray | None,
) -> None:
    """Pass ``m`` to ``h``, then the time left and the start (a MIP's only); a model with a
    coefficient HiGHS would treat as zero is refused (:func:`._tolerance.dropped_coefficient`)."""
    dropped = dropped_coefficient(m)
    if dropped is not None:
        raise SolverError(f"HiGHS cannot search this model as written: it has {dropped}.")
    if h.passModel(_highs_model(highspy, m)) == highspy.HighsStatus.kError:
        raise SolverError(_rejected(m))
    if time_limit is not None:
        # the limit covers emitting the model as well as HiGHS's own run
        h.setOptionValue("time_limit", _time_left(time_limit, t0))
    if mip_start is not None and m.n_integer:
        _set_start(h, highspy, mip_start)


def _run_and_read(
    h: Any,
    highspy: Any,
    m: SparseModel,
    *,
    t0: float,
    time_limit: float | None,
    gap: float,
    keep: bool,
    mip_start: dict[int, float] | np.ndarray | None,
    cancel: CancelToken | None,
) -> Solution:
    """Run ``h`` (watched under a MIP's time limit or a cancel token) and read its answer;
    :func:`_abandoned` when the watch gave the run up."""
    if (time_limit is not None and m.n_integer) or cancel is not None:
        # an LP keeps HiGHS's own time limit: only a cancellation gives it up
        at = t0 + float(time_limit) if time_limit is not None and m.n_integer else math.inf
        watch = _Watch(h, at, m.n_vars, cancel)
        if not _run_watched(h, watch):
            return _abandoned(m, watch, mip_start, keep, time.perf_counter() - t0)
    else:
        h.run()
    return _read_answer(h, highspy, m, gap=gap, keep=keep, seconds=time.perf_counter() - t0)


def _stale(m: SparseModel, sol: Solution) -> bool:
    """Whether the returned vector's objective is not the objective HiGHS reports."""
    if sol.x is None or not math.isfinite(sol.objective):
        return False
    return not math.isclose(m.objective_value(sol.x), sol.objective, rel_tol=1e-5, abs_tol=1e-6)


def _cancelled(backend: str) -> Solution:
    """The answer of a solve whose token was cancelled before it started."""
    return Solution(status="timeout", backend=backend, message="cancelled before the solve started")


#: HiGHS's default ``large_matrix_value``: larger coefficients make passModel fail
LARGE_VALUE = 1e15


def _rejected(m: SparseModel) -> str:
    """Why HiGHS refused ``m``, when a coefficient or bound is too large for it."""
    _, _, value = m._csr()
    cost = np.fromiter(
        (abs(c) for c in m._obj.terms.values()), dtype=float, count=len(m._obj.terms)
    )
    big = [
        (float(np.max(np.abs(a))), what)
        for a, what in (
            (np.asarray(value, dtype=float), "constraint coefficient"),
            (cost, "objective coefficient"),
        )
        if a.size
    ]
    worst = max(big, default=(0.0, ""))
    if worst[0] >= LARGE_VALUE or not math.isfinite(worst[0]):
        return (
            f"HiGHS rejected the model: a {worst[1]} of magnitude {worst[0]:g} reaches its "
            f"limit (coefficients must stay below {LARGE_VALUE:g}). "
            "Rescale the inputs that produce it (a causal coefficient, a feature's unit, a "
            "model weight)."
        )
    return "HiGHS rejected the model (passModel returned an error)."


def _set_options(
    h: Any,
    highspy: Any,
    *,
    threads: int,
    gap: float,
    seed: int,
    feastol: float | None,
    keep: bool,
    options: dict[str, Any] | None,
) -> None:
    """Our options (threads, gap, seed, tolerances, the incumbent store), then the caller's."""
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("mip_rel_gap", float(gap))
    h.setOptionValue("random_seed", int(seed))
    if feastol is not None:
        h.setOptionValue("mip_feasibility_tolerance", float(feastol))
        h.setOptionValue("primal_feasibility_tolerance", float(feastol))
    if keep:
        h.setOptionValue("mip_improving_solution_save", True)
    for key, val in (options or {}).items():
        if h.setOptionValue(key, val) != highspy.HighsStatus.kOk:
            raise SolverError(
                f"HiGHS rejected the option {key}={val!r}; see HiGHS's option list for valid "
                "names and values."
            )


def _highs_model(highspy: Any, m: SparseModel) -> Any:
    """``m`` as a ``highspy.HighsModel``: the LP part and, with quadratic terms, the Hessian."""
    model = highspy.HighsModel()
    model.lp_ = _highs_lp(highspy, m)
    if m.has_quadratic:
        model.hessian_ = _highs_hessian(highspy, m)
    return model


def _highs_lp(highspy: Any, m: SparseModel) -> Any:
    """Columns, costs, row bounds, the row-wise CSR matrix and integrality as a ``HighsLp``."""
    n = m.n_vars
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = m.n_rows
    cost = np.zeros(n)
    for k, c in m._obj.terms.items():
        cost[k] += c
    lp.col_cost_ = cost
    lp.offset_ = m._obj.const
    lp.col_lower_ = np.asarray(m._lb, dtype=float)
    lp.col_upper_ = np.asarray(m._ub, dtype=float)
    lp.row_lower_ = np.asarray(m._row_lo, dtype=float)
    lp.row_upper_ = np.asarray(m._row_hi, dtype=float)
    start, index, value = m._csr()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = m.n_rows
    if m.n_integer:
        kint, kcont = highspy.HighsVarType.kInteger, highspy.HighsVarType.kContinuous
        lp.integrality_ = [kint if b else kcont for b in m._int]
    return lp


def _highs_hessian(highspy: Any, m: SparseModel) -> Any:
    """The diagonal quadratic terms as a triangular ``HighsHessian``."""
    n = m.n_vars
    hs = highspy.HighsHessian()
    hs.dim_ = n
    hs.format_ = highspy.HessianFormat.kTriangular
    diag = np.zeros(n)
    for k, q in m._quad.items():
        diag[k] += 2.0 * q  # HiGHS minimises c'x + 1/2 x'Qx
    nz = np.flatnonzero(diag)
    counts = np.zeros(n, dtype=np.int64)
    counts[nz] = 1
    hs.start_ = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    hs.index_ = nz.astype(np.int64)
    hs.value_ = diag[nz]
    return hs


def _set_start(h: Any, highspy: Any, mip_start: dict[int, float] | np.ndarray) -> None:
    """A full start vector (checked as is, no sub-MIP) or a partial one (index -> value)."""
    if isinstance(mip_start, np.ndarray):
        hs = highspy.HighsSolution()
        hs.col_value = np.asarray(mip_start, dtype=float)
        hs.value_valid = True
        h.setSolution(hs)
    elif mip_start:
        idx = np.fromiter(mip_start.keys(), dtype=np.int32, count=len(mip_start))
        val = np.fromiter(mip_start.values(), dtype=float, count=len(mip_start))
        h.setSolution(len(idx), idx, val)


def _read_answer(
    h: Any, highspy: Any, m: SparseModel, *, gap: float, keep: bool, seconds: float
) -> Solution:
    """The answer of a finished run: status, objective, bound, gap, nodes, values, store."""
    ms = h.getModelStatus()
    info = h.getInfo()
    has_sol = info.primal_solution_status == 2 if hasattr(info, "primal_solution_status") else False
    x = np.asarray(h.getSolution().col_value, dtype=float) if has_sol else None
    mip = bool(m.n_integer)
    optimal = ms == highspy.HighsModelStatus.kOptimal
    obj = float(info.objective_function_value) if has_sol else math.nan
    if mip:
        bound = float(info.mip_dual_bound)
        g = float(info.mip_gap) if has_sol else math.inf
        nodes = int(info.mip_node_count)
    else:
        bound, g, nodes = obj, (0.0 if optimal else math.inf), 0
    status = _status(highspy.HighsModelStatus, ms, has_sol)
    if status == "optimal" and g > max(10 * gap, 1e-4):
        status = "feasible"
    pool = _stored_incumbents(h, x) if keep and mip and x is not None else []
    return Solution(
        status=status,
        backend="highs",
        objective=obj,
        bound=bound,
        gap=g,
        nodes=nodes,
        seconds=seconds,
        x=x,
        pool=pool,
        message=h.modelStatusToString(ms),
    )


def _status(MS: Any, ms: Any, has_sol: bool) -> str:
    """Our status word for a HiGHS model status (``MS``: ``highspy.HighsModelStatus``)."""
    if ms == MS.kOptimal:
        return "optimal"
    if ms == MS.kInfeasible:
        return "infeasible"
    if ms == MS.kUnboundedOrInfeasible:
        return "unbounded" if has_sol else "infeasible"
    if ms == MS.kUnbounded:
        return "unbounded"
    limits = (
        MS.kTimeLimit,
        MS.kIterationLimit,
        MS.kSolutionLimit,
        MS.kInterrupt,
        MS.kObjectiveBound,
        MS.kObjectiveTarget,
    )
    if ms in limits:
        return "feasible" if has_sol else "timeout"
    return "feasible" if has_sol else "error"


def _stored_incumbents(h: Any, x: np.ndarray) -> list[np.ndarray]:
    """HiGHS's saved improving incumbents, best first, ``x`` itself left out."""
    try:
        saved = h.getSavedMipSolutions()
    except Exception:  # pragma: no cover - older highspy
        saved = []
    pool: list[np.ndarray] = []
    for s in reversed(list(saved)):
        v = np.asarray(getattr(s, "col_value", []), dtype=float)
        if v.size == x.size and not np.allclose(v, x, atol=1e-9):
            pool.append(v)
    return pool


# --------------------------------------------------- a run given up early
def _satisfies(m: SparseModel, x: np.ndarray, tol: float = 1e-6) -> bool:
    """Whether ``x`` meets every bound, integrality and row of ``m`` within ``tol``."""
    x = np.asarray(x, dtype=float)
    lb, ub = np.asarray(m._lb, dtype=float), np.asarray(m._ub, dtype=float)
    if np.any(x < lb - tol) or np.any(x > ub + tol):
        return False
    isint = np.asarray(m._int, dtype=bool)
    if np.any(np.abs(x[isint] - np.round(x[isint])) > tol):
        return False
    start, index, value = m._csr()
    if len(index):
        import scipy.sparse as sp

        A = sp.csr_matrix((value, index, start), shape=(m.n_rows, m.n_vars))
        act = A @ x
        lo, hi = np.asarray(m._row_lo, dtype=float), np.asarray(m._row_hi, dtype=float)
        scale = np.maximum(1.0, np.abs(act))
        if np.any(act < lo - tol * scale) or np.any(act > hi + tol * scale):
            return False
    return True


def _abandoned(m: SparseModel, watch: _Watch, start: Any, keep: bool, seconds: float) -> Solution:
    """The answer of a run given up at its deadline: the best incumbent HiGHS
    reported, else a full start vector that satisfies the model, else none."""
    x = None
    if watch.best is not None:
        x = watch.best[1]
    elif isinstance(start, np.ndarray) and start.size == m.n_vars and _satisfies(m, start):
        x = np.asarray(start, dtype=float)
    pool = [v for v in reversed(watch.found[:-1])] if keep and x is not None else []
    token = getattr(watch, "cancel", None)
    cancelled = token is not None and token.cancelled
    return Solution(
        status="feasible" if x is not None else "timeout",
        backend="highs",
        objective=m.objective_value(x) if x is not None else math.nan,
        bound=math.nan,
        gap=math.inf,
        seconds=seconds,
        x=x,
        pool=pool,
        message=("cancelled" if cancelled else "time limit reached")
        + " (solver stopped at its next check)",
    )
