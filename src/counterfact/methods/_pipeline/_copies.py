"""The retrained copies behind ``Requirements(robustness=p)``: fitted once per fitted
method, split into the copies a search may be asked to convince and the held-out
copies that only estimate an answer's robustness.

Every copy is the explained model refitted on a bootstrap resample of the training
data with its own seed (:func:`counterfact.models.retrained`), the way a model is met
after a retrain.  The held-out copies are never passed to a search, so the share of
them that accepts an answer estimates the share of retrained models that would.  The
copies are seeded from the method's ``random_state`` (0 when it has none), so the same
fitted method gets the same copies in every call, chunk and worker, and they are kept
(weakly, beside the fitted model, never on the method) for the next call while the
model lives; refitting the method wraps a new model, and so gets new copies.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...models import ModelAdapter, retrained
from ...models._adapter import as_adapter
from ._protocol import PipelineMethod

__all__ = ["SEARCH_COPIES", "Copies", "accepted", "copies_for"]

#: how many retrained copies the ladder's strictest settings ask the search to convince
SEARCH_COPIES = 4

#: fitted model -> {(training data id, seed, held-out count): (training data, Copies)}
_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[int, Any, int], tuple[Any, Copies]]] = (
    weakref.WeakKeyDictionary()
)


class Copies:
    """Retrained copies of one fitted method's model: the held-out ones, fitted at once,
    and the ones a search may be asked to convince, fitted when first asked for.

    Attributes
    ----------
    held_out : tuple of ModelAdapter
        Copies never shown to a search: they estimate each answer's robustness.
    seconds : float
        Wall seconds spent refitting copies so far (once per fitted method).
    """

    def __init__(self, method: PipelineMethod, n_held_out: int) -> None:
        # weakly: the cache keys on the model, and a value that held it would keep it alive
        self._model = weakref.ref(method.model_)
        self._data, self._schema = method.data_, method.schema_
        seed = 0 if method.random_state is None else int(method.random_state)
        # two independent seed streams: the held-out copies never meet the search's
        self._seeds = [int(np.random.SeedSequence([seed, k]).generate_state(1)[0]) for k in (0, 1)]
        self.seconds = 0.0
        self.held_out: tuple[ModelAdapter, ...] = tuple(
            as_adapter(m, self._schema) for m in self._refit(n_held_out, self._seeds[0])
        )
        self._search: tuple[Any, ...] = ()

    def search(self, k: int) -> tuple[Any, ...]:
        """The first ``k`` copies a search may be asked to convince (``robust_to``)."""
        if k > len(self._search):
            self._search = tuple(self._refit(SEARCH_COPIES, self._seeds[1]))
        return self._search[:k]

    def _refit(self, n: int, seed: int) -> list[Any]:
        start = time.perf_counter()
        try:
            fitted = retrained(self._model(), self._data, n=n, random_state=seed)
        except ValidationError as exc:
            raise ValidationError(
                "Requirements(robustness=...) estimates robustness from copies of the model "
                f"retrained on the training data, and this model cannot be retrained: {exc} "
                "Drop robustness, and pass copies you refitted yourself as robust_to."
            ) from None
        self.seconds += time.perf_counter() - start
        return fitted


def copies_for(method: PipelineMethod, n_held_out: int) -> Copies:
    """The copies of ``method``'s model with ``n_held_out`` held out, made on the first
    call and kept for the next ones while the fitted model lives (a copy of the method
    that shares its model and training data, as a server's per-request copy, shares them)."""
    model, data = method.model_, method.data_
    kept = _CACHE.setdefault(model, {})
    key = (id(data), method.random_state, n_held_out)
    if key not in kept or kept[key][0] is not data:
        kept[key] = (data, Copies(method, n_held_out))
    return kept[key][1]


def accepted(copies: Copies, rows: pd.DataFrame, targets: np.ndarray) -> np.ndarray:
    """Per row, how many held-out copies predict its target (ints, one per row)."""
    counts = np.zeros(len(rows), dtype=int)
    if len(rows) == 0:
        return counts
    for model in copies.held_out:
        pred = model.predict(rows)
        counts += np.array([a == t for a, t in zip(pred, targets, strict=True)], dtype=int)
    return counts
