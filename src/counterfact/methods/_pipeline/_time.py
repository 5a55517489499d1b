"""Plans by horizon: :func:`explain_by_horizon`, one explain call per horizon.

Each call searches under the query's timeline with its horizon set to one of the
horizons asked, so the answer a plan shows for a horizon is that call's answer:
proven cheapest (or proven absent) exactly where the method proves it.  The result
returned is the longest horizon's, with every call's result in
``result.horizon_results`` (read by :meth:`CounterfactualResult.plans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...constraints import Constraints
from ...exceptions import NotFittedError, ValidationError
from ._explain import explain as run

__all__ = ["explain_by_horizon"]


def explain_by_horizon(
    method: Any,
    X: Any,
    horizons: Sequence[int],
    *,
    constraints: Constraints | Sequence[Constraints],
    **explain: Any,
) -> Any:
    """The fitted ``method``'s answers for ``X`` under each horizon of ``horizons``
    (months), every other setting of ``constraints`` kept; ``explain`` holds the other
    arguments of ``method.explain``.  Returns the longest horizon's result, with
    ``horizon_results`` (horizon -> result) filled in."""
    hs = _checked(horizons)
    if getattr(method, "model_", None) is None:
        raise NotFittedError(
            f"This {type(method).__name__} is not fitted yet; call fit(model, data) first."
        )
    per_row = isinstance(constraints, (list, tuple))
    items = list(constraints) if per_row else [constraints]
    for k, c in enumerate(items):
        if not isinstance(c, Constraints) or c.timeline is None:
            where = f"constraints[{k}]" if per_row else "constraints"
            raise ValidationError(
                f"{where} must be a cf.Constraints with a timeline; pass "
                "cf.Constraints(timeline=cf.Timeline(...))."
            )
    results = {}
    for h in hs:
        at_h = [_with_horizon(c, h) for c in items]
        results[h] = run(method, X, constraints=at_h if per_row else at_h[0], **explain)
    main = results[hs[-1]]
    main.horizon_results = results
    return main


def _with_horizon(c: Constraints, horizon: int) -> Constraints:
    """``c`` with its timeline's horizon set to ``horizon`` (everything else kept)."""
    assert c.timeline is not None  # checked by the caller
    return replace(c, timeline=c.timeline.with_horizon(horizon))


def _checked(horizons: Sequence[int]) -> list[int]:
    """The horizons as sorted distinct whole months; ValidationError otherwise."""
    try:
        hs = list(horizons)
    except TypeError:
        hs = [horizons]  # type: ignore[list-item]
    for h in hs:
        if isinstance(h, bool) or not isinstance(h, int) or h < 0:
            raise ValidationError(
                f"horizons must be whole months >= 0, e.g. (0, 6, 12). Got {h!r}."
            )
    if not hs:
        raise ValidationError("horizons is empty; give at least one, e.g. (0, 6, 12).")
    return sorted(set(hs))
