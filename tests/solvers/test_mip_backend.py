"""The MIP encoding of the compiler's IR: inputs, every model kind, decision rule, regressors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.models._compile import compile_model
from counterfact.solvers._milp import (
    Model,
    add_change_limit,
    changed_set,
    decode,
    encode_inputs,
    encode_model,
    encode_outputs,
    encode_regressor,
    feature_deltas,
    no_good_superset,
)

pytest.importorskip("highspy")


def _data(n: int = 300, seed: int = 1, n_classes: int = 2) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n),
            "b": rng.uniform(-5, 5, n),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
            "lvl": pd.Categorical(
                rng.choice(["lo", "mid", "hi"], n), categories=["lo", "mid", "hi"], ordered=True
            ),
        }
    )
    s = X["a"] - X["b"] + 0.2 * X["k"] + (X["job"] == "y") * 3.0 + X["lvl"].cat.codes - 6
    y = (
        (s + rng.normal(0, 1, n) > 0).astype(int)
        if n_classes == 2
        else np.digitize(s + rng.normal(0, 1, n), [-3, 3])
    )
    return cf.Dataset.from_frame(X.assign(y=y), target="y", name="mixed")


@pytest.fixture(scope="module")
def data():
    return _data()


def _fixed_bounds(schema, row):
    res = cf.Constraints(immutable=schema.names).resolve(schema)
    return res.for_query(schema.validate_frame(row.to_frame().T).iloc[0])


KINDS = ["lr", "svm", "tree", "rf", "gbm", "mlp"] + [
    k
    for k in ("xgb", "lgbm")
    if __import__("importlib").util.find_spec({"xgb": "xgboost", "lgbm": "lightgbm"}[k])
]


@pytest.mark.parametrize("kind", KINDS)
def test_outputs_match_the_model(data, kind):
    """With every input fixed, the encoded outputs equal the IR's and the decision
    region of the real prediction is feasible, the other class's infeasible."""
    params = {"n_estimators": 10, "max_depth": 4} if kind in ("rf", "gbm", "xgb", "lgbm") else {}
    if kind == "lgbm":
        params = {"n_estimators": 10, "num_leaves": 8}
    model = cf.models.fit(data, kind, random_state=0, **params)
    comp = compile_model(model, data.schema)
    rows = data.X.iloc[:12]
    pred = np.asarray(model.predict(rows))
    Z = comp.encode(rows)
    expected = comp.outputs_raw(Z)
    for i in range(len(rows)):
        m = Model()
        inp = encode_inputs(m, comp.inputs, _fixed_bounds(data.schema, rows.iloc[i]))
        out = encode_outputs(m, comp, inp.z)
        sol = m.solve("highs")
        got = np.array([sol.value(o) for o in out])
        np.testing.assert_allclose(got, expected[i], rtol=1e-7, atol=1e-7)
        margin = 1e-6
        y = comp.rule.predict(expected[i : i + 1])[0]
        assert comp.classes[y] == pred[i]
        m2 = Model()
        inp = encode_inputs(m2, comp.inputs, _fixed_bounds(data.schema, rows.iloc[i]))
        encode_model(m2, comp, inp.z, int(y), margin=margin)
        assert m2.solve("highs").status == "optimal"


@pytest.mark.parametrize("kind", ["rf", "gbm", "mlp"])
def test_counterfactuals_flip_the_real_model(data, kind):
    """Free inputs, minimal l1 change: the decoded point flips sklearn's predict."""
    model = cf.models.fit(
        data,
        kind,
        random_state=0,
        **({"n_estimators": 15, "max_depth": 4} if kind != "mlp" else {}),
    )
    comp = compile_model(model, data.schema)
    res = cf.Constraints().resolve(data.schema)
    for i in range(6):
        row = data.X.iloc[[i]]
        x = data.schema.validate_frame(row).iloc[0]
        target = 1 - int(model.predict(row)[0])
        m = Model()
        inp = encode_inputs(m, comp.inputs, res.for_query(x))
        encode_model(m, comp, inp.z, target)
        for d in feature_deltas(m, inp, data.schema.ranges()):
            m.add_objective(d)
        sol = m.solve("highs", time_limit=30)
        assert sol.status == "optimal"
        cfrow = pd.DataFrame([decode(inp, sol.x)])
        assert model.predict(cfrow)[0] == target


