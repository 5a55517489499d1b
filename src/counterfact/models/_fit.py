"""Standard model kinds fitted as scikit-learn pipelines on raw DataFrames.

Every pipeline has the same two steps, which the model compiler relies on:

``Pipeline([("pre", ColumnTransformer(...)), ("clf", estimator)])``

* numeric features: ``StandardScaler`` for lr / svm / mlp, ``passthrough`` for
  tree models (so tree thresholds are in raw units);
* binary and categorical features: ``OneHotEncoder(categories=[schema order],
  handle_unknown="error", sparse_output=False)``;
* ordinal features: ``OrdinalEncoder(categories=[schema order])`` (ranks 0..k-1).

Transformers are named ``num``, ``cat`` and ``ord`` and appear in that order,
each with its feature names in schema order.

Two kinds differ in their first step: ``scorecard`` bins every numeric feature
(``KBinsDiscretizer(n_bins=5, encode="onehot-dense", strategy="quantile")``) and
one-hot encodes the ordinal levels too, in front of a logistic regression (the
points of a bin are its weight); ``ebm`` is interpret's
``ExplainableBoostingClassifier`` on the raw columns (``("pre", "passthrough")``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._utils._deps import import_optional, is_available
from .._utils._values import _py
from ..data import Dataset
from ..exceptions import ValidationError
from ..schema import Schema

__all__ = [
    "KINDS",
    "MODEL_KINDS",
    "ModelKind",
    "check_params",
    "fit",
    "make_pipeline",
    "preprocessor",
]


@dataclass(frozen=True)
class ModelKind:
    """One standard model kind: everything :func:`fit` needs to build and fit it.

    Attributes
    ----------
    name : str
        The kind's name (``kind="rf"``).
    estimator : callable
        ``estimator(lib, random_state, params) -> unfitted estimator``: the
        kind's defaults overridden by ``params``; ``lib`` is the module named by
        :attr:`requires` (None when it requires none).
    trees : bool
        A tree model: numeric features pass through unscaled (thresholds in
        raw units); other kinds standardise them.
    pre : callable or None
        ``pre(schema) -> first pipeline step`` when it is not the standard
        :func:`preprocessor`.
    requires : str
        The optional module the kind needs (``"xgboost"``), imported with an
        error naming the extra to install when missing; ``""`` for none.
    label_codes : bool
        The estimator wants labels ``0..k-1``: fitted on codes, the user's
        labels kept in ``classes_``.
    quiet : tuple of (str, Warning class)
        Warnings fitting the kind raises by design, silenced (message regex,
        category).
    """

    name: str
    estimator: Callable[[Any, int | None, dict[str, Any]], Any]
    trees: bool = False
    pre: Callable[[Schema], Any] | None = None
    requires: str = ""
    label_codes: bool = False
    quiet: tuple[tuple[str, type[Warning]], ...] = ()


def preprocessor(schema: Schema, *, scale: bool = True) -> Any:
    """The ColumnTransformer described in the module docstring."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    parts: list[tuple[str, Any, list[str]]] = []
    if schema.numeric:
        parts.append(("num", StandardScaler() if scale else "passthrough", schema.numeric))
    if schema.categorical:
        cats = [list(schema[n].categories) for n in schema.categorical]  # type: ignore[arg-type]
        parts.append(
            (
                "cat",
                OneHotEncoder(categories=cats, handle_unknown="error", sparse_output=False),
                schema.categorical,
            )
        )
    if schema.ordinal:
        cats = [list(schema[n].categories) for n in schema.ordinal]  # type: ignore[arg-type]
        parts.append(("ord", OrdinalEncoder(categories=cats), schema.ordinal))
    return ColumnTransformer(
        parts, remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=True
    )


