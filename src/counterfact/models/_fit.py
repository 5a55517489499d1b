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

from typing import Any

from .._utils._deps import import_optional
from ..data import Dataset
from ..exceptions import ValidationError
from ..schema import Schema

__all__ = ["KINDS", "fit", "make_pipeline", "preprocessor"]

KINDS = ("lr", "svm", "tree", "rf", "gbm", "mlp", "xgb", "lgbm", "scorecard", "ebm")
_TREE_KINDS = {"tree", "rf", "gbm", "xgb", "lgbm"}


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


def _estimator(kind: str, random_state: int | None, params: dict[str, Any], n_classes: int) -> Any:
    from sklearn import ensemble, linear_model, neural_network, svm, tree

    if kind in ("lr", "scorecard"):
        return linear_model.LogisticRegression(**{"max_iter": 2000, **params})
    if kind == "svm":
        return svm.SVC(
            **{"kernel": "linear", "probability": True, "random_state": random_state, **params}
        )
    if kind == "tree":
        return tree.DecisionTreeClassifier(
            **{"max_depth": 8, "random_state": random_state, **params}
        )
    if kind == "rf":
        return ensemble.RandomForestClassifier(
            **{
                "n_estimators": 100,
                "max_depth": 8,
                "random_state": random_state,
                "n_jobs": 1,
                **params,
            }
        )
    if kind == "gbm":
        return ensemble.GradientBoostingClassifier(
            **{"n_estimators": 100, "max_depth": 3, "random_state": random_state, **params}
        )
    if kind == "mlp":
        return neural_network.MLPClassifier(
            **{
                "hidden_layer_sizes": (10, 10),
                "max_iter": 1000,
                "random_state": random_state,
                **params,
            }
        )
    if kind == "xgb":
        xgb = import_optional("xgboost", purpose="model kind 'xgb'")
        return xgb.XGBClassifier(
            **{
                "n_estimators": 100,
                "max_depth": 4,
                "random_state": random_state or 0,
                "n_jobs": 1,
                **params,
            }
        )
    if kind == "ebm":
        glassbox = import_optional("interpret.glassbox", purpose="model kind 'ebm'")
        return glassbox.ExplainableBoostingClassifier(
            **{"random_state": random_state, "n_jobs": 1, **params}
        )
    if kind == "lgbm":
        lgb = import_optional("lightgbm", purpose="model kind 'lgbm'")
        return lgb.LGBMClassifier(
            **{
                "n_estimators": 100,
                "num_leaves": 15,
                "random_state": random_state or 0,
                "n_jobs": 1,
                "verbose": -1,
                **params,
            }
        )
    raise ValidationError(f"Unknown model kind {kind!r}. Known kinds: {list(KINDS)}.")


def make_pipeline(schema: Schema, kind: str, *, random_state: int | None = 0, **params: Any) -> Any:
    """An unfitted pipeline of the given kind for ``schema``."""
    from sklearn.pipeline import Pipeline

    if kind not in KINDS:
        raise ValidationError(f"Unknown model kind {kind!r}. Known kinds: {list(KINDS)}.")
    n_classes = len(schema.classes or (0, 1))
    if kind == "scorecard":
        pre: Any = scorecard_preprocessor(schema)
    elif kind == "ebm":
        pre = "passthrough"  # the EBM bins the raw columns itself
    else:
        pre = preprocessor(schema, scale=kind not in _TREE_KINDS)
    return Pipeline([("pre", pre), ("clf", _estimator(kind, random_state, params, n_classes))])


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
    pipe = make_pipeline(train.schema, kind, random_state=random_state, **params)
    y = train.y
    if kind in ("xgb", "lgbm"):
        # these wrappers want labels 0..k-1; keep the user's labels in classes_
        import numpy as np

        classes = np.array(train.classes)
        codes = np.searchsorted(classes, y.to_numpy())
        pipe.fit(train.X, codes)
        return _Relabelled(pipe, classes)
    if kind == "svm":
        import warnings

        with warnings.catch_warnings():
            # scikit-learn 1.9 deprecates SVC(probability=True) (removed in 1.11, hence the
            # <1.11 pin); its replacement, CalibratedClassifierCV, changes the decision rule
            # to an argmax of calibrated probabilities, which the compiler does not encode.
            # The "svm" kind keeps SVC's own decision function until that is supported.
            warnings.filterwarnings(
                "ignore", message=".*`probability` parameter was deprecated", category=FutureWarning
            )
            pipe.fit(train.X, y)
        return pipe
    if kind == "scorecard":
        import warnings

        with warnings.catch_warnings():
            # quantile bins of a feature with few distinct values collapse; KBinsDiscretizer says so
            warnings.filterwarnings(
                "ignore", message=".*Bins whose width are too small", category=UserWarning
            )
            pipe.fit(train.X, y)
        return pipe
    pipe.fit(train.X, y)
    return pipe


class _Relabelled:
    """A pipeline fitted on label codes, exposing the original labels."""

    def __init__(self, pipeline: Any, classes: Any) -> None:
        self.pipeline = pipeline
        self.classes_ = classes

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
