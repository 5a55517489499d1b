"""Dependency models of Double_F / Triple_F (UFCE Sec. 4.4, Algorithm 4 lines 8-9).

One model per dependent feature, predicting it from every other feature
(encoded by the :class:`~counterfact.data.Encoder`): a regressor for a
numeric feature, a classifier for a discrete one.  ``UFCE.fit`` trains them
all (:meth:`DependencyModels.ensure`); a model still missing is trained the
first time a search needs it and cached for every later query.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._space import Space

__all__ = ["DependencyModels"]


class DependencyModels:
    """Cached per-feature predictors (trained by ``ensure`` or on first use).

    Parameters
    ----------
    space : Space
    R : ndarray of shape (n, d)
        Training rows as codes.
    regressor, classifier : estimator or None
        Unfitted scikit-learn estimators, cloned per feature.  Defaults:
        ``Ridge(alpha=1.0)`` and ``LogisticRegression(max_iter=1000)``.
    """

    def __init__(
        self, space: Space, R: np.ndarray, regressor: Any = None, classifier: Any = None
    ) -> None:
        self.space = space
        self.R = R
        self.regressor = regressor
        self.classifier = classifier
        self.models: dict[int, Any] = {}
        #: how many models were trained (each feature at most once)
        self.n_fits = 0

    def _make(self, j: int) -> Any:
        from sklearn.base import clone
        from sklearn.dummy import DummyClassifier, DummyRegressor
        from sklearn.linear_model import LogisticRegression, Ridge

        y = self.R[:, j]
        discrete = not self.space.numeric[j]
        if np.unique(y).size < 2:
            return DummyClassifier(strategy="most_frequent") if discrete else DummyRegressor()
        if discrete:
            return (
                clone(self.classifier)
                if self.classifier is not None
                else LogisticRegression(max_iter=1000)
            )
        return clone(self.regressor) if self.regressor is not None else Ridge(alpha=1.0)

    def ensure(self, features: Any) -> None:
        """Train the models of ``features`` (indices) that are not trained yet."""
        for j in features:
            self.model(int(j))

    def model(self, j: int) -> Any:
        """The fitted model of feature ``j`` (trained now if needed)."""
        m = self.models.get(j)
        if m is None:
            m = self._make(j)
            y = self.R[:, j]
            if not self.space.numeric[j]:
                y = y.astype(np.int64)
            m.fit(self.space.encode(self.R, drop=j), y)
            self.models[j] = m
            self.n_fits += 1
        return m

    def predict(self, j: int, Z: np.ndarray) -> np.ndarray:
        """Feature ``j`` predicted from the other features of code rows ``Z``
        (raw value for numeric features, category code for discrete ones)."""
        out = self.model(j).predict(self.space.encode(Z, drop=j))
        return np.asarray(out, dtype=float).reshape(-1)
