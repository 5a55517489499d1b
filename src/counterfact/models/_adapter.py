"""A uniform view of a fitted classifier: ``predict``, ``predict_proba``, ``classes_``.

Accepted: scikit-learn estimators and pipelines (on raw DataFrames), XGBoost /
LightGBM sklearn wrappers, anything else with ``predict_proba(DataFrame)`` and
``classes_``, and a PyTorch module plus the :class:`~counterfact.data.Encoder`
it was trained on (:class:`TorchModel`).

Bare XGBoost / LightGBM models with native categorical features read their
category columns as pandas categories: :func:`native_categories` reads which
ones (and over which categories) from the fitted model, and the adapter casts
them (:func:`booster_category_frame`).  The model compiler
(:mod:`counterfact.models._compile`) sits above this module and reads the same
facts; this module imports nothing of it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .._utils._deps import import_optional
from ..exceptions import UnsupportedModelError, ValidationError
from ..schema import Schema
from ._classref import ClassRef, instance_of

__all__ = [
    "TORCH_OUTPUTS",
    "ModelAdapter",
    "TorchModel",
    "as_adapter",
    "booster_category_frame",
    "check_model",
    "native_categories",
]


#: what a :class:`TorchModel`'s module returns (``"auto"``: read from an ``nn.Sequential``)
TORCH_OUTPUTS = ("auto", "logits", "probabilities")


class TorchModel:
    """A PyTorch classifier over encoded vectors, with the encoder it was trained on.

    Parameters
    ----------
    module : torch.nn.Module
        Maps the encoded rows (``encoder.transform(X)`` as a float32 tensor) to one
        score per class, shape ``(n, n_classes)``, in ``classes`` order; a binary
        model may return one score, shape ``(n, 1)``, for ``classes[1]``.
    encoder : Encoder
        The :class:`~counterfact.data.Encoder` the module was trained on (one-hot
        categories, scaled numeric and ordinal features).
    classes : array-like
        The labels of the module's outputs.
    output : {"auto", "logits", "probabilities"}
        What the module returns: logits (the probabilities are their softmax, or the
        sigmoid of a single score), or probabilities (a module ending in
        ``nn.Softmax``, or ``nn.Sigmoid`` on a single score).  ``"auto"``:
        probabilities when the module is an ``nn.Sequential`` whose last module is
        ``nn.Softmax`` or ``nn.Sigmoid``, logits otherwise.

    The exact methods compile an ``nn.Sequential`` of ``Linear`` and ``ReLU``
    (``docs/models.md``); other modules are explained by the model-agnostic methods.
    """

    def __init__(self, module: Any, encoder: Any, classes: Any, *, output: str = "auto") -> None:
        if output not in TORCH_OUTPUTS:
            raise ValidationError(
                f"TorchModel output must be one of {list(TORCH_OUTPUTS)}. Got {output!r}."
            )
        self.module = module
        self.encoder = encoder
        self.classes_ = np.asarray(classes)
        self.output = _torch_output(module) if output == "auto" else output

    def _forward(self, X: pd.DataFrame) -> Any:
        """The module's output tensor on the raw rows ``X`` (eval mode, no gradient)."""
        torch = import_optional("torch", purpose="TorchModel")
        V = self.encoder.transform(X)
        self.module.eval()
        with torch.no_grad():
            return self.module(torch.as_tensor(V, dtype=torch.float32))

    def outputs(self, X: pd.DataFrame) -> np.ndarray:
        """The module's outputs on the raw rows ``X`` (eval mode), shape ``(n, k)``."""
        return self._forward(X).cpu().numpy().astype(float)

    def probabilities(self, out: Any) -> Any:
        """Class probabilities (a tensor ``(n, n_classes)``) from the module's outputs
        ``out`` (a tensor ``(n, k)``), as :attr:`output` reads them."""
        torch = import_optional("torch", purpose="TorchModel")
        self._check_width(out)
        if out.shape[1] == 1:
            p = out[:, 0] if self.output == "probabilities" else torch.sigmoid(out[:, 0])
            return torch.stack([1 - p, p], dim=1)
        return out if self.output == "probabilities" else torch.softmax(out, dim=1)

    def log_probabilities(self, out: Any) -> Any:
        """The logarithm of :meth:`probabilities`, computed stably from logits."""
        torch = import_optional("torch", purpose="TorchModel")
        if self.output == "probabilities":
            return torch.log(self.probabilities(out).clamp_min(torch.finfo(out.dtype).tiny))
        self._check_width(out)
        if out.shape[1] == 1:
            logsigmoid = torch.nn.functional.logsigmoid
            return torch.stack([logsigmoid(-out[:, 0]), logsigmoid(out[:, 0])], dim=1)
        return torch.log_softmax(out, dim=1)

    def _check_width(self, out: Any) -> None:
        """The error for module outputs that are not one per class (or one, binary)."""
        k = len(self.classes_)
        if out.ndim != 2 or (out.shape[1] != k and not (k == 2 and out.shape[1] == 1)):
            raise ValidationError(
                f"TorchModel: the module returned outputs of shape {tuple(out.shape)}; expected "
                f"(n, {k}), one per class in {self.classes_.tolist()}"
                + (", or (n, 1) for classes[1]." if k == 2 else ".")
            )

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order."""
        return self.probabilities(self._forward(X)).cpu().numpy().astype(float)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """The class of the largest probability (the first on ties)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def _torch_output(module: Any) -> str:
    """``"probabilities"`` for an ``nn.Sequential`` ending in ``nn.Softmax`` or
    ``nn.Sigmoid``, else ``"logits"``."""
    torch = import_optional("torch", purpose="TorchModel")
    nn = torch.nn
    if isinstance(module, nn.Sequential) and len(module) > 0:
        last = module[-1]
        while isinstance(last, nn.Sequential) and len(last) > 0:
            last = last[-1]
        if isinstance(last, nn.Softmax | nn.Sigmoid):
            return "probabilities"
    return "logits"


