"""Plausibility by the Local Outlier Factor (UFCE, Suffian et al., Sec. 3.3).

UFCE judges a counterfactual plausible when LOF (Breunig et al. 2000) does not
flag it as an outlier.  Choices the paper leaves open, fixed here:

* **Reference data**: by default the training rows whose *label* is the
  query's desired class (UFCE's "desired space", the pool its own search
  draws from): a counterfactual should look like a member of the class it
  claims.  ``reference="all"`` uses the whole training set, UFCE's "plausible
  space" (the original data distribution).
* **Detector**: ``sklearn.neighbors.LocalOutlierFactor(novelty=True)`` with
  ``n_neighbors=20`` (scikit-learn's default; capped at the number of
  reference rows minus one) and ``contamination="auto"``, so a row is an
  outlier when its LOF exceeds 1.5 (exact neighbours through a ball tree,
  which is much faster than the brute-force path on small queries).
* **Space**: :class:`counterfact.data.Encoder` (numeric and ordinal
  features min-max scaled over the schema's domain, categorical ones one-hot),
  Euclidean distance.

A reference set with fewer than two rows gives NaN.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..data import Encoder
from ..exceptions import ValidationError
from ..schema import Schema
from ._common import as_frame, is_result, mean_or_nan, per_query, train_parts

__all__ = ["LOFPlausibility", "lof_score", "plausibility"]

_ALL = ("__all__",)


class LOFPlausibility:
    """LOF novelty detectors over the training data, fitted lazily per desired class.

    Parameters
    ----------
    train : Dataset or DataFrame
        Training data (a DataFrame needs the target column for ``reference="target"``).
    schema : Schema, optional
        Defaults to ``train.schema``.
    n_neighbors : int
        LOF's neighbourhood size (capped at the reference size minus one).
    reference : {"target", "all"}
        Fit on the training rows labelled with the desired class, or on all rows.
    """

    def __init__(
        self,
        train: Any,
        schema: Schema | None = None,
        *,
        n_neighbors: int = 20,
        reference: Literal["target", "all"] = "target",
    ) -> None:
        if reference not in ("target", "all"):
            raise ValidationError(f"reference must be 'target' or 'all'. Got {reference!r}.")
        if not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
            raise ValidationError(f"n_neighbors must be a positive int. Got {n_neighbors!r}.")
        schema = schema if schema is not None else getattr(train, "schema", None)
        if not isinstance(schema, Schema):
            raise ValidationError(
                "LOFPlausibility needs a schema: pass a Dataset as train, or schema=."
            )
        X, y = train_parts(train, schema)
        if reference == "target" and y is None:
            raise ValidationError(
                "reference='target' needs the training labels: pass a Dataset (or a "
                "DataFrame with the target column), or use reference='all' "
                "(lof_reference='all' in evaluate)."
            )
        self.schema = schema
        self.n_neighbors = int(n_neighbors)
        self.reference = reference
        self.encoder = Encoder(schema)
        self._V = self.encoder.transform(X, validate=False)
        self._labels = None if y is None else np.array([_py(v) for v in y.tolist()], dtype=object)
        self._models: dict[Any, Any] = {}

    def _detector(self, target: Any) -> Any:
        key = _ALL if self.reference == "all" else _py(target)
        if key not in self._models:
            rows = self._V if key is _ALL else self._V[self._labels == key]
            det = None
            if len(rows) >= 2:
                from sklearn.neighbors import LocalOutlierFactor

                det = LocalOutlierFactor(
                    n_neighbors=min(self.n_neighbors, len(rows) - 1),
                    novelty=True,
                    algorithm="ball_tree",
                )
                with warnings.catch_warnings():
                    warnings.simplefilter(
                        "ignore", UserWarning
                    )  # duplicate rows in the reference set
                    det.fit(rows)
            self._models[key] = det
        return self._models[key]

    def _encode(self, counterfactuals: pd.DataFrame) -> np.ndarray:
        frame = (
            as_frame(counterfactuals, self.schema).loc[:, self.schema.names].reset_index(drop=True)
        )
        return self.encoder.transform(frame, validate=True)

    def score(
        self, counterfactuals: pd.DataFrame, target: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(lof, plausible)`` per row: the LOF value (about 1 inside a cluster,
        larger for outliers) and 1.0 for an inlier / 0.0 for an outlier
        (LOF <= 1.5, scikit-learn's ``predict``); both NaN when the reference set
        has fewer than two rows."""
        det = self._detector(target)
        n = len(counterfactuals)
        if det is None or n == 0:
            return np.full(n, np.nan), np.full(n, np.nan)
        s = det.score_samples(self._encode(counterfactuals))
        return -s, (s - det.offset_ >= 0).astype(float)

    def lof(self, counterfactuals: pd.DataFrame, target: Any = None) -> np.ndarray:
        """LOF value of each row (see :meth:`score`)."""
        return self.score(counterfactuals, target)[0]

    def plausible(self, counterfactuals: pd.DataFrame, target: Any = None) -> np.ndarray:
        """1.0 where LOF calls the row an inlier, 0.0 for an outlier, NaN when undetermined."""
        return self.score(counterfactuals, target)[1]


