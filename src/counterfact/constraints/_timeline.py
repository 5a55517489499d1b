"""Recourse over time: :class:`Timeline` (elapsed months, features time moves, the cost of
waiting) and :class:`QueryTimeline`, one query's timeline in solver units.

Semantics (documented decisions)
--------------------------------
* Elapsed time is a whole number of months ``t`` in ``[0, horizon]``; every answer has one:
  the least ``t`` its time-driven features are consistent with (:meth:`Timeline.elapsed`).
* An **advancing** feature only time changes (schema actionability ``"time"`` with its
  ``per_month``, or ``Timeline(advancing=...)``).  A numeric one is *pinned*: after ``t``
  months it equals ``x + floor_on_grid(per_month * t)`` (age in years, ``1/12`` a month:
  ``12 (age' - age) <= t <= 12 (age' - age) + 11``).  A **top-coded** one (the schema's
  ``Feature(top_coded=True)``: its upper bound is an open-ended top level, German Credit's
  ``residence_since`` 4 = "4 years or more") stops at that bound: ``min(x + advance,
  upper)``.  Any other may pass the largest value in the data (age past the oldest
  applicant seen): the schema's bounds of a numeric feature are what was observed, not a cap.
* An ordinal **band** with ``edges`` (the upper edge of each level, optionally after the
  lowest level's lower edge) is, after ``t`` months, *at most* the level **certainly**
  reached -- the level holding its *lower* edge plus ``per_month * t`` -- and at least its
  own level.  Decision: the tenure inside a band is unknown, and advice must hold for
  everyone in it.  The band reached by the *upper* edge (the most hopeful reading) would
  tell everyone in "< 1 year" to wait one month, false for someone hired yesterday; the
  lower edge tells them to wait 12, true for all.  The lowest level without a lower edge
  (German Credit's "unemployed") reaches no band by waiting.  No action changes an
  advancing feature.
* A **rate** feature needs time to change: ``rates={"savings": 100.0}`` (either way, per
  month) or ``(up, down)``; its change after ``t`` months is at most ``up * t`` upwards and
  ``down * t`` downwards (ordinal features: ranks per month).  Its other constraints and
  its cost still apply.
* ``wait_cost``: the cost of one month in the call's measure of effort (``cf.Costs``
  units), added to an answer's cost.  The change of an advancing feature costs nothing:
  it is the waiting, priced by ``wait_cost``.
* An advancing feature is no change one makes: ``max_changes`` does not count it (the
  shared checker, :func:`~counterfact.constraints.violations` and the exact encodings).
  The waiting is part of every answer's cost (``result.cost()``, the ranking of answers,
  the value MACE and CE-OCL prove).
* Without a timeline, a feature whose actionability is ``"time"`` is immutable.

For the other parts of the library (the shared checker, heuristics, the exact encodings):
``Timeline.bind(schema, x)`` gives a :class:`QueryTimeline` (solver units: numeric values,
ordinal ranks) with ``segments`` (advancing features: per value/rank, the months it holds
in), ``window(t)`` (per time-driven feature, the box after exactly ``t`` months),
``box()`` (the union over the horizon, which narrows the query's bounds),
``elapsed_point(point)`` and ``wait(point)``.  ``QueryBounds.timeline`` holds it for
a query resolved under a timeline, and ``Problem.timeline`` for the solvers.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import ConstraintError
from ..schema import Feature, Schema
from ._inputs import _kind, _mapping

__all__ = [
    "QueryTimeline",
    "Rule",
    "Timeline",
    "exact_rate",
    "resolve_timeline",
    "time_features",
    "time_free_costs",
]

#: the longest horizon accepted (50 years, in months)
MAX_HORIZON = 600
#: a month of waiting when a timeline does not say, in the measure of effort's units: two
#: years of waiting cost as much as one changed feature (see :class:`Timeline`)
DEFAULT_WAIT_COST = 1 / 24
_TOL = 1e-9


@dataclass(frozen=True)
class Rule:
    """How time moves one feature: ``kind`` "pinned" (numeric, advances; at most ``cap``
    when top-coded), "band" (ordinal band, at most the level certainly reached: ``edges``
    the upper edge of each level, ``lower`` the lowest level's lower edge, ``-inf`` when
    unknown) or "rate" (bounded change per month, ``up``/``down``)."""

    name: str
    kind: str
    per_month: float = 0.0
    edges: tuple[float, ...] | None = None
    up: float = 0.0
    down: float = 0.0
    lower: float = -math.inf
    cap: float = math.inf


@dataclass(frozen=True)
class Timeline:
    """Elapsed time for recourse: a horizon in months, the features time moves, the
    cost of waiting (see the module docstring for the semantics).

    Parameters
    ----------
    horizon : int
        The longest wait considered, in whole months (0 to 600; 0: answers today).
    rates : mapping str -> float or (up, down)
        Features whose change needs time: at most ``rate`` per month either way, or
        ``up`` per month upwards and ``down`` downwards (``inf``: unbounded that way),
        in the feature's unit (ordinal features: levels per month).
    wait_cost : float
        The cost of one month of waiting, in the call's measure of effort (default
        :data:`DEFAULT_WAIT_COST`, 1/24: two years of waiting cost as much as one changed
        feature). Decision: waiting is not free unless asked. With ``wait_cost=0`` and
        aging free, an exact method may put off any answer to the horizon at no cost:
        on Adult's logistic regression, ``Timeline(horizon=24)`` with a free month told 26
        of 30 rejected applicants to wait 24 months (getting two years older helps
        there), most of them to wait *and* act. Pass ``wait_cost=0`` to make waiting free.
    advancing : mapping str -> float or (float, edges)
        Features only time moves, with their advance per month; adds to (or overrides)
        the schema's ``actionability="time"`` features.  An ordinal feature needs its
        ``edges`` (in the schema, or here as ``(per_month, edges)``).

    Examples
    --------
    >>> Timeline(horizon=12, rates={"savings": 100.0}, advancing={"age": 1 / 12})
    """

    horizon: int = 24
    rates: Mapping[str, Any] = field(default_factory=dict)
    wait_cost: float = DEFAULT_WAIT_COST
    advancing: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        h = self.horizon
        if isinstance(h, (bool, str, bytes)) or (not isinstance(h, (int,)) and not _whole(h)):
            raise ConstraintError(f"Timeline.horizon must be a whole number of months. Got {h!r}.")
        if not 0 <= int(h) <= MAX_HORIZON:
            raise ConstraintError(
                f"Timeline.horizon must be between 0 and {MAX_HORIZON} months. Got {h!r}."
            )
        object.__setattr__(self, "horizon", int(h))
        w = _number(self.wait_cost, "Timeline.wait_cost")
        if w < 0 or math.isinf(w):
            raise ConstraintError(f"Timeline.wait_cost must be finite and >= 0. Got {w!r}.")
        object.__setattr__(self, "wait_cost", w)
        object.__setattr__(self, "rates", _rates(self.rates))
        object.__setattr__(self, "advancing", _advancing(self.advancing))
        both = sorted(set(self.rates) & set(self.advancing))
        if both:
            raise ConstraintError(
                f"Features {both} are both advancing and rate-bound in the timeline; an "
                "advancing feature only time moves. Keep one."
            )

    def __hash__(self) -> int:
        return hash((self.horizon, self.wait_cost, tuple(sorted(self.rates.items()))))

    # ------------------------------------------------------------------ rules
    def rules(self, schema: Schema) -> tuple[Rule, ...]:
        """Every time-driven feature of ``schema`` under this timeline, in schema order."""
        return time_features(self, schema)

    def moved_by_time(self, schema: Schema) -> tuple[str, ...]:
        """The features of ``schema`` only time moves under this timeline (pinned and bands,
        not those it paces), in schema order: their change is the waiting, no action."""
        return tuple(r.name for r in self.rules(schema) if r.kind != "rate")

    def bind(self, schema: Schema, x: pd.Series | Mapping[str, Any]) -> QueryTimeline:
        """This timeline for one query row ``x`` (raw values), in solver units."""
        return QueryTimeline(self, schema, self.rules(schema), _solver_row(schema, x))

    # ---------------------------------------------------------------- queries
    def elapsed(self, schema: Schema, x: Any, x_new: Any) -> int | None:
        """The least whole months in ``[0, horizon]`` every time-driven feature of
        ``x_new`` is consistent with, from ``x``; None when no such month exists."""
        return self.bind(schema, x).elapsed_point(_solver_row(schema, x_new))

    def advance(self, schema: Schema, x: Any, t: int) -> pd.Series:
        """The row ``x`` after ``t`` months with no action: each advancing numeric feature
        moved on; bands, rate features and the others keep their values."""
        qt = self.bind(schema, x)
        t = qt.check_t(t)
        row = pd.Series({f.name: _py(_get(x, f.name)) for f in schema}, dtype=object)
        for j, r in qt.indexed():
            if r.kind == "pinned":
                row[r.name] = _raw(schema.features[j], qt.pinned_value(j, t))
        return row

    def window(self, schema: Schema, x: Any, t: int) -> dict[str, tuple[float, float]]:
        """Per time-driven feature, the closed box (solver units: values, ordinal ranks)
        its value may lie in after exactly ``t`` months."""
        qt = self.bind(schema, x)
        return {schema.names[j]: b for j, b in qt.window(t).items()}

    def wait(self, schema: Schema, x: Any, x_new: Any) -> float:
        """``wait_cost`` times the answer's elapsed months (inf when it has none)."""
        t = self.elapsed(schema, x, x_new)
        return math.inf if t is None else self.wait_cost * t

    def merge(self, other: Timeline | None) -> Timeline:
        """Both timelines at once: the shorter horizon, the slower rates, the dearer wait."""
        if other is None or other == self:
            return self
        rates = dict(self.rates)
        for k, (u, d) in other.rates.items():
            u0, d0 = rates.get(k, (math.inf, math.inf))
            rates[k] = (min(u, u0), min(d, d0))
        return Timeline(
            horizon=min(self.horizon, other.horizon),
            rates=rates,
            wait_cost=max(self.wait_cost, other.wait_cost),
            advancing={**self.advancing, **other.advancing},
        )

    def with_horizon(self, horizon: int) -> Timeline:
        """This timeline with ``horizon`` months (rates, waiting cost and advancing kept;
        the horizon checked as the constructor checks it)."""
        return replace(self, horizon=horizon)

    def words(self) -> str:
        """The timeline for people: ``"within 12 months; savings up at most 1 every 6 months;
        a month of waiting costs 0.042"``."""
        if self.horizon == 0:
            paced = ", ".join(self.rates)
            return "today only: no waiting" + (
                f"; {paced} cannot change (paced by time)" if paced else ""
            )
        parts = [f"within {self.horizon} month{'' if self.horizon == 1 else 's'}"]
        for name, (up, down) in self.rates.items():
            sides = [(side, r) for side, r in (("up", up), ("down", down)) if r > 0]
            moves = [
                f"{side} at most {_pace(r)}" if math.isfinite(r) else f"{side} freely"
                for side, r in sides
            ]
            parts.append(f"{name} " + (" and ".join(moves) if moves else "unchanged"))
        parts.append(
            f"a month of waiting costs {_about(self.wait_cost)}"
            if self.wait_cost
            else "waiting is free"
        )
        return "; ".join(parts)

    # ---------------------------------------------------------------- (de)serial
    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (``inf`` written as the string ``"inf"``)."""
        out: dict[str, Any] = {"horizon": self.horizon}
        if self.rates:
            out["rates"] = {k: [_json(u), _json(d)] for k, (u, d) in self.rates.items()}
        out["wait_cost"] = self.wait_cost  # always: a missing one reads as the default
        if self.advancing:
            out["advancing"] = {
                k: r if e is None else [r, [_json(v) for v in e]]
                for k, (r, e) in self.advancing.items()
            }
        return out

    @classmethod
    def from_dict(cls, d: Any) -> Timeline:
        """Inverse of :meth:`to_dict`; a bare number is a horizon."""
        if isinstance(d, Timeline):
            return d
        if isinstance(d, (int, float)) and not isinstance(d, bool):
            return cls(horizon=d)  # type: ignore[arg-type]
        if not isinstance(d, Mapping):
            raise ConstraintError(
                "A timeline must be a cf.Timeline, a whole number of months (the horizon), or a "
                f"mapping with keys horizon, rates, wait_cost, advancing. Got {_kind(d)}."
            )
        d = _mapping(d, "timeline")
        unknown = sorted(set(d) - {"horizon", "rates", "wait_cost", "advancing"})
        if unknown:
            raise ConstraintError(
                f"Unknown timeline keys {unknown}. Known: horizon, rates, wait_cost, advancing."
            )
        return cls(**d)


# ---------------------------------------------------------------------- bound
class QueryTimeline:
    """One query's timeline in solver units (numeric values, ordinal ranks)."""

    def __init__(
        self, timeline: Timeline, schema: Schema, rules: tuple[Rule, ...], x: tuple[float, ...]
    ) -> None:
        self.timeline = timeline
        self.schema = schema
        self.horizon = timeline.horizon
        self.wait_cost = timeline.wait_cost
        self.x = x
        self.rules = {schema.index(r.name): r for r in rules}

    def indexed(self) -> list[tuple[int, Rule]]:
        """``(feature index, rule)`` of each time-driven feature."""
        return sorted(self.rules.items())

    @property
    def advancing(self) -> list[int]:
        """Indices of the features only time moves (pinned and bands)."""
        return [j for j, r in self.rules.items() if r.kind != "rate"]

    def check_t(self, t: Any) -> int:
        """``t`` as a whole month within the horizon; ConstraintError otherwise."""
        if isinstance(t, bool) or not _whole(t) or not 0 <= int(t) <= self.horizon:
            raise ConstraintError(
                f"Elapsed months must be a whole number in [0, {self.horizon}]. Got {t!r}."
            )
        return int(t)

    def pinned_value(self, j: int, t: int) -> float:
        """An advancing numeric feature's value after ``t`` months (on its grid; a
        top-coded one at most its cap, never below today's value)."""
        f, r = self.schema.features[j], self.rules[j]
        gain = _frac(r.per_month) * t
        res = f.resolution
        if res is not None:
            step = Fraction(repr(float(res)))
            gain = step * math.floor(gain / step)
        x = Fraction(self.x[j])
        value = x + gain
        if math.isfinite(r.cap):
            value = min(value, max(x, Fraction(r.cap)))
        return float(value)

    def band_reach(self, j: int, t: int) -> int:
        """The highest level an ordinal band has *certainly* reached after ``t`` months:
        the level holding its lower edge plus ``per_month * t`` (its own level when that
        edge is unknown).  Exact rationals: 12 months of ``1/12`` reach one year."""
        r = self.rules[j]
        edges = r.edges or ()
        b = round(self.x[j])
        low = edges[b - 1] if b > 0 else r.lower
        if not math.isfinite(low):
            return b
        tenure = Fraction(low) + _frac(r.per_month) * t
        reach = b
        for i in range(b + 1, len(edges)):
            if Fraction(edges[i - 1]) <= tenure:
                reach = i
        return reach

    def window(self, t: int) -> dict[int, tuple[float, float]]:
        """Per time-driven feature index, its box after exactly ``t`` months."""
        t = self.check_t(t)
        out: dict[int, tuple[float, float]] = {}
        for j, r in self.indexed():
            q = self.x[j]
            if r.kind == "pinned":
                v = self.pinned_value(j, t)
                out[j] = (v, v)
            elif r.kind == "band":
                out[j] = (q, float(self.band_reach(j, t)))
            else:
                out[j] = (q - r.down * t, q + r.up * t)
        return out

    def box(self) -> dict[int, tuple[float, float]]:
        """Per time-driven feature index, the values reachable within the horizon (the
        union of the windows: each grows with ``t``)."""
        lo, hi = self.window(0), self.window(self.horizon)
        return {j: (min(lo[j][0], hi[j][0]), max(lo[j][1], hi[j][1])) for j in lo}

    def grid(self) -> tuple[list[int], np.ndarray, np.ndarray]:
        """``(indices, lo, hi)``: the time-driven features' indices and, per month ``t``
        (rows ``0..horizon``) and feature (columns), the bounds of :meth:`window` (an
        unbounded rate's ``inf * 0`` read as no change); computed once per query."""
        cached = getattr(self, "_grid", None)
        if cached is None:
            idx = [j for j, _r in self.indexed()]
            wins = [self.window(t) for t in range(self.horizon + 1)]
            shape = (len(wins), len(idx))  # explicit: no time-driven feature is 0 columns
            lo = np.array([[w[j][0] for j in idx] for w in wins], dtype=float).reshape(shape)
            hi = np.array([[w[j][1] for j in idx] for w in wins], dtype=float).reshape(shape)
            q = np.array([self.x[j] for j in idx], dtype=float)
            lo, hi = np.where(np.isnan(lo), q, lo), np.where(np.isnan(hi), q, hi)
            cached = self._grid = (idx, lo, hi)
        return cached

    def months(self, frame: pd.DataFrame) -> np.ndarray:
        """:meth:`elapsed_point` of every raw row of ``frame`` at once: the least month
        each row's time-driven features agree on, -1 where none within the horizon."""
        idx, lo, hi = self.grid()
        V = self.units(frame, idx)
        tol = 1e-7 * np.maximum(1.0, np.abs(V))[:, None, :]
        inside = (V[:, None, :] >= lo[None] - tol) & (V[:, None, :] <= hi[None] + tol)
        fits = inside.all(axis=2)
        return np.where(fits.any(axis=1), fits.argmax(axis=1), -1)

    def waiting(self, frame: pd.DataFrame) -> np.ndarray:
        """Per raw row of ``frame``: ``wait_cost`` times its elapsed months (:meth:`months`),
        inf for a row no month within the horizon fits; part of every answer's cost."""
        if not self.wait_cost or not len(frame):
            return np.zeros(len(frame))
        t = self.months(frame).astype(float)
        return np.where(t < 0, np.inf, self.wait_cost * t)  # type: ignore[no-any-return]

    def moved(self, frame: pd.DataFrame) -> np.ndarray:
        """Per raw row of ``frame``: how many features only time moves differ from the
        query (``max_changes`` does not count them: waiting is no change one makes)."""
        idx = self.advancing
        if not idx or not len(frame):
            return np.zeros(len(frame), dtype=int)
        V = self.units(frame, idx)
        Q = np.array([self.x[j] for j in idx], dtype=float)[None, :]
        same = np.abs(V - Q) <= 1e-7 * np.maximum(1.0, np.maximum(np.abs(V), np.abs(Q)))
        return (~same).sum(axis=1)  # type: ignore[no-any-return]

    def units(self, frame: pd.DataFrame, idx: list[int]) -> np.ndarray:
        """Columns ``idx`` of raw ``frame`` in solver units (numbers; ordinal ranks, -1 for
        a value that is not a level; NaN for a value that is not a number)."""
        cols = []
        for j in idx:
            f, col = self.schema.features[j], frame[self.schema.names[j]]
            if f.is_numeric:
                cols.append(pd.to_numeric(col, errors="coerce").to_numpy(dtype=float))
            else:
                cats = pd.Index(list(f.categories or ()), dtype=object)
                cols.append(cats.get_indexer(col.to_numpy(dtype=object)).astype(float))
        return np.column_stack(cols) if cols else np.zeros((len(frame), 0))

    def segments(self, j: int) -> list[tuple[float, int, int]]:
        """An advancing feature's ``(value or highest rank, first month, last month)`` runs
        over ``[0, horizon]``: the exact encodings pick one run."""
        runs: list[tuple[float, int, int]] = []
        for t in range(self.horizon + 1):
            v = self.pinned_value(j, t) if self.rules[j].kind == "pinned" else self.band_reach(j, t)
            if runs and runs[-1][0] == v:
                runs[-1] = (v, runs[-1][1], t)
            else:
                runs.append((float(v), t, t))
        return runs

    def earliest(self, j: int, value: float) -> int | None:
        """The least month at which feature ``j`` may hold ``value`` (None: never)."""
        r, q = self.rules[j], self.x[j]
        if r.kind == "rate":
            d = float(value) - q
            rate = r.up if d > 0 else r.down
            if abs(d) <= _TOL * max(1.0, abs(q)):
                return 0
            t = math.ceil(abs(d) / rate - 1e-9) if rate > 0 else None
            return t if t is not None and t <= self.horizon else None
        if r.kind == "band" and float(value) < q - 0.5:
            return None
        for v, t0, _t1 in self.segments(j):
            hit = v >= float(value) - 0.5 if r.kind == "band" else _close(v, float(value))
            if hit:
                return t0
        return None

    def latest(self, j: int, value: float) -> int:
        """The last month a pinned feature holds ``value`` (horizon for the others)."""
        if self.rules[j].kind != "pinned":
            return self.horizon
        runs = [t1 for v, _t0, t1 in self.segments(j) if _close(v, float(value))]
        return runs[-1] if runs else -1

    def elapsed_point(self, point: tuple[Any, ...]) -> int | None:
        """The least month consistent with every time-driven feature of ``point``."""
        lo, hi = 0, self.horizon
        for j in self.rules:
            t0 = self.earliest(j, float(point[j]))
            if t0 is None:
                return None
            lo, hi = max(lo, t0), min(hi, self.latest(j, float(point[j])))
        return lo if lo <= hi else None

    def wait(self, point: tuple[Any, ...]) -> float:
        """``wait_cost`` times the point's elapsed months (inf when it has none)."""
        t = self.elapsed_point(point)
        return math.inf if t is None else self.wait_cost * t

    def narrow(self, bounds: tuple[Any, ...], ranges: Mapping[str, Any]) -> tuple[Any, ...]:
        """A query's per-feature bounds narrowed to what the horizon reaches."""
        return narrow_bounds(self, bounds, ranges)


