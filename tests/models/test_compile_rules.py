"""Model compiler: decision rules and ties, preprocessing layouts, unsupported models."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn import ensemble, linear_model, neighbors, neural_network, svm, tree
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
)

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError, ValidationError
from counterfact.models._compile import DecisionRule, TreeEnsemble, compile_model


# --------------------------------------------------------------------------- rules
def _region_holds(
    rule: DecisionRule, target: int, Y: np.ndarray, margin: float = 0.0
) -> np.ndarray:
    out = np.zeros(len(Y), dtype=bool)
    for conj in rule.region(target):
        ok = np.ones(len(Y), dtype=bool)
        for c in conj:
            v = Y @ c.coef
            ok &= (v >= c.rhs + margin) if margin else c.holds(Y)
        out |= ok
    return out


@pytest.mark.parametrize(
    "rule",
    [
        DecisionRule("threshold", 2, 1),
        DecisionRule("threshold", 2, 1, positive_on_tie=True),
        DecisionRule("argmax", 2, 2),
        DecisionRule("argmax", 4, 4),
        DecisionRule("ovo", 3, 3, pairs=((0, 1), (0, 2), (1, 2))),
        DecisionRule("ovo", 4, 6, pairs=tuple((i, j) for i in range(4) for j in range(i + 1, 4))),
    ],
    ids=lambda r: f"{r.kind}{r.n_classes}{'tie1' if r.positive_on_tie else ''}",
)
def test_region_is_exact_including_ties(rule: DecisionRule) -> None:
    rng = np.random.default_rng(0)
    # small integers: plenty of exact ties and zeros
    Y = rng.integers(-2, 3, size=(4000, rule.n_outputs)).astype(float)
    pred = rule.predict(Y)
    for t in range(rule.n_classes):
        np.testing.assert_array_equal(_region_holds(rule, t, Y), pred == t)
        # with the margin every condition is strict enough: a subset of the exact region
        Yp = Y + rng.uniform(-2e-4, 2e-4, Y.shape)
        safe = _region_holds(rule, t, Yp, margin=1e-4)
        assert not (safe & (rule.predict(Yp) != t)).any()
    with pytest.raises(ValidationError, match="Target class index"):
        rule.region(rule.n_classes)


def test_forest_tie_goes_to_the_lower_class() -> None:
    """A forest of 2 trees whose mean probability ties exactly: sklearn predicts class 0."""
    X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0], "b": [0, 1, 0, 1, 1, 0, 1, 0]})
    schema = cf.Schema(
        (cf.Feature("a", "real", lower=0, upper=3), cf.Feature("b", "integer", lower=0, upper=1))
    )
    y_a = np.array([0, 1, 1, 1, 0, 1, 1, 1])  # left leaf of a<=0.5 pure 0
    y_b = np.array([0, 0, 0, 1, 0, 0, 0, 1])
    rf = ensemble.RandomForestClassifier(
        n_estimators=2, max_depth=1, bootstrap=False, random_state=0
    ).fit(X, y_a)
    t1 = tree.DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y_a)
    t2 = tree.DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y_b)
    rf.estimators_ = [t1, t2]
    compiled = compile_model(rf, schema)
    assert isinstance(compiled.estimator, TreeEnsemble) and compiled.estimator.divisor == 2
    grid = pd.DataFrame({"a": np.repeat(np.linspace(0, 3, 61), 2), "b": np.tile([0, 1], 61)})
    proba = rf.predict_proba(grid)
    ties = proba[:, 0] == proba[:, 1]
    assert ties.any()
    np.testing.assert_array_equal(compiled.predict(grid), rf.predict(grid))
    assert (rf.predict(grid)[ties] == 0).all()
    y = compiled.outputs_raw(compiled.encode(grid))
    in1 = _region_holds(compiled.rule, 1, y)
    in0 = _region_holds(compiled.rule, 0, y)
    assert not in1[ties].any() and in0[ties].all()


# --------------------------------------------------------------------------- layouts
@pytest.fixture(scope="module")
def german() -> cf.Dataset:
    d = cf.datasets.load("german_credit")
    return d.subset(d.frame.index[:400])


def _random(schema: cf.Schema, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
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


def _check(model: Any, schema: cf.Schema, n: int = 2000) -> None:
    compiled = compile_model(model, schema)
    X = _random(schema, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = model.predict(X)
    np.testing.assert_array_equal(compiled.predict(X), expected)
    assert len(np.unique(expected)) > 1


@pytest.mark.parametrize("clf", ["lr", "tree"])
def test_custom_preprocessing_layouts(german: cf.Dataset, clf: str) -> None:
    s = german.schema
    cat = s.categorical
    ordinal = s.ordinal
    num = s.numeric
    ct = ColumnTransformer(
        [
            ("mm", MinMaxScaler(), num[:3]),
            ("rob", Pipeline([("a", StandardScaler()), ("b", MaxAbsScaler())]), num[3:5]),
            ("oh_first", OneHotEncoder(drop="first", sparse_output=False), cat[:3]),
            (
                "oh_bin",
                OneHotEncoder(drop="if_binary", sparse_output=False, handle_unknown="ignore"),
                cat[3:],
            ),
            ("ordcat", OrdinalEncoder(), cat[:2]),  # a categorical feature through OrdinalEncoder
            (
                "ord",
                Pipeline(
                    [
                        (
                            "enc",
                            OrdinalEncoder(categories=[list(s[n].categories) for n in ordinal]),
                        ),
                        ("sc", RobustScaler()),
                    ]
                ),
                ordinal,
            ),
        ],
        remainder="passthrough",  # the other numeric features
        sparse_threshold=0.0,
    )
    est = (
        linear_model.LogisticRegression(max_iter=3000)
        if clf == "lr"
        else tree.DecisionTreeClassifier(max_depth=6, random_state=0)
    )
    pipe = Pipeline([("ct", ct), ("sc", StandardScaler()), ("clf", est)]).fit(german.X, german.y)
    _check(pipe, s)


def test_bare_estimator_on_raw_numeric_columns() -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"u": rng.normal(size=300), "v": rng.integers(0, 20, 300), "w": rng.integers(0, 2, 300)}
    )
    y = (X.u + 0.1 * X.v + X.w > 1).astype(int)
    schema = cf.Schema.infer(X)
    assert schema["w"].kind == "binary"  # numeric categories used as numbers
    for est in (
        tree.DecisionTreeClassifier(random_state=0),
        ensemble.GradientBoostingClassifier(n_estimators=10),
    ):
        _check(est.fit(X, y), schema)


def test_margin_and_adapter(german: cf.Dataset) -> None:
    model = cf.models.fit(german, "lr")
    compiled = compile_model(cf.models.ModelAdapter(model), german.schema, margin=1e-3)
    assert compiled.rule.margin == 1e-3
    assert compiled.class_index(german.classes[1]) == 1
    with pytest.raises(ValidationError, match="margin"):
        compile_model(model, german.schema, margin=-1)
    with pytest.raises(ValidationError, match="Schema"):
        compile_model(model, "not a schema")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- unsupported
def _unsupported_models(german: cf.Dataset) -> list[tuple[str, Any, str]]:
    s = german.schema
    return [
        (
            "knn",
            cf.models.make_pipeline(s, "lr").set_params(clf=neighbors.KNeighborsClassifier()),
            "KNeighborsClassifier",
        ),
        (
            "svc_rbf",
            cf.models.make_pipeline(s, "lr").set_params(clf=svm.SVC(kernel="rbf")),
            "kernel='rbf'",
        ),
        (
            "mlp_tanh",
            cf.models.make_pipeline(s, "mlp").set_params(
                clf=neural_network.MLPClassifier((4,), activation="tanh", max_iter=50)
            ),
            "activation='tanh'",
        ),
        (
            "pca",
            Pipeline(
                [
                    ("pre", cf.models.preprocessor(s)),
                    ("pca", PCA(3)),
                    ("clf", linear_model.LogisticRegression()),
                ]
            ),
            "PCA",
        ),
        (
            "log_lr",
            Pipeline(
                [
                    (
                        "pre",
                        ColumnTransformer(
                            [("log", FunctionTransformer(np.log1p), ["duration_months"])]
                        ),
                    ),
                    ("clf", linear_model.LogisticRegression()),
                ]
            ),
            "np.log1p.*tree models",
        ),
        (
            "quantile_real_mlp",
            Pipeline(
                [
                    (
                        "pre",
                        ColumnTransformer(
                            [("q", QuantileTransformer(n_quantiles=20), ["credit_amount"])]
                        ),
                    ),
                    ("clf", neural_network.MLPClassifier((3,), max_iter=20)),
                ]
            ),
            "QuantileTransformer.*real feature 'credit_amount'.*tree models",
        ),
        (
            "function_tanh_scaler",
            Pipeline(
                [
                    (
                        "pre",
                        ColumnTransformer([("f", FunctionTransformer(np.negative), s.numeric)]),
                    ),
                    ("clf", tree.DecisionTreeClassifier()),
                ]
            ),
            "FunctionTransformer.*negative.*ColumnTransformer part 'f'",
        ),
        (
            "minmax_clip",
            Pipeline(
                [
                    ("pre", ColumnTransformer([("mm", MinMaxScaler(clip=True), s.numeric)])),
                    ("clf", linear_model.LogisticRegression()),
                ]
            ),
            "clip",
        ),
    ]


def test_unsupported_models_raise_clearly(german: cf.Dataset) -> None:
    for name, model, needle in _unsupported_models(german):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(german.X, german.y)
        with pytest.raises(UnsupportedModelError, match="(?s)" + needle.replace("(", r"\(")) as exc:
            compile_model(model, german.schema)
        assert "upport" in str(exc.value), name


def test_unsupported_hgb_categorical_splits(german: cf.Dataset) -> None:
    s = german.schema
    pre = ColumnTransformer(
        [("ord", OrdinalEncoder(), s.categorical), ("num", "passthrough", s.numeric)]
    )
    n_cat = len(s.categorical)
    hgb = ensemble.HistGradientBoostingClassifier(
        max_iter=5, categorical_features=list(range(n_cat))
    )
    pipe = Pipeline([("pre", pre), ("clf", hgb)]).fit(german.X, german.y)
    with pytest.raises(UnsupportedModelError, match="categorical splits"):
        compile_model(pipe, s)


def test_model_using_unknown_column(german: cf.Dataset) -> None:
    model = cf.models.fit(german, "tree")
    smaller = cf.Schema(
        tuple(f for f in german.schema.features if f.name != "age"), target=german.target
    )
    with pytest.raises(ValidationError, match="'age'"):
        compile_model(model, smaller)


def test_encoder_that_fails_on_the_domain_is_a_clear_error(german: cf.Dataset) -> None:
    """An encoder fitted without some of the schema's categories, handle_unknown='error':
    the model would fail on them, so compiling names the feature and the fix."""
    s = german.schema
    f = s["purpose"]
    enc = OneHotEncoder(categories=[list(f.categories)[:-1]], handle_unknown="error")
    X = german.X[german.X["purpose"] != f.categories[-1]]
    y = german.y.loc[X.index]
    pipe = Pipeline(
        [
            ("pre", ColumnTransformer([("oh", enc, ["purpose"])])),
            ("clf", linear_model.LogisticRegression()),
        ]
    ).fit(X, y)
    with pytest.raises(ValidationError, match=r"(?s)purpose.*handle_unknown='ignore'"):
        compile_model(pipe, s)
