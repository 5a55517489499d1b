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

from .._utils._values import _py
from ..exceptions import ConstraintError
from ..schema import Schema
from ..schema._numbers import finite_number, show_number
from ._bounds import ResolvedConstraints
from ._causal import Causal
from ._relations import Relation
from ._resolve import resolve
from ._violations import check_violations

__all__ = ["CONSTRAINT_KINDS", "Constraints", "violations"]

#: Every kind of constraint; methods declare which they honour natively.
CONSTRAINT_KINDS: tuple[str, ...] = (
    "immutable",
    "increasing",
    "decreasing",
    "ranges",
    "allowed_values",
    "features_to_vary",
    "max_changes",
    "causal",
    "relations",
)


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

    def __post_init__(self) -> None:
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
                    f"Constraints.max_changes must be an int >= 1 (or None). Got {show_number(self.max_changes)}."
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
            both = sorted(set(self.features_to_vary) & set(self.immutable))  # type: ignore[arg-type]
            if both:
                raise ConstraintError(
                    f"Features {both} are listed in features_to_vary but also immutable. Remove them "
                    "from one of the two lists."
                )

    # ----------------------------------------------------------------- kinds
    def kinds(self) -> set[str]:
        """The kinds of constraint this object actually uses (see CONSTRAINT_KINDS)."""
        used = set()
        for k in (
            "immutable",
            "increasing",
            "decreasing",
            "ranges",
            "allowed_values",
            "causal",
            "relations",
        ):
            if getattr(self, k):
                used.add(k)
        if self.features_to_vary is not None:
            used.add("features_to_vary")
        if self.max_changes is not None:
            used.add("max_changes")
        return used

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
                else tuple(f for f in ftv if f in set(other.features_to_vary))  # type: ignore[arg-type]
            )
        caps = [m for m in (self.max_changes, other.max_changes) if m is not None]
        return Constraints(
            immutable=tuple(dict.fromkeys((*self.immutable, *other.immutable))),  # type: ignore[misc]
            increasing=tuple(dict.fromkeys((*self.increasing, *other.increasing))),  # type: ignore[misc]
            decreasing=tuple(dict.fromkeys((*self.decreasing, *other.decreasing))),  # type: ignore[misc]
            ranges=ranges,
            allowed_values=allowed,
            features_to_vary=ftv,
            max_changes=min(caps) if caps else None,
            causal=(*self.causal, *other.causal),
            relations=tuple(dict.fromkeys((*self.relations, *other.relations))),
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
    def to_dict(self) -> dict[str, Any]:
        """JSON/YAML-friendly form (causal relations only when linear)."""
        out: dict[str, Any] = {}
        for k in ("immutable", "increasing", "decreasing"):
            if getattr(self, k):
                out[k] = list(getattr(self, k))
        if self.ranges:
            out["ranges"] = {k: list(v) for k, v in self.ranges.items()}
        if self.allowed_values:
            out["allowed_values"] = {k: list(v) for k, v in self.allowed_values.items()}
        if self.features_to_vary is not None:
            out["features_to_vary"] = list(self.features_to_vary)
        if self.max_changes is not None:
            out["max_changes"] = self.max_changes
        if self.causal:
            rels = []
            for c in self.causal:
                if c.kind != "linear":
                    raise ConstraintError("Only linear causal relations can be serialised.")
                rels.append(
                    {
                        "child": c.child,
                        "parents": list(c.parents),
                        "coef": dict(c.coef or {}),
                        "intercept": c.intercept,
                    }
                )
            out["causal"] = rels
        if self.relations:
            out["relations"] = [str(r) for r in self.relations]
        return out

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
                f"Constraints must be a mapping of constraint kind -> value (keys {sorted(CONSTRAINT_KINDS)}). "
                f"Got {_kind(d)}."
            )
        unknown = sorted(str(k) for k in set(d) - set(CONSTRAINT_KINDS))
        if unknown:
            raise ConstraintError(
                f"Unknown constraint keys {unknown}. Known keys: {sorted(CONSTRAINT_KINDS)}."
            )
        kw = {str(k): v for k, v in d.items() if v is not None or k == "features_to_vary"}
        if "ranges" in kw:
            kw["ranges"] = _mapping(kw["ranges"], "ranges")
        if "causal" in kw:
            kw["causal"] = [
                _causal_from_dict(c, k) for k, c in enumerate(_sequence(kw["causal"], "causal"))
            ]
        if "relations" in kw:
            kw["relations"] = _sequence(kw["relations"], "relations")
        return cls(**kw)


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
    ``allowed_values``, ``features_to_vary``, ``max_changes``, ``causal`` and
    ``relations`` (``feature``: the features the relation reads).  An
    empty frame means every counterfactual satisfies everything.
    """
    constraints = constraints or Constraints()
    return check_violations(
        query, counterfactuals, schema, constraints, constraints.resolve(schema)
    )


# ------------------------------------------------------------ input checks
def _kind(value: Any) -> str:
    """``None``, or ``a list: [1, 2]``, for error messages."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}: {_short(value)}"


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _sequence(value: Any, what: str) -> list[Any]:
    """A list from a list-like ``value`` (not a string, not a mapping); ConstraintError otherwise."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise ConstraintError(f"{what} must be a list. Got {_kind(value)}.")
    return list(value)


def _mapping(value: Any, what: str) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise ConstraintError(
            f"{what} must be a mapping of feature name -> value. Got {_kind(value)}."
        )
    for k in value:
        if not isinstance(k, str):
            raise ConstraintError(
                f"{what} must be keyed by feature names (str). Got the key {_short(k)}."
            )
    return dict(value)


def _names(value: Any, what: str) -> tuple[str, ...]:
    """Feature names from a name, a list of names, or None (no names)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise ConstraintError(f"{what} must list feature names (str). Got {_kind(value)}.")
    out = tuple(value)
    for n in out:
        if not isinstance(n, str):
            raise ConstraintError(f"{what} must list feature names (str). Got {_short(n)}.")
    return out


