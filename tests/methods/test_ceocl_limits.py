"""CE-OCL (and MACE) at the edges: time limits as a contract, nothing on stdout,
the per-model template, and observed points that the tree encoding must admit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("highspy")


def _data(n: int = 400, seed: int = 3) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n).round(2),
            "b": rng.uniform(-5, 5, n).round(2),
            "amount": (rng.integers(1, 40, n) * 5000).astype(
                float
            ),  # round amounts, as in credit data
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
        }
    )
    s = X["a"] - X["b"] + 0.2 * X["k"] + (X["job"] == "y") * 3.0 - X["amount"] / 50000 - 4
    y = (s + rng.normal(0, 1, n) > 0).astype(int)
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="mixed")


@pytest.fixture(scope="module")
def forest_setting():
    train, test = _data().split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "rf", random_state=0, n_estimators=30, max_depth=6)


def test_template_gives_the_same_optimum(forest_setting):
    """The ensemble embedded once per fitted method (the default for forests) and
    the per-query build give the same optimal objective (the MIP's, before its point is
    rounded to the grids: the solver closed its gap on both)."""
    train, test, _ = forest_setting
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=8, max_depth=4)
    X = test.X.iloc[:4]
    a = cf.CEOCL(norm="l1", solution_pool=False, random_state=0).fit(model, train)
    assert a.template_ is not None
    b = cf.CEOCL(norm="l1", solution_pool=False, random_state=0).fit(model, train)
    b.template_ = None
    ra, rb = a.explain(X), b.explain(X)
    assert ra.diagnostics["template"].all() and not rb.diagnostics["template"].any()
    closed = [(r.status != "failed") & (r.diagnostics["gap"] <= 1e-4) for r in (ra, rb)]
    both = closed[0] & closed[1]
    assert both.sum() >= 3
    np.testing.assert_allclose(
        ra.diagnostics.loc[both, "objective"].to_numpy(float),
        rb.diagnostics.loc[both, "objective"].to_numpy(float),
        rtol=1e-5,
        atol=1e-7,
    )


def test_observed_rows_are_feasible_in_the_tree_encoding(forest_setting):
    """Training rows the forest assigns to the target are points of the MIP (the
    safety distance from tree cuts must not exclude values seen in the data, such
    as a round amount right below a cut)."""
    from counterfact.solvers._milp import Model, declare_inputs, encode_outputs

    train, _, model = forest_setting
    comp = cf.CEOCL().fit(model, train).compiled_
    rows = train.X.iloc[:12]
    Z = comp.inputs.encode(rows)
    m = Model()
    z = declare_inputs(m, comp.inputs)
    encode_outputs(m, comp, z)
    for r in range(len(rows)):
        fx = m.copy()
        for k, v in enumerate(z):
            fx.set_bounds(v, float(Z[r, k]), float(Z[r, k]))
        assert fx.solve("highs", time_limit=30).status == "optimal", rows.iloc[r].to_dict()


def test_time_limit_holds(forest_setting):
    """An expired query returns a verified answer (``feasible``) or ``timeout`` (the
    wall time against the limit is measured by ``benchmarks/time_limits.py``)."""
    train, test, model = forest_setting
    method = cf.CEOCL(time_limit=0.5, random_state=0).fit(model, train)
    for i in range(3):
        res = method.explain(test.X.iloc[[i]], n_counterfactuals=3)
        assert res.status.iloc[0] in {"optimal", "feasible", "timeout", "failed"}
        cfs = res.for_query(test.X.index[i])
        assert (model.predict(cfs) == res.target.iloc[0]).all()


def test_fallback_without_a_solver_incumbent(forest_setting):
    """No solver incumbent in time: the local search's counterfactual (or the
    nearest observed ones), verified, status ``feasible``, and said so in the
    diagnostics."""
    from counterfact.methods.ceocl import _formulation

    train, test, model = forest_setting
    method = cf.CEOCL(time_limit=5, random_state=0).fit(model, train)
    real = _formulation.solve

    def no_incumbent(form, backend, **kw):  # type: ignore[no-untyped-def]
        sol, _ = real(form, backend, **{**kw, "time_limit": 1e-6})
        sol.x, sol.status = None, "timeout"
        return sol, float("nan")

    import counterfact.methods.ceocl._method as M

    M.solve, saved = no_incumbent, M.solve
    try:
        res = method.explain(test.X.iloc[:3])
    finally:
        M.solve = saved
    pred = model.predict(test.X.iloc[:3])
    for qid, p in zip(res.status.index, pred, strict=True):
        if p == res.target[qid]:
            continue
        assert res.status[qid] == "feasible"
        assert "(no solver incumbent within the time limit)" in res.diagnostics.loc[qid, "fallback"]
        assert (model.predict(res.for_query(qid)) == res.target[qid]).all()


def test_solver_banners_stay_off_stdout():
    """In a fresh process (HiGHS prints its banner once per process, at the first
    ``Highs()``), CE-OCL and MACE's MIP oracle write nothing to stdout, and no
    solver banner to stderr either (a quiet run is quiet)."""
    pytest.importorskip("pyscipopt", reason="the subprocess runs CE-OCL on SCIP too")
    code = textwrap.dedent(
        """
        import warnings; warnings.filterwarnings("ignore")
        import counterfact as cf
        d = cf.datasets.load("graduate_admission")
        train, test = d.split(test_size=0.2, random_state=0)
        m = cf.models.fit(train, "mlp", random_state=0, hidden_layer_sizes=(6,), max_iter=200)
        X = test.X.iloc[:1]
        cf.CEOCL(random_state=0).fit(m, train).explain(X)
        cf.MACE(solver="highs", random_state=0).fit(m, train).explain(X)
        cf.CEOCL(solver="scip", random_state=0).fit(m, train).explain(X)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout == ""
    assert "HiGHS" not in out.stderr and "SCIP" not in out.stderr, out.stderr[-2000:]
