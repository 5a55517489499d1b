"""Cancellation reaches inside the solvers: a cancelled token stops a solve that is
running (Z3's interrupt, CP-SAT's StopSearch, HiGHS's interrupt callbacks, SCIP's
interruptSolve), not only the loops between solver calls.

Every case runs a problem that would take its whole time limit (60 s) and cancels
it after 0.3 s; a stop within a few seconds can only come from the interrupt.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import counterfact as cf
from counterfact._utils._deadline import CancelToken, Deadline

LIMIT = 60.0  # what an uninterrupted solve would take
STOPPED = 10.0  # generous: a loaded machine still stops far sooner than LIMIT


def _cancel_after(seconds: float) -> CancelToken:
    token = CancelToken()
    timer = threading.Timer(seconds, token.cancel)
    timer.daemon = True
    timer.start()
    return token


def _market_split(n: int = 40, rows: int = 5, seed: int = 0):  # type: ignore[no-untyped-def]
    """Cornuéjols-Dawande market split: tiny, and very hard for branch and bound."""
    from counterfact.solvers._milp import Model, quicksum

    rng = np.random.default_rng(seed)
    m = Model("market split")
    xs = [m.add_binary(name=f"x{i}") for i in range(n)]
    a = rng.integers(0, 100, size=(rows, n))
    for k in range(rows):
        over, under = m.add_var(0, 1000, name=f"over{k}"), m.add_var(0, 1000, name=f"under{k}")
        m.add_eq(
            quicksum([float(a[k, i]) * xs[i] for i in range(n)]) + over - under,
            float(a[k].sum() // 2),
        )
        m.add_objective(over + under)
    return m


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_milp_solve_stops_when_cancelled(backend):
    pytest.importorskip("highspy" if backend == "highs" else "pyscipopt")
    m = _market_split()
    t0 = time.perf_counter()
    sol = m.solve(backend, time_limit=LIMIT, cancel=_cancel_after(0.3))
    assert time.perf_counter() - t0 < STOPPED
    assert sol.status in ("feasible", "timeout")


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_milp_solve_cancelled_before_it_starts(backend):
    pytest.importorskip("highspy" if backend == "highs" else "pyscipopt")
    token = CancelToken()
    token.cancel()
    sol = _market_split().solve(backend, time_limit=LIMIT, cancel=token)
    assert sol.status == "timeout" and not sol.has_solution and "cancelled" in sol.message


def test_milp_solve_without_cancellation_is_unchanged():
    pytest.importorskip("highspy")
    m = _market_split(n=12, rows=2)
    plain, watched = m.solve("highs"), m.solve("highs", cancel=CancelToken())
    assert plain.status == watched.status == "optimal"
    assert plain.objective == pytest.approx(watched.objective)


def _pigeonhole(z3, n: int):  # type: ignore[no-untyped-def]
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    x = [[z3.Bool(f"x{i}_{j}", ctx) for j in range(n - 1)] for i in range(n)]
    for i in range(n):
        s.add(z3.Or(x[i]))
    for j in range(n - 1):
        for i in range(n):
            for k in range(i + 1, n):
                s.add(z3.Or(z3.Not(x[i][j]), z3.Not(x[k][j])))
    return ctx, s


def test_mace_z3_check_is_interrupted_when_cancelled():
    z3 = pytest.importorskip("z3")
    from counterfact.solvers._smt import Z3Oracle

    oracle = Z3Oracle.__new__(Z3Oracle)  # the check alone, on a formula Z3 needs minutes for
    oracle.z3 = z3
    oracle.ctx, oracle.solver = _pigeonhole(z3, 13)
    t0 = time.perf_counter()
    res = oracle._run(Deadline.after(LIMIT, token=_cancel_after(0.3)))
    assert time.perf_counter() - t0 < STOPPED
    assert res == z3.unknown


def test_mace_cpsat_check_is_stopped_when_cancelled():
    pytest.importorskip("ortools")
    from ortools.sat.python import cp_model

    from counterfact.solvers._cpsat import CpsatOracle

    rng = np.random.default_rng(1)
    m = cp_model.CpModel()
    xs = [m.NewBoolVar(f"x{i}") for i in range(36)]
    a = rng.integers(0, 100, size=(6, 36))
    for k in range(6):
        m.Add(sum(int(a[k, i]) * xs[i] for i in range(36)) == int(a[k].sum() // 2))
    oracle = CpsatOracle.__new__(CpsatOracle)
    oracle.cp, oracle.m, oracle.seed, oracle.n_calls = cp_model, m, 0, 0
    t0 = time.perf_counter()
    ans = oracle.check(None, Deadline.after(LIMIT, token=_cancel_after(0.3)))
    assert time.perf_counter() - t0 < STOPPED
    assert ans.verdict == "unknown"


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test.X, data=train).iloc[:20]
    return train, model, rows


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mace", {"solver": "z3"}),
        ("mace", {"solver": "highs"}),
        ("ceocl", {}),
    ],
)
def test_a_cancelled_explanation_returns_at_once(setting, name, params):
    """The reproduction of issue 29: 20 rows, 5 answers each, 30 s per row (about 40 s
    of work on this model); cancelled after 0.5 s, the call returns within seconds,
    the rows not yet searched marked as cancelled."""
    if params.get("solver") == "z3":
        pytest.importorskip("z3")
    pytest.importorskip("highspy")
    train, model, rows = setting
    method = cf.methods.get(name, random_state=0, time_limit=30.0, **params).fit(model, train)
    t0 = time.perf_counter()
    result = method.explain(rows, n_counterfactuals=5, cancel=_cancel_after(0.5))
    assert time.perf_counter() - t0 < STOPPED
    assert (result.status == "timeout").sum() >= 10
    assert result.reason.str.contains("cancelled").any()
    for q, cf_row in result.counterfactuals.iterrows():  # what was found is still verified
        assert (
            model.predict(cf_row.to_frame().T.astype(rows.dtypes.to_dict()))[0]
            == result.target[q[0]]
        )