def scorecard_preprocessor(schema: Schema, *, n_bins: int = 5) -> Any:
    """The first step of the ``scorecard`` kind: quantile bins of the numbers, one-hot
    categories and ordinal levels (module docstring)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder

    parts: list[tuple[str, Any, list[str]]] = []
    if schema.numeric:
        bins: dict[str, Any] = {"n_bins": n_bins, "encode": "onehot-dense", "strategy": "quantile"}
        if "quantile_method" in KBinsDiscretizer().get_params():  # scikit-learn >= 1.7
            bins["quantile_method"] = "averaged_inverted_cdf"
        parts.append(("num", KBinsDiscretizer(**bins), schema.numeric))
    for name, cols in (("cat", schema.categorical), ("ord", schema.ordinal)):
        if cols:
            cats = [list(schema[n].categories) for n in cols]  # type: ignore[arg-type]
            parts.append(
                (
                    name,
                    OneHotEncoder(categories=cats, handle_unknown="error", sparse_output=False),
                    cols,
                )
            )
    return ColumnTransformer(
        parts, remainder="drop", sparse_threshold=0.0, verbose_feature_names_out=True
    )


def _logistic(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(**{"max_iter": 2000, **params})


def _svm(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.svm import SVC

    return SVC(**{"kernel": "linear", "probability": True, "random_state": random_state, **params})


def _tree(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.tree import DecisionTreeClassifier

    return DecisionTreeClassifier(**{"max_depth": 8, "random_state": random_state, **params})


def _forest(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.ensemble import RandomForestClassifier

    defaults = {"n_estimators": 100, "max_depth": 8, "random_state": random_state, "n_jobs": 1}
    return RandomForestClassifier(**{**defaults, **params})


def _boosting(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.ensemble import GradientBoostingClassifier

    defaults = {"n_estimators": 100, "max_depth": 3, "random_state": random_state}
    return GradientBoostingClassifier(**{**defaults, **params})


def _mlp(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    from sklearn.neural_network import MLPClassifier

    defaults = {"hidden_layer_sizes": (10, 10), "max_iter": 1000, "random_state": random_state}
    return MLPClassifier(**{**defaults, **params})


def _xgboost(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    defaults = {"n_estimators": 100, "max_depth": 4, "random_state": random_state or 0}
    return lib.XGBClassifier(**{**defaults, "n_jobs": 1, **params})


def _lightgbm(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    defaults = {"n_estimators": 100, "num_leaves": 15, "random_state": random_state or 0}
    return lib.LGBMClassifier(**{**defaults, "n_jobs": 1, "verbose": -1, **params})


def _ebm(lib: Any, random_state: int | None, params: dict[str, Any]) -> Any:
    return lib.ExplainableBoostingClassifier(
        **{"random_state": random_state, "n_jobs": 1, **params}
    )


#: scikit-learn 1.9 deprecates SVC(probability=True) (removed in 1.11, hence the <1.11
#: pin); its replacement, CalibratedClassifierCV, changes the decision rule to an argmax
#: of calibrated probabilities, which the compiler does not encode. The "svm" kind keeps
#: SVC's own decision function until that is supported.
_SVC_PROBABILITY = (".*`probability` parameter was deprecated", FutureWarning)
#: quantile bins of a feature with few distinct values collapse; KBinsDiscretizer says so
_NARROW_BINS = (".*Bins whose width are too small", UserWarning)

#: the standard model kinds, by name (module docstring): one entry per kind
MODEL_KINDS: dict[str, ModelKind] = {
    k.name: k
    for k in (
        ModelKind("lr", _logistic),
        ModelKind("svm", _svm, quiet=(_SVC_PROBABILITY,)),
        ModelKind("tree", _tree, trees=True),
        ModelKind("rf", _forest, trees=True),
        ModelKind("gbm", _boosting, trees=True),
        ModelKind("mlp", _mlp),
        ModelKind("xgb", _xgboost, trees=True, requires="xgboost", label_codes=True),
        ModelKind("lgbm", _lightgbm, trees=True, requires="lightgbm", label_codes=True),
        ModelKind("scorecard", _logistic, pre=scorecard_preprocessor, quiet=(_NARROW_BINS,)),
        # the EBM bins the raw columns itself
        ModelKind("ebm", _ebm, pre=lambda schema: "passthrough", requires="interpret.glassbox"),
    )
}

#: the names of the standard model kinds (the ``kind`` choices of fit, the CLI and the server)
KINDS: tuple[str, ...] = tuple(MODEL_KINDS)


def _kind(kind: str) -> ModelKind:
    """The declaration of ``kind``, or the error naming the known kinds."""
    found = MODEL_KINDS.get(kind) if isinstance(kind, str) else None
    if found is None:
        raise ValidationError(f"Unknown model kind {kind!r}. Known kinds: {list(KINDS)}.")
    return found


def check_params(kind: str, params: dict[str, Any]) -> None:
    """Check ``params`` for the estimator of ``kind`` without fitting it: names and, for
    scikit-learn's estimators, values (its own parameter validation); a bad one is a
    :class:`ValidationError`. A kind whose package is missing is not checked."""
    spec = _kind(kind)
    if spec.requires and not is_available(spec.requires):
        return
    lib = import_optional(spec.requires) if spec.requires else None
    try:
        est = spec.estimator(lib, 0, dict(params))
        if hasattr(est, "_parameter_constraints"):  # scikit-learn's own estimators
            est._validate_params()
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"model kind {kind!r}: {' '.join(str(exc).split())}") from None


def make_pipeline(schema: Schema, kind: str, *, random_state: int | None = 0, **params: Any) -> Any:
    """An unfitted pipeline of the given kind for ``schema``."""
    from sklearn.pipeline import Pipeline

    spec = _kind(kind)
    lib = None
    if spec.requires:
        lib = import_optional(spec.requires, purpose=f"model kind {spec.name!r}")
    pre = spec.pre(schema) if spec.pre is not None else preprocessor(schema, scale=not spec.trees)
    return Pipeline([("pre", pre), ("clf", spec.estimator(lib, random_state, params))])


def fit(train: Dataset, kind: str, *, random_state: int | None = 0, **params: Any) -> Any:
    """Fit a standard model on a :class:`~counterfact.data.Dataset`.

    Parameters
    ----------
    train : Dataset
    kind : {"lr", "svm", "tree", "rf", "gbm", "mlp", "xgb", "lgbm", "scorecard", "ebm"}
        Defaults: LogisticRegression; linear SVC with probabilities; tree of
        depth 8; forest of 100 trees of depth 8; gradient boosting of 100
        depth-3 trees; MLP(10, 10) with ReLU; XGBoost / LightGBM when installed;
        a scorecard (five quantile bins per number, one-hot categories and
        levels, LogisticRegression); interpret's ExplainableBoostingClassifier
        with its defaults (``pip install "counterfact[ebm]"``).
    random_state : int, optional
        Seed of the estimator.
    **params
        Override the estimator's parameters (``max_depth=None``).

    Returns
    -------
    sklearn.pipeline.Pipeline
        Fitted on raw DataFrames with the schema's columns.
    """
    if not isinstance(train, Dataset):
        raise ValidationError(
            f"models.fit needs a counterfact Dataset. Got {type(train).__name__}."
        )
    spec = _kind(kind)
    pipe = make_pipeline(train.schema, kind, random_state=random_state, **params)
    y = train.y
    if spec.label_codes:
        # these wrappers want labels 0..k-1; keep the user's labels in classes_
        classes = np.array(train.classes)
        codes = label_codes(classes, y.to_numpy())
        pipe.fit(train.X, codes)
        return _Relabelled(pipe, classes)
    with warnings.catch_warnings():
        for message, category in spec.quiet:
            warnings.filterwarnings("ignore", message=message, category=category)
        pipe.fit(train.X, y)
    return pipe


def label_codes(classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each label's position among ``classes`` (in their order, sorted or not)."""
    position = {_py(c): k for k, c in enumerate(classes)}
    return np.array([position[_py(v)] for v in labels], dtype=np.int64)


