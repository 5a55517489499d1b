"""One constraint language for every method, and the one checker everyone uses.

:class:`Constraints` holds what a user asks of a counterfactual: immutable
features, monotone directions, value ranges, allowed values, the features the
user is willing to change, a cap on the number of changes, and causal
relations.  :meth:`Constraints.resolve` merges it with the schema's
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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import ConstraintError
from .schema import Feature, Schema, _py

__all__ = [
    "CONSTRAINT_KINDS",
    "Causal",
    "Constraints",
    "FeatureBounds",
    "QueryBounds",
    "ResolvedConstraints",
    "satisfied_many",
    "violations",
]

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
)

_NUM_TOL = 1e-7


def changed(feature: Feature, a: Any, b: Any) -> bool:
    """Whether two values of ``feature`` differ (numeric values with a relative tolerance)."""
    if feature.is_numeric:
        fa, fb = float(a), float(b)
        return abs(fa - fb) > _NUM_TOL * max(1.0, abs(fa), abs(fb))
    return _py(a) != _py(b)


@dataclass(frozen=True)
class Causal:
    """A causal relation ``child = c(parents)`` used as CE-OCL's eq. (7).

    Give exactly one of

    * ``coef`` (and ``intercept``): a linear structural equation
      ``c(p) = intercept + sum_k coef[k] * p_k`` -- encodable by every exact method;
    * ``model``: a fitted regressor predicting the child from a DataFrame of
      the parents (CE-OCL embeds it through the model compiler);
    * ``fn``: a Python callable taking a DataFrame of the parents and
      returning an array (checked, but not encodable in a solver).

    The counterfactual must satisfy ``x'_child - x_child = c(p') - c(p)`` within
    ``tol`` (relative to the child's range).
    """

    child: str
    parents: tuple[str, ...]
    coef: Mapping[str, float] | None = None
    intercept: float = 0.0
    model: Any = None
    fn: Callable[[pd.DataFrame], Any] | None = None
    tol: float = 1e-3

    def __post_init__(self) -> None:
        object.__setattr__(self, "parents", tuple(self.parents))
        given = sum(x is not None for x in (self.coef, self.model, self.fn))
        if given != 1:
            raise ConstraintError(
                f"Causal relation for '{self.child}' needs exactly one of coef=, model= or fn=. "
                f"Got {given}."
            )
        if not self.parents:
            raise ConstraintError(f"Causal relation for '{self.child}' needs at least one parent.")
        if self.child in self.parents:
            raise ConstraintError(f"Causal relation: '{self.child}' cannot be its own parent.")
        if self.coef is not None:
            unknown = set(self.coef) - set(self.parents)
            if unknown:
                raise ConstraintError(
                    f"Causal relation for '{self.child}': coef names {sorted(unknown)} "
                    f"which are not parents {list(self.parents)}."
                )
        if self.model is not None and not hasattr(self.model, "predict"):
            raise ConstraintError(
                f"Causal relation for '{self.child}': model must be a fitted regressor with predict()."
            )

    @property
    def kind(self) -> str:
        """``"linear"``, ``"model"`` or ``"function"``."""
        if self.coef is not None:
            return "linear"
        return "model" if self.model is not None else "function"

    def evaluate(self, parents: pd.DataFrame) -> np.ndarray:
        """``c(parents)`` for each row."""
        P = parents.loc[:, list(self.parents)]
        if self.coef is not None:
            out = np.full(len(P), float(self.intercept))
            for k, w in self.coef.items():
                out += float(w) * pd.to_numeric(P[k]).to_numpy(dtype=float)
            return out
        if self.model is not None:
            return np.asarray(self.model.predict(P), dtype=float).reshape(-1)
        fn = self.fn
        assert fn is not None  # one of coef/model/fn is set (checked in __post_init__)
        return np.asarray(fn(P), dtype=float).reshape(-1)

    def residual(self, query: pd.Series, counterfactuals: pd.DataFrame) -> np.ndarray:
        """``(x'_child - x_child) - (c(p') - c(p))`` per counterfactual."""
        q = query.to_frame().T
        base = self.evaluate(q)[0]
        new = self.evaluate(counterfactuals)
        dchild = pd.to_numeric(counterfactuals[self.child]).to_numpy(dtype=float) - float(query[self.child])
        return dchild - (new - base)


@dataclass(frozen=True)
class FeatureBounds:
    """What one feature may take for one query.

    Numeric features: the closed interval ``[lower, upper]`` (and ``values`` if
    restricted to a finite set).  Discrete features: ``values`` (the allowed
    categories).  ``fixed`` is True when only the query's value is allowed.
    """

    feature: Feature
    value: Any
    lower: float | None = None
    upper: float | None = None
    values: tuple[Any, ...] | None = None

    @property
    def fixed(self) -> bool:
        """Only the query's value is allowed."""
        if self.values is not None:
            return len(self.values) == 1
        return self.lower is not None and self.upper is not None and self.upper - self.lower <= 0

    @property
    def empty(self) -> bool:
        """No value at all is allowed (the query is infeasible)."""
        if self.values is not None:
            return len(self.values) == 0
        return self.lower is not None and self.upper is not None and self.lower > self.upper


