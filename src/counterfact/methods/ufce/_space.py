"""The array space UFCE searches in: one float per feature.

Numeric features hold their raw value; binary, categorical and ordinal
features hold the index of their category (``codes``).  Rows convert to raw
DataFrames for the model and to the :class:`~counterfact.data.Encoder`'s
scaled one-hot vectors for the KD-tree, LOF and the dependency models,
without a Python loop over rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._utils._values import _py
from ...data import Encoder
from ...schema import Schema

__all__ = ["Space"]


class Space:
    """Conversions between raw frames, code rows and encoded vectors.

    Parameters
    ----------
    schema : Schema
    encoder : Encoder
        Fixes the vector layout and scaling (``scaling="minmax"`` in UFCE).
    """

    def __init__(self, schema: Schema, encoder: Encoder) -> None:
        self.schema = schema
        self.encoder = encoder
        self.names = schema.names
        self.d = len(schema)
        self.numeric = np.array([f.is_numeric for f in schema], dtype=bool)
        self.integer = np.array([f.kind == "integer" for f in schema], dtype=bool)
        self.onehot = np.array([f.is_categorical for f in schema], dtype=bool)
        self.categories = [
            None if f.is_numeric else np.asarray(f.categories, dtype=object) for f in schema
        ]
        self._lookup = [
            None if f.is_numeric else {c: k for k, c in enumerate(f.categories)} for f in schema
        ]  # type: ignore[arg-type]
        self._starts = np.array([b.start for b in encoder.blocks], dtype=int)
        self._offset = np.zeros(self.d)
        self._scale = np.ones(self.d)
        for j, f in enumerate(schema):
            if not f.is_categorical:
                self._offset[j], self._scale[j] = encoder.scale_of(f.name)

    # ---------------------------------------------------------------- codes
    def to_codes(self, X: pd.DataFrame | pd.Series) -> np.ndarray:
        """Validated raw rows -> code rows of shape (n, d)."""
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        R = np.zeros((len(X), self.d))
        for j, name in enumerate(self.names):
            col = X[name]
            if self.numeric[j]:
                R[:, j] = pd.to_numeric(col).to_numpy(dtype=float)
            else:
                lk = self._lookup[j]
                R[:, j] = [lk[_py(v)] for v in col.tolist()]  # type: ignore[index]
        return R

    def to_frame(self, R: np.ndarray) -> pd.DataFrame:
        """Code rows -> raw DataFrame with the schema's columns and dtypes."""
        R = np.atleast_2d(R)
        data: dict[str, object] = {}
        for j, name in enumerate(self.names):
            v = R[:, j]
            if self.integer[j]:
                data[name] = np.rint(v).astype(np.int64)
            elif self.numeric[j]:
                data[name] = v.astype(float)
            else:
                labels = self.categories[j][v.astype(np.int64)]  # type: ignore[index]
                data[name] = pd.Series(labels, dtype=object)
        return pd.DataFrame(data, columns=self.names)

    # -------------------------------------------------------------- vectors
    def encode(self, R: np.ndarray, *, drop: int | None = None) -> np.ndarray:
        """Code rows -> the Encoder's vectors (optionally without feature ``drop``'s columns)."""
        R = np.atleast_2d(R)
        n = len(R)
        V = np.zeros((n, self.encoder.n_columns))
        rows = np.arange(n)
        for j in range(self.d):
            s = self._starts[j]
            if self.onehot[j]:
                V[rows, s + R[:, j].astype(np.int64)] = 1.0
            else:
                V[:, s] = (R[:, j] - self._offset[j]) / self._scale[j]
        if drop is not None:
            sl = self.encoder.block(self.names[drop])
            V = np.delete(V, np.arange(sl.start, sl.stop), axis=1)
        return V
