"""Faithfulness of the model compiler: the IR predicts exactly what the model predicts.

For every supported model kind, binary and 3-class, on German Credit (integer,
real, binary, categorical and ordinal features, plus a continuous ratio so that
tree thresholds are not float32-representable), the IR's prediction equals the
real ``predict`` on thousands of random in-domain rows and on rows placed exactly
at every tree cut and its float neighbours.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn import ensemble, neural_network, svm  # loaded before threadpool_limits
from threadpoolctl import threadpool_limits

import counterfact as cf
from counterfact.models._compile import (
    MLP,
    CompiledModel,
    Linear,
    TreeEnsemble,
    compile_model,
    interval_bounds,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

N_TRAIN = 400
N_RANDOM = 3000


# --------------------------------------------------------------------------- data
def _german() -> pd.DataFrame:
    d = cf.datasets.load("german_credit")
    frame = d.frame.copy()
    # a genuinely continuous feature: tree thresholds are not float32-representable
    frame["monthly"] = frame["credit_amount"] / frame["duration_months"] * 1.0137
    return frame


@pytest.fixture(scope="module")
def datasets() -> dict[int, cf.Dataset]:
    frame = _german().iloc[:N_TRAIN]
    binary = cf.Dataset.from_frame(frame.drop(columns=["housing"]), "credit_risk", name="german2")
    schema2 = binary.schema
    # keep the loader's kinds (ordinals, binaries) for the shared columns
    base = cf.datasets.load("german_credit").schema
    feats = tuple(base[f.name] if f.name in base else f for f in schema2.features)
    binary = cf.Dataset(
        frame.drop(columns=["housing"]), cf.Schema(feats, "credit_risk"), name="german2"
    )
    feats3 = (*(base[n] for n in base.names if n != "housing"), schema2["monthly"])
    three = cf.Dataset(
        frame.drop(columns=["credit_risk"]), cf.Schema(feats3, "housing"), name="german3"
    )
    return {2: binary, 3: three}


def random_frame(schema: cf.Schema, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Random in-domain rows."""
    cols: dict[str, Any] = {}
    for f in schema.features:
        if f.kind == "real":
            cols[f.name] = rng.uniform(f.lower, f.upper, n)
        elif f.kind == "integer":
            cols[f.name] = rng.integers(int(f.lower), int(f.upper) + 1, n)
        else:
            cats = np.empty(len(f.categories), dtype=object)
            cats[:] = list(f.categories)
            cols[f.name] = cats[rng.integers(0, len(cats), n)]
    return pd.DataFrame(cols)


def boundary_frame(
    compiled: CompiledModel, base: pd.DataFrame, rng: np.random.Generator, cap: int = 4000
) -> pd.DataFrame:
    """Rows with one numeric feature set exactly at a tree cut or a float neighbour of it."""
    est = compiled.estimator
    assert isinstance(est, TreeEnsemble)
    rows = []
    for s in est.splits:
        if s.raw_le is None or not np.isfinite(s.raw_le):
            continue
        f = compiled.schema[s.feature]
        if f.kind == "integer":
            values = [s.raw_le, s.raw_ge]
        elif f.kind == "real":
            values = [
                s.raw_le,
                s.raw_ge,
                np.nextafter(s.raw_le, -np.inf),
                np.nextafter(s.raw_ge, np.inf),
                float(np.float32(s.raw_le)),
                float(np.nextafter(np.float32(s.raw_le), np.float32(np.inf))),
            ]
        else:
            continue
        for v in values:
            rows.append((s.feature, v))
    if len(rows) > cap:
        rows = [rows[i] for i in rng.choice(len(rows), cap, replace=False)]
    out = base.iloc[rng.integers(0, len(base), len(rows))].reset_index(drop=True).copy()
    for f in compiled.schema.features:
        if f.is_numeric:
            out[f.name] = out[f.name].astype(float)
    for i, (name, v) in enumerate(rows):
        out.loc[i, name] = v
    return out


# --------------------------------------------------------------------------- models
def _pipeline(ds: cf.Dataset, layout: str, clf: Any) -> Any:
    pipe = cf.models.make_pipeline(ds.schema, layout, random_state=0)
    pipe.set_params(clf=clf)
    return pipe.fit(ds.X, ds.y)


