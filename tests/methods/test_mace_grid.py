"""MACE searches on each real feature's grid (its resolution), so that its answer
is the value reported and the certificate holds for it (no snapping after the
search that the model could reject)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.methods.mace._problem import VarSpec, grid_value
from counterfact.models import desired_class

pytest.importorskip("z3")


def test_grid_value_is_exact_for_decimal_steps():
    v = VarSpec("x", "real", 0.0, 1.0, 0.0, 10.0, grid=0.01)
    assert grid_value(v, 1.23) == Fraction(123, 100)
    assert grid_value(v, 1.2345) is None
    assert grid_value(VarSpec("x", "real", 0.0, 1.0, 0.0, 10.0), 1.23) is None
    assert grid_value(VarSpec("x", "real", 0.0, 1.0, 0.0, 9e4, grid=1.0), 1805.0) == 1805


def test_adult_forest_query_that_snapping_broke_is_optimal():
    """Regression: on this Adult forest the nearest counterfactual off the grid
    (capital_loss 1805.00006) has no on-grid rounding the forest accepts; the
    search used to return it, the base class's snapping then failed, status
    ``failed``.  Searching on the grid gives a verified ``optimal`` answer."""
    data = cf.datasets.load("adult")
    train, test = data.split(test_size=0.2, random_state=0)
    train = train.subset(train.frame.sample(5000, random_state=0).index)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=5)
    target = desired_class(model, data=data)
    X = cf.rows_to_explain(model, test.X.iloc[:200], target=target, data=data)
    assert 26305 in X.index
    m = cf.methods.get("mace", random_state=0).fit(model, train)
    r = m.explain(X.loc[[26305]], target=target)
    assert r.status.iloc[0] == "optimal", r.diagnostics.iloc[0].to_dict()
    d = r.diagnostics.iloc[0]
    assert d["n_snapped"] == 0 and not d["snapped"]
    cf_row = r.counterfactuals.iloc[0]
    assert model.predict(r.counterfactuals.iloc[[0]])[0] == target
    for f in m.schema_:
        if f.kind == "real" and f.resolution:
            v = float(cf_row[f.name])
            assert abs(round(v / f.resolution) * f.resolution - v) <= 1e-9 * max(1.0, abs(v))


def test_linear_model_answer_on_a_two_decimal_grid():
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {"rate": np.round(rng.uniform(0, 5, n), 2), "age": rng.integers(20, 70, n)}
    )
    frame["y"] = (frame["rate"] * 1.37 + 0.01 * frame["age"] > 4.0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    assert data.schema["rate"].resolution == pytest.approx(0.01)
    model = cf.models.fit(data, "lr", random_state=0)
    m = cf.methods.get("mace", random_state=0, rel_gap=1e-4).fit(model, data)
    X = data.X[model.predict(data.X) == 0].iloc[:4]
    r = m.explain(X)
    assert (r.status == "optimal").all(), r.diagnostics
    assert (r.diagnostics["n_snapped"] == 0).all()
    rates = r.counterfactuals["rate"].to_numpy(dtype=float)
    assert np.allclose(np.round(rates, 2), rates, rtol=0, atol=1e-12)


def test_mip_oracle_answers_on_the_grid():
    """The MILP oracle (ReLU networks) searches real features on their grid too:
    its answers need no snapping (the continuous optimum rounded feature by
    feature failed the model on Adult MLP linf queries: both roundings of
    ``capital_gain 4282.1, capital_loss 128.3`` kept the decision)."""
    pytest.importorskip("highspy")
    rng = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame(
        {
            "rate": np.round(rng.uniform(0, 5, n), 2),
            "debt": np.round(rng.uniform(0, 900, n), 1),
            "age": rng.integers(20, 70, n),
        }
    )
    frame["y"] = (
        (frame["rate"] - 2.5) ** 2 + frame["debt"] / 300 + 0.01 * frame["age"] > 3.0
    ).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    assert data.schema["rate"].resolution == pytest.approx(0.01) and data.schema[
        "debt"
    ].resolution == pytest.approx(0.1)
    model = cf.models.fit(data, "mlp", random_state=0, hidden_layer_sizes=(8,), max_iter=600)
    X = data.X[model.predict(data.X) == 0].iloc[:6]
    for norm in ("l1", "linf"):
        m = cf.methods.get("mace", norm=norm, solver="highs", random_state=0, rel_gap=1e-4).fit(
            model, data
        )
        r = m.explain(X)
        assert (r.status == "optimal").all(), r.diagnostics
        assert (r.diagnostics["n_snapped"] == 0).all(), r.diagnostics["n_snapped"]
        for name, step in (("rate", 0.01), ("debt", 0.1)):
            v = r.counterfactuals[name].to_numpy(dtype=float)
            assert np.allclose(np.round(v / step) * step, v, rtol=0, atol=1e-9)
        assert (model.predict(r.counterfactuals) == 1).all()