@dataclass(frozen=True)
class QueryBounds:
    """Per-feature bounds for one query plus the global limits."""

    schema: Schema
    query: pd.Series
    features: tuple[FeatureBounds, ...]
    max_changes: int | None
    causal: tuple[Causal, ...]

    def __getitem__(self, name: str) -> FeatureBounds:
        return self.features[self.schema.index(name)]

    @property
    def mutable(self) -> list[str]:
        """Features that may change."""
        return [b.feature.name for b in self.features if not b.fixed]

    @property
    def infeasible(self) -> bool:
        """Some feature has no allowed value."""
        return any(b.empty for b in self.features)

    def satisfied(self, frame: pd.DataFrame) -> np.ndarray:
        """Vectorised check: which rows of ``frame`` (raw, schema columns) satisfy
        every bound, the change cap and the causal relations.

        Equivalent to "no row in :func:`violations`" for the same query and
        constraints, but fast enough for thousands of candidates
        (:func:`satisfied_many` with this one query).
        """
        return satisfied_many([self], frame, np.zeros(len(frame), dtype=int))


def satisfied_many(bounds: Sequence[QueryBounds], frame: pd.DataFrame, owner: np.ndarray) -> np.ndarray:
    """Which rows of ``frame`` satisfy their own query's bounds, for many queries at once.

    ``owner[k]`` is the index into ``bounds`` of the query that row ``k`` of
    ``frame`` (raw, schema columns) belongs to.  Every bound is checked for all
    rows together, per-query values gathered by ``owner``: ranges, integrality,
    allowed values, the change cap, then the causal relations of the queries
    that have them.  :meth:`QueryBounds.satisfied` is this with one query; it
    is the vectorised twin of "no row in :func:`violations`".
    """
    owner = np.asarray(owner, dtype=int)
    n = len(frame)
    if n == 0 or not len(bounds):
        return np.zeros(n, dtype=bool)
    schema = bounds[0].schema
    ok = np.ones(n, dtype=bool)
    n_changed = np.zeros(n, dtype=int)
    rows_of = {int(i): np.flatnonzero(owner == i) for i in np.unique(owner)}
    num_j = [j for j, f in enumerate(schema) if f.is_numeric]
    if num_j:  # every numeric feature at once, on one float matrix
        V = _float_matrix(frame, [schema.features[j].name for j in num_j])  # not a number: NaN, fails the range
        Q = np.array([[float(b.features[j].value) for j in num_j] for b in bounds])[owner]
        LO = np.array([[float(b.features[j].lower) for j in num_j] for b in bounds])[owner]  # type: ignore[arg-type]
        HI = np.array([[float(b.features[j].upper) for j in num_j] for b in bounds])[owner]  # type: ignore[arg-type]
        CH = ~(np.abs(V - Q) <= _NUM_TOL * np.maximum(1.0, np.maximum(np.abs(V), np.abs(Q))))
        TOL = 1e-9 * np.maximum(1.0, np.abs(Q))
        with np.errstate(invalid="ignore"):
            GOOD = np.isfinite(V) & (V >= LO - TOL) & (V <= HI + TOL)
        ints = np.array([schema.features[j].kind == "integer" for j in num_j], dtype=bool)
        if ints.any():
            GOOD[:, ints] &= np.abs(V[:, ints] - np.round(V[:, ints])) <= 1e-9
        for k, j in enumerate(num_j):  # a finite set of allowed values (rare): per query
            f = schema.features[j]
            for i, r in rows_of.items():
                fb = bounds[i].features[j]
                if fb.values is None:
                    continue
                v, ch, tol = V[r, k], CH[r, k], TOL[r, k]
                allowed_v = np.asarray(fb.values, dtype=float)
                GOOD[r, k] &= (np.abs(v[:, None] - allowed_v[None, :]) <= tol[:, None]).any(axis=1) | ~ch
                if not any(not changed(f, a, fb.value) for a in fb.values):
                    GOOD[r, k] &= ch
        ok &= GOOD.all(axis=1)
        n_changed += CH.sum(axis=1)
    cat_j = [j for j, f in enumerate(schema) if not f.is_numeric]
    C = frame[[schema.features[j].name for j in cat_j]].to_numpy(dtype=object) if cat_j else np.zeros((n, 0), dtype=object)
    all_codes = _category_codes([list(schema.features[j].categories or ()) for j in cat_j], C) if cat_j else None
    for k, j in enumerate(cat_j):
        f = schema.features[j]
        fbs = [b.features[j] for b in bounds]
        col = C[:, k]
        cats = list(f.categories or ())
        code_of = {c: m for m, c in enumerate(cats)}
        if all_codes is not None:
            codes = all_codes[:, k]
        else:
            try:  # vectorised; -1 for a value that is not a category
                codes = np.asarray(pd.Index(cats, dtype=object).get_indexer(col), dtype=int)
            except (TypeError, ValueError, pd.errors.InvalidIndexError):
                codes = np.array([code_of.get(c, -1) for c in col.tolist()], dtype=int)
        allowed = np.zeros((len(bounds), len(cats) + 1), dtype=bool)  # last column: not a category
        qcode = np.full(len(bounds), -2, dtype=int)
        for i, fb in enumerate(fbs):
            qcode[i] = code_of.get(fb.value, -2)
            for c in fb.values or ():
                m = code_of.get(c)
                if m is not None:
                    allowed[i, m] = True
        ok &= allowed[owner, codes]  # code -1 reads the last column
        n_changed += codes != qcode[owner]
    caps = np.array([np.iinfo(np.int64).max if b.max_changes is None else int(b.max_changes) for b in bounds])
    ok &= n_changed <= caps[owner]
    for i, r in rows_of.items():
        b = bounds[i]
        for c in b.causal:
            try:
                res = np.asarray(c.residual(b.query, frame.iloc[r]), dtype=float)
            except Exception:
                ok[r] = False
                continue
            ok[r] &= np.abs(res) <= c.tol * schema[c.child].range
    return ok