def make_model(kind: str, ds: cf.Dataset) -> Any:
    small = {"n_estimators": 15}
    if kind == "lr":
        return cf.models.fit(ds, "lr")
    if kind == "linear_svc":
        return _pipeline(ds, "lr", svm.LinearSVC(max_iter=3000, random_state=0))
    if kind == "svc_linear":
        return cf.models.fit(ds, "svm")
    if kind == "tree":
        return cf.models.fit(ds, "tree")
    if kind == "rf":
        return cf.models.fit(ds, "rf", **small)
    if kind == "rf_scaled":  # tree thresholds behind a StandardScaler
        return _pipeline(
            ds, "lr", ensemble.RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0)
        )
    if kind == "extra_trees":
        return _pipeline(
            ds, "rf", ensemble.ExtraTreesClassifier(n_estimators=10, max_depth=8, random_state=0)
        )
    if kind == "gbm":
        return cf.models.fit(ds, "gbm", n_estimators=15)
    if kind == "hgb":
        return _pipeline(
            ds, "rf", ensemble.HistGradientBoostingClassifier(max_iter=15, random_state=0)
        )
    if kind == "mlp":
        return cf.models.fit(ds, "mlp", hidden_layer_sizes=(8, 6), max_iter=300)
    if kind == "mlp_identity":
        return _pipeline(
            ds,
            "mlp",
            neural_network.MLPClassifier((5,), activation="identity", max_iter=200, random_state=0),
        )
    if kind == "xgb":
        pytest.importorskip("xgboost")
        return cf.models.fit(ds, "xgb", n_estimators=15)
    if kind == "lgbm":
        pytest.importorskip("lightgbm")
        return cf.models.fit(ds, "lgbm", n_estimators=15)
    raise AssertionError(kind)


KINDS = [
    "lr", "linear_svc", "svc_linear", "tree", "rf", "rf_scaled", "extra_trees", "gbm", "hgb",
    "mlp", "mlp_identity", "xgb", "lgbm",
]  # fmt: skip
_CACHE: dict[tuple[str, int], tuple[Any, CompiledModel]] = {}


def fitted(kind: str, n_classes: int, datasets: dict[int, cf.Dataset]) -> tuple[Any, CompiledModel]:
    key = (kind, n_classes)
    if key not in _CACHE:
        ds = datasets[n_classes]
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")
            model = make_model(kind, ds)
        _CACHE[key] = (model, compile_model(model, ds.schema))
    return _CACHE[key]


# --------------------------------------------------------------------------- faithfulness
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_ir_predicts_like_the_model(
    kind: str, n_classes: int, datasets: dict[int, cf.Dataset]
) -> None:
    model, compiled = fitted(kind, n_classes, datasets)
    ds = datasets[n_classes]
    rng = np.random.default_rng(7)
    X = pd.concat(
        [random_frame(ds.schema, N_RANDOM, rng), ds.X.reset_index(drop=True)], ignore_index=True
    )
    if isinstance(compiled.estimator, TreeEnsemble):
        X = pd.concat([X, boundary_frame(compiled, X, rng)], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(model.predict(X))
    got = compiled.predict(X)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{kind}/{n_classes}: {bad.size} of {len(X)} rows differ, e.g. rows {bad[:5]}"
    )
    assert len(np.unique(expected)) > 1  # the test is not vacuous
    assert compiled.n_classes == n_classes
    assert list(compiled.classes) == list(ds.classes)


@pytest.mark.parametrize("kind", ["tree", "rf", "rf_scaled", "gbm", "hgb", "xgb", "lgbm"])
def test_safe_split_bounds(kind: str, datasets: dict[int, cf.Dataset]) -> None:
    """Every split: le < ge with nothing representable between, and the raw cuts are
    exact: raw <= raw_le goes left, raw >= raw_ge goes right (through the real transform)."""
    _, compiled = fitted(kind, 2, datasets)
    est = compiled.estimator
    assert isinstance(est, TreeEnsemble)
    f32 = est.dtype == "float32"
    for s in est.splits:
        assert s.le < s.ge
        if f32:
            assert np.float32(s.le) == s.le and np.float32(s.ge) == s.ge
            assert np.nextafter(np.float32(s.le), np.float32(np.inf)) == np.float32(s.ge)
        else:
            assert np.nextafter(s.le, np.inf) == s.ge
        col = compiled.affine.columns[s.column]
        blk = compiled.inputs.block(s.feature)
        assert col.feature == s.feature

        def goes_left(z: np.ndarray, col: Any = col, le: float = s.le) -> np.ndarray:
            x = col.evaluate(np.asarray(z, dtype=float).reshape(-1, 1))
            if f32:
                x = x.astype(np.float32).astype(float)
            return x <= le

        if blk.kind in ("real", "integer"):
            assert s.raw_le is not None and s.raw_ge is not None
            if not np.isfinite(s.raw_le):
                continue
            assert goes_left(np.array([s.raw_le, np.nextafter(s.raw_le, -np.inf)])).all()
            assert not goes_left(np.array([s.raw_ge, np.nextafter(s.raw_ge, np.inf)])).any()
            if blk.kind == "integer":
                assert s.raw_le == int(s.raw_le) and s.raw_ge == s.raw_le + 1
            else:
                assert np.nextafter(s.raw_le, np.inf) == s.raw_ge
        else:
            assert s.left_categories is not None
            k = len(blk.categories)
            zb = np.arange(k, dtype=float).reshape(-1, 1) if blk.kind == "ordinal" else np.eye(k)
            x = col.evaluate(zb)
            x = x.astype(np.float32).astype(float) if f32 else x
            assert tuple(np.flatnonzero(x <= s.le)) == s.left_categories