# ---------------------------------------------------------------------- rules
def time_features(timeline: Timeline, schema: Schema) -> tuple[Rule, ...]:
    """The rules of every time-driven feature of ``schema`` under ``timeline``."""
    known = set(schema.names)
    unknown = sorted((set(timeline.rates) | set(timeline.advancing)) - known)
    if unknown:
        raise ConstraintError(
            f"The timeline names unknown features {unknown}. Known features: {schema.names}."
        )
    out = []
    for f in schema:
        if f.name in timeline.rates:
            out.append(_rate_rule(f, *timeline.rates[f.name]))
        elif f.name in timeline.advancing or f.actionability == "time":
            out.append(_advance_rule(f, *timeline.advancing.get(f.name, (None, None))))
    return tuple(out)


def _rate_rule(f: Feature, up: float, down: float) -> Rule:
    if not f.is_ordered:
        raise ConstraintError(
            f"Timeline.rates names '{f.name}', which is {f.kind} (unordered); a rate needs "
            "an order. Use a numeric or ordinal feature."
        )
    if f.actionability == "time":
        raise ConstraintError(
            f"Feature '{f.name}' only time moves (actionability 'time'); give its advance "
            "per month (Timeline.advancing or the schema's per_month), not a rate."
        )
    return Rule(f.name, "rate", up=up, down=down)


