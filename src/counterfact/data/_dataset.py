"""Datasets (frame + schema + target) and the statistics methods share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ValidationError
from ..schema import Schema
from ..schema._spread import mad

__all__ = ["Dataset", "mad", "quantile_bins", "ranges"]


@dataclass(frozen=True)
class Dataset:
    """A table of features and a target, with its schema.

    Parameters
    ----------
    frame : DataFrame
        Features (the schema's columns) and the target column.
    schema : Schema
        Feature definitions; ``schema.target`` names the target column.  Real
        features without a resolution get the one inferred from ``frame``
        (see :class:`~counterfact.Feature`).
    name : str
        Short name (``"german_credit"``).
    description : str
        Provenance and citation.
    """

    frame: pd.DataFrame
    schema: Schema
    name: str = "dataset"
    description: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.schema.target is None:
            raise ValidationError("A Dataset's schema needs a target (Schema(..., target='y')).")
        if self.schema.target not in self.frame.columns:
            raise ValidationError(
                f"Target column '{self.schema.target}' is missing from the frame."
            )
        X = self.schema.validate_frame(self.frame, what=f"dataset '{self.name}'")
        if self.frame[self.schema.target].isna().any():
            raise ValidationError(f"dataset '{self.name}': the target has missing values.")
        frame = X.copy()
        frame[self.schema.target] = self.frame[self.schema.target].to_numpy()
        object.__setattr__(self, "frame", frame)
        schema = self.schema
        if any(f.kind == "real" and f.resolution is None for f in schema):
            schema = schema.with_resolution(X)  # real features: step inferred from the data
        if schema.classes is None:
            classes = tuple(sorted(pd.unique(frame[schema.target]).tolist()))
            schema = Schema(schema.features, schema.target, classes)
        object.__setattr__(self, "schema", schema)

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, target: str, *, name: str = "dataset", **infer: Any
    ) -> Dataset:
        """Infer the schema from ``frame`` (keyword arguments go to :meth:`Schema.infer`)."""
        return cls(frame, Schema.infer(frame, target=target, **infer), name=name)

    # ------------------------------------------------------------------ views
    @property
    def target(self) -> str:
        """Name of the target column."""
        return str(self.schema.target)

    @property
    def X(self) -> pd.DataFrame:
        """Feature columns (a copy)."""
        return self.frame.loc[:, self.schema.names].copy()

    @property
    def y(self) -> pd.Series:
        """Target column (a copy)."""
        return self.frame[self.target].copy()

    @property
    def classes(self) -> tuple[Any, ...]:
        """Class labels, sorted."""
        return tuple(self.schema.classes or ())

    def __len__(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, rows={len(self)}, features={len(self.schema)}, "
            f"target={self.target!r}, classes={list(self.classes)})"
        )

    def subset(self, index: Any) -> Dataset:
        """Rows by label index."""
        return Dataset(
            self.frame.loc[index], self.schema, self.name, self.description, dict(self.metadata)
        )

    def head(self, n: int = 5) -> pd.DataFrame:
        """First rows of the frame."""
        return self.frame.head(n)

    def with_schema(self, schema: Schema) -> Dataset:
        """Same rows, another schema (e.g. with overridden actionability)."""
        return Dataset(self.frame, schema, self.name, self.description, dict(self.metadata))

    def split(
        self,
        test_size: float = 0.2,
        *,
        random_state: int | None = 0,
        stratify: bool = True,
    ) -> tuple[Dataset, Dataset]:
        """Seeded train/test split (stratified by the target by default)."""
        from sklearn.model_selection import train_test_split

        if not 0 < test_size < 1:
            raise ValidationError(f"test_size must be in (0, 1). Got {test_size!r}.")
        strat = self.frame[self.target] if stratify else None
        tr, te = train_test_split(
            self.frame.index.to_numpy(),
            test_size=test_size,
            random_state=random_state,
            stratify=strat,
        )
        return self.subset(tr), self.subset(te)

    # ------------------------------------------------------------- statistics
    def mad(self) -> np.ndarray:
        """Per-feature MAD (see :func:`mad`)."""
        return mad(self.X, self.schema)

    def ranges(self) -> np.ndarray:
        """Per-feature ranges (see :func:`ranges`)."""
        return ranges(self.schema)


def ranges(schema: Schema) -> np.ndarray:
    """Per-feature normalising range: numeric ``upper - lower`` (observed range
    when the schema was inferred), ordinal ``levels - 1``, categorical 1.  A
    zero width becomes 1 so that the range-normalised distance
    (:func:`counterfact.metrics.distance`) remains finite."""
    return schema.ranges()


def quantile_bins(
    values: Sequence[float] | np.ndarray, n_bins: int = 4, *, min_count: int = 1
) -> np.ndarray:
    """Edges of up to ``n_bins`` quantile bins over ``values``.

    Duplicated edges are merged (so a feature with few distinct values gets
    fewer bins) and bins holding fewer than ``min_count`` values are merged
    with their neighbour.  Returns the interior and outer edges, increasing.
    """
    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 0:
        raise ValidationError("quantile_bins needs at least one value.")
    if n_bins < 1:
        raise ValidationError(f"n_bins must be >= 1. Got {n_bins}.")
    edges = np.unique(np.quantile(v, np.linspace(0, 1, n_bins + 1)))
    if edges.size == 1:
        return np.array([edges[0], edges[0]])
    changed = True
    while changed and edges.size > 2:
        changed = False
        counts = np.histogram(v, bins=edges)[0]
        small = np.flatnonzero(counts < min_count)
        if small.size:
            k = int(small[0])
            # remove the interior edge shared with the smaller neighbour
            drop = k + 1 if k == 0 else k
            if k not in (0, counts.size - 1) and counts[k + 1] < counts[k - 1]:
                drop = k + 1
            drop = min(max(drop, 1), edges.size - 2)
            edges = np.delete(edges, drop)
            changed = True
    return edges
