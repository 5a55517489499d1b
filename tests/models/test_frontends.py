"""The front-end registry: dispatch by class, SUPPORTED_ESTIMATORS derived from it,
adding a model kind with one class, and the standard model kinds' table."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import NuSVC
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

import counterfact as cf
from counterfact.models import _fit
from counterfact.models._compile import (
    SUPPORTED_ESTIMATORS,
    DecisionRule,
    FrontEnd,
    Linear,
    _frontend,
    compile_model,
    front_ends,
    register_front_end,
)
from counterfact.models._fit import KINDS


def _numeric_data(n: int = 300, classes: int = 2) -> tuple[cf.Schema, pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.uniform(-2, 2, size=n)})
    y = (X["a"] + X["b"] > 0).astype(int).to_numpy()
    if classes == 3:
        y = y + (X["a"] > 1).to_numpy()
    schema = cf.Schema(
        [
            cf.Feature("a", "real", lower=-10.0, upper=10.0),
            cf.Feature("b", "real", lower=-2.0, upper=2.0),
        ]
    )
    return schema, X, y


def _faithful(model: Any, schema: cf.Schema, X: pd.DataFrame) -> None:
    compiled = compile_model(model, schema)
    np.testing.assert_array_equal(compiled.predict(X), model.predict(X))


def test_supported_estimators_come_from_the_registry() -> None:
    listed = [label for fe in front_ends() for label in fe.supported]
    assert sorted(SUPPORTED_ESTIMATORS) == sorted(listed)
    assert len(set(SUPPORTED_ESTIMATORS)) == len(SUPPORTED_ESTIMATORS)
    # the two estimators the hand-kept list had lost
    assert "ExtraTreeClassifier" in SUPPORTED_ESTIMATORS
    assert "NuSVC(kernel='linear')" in SUPPORTED_ESTIMATORS
    names = [fe.name for fe in front_ends()]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("classes", [2, 3])
def test_extra_tree_and_nusvc_compile_faithfully(classes: int) -> None:
    schema, X, y = _numeric_data(classes=classes)
    tree = ExtraTreeClassifier(max_depth=6, random_state=0).fit(X, y)
    _faithful(tree, schema, X)
    assert compile_model(tree, schema).front_end == "sklearn-forest"
    svc = NuSVC(kernel="linear", nu=0.3).fit(X, y)
    _faithful(svc, schema, X)
    assert compile_model(svc, schema).front_end == "sklearn-svc"


def test_dispatch_walks_the_mro_not_the_class_name() -> None:
    schema, X, y = _numeric_data()

    class MyLogistic(LogisticRegression):
        pass

    _faithful(MyLogistic().fit(X, y), schema, X)

    class RandomForestClassifier:  # the name of a supported class, but none of its code
        classes_ = np.array([0, 1])

        def fit(self, X: Any, y: Any) -> RandomForestClassifier:
            return self

        def predict(self, X: Any) -> np.ndarray:
            return np.zeros(len(X), dtype=int)

    with pytest.raises(cf.UnsupportedModelError, match=r"RandomForestClassifier.*Supported"):
        compile_model(RandomForestClassifier(), schema)


def test_optional_classes_are_named_without_importing_them() -> None:
    assert _frontend.resolve_class("no_such_module_for_counterfact:Model") is None
    ref = "sklearn.tree:DecisionTreeClassifier"
    assert _frontend.resolve_class(ref) is DecisionTreeClassifier
    assert _frontend.front_end_for(ExtraTreeClassifier).name == "sklearn-forest"
    assert _frontend.front_end_for(dict) is None


class _Halfplane:
    """A toy estimator: class 1 iff ``w @ x + b > 0``."""

    def __init__(self, w: tuple[float, ...], b: float) -> None:
        self.w, self.b = np.asarray(w, dtype=float), float(b)
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = len(w)

    def fit(self, X: Any, y: Any) -> _Halfplane:
        return self

    def predict(self, X: Any) -> np.ndarray:
        return (np.asarray(X, dtype=float) @ self.w + self.b > 0).astype(int)


class _HalfplaneFrontEnd(FrontEnd):
    name = "test-halfplane"
    estimators = (_Halfplane,)
    supported = ("_Halfplane",)

    def compile(self, est: Any, affine: Any, margin: float) -> tuple[Linear, DecisionRule]:
        node = Linear(W=est.w[None, :], b=np.array([est.b]))
        return node, DecisionRule("threshold", 2, 1, margin)


def test_a_new_model_kind_is_one_registered_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_frontend, "_REGISTRY", list(_frontend._REGISTRY))
    schema, X, _ = _numeric_data()
    model = _Halfplane((1.0, -2.0), 0.5)
    with pytest.raises(cf.UnsupportedModelError, match="_Halfplane"):
        compile_model(model, schema)
    register_front_end(_HalfplaneFrontEnd)
    compiled = compile_model(model, schema)
    assert compiled.front_end == "test-halfplane"
    np.testing.assert_array_equal(compiled.predict(X), model.predict(X))
    assert "_Halfplane" in _frontend.supported_estimators()


def test_register_front_end_refuses_clashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_frontend, "_REGISTRY", list(_frontend._REGISTRY))

    class SameClass(_HalfplaneFrontEnd):
        name = "test-other"
        estimators = ("sklearn.tree:DecisionTreeClassifier",)

    class Nameless(FrontEnd):
        estimators = (_Halfplane,)
        supported = ("x",)

    with pytest.raises(cf.ValidationError, match=r"clashes.*sklearn-forest"):
        register_front_end(SameClass)
    with pytest.raises(cf.ValidationError, match="must declare"):
        register_front_end(Nameless)
    with pytest.raises(cf.ValidationError, match="FrontEnd subclass"):
        register_front_end(dict)  # type: ignore[arg-type]


# ----------------------------------------------------------------- model kinds
def test_model_kinds_are_one_table() -> None:
    assert KINDS == tuple(_fit.MODEL_KINDS)
    assert all(name == spec.name for name, spec in _fit.MODEL_KINDS.items())
    trees = {name for name, spec in _fit.MODEL_KINDS.items() if spec.trees}
    assert trees == {"tree", "rf", "gbm", "xgb", "lgbm"}
    with pytest.raises(cf.ValidationError, match=r"Unknown model kind 'knn'.*'lr'"):
        cf.models.make_pipeline(_numeric_data()[0], "knn")


def test_every_kind_builds_its_declared_pipeline() -> None:
    schema = _numeric_data()[0]
    for kind in ("lr", "svm", "tree", "rf", "gbm", "mlp"):
        pipe = cf.models.make_pipeline(schema, kind, random_state=3)
        scaler = pipe.named_steps["pre"].transformers[0][1]
        assert (scaler == "passthrough") == _fit.MODEL_KINDS[kind].trees, kind
    scorecard = cf.models.make_pipeline(schema, "scorecard")
    assert type(scorecard.named_steps["pre"].transformers[0][1]).__name__ == "KBinsDiscretizer"
    assert cf.models.make_pipeline(schema, "tree", random_state=3)[-1].random_state == 3


def test_a_front_end_without_its_compile_hook_is_refused():
    from counterfact.models._compile._frontend import (
        FrontEnd,
        WrapperFrontEnd,
        front_ends,
        register_front_end,
    )

    class NoCompile(FrontEnd):
        name = "no-compile"
        estimators = ("no_such_library:Model",)
        supported = ("nothing",)

    class NoWrap(WrapperFrontEnd):
        name = "no-wrap"
        estimators = ("no_such_library:Wrapper",)
        supported = ("nothing",)

    before = front_ends()
    with pytest.raises(cf.ValidationError, match=r"must implement compile\("):
        register_front_end(NoCompile)
    with pytest.raises(cf.ValidationError, match=r"must implement compile_wrapper\("):
        register_front_end(NoWrap)
    assert front_ends() == before


def test_a_refused_final_estimator_says_where_it_sits_in_the_pipeline():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=120).round(2), "b": rng.normal(size=120).round(2)})
    frame["y"] = (frame.a + frame.b > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    mlp = MLPClassifier(hidden_layer_sizes=(3,), activation="tanh", max_iter=50, random_state=0)
    model = Pipeline([("scale", StandardScaler()), ("net", mlp)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny network does not converge
        model.fit(frame[["a", "b"]], frame.y)
    with pytest.raises(cf.UnsupportedModelError, match="activation='tanh'") as err:
        cf.models.compile_model(model, data.schema)
    assert "(It is the final step ('net') of the pipeline.)" in str(err.value)
    assert "cf.UFCE" in str(err.value)