def test_inputs_domain_and_changes(data):
    schema = data.schema
    x = schema.validate_frame(data.X.iloc[[0]]).iloc[0]
    cons = cf.Constraints(
        immutable=["job"],
        increasing=["k"],
        ranges={"a": (1.0, 9.0)},
        allowed_values={"lvl": ["lo", "hi"]},
        max_changes=2,
    )
    b = cons.resolve(schema).for_query(x)
    space = cf.models._compile.InputSpace.from_schema(schema)
    m = Model()
    inp = encode_inputs(m, space, b)  # max_changes forces change indicators
    add_change_limit(m, inp, 2)
    by = {f.name: f for f in inp.features}
    assert by["job"].fixed and by["k"].changed is not None
    assert m.var_bounds(by["k"].value)[0] == x["k"]
    lo, hi = m.var_bounds(by["a"].value)
    assert lo >= 1.0 and hi <= 9.0
    # maximise the number of changes: capped at 2, each change real (direction binaries)
    m.add_objective(-1 * sum(inp.changed()))
    sol = m.solve("highs")
    row = decode(inp, sol.x)
    changed = changed_set(inp, sol.x)
    assert len(changed) == 2
    for n in changed:
        assert row[n] != x[n]
    for n in set(schema.names) - set(changed):
        assert row[n] == x[n]
    assert row["lvl"] in ("lo", "hi") and row["job"] == x["job"] and row["k"] >= x["k"]
    # no-good cut on supersets of that change set
    no_good_superset(m, inp, changed)
    sol2 = m.solve("highs")
    assert not set(changed) <= set(changed_set(inp, sol2.x))


def test_regressors_embedded():
    from sklearn.linear_model import LinearRegression
    from sklearn.neural_network import MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"p": rng.uniform(0, 50, 200), "r": rng.uniform(-1, 1, 200)})
    y = 30 * X["p"] + 100 * X["r"] + rng.normal(0, 5, 200)
    regs = [
        LinearRegression().fit(X, y),
        make_pipeline(
            StandardScaler(), MLPRegressor(hidden_layer_sizes=(8,), random_state=0, max_iter=2000)
        ).fit(X, y),
    ]
    for reg in regs:
        for point in ([3.0, 0.5], [47.0, -0.9]):
            m = Model()
            vs = [m.add_var(v, v) for v in point]
            e = encode_regressor(m, reg, vs)
            sol = m.solve("highs")
            expected = float(reg.predict(pd.DataFrame([point], columns=["p", "r"]))[0])
            assert sol.value(e) == pytest.approx(expected, rel=1e-7, abs=1e-6)
    with pytest.raises(cf.UnsupportedModelError):
        from sklearn.neighbors import KNeighborsRegressor

        encode_regressor(Model(), KNeighborsRegressor().fit(X, y), [])


def test_multiclass_region(data):
    d3 = _data(n=400, seed=3, n_classes=3)
    model = cf.models.fit(d3, "lr", random_state=0)
    comp = compile_model(model, d3.schema)
    res = cf.Constraints().resolve(d3.schema)
    x = d3.schema.validate_frame(d3.X.iloc[[0]]).iloc[0]
    pred = model.predict(d3.X.iloc[[0]])[0]
    for target in [c for c in comp.classes if c != pred]:
        m = Model()
        inp = encode_inputs(m, comp.inputs, res.for_query(x))
        encode_model(m, comp, inp.z, comp.class_index(target))
        for dlt in feature_deltas(m, inp, d3.schema.ranges()):
            m.add_objective(dlt)
        sol = m.solve("highs")
        assert sol.status == "optimal"
        assert model.predict(pd.DataFrame([decode(inp, sol.x)]))[0] == target