def _ranges(value: Any) -> dict[str, tuple[float | None, float | None]]:
    """``ranges`` checked: (low, high) pairs of finite numbers or None, low <= high."""
    if value is None:
        return {}
    out: dict[str, tuple[float | None, float | None]] = {}
    for name, rng in _mapping(value, "Constraints.ranges").items():
        if (
            isinstance(rng, (str, bytes, Mapping))
            or not isinstance(rng, Iterable)
            or len(rng := tuple(rng)) != 2
        ):
            raise ConstraintError(
                f"ranges['{name}'] must be a (low, high) pair. Got {_short(rng)}."
            )
        pair: list[float | None] = []
        for side, v in zip(("low", "high"), rng, strict=True):
            if v is None:
                pair.append(None)
                continue
            hint = "Use None for an open side, e.g. (None, 50) for 'at most 50'."
            num = finite_number(
                v, f"ranges['{name}'] {side} bound", error=ConstraintError, hint=hint
            )
            pair.append(_py(v) if isinstance(v, (int, np.integer)) and abs(num) <= 2**53 else num)
        lo, hi = pair
        if lo is not None and hi is not None and float(lo) > float(hi):
            raise ConstraintError(f"ranges['{name}'] = {_short(rng)} is empty (low > high).")
        out[name] = (lo, hi)
    return out


def _allowed_values(value: Any) -> dict[str, tuple[Any, ...]]:
    """``allowed_values`` checked: a list of values per feature; numbers finite."""
    if value is None:
        return {}
    out: dict[str, tuple[Any, ...]] = {}
    for name, vs in _mapping(value, "Constraints.allowed_values").items():
        if vs is None or isinstance(vs, (str, bytes, Mapping)) or not isinstance(vs, Iterable):
            example = "" if vs is None else f", e.g. {{'{name}': [{_short(vs)}]}}"
            raise ConstraintError(
                f"allowed_values['{name}'] must be a list of the values the feature may take{example}. "
                f"Got {_kind(vs)}."
            )
        vals = tuple(_py(v) for v in vs)
        for v in vals:
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                finite_number(v, f"allowed_values['{name}'] value", error=ConstraintError)
        out[name] = vals
    return out


def _relations(value: Any) -> tuple[Causal, ...]:
    if value is None:
        return ()
    if isinstance(value, Causal):
        return (value,)
    out = tuple(_sequence(value, "Constraints.causal"))
    for c in out:
        if not isinstance(c, Causal):
            raise ConstraintError(
                f"Constraints.causal takes Causal objects. Got {type(c).__name__}."
            )
    return out


def _feature_relations(value: Any) -> tuple[Relation, ...]:
    """Relations from their texts (or :class:`Relation` objects), each parsed once."""
    if value is None:
        return ()
    items = (
        [value] if isinstance(value, (str, Relation)) else _sequence(value, "Constraints.relations")
    )
    out = []
    for k, r in enumerate(items):
        if isinstance(r, Relation):
            out.append(r)
        elif isinstance(r, str):
            try:
                out.append(Relation(r))
            except ConstraintError as exc:
                raise ConstraintError(f"Constraints.relations[{k}]: {exc}") from None
        else:
            raise ConstraintError(
                f"Constraints.relations[{k}] must be a string such as 'credit_amount <= 10 * income'. Got {_kind(r)}."
            )
    return tuple(dict.fromkeys(out))


def _causal_from_dict(c: Any, k: int) -> Causal:
    """One linear causal relation from ``{"child", "parents", "coef", "intercept"}``."""
    where = f"causal[{k}]"
    if not isinstance(c, Mapping):
        raise ConstraintError(
            f"{where} must be a mapping with keys child, parents, coef (and optionally intercept). Got {_short(c)}."
        )
    known = {"child", "parents", "coef", "intercept", "tol"}
    unknown = sorted(str(x) for x in set(c) - known)
    if unknown:
        raise ConstraintError(f"{where} has unknown keys {unknown}. Known keys: {sorted(known)}.")
    missing = [x for x in ("child", "parents", "coef") if x not in c]
    if missing:
        raise ConstraintError(
            f"{where} lacks the keys {missing}; a linear relation needs child, parents and coef."
        )
    extra = {"tol": c["tol"]} if "tol" in c else {}
    return Causal(
        child=c["child"],
        parents=_names(c["parents"], f"{where}.parents"),
        coef=_mapping(c["coef"], f"{where}.coef"),
        intercept=c.get("intercept", 0.0),
        **extra,
    )
