"""The in-house MILP model (counterfact.solvers._milp) on both backends."""

from __future__ import annotations

import math
import pickle
import time

import numpy as np
import pytest

from counterfact.solvers._milp import Model, SolverError, lin, quicksum

pytest.importorskip("highspy")
BACKENDS = [
    "highs",
    pytest.param(
        "scip",
        marks=pytest.mark.skipif(
            __import__("importlib").util.find_spec("pyscipopt") is None,
            reason="pyscipopt not installed",
        ),
    ),
]


def test_expressions():
    m = Model()
    x, y = m.add_var(0, 1), m.add_var(-2, 3)
    e = 2 * x - y + 3
    assert e.terms == {x.index: 2.0, y.index: -1.0} and e.const == 3.0
    e2 = (x + y) * 2 - (x - 1)
    assert e2.terms == {x.index: 1.0, y.index: 2.0} and e2.const == 1.0
    assert (1 - x).terms == {x.index: -1.0} and (1 - x).const == 1.0
    s = quicksum([x, y, x, 2.5])
    assert s.terms == {x.index: 2.0, y.index: 1.0} and s.const == 2.5
    assert lin([x, y], [1.0, 0.0]).terms == {x.index: 1.0}
    assert m.bounds_of(2 * x - y) == (-3.0, 4.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_milp_and_statuses(backend):
    m = Model()
    x = m.add_var(0, 10, integer=True)
    y = m.add_var(0, 10)
    m.add_ge(x + y, 3.5)
    m.add_le(x - y, 0.25)
    m.add_objective(2 * x + 1.5 * y)
    sol = m.solve(backend)
    assert sol.status == "optimal" and sol.has_solution
    # x integer: best is x = 2, y = 1.75 (cost 6.625) vs x = 0, y = 3.5 (5.25) -> x = 0
    assert sol.objective == pytest.approx(5.25)
    assert sol.value(x) == pytest.approx(0.0) and sol.value(y) == pytest.approx(3.5)
    assert sol.gap <= 1e-6
    # ranged rows and equalities
    m.add_range(x, 1, 1)
    sol = m.solve(backend)
    assert sol.value(x) == pytest.approx(1.0) and sol.objective == pytest.approx(2 + 1.5 * 2.5)
    # infeasible
    m.add_ge(y, 11)
    assert m.solve(backend).status == "infeasible"


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_constant_row(backend):
    m = Model()
    m.add_var(0, 1)
    m.add_le(quicksum([]) + 1.0, 0.0)
    assert m.solve(backend).status == "infeasible"


@pytest.mark.parametrize("backend", BACKENDS)
def test_indicator_abs_relu(backend):
    m = Model()
    x = m.add_var(-3, 5)
    b = m.add_binary()
    m.add_indicator(b, x, ">=", 2.0)  # b => x >= 2
    m.add_indicator(b, x, "<=", -1.0, active=0)  # not b => x <= -1
    t = m.add_abs(x - 0.5)
    m.add_objective(t)
    sol = m.solve(backend)
    # x in [-3, -1] (cost >= 1.5) or [2, 5] (cost >= 1.5): tie, cost 1.5
    assert sol.objective == pytest.approx(1.5)
    # relu: h = max(0, x); minimise -h + 0.1 x over x in [-3, 5] -> x = 5
    m2 = Model()
    x = m2.add_var(-3, 5)
    h = m2.add_relu(x)
    m2.add_objective(-1 * h + 0.1 * x)
    sol = m2.solve(backend)
    assert sol.value(x) == pytest.approx(5.0) and sol.value(h) == pytest.approx(5.0)
    # h can never exceed max(0, x): maximise h with x <= -0.5
    m2.add_le(x, -0.5)
    sol = m2.solve(backend)
    assert sol.value(h) == pytest.approx(0.0, abs=1e-7)
    # stable units need no binary
    m3 = Model()
    z = m3.add_var(1, 2)
    assert m3.add_relu(z).terms == {z.index: 1.0} and m3.n_integer == 0
    assert not m3.add_relu(-1 * z).terms


def test_big_m_needs_bounds():
    m = Model()
    x = m.add_var(0, math.inf)
    b = m.add_binary()
    with pytest.raises(SolverError, match="unbounded"):
        m.add_indicator(b, x, "<=", 1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_quadratic_and_pwl(backend):
    m = Model()
    x = m.add_var(-5, 5)
    m.add_square(x - 2.3)
    sol = m.solve(backend)
    assert sol.value(x) == pytest.approx(2.3, abs=1e-3)
    # the piecewise-linear square is exact at breakpoints and over-estimates in between
    m = Model()
    x = m.add_var(-1, 1)
    t = m.add_pwl_square(x, -1, 1, segments=8)
    m.add_objective(t)
    m.add_ge(x, 0.5)  # 0.5 is a breakpoint of the uniform grid
    sol = m.solve(backend)
    assert sol.objective == pytest.approx(0.25, abs=1e-9)
    m.add_ge(x, 0.6)
    sol = m.solve(backend)
    assert 0.36 - 1e-9 <= sol.objective <= 0.36 + (0.25**2) / 4 + 1e-9


def test_highs_refuses_miqp():
    m = Model()
    x = m.add_var(-5, 5, integer=True)
    m.add_square(x - 2.3)
    with pytest.raises(SolverError, match="MIQP"):
        m.solve("highs")
    if __import__("importlib").util.find_spec("pyscipopt") is not None:
        sol = m.solve("scip")
        assert sol.value(x) == pytest.approx(2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_and_pool(backend):
    # a knapsack-like MILP big enough not to be solved instantly
    rng = np.random.default_rng(0)
    n = 60
    w = rng.integers(10, 100, n)
    v = w + rng.integers(-5, 5, n)
    m = Model()
    xs = [m.add_binary() for _ in range(n)]
    m.add_le(lin(xs, w), float(w.sum() // 2) + 0.5)
    m.add_objective(lin(xs, -v.astype(float)))
    sol = m.solve(backend, time_limit=5, keep_solutions=True)
    assert sol.status in ("optimal", "feasible")
    assert sol.nodes >= 0 and sol.seconds > 0
    for x in sol.pool:
        assert x.shape == (n,)
        assert float(w @ np.round(x)) <= w.sum() // 2 + 0.5 + 1e-6


def test_copy_fix_remove_and_pickle():
    m = Model()
    x = m.add_var(0, 3, integer=True)
    y = m.add_var(0, 10)
    r = m.add_ge(x + y, 4.5)
    m.add_objective(y + 0.1 * x)
    sol = m.solve("highs")
    m2 = m.copy()
    m2.fix_integers(sol.x)
    assert m2.n_integer == 0 and m2.var_bounds(x) == (3.0, 3.0)
    assert m.n_integer == 1
    m2.remove_rows([r])
    assert m2.n_rows == m.n_rows - 1
    assert pickle.loads(pickle.dumps(m)).solve("highs").objective == pytest.approx(sol.objective)


def test_unknown_backend():
    with pytest.raises(SolverError, match="Unknown MIP backend"):
        Model().solve("gurobi")


@pytest.mark.parametrize("backend", BACKENDS)
def test_native_options(backend):
    """Extra solver options pass through; they do not change the optimum; a bad one is refused."""
    m = Model()
    x = m.add_var(0, 10, integer=True)
    y = m.add_var(0, 10)
    m.add_ge(x + 2 * y, 7.5)
    m.add_objective(3 * x + 2 * y)
    base = m.solve(backend)
    opts = {"presolve": "off"} if backend == "highs" else {"presolving/maxrounds": 0}
    sol = m.solve(backend, options=opts)
    assert sol.status == "optimal"
    assert sol.objective == pytest.approx(base.objective)
    bad = {"no_such_option": 1} if backend == "highs" else {"no/such/param": 1}
    with pytest.raises(SolverError):
        m.solve(backend, options=bad)


def _hard_milp(seed: int = 0) -> Model:
    """A multi-dimensional 0/1 knapsack HiGHS does not finish in a few seconds."""
    rng = np.random.default_rng(seed)
    n, k = 400, 300
    A = (rng.uniform(size=(k, n)) < 0.1) * rng.uniform(1, 10, (k, n))
    m = Model()
    xs = [m.add_binary() for _ in range(n)]
    for r in range(k):
        nz = np.flatnonzero(A[r])
        m.add_le(lin([xs[i] for i in nz], A[r, nz]), float(A[r].sum() / 3))
    m.add_objective(lin(xs, -rng.uniform(1, 10, n)))
    return m


def test_highs_wall_clock_limit_and_start():
    """A MIP HiGHS cannot finish: the call returns within its limit (plus a small
    slack), with the best incumbent so far or the feasible start; every returned
    point satisfies the model."""
    pytest.importorskip("highspy")
    from counterfact.solvers._milp._highs import _satisfies

    m = _hard_milp()
    start = np.zeros(m.n_vars)
    assert _satisfies(m, start) and not _satisfies(m, np.ones(m.n_vars))
    for limit in (0.3, 1.0):
        t0 = time.perf_counter()
        sol = m.solve("highs", time_limit=limit, start=start, keep_solutions=True)
        wall = time.perf_counter() - t0
        assert wall <= limit + 0.3, wall
        assert sol.status in ("feasible", "optimal")
        assert sol.x is not None and _satisfies(m, sol.x)
        assert sol.objective <= 1e-9  # no worse than the start (objective 0)
        for x in sol.pool:
            assert _satisfies(m, x)


def test_highs_run_given_up_at_its_deadline():
    """A run still inside HiGHS at the deadline (presolve and root cut rounds do
    not poll the interrupt) is given up: its answer is the best reported
    incumbent, else the start if the start satisfies the model, else none."""
    pytest.importorskip("highspy")
    from counterfact.solvers._milp._highs import _abandoned

    m = _hard_milp()

    class Watch:
        def __init__(self) -> None:
            self.best: tuple[float, np.ndarray] | None = None
            self.found: list[np.ndarray] = []

    feasible = _abandoned(m, Watch(), np.zeros(m.n_vars), True, 1.0)  # type: ignore[arg-type]
    assert feasible.status == "feasible" and feasible.objective == 0.0 and math.isinf(feasible.gap)
    infeasible = _abandoned(m, Watch(), np.ones(m.n_vars), True, 1.0)  # type: ignore[arg-type]
    assert infeasible.status == "timeout"
    w = Watch()
    w.best = (-1.0, np.zeros(m.n_vars))
    assert _abandoned(m, w, None, True, 1.0).x is not None  # type: ignore[arg-type]
