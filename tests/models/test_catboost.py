"""CatBoost compiled exactly: faithful on the training rows, known answers found by brute
force over the model's own cells, CTR models refused, native string categories read."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.models._compile import compile_model, probability_link
from counterfact.models._compile._catboost import check_faithful, json_dump

catboost = pytest.importorskip(
    "catboost", reason="CatBoost is not installed (counterfact[catboost])"
)

SCHEMA = cf.Schema(
    [
        cf.Feature("a", "real", lower=0.0, upper=10.0),
        cf.Feature("k", "integer", lower=0, upper=19),
        cf.Feature("job", "categorical", categories=("x", "y", "z")),
    ],
    target="t",
)


def _data(n: int = 300, seed: int = 1) -> cf.Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "a": rng.uniform(0, 10, n),
            "k": rng.integers(0, 20, n),
            "job": rng.choice(["x", "y", "z"], n),
        }
    )
    s = X["a"] + 0.3 * X["k"] + (X["job"] == "y") * 3.0 - 8
    y = (s + rng.normal(0, 1, n) > 0).astype(int)
    return cf.Dataset(X.assign(t=y), SCHEMA)


def _fit(data: cf.Dataset, columns: list[str] | None = None, **params: Any) -> Any:
    settings = {
        "iterations": 15,
        "depth": 3,
        "random_seed": 0,
        "verbose": 0,
        "thread_count": 1,
        "allow_writing_files": False,
    }
    X = data.X if columns is None else data.X[columns]
    cats = [c for c in X.columns if c == "job"]
    model = catboost.CatBoostClassifier(**{**settings, **params}, cat_features=cats)
    return model.fit(X, data.y)


@pytest.fixture(scope="module")
def setting() -> tuple[cf.Dataset, Any]:
    data = _data()
    return data, _fit(data, one_hot_max_size=3)


def test_faithful_on_the_training_rows(setting) -> None:
    data, model = setting
    compiled = compile_model(model, data.schema)
    assert compiled.front_end == "catboost"
    y = compiled.outputs_raw(compiled.encode(data.X))[:, 0]
    raw = model.predict(data.X, prediction_type="RawFormulaVal")
    np.testing.assert_allclose(y, raw, rtol=0, atol=1e-9)
    proba = model.predict_proba(data.X)[:, 1]
    assert np.max(np.abs(1.0 / (1.0 + np.exp(-y)) - proba)) <= 1e-6
    np.testing.assert_array_equal(compiled.predict(data.X), model.predict(data.X))
    # the probability link the exact methods measure before a min_probability margin
    assert probability_link(compiled, model.predict_proba, data.X) == "sigmoid"
    assert any(s.left_categories is not None for s in compiled.estimator.splits)


def test_float32_borders_on_both_sides(setting) -> None:
    """Rows exactly at a border, one float32 step above it and a float64 hair above it
    (which CatBoost's float32 rounding sends left) go where CatBoost sends them."""
    data, model = setting
    compiled = compile_model(model, data.schema)
    borders = json_dump(model)["features_info"]["float_features"][0]["borders"]
    b = np.asarray(borders, dtype=np.float32)
    a = np.concatenate([b, np.nextafter(b, np.float32(np.inf)), b.astype(float) + 1e-12])
    rows = pd.DataFrame({"a": a.astype(float), "k": 7, "job": "x"})
    rows = rows[(rows["a"] >= 0) & (rows["a"] <= 10)]
    y = compiled.outputs_raw(compiled.encode(rows))[:, 0]
    np.testing.assert_allclose(y, model.predict(rows, prediction_type="RawFormulaVal"), atol=1e-9)
    assert check_faithful(model, compiled.estimator, compiled.affine) <= 1e-9


def test_faithfulness_check_refuses_another_model(setting) -> None:
    data, model = setting
    other = compile_model(_fit(data, one_hot_max_size=3, depth=4, random_seed=1), data.schema)
    with pytest.raises(cf.UnsupportedModelError, match="disagrees"):
        check_faithful(model, other.estimator, other.affine)


def test_column_order_of_the_model_is_its_own() -> None:
    data = _data(seed=2)
    model = _fit(data, columns=["job", "k", "a"], one_hot_max_size=3)
    compiled = compile_model(model, data.schema)
    raw = model.predict(data.X[["job", "k", "a"]], prediction_type="RawFormulaVal")
    np.testing.assert_allclose(compiled.outputs_raw(compiled.encode(data.X))[:, 0], raw, atol=1e-9)


# ---------------------------------------------------------------- known answer
def _cells(model: Any, schema: cf.Schema) -> list[np.ndarray]:
    """Per numeric feature, the float32 borders CatBoost splits it at."""
    info = json_dump(model)["features_info"]["float_features"]
    by_name = {f["feature_id"]: np.asarray(f["borders"], dtype=np.float32) for f in info}
    return [by_name.get(f.name, np.zeros(0, dtype=np.float32)) for f in schema if f.is_numeric]


def _candidates(f: cf.Feature, borders: np.ndarray, q: float) -> list[float]:
    """The cheapest value of ``f`` in each interval CatBoost's borders cut its domain into
    (a sample goes left iff float32(x) <= border)."""
    edges = [-np.inf, *sorted(float(b) for b in borders), np.inf]
    out = []
    for lo, hi in itertools.pairwise(edges):
        # the interval float32(x) in (lo, hi]: its lowest and highest members in the domain
        low = f.lower if lo == -np.inf else float(np.nextafter(np.float32(lo), np.float32(np.inf)))
        high = f.upper if hi == np.inf else hi
        if f.kind == "integer":
            low, high = float(np.ceil(low)), float(np.floor(high))
        low, high = max(low, f.lower), min(high, f.upper)
        if low <= high:
            out.append(min(max(q, low), high))
    return out


def _brute_force(model: Any, schema: cf.Schema, x: pd.Series, margin: float) -> float:
    """The least normalised l1 distance to a row CatBoost itself scores ``>= margin``,
    over every cell of the model's borders and every category."""
    numeric = [f for f in schema if f.is_numeric]
    grids = [
        _candidates(f, b, float(x[f.name]))
        for f, b in zip(numeric, _cells(model, schema), strict=True)
    ]
    cats = [list(f.categories) for f in schema if not f.is_numeric]
    rows = [
        dict(zip([f.name for f in numeric], nums, strict=True)) | {"job": c[0]}
        for nums in itertools.product(*grids)
        for c in itertools.product(*cats)
    ]
    frame = pd.DataFrame(rows)[schema.names]
    raw = model.predict(frame, prediction_type="RawFormulaVal")
    cost = sum(np.abs(frame[f.name] - x[f.name]) / f.range for f in numeric)
    cost = cost + (frame["job"] != x["job"]).astype(float)
    ok = raw >= margin
    return float(cost[ok].min() / len(schema)) if ok.any() else np.inf


def test_mace_finds_the_brute_force_optimum(setting) -> None:
    pytest.importorskip("z3")
    data, model = setting
    mace = cf.MACE(norm="l1", random_state=0).fit(model, data)
    X = data.X[model.predict(data.X) == 0].iloc[:4]
    res = mace.explain(X, requirements=cf.Requirements(costs="own"))  # eq. (3), l1
    for qid, x in X.iterrows():
        opt = _brute_force(model, data.schema, x, mace.margin)
        d = res.diagnostics.loc[qid]
        assert res.status[qid] == "optimal", (qid, d.to_dict())
        # the proven bracket [delta_min, delta_max] holds the brute-force optimum
        assert d["delta_min"] <= opt + 1e-6
        assert opt <= d["delta_max"] + 1e-6
        answer = res.for_query(qid)[data.schema.names]
        assert (model.predict(answer) == 1).all()


def test_ceocl_answers_are_valid_and_optimal(setting) -> None:
    pytest.importorskip("highspy")
    data, model = setting
    ceocl = cf.CEOCL(norm="l1", distance_scale="range", solution_pool=False, random_state=0)
    ceocl.fit(model, data)
    X = data.X[model.predict(data.X) == 0].iloc[:3]
    res = ceocl.explain(X, requirements=cf.Requirements(costs="own"))  # its l1 objective
    J = len(data.schema)
    for qid, x in X.iterrows():
        answer = res.for_query(qid)[data.schema.names]
        assert res.status[qid] == "optimal"
        assert (model.predict(answer) == 1).all()
        row = answer.iloc[0]
        cost = sum(abs(row[f.name] - x[f.name]) / f.range for f in data.schema if f.is_numeric)
        cost += float(row["job"] != x["job"])
        assert cost / J == pytest.approx(
            _brute_force(model, data.schema, x, ceocl.margin), abs=1e-6
        )


# ---------------------------------------------------------------- refusals
def test_ctr_model_is_refused_naming_the_feature_and_the_setting() -> None:
    data = _data()
    model = _fit(data, iterations=30, depth=4, one_hot_max_size=2)
    with pytest.raises(cf.UnsupportedModelError, match=r"'job' \(3 categories\)") as info:
        compile_model(model, data.schema)
    assert "one_hot_max_size=3" in str(info.value)


def test_multiclass_model_is_refused() -> None:
    data = _data()
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, len(data.X))
    model = catboost.CatBoostClassifier(
        iterations=5,
        depth=2,
        verbose=0,
        random_seed=0,
        loss_function="MultiClass",
        allow_writing_files=False,
    ).fit(data.X[["a", "k"]], y)
    schema = cf.Schema([data.schema["a"], data.schema["k"]])
    with pytest.raises(cf.UnsupportedModelError, match="binary classification"):
        compile_model(model, schema)


def test_categorical_column_that_is_numeric_in_the_schema_is_refused() -> None:
    data = _data()
    frame = data.X.assign(k=data.X["k"].astype(str))
    model = catboost.CatBoostClassifier(
        iterations=5,
        depth=2,
        verbose=0,
        random_seed=0,
        cat_features=["k", "job"],
        allow_writing_files=False,
    ).fit(frame, data.y)
    with pytest.raises(cf.UnsupportedModelError, match="'k'"):
        compile_model(model, data.schema)
