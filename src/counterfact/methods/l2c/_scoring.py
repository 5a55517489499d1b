"""Scoring L2C's candidate levels with the model, exactly and without DataFrames.

Training asks the model about thousands of candidates per epoch.  Decoding
them to a DataFrame and running the pipeline's ``ColumnTransformer`` per call
cost more than the estimator itself; :class:`LevelScorer` writes the decoded
values straight into the model compiler's raw layout and calls
:class:`~counterfact.models._fastpredict.FastPredictor` (the folded
preprocessing, then the fitted estimator or the numpy forest evaluator).  It
exists only when that path reproduced the model's probabilities exactly on
training rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...models._fastpredict import FastPredictor, spread_rows
from ...schema import Schema
from ._representation import Representation

__all__ = ["LevelScorer"]


class LevelScorer:
    """The model's probabilities of candidate levels (see module docstring)."""

    def __init__(
        self, fast: FastPredictor, codes: list[np.ndarray | None], rep: Representation
    ) -> None:
        self.fast = fast
        self.codes = codes
        self.rep = rep

    @property
    def kind(self) -> str:
        """``"forest"`` or ``"estimator"`` (see :class:`FastPredictor`)."""
        return self.fast.kind

    @classmethod
    def build(
        cls, model: Any, schema: Schema, rep: Representation, X: pd.DataFrame
    ) -> LevelScorer | None:
        """``None`` unless the fast path is exact for ``model`` on rows of ``X``."""
        if not len(X):
            return None
        sample = spread_rows(X)
        fast = FastPredictor.build(model, schema, sample)
        if fast is None:
            return None
        codes: list[np.ndarray | None] = []
        for f, b in zip(rep.features, fast.space.blocks, strict=True):
            if f.name != b.name:
                return None
            if f.numeric:
                codes.append(None)
                continue
            lookup = {c: k for k, c in enumerate(b.categories)}
            if any(c not in lookup for c in f.categories):  # type: ignore[union-attr]
                return None
            own = [lookup[c] for c in f.categories]  # type: ignore[union-attr]
            codes.append(np.array(own, dtype=np.int64))
        return cls(fast, codes, rep)

    def raw_vectors(self, levels: np.ndarray, owner: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Candidate levels as the compiler's raw vectors (the values
        :meth:`Representation.decode` gives: integers rounded)."""
        rep = self.rep
        vals = rep.decode_values(levels, owner, table)
        Z = np.zeros((levels.shape[0], self.fast.space.n))
        rows = np.arange(levels.shape[0])
        for i, (f, b, code) in enumerate(
            zip(rep.features, self.fast.space.blocks, self.codes, strict=True)
        ):
            if code is None:
                Z[:, b.start] = np.rint(vals[:, i]) if f.kind == "integer" else vals[:, i]
            elif b.kind == "ordinal":
                Z[:, b.start] = code[levels[:, i]]
            else:
                Z[rows, b.start + code[levels[:, i]]] = 1.0
        return Z

    def proba(self, levels: np.ndarray, owner: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Class probabilities ``(m, n_classes)`` of candidate levels."""
        return self.fast.proba_z(self.raw_vectors(levels, owner, table))