def _advance_rule(f: Feature, rate: float | None, edges: Any) -> Rule:
    rate = f.per_month if rate is None else rate
    if rate is None:
        raise ConstraintError(
            f"Feature '{f.name}' only time moves, but its advance per month is unknown. "
            f"Give it: Timeline(advancing={{'{f.name}': per_month}}) or the schema's "
            "Feature(per_month=...)."
        )
    if f.is_categorical:
        raise ConstraintError(
            f"Timeline.advancing names '{f.name}', which is {f.kind} (unordered); time "
            "advances numeric or ordinal features only."
        )
    if not f.is_numeric:
        return _band_rule(f, float(rate), edges)
    cap = float(f.upper) if f.top_coded else math.inf
    return Rule(f.name, "pinned", per_month=float(rate), cap=cap)


def _band_rule(f: Feature, rate: float, edges: Any) -> Rule:
    """An ordinal band's rule: ``edges`` (or the schema's) split into the upper edge of each
    level and, when one more value is given first, the lowest level's lower edge."""
    edges = (
        f.edges
        if edges is None
        else Feature(
            f.name, "ordinal", categories=f.categories, actionability="time", edges=edges
        ).edges
    )
    if edges is None:
        raise ConstraintError(
            f"Ordinal feature '{f.name}' advances with time but has no edges (the upper "
            "edge of each level). Give Timeline(advancing={name: (per_month, edges)}) or "
            "the schema's Feature(edges=...)."
        )
    edges = tuple(edges)
    with_lower = len(edges) == len(f.categories or ()) + 1
    lower, uppers = (edges[0], edges[1:]) if with_lower else (-math.inf, edges)
    return Rule(f.name, "band", per_month=rate, edges=uppers, lower=lower)