def _category_codes(cats: list[list[Any]], C: np.ndarray) -> np.ndarray | None:
    """Column ``k`` of ``C`` as positions in ``cats[k]`` (-1: not a category), for
    all columns with one hash look-up (the union of the categories); None when a
    feature's categories repeat or a value cannot be looked up (then the caller
    codes column by column)."""
    try:
        tables = _category_tables(tuple(tuple(cs) for cs in cats))
        if tables is None:
            return None
        union, table = tables
        found = union.get_indexer(C.ravel()).reshape(C.shape)
    except (TypeError, ValueError, pd.errors.InvalidIndexError):
        return None
    return table[np.arange(C.shape[1])[None, :], found]  # found == -1 reads the last column: -1


@lru_cache(maxsize=64)
def _category_tables(cats: tuple[tuple[Any, ...], ...]) -> tuple[pd.Index, np.ndarray] | None:
    """The union of ``cats`` and, per feature, a table from union position to the
    position in that feature's categories (-1 elsewhere, and in the last column)."""
    union = pd.Index([c for cs in cats for c in cs], dtype=object).unique()
    table = np.full((len(cats), len(union) + 1), -1, dtype=int)
    for k, cs in enumerate(cats):
        pos = union.get_indexer(pd.Index(list(cs), dtype=object))
        if len(set(pos.tolist())) != len(cs):
            return None
        table[k, pos] = np.arange(len(cs))
    table.flags.writeable = False  # shared by every call with these categories
    return union, table


