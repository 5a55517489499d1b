"""The retrained copies behind ``Requirements(robustness=p)``: fitted once per fitted
method, in three independent sets: the copies a search may be asked to convince, the
choosing copies that decide whether an answer reaches ``p``, and the held-out copies
that only estimate an answer's robustness.

Every copy is the explained model refitted on a bootstrap resample of the training
data with its own seed (:func:`counterfact.models.retrained`), the way a model is met
after a retrain.  Neither the choosing nor the held-out copies are passed to a search.
The choosing copies pick each row's setting (:func:`reaches`); the held-out copies,
never used to choose, then estimate the share of retrained models that accept the
chosen answer without the optimism of an estimate that also chose (an answer picked
because all of 8 copies accept it is accepted by fewer than all of 8 others).  Twice as
many copies choose as estimate (:data:`CHOOSING`).

Decision: the rule on the choosing copies asks for more than their share.  An answer
reaches ``p`` when at least ``p`` of them accept it *and* a new retrained copy is
predicted to accept it with probability at least ``p``: each copy's score (the log-odds
of the target against the likeliest other class, probabilities clipped to
``[1e-6, 1 - 1e-6]``) is taken as a draw from a normal law, and a new copy's score from
the Student prediction interval of ``n`` draws, ``T_{n-1}(mean / (sd * sqrt(1 + 1/n)))``.
The share of 8 copies cannot tell 0.8 from 0.99; their scores can (an answer all 8
accept by a hair is not held by the next one).  On German Credit's forest (seeds 2-4,
every answer tried at p = 0.9, 305 of them) the prediction is calibrated: answers
predicted at 0.6-0.7, 0.7-0.8, 0.8-0.9 and 0.9-0.95 were accepted by 0.67, 0.75, 0.84
and 0.89 of 20 unseen retrained copies, and it ranks them better than the copies' vote
share does (Spearman 0.78 against 0.71).

The copies are seeded from the method's ``random_state`` (0 when it has none), so the same
fitted method gets the same copies in every call, chunk and worker, and they are kept
(weakly, beside the fitted model, never on the method) for the next call while the
model lives; refitting the method wraps a new model, and so gets new copies.
"""

from __future__ import annotations

import time
import warnings
import weakref
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from ...exceptions import ValidationError
from ...models import ModelAdapter, retrained
from ...models._adapter import as_adapter
from ._protocol import PipelineMethod

__all__ = [
    "SEARCH_COPIES",
    "Copies",
    "accepted",
    "adopt_copies",
    "copies_for",
    "predicted_share",
    "reaches",
]

#: how many retrained copies the ladder's strictest settings ask the search to convince
SEARCH_COPIES = 8
#: choosing copies per held-out copy.  Decision: twice as many choose as estimate.  The
#: ladder keeps the first settings that pass the rule, so the rule's noise turns into
#: optimism (a row passes on a lucky draw); on German Credit's forest, rows chosen on 8
#: copies at p = 0.95 held for 0.92-0.94 of 40 other retrained copies, on 12-16 copies
#: for 0.95.  The held-out copies only estimate, and an estimate's interval already says
#: how far 8 of them can be trusted.
CHOOSING = 2

#: fitted model -> {(training data id, seed, held-out count): (training data, Copies)}
_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[int, Any, int], tuple[Any, Copies]]] = (
    weakref.WeakKeyDictionary()
)