# ---------------------------------------------------------------------- inputs
def _rates(value: Any) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for name, r in _mapping(value or {}, "Timeline.rates").items():
        pair = tuple(r) if isinstance(r, (tuple, list)) else (r, r)
        if len(pair) != 2:
            raise ConstraintError(
                f"Timeline.rates['{name}'] must be a rate or an (up, down) pair. Got {r!r}."
            )
        up, down = (_number(v, f"Timeline.rates['{name}']") for v in pair)
        if min(up, down) < 0 or max(up, down) == 0:
            raise ConstraintError(
                f"Timeline.rates['{name}'] must be >= 0 per month (one side positive). Got {r!r}."
            )
        out[name] = (up, down)
    return out


def _advancing(value: Any) -> dict[str, tuple[float, tuple[float, ...] | None]]:
    out: dict[str, tuple[float, tuple[float, ...] | None]] = {}
    for name, r in _mapping(value or {}, "Timeline.advancing").items():
        rate, edges = (
            (r[0], tuple(_number(e, name) for e in r[1]))
            if isinstance(r, (tuple, list))
            else (r, None)
        )
        rate = _number(rate, f"Timeline.advancing['{name}']")
        if not 0 < rate < math.inf:
            raise ConstraintError(
                f"Timeline.advancing['{name}'] must be a positive advance per month (age in "
                f"years: 1/12). Got {r!r}."
            )
        out[name] = (rate, edges)
    return out


