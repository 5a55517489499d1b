"""Per-query bounds (FeatureBounds, QueryBounds, ResolvedConstraints) and satisfied_many."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _numeric_block, _py
from ..exceptions import ConstraintError
from ..schema import Feature, Schema
from ._causal import Causal
from ._relations_bound import BoundRelation, ResolvedRelation
from ._relations_box import unreachable

_NUM_TOL = 1e-7


def changed(feature: Feature, a: Any, b: Any) -> bool:
    """Whether two values of ``feature`` differ (numeric values with a relative tolerance)."""
    if feature.is_numeric:
        fa, fb = float(a), float(b)
        return abs(fa - fb) > _NUM_TOL * max(1.0, abs(fa), abs(fb))
    return _py(a) != _py(b)


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
        """Only the query's value is allowed (one allowed value that is another one, an
        allowed value or a range the row must move to, is not fixed: it is a change)."""
        if self.values is not None:
            return len(self.values) == 1 and not changed(self.feature, self.values[0], self.value)
        if self.lower is None or self.upper is None or self.upper - self.lower > 0:
            return False
        return not changed(self.feature, self.lower, self.value)

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
    #: relations between features (:mod:`._relations_bound`)
    relations: tuple[ResolvedRelation, ...] = ()
    #: the query's timeline (:class:`~counterfact.constraints._timeline.QueryTimeline`)
    timeline: Any = None

    def __getitem__(self, name: str) -> FeatureBounds:
        return self.features[self.schema.index(name)]

    @property
    def mutable(self) -> list[str]:
        """Features that may change."""
        return [b.feature.name for b in self.features if not b.fixed]

    def fixed_masks(self, frame: pd.DataFrame) -> list[tuple[Feature, Any, np.ndarray]]:
        """Per fixed feature (:attr:`FeatureBounds.fixed`: immutable, not allowed to vary, or
        moved only by time without a timeline): the feature, its one allowed value and, per
        row of ``frame`` (raw, schema columns), whether the row keeps it, as :func:`changed`
        compares."""
        out = []
        for b in self.features:
            if b.fixed:
                only = b.values[0] if b.values is not None else b.lower
                col = frame[b.feature.name].tolist()
                kept = np.array([not changed(b.feature, v, only) for v in col], dtype=bool)
                out.append((b.feature, only, kept))
        return out

    def bound_relations(self) -> tuple[BoundRelation, ...]:
        """The relations of this query in solver units (values, ranks, category indices)."""
        return tuple(r.bind(self.query, self.schema) for r in self.relations)

    @property
    def infeasible(self) -> bool:
        """Some feature has no allowed value."""
        return any(b.empty for b in self.features)

    def unreachable_relations(self) -> list[str]:
        """The relations no value inside these bounds satisfies (:mod:`._relations_box`)."""
        sizes = [r.query_size(self.query, self.schema) for r in self.relations]
        return unreachable(self.bound_relations(), self.features, sizes)

    def satisfied(self, frame: pd.DataFrame) -> np.ndarray:
        """Vectorised check: which rows of ``frame`` (raw, schema columns) satisfy
        every bound, the change cap, the causal relations and the relations.

        Equivalent to "no row in :func:`violations`" for the same query and
        constraints, but fast enough for thousands of candidates
        (:func:`satisfied_many` with this one query).
        """
        return satisfied_many([self], frame, np.zeros(len(frame), dtype=int))


def satisfied_many(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, owner: np.ndarray
) -> np.ndarray:
    """Which rows of ``frame`` satisfy their own query's bounds, for many queries at once.

    ``owner[k]`` is the index into ``bounds`` of the query that row ``k`` of
    ``frame`` (raw, schema columns) belongs to.  Every bound is checked for all
    rows together, per-query values gathered by ``owner``: ranges, integrality,
    allowed values, the change cap, then the causal relations, the relations
    between features and the timeline (one elapsed month for every time-driven
    feature) of the queries that have them.  :meth:`QueryBounds.satisfied`
    is this with one query; it is the vectorised twin of "no row in
    :func:`violations`".
    """
    owner = np.asarray(owner, dtype=int)
    n = len(frame)
    if n == 0 or not len(bounds):
        return np.zeros(n, dtype=bool)
    rows_of = {int(i): np.flatnonzero(owner == i) for i in np.unique(owner)}
    numeric_ok, numeric_changed = _numeric_ok(bounds, frame, owner, rows_of)
    discrete_ok, discrete_changed = _discrete_ok(bounds, frame, owner)
    # a feature only time moves is no change one makes: max_changes does not count it
    n_changed = numeric_changed + discrete_changed - _time_moved(bounds, frame, rows_of)
    return (
        numeric_ok
        & discrete_ok
        & _within_change_cap(bounds, owner, n_changed)
        & _causal_ok(bounds, frame, rows_of)
        & _relations_ok(bounds, frame, rows_of)
        & _timeline_ok(bounds, frame, rows_of)
    )


def _timeline_ok(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, rows_of: dict[int, np.ndarray]
) -> np.ndarray:
    """Per row: whether its time-driven features agree on one elapsed month within its
    query's horizon (``QueryTimeline.months``); rows of a query without a timeline pass."""
    ok = np.ones(len(frame), dtype=bool)
    for i, r in rows_of.items():
        qt = bounds[i].timeline
        if qt is not None and len(r):
            ok[r] = qt.months(frame.iloc[r]) >= 0
    return ok