@pytest.mark.parametrize("kind", ["tree", "rf", "gbm", "xgb", "lgbm", "hgb"])
def test_leaf_conjunctions_identify_the_leaf(kind: str, datasets: dict[int, cf.Dataset]) -> None:
    _, compiled = fitted(kind, 3, datasets)
    est = compiled.estimator
    assert isinstance(est, TreeEnsemble)
    rng = np.random.default_rng(1)
    Z = compiled.encode(random_frame(compiled.schema, 300, rng))
    X = compiled.transform_raw(Z)
    Xc = X.astype(np.float32).astype(float) if est.dtype == "float32" else X
    reached = est.leaf_index(X)
    for t, tree in enumerate(est.trees[:5]):
        hits = np.zeros((len(X), len(tree.leaves)), dtype=bool)
        for li, leaf in enumerate(tree.leaves):
            ok = np.ones(len(X), dtype=bool)
            for sid, left in leaf.conditions:
                s = est.splits[sid]
                v = Xc[:, s.column]
                ok &= (v <= s.le) if left else (v >= s.ge)
            hits[:, li] = ok
        assert (hits.sum(axis=1) == 1).all()
        nodes = np.array([leaf.node for leaf in tree.leaves])
        assert (nodes[hits.argmax(axis=1)] == reached[:, t]).all()
        np.testing.assert_array_equal(
            np.array([leaf.value for leaf in tree.leaves])[hits.argmax(axis=1)],
            tree.value[reached[:, t]],
        )


