"""Scorecards and EBMs compile exactly: linear models and MLPs over bins, EBMs, optbinning.

* ``KBinsDiscretizer`` (every ``encode`` and ``strategy``, float64 and float32) in
  front of logistic regression, linear SVM and MLPs: a scorecard (every input a
  step function of one feature) compiles to a tree ensemble, the rest to a
  ``StepMLP`` (step trees added to the first layer of the network);
* interpret's ``ExplainableBoostingClassifier`` (main effects and pairs);
* optbinning's ``BinningProcess`` in a pipeline, and ``Scorecard``.

Faithful as for the other model kinds: the compiled model's probability equals the
model's own ``predict_proba`` on every training row (to 1e-12), and its decision
equals ``predict`` on random rows and on rows at every raw cut and its float
neighbours.  The MILP encoding of a ``StepMLP`` computes the same outputs.
"""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, softmax
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError
from counterfact.models._adapter import as_adapter
from counterfact.models._compile import StepMLP, TreeEnsemble, compile_model, interval_bounds

pytestmark = pytest.mark.filterwarnings("ignore")

N_TRAIN = 300
N_RANDOM = 1500
DOCS = Path(__file__).resolve().parents[2] / "docs" / "models.md"


@pytest.fixture(scope="module")
def german() -> cf.Dataset:
    d = cf.datasets.load("german_credit")
    return d.subset(d.frame.index[:N_TRAIN])


