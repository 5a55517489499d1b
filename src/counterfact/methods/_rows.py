"""Per-row preparation of ``explain``: each row's constraints and random stream."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..constraints import Constraints, ResolvedConstraints
from ..exceptions import ConstraintError, UnsupportedConstraintError, ValidationError

if TYPE_CHECKING:  # pragma: no cover
    from ._base import CounterfactualMethod

__all__: list[str] = []


def _resolve_rows(
    method: CounterfactualMethod, frame: pd.DataFrame, constraints: Any, errors: str | None
) -> tuple[bool, str, list[ResolvedConstraints | ConstraintError], ResolvedConstraints, Any]:
    """Check and resolve the constraints of every row before any search.

    Returns ``(per_row, errors, row_resolved, resolved, given)``: whether one
    Constraints per row was given, the effective ``errors`` mode, each row's
    resolved constraints (or, for a per-row entry that contradicts the schema
    under ``errors="coerce"``, its :class:`ConstraintError`), the first entry
    resolved, and what the user passed (kept in the result).
    """
    per_row = isinstance(constraints, (list, tuple))
    if errors is None:
        errors = "coerce" if per_row else "raise"
    if errors not in ("coerce", "raise"):
        raise ValidationError(f"errors must be 'coerce' or 'raise'. Got {errors!r}.")
    if per_row and len(constraints) != len(frame):
        raise ValidationError(
            f"constraints has {len(constraints)} entries for {len(frame)} rows of X; pass one "
            "Constraints per row, or a single Constraints for every row."
        )
    items: list[Any] = [Constraints() if c is None else c for c in (constraints if per_row else [constraints])]
    # each distinct object checked and resolved once; a per-row one that
    # contradicts the schema is kept as its error when coercing
    resolved_by_id: dict[int, ResolvedConstraints | ConstraintError] = {}
    for k, c in enumerate(items):
        if not isinstance(c, Constraints):
            where = f"constraints[{k}]" if per_row else "constraints"
            raise ValidationError(f"{where} must be a cf.Constraints. Got {type(c).__name__}.")
        if id(c) not in resolved_by_id:
            unsupported = sorted(c.kinds() - set(method.supported_constraints))
            if unsupported:
                raise UnsupportedConstraintError(
                    f"{type(method).__name__} cannot honour constraints of kind {unsupported}. It supports "
                    f"{sorted(method.supported_constraints)}; use a method that supports them "
                    "(CE-OCL supports causal constraints) or drop them."
                )
            try:
                resolved_by_id[id(c)] = c.resolve(method.schema_)
            except ConstraintError as exc:
                if not per_row or errors == "raise":
                    raise
                resolved_by_id[id(c)] = exc
    row_resolved = [resolved_by_id[id(items[k if per_row else 0])] for k in range(len(frame))]
    first = resolved_by_id[id(items[0])] if items else None
    resolved = first if isinstance(first, ResolvedConstraints) else Constraints().resolve(method.schema_)
    return per_row, errors, row_resolved, resolved, items if per_row else items[0]


def _position_seeds(random_state: int | None, offset: int, n: int) -> list[np.random.SeedSequence]:
    """One seed per query from ``(random_state, position)``; fresh entropy when
    ``random_state`` is None (one draw per call, shared by its positions)."""
    base = int(np.random.SeedSequence().entropy) if random_state is None else int(random_state)  # type: ignore[arg-type]
    return [np.random.SeedSequence([base, offset + i]) for i in range(n)]