# --------------------------------------------------------------------------- IR shape
def test_node_types_and_layout(datasets: dict[int, cf.Dataset]) -> None:
    ds = datasets[2]
    _, lr = fitted("lr", 2, datasets)
    assert isinstance(lr.estimator, Linear) and lr.rule.kind == "threshold" and lr.n_outputs == 1
    assert lr.rule.margin == 1e-4
    _, mlp = fitted("mlp", 3, datasets)
    assert isinstance(mlp.estimator, MLP) and mlp.has_relu and mlp.rule.kind == "argmax"
    assert [layer.activation for layer in mlp.estimator.layers] == ["relu", "relu", "identity"]
    _, svc = fitted("svc_linear", 3, datasets)
    assert svc.rule.kind == "ovo" and svc.rule.pairs == ((0, 1), (0, 2), (1, 2))
    _, rf = fitted("rf", 2, datasets)
    assert isinstance(rf.estimator, TreeEnsemble)
    assert rf.estimator.aggregation == "mean_proba" and rf.estimator.divisor == 15
    _, gbm = fitted("gbm", 3, datasets)
    assert gbm.estimator.aggregation == "sum_margin"  # type: ignore[union-attr]
    assert gbm.estimator.n_outputs == 3
    assert {t.output for t in gbm.estimator.trees} == {0, 1, 2}  # type: ignore[union-attr]
    # raw layout: one variable per numeric / ordinal feature, one indicator per category
    space = lr.inputs
    assert space.n == sum(
        1 if not f.is_categorical else len(f.categories) for f in ds.schema.features
    )
    Z = space.encode(ds.X)
    for blk in space.blocks:
        if blk.is_indicator:
            assert (Z[:, blk.columns].sum(axis=1) == 1).all()
    back = space.decode(Z)
    pd.testing.assert_frame_equal(
        back.reset_index(drop=True), ds.X.reset_index(drop=True), check_dtype=False
    )
    # x = A z + c agrees with the bit-faithful transform up to rounding
    np.testing.assert_allclose(
        Z @ lr.affine.A.T + lr.affine.c, lr.transform_raw(Z), rtol=1e-12, atol=1e-12
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pre = lr_model_pre(datasets)
    np.testing.assert_array_equal(lr.transform_raw(Z), pre.transform(ds.X))


def lr_model_pre(datasets: dict[int, cf.Dataset]) -> Any:
    model, _ = fitted("lr", 2, datasets)
    return model.named_steps["pre"]


def test_outputs_match_decision_functions(datasets: dict[int, cf.Dataset]) -> None:
    rng = np.random.default_rng(3)
    X = random_frame(datasets[3].schema, 500, rng)
    for kind in ("lr", "gbm", "hgb"):
        model, compiled = fitted(kind, 3, datasets)
        np.testing.assert_allclose(
            compiled.outputs_raw(compiled.encode(X)), model.decision_function(X), atol=1e-9
        )
    model, compiled = fitted("rf", 3, datasets)
    np.testing.assert_allclose(
        compiled.outputs_raw(compiled.encode(X)), model.predict_proba(X), atol=1e-12
    )
    model, compiled = fitted("xgb", 3, datasets)
    margin = model.pipeline.named_steps["clf"].predict(
        model.pipeline.named_steps["pre"].transform(X), output_margin=True
    )
    np.testing.assert_allclose(compiled.outputs_raw(compiled.encode(X)), margin, atol=1e-5)
    model, compiled = fitted("lgbm", 2, datasets)
    raw = model.pipeline.named_steps["clf"].predict(
        model.pipeline.named_steps["pre"].transform(X), raw_score=True
    )
    np.testing.assert_allclose(compiled.outputs_raw(compiled.encode(X))[:, 0], raw, atol=1e-9)


def test_interval_bounds_contain_every_sample(datasets: dict[int, cf.Dataset]) -> None:
    rng = np.random.default_rng(5)
    for kind, k in (("mlp", 3), ("lr", 2), ("rf", 2), ("gbm", 3)):
        _, compiled = fitted(kind, k, datasets)
        schema = compiled.schema
        box = {"duration_months": (6.0, 24.0), "employment_since": (1.0, 3.0)}
        b = interval_bounds(compiled, box)
        X = random_frame(schema, 2000, rng)
        X["duration_months"] = rng.integers(6, 25, len(X))
        X["employment_since"] = [
            schema["employment_since"].categories[i] for i in rng.integers(1, 4, len(X))
        ]
        Z = compiled.encode(X)
        x = compiled.transform_raw(Z)
        assert (x >= b.x_lo).all() and (x <= b.x_hi).all()
        y = compiled.outputs_raw(Z)
        assert (y >= b.y_lo).all() and (y <= b.y_hi).all()
        if isinstance(compiled.estimator, MLP):
            h = x
            for i, layer in enumerate(compiled.estimator.layers):
                pre = h @ layer.W.T + layer.b
                assert (pre >= b.pre[i][0]).all() and (pre <= b.pre[i][1]).all()
                h = np.maximum(pre, 0) if layer.activation == "relu" else pre
            assert b.stable_active(0).dtype == bool
    # the default box is the schema's domain, and narrowing tightens it
    _, compiled = fitted("mlp", 3, datasets)
    wide, narrow = interval_bounds(compiled), interval_bounds(compiled, {"age": (30, 31)})
    assert (narrow.x_hi <= wide.x_hi).all() and (narrow.pre[0][1] <= wide.pre[0][1] + 1e-12).all()


def test_raw_thresholds(datasets: dict[int, cf.Dataset]) -> None:
    model, compiled = fitted("tree", 2, datasets)
    cuts = compiled.raw_thresholds()
    assert cuts and set(cuts) <= set(compiled.schema.numeric) | set(compiled.schema.ordinal)
    for name, t in cuts.items():
        f = compiled.schema[name]
        assert (np.diff(t) > 0).all()
        if f.kind in ("integer", "ordinal"):
            assert (t == np.round(t)).all()
    assert "monthly" in cuts
    from counterfact.models._compile import raw_thresholds

    again = raw_thresholds(model, compiled.schema)
    assert set(again) == set(cuts)
    _, lr = fitted("lr", 2, datasets)
    assert lr.raw_thresholds() == {}