def _number(value: Any, what: str) -> float:
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or math.isnan(v):
        raise ConstraintError(f"{what} must be a number. Got {_kind(value)}.")
    return v


def _whole(v: Any) -> bool:
    try:
        return float(v) == int(v)
    except (TypeError, ValueError, OverflowError):
        return False


def exact_rate(v: float) -> Fraction:
    """A rate as the exact fraction it stands for (the float ``1/6`` is a little below a
    sixth, and six months of it would not reach one level; it stays 1/6 here)."""
    return Fraction(v).limit_denominator(10**6)


_frac = exact_rate


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-7 * max(1.0, abs(a), abs(b))


def _json(v: float) -> Any:
    return v if math.isfinite(v) else "inf"


def _get(x: Any, name: str) -> Any:
    try:
        return x[name]
    except (KeyError, IndexError):
        raise ConstraintError(f"The row has no value of feature '{name}'.") from None


def _solver_row(schema: Schema, x: Any) -> tuple[float, ...]:
    """A raw row in solver units (numeric values, ordinal ranks, category indices)."""
    out = []
    for f in schema:
        v = _py(_get(x, f.name))
        out.append(float(v) if f.is_numeric else float(f.rank(v)))
    return tuple(out)


def _raw(f: Feature, v: float) -> Any:
    if f.kind == "integer":
        return round(v)
    return v if f.is_numeric else f.categories[round(v)]  # type: ignore[index]


