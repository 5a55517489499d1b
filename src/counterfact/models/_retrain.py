"""The same model retrained: the set of models a recourse should survive (model multiplicity)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..data import Dataset
from ..exceptions import ValidationError
from ._adapter import ModelAdapter
from ._fit import MODEL_KINDS

__all__ = ["retrained"]


def retrained(
    model: Any,
    data: Dataset,
    *,
    n: int = 5,
    random_state: int | None = None,
    bootstrap: bool = True,
) -> list[Any]:
    """``n`` copies of ``model`` refitted as a practitioner would meet them: on
    bootstrap resamples of ``data`` with other seeds.

    Pass them as ``explain(..., requirements=cf.Requirements(robust_to=...))`` for answers that hold
    when the model is retrained (Pawelczyk et al.; Forel, Parmentier & Vidal:
    naive counterfactuals are often revoked by a retrain).

    Parameters
    ----------
    model : scikit-learn estimator or pipeline
        A fitted (or unfitted) model; it is cloned (``sklearn.base.clone``), never
        refitted in place.
    data : Dataset
        The training data the copies are refitted on.
    n : int
        How many copies.
    random_state : int, optional
        Seeds the resamples and each copy's own ``random_state`` parameters
        (every parameter named ``random_state`` or ending in ``__random_state``).
    bootstrap : bool
        Resample the rows with replacement (the default); ``False`` refits on
        all rows with other seeds only.

    Returns
    -------
    list
        ``n`` fitted models.
    """
    from sklearn.base import clone

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValidationError(f"n must be an int >= 1 (how many retrained copies). Got {n!r}.")
    if not isinstance(data, Dataset):
        raise ValidationError(
            f"retrained needs the training data as a cf.Dataset. Got {type(data).__name__}."
        )
    if isinstance(model, ModelAdapter):
        model = model.model
    try:
        template = clone(model)
    except (TypeError, RuntimeError) as exc:
        raise ValidationError(
            "retrained needs a scikit-learn estimator or pipeline it can clone; "
            f"{type(model).__name__} is not ({exc}). "
            "Refit your model yourself and pass the copies to robust_to."
        ) from None
    seeds = np.random.SeedSequence(random_state).spawn(int(n))
    return [_refit(template, data, seq, bootstrap) for seq in seeds]


def _refit(template: Any, data: Dataset, seq: np.random.SeedSequence, bootstrap: bool) -> Any:
    from sklearn.base import clone

    rng = np.random.default_rng(seq)
    est = clone(template)
    seed = int(rng.integers(0, 2**31 - 1))
    est.set_params(
        **{
            k: seed
            for k in est.get_params(deep=True)
            if k == "random_state" or k.endswith("__random_state")
        }
    )
    X, y = data.X, data.y
    idx = np.arange(len(X))
    if bootstrap:
        for _ in range(20):  # a resample must hold every class
            idx = rng.integers(0, len(X), size=len(X))
            if y.iloc[idx].nunique() == y.nunique():
                break
        else:
            raise ValidationError(
                "retrained: a bootstrap resample kept missing a class; pass bootstrap=False."
            )
    with warnings.catch_warnings():  # what fit() already keeps quiet, quiet here too
        for kind in MODEL_KINDS.values():
            for message, category in kind.quiet:
                warnings.filterwarnings("ignore", message=message, category=category)
        return est.fit(X.iloc[idx], y.iloc[idx])