def random_frame(schema: cf.Schema, n: int, rng: np.random.Generator) -> pd.DataFrame:
    cols: dict[str, Any] = {}
    for f in schema.features:
        if f.kind == "real":
            v = rng.uniform(f.lower, f.upper, n)
            v[: n // 10] = rng.integers(int(f.lower), int(f.upper) + 1, n // 10)
            v[0], v[1] = f.lower, f.upper
        elif f.kind == "integer":
            v = rng.integers(int(f.lower), int(f.upper) + 1, n)
            v[0], v[1] = int(f.lower), int(f.upper)
        else:
            cats = np.empty(len(f.categories), dtype=object)
            cats[:] = list(f.categories)
            v = cats[rng.integers(0, len(cats), n)]
        cols[f.name] = v
    return pd.DataFrame(cols)


def boundary_frame(
    compiled: Any, base: pd.DataFrame, rng: np.random.Generator, cap: int = 2000
) -> pd.DataFrame:
    """Rows with one numeric feature exactly at a step tree's raw cut or a float neighbour."""
    est = compiled.estimator
    ens = est.steps if isinstance(est, StepMLP) else est
    rows = []
    for s in ens.splits:
        if (
            s.raw_le is None
            or not np.isfinite(s.raw_le)
            or compiled.schema[s.feature].kind not in ("real", "integer")
        ):
            continue
        rows += [(s.feature, v) for v in (s.raw_le, s.raw_ge, np.nextafter(s.raw_le, -np.inf))]
    if len(rows) > cap:
        rows = [rows[i] for i in rng.choice(len(rows), cap, replace=False)]
    out = base.iloc[rng.integers(0, len(base), len(rows))].reset_index(drop=True).copy()
    for f in compiled.schema.features:
        if f.is_numeric:
            out[f.name] = out[f.name].astype(float)
    for i, (name, v) in enumerate(rows):
        f = compiled.schema[name]
        v = float(np.clip(v, f.lower, f.upper))
        out.loc[i, name] = round(v) if f.kind == "integer" else v
    for f in compiled.schema.features:
        if f.kind == "integer":
            out[f.name] = out[f.name].astype(np.int64)
    return out


def model_probability(compiled: Any, X: pd.DataFrame) -> np.ndarray:
    """The probabilities the compiled outputs give (sigmoid / softmax of the logits)."""
    y = compiled.outputs_raw(compiled.encode(X))
    if y.shape[1] == 1:
        p = expit(y[:, 0])
        return np.column_stack([1 - p, p])
    return softmax(y, axis=1)


def assert_faithful(model: Any, compiled: Any, ds: cf.Dataset, proba: bool = True) -> None:
    """Probabilities on every training row; decisions on random, training and boundary rows."""
    rng = np.random.default_rng(7)
    train = ds.X.reset_index(drop=True)
    if proba:
        want = np.asarray(model.predict_proba(train), dtype=float)
        np.testing.assert_allclose(model_probability(compiled, train), want, rtol=0, atol=1e-12)
    else:  # a linear SVM: the decision function is the compiled output
        want = np.asarray(model.decision_function(train), dtype=float).reshape(len(train), -1)
        np.testing.assert_allclose(
            compiled.outputs_raw(compiled.encode(train)), want, rtol=1e-12, atol=1e-12
        )
    X = pd.concat([random_frame(ds.schema, N_RANDOM, rng), train], ignore_index=True)
    X = pd.concat([X, boundary_frame(compiled, X, rng)], ignore_index=True)
    expected = np.asarray(model.predict(X))
    got = compiled.predict(X)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (
        f"{bad.size} of {len(X)} rows differ, e.g. {X.iloc[bad[:3]].to_dict('records')}"
    )
    assert len(np.unique(expected)) > 1  # not vacuous
    b = interval_bounds(compiled)
    x = compiled.transform_raw(compiled.encode(X))
    assert (x >= b.x_lo).all() and (x <= b.x_hi).all()
    y = compiled.outputs_raw(compiled.encode(X))
    assert (y >= b.y_lo).all() and (y <= b.y_hi).all()


def _estimator(kind: str) -> Any:
    if kind == "lr":
        return LogisticRegression(max_iter=2000)
    if kind == "linear_svm":
        return LinearSVC(max_iter=5000, random_state=0)
    return MLPClassifier((6,), max_iter=300, random_state=0)


def _fit(steps: list[tuple[str, Any]], ds: cf.Dataset, y: Any = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Pipeline(steps).fit(ds.X, ds.y if y is None else y)


def _scorecard_pre(
    s: cf.Schema, kbins: KBinsDiscretizer, binned: list[str] | None = None
) -> ColumnTransformer:
    binned = s.numeric if binned is None else binned
    rest = [n for n in s.numeric if n not in binned]
    parts = [
        ("cat", OneHotEncoder(handle_unknown="ignore"), s.categorical + s.ordinal),
        ("bins", kbins, binned),
    ]
    if rest:
        parts.append(("num", StandardScaler(), rest))
    return ColumnTransformer(parts, sparse_threshold=0.0)


# --------------------------------------------------------------------------- KBinsDiscretizer
@pytest.mark.parametrize("kind", ["lr", "linear_svm", "mlp"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile", "kmeans"])
@pytest.mark.parametrize("encode", ["onehot", "onehot-dense", "ordinal"])
def test_kbins_in_front_of_linear_models_and_mlps(
    encode: str, strategy: str, kind: str, german: cf.Dataset
) -> None:
    kb = KBinsDiscretizer(
        n_bins=5, encode=encode, strategy=strategy, quantile_method="averaged_inverted_cdf"
    )
    model = _fit([("pre", _scorecard_pre(german.schema, kb)), ("clf", _estimator(kind))], german)
    compiled = compile_model(model, german.schema)
    assert isinstance(compiled.estimator, StepMLP if kind == "mlp" else TreeEnsemble)
    assert_faithful(model, compiled, german, proba=kind != "linear_svm")


def test_kbins_beside_scaled_numbers_float32_and_multiclass(german: cf.Dataset) -> None:
    s = german.schema
    # bins of two features, the others scaled: a StepMLP with an identity network
    kb = KBinsDiscretizer(
        n_bins=6, encode="onehot-dense", dtype=np.float32, quantile_method="averaged_inverted_cdf"
    )
    mixed = _fit(
        [("pre", _scorecard_pre(s, kb, ["credit_amount", "age"])), ("clf", _estimator("lr"))],
        german,
    )
    compiled = compile_model(mixed, s)
    assert isinstance(compiled.estimator, StepMLP) and compiled.has_relu
    assert_faithful(mixed, compiled, german)
    # three classes (the target 'housing'): an argmax over one tree ensemble of vector leaves
    levels = sorted(german.X["housing"].unique())
    y = pd.Series(np.searchsorted(levels, german.X["housing"]), index=german.X.index)
    schema = cf.Schema(tuple(f for f in s.features if f.name != "housing"))
    X = german.X.drop(columns=["housing"])
    kb = KBinsDiscretizer(n_bins=4, encode="ordinal", quantile_method="averaged_inverted_cdf")
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(handle_unknown="ignore"), schema.categorical + schema.ordinal),
            ("bins", kb, schema.numeric),
        ],
        sparse_threshold=0.0,
    )
    multi = Pipeline([("pre", pre), ("clf", LogisticRegression(max_iter=3000))]).fit(X, y)
    compiled = compile_model(multi, schema)
    assert isinstance(compiled.estimator, TreeEnsemble) and compiled.rule.kind == "argmax"
    np.testing.assert_allclose(model_probability(compiled, X), multi.predict_proba(X), atol=1e-12)
    R = random_frame(schema, N_RANDOM, np.random.default_rng(3))
    assert (compiled.predict(R) == multi.predict(R)).all()


def test_monotone_maps_of_real_values_stay_refused(german: cf.Dataset) -> None:
    """Not step functions: the error names the transform and the model kinds that take it."""
    from sklearn.preprocessing import FunctionTransformer

    s = german.schema
    pre = ColumnTransformer(
        [
            ("bins", KBinsDiscretizer(n_bins=4, encode="ordinal"), ["age"]),
            ("log", FunctionTransformer(np.log1p), ["credit_amount"]),
        ]
    )
    model = _fit([("pre", pre), ("clf", _estimator("mlp"))], german)
    with pytest.raises(UnsupportedModelError, match=r"(?s)np\.log1p.*credit_amount.*tree models"):
        compile_model(model, s)


def test_step_mlp_milp_outputs_equal_the_ir(german: cf.Dataset) -> None:
    """The MILP encoder of a StepMLP (its trees added to the first layer) on fixed inputs."""
    pytest.importorskip("highspy")
    from counterfact.solvers import _milp as milp

    kb = KBinsDiscretizer(n_bins=5, encode="onehot-dense", quantile_method="averaged_inverted_cdf")
    model = _fit(
        [
            ("pre", _scorecard_pre(german.schema, kb, ["credit_amount", "duration_months"])),
            ("clf", MLPClassifier((5,), max_iter=300, random_state=0)),
        ],
        german,
    )
    compiled = compile_model(model, german.schema)
    assert isinstance(compiled.estimator, StepMLP)
    X = boundary_frame(compiled, german.X.reset_index(drop=True), np.random.default_rng(1), cap=8)
    Z = compiled.encode(pd.concat([german.X.iloc[:4].reset_index(drop=True), X], ignore_index=True))
    want = compiled.outputs_raw(Z)
    for z, w in zip(Z, want, strict=True):
        m = milp.Model()
        zv = milp.declare_inputs(m, compiled.inputs)
        for v, val in zip(zv, z, strict=True):
            m.set_bounds(v, float(val), float(val))
        out = milp.encode_outputs(m, compiled, zv)
        sol = m.solve("highs")
        assert sol.status == "optimal"
        assert [sol.value(o) for o in out] == pytest.approx(list(w), abs=1e-6)


# --------------------------------------------------------------------------- EBM
def _ebm(german: cf.Dataset, **params: Any) -> Any:
    interpret = pytest.importorskip("interpret.glassbox")
    defaults = {
        "interactions": 4,
        "outer_bags": 2,
        "max_rounds": 300,
        "random_state": 0,
        "n_jobs": 1,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return interpret.ExplainableBoostingClassifier(**{**defaults, **params}).fit(
            german.X, german.y
        )


@pytest.mark.parametrize("interactions", [0, 4])
def test_ebm_main_effects_and_pairs(interactions: int, german: cf.Dataset) -> None:
    ebm = _ebm(german, interactions=interactions)
    assert sum(len(t) == 2 for t in ebm.term_features_) == interactions
    compiled = compile_model(ebm, german.schema)
    assert (
        isinstance(compiled.estimator, TreeEnsemble)
        and compiled.estimator.aggregation == "sum_margin"
    )
    assert len(compiled.estimator.trees) <= len(ebm.term_features_)
    assert_faithful(ebm, compiled, german)


def test_ebm_integers_typed_nominal_and_pickling(german: cf.Dataset) -> None:
    """Integer features the EBM treats as categories: one cell per value, mapped by the EBM."""
    s = german.schema
    types = [
        "nominal" if (f.kind == "integer" and f.upper - f.lower < 10) else "auto"
        for f in s.features
    ]
    ebm = _ebm(german, feature_types=types)
    compiled = compile_model(ebm, s)
    assert_faithful(ebm, compiled, german)
    again = pickle.loads(pickle.dumps(compiled))
    R = random_frame(s, 300, np.random.default_rng(2))
    np.testing.assert_array_equal(again.predict(R), compiled.predict(R))


def test_ebm_refusals(german: cf.Dataset) -> None:
    interpret = pytest.importorskip("interpret.glassbox")
    X = german.X.drop(columns=["housing"])
    multi = interpret.ExplainableBoostingClassifier(
        interactions=0, outer_bags=1, max_rounds=50, n_jobs=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multi.fit(X, german.X["housing"])
    schema = cf.Schema(tuple(f for f in german.schema.features if f.name != "housing"))
    with pytest.raises(UnsupportedModelError, match="binary classification"):
        compile_model(multi, schema)
    s = german.schema
    scaled = Pipeline(
        [
            ("pre", ColumnTransformer([("num", StandardScaler(), s.numeric)])),
            (
                "ebm",
                interpret.ExplainableBoostingClassifier(
                    interactions=0, outer_bags=1, max_rounds=50, n_jobs=1
                ),
            ),
        ]
    )
    scaled.fit(german.X, german.y)
    with pytest.raises(UnsupportedModelError, match="raw columns"):
        compile_model(scaled, s)


# --------------------------------------------------------------------------- optbinning
def _binning(s: cf.Schema, **params: Any) -> Any:
    optbinning = pytest.importorskip("optbinning")
    params = {"categorical_variables": s.categorical + s.ordinal, **params}
    return optbinning.BinningProcess(variable_names=list(s.names), **params)


@pytest.mark.parametrize(
    "case", ["woe_lr", "woe_mlp", "event_rate_svm", "special_codes", "integer_as_category"]
)
def test_binning_process_in_a_pipeline(case: str, german: cf.Dataset) -> None:
    s = german.schema
    params: dict[str, Any] = {}
    est = _estimator("lr")
    if case == "woe_mlp":
        est = _estimator("mlp")
    elif case == "event_rate_svm":
        params = {"binning_transform_params": {n: {"metric": "event_rate"} for n in s.names}}
        est = _estimator("linear_svm")
    elif case == "special_codes":  # values inside the domain binned apart: cells [p, p]
        params = {"special_codes": [1000.0, 24, 1]}
    elif case == "integer_as_category":
        params = {
            "categorical_variables": [
                *s.categorical,
                *s.ordinal,
                "installment_rate",
                "existing_credits",
            ]
        }
    model = _fit([("bp", _binning(s, **params)), ("clf", est)], german)
    compiled = compile_model(model, s)
    assert isinstance(compiled.estimator, StepMLP if case == "woe_mlp" else TreeEnsemble)
    assert_faithful(model, compiled, german, proba=case != "event_rate_svm")


def test_scorecard(german: cf.Dataset) -> None:
    optbinning = pytest.importorskip("optbinning")
    s = german.schema
    sc = optbinning.Scorecard(
        binning_process=_binning(s),
        estimator=LogisticRegression(max_iter=2000),
        scaling_method="min_max",
        scaling_method_params={"min": 300, "max": 850},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.fit(german.X, german.y)
    compiled = compile_model(sc, s)
    assert isinstance(compiled.estimator, TreeEnsemble)
    assert compiled.classes.tolist() == sc.estimator_.classes_.tolist()
    assert_faithful(sc, compiled, german)
    adapter = as_adapter(sc, s)  # the methods' view of a Scorecard (no classes_ of its own)
    assert adapter.classes_.tolist() == sc.estimator_.classes_.tolist()
    pred, proba = adapter.predict_with_proba(german.X.iloc[:20])
    np.testing.assert_array_equal(pred, sc.predict(german.X.iloc[:20]))
    np.testing.assert_array_equal(proba, sc.predict_proba(german.X.iloc[:20]))


def test_binning_refusals(german: cf.Dataset) -> None:
    s = german.schema
    model = _fit([("bp", _binning(s)), ("clf", _estimator("lr"))], german)
    model.named_steps["bp"].binning_transform_params = {
        "age": {"metric": "bins"}
    }  # labels, not numbers
    with pytest.raises(UnsupportedModelError, match=r"(?s)BinningProcess.*metric='bins'"):
        compile_model(model, s)


# --------------------------------------------------------------------------- model kinds
@pytest.mark.parametrize("kind", ["scorecard", "ebm"])
def test_model_kinds(kind: str, german: cf.Dataset) -> None:
    """cf.models.fit's scorecard (quantile bins + one-hot + logistic regression) and EBM."""
    if kind == "ebm":
        pytest.importorskip("interpret")
    params = {"interactions": 3, "outer_bags": 2, "max_rounds": 200} if kind == "ebm" else {}
    model = cf.models.fit(german, kind, **params)
    compiled = compile_model(model, german.schema)
    assert isinstance(compiled.estimator, TreeEnsemble)
    assert_faithful(model, compiled, german)


# --------------------------------------------------------------------------- plumbing
def test_pickle_and_fast_predictor(german: cf.Dataset) -> None:
    """Compiled step models pickle (parallel runs); the heuristics' exact shortcut takes a
    KBins pipeline (the appended split columns are cut off for the estimator)."""
    from counterfact.models._fastpredict import FastPredictor

    kb = KBinsDiscretizer(n_bins=5, encode="onehot-dense", quantile_method="averaged_inverted_cdf")
    for kind in ("lr", "mlp"):
        model = _fit(
            [("pre", _scorecard_pre(german.schema, kb)), ("clf", _estimator(kind))], german
        )
        compiled = compile_model(model, german.schema)
        X = random_frame(german.schema, 400, np.random.default_rng(8))
        again = pickle.loads(pickle.dumps(compiled))
        np.testing.assert_array_equal(again.predict(X), compiled.predict(X))
        fast = FastPredictor.build(as_adapter(model, german.schema), german.schema, german.X)
        assert fast is not None
        np.testing.assert_array_equal(fast.predict_proba(X), model.predict_proba(X))


def _docs_block(title: str) -> str:
    text = DOCS.read_text()
    section = text.split(f"## {title}", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]


def test_docs_scorecard_example_runs() -> None:
    """docs/models.md's scorecard example, as written."""
    pytest.importorskip("z3")
    pytest.importorskip("highspy")
    code = _docs_block("A scorecard, as a credit team writes it")
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), namespace)
    result = namespace["result"]
    assert (result.status == "optimal").all(), result.status.tolist()
