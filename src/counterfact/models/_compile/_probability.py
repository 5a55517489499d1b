"""The model's probability in the compiled outputs: a margin the solvers encode exactly.

A compiled model decides from its outputs ``y``; ``predict_proba`` is a function
of the same outputs.  Where that function makes "probability of the target at
least ``p``" a linear condition on ``y``, the solvers can encode a probability
margin exactly, and an exact method's "optimal" and "infeasible" remain proofs
under it:

* ``"sigmoid"``: binary models whose ``predict_proba[:, 1]`` is ``expit(y0)``
  (logistic regression, MLPs, gradient boosting, XGBoost, LightGBM):
  ``P(1) >= p`` iff ``y0 >= logit(p)``;
* ``"identity"``: forests, whose outputs are the mean leaf probabilities:
  ``P(t) >= p`` iff ``y_t >= p``.

The link is not assumed from the model's class: :func:`probability_link`
measures it (through :func:`probability_function`, which also recognises the
non-linear softmax and one-vs-rest functions, for a differentiable copy of the
model), comparing the compiled outputs with the model's own
``predict_proba`` on sample rows; a model whose probability follows neither
(multi-class softmax, calibrated models, SVMs' Platt scaling) has no exact
margin, and asking for one raises :class:`UnsupportedModelError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from ...exceptions import UnsupportedModelError
from ._ir import CompiledModel

__all__ = [
    "LINEAR_LINKS",
    "PROBABILITY_FUNCTIONS",
    "probability_function",
    "probability_link",
    "with_min_probability",
]

#: the largest difference between the link's and the model's probabilities that counts as equal
_TOLERANCE = 1e-6


def probability_link(compiled: CompiledModel, predict_proba: Any, sample: pd.DataFrame) -> str:
    """``"sigmoid"``, ``"identity"`` or ``""`` (no linear link), measured on ``sample``."""
    found = probability_function(compiled, predict_proba, sample)
    return found if found in LINEAR_LINKS else ""


def probability_function(compiled: CompiledModel, predict_proba: Any, sample: pd.DataFrame) -> str:
    """How ``predict_proba`` follows from the compiled outputs ``y``, measured on
    ``sample``: one of :data:`PROBABILITY_FUNCTIONS`, or ``""`` (none of them)."""
    if len(sample) == 0:
        return ""
    try:
        Y = compiled.outputs_raw(compiled.encode(sample))
        P = np.asarray(predict_proba(sample), dtype=float)
    except (ValueError, TypeError, KeyError):
        return ""
    return next((name for name, fits in _CANDIDATES if fits(compiled, Y, P)), "")


def _fits_sigmoid(compiled: CompiledModel, Y: np.ndarray, P: np.ndarray) -> bool:
    rule = compiled.rule
    binary = rule.kind == "threshold" and rule.n_outputs == 1 and rule.n_classes == 2
    return binary and P.shape[1] == 2 and _close(expit(Y[:, 0]), P[:, 1])


def _fits_identity(compiled: CompiledModel, Y: np.ndarray, P: np.ndarray) -> bool:
    mean_proba = compiled.estimator.outputs_are_probabilities
    return compiled.rule.kind == "argmax" and mean_proba and Y.shape == P.shape and _close(Y, P)


def _fits_softmax(compiled: CompiledModel, Y: np.ndarray, P: np.ndarray) -> bool:
    return compiled.rule.kind == "argmax" and Y.shape == P.shape and _close(softmax(Y, axis=1), P)


def _fits_ovr(compiled: CompiledModel, Y: np.ndarray, P: np.ndarray) -> bool:
    if compiled.rule.kind != "argmax" or Y.shape != P.shape:
        return False
    S = expit(Y)
    return _close(S / S.sum(axis=1, keepdims=True), P)


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.max(np.abs(a - b)) <= _TOLERANCE)


#: the probability functions :func:`probability_function` recognises, tried in this order:
#: ``P(1) = expit(y0)`` (binary), ``P = y`` (forests), ``P = softmax(y)`` and
#: ``P = expit(y) / sum(expit(y))`` (one-vs-rest logistic regression)
_CANDIDATES: tuple[tuple[str, Callable[[CompiledModel, np.ndarray, np.ndarray], bool]], ...] = (
    ("sigmoid", _fits_sigmoid),
    ("identity", _fits_identity),
    ("softmax", _fits_softmax),
    ("ovr", _fits_ovr),
)
PROBABILITY_FUNCTIONS: tuple[str, ...] = tuple(name for name, _ in _CANDIDATES)
#: the probability functions under which "P(target) >= p" is linear in ``y``
LINEAR_LINKS: tuple[str, ...] = ("sigmoid", "identity")


def with_min_probability(
    compiled: CompiledModel, link: str, min_probability: float | None
) -> CompiledModel:
    """The same compiled model whose target region also asks ``P(target) >= p``
    (the model itself unchanged; the solvers read the region from the rule)."""
    if min_probability is None:
        return compiled
    if not link:
        raise UnsupportedModelError(
            f"{compiled.source or compiled.estimator_class}: its probability is not a linear "
            "function of its compiled outputs (it is neither a binary logistic/boosted/neural "
            "model nor a forest), so a min_probability margin cannot be encoded exactly. Use a "
            "method that searches and verifies (cf.UFCE, cf.MDPSO, cf.NearestObservable), or "
            "explain without min_probability."
        )
    return replace(
        compiled, rule=replace(compiled.rule, link=link, min_probability=float(min_probability))
    )
