"""Features on scales far from one (MACE and CE-OCL): a wealth in the billions, a rate in
millionths, a balance below zero, an integer in the trillions.  HiGHS treats a matrix
coefficient of at most 1e-9 as zero, so such a search would silently leave a feature out
and mis-prove its answer: it is refused, and ``solver="auto"`` walks on to Z3, which
computes exactly.  A real feature whose range holds few steps of its resolution is
searched on those steps, so the continuous optimum is not lost when rounded to them."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import counterfact as cf
from counterfact.exceptions import UnsupportedConstraintError

pytest.importorskip("z3")
pytest.importorskip("highspy")


@pytest.fixture(scope="module")
def scales():
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame(
        {
            "wealth": rng.lognormal(20, 1.5, n).round(2),
            "rate": rng.uniform(1e-6, 5e-6, n),
            "balance": rng.normal(-5000, 3000, n).round(2),
            "bigint": rng.integers(-(10**12), 10**12, n),
        }
    )
    z = (
        np.log(frame.wealth)
        - 20
        + (frame.rate - 3e-6) * 1e6
        + frame.balance / 3000
        + frame.bigint / 1e12
    )
    frame["y"] = (z + rng.normal(0, 0.5, n) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rate's coarse resolution is warned about
        data = cf.Dataset.from_frame(frame, target="y")
    X = frame.drop(columns="y")
    model = Pipeline([("s", StandardScaler()), ("c", LogisticRegression(max_iter=2000))])
    model.fit(X, frame.y)
    rows = cf.rows_to_explain(model, data, target=1).head(2)
    return data, model, rows


def test_auto_walks_past_highs_to_an_exact_proof(scales):
    data, model, rows = scales
    auto = cf.MACE(time_limit=30).fit(model, data).explain(rows, target=1)
    z3 = cf.MACE(solver="z3", time_limit=30).fit(model, data).explain(rows, target=1)
    for q in rows.index:
        assert auto.status[q] == "optimal", auto.certificate(q)
        assert "z3" in auto.diagnostics.loc[q, "solver"]
        assert float(auto.cost().loc[(q, 0)]) == pytest.approx(float(z3.cost().loc[(q, 0)]))
    answers = auto.counterfactuals[list(data.schema.names)]
    assert (model.predict(answers) == 1).all()


def _on(data, columns):
    """The data on ``columns`` and a scaled logistic regression fitted to them."""
    frame = data.frame[[*columns, "y"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rate's coarse resolution is warned about
        small = cf.Dataset.from_frame(frame, target="y")
    model = Pipeline([("s", StandardScaler()), ("c", LogisticRegression(max_iter=2000))])
    return small, model.fit(frame[list(columns)], frame.y)


def test_highs_named_refuses_a_coefficient_it_would_drop(scales):
    small, model = _on(scales[0], ["wealth", "balance", "bigint"])
    rows = cf.rows_to_explain(model, small, target=1).head(2)
    with pytest.raises(UnsupportedConstraintError, match="treat as zero") as err:
        cf.MACE(solver="highs", time_limit=30).fit(model, small).explain(rows, target=1)
    assert "solver='z3'" in str(err.value)


@pytest.mark.parametrize("solver", ["auto", "z3"])
def test_a_coarse_real_feature_is_searched_on_its_steps(scales, solver):
    small, model = _on(scales[0], ["rate", "balance"])
    rows = cf.rows_to_explain(model, small, target=1).head(3)
    method = cf.MACE(solver=solver, time_limit=30).fit(model, small)
    result = method.explain(rows, target=1)
    assert small.schema["rate"].resolution == pytest.approx(1e-6)
    for q in rows.index:
        assert result.status[q] == "optimal", result.certificate(q)
        rate = float(result.counterfactuals.loc[(q, 0), "rate"])
        on_grid = abs(rate / 1e-6 - round(rate / 1e-6)) < 1e-9
        assert on_grid or rate == rows.loc[q, "rate"]
        assert not result.diagnostics.loc[q, "snapped"]
        assert "z3" in result.diagnostics.loc[q, "solver"]


def test_highs_named_refuses_a_feature_narrower_than_its_tolerance(scales):
    small, model = _on(scales[0], ["rate", "balance"])
    rows = cf.rows_to_explain(model, small, target=1).head(2)
    with pytest.raises(UnsupportedConstraintError, match=r"'rate' ranges over only 3\.99e-06"):
        cf.MACE(solver="highs", time_limit=30).fit(model, small).explain(rows, target=1)


def test_a_rounding_that_fails_every_candidate_names_the_steps(scales):
    small, model = _on(scales[0], ["rate", "balance"])
    rows = cf.rows_to_explain(model, small, target=1).head(1)
    result = cf.CEOCL(time_limit=30).fit(model, small).explain(rows, target=1)
    q = rows.index[0]
    assert result.status[q] == "failed"
    reason = result.diagnostics.loc[q, "reason"]
    assert "each was first rounded to its features' resolution (rate to steps of 1e-06)" in reason


def test_only_a_narrow_feature_is_refused_not_a_narrowed_query():
    from counterfact.solvers._milp._tolerance import too_narrow
    from counterfact.solvers._problem import VarSpec

    narrowed = VarSpec("rate", "real", 0.05, 0.1, lower=0.05, upper=0.0505, grid=1e-4)
    assert too_narrow([narrowed]) is None  # a query's box, not the feature's range
    narrow = VarSpec("rate", "real", 2e-6, 4e-6, lower=1e-6, upper=5e-6, grid=1e-6)
    assert "'rate' ranges over only 4e-06" in too_narrow([narrow])
    fixed = VarSpec("rate", "real", 2e-6, 4e-6, lower=2e-6, upper=2e-6, fixed=True)
    assert too_narrow([fixed]) is None


def test_ceocl_refuses_a_coefficient_its_solver_would_drop(scales):
    small, model = _on(scales[0], ["wealth", "balance", "bigint"])
    rows = cf.rows_to_explain(model, small, target=1).head(1)
    with pytest.raises(cf.exceptions.CounterfactError, match="treat as zero") as err:
        cf.CEOCL(time_limit=30).fit(model, small).explain(rows, target=1)
    assert "cf.MACE(solver='z3')" in str(err.value)
