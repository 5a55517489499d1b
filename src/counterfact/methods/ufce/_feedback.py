"""Simulated user feedback of the UFCE experiments (Sec. 5.2 and 5.3).

A user's feedback is an ordinary :class:`~counterfact.constraints.Constraints`:
the features they are willing to change (``features_to_vary``) and a range
per numeric feature (the paper's perturbation map ``p``).  These helpers build
the feedback the paper simulates for one query:

* :func:`feedback_levels` -- RQ1 / RQ3: every numeric feature may rise from
  the query's value by a fixed share of its MAD (20 % "very limited" ...
  100 % "more flexible"; RQ3 uses 50 %); categorical features may flip.
* :func:`random_feedback` -- RQ2: the upper bounds are drawn at random.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import Constraints
from ...data import Dataset
from ...data._dataset import mad
from ...exceptions import ValidationError

__all__ = ["FEEDBACK_LEVELS", "feedback_levels", "random_feedback"]

#: The five levels of RQ1 (share of each feature's MAD above the query value).
FEEDBACK_LEVELS: dict[str, float] = {
    "very_limited": 0.2,
    "limited": 0.4,
    "medium": 0.6,
    "flexible": 0.8,
    "more_flexible": 1.0,
}


def _prepare(
    data: Dataset, query: pd.Series | pd.DataFrame, features: Iterable[str] | None
) -> tuple[pd.Series, list[str], dict[str, float]]:
    if not isinstance(data, Dataset):
        raise ValidationError(f"data must be a counterfact Dataset. Got {type(data).__name__}.")
    if isinstance(query, pd.DataFrame):
        if len(query) != 1:
            raise ValidationError(
                f"Feedback is built for one query; got {len(query)} rows. Pass one row (a Series)."
            )
        query = query.iloc[0]
    x = data.schema.validate_frame(query, what="query").iloc[0]
    schema = data.schema
    if features is None:
        # a feature only time moves (age) is no change the user makes: left out
        feats = [f.name for f in schema if f.actionability not in ("immutable", "time")]
    else:
        feats = [features] if isinstance(features, str) else list(features)
        unknown = sorted(set(feats) - set(schema.names))
        if unknown:
            raise ValidationError(
                f"features names unknown features {unknown}. Known features: {schema.names}."
            )
    if not feats:
        raise ValidationError(
            "No feature is left for the user to change: every feature is immutable in the "
            "schema or moved only by time."
        )
    m = dict(zip(schema.names, mad(data.X, schema), strict=True))
    return x, feats, m


def feedback_levels(
    data: Dataset,
    query: pd.Series | pd.DataFrame,
    level: str | float = "medium",
    *,
    features: Iterable[str] | None = None,
    two_sided: bool = False,
) -> Constraints:
    """The paper's simulated feedback for one query (RQ1, Sec. 5.2; RQ3 uses 0.5).

    Parameters
    ----------
    data : Dataset
        Training data (its MAD per feature).
    query : Series or one-row DataFrame
        The row to explain.
    level : str or float
        A key of :data:`FEEDBACK_LEVELS` (``"very_limited"`` = 0.2 ...
        ``"more_flexible"`` = 1.0) or the share of MAD itself (> 0).
    features : iterable of str, optional
        The features the user will change; default every feature the schema
        does not mark immutable or moved only by time (the paper: "all the features").
    two_sided : bool
        Also allow a fall by the same amount: ``(x_f - level * MAD_f, x_f +
        level * MAD_f)``.  The paper's experiments only allow rises (its
        perturbation map has a lower bound too, set to the query's value).

    Returns
    -------
    Constraints
        ``features_to_vary=features`` and, for each numeric one,
        ``ranges[f] = (x_f, x_f + level * MAD_f)``; discrete features may flip.

    Examples
    --------
    >>> c = feedback_levels(train, x, "very_limited")       # doctest: +SKIP
    >>> cf.UFCE().fit(model, train).explain(x, constraints=c)  # doctest: +SKIP
    """
    if isinstance(level, str):
        if level not in FEEDBACK_LEVELS:
            raise ValidationError(
                f"level must be one of {list(FEEDBACK_LEVELS)} or a positive float. Got {level!r}."
            )
        share = FEEDBACK_LEVELS[level]
    elif isinstance(level, (int, float)) and not isinstance(level, bool) and level > 0:
        share = float(level)
    else:
        raise ValidationError(
            f"level must be one of {list(FEEDBACK_LEVELS)} or a positive float. Got {level!r}."
        )
    x, feats, m = _prepare(data, query, features)
    ranges = {}
    for n in feats:
        if data.schema[n].is_numeric:
            v = float(x[n])
            ranges[n] = (v - share * m[n] if two_sided else v, v + share * m[n])
    return Constraints(features_to_vary=feats, ranges=ranges)


def random_feedback(
    data: Dataset,
    query: pd.Series | pd.DataFrame,
    random_state: Any = None,
    *,
    features: Iterable[str] | None = None,
    scale: float = 1.0,
) -> Constraints:
    """Random upper bounds (RQ2, Sec. 5.3): the lower bound of every numeric
    feature is the query's value and the upper bound ``x_f + u_f * scale * MAD_f``
    with ``u_f`` uniform in [0, 1), independently per feature.

    The paper draws the upper bounds "from a random choice" without saying
    from what; drawing a share of MAD keeps the draws on the scale of RQ1's
    levels (``scale=1`` spans "nothing" to "more flexible").

    Parameters
    ----------
    data, query, features
        As in :func:`feedback_levels`.
    random_state : int, numpy Generator or None
        Source of the draws.
    scale : float
        Largest share of MAD an upper bound can reach.
    """
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or scale <= 0:
        raise ValidationError(f"scale must be a positive float. Got {scale!r}.")
    rng = (
        random_state
        if isinstance(random_state, np.random.Generator)
        else np.random.default_rng(random_state)
    )
    x, feats, m = _prepare(data, query, features)
    ranges = {}
    for n in feats:
        if data.schema[n].is_numeric:
            v = float(x[n])
            ranges[n] = (v, v + float(rng.uniform(0.0, 1.0)) * float(scale) * m[n])
    return Constraints(features_to_vary=feats, ranges=ranges)
