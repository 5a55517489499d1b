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
measures it, comparing the compiled outputs with the model's own
``predict_proba`` on sample rows; a model whose probability follows neither
(multi-class softmax, calibrated models, SVMs' Platt scaling) has no exact
margin, and asking for one raises :class:`UnsupportedModelError`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from ...exceptions import UnsupportedModelError
from ._ir import CompiledModel, TreeEnsemble

__all__ = ["probability_link", "with_min_probability"]

#: the largest difference between the link's and the model's probabilities that counts as equal
_TOLERANCE = 1e-6


def probability_link(compiled: CompiledModel, predict_proba: Any, sample: pd.DataFrame) -> str:
    """``"sigmoid"``, ``"identity"`` or ``""`` (no linear link), measured on ``sample``."""
    if len(sample) == 0:
        return ""
    try:
        Y = compiled.outputs_raw(compiled.encode(sample))
        P = np.asarray(predict_proba(sample), dtype=float)
    except (ValueError, TypeError, KeyError):
        return ""
    rule = compiled.rule
    if rule.kind == "threshold" and rule.n_outputs == 1 and rule.n_classes == 2 and P.shape[1] == 2:
        if np.max(np.abs(expit(Y[:, 0]) - P[:, 1])) <= _TOLERANCE:
            return "sigmoid"
    est = compiled.estimator
    mean_proba = isinstance(est, TreeEnsemble) and est.aggregation == "mean_proba"
    if (
        rule.kind == "argmax"
        and mean_proba
        and Y.shape == P.shape
        and np.max(np.abs(Y - P)) <= _TOLERANCE
    ):
        return "identity"
    return ""


def with_min_probability(
    compiled: CompiledModel, link: str, min_probability: float | None
) -> CompiledModel:
    """The same compiled model whose target region also asks ``P(target) >= p``
    (the model itself unchanged; the solvers read the region from the rule)."""
    if min_probability is None:
        return compiled
    if not link:
        raise UnsupportedModelError(
            f"{compiled.source or compiled.estimator_class}: its probability is not a linear function of its "
            "compiled outputs (it is neither a binary logistic/boosted/neural model nor a forest), so a "
            "min_probability margin cannot be encoded exactly. Use a method that searches and verifies "
            "(cf.UFCE, cf.MDPSO, cf.NearestObservable), or explain without min_probability."
        )
    return replace(
        compiled, rule=replace(compiled.rule, link=link, min_probability=float(min_probability))
    )