class Copies:
    """Retrained copies of one fitted method's model: the held-out and choosing ones,
    fitted at once, and the ones a search may be asked to convince, fitted when first
    asked for.

    Attributes
    ----------
    held_out : tuple of ModelAdapter
        Copies never shown to a search nor used to choose: they estimate each answer's
        robustness.
    choosing : tuple of ModelAdapter
        :data:`CHOOSING` times as many copies, never shown to a search: they decide
        whether an answer reaches the share asked for (:func:`reaches`).
    seconds : float
        Wall seconds spent refitting copies so far (once per fitted method).
    """

    def __init__(self, method: PipelineMethod, n_held_out: int) -> None:
        # weakly: the cache keys on the model, and a value that held it would keep it alive
        self._model = weakref.ref(method.model_)
        self._data, self._schema = method.data_, method.schema_
        seed = 0 if method.random_state is None else int(method.random_state)
        # independent seed streams: held-out, search and choosing copies never meet
        self._seeds = [
            int(np.random.SeedSequence([seed, k]).generate_state(1)[0]) for k in (0, 1, 2)
        ]
        self.seconds = 0.0
        self.held_out: tuple[ModelAdapter, ...] = self._adapters(n_held_out, self._seeds[0])
        self.choosing: tuple[ModelAdapter, ...] = self._adapters(
            CHOOSING * n_held_out, self._seeds[2]
        )
        self._search: tuple[Any, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        """What travels to another process (a batch's workers): all but the weak
        reference to the model, which :func:`adopt_copies` sets again there."""
        return {**self.__dict__, "_model": None}

    def complete(self) -> Copies:
        """These copies with every search copy fitted too, so that a process they travel
        to refits none."""
        self.search(SEARCH_COPIES)
        return self

    def _adapters(self, n: int, seed: int) -> tuple[ModelAdapter, ...]:
        return tuple(as_adapter(m, self._schema) for m in self._refit(n, seed))

    def search(self, k: int) -> tuple[Any, ...]:
        """The first ``k`` copies a search may be asked to convince (``robust_to``)."""
        if k > len(self._search):
            self._search = tuple(self._refit(SEARCH_COPIES, self._seeds[1]))
        return self._search[:k]

    def _refit(self, n: int, seed: int) -> list[Any]:
        start = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fitted = retrained(self._model(), self._data, n=n, random_state=seed)
        except ValidationError as exc:
            raise ValidationError(
                "Requirements(robustness=...) estimates robustness from copies of the model "
                f"retrained on the training data, and this model cannot be retrained: {exc} "
                "Drop robustness, and pass copies you refitted yourself as robust_to."
            ) from None
        self.seconds += time.perf_counter() - start
        _rewarn(caught, n)
        return fitted


def _rewarn(caught: list[warnings.WarningMessage], n: int) -> None:
    """The warnings of refitting ``n`` copies, each said once: the solver's convergence
    warnings in one sentence (an MLP's 32 copies gave dozens, one per copy and fit), any
    other warning once per distinct message (an SVM's deprecation notice came 34 times)."""
    slow = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    said = set()
    for w in caught:  # any other warning once, not once per copy
        key = (w.category, str(w.message))
        if w not in slow and key not in said:
            said.add(key)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if slow:
        warnings.warn(
            f"Requirements(robustness=...): refitting {n} retrained copies of the model, its "
            f"solver stopped before converging {len(slow)} times (as it may when the model "
            "itself was fitted); each copy is used as fitted. "
            f"First: {slow[0].message}",
            ConvergenceWarning,
            stacklevel=2,
        )


def copies_for(method: PipelineMethod, n_held_out: int) -> Copies:
    """The copies of ``method``'s model with ``n_held_out`` held out, made on the first
    call and kept for the next ones while the fitted model lives (a copy of the method
    that shares its model and training data, as a server's per-request copy, shares them)."""
    data = method.data_
    kept, key = _slot(method, n_held_out)
    if key not in kept or kept[key][0] is not data:
        kept[key] = (data, Copies(method, n_held_out))
    return kept[key][1]


def adopt_copies(method: PipelineMethod, copies: Copies) -> None:
    """Keep ``copies``, fitted in another process for a method equal to ``method`` (the
    same model, training data and seed, as a batch ships them), as ``method``'s own, so
    that :func:`copies_for` refits nothing here."""
    copies._model = weakref.ref(method.model_)
    copies._data, copies._schema = method.data_, method.schema_
    kept, key = _slot(method, len(copies.held_out))
    kept[key] = (method.data_, copies)


def _slot(method: PipelineMethod, n_held_out: int) -> tuple[dict[Any, Any], tuple[int, Any, int]]:
    """Where ``method``'s copies are kept: its model's entry and the key within it."""
    kept = _CACHE.setdefault(method.model_, {})
    return kept, (id(method.data_), method.random_state, n_held_out)


def accepted(copies: Copies, rows: pd.DataFrame, targets: np.ndarray) -> np.ndarray:
    """Per row, how many held-out copies predict its target (ints, one per row)."""
    return _votes(copies.held_out, rows, targets)


def _votes(models: tuple[ModelAdapter, ...], rows: pd.DataFrame, targets: np.ndarray) -> np.ndarray:
    """Per row, how many of ``models`` predict its target (ints, one per row)."""
    counts = np.zeros(len(rows), dtype=int)
    if len(rows) == 0:
        return counts
    for model in models:
        pred = model.predict(rows)
        counts += np.array([a == t for a, t in zip(pred, targets, strict=True)], dtype=int)
    return counts


#: probabilities are clipped to [CLIP, 1 - CLIP] before their log-odds are taken
CLIP = 1e-6


def scores(models: tuple[ModelAdapter, ...], rows: pd.DataFrame, targets: np.ndarray) -> np.ndarray:
    """Per model (rows of the result) and answer (columns): the log-odds of the answer's
    target against the likeliest other class; positive where the model leans to the
    target."""
    out = np.zeros((len(models), len(rows)))
    for i, model in enumerate(models):
        proba = np.clip(model.predict_proba(rows), CLIP, 1.0 - CLIP)
        cols = np.array([model.class_index(t) for t in targets])
        take = np.arange(len(rows))
        own = proba[take, cols]
        proba[take, cols] = -np.inf
        out[i] = np.log(own) - np.log(proba.max(axis=1))
    return out


def predicted_share(score: np.ndarray) -> np.ndarray:
    """Per answer (columns of ``score``): the chance that one more retrained copy leans
    to the target, from the Student prediction interval of the copies' scores."""
    from scipy.stats import t as student

    n = score.shape[0]
    mean = score.mean(axis=0)
    sd = score.std(axis=0, ddof=1) if n > 1 else np.zeros(score.shape[1])
    spread = sd * np.sqrt(1.0 + 1.0 / n)
    safe = np.where(spread > 0, spread, 1.0)
    share = student.cdf(mean / safe, df=max(n - 1, 1))
    return np.where(spread > 0, share, (mean > 0).astype(float))


def reaches(copies: Copies, rows: pd.DataFrame, targets: np.ndarray, p: float) -> np.ndarray:
    """Per answer: ``(reached, predicted)``, whether the choosing copies let it reach
    ``p`` (at least ``p`` of them accept it and one more copy is predicted to with
    probability at least ``p``) and that predicted probability."""
    n = len(copies.choosing)
    if len(rows) == 0:
        return np.zeros((2, 0))
    score = scores(copies.choosing, rows, targets)
    votes = _votes(copies.choosing, rows, targets)
    share = predicted_share(score)
    ok = (votes >= np.ceil(p * n - 1e-9)) & (share >= p - 1e-12)
    return np.vstack([ok.astype(float), share])