def _float_matrix(frame: pd.DataFrame, names: list[str]) -> np.ndarray:
    """Columns ``names`` of ``frame`` as floats, values that are not numbers as NaN
    (``pd.to_numeric(errors="coerce")``), in one conversion when the columns allow it."""
    from .schema import _numeric_block

    block = _numeric_block(frame, names)
    if block is not None:
        return block
    return np.column_stack([pd.to_numeric(frame[n], errors="coerce").to_numpy(dtype=float) for n in names])


@dataclass(frozen=True)
class ResolvedConstraints:
    """Constraints merged with a schema's actionability and validated."""

    schema: Schema
    direction: dict[str, int]  # -1, 0 (free), +1; immutables are in `immutable`
    immutable: frozenset[str]
    ranges: dict[str, tuple[float, float]]
    allowed_values: dict[str, tuple[Any, ...]]
    max_changes: int | None
    causal: tuple[Causal, ...]
    source: Constraints

    def for_query(self, x: pd.Series) -> QueryBounds:
        """Per-feature bounds around one (validated) query row."""
        out = []
        for f in self.schema:
            v = _py(x[f.name])
            name = f.name
            if name in self.immutable:
                if name in self.ranges:
                    lo, hi = self.ranges[name]
                    if not (lo - 1e-12 <= float(v) <= hi + 1e-12):
                        raise ConstraintError(
                            f"Feature '{name}' is immutable but its range [{lo}, {hi}] excludes "
                            f"the query's own value {v!r}. Drop the range or make the feature mutable."
                        )
                if name in self.allowed_values and v not in self.allowed_values[name]:
                    raise ConstraintError(
                        f"Feature '{name}' is immutable but its allowed values "
                        f"{list(self.allowed_values[name])} exclude the query's own value {v!r}."
                    )
                if f.is_numeric:
                    out.append(FeatureBounds(f, v, float(v), float(v)))
                else:
                    out.append(FeatureBounds(f, v, values=(v,)))
                continue
            d = self.direction.get(name, 0)
            if f.is_numeric:
                lo = min(float(f.lower), float(v))  # type: ignore[arg-type]
                hi = max(float(f.upper), float(v))  # type: ignore[arg-type]
                if name in self.ranges:
                    rlo, rhi = self.ranges[name]
                    lo, hi = max(lo, rlo), min(hi, rhi)
                if d > 0:
                    lo = max(lo, float(v))
                elif d < 0:
                    hi = min(hi, float(v))
                if f.kind == "integer":
                    lo, hi = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))
                vals = None
                if name in self.allowed_values:
                    vals = tuple(sorted(a for a in self.allowed_values[name] if lo <= float(a) <= hi))
                out.append(FeatureBounds(f, v, lo, hi, vals))
            else:
                cats = list(f.categories)  # type: ignore[arg-type]
                if f.kind == "ordinal" and d != 0:
                    r = f.rank(v)
                    cats = [c for i, c in enumerate(cats) if (i >= r if d > 0 else i <= r)]
                if name in self.allowed_values:
                    allowed = set(self.allowed_values[name])
                    cats = [c for c in cats if c in allowed]
                out.append(FeatureBounds(f, v, values=tuple(cats)))
        return QueryBounds(self.schema, x, tuple(out), self.max_changes, self.causal)


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

    def __post_init__(self) -> None:
        for attr in ("immutable", "increasing", "decreasing"):
            val = getattr(self, attr)
            if isinstance(val, str):
                val = [val]
            object.__setattr__(self, attr, tuple(val))
            for n in getattr(self, attr):
                if not isinstance(n, str):
                    raise ConstraintError(f"Constraints.{attr} must list feature names (str). Got {n!r}.")
        if self.features_to_vary is not None:
            ftv = [self.features_to_vary] if isinstance(self.features_to_vary, str) else self.features_to_vary
            ftv = tuple(ftv)
            if len(ftv) == 0:
                raise ConstraintError(
                    "Constraints.features_to_vary is empty: no feature may change, so no "
                    "counterfactual can exist. Name at least one feature, or pass None for all."
                )
            object.__setattr__(self, "features_to_vary", ftv)
        object.__setattr__(self, "ranges", dict(self.ranges))
        object.__setattr__(
            self, "allowed_values", {k: tuple(_py(v) for v in vs) for k, vs in dict(self.allowed_values).items()}
        )
        object.__setattr__(self, "causal", tuple(self.causal))
        if self.max_changes is not None:
            if isinstance(self.max_changes, bool) or not isinstance(self.max_changes, (int, np.integer)) or self.max_changes < 1:
                raise ConstraintError(
                    f"Constraints.max_changes must be an int >= 1 (or None). Got {self.max_changes!r}."
                )
            object.__setattr__(self, "max_changes", int(self.max_changes))
        for c in self.causal:
            if not isinstance(c, Causal):
                raise ConstraintError(f"Constraints.causal takes Causal objects. Got {type(c).__name__}.")
        # contradictions that need no schema
        for a, b in (("immutable", "increasing"), ("immutable", "decreasing"), ("increasing", "decreasing")):
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
        for name, rng in self.ranges.items():
            if not (isinstance(rng, (tuple, list)) and len(rng) == 2):
                raise ConstraintError(f"ranges['{name}'] must be a (low, high) pair. Got {rng!r}.")
            lo, hi = rng
            for side, v in (("low", lo), ("high", hi)):
                if v is None:
                    continue
                try:
                    num = float(v)
                except (TypeError, ValueError):
                    raise ConstraintError(
                        f"ranges['{name}'] = {rng!r}: the {side} bound must be a number, or None for an "
                        f"open side. Got {v!r}."
                    ) from None
                if not math.isfinite(num):
                    raise ConstraintError(
                        f"ranges['{name}'] = {rng!r}: the {side} bound is {num}, which bounds nothing. "
                        "Use None for an open side, e.g. (None, 50) for 'at most 50'."
                    )
            if lo is not None and hi is not None and float(lo) > float(hi):
                raise ConstraintError(f"ranges['{name}'] = {rng!r} is empty (low > high).")

    # ----------------------------------------------------------------- kinds
    def kinds(self) -> set[str]:
        """The kinds of constraint this object actually uses (see CONSTRAINT_KINDS)."""
        used = set()
        for k in ("immutable", "increasing", "decreasing", "ranges", "allowed_values", "causal"):
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
        )

    # -------------------------------------------------------------- resolving
    def resolve(self, schema: Schema) -> ResolvedConstraints:
        """Validate against ``schema`` and merge with its actionability."""
        known = set(schema.names)

        def check(names: Iterable[str], what: str) -> None:
            unknown = sorted(set(names) - known)
            if unknown:
                raise ConstraintError(
                    f"Constraints.{what} names unknown features {unknown}. Known features: {schema.names}."
                )

        check(self.immutable, "immutable")  # type: ignore[arg-type]
        check(self.increasing, "increasing")  # type: ignore[arg-type]
        check(self.decreasing, "decreasing")  # type: ignore[arg-type]
        check(self.ranges, "ranges")
        check(self.allowed_values, "allowed_values")
        if self.features_to_vary is not None:
            check(self.features_to_vary, "features_to_vary")
        for c in self.causal:
            check([c.child, *c.parents], "causal")

        immutable = set(self.immutable)  # type: ignore[arg-type]
        direction: dict[str, int] = {}
        for f in schema:
            if f.actionability == "immutable":
                immutable.add(f.name)
            elif f.actionability == "increasing":
                direction[f.name] = 1
            elif f.actionability == "decreasing":
                direction[f.name] = -1
        for names, d in ((self.increasing, 1), (self.decreasing, -1)):
            for n in names:  # type: ignore[attr-defined]
                f = schema[n]
                if not f.is_ordered:
                    raise ConstraintError(
                        f"Feature '{n}' is {f.kind} (unordered) and cannot be "
                        f"{'increasing' if d > 0 else 'decreasing'}. Use immutable, allowed_values, "
                        "or declare it ordinal in the schema."
                    )
                if n in immutable and f.actionability == "immutable":
                    raise ConstraintError(
                        f"Feature '{n}' is immutable in the schema but the constraints make it "
                        f"{'increasing' if d > 0 else 'decreasing'}. Override the schema "
                        "(schema.with_actionability(...)) if it really may change."
                    )
                if direction.get(n, d) != d:
                    raise ConstraintError(
                        f"Feature '{n}' is {'decreasing' if d > 0 else 'increasing'} in the schema but "
                        f"{'increasing' if d > 0 else 'decreasing'} in the constraints; that is contradictory."
                    )
                direction[n] = d
        if self.features_to_vary is not None:
            protected = sorted(set(self.features_to_vary) & immutable)  # type: ignore[arg-type]
            if protected:
                raise ConstraintError(
                    f"features_to_vary lists {protected}, which are immutable (in the schema or the "
                    "constraints). Protected features cannot be changed; remove them from "
                    "features_to_vary, or override the schema's actionability."
                )
            immutable |= known - set(self.features_to_vary)  # type: ignore[arg-type]
        ranges: dict[str, tuple[float, float]] = {}
        for n, (lo, hi) in self.ranges.items():
            f = schema[n]
            if not f.is_numeric:
                raise ConstraintError(
                    f"ranges['{n}']: feature '{n}' is {f.kind}; ranges apply to numeric features. "
                    "Use allowed_values for discrete features."
                )
            ranges[n] = (-math.inf if lo is None else float(lo), math.inf if hi is None else float(hi))
        allowed: dict[str, tuple[Any, ...]] = {}
        for n, vs in self.allowed_values.items():
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
        for c in self.causal:
            for n in (c.child, *c.parents):
                if not schema[n].is_numeric:
                    raise ConstraintError(
                        f"Causal relation for '{c.child}': '{n}' is {schema[n].kind}; causal relations "
                        "support numeric features only."
                    )
            if c.child in immutable:
                raise ConstraintError(
                    f"Causal relation: child '{c.child}' is immutable, so it cannot follow its parents."
                )
        return ResolvedConstraints(
            schema=schema,
            direction={k: v for k, v in direction.items() if k not in immutable},
            immutable=frozenset(immutable),
            ranges=ranges,
            allowed_values=allowed,
            max_changes=self.max_changes,
            causal=tuple(self.causal),
            source=self,
        )

    # --------------------------------------------------------------- checking
    def violations(self, query: pd.Series | pd.DataFrame, counterfactuals: pd.DataFrame, schema: Schema) -> pd.DataFrame:
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
                rels.append({"child": c.child, "parents": list(c.parents), "coef": dict(c.coef or {}), "intercept": c.intercept})
            out["causal"] = rels
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Constraints:
        """Build from a mapping as read from YAML/JSON; unknown keys raise."""
        if not d:
            return cls()
        d = dict(d)
        known = {"immutable", "increasing", "decreasing", "ranges", "allowed_values", "features_to_vary", "max_changes", "causal"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ConstraintError(f"Unknown constraint keys {unknown}. Known keys: {sorted(known)}.")
        if "ranges" in d:
            d["ranges"] = {k: tuple(v) for k, v in d["ranges"].items()}
        if "causal" in d:
            d["causal"] = [Causal(child=c["child"], parents=tuple(c["parents"]), coef=c["coef"], intercept=c.get("intercept", 0.0)) for c in d["causal"]]
        return cls(**d)


_VIOLATION_COLUMNS = ["row", "feature", "kind", "detail"]


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
    ``allowed_values``, ``features_to_vary``, ``max_changes`` and ``causal``.  An
    empty frame means every counterfactual satisfies everything.
    """
    if isinstance(query, pd.DataFrame):
        if len(query) != 1:
            raise ConstraintError("violations() checks the counterfactuals of one query; pass one row.")
        query = query.iloc[0]
    constraints = constraints or Constraints()
    resolved = constraints.resolve(schema)
    rows: list[tuple[Any, str, str, str]] = []
    if len(counterfactuals) == 0:
        return pd.DataFrame(columns=_VIOLATION_COLUMNS)
    n_changed = np.zeros(len(counterfactuals), dtype=int)
    ftv = None if constraints.features_to_vary is None else set(constraints.features_to_vary)
    labels = list(counterfactuals.index)
    for f in schema:
        q = _py(query[f.name])
        col = counterfactuals[f.name].tolist()
        d = resolved.direction.get(f.name, 0)
        for i, v in enumerate(col):
            v = _py(v)
            lab = labels[i]
            try:
                ch = changed(f, q, v)
            except (TypeError, ValueError):
                rows.append((lab, f.name, "domain", f"value {v!r} is not {f.kind}"))
                continue
            if not ch:
                # unchanged: only user ranges / allowed values can be violated
                pass
            else:
                n_changed[i] += 1
                if not f.contains(v):
                    if not (f.is_numeric and _between(v, q, f) and not (f.kind == "integer" and abs(float(v) - round(float(v))) > 1e-9)):
                        rows.append((lab, f.name, "domain", f"{v!r} is outside the domain of '{f.name}'"))
                if f.name in resolved.immutable:
                    kind = "features_to_vary" if (ftv is not None and f.name not in ftv and f.actionability != "immutable" and f.name not in set(constraints.immutable)) else "immutable"  # type: ignore[arg-type]
                    rows.append((lab, f.name, kind, f"{q!r} -> {v!r}"))
                elif d != 0 and (f.is_numeric or (f.kind == "ordinal" and f.contains(v))):
                    delta = (float(v) - float(q)) if f.is_numeric else (f.rank(v) - f.rank(q))
                    if d > 0 and delta < 0:
                        rows.append((lab, f.name, "increasing", f"{q!r} -> {v!r}"))
                    elif d < 0 and delta > 0:
                        rows.append((lab, f.name, "decreasing", f"{q!r} -> {v!r}"))
            if f.name in resolved.ranges:
                lo, hi = resolved.ranges[f.name]
                try:
                    fv = float(v)
                except (TypeError, ValueError):
                    fv = math.nan
                if not (lo - 1e-9 <= fv <= hi + 1e-9):
                    rows.append((lab, f.name, "ranges", f"{v!r} not in [{lo}, {hi}]"))
            if f.name in resolved.allowed_values:
                allowed = resolved.allowed_values[f.name]
                ok = any(not changed(f, a, v) for a in allowed) if f.is_numeric else v in allowed
                if not ok:
                    rows.append((lab, f.name, "allowed_values", f"{v!r} not in {list(allowed)}"))
    if resolved.max_changes is not None:
        for i, k in enumerate(n_changed):
            if k > resolved.max_changes:
                rows.append((labels[i], "*", "max_changes", f"{k} changes > {resolved.max_changes}"))
    for c in resolved.causal:
        try:
            res = c.residual(query, counterfactuals)
        except Exception as exc:  # a user function failing is a violation, not a crash
            res = np.full(len(counterfactuals), np.nan)
            detail = f"could not evaluate: {exc}"
        else:
            detail = ""
        scale = schema[c.child].range
        for i, r in enumerate(res):
            if not (abs(r) <= c.tol * scale):
                rows.append((labels[i], c.child, "causal", detail or f"residual {r:.4g}"))
    return pd.DataFrame(rows, columns=_VIOLATION_COLUMNS)


def _between(v: Any, q: Any, f: Feature) -> bool:
    """A numeric value between the domain and a query outside it (allowed: hull)."""
    fv, fq = float(v), float(q)
    lo, hi = min(float(f.lower), fq), max(float(f.upper), fq)  # type: ignore[arg-type]
    return lo - 1e-9 <= fv <= hi + 1e-9
