"""A uniform view of a fitted classifier: ``predict``, ``predict_proba``, ``classes_``.

Accepted: scikit-learn estimators and pipelines (on raw DataFrames), XGBoost /
LightGBM sklearn wrappers, anything else with ``predict_proba(DataFrame)`` and
``classes_``, and a PyTorch module plus the :class:`~counterfact.encoding.Encoder`
it was trained on (:class:`TorchModel`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import UnsupportedModelError, ValidationError
from ..schema import Schema

__all__ = ["ModelAdapter", "TorchModel", "as_adapter"]


class TorchModel:
    """A PyTorch classifier over encoded vectors, with the encoder it was trained on.

    ``module(tensor)`` must return logits of shape (n, n_classes).  ``classes``
    are the labels of the logit columns.
    """

    def __init__(self, module: Any, encoder: Any, classes: Any) -> None:
        self.module = module
        self.encoder = encoder
        self.classes_ = np.asarray(classes)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        from .._deps import import_optional

        torch = import_optional("torch", purpose="TorchModel")
        V = self.encoder.transform(X)
        self.module.eval()
        with torch.no_grad():
            logits = self.module(torch.as_tensor(V, dtype=torch.float32))
            return torch.softmax(logits, dim=1).cpu().numpy().astype(float)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


class ModelAdapter:
    """Wrap a fitted classifier for the library's use.

    Predictions go through the model's own ``predict`` (the real decision,
    including sklearn's tie-breaking); probabilities through ``predict_proba``.
    """

    def __init__(self, model: Any, schema: Schema | None = None) -> None:
        if isinstance(model, ModelAdapter):
            model = model.model
        if not hasattr(model, "predict_proba") or not hasattr(model, "classes_"):
            raise UnsupportedModelError(
                f"Unsupported model {type(model).__name__}: it needs predict_proba(DataFrame) and "
                "classes_ (a fitted scikit-learn classifier or pipeline, an XGBoost/LightGBM sklearn "
                "wrapper, or counterfact.models.TorchModel(module, encoder, classes)). Fit it first "
                "if it is a classifier."
            )
        self.model: Any = model
        self.schema = schema
        self.classes_ = np.asarray(model.classes_)

    def _frame(self, X: pd.DataFrame) -> pd.DataFrame:
        if self.schema is not None:
            return X.loc[:, self.schema.names]
        return X

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
        steps = getattr(self.model, "steps", None)
        final: Any = steps[-1][1] if steps else None
        if steps and len(steps) > 1 and hasattr(final, "predict") and hasattr(final, "predict_proba"):
            Xt = self.model[:-1].transform(self._frame(X))
            return np.asarray(final.predict(Xt)), np.asarray(final.predict_proba(Xt), dtype=float)
        return self.predict(X), self.predict_proba(X)

    def class_index(self, label: Any) -> int:
        """Column of ``label`` in ``predict_proba``."""
        hits = np.flatnonzero(self.classes_ == label)
        if hits.size == 0:
            raise ValidationError(
                f"Target class {label!r} is not a class of the model; its classes are {self.classes_.tolist()}."
            )
        return int(hits[0])


def as_adapter(model: Any, schema: Schema | None = None) -> ModelAdapter:
    """``model`` wrapped in a :class:`ModelAdapter` (idempotent)."""
    if isinstance(model, ModelAdapter) and (schema is None or model.schema is schema):
        return model
    return ModelAdapter(model, schema)