# ---------------------------------------------------------------- resolution
def resolve_timeline(
    c: Any, schema: Schema, immutable: set[str], direction: dict[str, int]
) -> Timeline | None:
    """The constraints' timeline checked against ``schema``; its advancing features are
    taken out of ``immutable`` and made increasing in ``direction`` (both updated)."""
    timeline = getattr(c, "timeline", None)
    if timeline is None:
        return None
    for r in time_features(timeline, schema):
        if r.kind == "rate":
            continue
        if r.name in c.immutable or direction.get(r.name, 1) < 0:
            word = "immutable" if r.name in c.immutable else "decreasing"
            raise ConstraintError(
                f"The constraints make '{r.name}' {word}, but the timeline advances it with "
                "time. Drop one of the two."
            )
        immutable.discard(r.name)
        direction[r.name] = 1
    return timeline


def narrow_bounds(
    qt: QueryTimeline, bounds: tuple[Any, ...], ranges: Mapping[str, tuple[float, float]]
) -> tuple[Any, ...]:
    """Each time-driven feature's bounds narrowed to what the horizon reaches.  An advancing
    numeric feature may leave the schema's domain (age past the oldest seen; a top-coded one
    stops at its upper bound), not a range the user set."""
    out = list(bounds)
    for j, (lo, hi) in qt.box().items():
        b = out[j]
        f = b.feature
        if f.is_numeric:
            blo, bhi = float(b.lower), float(b.upper)
            if qt.rules[j].kind == "pinned" and f.name not in ranges:
                bhi = max(bhi, hi)
            nlo, nhi = max(blo, lo), min(bhi, hi)
            if f.kind == "integer":
                nlo, nhi = float(math.ceil(nlo - _TOL)), float(math.floor(nhi + _TOL))
            vals = (
                b.values
                if b.values is None
                else tuple(v for v in b.values if nlo <= float(v) <= nhi)
            )
            out[j] = replace(b, lower=nlo, upper=nhi, values=vals)
        else:
            cats = tuple(v for v in (b.values or ()) if lo - _TOL <= f.rank(v) <= hi + _TOL)
            out[j] = replace(b, values=cats)
    return tuple(out)


