"""Raw rows <-> numeric vectors for methods that search in vector space.

:class:`Encoder` maps a raw DataFrame to a float matrix: numeric features
scaled (min-max to [0, 1] over the schema's domain by default, or standardised,
or left raw), ordinal features as their rank (scaled like numerics),
binary/categorical features one-hot.  :meth:`Encoder.inverse_transform` always
yields a coherent raw row: exactly one category per group (the arg-max),
integers rounded, values clipped to the domain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..schema import Schema

__all__ = ["Encoder"]

Scaling = Literal["minmax", "standard", "none"]


@dataclass(frozen=True)
class _Block:
    name: str
    start: int
    stop: int


class Encoder:
    """Vector encoding of a schema.

    Parameters
    ----------
    schema : Schema
    scaling : {"minmax", "standard", "none"}
        ``minmax`` maps each numeric/ordinal feature's domain to [0, 1];
        ``standard`` needs :meth:`fit` (mean and standard deviation);
        ``none`` keeps raw values (ordinals as ranks).
    """

    def __init__(self, schema: Schema, *, scaling: Scaling = "minmax") -> None:
        if scaling not in ("minmax", "standard", "none"):
            raise ValidationError(
                f"Encoder scaling must be 'minmax', 'standard' or 'none'. Got {scaling!r}."
            )
        self.schema = schema
        self.scaling = scaling
        blocks = []
        pos = 0
        names: list[str] = []
        for f in schema:
            if f.is_categorical:
                k = len(f.categories)  # type: ignore[arg-type]
                names += [f"{f.name}={c}" for c in f.categories]  # type: ignore[union-attr]
            else:
                k = 1
                names.append(f.name)
            blocks.append(_Block(f.name, pos, pos + k))
            pos += k
        self.blocks: tuple[_Block, ...] = tuple(blocks)
        self.n_columns = pos
        self.feature_names_out: list[str] = names
        lo = np.zeros(len(schema))
        scale = np.ones(len(schema))
        for j, f in enumerate(schema):
            if f.is_numeric:
                lo[j] = float(f.lower)  # type: ignore[arg-type]
                scale[j] = f.range
            elif f.kind == "ordinal":
                scale[j] = f.range
        self._offset = lo if scaling == "minmax" else np.zeros(len(schema))
        self._scale = scale if scaling == "minmax" else np.ones(len(schema))

    def fit(self, X: pd.DataFrame) -> Encoder:
        """Learn means and standard deviations (only needed for ``scaling="standard"``)."""
        if self.scaling == "standard":
            R = self._raw_numeric(self.schema.validate_frame(X))
            self._offset = R.mean(axis=0)
            sd = R.std(axis=0)
            self._scale = np.where(sd > 0, sd, 1.0)
        return self

    # ------------------------------------------------------------------ blocks
    def block(self, name: str) -> slice:
        """Columns of one feature."""
        b = self.blocks[self.schema.index(name)]
        return slice(b.start, b.stop)

    @property
    def categorical_groups(self) -> list[slice]:
        """Column slices of the one-hot groups."""
        return [
            slice(b.start, b.stop)
            for b, f in zip(self.blocks, self.schema, strict=True)
            if f.is_categorical
        ]

    @property
    def numeric_columns(self) -> np.ndarray:
        """Indices of the columns of numeric and ordinal features."""
        return np.array(
            [
                b.start
                for b, f in zip(self.blocks, self.schema, strict=True)
                if not f.is_categorical
            ],
            dtype=int,
        )

    # -------------------------------------------------------------- transform
    def _raw_numeric(self, X: pd.DataFrame) -> np.ndarray:
        R = np.zeros((len(X), len(self.schema)))
        for j, f in enumerate(self.schema):
            if f.is_numeric:
                R[:, j] = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
            elif f.kind == "ordinal":
                lookup = {c: i for i, c in enumerate(f.categories)}  # type: ignore[arg-type]
                R[:, j] = [lookup[v] for v in X[f.name]]
        return R

    def transform(self, X: pd.DataFrame | pd.Series, *, validate: bool = True) -> np.ndarray:
        """Raw rows -> float matrix of shape (n, n_columns)."""
        if isinstance(X, pd.Series):
            X = X.to_frame().T
        if validate:
            X = self.schema.validate_frame(X)
        R = self._raw_numeric(X)
        out = np.zeros((len(X), self.n_columns))
        for j, (b, f) in enumerate(zip(self.blocks, self.schema, strict=True)):
            if f.is_categorical:
                lookup = {c: i for i, c in enumerate(f.categories)}  # type: ignore[arg-type]
                idx = np.array([lookup[v] for v in X[f.name]], dtype=int)
                out[np.arange(len(X)), b.start + idx] = 1.0
            else:
                out[:, b.start] = (R[:, j] - self._offset[j]) / self._scale[j]
        return out

    def inverse_transform(self, V: np.ndarray, *, clip: bool = True) -> pd.DataFrame:
        """Float matrix -> coherent raw rows (arg-max category, rounded integers,
        values clipped to the domain)."""
        V = np.atleast_2d(np.asarray(V, dtype=float))
        if V.shape[1] != self.n_columns:
            raise ValidationError(f"Expected {self.n_columns} columns, got {V.shape[1]}.")
        data: dict[str, object] = {}
        for j, (b, f) in enumerate(zip(self.blocks, self.schema, strict=True)):
            if f.is_categorical:
                idx = np.argmax(V[:, b.start : b.stop], axis=1)
                cats = np.asarray(f.categories, dtype=object)
                data[f.name] = pd.Series(cats[idx], dtype=object)
                continue
            raw = V[:, b.start] * self._scale[j] + self._offset[j]
            if f.kind == "ordinal":
                top = len(f.categories) - 1  # type: ignore[arg-type]
                r = np.clip(np.rint(raw), 0, top).astype(int)
                data[f.name] = pd.Series(np.asarray(f.categories, dtype=object)[r], dtype=object)
                continue
            if clip:
                raw = np.clip(raw, f.lower, f.upper)
            if f.kind == "integer":
                data[f.name] = np.rint(raw).astype(np.int64)
            else:
                data[f.name] = raw
        return pd.DataFrame(data, columns=self.schema.names)

    def scale_of(self, name: str) -> tuple[float, float]:
        """(offset, scale) of a numeric/ordinal feature: raw = v * scale + offset."""
        j = self.schema.index(name)
        return float(self._offset[j]), float(self._scale[j])