def _detector_for(
    schema: Schema | None, train: Any, lof: LOFPlausibility | None, n_neighbors: int, reference: str
) -> LOFPlausibility:
    if lof is not None:
        return lof
    if train is None:
        raise ValidationError(
            "LOF plausibility needs the training data: pass train= (a Dataset) or lof= (a "
            "LOFPlausibility)."
        )
    return LOFPlausibility(
        train,
        schema,
        n_neighbors=n_neighbors,
        reference=reference,  # type: ignore[arg-type]
    )


def lof_score(
    counterfactuals: Any,
    target: Any = None,
    *,
    train: Any = None,
    schema: Schema | None = None,
    lof: LOFPlausibility | None = None,
    n_neighbors: int = 20,
    reference: Literal["target", "all"] = "target",
) -> np.ndarray | pd.Series:
    """LOF value of each counterfactual (Breunig et al. 2000, as UFCE uses it); lower is
    more typical, values above 1.5 are outliers.  A result gives a Series indexed
    like ``result.counterfactuals`` (each query scored against its own target)."""
    if is_result(counterfactuals):
        res = counterfactuals
        det = _detector_for(res.schema, train, lof, n_neighbors, reference)
        cfs = res.counterfactuals
        out = pd.Series(np.full(len(cfs), np.nan), index=cfs.index, name="lof")
        if len(cfs):
            tg = res.target.reindex(cfs.index.get_level_values(0)).to_numpy()
            for t in pd.unique(tg):
                rows = np.flatnonzero(tg == t)
                out.iloc[rows] = det.lof(cfs.iloc[rows], t)
        return out
    det = _detector_for(schema, train, lof, n_neighbors, reference)
    return det.lof(counterfactuals, target)


def plausibility(
    counterfactuals: Any,
    target: Any = None,
    *,
    train: Any = None,
    schema: Schema | None = None,
    lof: LOFPlausibility | None = None,
    n_neighbors: int = 20,
    reference: Literal["target", "all"] = "target",
) -> float | pd.Series:
    """Fraction of the counterfactuals that LOF judges plausible (UFCE, Sec. 3.3).

    ``(1/k) sum_i 1[LOF(c_i) is an inlier]``: UFCE's Boolean ``z_plausible``
    averaged over the query's counterfactuals (see the module docstring for
    the reference data and the detector).  Higher is better; NaN without
    counterfactuals.  Pass ``lof=`` to reuse fitted detectors across calls.
    """
    if is_result(counterfactuals):
        res = counterfactuals
        det = _detector_for(res.schema, train, lof, n_neighbors, reference)
        return per_query(
            res,
            lambda q, _x, cf: (
                mean_or_nan(det.plausible(cf, res.target.loc[q])) if len(cf) else float("nan")
            ),
            "plausibility",
        )
    det = _detector_for(schema, train, lof, n_neighbors, reference)
    return mean_or_nan(det.plausible(counterfactuals, target))
