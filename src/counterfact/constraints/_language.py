"""One constraint language for every method, and the one checker everyone uses.

:class:`Constraints` holds what a user asks of a counterfactual: immutable
features, monotone directions, value ranges, allowed values, the features the
user is willing to change, a cap on the number of changes, causal
relations and relations between features (linear inequalities and
implications, :mod:`._relations`).  :meth:`Constraints.resolve` merges it with the schema's
actionability and validates it; :meth:`ResolvedConstraints.for_query` turns it
into per-feature bounds around one query, which methods translate into their
own mechanism; :meth:`Constraints.violations` (and :func:`violations`) is the
single checker used by verification and by the metrics.

Semantics (documented decisions)
--------------------------------
* ``ranges`` and ``allowed_values`` restrict the counterfactual's value of the
  feature whether or not it changed; a query outside a user range must move
  into it (if it cannot, the query is *infeasible*, a status).  An immutable
  feature whose range excludes the query's own value is a contradiction and
  raises :class:`~counterfact.exceptions.ConstraintError`.
* The schema's domain (observed bounds, known categories) restricts *changed*
  values only: a query outside the observed bounds keeps its own value.  For
  numeric features the allowed interval is the hull of the domain and the
  query's value.
* ``increasing``/``decreasing`` compare ordinal features by rank.
* Features not in ``features_to_vary`` (when given) are immutable.
* Causal relations follow CE-OCL's eq. (7):
  ``x_child' = x_child + c(parents') - c(parents)``.
* Relations (``"credit_amount <= 10 * income"``,
  ``"if employment != employment@ then years_employed == 0"``) hold for the
  counterfactual's values (``name``) and the query's (``name@``); ordinal
  features take part by rank.  They are checked with a relative tolerance of
  1e-6 (:mod:`._relations_bound`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import ConstraintError
from ..schema import Schema
from ..schema._numbers import show_number
from ._bounds import ResolvedConstraints
from ._causal import Causal
from ._inputs import _allowed_values, _feature_relations, _kind, _names, _ranges, _relations
from ._kinds import CONSTRAINT_KINDS, constraint_kinds
from ._relations import Relation
from ._resolve import resolve
from ._timeline import Timeline
from ._violations import check_violations

__all__ = ["CONSTRAINT_KINDS", "Constraints", "violations"]


@dataclass(frozen=True)
class Constraints:
    """What a counterfactual must respect, in addition to the schema.

    Parameters
    ----------
    immutable : iterable of str
        Features that must not change.
    increasing, decreasing : iterable of str
        Features that may only go up / down (numeric, or ordinal by rank).
    ranges : mapping str -> (low, high)
        Inclusive bounds on a numeric feature's counterfactual value; either
        side may be ``None`` for unbounded.
    allowed_values : mapping str -> sequence
        The values a feature's counterfactual value may take.
    features_to_vary : iterable of str, optional
        The only features that may change (UFCE's user feedback); every other
        feature is immutable.  ``None`` means all actionable features.
    max_changes : int, optional
        At most this many features may change.
    causal : sequence of Causal
        Causal relations (CE-OCL eq. 7).  Only methods that support them accept them.
    relations : sequence of str or Relation
        Linear relations between features, over the counterfactual's values
        (``name``) and the query's own values (``name@``), ordinal features by
        rank: ``"credit_amount <= 10 * income"``,
        ``"age - age@ >= 2 * (education - education@)"``; and implications
        ``"if employment != employment@ then years_employed == 0"`` whose
        condition and consequence are such comparisons or comparisons of a
        category (``purpose == 'car'``, ``housing != housing@``).  A name that
        is not an identifier goes in backticks (`` `capital-gain` <= 5000 ``).
        See ``docs/constraints.md``.
    timeline : Timeline or int, optional
        Recourse over time (:class:`~counterfact.Timeline`; a number is its horizon in
        months): every answer then has an elapsed time, features only time moves advance
        with it, rate-bound features change at most so fast.  Without one, a feature
        whose actionability is ``"time"`` is immutable.

    Examples
    --------
    >>> Constraints(immutable=["age"], increasing=["education"], ranges={"hours": (0, 60)})
    """

    immutable: Iterable[str] = ()
    increasing: Iterable[str] = ()
    decreasing: Iterable[str] = ()
    ranges: Mapping[str, tuple[float | None, float | None]] = field(default_factory=dict)
    allowed_values: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    features_to_vary: Iterable[str] | None = None
    max_changes: int | None = None
    causal: Sequence[Causal] = ()
    relations: Sequence[str | Relation] = ()
    timeline: Timeline | None = None

    def __post_init__(self) -> None:
        if self.timeline is not None:
            object.__setattr__(self, "timeline", Timeline.from_dict(self.timeline))
        for attr in ("immutable", "increasing", "decreasing"):
            object.__setattr__(self, attr, _names(getattr(self, attr), f"Constraints.{attr}"))
        if self.features_to_vary is not None:
            ftv = _names(self.features_to_vary, "Constraints.features_to_vary")
            if len(ftv) == 0:
                raise ConstraintError(
                    "Constraints.features_to_vary is empty: no feature may change, so no "
                    "counterfactual can exist. Name at least one feature, or pass None for all."
                )
            object.__setattr__(self, "features_to_vary", ftv)
        object.__setattr__(self, "ranges", _ranges(self.ranges))
        object.__setattr__(self, "allowed_values", _allowed_values(self.allowed_values))
        object.__setattr__(self, "causal", _relations(self.causal))
        object.__setattr__(self, "relations", _feature_relations(self.relations))
        if self.max_changes is not None:
            if (
                isinstance(self.max_changes, bool)
                or not isinstance(self.max_changes, (int, np.integer))
                or self.max_changes < 1
            ):
                raise ConstraintError(
                    "Constraints.max_changes must be an int >= 1 (or None). Got "
                    f"{show_number(self.max_changes)}."
                )
            object.__setattr__(self, "max_changes", int(self.max_changes))
        # contradictions that need no schema
        for a, b in (
            ("immutable", "increasing"),
            ("immutable", "decreasing"),
            ("increasing", "decreasing"),
        ):
            both = sorted(set(getattr(self, a)) & set(getattr(self, b)))
            if both:
                raise ConstraintError(
                    f"Features {both} are both {a} and {b}; that is contradictory. Keep one."
                )
        if self.features_to_vary is not None:
            ftv = set(self.features_to_vary)  # type: ignore[arg-type]
            both = sorted(ftv & set(self.immutable))
            if both:
                raise ConstraintError(
                    f"Features {both} are listed in features_to_vary but also immutable. Remove "
                    "them "
                    "from one of the two lists."
                )

    # ----------------------------------------------------------------- kinds
    def kinds(self) -> set[str]:
        """The kinds of constraint this object actually uses (see CONSTRAINT_KINDS)."""
        return {k.name for k in constraint_kinds() if k.used(self)}

    def merge(self, other: Constraints | None) -> Constraints:
        """Both sets of constraints at once (the stricter wins; ranges intersect)."""
        if other is None:
            return self
        ranges = dict(self.ranges)
        for k, (lo, hi) in other.ranges.items():
            if k in ranges:
                a, b = ranges[k]
                lo = lo if a is None else (a if lo is None else max(a, lo))
                hi = hi if b is None else (b if hi is None else min(b, hi))
            ranges[k] = (lo, hi)
        allowed = dict(self.allowed_values)
        for k, vs in other.allowed_values.items():
            allowed[k] = tuple(v for v in vs if v in allowed[k]) if k in allowed else tuple(vs)
        ftv: Any = self.features_to_vary
        if other.features_to_vary is not None:
            ftv = (
                other.features_to_vary
                if ftv is None
                else tuple(f for f in ftv if f in set(other.features_to_vary))  # type: ignore
            )
        caps = [m for m in (self.max_changes, other.max_changes) if m is not None]
        return Constraints(
            immutable=_union(self.immutable, other.immutable),
            increasing=_union(self.increasing, other.increasing),
            decreasing=_union(self.decreasing, other.decreasing),
            ranges=ranges,
            allowed_values=allowed,
            features_to_vary=ftv,
            max_changes=min(caps) if caps else None,
            causal=(*self.causal, *other.causal),
            relations=tuple(dict.fromkeys((*self.relations, *other.relations))),
            timeline=other.timeline
            if self.timeline is None
            else self.timeline.merge(other.timeline),
        )

    # -------------------------------------------------------------- resolving
    def resolve(self, schema: Schema) -> ResolvedConstraints:
        """Validate against ``schema`` and merge with its actionability (see :mod:`._resolve`)."""
        return resolve(self, schema)

    # --------------------------------------------------------------- checking
    def violations(
        self, query: pd.Series | pd.DataFrame, counterfactuals: pd.DataFrame, schema: Schema
    ) -> pd.DataFrame:
        """Every violated constraint, one row each (see :func:`violations`)."""
        return violations(query, counterfactuals, schema, self)

    # ------------------------------------------------------------ (de)serial
    def to_dict(self, *, strict: bool = True) -> dict[str, Any]:
        """JSON/YAML-friendly form: one key per kind used (:mod:`._kinds`).

        Causal relations are written when linear; a learned one raises, or with
        ``strict=False`` is left out (every other kind is kept).
        """
        return {
            k.name: k.to_json(k.value(self), strict=strict)
            for k in constraint_kinds()
            if k.used(self)
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Constraints:
        """Build from a mapping as read from YAML/JSON; unknown keys raise.

        A key whose value is empty (``immutable:`` in YAML, ``null`` in JSON)
        means "no such constraint", except ``features_to_vary: null``, which
        keeps its meaning "every actionable feature".
        """
        if d is None:
            return cls()
        if not isinstance(d, Mapping):
            raise ConstraintError(
                "Constraints must be a mapping of constraint kind -> value (keys "
                f"{sorted(CONSTRAINT_KINDS)}). "
                f"Got {_kind(d)}."
            )
        unknown = sorted(str(k) for k in set(d) - set(CONSTRAINT_KINDS))
        if unknown:
            raise ConstraintError(
                f"Unknown constraint keys {unknown}. Known keys: {sorted(CONSTRAINT_KINDS)}."
            )
        kinds = {k.name: k for k in constraint_kinds()}
        kw = {str(k): kinds[str(k)].from_json(v) for k, v in d.items() if v is not None}
        return cls(**kw)


def _union(a: Iterable[str], b: Iterable[str]) -> tuple[str, ...]:
    """The names of ``a`` then those of ``b`` not already listed."""
    return tuple(dict.fromkeys((*a, *b)))


def violations(
    query: pd.Series | pd.DataFrame,
    counterfactuals: pd.DataFrame,
    schema: Schema,
    constraints: Constraints | None = None,
) -> pd.DataFrame:
    """Check counterfactuals of one query against the schema and constraints.

    Returns a DataFrame with one row per violation and columns ``row`` (the
    counterfactual's index label), ``feature``, ``kind`` and ``detail``.  Kinds:
    ``domain`` (changed value outside the feature's domain, not integral, unknown
    category), ``immutable``, ``increasing``, ``decreasing``, ``ranges``,
    ``allowed_values``, ``features_to_vary``, ``max_changes``, ``causal``,
    ``relations`` (``feature``: the features the relation reads) and ``timeline``
    (time-driven features that agree on no elapsed month within the horizon).  An
    empty frame means every counterfactual satisfies everything.
    """
    constraints = constraints or Constraints()
    return check_violations(
        query, counterfactuals, schema, constraints, constraints.resolve(schema)
    )