def time_free_costs(costs: Any, constraints: Any, schema: Schema) -> Any:
    """``costs`` (a bound measure of effort) with the features ``constraints``' timeline
    advances made free: their change is the waiting, priced by ``wait_cost``.  A copy;
    ``costs`` itself is unchanged.  ``costs`` or a timeline missing: ``costs``."""
    timeline = getattr(constraints, "timeline", None)
    if costs is None or timeline is None:
        return costs
    free = [schema.index(r.name) for r in time_features(timeline, schema) if r.kind != "rate"]
    if not free:
        return costs
    out = copy.copy(costs)
    out.up, out.down = costs.up.copy(), costs.down.copy()
    out.pct, out.change = costs.pct.copy(), costs.change.copy()
    out.tables = dict(costs.tables)
    for j in free:
        out.up[j] = out.down[j] = out.pct[j] = out.change[j] = 0.0
        if j in out.tables:
            table = np.zeros_like(out.tables[j])
            table.flags.writeable = False
            out.tables[j] = table
    return out


def _pace(rate: float) -> str:
    """A rate per month for people: ``1/6 -> "1 every 6 months"`` (a level, a year: the
    feature's own step), ``0.5 -> "0.5 a month"``."""
    if 0 < rate < 1 and abs(1 / rate - round(1 / rate)) < 1e-6:
        return f"1 every {round(1 / rate)} months"
    return f"{_about(rate)} a month"


def _about(value: float) -> str:
    """A rate or cost for people: two significant digits (``0.1667 -> "0.17"``)."""
    return f"{value:.2g}"