class _Relabelled:
    """A pipeline fitted on label codes, exposing the original labels.

    Cloneable as a scikit-learn estimator (``get_params``/``set_params``): ``clone`` gives
    an unfitted copy whose :meth:`fit` codes the labels again (``cf.models.retrained``
    refits it so)."""

    def __init__(self, pipeline: Any, classes: Any) -> None:
        self.pipeline = pipeline
        self.classes = classes
        self.classes_ = np.asarray(classes)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("classes", state.get("classes_"))  # one pickled before ``classes``
        self.__dict__.update(state)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        out = {"pipeline": self.pipeline, "classes": self.classes}
        if deep:
            inner = self.pipeline.get_params(deep=True).items()
            out.update({f"pipeline__{k}": v for k, v in inner})
        return out

    def set_params(self, **params: Any) -> _Relabelled:
        """Set ``pipeline`` and ``classes`` first, then the new pipeline's own parameters."""
        inner = {k[len("pipeline__") :]: v for k, v in params.items() if k.startswith("pipeline__")}
        for k, v in params.items():
            if not k.startswith("pipeline__"):
                setattr(self, k, v)
        if inner:
            self.pipeline.set_params(**inner)
        return self

    def fit(self, X: Any, y: Any) -> _Relabelled:
        """Fit the pipeline on the codes of ``y`` among :attr:`classes`."""
        classes = np.asarray(self.classes)
        labels = np.asarray(y)
        unknown = sorted({_py(v) for v in labels} - {_py(c) for c in classes}, key=str)
        if unknown:
            raise ValidationError(
                f"The labels {unknown} are not among the model's classes {classes.tolist()}."
            )
        self.pipeline.fit(X, label_codes(classes, labels))
        self.classes_ = classes
        return self

    @property
    def named_steps(self) -> Any:
        return self.pipeline.named_steps

    @property
    def steps(self) -> Any:
        return self.pipeline.steps

    def predict_proba(self, X: Any) -> Any:
        return self.pipeline.predict_proba(X)

    def predict(self, X: Any) -> Any:
        return self.classes_[self.pipeline.predict(X).astype(int)]