def _time_moved(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, rows_of: dict[int, np.ndarray]
) -> np.ndarray:
    """Per row: how many features only its query's timeline moves it changed
    (``QueryTimeline.moved``; 0 without a timeline)."""
    out = np.zeros(len(frame), dtype=int)
    for i, r in rows_of.items():
        qt = bounds[i].timeline
        if qt is not None and len(r):
            out[r] = qt.moved(frame.iloc[r])
    return out


def _numeric_ok(
    bounds: Sequence[QueryBounds],
    frame: pd.DataFrame,
    owner: np.ndarray,
    rows_of: dict[int, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether every numeric feature is within its range, whole when it is an
    integer and among its allowed values; and how many numeric features changed.

    Every numeric feature at once, on one float matrix (a value that is not a number
    is NaN and fails its range).
    """
    schema = bounds[0].schema
    num_j = [j for j, f in enumerate(schema) if f.is_numeric]
    if not num_j:
        return np.ones(len(frame), dtype=bool), np.zeros(len(frame), dtype=int)
    V = _float_matrix(frame, [schema.features[j].name for j in num_j])
    Q = np.array([[float(b.features[j].value) for j in num_j] for b in bounds])[owner]
    CH = ~(np.abs(V - Q) <= _NUM_TOL * np.maximum(1.0, np.maximum(np.abs(V), np.abs(Q))))
    TOL = 1e-9 * np.maximum(1.0, np.abs(Q))
    GOOD = _in_range(bounds, num_j, owner, V, TOL)
    _check_numeric_values(bounds, num_j, rows_of, (V, CH, TOL), GOOD)
    return GOOD.all(axis=1), CH.sum(axis=1)  # type: ignore[return-value]


def _in_range(
    bounds: Sequence[QueryBounds],
    num_j: list[int],
    owner: np.ndarray,
    V: np.ndarray,
    TOL: np.ndarray,
) -> np.ndarray:
    """Per row and numeric feature: a finite value within ``[lower, upper]`` (within
    ``TOL``), and a whole number for an integer feature."""
    schema = bounds[0].schema
    LO = _column_of_bounds(bounds, num_j, "lower")[owner]
    HI = _column_of_bounds(bounds, num_j, "upper")[owner]
    with np.errstate(invalid="ignore"):
        GOOD = np.isfinite(V) & (V >= LO - TOL) & (V <= HI + TOL)
    ints = np.array([schema.features[j].kind == "integer" for j in num_j], dtype=bool)
    if ints.any():
        GOOD[:, ints] &= np.abs(V[:, ints] - np.round(V[:, ints])) <= 1e-9
    return GOOD  # type: ignore[no-any-return]


def _check_numeric_values(
    bounds: Sequence[QueryBounds],
    num_j: list[int],
    rows_of: dict[int, np.ndarray],
    values: tuple[np.ndarray, np.ndarray, np.ndarray],
    GOOD: np.ndarray,
) -> None:
    """Clear ``GOOD`` where a numeric feature restricted to a finite set of allowed
    values (rare: checked per query) changed to a value outside the set, or kept the
    query's own value although the set excludes it.

    ``values`` holds, per row and numeric feature, the value, whether it changed and
    the tolerance of the comparison.
    """
    V, CH, TOL = values
    schema = bounds[0].schema
    for k, j in enumerate(num_j):
        f = schema.features[j]
        for i, r in rows_of.items():
            fb = bounds[i].features[j]
            if fb.values is None:
                continue
            v, ch, tol = V[r, k], CH[r, k], TOL[r, k]
            allowed_v = np.asarray(fb.values, dtype=float)
            near = np.abs(v[:, None] - allowed_v[None, :]) <= tol[:, None]
            GOOD[r, k] &= near.any(axis=1) | ~ch
            if not any(not changed(f, a, fb.value) for a in fb.values):
                GOOD[r, k] &= ch


def _discrete_ok(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per row: whether every categorical or ordinal feature takes one of its allowed
    categories; and how many of these features changed."""
    schema = bounds[0].schema
    ok = np.ones(len(frame), dtype=bool)
    n_changed = np.zeros(len(frame), dtype=int)
    cat_j = [j for j, f in enumerate(schema) if not f.is_numeric]
    if not cat_j:
        return ok, n_changed
    C = frame[[schema.features[j].name for j in cat_j]].to_numpy(dtype=object)
    all_codes = _category_codes([list(schema.features[j].categories or ()) for j in cat_j], C)
    for k, j in enumerate(cat_j):
        cats = list(schema.features[j].categories or ())
        code_of = {c: m for m, c in enumerate(cats)}
        codes = all_codes[:, k] if all_codes is not None else _column_codes(cats, code_of, C[:, k])
        allowed, qcode = _allowed_categories(bounds, j, cats, code_of)
        ok &= allowed[owner, codes]  # code -1 reads the last column
        n_changed += codes != qcode[owner]
    return ok, n_changed


def _column_codes(cats: list[Any], code_of: dict[Any, int], col: np.ndarray) -> np.ndarray:
    """The values of ``col`` as positions in ``cats`` (-1: not a category), one column."""
    try:  # vectorised
        return np.asarray(pd.Index(cats, dtype=object).get_indexer(col), dtype=int)
    except (TypeError, ValueError, pd.errors.InvalidIndexError):
        return np.array([code_of.get(c, -1) for c in col.tolist()], dtype=int)


def _allowed_categories(
    bounds: Sequence[QueryBounds], j: int, cats: list[Any], code_of: dict[Any, int]
) -> tuple[np.ndarray, np.ndarray]:
    """For discrete feature ``j``: per query, which category positions are allowed (the
    last column, for a value that is not a category, never is), and the position of
    the query's own value (-2 when it is not a category)."""
    allowed = np.zeros((len(bounds), len(cats) + 1), dtype=bool)
    qcode = np.full(len(bounds), -2, dtype=int)
    for i, b in enumerate(bounds):
        fb = b.features[j]
        qcode[i] = code_of.get(fb.value, -2)
        for c in fb.values or ():
            m = code_of.get(c)
            if m is not None:
                allowed[i, m] = True
    return allowed, qcode


def _within_change_cap(
    bounds: Sequence[QueryBounds], owner: np.ndarray, n_changed: np.ndarray
) -> np.ndarray:
    """Per row: whether it changes at most its query's ``max_changes`` features."""
    caps = np.array(
        [np.iinfo(np.int64).max if b.max_changes is None else int(b.max_changes) for b in bounds]
    )
    return n_changed <= caps[owner]  # type: ignore[no-any-return]


def _causal_ok(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, rows_of: dict[int, np.ndarray]
) -> np.ndarray:
    """Per row: whether it keeps its query's causal relations (a residual within the
    relation's tolerance of the child's range; a relation that cannot be evaluated
    fails)."""
    schema = bounds[0].schema
    ok = np.ones(len(frame), dtype=bool)
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


def _relations_ok(
    bounds: Sequence[QueryBounds], frame: pd.DataFrame, rows_of: dict[int, np.ndarray]
) -> np.ndarray:
    """Per row: whether it keeps its query's relations between features."""
    schema = bounds[0].schema
    ok = np.ones(len(frame), dtype=bool)
    for i, r in rows_of.items():
        b = bounds[i]
        if b.relations and len(r):
            sub = frame.iloc[r]
            for rel in b.relations:
                ok[r] &= rel.holds(b.query, sub, schema)
    return ok


def _column_of_bounds(bounds: Sequence[QueryBounds], columns: list[int], side: str) -> np.ndarray:
    """One query per row, one numeric feature per column: its ``side`` bound."""
    return np.array([[float(getattr(b.features[j], side)) for j in columns] for b in bounds])


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

    block = _numeric_block(frame, names)
    if block is not None:
        return block
    return np.column_stack(
        [pd.to_numeric(frame[n], errors="coerce").to_numpy(dtype=float) for n in names]
    )


def _own_value(f: Any, v: Any) -> FeatureBounds:
    """The bounds of a feature that keeps the row's own value ``v``."""
    if f.is_numeric:
        return FeatureBounds(f, v, float(v), float(v))
    return FeatureBounds(f, v, values=(v,))


def why_fixed(schema: Schema, constraints: Any, name: str) -> str:
    """Why an immutable feature cannot change, in the words of whoever fixed it (the
    schema, the constraints' ``immutable``, or a ``features_to_vary`` that leaves it out)."""
    actionability = schema[name].actionability
    if actionability == "immutable":
        return "is immutable in the schema"
    if actionability == "time":
        if getattr(constraints, "timeline", None) is not None:
            return "moves only with time"
        return "moves only with time (and no timeline lets time pass: none, or horizon 0)"
    if name in set(getattr(constraints, "immutable", ()) or ()):
        return "is immutable in the constraints"
    return "is held fixed (features_to_vary leaves it out)"


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
    #: the :class:`~counterfact.constraints.Constraints` these were resolved from
    source: Any
    #: relations between features, checked against the schema
    relations: tuple[ResolvedRelation, ...] = ()
    #: the timeline (:class:`~counterfact.Timeline`), or None
    timeline: Any = None

    def _why_fixed(self, name: str) -> str:
        return why_fixed(self.schema, self.source, name)

    def _check_fixed_relations(self, x: pd.Series, bounds: list[FeatureBounds]) -> None:
        """A relation that reads only features this row cannot change, and that the row's
        own values break, contradicts the row, as a range that excludes a fixed value does:
        an error naming it, not a search that proves nothing can be found."""
        fixed = {b.feature.name for b in bounds if b.fixed}
        row = x.to_frame().T
        for rel in self.relations:
            names = rel.changed_names()
            if not names or not set(names) <= fixed or bool(rel.holds(x, row, self.schema)[0]):
                continue
            why = "; ".join(
                f"'{n}' = {_py(x[n])!r} {self._why_fixed(n) if n in self.immutable else 'is fixed'}"
                for n in names
            )
            raise ConstraintError(
                f"The relation '{rel.text}' cannot hold for this row: it reads only features "
                f"that cannot change here ({why}), and their values break it. Drop the "
                "relation, or let one of its features change."
            )

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
                            f"Feature '{name}' {self._why_fixed(name)} but its range [{lo}, {hi}] "
                            f"excludes the query's own value {v!r}. Drop the range or let the "
                            "feature change."
                        )
                if name in self.allowed_values and v not in self.allowed_values[name]:
                    raise ConstraintError(
                        f"Feature '{name}' {self._why_fixed(name)} but its allowed values "
                        f"{list(self.allowed_values[name])} exclude the query's own value {v!r}. "
                        "Drop them or let the feature change."
                    )
                out.append(_own_value(f, v))
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
                    vals = tuple(
                        sorted(a for a in self.allowed_values[name] if lo <= float(a) <= hi)
                    )
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
        qt = None if self.timeline is None else self.timeline.bind(self.schema, x)
        if qt is not None:
            out = list(qt.narrow(tuple(out), self.ranges))
        self._check_fixed_relations(x, out)
        return QueryBounds(
            self.schema, x, tuple(out), self.max_changes, self.causal, self.relations, qt
        )
