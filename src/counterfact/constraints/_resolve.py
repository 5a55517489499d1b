"""Resolving a :class:`~counterfact.constraints.Constraints` against a schema.

The user's constraints are checked against the schema (every feature named
exists, every kind applies to the feature's kind) and merged with the schema's
own actionability into one :class:`ResolvedConstraints`: the immutable set, the
monotone direction of each feature, the numeric ranges, the allowed values, the
cap on changes, the causal relations and the relations between features.  Every
contradiction raises a :class:`~counterfact.exceptions.ConstraintError` that names it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..exceptions import ConstraintError
from ..schema import Schema
from ._bounds import ResolvedConstraints, why_fixed
from ._relations_bound import resolve_relations
from ._timeline import resolve_timeline

__all__ = ["resolve"]


def resolve(constraints: Any, schema: Schema) -> ResolvedConstraints:
    """``constraints`` (a :class:`~counterfact.constraints.Constraints`) validated
    against ``schema`` and merged with its actionability."""
    _check_names(constraints, schema)
    immutable, direction = _mutability(constraints, schema)
    timeline = resolve_timeline(constraints, schema, immutable, direction)
    ranges = _ranges(constraints, schema)
    allowed = _allowed(constraints, schema)
    _check_causal(constraints, schema, immutable)
    return ResolvedConstraints(
        schema=schema,
        direction={k: v for k, v in direction.items() if k not in immutable},
        immutable=frozenset(immutable),
        ranges=ranges,
        allowed_values=allowed,
        max_changes=constraints.max_changes,
        causal=tuple(constraints.causal),
        source=constraints,
        relations=resolve_relations(constraints.relations, schema),
        timeline=timeline,
    )


def _check_names(c: Any, schema: Schema) -> None:
    """Every feature the constraints name exists in the schema."""
    known = set(schema.names)

    def check(names: Iterable[str], what: str) -> None:
        unknown = sorted(set(names) - known)
        if unknown:
            raise ConstraintError(
                f"Constraints.{what} names unknown features {unknown}. Known features: "
                f"{schema.names}."
            )

    check(c.immutable, "immutable")
    check(c.increasing, "increasing")
    check(c.decreasing, "decreasing")
    check(c.ranges, "ranges")
    check(c.allowed_values, "allowed_values")
    if c.features_to_vary is not None:
        check(c.features_to_vary, "features_to_vary")
    for rel in c.causal:
        check([rel.child, *rel.parents], "causal")


def _mutability(c: Any, schema: Schema) -> tuple[set[str], dict[str, int]]:
    """The immutable features and each monotone feature's direction (+1 / -1),
    from the schema's actionability and the constraints together."""
    immutable = set(c.immutable)
    direction: dict[str, int] = {}
    for f in schema:
        if f.actionability in ("immutable", "time"):
            immutable.add(f.name)
        elif f.actionability == "increasing":
            direction[f.name] = 1
        elif f.actionability == "decreasing":
            direction[f.name] = -1
    for names, d in ((c.increasing, 1), (c.decreasing, -1)):
        for n in names:
            _check_direction(schema, n, d, immutable, direction)
            direction[n] = d
    if c.features_to_vary is not None:
        listed = set(c.features_to_vary) & immutable
        timed = sorted(n for n in listed if schema[n].actionability == "time")
        if timed and getattr(c, "timeline", None) is None:
            raise ConstraintError(
                f"features_to_vary lists {timed}, which only time moves (actionability "
                "'time'), and the constraints give no timeline. Give one for time to move "
                "them (Constraints(timeline=cf.datasets.timeline(data, horizon=24))), or "
                "leave them out of features_to_vary: no action changes them."
            )
        protected = sorted(listed - set(timed))  # under a timeline, time moves the timed ones
        if protected:
            raise ConstraintError(
                f"features_to_vary lists {protected}, which are immutable (in the schema or the "
                "constraints). Protected features cannot be changed; remove them from "
                "features_to_vary, or override the schema's actionability."
            )
        immutable |= set(schema.names) - set(c.features_to_vary)
    return immutable, direction


def _check_direction(
    schema: Schema, name: str, d: int, immutable: set[str], direction: dict[str, int]
) -> None:
    """A feature may be made increasing (``d=1``) or decreasing (``d=-1``)."""
    f = schema[name]
    word, other = ("increasing", "decreasing") if d > 0 else ("decreasing", "increasing")
    if not f.is_ordered:
        raise ConstraintError(
            f"Feature '{name}' is {f.kind} (unordered) and cannot be {word}. Use immutable, "
            "allowed_values, "
            "or declare it ordinal in the schema."
        )
    if name in immutable and f.actionability == "immutable":
        raise ConstraintError(
            f"Feature '{name}' is immutable in the schema but the constraints make it {word}. "
            "Override the "
            "schema (schema.with_actionability(...)) if it really may change."
        )
    if direction.get(name, d) != d:
        raise ConstraintError(
            f"Feature '{name}' is {other} in the schema but {word} in the constraints; that is "
            "contradictory."
        )


def _ranges(c: Any, schema: Schema) -> dict[str, tuple[float, float]]:
    """Numeric ranges, open ends as infinities."""
    ranges: dict[str, tuple[float, float]] = {}
    for n, (lo, hi) in c.ranges.items():
        f = schema[n]
        if not f.is_numeric:
            raise ConstraintError(
                f"ranges['{n}']: feature '{n}' is {f.kind}; ranges apply to numeric features. "
                "Use allowed_values for discrete features."
            )
        ranges[n] = (-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))
    return ranges


def _allowed(c: Any, schema: Schema) -> dict[str, tuple[Any, ...]]:
    """Allowed values, each inside its feature's domain."""
    allowed: dict[str, tuple[Any, ...]] = {}
    for n, vs in c.allowed_values.items():
        f = schema[n]
        if len(vs) == 0:
            raise ConstraintError(f"allowed_values['{n}'] is empty.")
        bad = [v for v in vs if not f.contains(v)]
        if bad:
            raise ConstraintError(
                f"allowed_values['{n}'] has values {bad} outside the feature's domain "
                f"({list(f.categories or ()) if not f.is_numeric else (f.lower, f.upper)})."
            )
        allowed[n] = tuple(vs)
    return allowed


def _check_causal(c: Any, schema: Schema, immutable: set[str]) -> None:
    """Causal relations link numeric features, and their child may change."""
    for rel in c.causal:
        for n in (rel.child, *rel.parents):
            if not schema[n].is_numeric:
                raise ConstraintError(
                    f"Causal relation for '{rel.child}': '{n}' is {schema[n].kind}; causal "
                    "relations "
                    "support numeric features only."
                )
        if rel.child in immutable:
            raise ConstraintError(
                f"Causal relation: child '{rel.child}' {why_fixed(schema, c, rel.child)}, so "
                "it cannot follow its parents. Let it change, or drop the relation."
            )
