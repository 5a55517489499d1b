"""The arguments of :func:`~counterfact.global_recourse`, checked before any work: the
population, the caps, the measure and each person's constraints."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...constraints import Constraints
from ...exceptions import NotFittedError, UnsupportedConstraintError, ValidationError
from ...schema._spread import mad
from .._actions import Cost

__all__ = ["checked_frame", "measure_of", "positive_or_none", "row_constraints"]


def checked_frame(method: Any, X: Any, max_actions: Any, n_counterfactuals: Any) -> pd.DataFrame:
    """The population validated (the method fitted, a unique index) and the counts checked."""
    if not getattr(method, "fitted_", False):
        raise NotFittedError(
            "global_recourse needs a fitted method: call method.fit(model, train) first."
        )
    for name, value in (("max_actions", max_actions), ("n_counterfactuals", n_counterfactuals)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValidationError(
                f"The {name!r} parameter of global_recourse must be an int in [1, inf). "
                f"Got {value!r}."
            )
    frame = method.schema_.validate_frame(X, what="X")
    if frame.index.has_duplicates:
        raise ValidationError(
            "X has duplicate index labels; row ids must be unique (reset_index())."
        )
    return frame  # type: ignore[no-any-return]


def positive_or_none(value: Any, name: str) -> float | None:
    """A cap: a number > 0, or None for no cap."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float | np.integer | np.floating)
        or not np.isfinite(value)
        or value <= 0
    ):
        raise ValidationError(
            f"The {name!r} parameter of global_recourse must be a number > 0 or None. "
            f"Got {value!r}."
        )
    return float(value)


def measure_of(method: Any, measure: Any) -> Cost:
    """The ``measure`` argument as a :class:`~counterfact.recourse._actions.Cost`."""
    ones = np.ones(len(method.schema_))
    if isinstance(measure, Mapping):
        return Cost("l1", _weights(method.schema_, measure))
    if measure in ("l1", "n_changed"):
        return Cost(str(measure), ones)
    if measure == "effort":
        return Cost("effort", _effort_weights(method))
    if measure == "method":
        norm = getattr(method, "norm", None)
        if type(method).tags.measure != "distance" or norm is None:
            raise ValidationError(
                f"The 'measure' parameter is 'method', but {type(method).__name__} has no "
                "distance of its own; use measure='effort' (the measure of effort), 'l1' (the "
                "range-normalised l1 distance), 'n_changed' or {feature: weight}."
            )
        return Cost("norm", ones, tuple(norm) if isinstance(norm, list) else norm)
    raise ValidationError(
        "The 'measure' parameter of global_recourse must be 'effort', 'l1', 'n_changed', "
        f"'method' or a mapping {{feature: weight}}. Got {measure!r}."
    )


def _effort_weights(method: Any) -> np.ndarray:
    """Per feature, what turns a range-normalised move into MAD-units (``range / MAD`` of the
    method's training data; 1 for a categorical feature, whose change moves one unit)."""
    schema = method.schema_
    cat = np.array([f.is_categorical for f in schema], dtype=bool)
    return np.where(cat, 1.0, schema.ranges() / mad(method.data_.X, schema))


def _weights(schema: Any, weights: Mapping[str, Any]) -> np.ndarray:
    """``{feature: weight}`` as one weight per feature (features not named weigh 1)."""
    unknown = sorted(set(map(str, weights)) - set(schema.names))
    if unknown:
        raise ValidationError(
            f"The 'measure' weights name unknown features {unknown}. "
            f"Known features: {schema.names}."
        )
    w = np.ones(len(schema))
    for name, v in weights.items():
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float | np.integer | np.floating)
            or not np.isfinite(v)
            or v < 0
        ):
            raise ValidationError(
                f"The 'measure' weight of {name!r} must be a finite number >= 0. Got {v!r}."
            )
        w[schema.index(str(name))] = float(v)
    return w


def row_constraints(constraints: Any, frame: pd.DataFrame) -> list[Constraints | None]:
    """One Constraints (or None) per row of ``frame``."""
    if constraints is None or isinstance(constraints, Constraints):
        _no_timeline([constraints])
        return [constraints] * len(frame)
    if isinstance(constraints, str | bytes | Mapping) or not isinstance(constraints, Sequence):
        raise ValidationError(
            f"The 'constraints' parameter must be a cf.Constraints, one per row of X, or None. "
            f"Got {type(constraints).__name__}."
        )
    if len(constraints) != len(frame):
        raise ValidationError(
            f"The 'constraints' parameter lists {len(constraints)} Constraints for {len(frame)} "
            "rows of X; give one per row, in X's order (or one for everyone)."
        )
    for c in constraints:
        if c is not None and not isinstance(c, Constraints):
            raise ValidationError(
                f"The 'constraints' entries must be cf.Constraints or None. Got {type(c).__name__}."
            )
    _no_timeline(constraints)
    return list(constraints)


def _no_timeline(constraints: Sequence[Constraints | None]) -> None:
    """Global actions are applied today: a timeline is refused, not ignored."""
    if any(c is not None and c.timeline is not None for c in constraints):
        raise UnsupportedConstraintError(
            "global_recourse does not take a timeline (Constraints(timeline=...)): its actions "
            "are changes applied today, and it would price the aging in each person's own "
            "answer as effort. Drop the timeline for global recourse; cf.audit honours it."
        )
