"""Faster model calls for UFCE's search, exact or not used at all.

* :class:`FastDecide`: the class the model assigns to UFCE's code rows
  without building a DataFrame and running the pipeline's
  ``ColumnTransformer`` per call.  The codes are written straight into the
  model compiler's raw layout, the compiler's folded preprocessing (which
  reproduces scikit-learn's float operations bit for bit) is applied, and the
  pipeline's *own* fitted estimator decides (``predict``; for a tree or a
  forest, the numpy evaluator of all trees and scikit-learn's own rule,
  ``classes_[argmax(proba)]``).  It is built only when it reproduces the
  model's decisions exactly on training rows; otherwise UFCE calls the model
  as before.  The reported counterfactuals are verified by the real model in
  the pipeline either way.
* :func:`one_thread`: the Local Outlier Factor's neighbour queries on one
  thread.  The batches UFCE sends are small (a few hundred rows against the
  training set), so OpenMP's start-up costs more than it saves, and on a busy
  machine (or a Dask worker sharing its cores) its threads wait on each other:
  measured 3-7x slower than one thread on a loaded two-core machine.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from ...models._fastpredict import FastPredictor, spread_rows
from ...schema import Schema
from ._space import Space

__all__ = ["FastDecide", "one_thread"]

_CONTROLLER: list[Any] = []


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Native thread pools (OpenMP, BLAS) limited to one thread inside the block."""
    try:
        if not _CONTROLLER:
            from threadpoolctl import ThreadpoolController

            _CONTROLLER.append(ThreadpoolController())
        ctx: Any = _CONTROLLER[0].limit(limits=1)
    except Exception:  # threadpoolctl missing or failing: run as is
        ctx = contextlib.nullcontext()
    with ctx:
        yield


class FastDecide:
    """Class index (in the model's ``classes_``) of UFCE code rows; see the module docstring."""

    def __init__(self, fast: FastPredictor, space: Space, class_pos: dict[Any, int]) -> None:
        self.fast = fast
        self.space = space
        blocks = fast.space.blocks
        self.start = np.array([b.start for b in blocks], dtype=int)
        self.onehot = np.array([b.is_indicator for b in blocks], dtype=bool)
        self.n = int(fast.space.n)
        est_classes = np.asarray(fast.estimator.classes_)
        self.est_to_model = np.array(
            [class_pos.get(c, -1) for c in est_classes.tolist()], dtype=int
        )
        self.class_pos = class_pos

    @classmethod
    def build(
        cls, model: Any, schema: Schema, space: Space, X: pd.DataFrame, class_pos: dict[Any, int]
    ) -> FastDecide | None:
        """``None`` unless the shortcut gives exactly the model's decisions on (up to
        256) rows of ``X`` and the layouts agree feature by feature."""
        if not len(X):
            return None
        sample = spread_rows(X)
        fast = FastPredictor.build(model, schema, sample)
        if fast is None:
            return None
        for b, name, cats in zip(fast.space.blocks, space.names, space.categories, strict=True):
            if b.name != name:
                return None
            if cats is not None and tuple(b.categories or ()) != tuple(cats.tolist()):
                return None
        try:
            out = cls(fast, space, class_pos)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = out(space.to_codes(sample))
                want = np.array(
                    [class_pos.get(v, -1) for v in np.asarray(model.predict(sample)).tolist()],
                    dtype=int,
                )
        except Exception:
            return None
        if not np.array_equal(got, want):
            return None
        return out

    def __call__(self, R: np.ndarray) -> np.ndarray:
        R = np.atleast_2d(R)
        n = len(R)
        Z = np.zeros((n, self.n))
        rows = np.arange(n)
        for j in range(R.shape[1]):
            s = self.start[j]
            if self.onehot[j]:
                Z[rows, s + R[:, j].astype(np.int64)] = 1.0
            elif self.space.integer[j]:
                Z[:, s] = np.rint(R[:, j])  # as Space.to_frame casts integers
            else:
                Z[:, s] = R[:, j]
        if n == 0:
            return np.zeros(0, dtype=int)
        X = self.fast.affine.apply(Z)
        if self.fast.forest is not None:
            return self.est_to_model[np.argmax(self.fast.forest.predict_proba(X), axis=1)]
        labels = np.asarray(self.fast.estimator.predict(X))
        return np.array([self.class_pos.get(v, -1) for v in labels.tolist()], dtype=int)