class ModelAdapter:
    """Wrap a fitted classifier for the library's use.

    Predictions go through the model's own ``predict`` (the real decision,
    including sklearn's tie-breaking); probabilities through ``predict_proba``.
    """

    def __init__(self, model: Any, schema: Schema | None = None) -> None:
        if isinstance(model, ModelAdapter):
            model = model.model
        classes = getattr(model, "classes_", None)
        if classes is None:  # a wrapper that keeps its fitted classifier (optbinning's Scorecard)
            classes = getattr(getattr(model, "estimator_", None), "classes_", None)
        if not hasattr(model, "predict_proba") or classes is None:
            raise UnsupportedModelError(
                f"Unsupported model {type(model).__name__}: it needs predict_proba(DataFrame) and "
                "classes_ (a fitted scikit-learn classifier or pipeline, an XGBoost/LightGBM "
                "sklearn wrapper, or counterfact.models.TorchModel(module, encoder, classes)). "
                "Fit it first if it is a classifier."
            )
        self.model: Any = model
        self.schema = schema
        self.classes_ = np.asarray(classes)
        self._columns: list[str] | None = None if schema is None else list(schema.names)
        seen = _fitted_columns(model)
        if schema is not None and seen is not None and sorted(seen) == sorted(schema.names):
            self._columns = seen  # the model's own column order

    def _frame(self, X: pd.DataFrame) -> pd.DataFrame:
        """``X`` as the model reads it: the model's own column order, and for a bare
        XGBoost / LightGBM model with native categorical splits, its category columns
        as ``pd.Categorical`` over the model's own categories."""
        if self._columns is not None:
            X = X.loc[:, self._columns]
        return booster_category_frame(self.model, X)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """Class probabilities, columns in ``classes_`` order."""
        if len(X) == 0:
            return np.zeros((0, len(self.classes_)))
        return np.asarray(self.model.predict_proba(self._frame(X)), dtype=float)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """The model's own decision."""
        if len(X) == 0:
            return np.zeros(0, dtype=self.classes_.dtype)
        if hasattr(self.model, "predict"):
            return np.asarray(self.model.predict(self._frame(X)))
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_with_proba(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """``(predict(X), predict_proba(X))`` with the preprocessing run once.

        For a scikit-learn ``Pipeline`` the transform steps are applied once and
        the final estimator's own ``predict`` and ``predict_proba`` both read
        the result -- exactly what ``Pipeline.predict`` / ``predict_proba`` do
        internally, so the answers are the model's own (the decision is still
        the estimator's ``predict``, never an argmax of probabilities).  Other
        models: the two calls.
        """
        if len(X) == 0:
            return np.zeros(0, dtype=self.classes_.dtype), np.zeros((0, len(self.classes_)))
        from sklearn.pipeline import Pipeline

        # only a real Pipeline: wrappers that expose ``steps`` (such as the
        # relabelling one of ``models.fit`` for xgboost/lightgbm) neither slice
        # nor answer in the final estimator's labels
        steps = self.model.steps if isinstance(self.model, Pipeline) else None
        final: Any = steps[-1][1] if steps else None
        if (
            steps
            and len(steps) > 1
            and hasattr(final, "predict")
            and hasattr(final, "predict_proba")
        ):
            from sklearn.exceptions import NotFittedError

            try:
                Xt = self.model[:-1].transform(self._frame(X))
            except (
                NotFittedError
            ):  # a step scikit-learn cannot tell is fitted (optbinning's BinningProcess)
                return self.predict(X), self.predict_proba(X)
            proba = np.asarray(final.predict_proba(Xt), dtype=float)
            if _predict_is_argmax(final):
                return np.asarray(final.classes_).take(np.argmax(proba, axis=1), axis=0), proba
            return np.asarray(final.predict(Xt)), proba
        if _predict_is_argmax(self.model):  # a bare forest or tree: one pass gives both
            proba = self.predict_proba(X)
            return np.asarray(self.model.classes_).take(np.argmax(proba, axis=1), axis=0), proba
        return self.predict(X), self.predict_proba(X)

    def class_index(self, label: Any) -> int:
        """Column of ``label`` in ``predict_proba``."""
        hits = np.flatnonzero(self.classes_ == label)
        if hits.size == 0:
            raise ValidationError(
                f"Target class {label!r} is not a class of the model; its classes are "
                f"{self.classes_.tolist()}."
            )
        return int(hits[0])


def _predict_is_argmax(estimator: Any) -> bool:
    """True for scikit-learn's single-output tree classifiers (exactly these classes,
    not subclasses, which may override ``predict``): their ``predict`` is, in
    scikit-learn's own code, ``classes_.take(argmax(predict_proba))``, so one
    probability pass gives both answers, identically."""
    try:
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:  # pragma: no cover - scikit-learn is a core dependency
        return False
    kinds = (RandomForestClassifier, ExtraTreesClassifier, DecisionTreeClassifier)
    return type(estimator) in kinds and getattr(estimator, "n_outputs_", 1) == 1


def native_categories(est: Any) -> dict[int, list[Any]] | None:
    """Input position -> the model's category list, for XGBoost / LightGBM models with
    native categorical features (pandas ``category`` columns); None if there are none."""
    reader = _category_reader(est)
    return None if reader is None else reader(est)


def _xgboost_categories(est: Any) -> dict[int, list[Any]] | None:
    """:func:`native_categories` of a fitted ``XGBClassifier``."""
    booster = est.get_booster()
    types = list(booster.feature_types or [])
    if "c" not in types:
        return None
    try:
        cats = booster.get_categories(export_to_arrow=True).to_arrow()
    except (AttributeError, TypeError, ValueError):
        raise UnsupportedModelError(
            "XGBClassifier with categorical features: this XGBoost version does not store the "
            "category values in the model (XGBoost >= 3.1 does); one-hot encode them instead."
        ) from None
    out: dict[int, list[Any]] = {}
    for j, (_, arr) in enumerate(cats):
        if types[j] == "c":
            out[j] = [] if arr is None else list(arr.to_pylist())
    return out


def _category_reader(est: Any) -> Callable[[Any], dict[int, list[Any]] | None] | None:
    """How to read the native categories of ``est`` (None: a model without them)."""
    return next((read for ref, read in _CATEGORY_READERS if instance_of(est, ref)), None)


#: a LightGBM booster -> its native categories: reading them dumps the whole model
#: (0.3 s for 300 trees), and the adapter asks on every prediction
_LGBM_CATEGORIES: weakref.WeakKeyDictionary[Any, dict[int, list[Any]] | None] = (
    weakref.WeakKeyDictionary()
)


def _lightgbm_categories(booster: Any) -> dict[int, list[Any]] | None:
    """:func:`native_categories` of a fitted LightGBM booster, read once per booster."""
    try:
        if booster in _LGBM_CATEGORIES:
            return _LGBM_CATEGORIES[booster]
    except TypeError:  # not weakly referenceable: read it each time
        return _read_lightgbm_categories(booster)
    found = _read_lightgbm_categories(booster)
    _LGBM_CATEGORIES[booster] = found
    return found


def _read_lightgbm_categories(booster: Any) -> dict[int, list[Any]] | None:
    """The booster's native categories, read from its dump (see :func:`native_categories`)."""
    pandas_cats = getattr(booster, "pandas_categorical", None) or []
    infos = booster.dump_model().get("feature_infos", {})
    names = booster.feature_name()
    cat_pos = [
        j for j, n in enumerate(names) if isinstance(infos.get(n), dict) and infos[n].get("values")
    ]
    if not cat_pos:
        return None
    if len(cat_pos) != len(pandas_cats):
        raise UnsupportedModelError(
            "LGBMClassifier with categorical features given as integer codes "
            "(categorical_feature=...) is not supported; fit it on pandas 'category' columns, or "
            "one-hot encode them."
        )
    return {j: list(c) for j, c in zip(cat_pos, pandas_cats, strict=True)}


#: the models with native categorical features -> how to read their categories
_CATEGORY_READERS: tuple[tuple[ClassRef, Callable[[Any], dict[int, list[Any]] | None]], ...] = (
    ("xgboost:XGBClassifier", _xgboost_categories),
    ("lightgbm:LGBMClassifier", lambda est: _lightgbm_categories(est.booster_)),
)


def booster_category_frame(est: Any, X: Any) -> Any:
    """``X`` with the columns a bare XGBoost / LightGBM model ``est`` reads as pandas
    categories cast to ``pd.Categorical`` over the model's own categories (other
    models, and ``X`` that is not a DataFrame: ``X`` itself).

    Such models (``enable_categorical=True`` / fitted on ``category`` columns) refuse
    the object columns counterfact passes around.
    """
    if _category_reader(est) is None or not isinstance(X, pd.DataFrame):
        return X
    cats = native_categories(est)
    if not cats:
        return X
    names = list(getattr(est, "feature_names_in_", X.columns))
    out = X.copy()
    for j, values in cats.items():
        name = str(names[j])
        if name in out.columns and not isinstance(out[name].dtype, pd.CategoricalDtype):
            out[name] = pd.Categorical(out[name], categories=values)
    return out


def as_adapter(model: Any, schema: Schema | None = None) -> ModelAdapter:
    """``model`` wrapped in a :class:`ModelAdapter` (idempotent)."""
    if isinstance(model, ModelAdapter) and (schema is None or model.schema is schema):
        return model
    return ModelAdapter(model, schema)


def _fitted_columns(model: Any) -> list[str] | None:
    """The column names a scikit-learn style model was fitted on, when it records them."""
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        return None
    try:
        return [str(n) for n in names]
    except TypeError:
        return None


def check_model(adapter: ModelAdapter, data: Any, *, owner: str = "fit", n_rows: int = 5) -> None:
    """Check that a model fits its training data; raise a clear error if not.

    Checks, in order: the columns the model was fitted on (scikit-learn's
    ``feature_names_in_``, when recorded) are the data's feature columns;
    ``predict_proba`` works on a few training rows and gives one column per
    class; every class present in the data is a class of the model (the model
    may know more: the data can be a sample without some class).

    Raises
    ------
    ValidationError
        Naming the mismatch and how to fix it.
    """
    schema = data.schema
    names = list(schema.names)
    seen = _fitted_columns(adapter.model)
    if seen is not None and sorted(seen) != sorted(names):
        missing = [n for n in seen if n not in names]
        extra = [n for n in names if n not in seen]
        parts = []
        if missing:
            parts.append(f"the model needs columns the data lacks: {missing}")
        if extra:
            parts.append(f"the data has feature columns the model was not fitted on: {extra}")
        raise ValidationError(
            f"{owner}: the model was fitted on other columns than the data's features ("
            + "; ".join(parts)
            + "). Fit the model on data.X (the Dataset's feature columns), or build the Dataset "
            "from the frame the model was trained on (cf.Dataset.from_frame(frame, target=...))."
        )
    rows = data.X.iloc[: max(1, n_rows)]
    try:
        proba = np.asarray(adapter.model.predict_proba(adapter._frame(rows)), dtype=float)
    except Exception as exc:
        raise ValidationError(
            f"{owner}: the model's predict_proba fails on {len(rows)} training rows "
            f"({type(exc).__name__}: {exc}). The model must accept a DataFrame with the data's "
            f"feature columns {names}; wrap its preprocessing in a scikit-learn Pipeline fitted "
            "on data.X."
        ) from None
    k = len(adapter.classes_)
    if proba.ndim != 2 or proba.shape != (len(rows), k):
        raise ValidationError(
            f"{owner}: the model's predict_proba returned shape {proba.shape} for {len(rows)} "
            f"rows; expected ({len(rows)}, {k}), one column per class in classes_ "
            f"{adapter.classes_.tolist()}."
        )
    model_classes = [_plain(c) for c in adapter.classes_.tolist()]
    data_classes = sorted({_plain(c) for c in pd.unique(data.y).tolist()}, key=repr)
    absent = [c for c in data_classes if c not in model_classes]
    if absent:
        raise ValidationError(
            f"{owner}: the model's classes {model_classes} are not the data's classes "
            f"{data_classes} (the data has {absent}, which the model does not know). Fit the model "
            "on this Dataset's target column (data.y), with the same label type (e.g. 0/1, not "
            "'0'/'1')."
        )


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
