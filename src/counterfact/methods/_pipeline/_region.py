"""Certified recourse regions: the widest box around a counterfactual that provably holds.

:class:`RegionFinder` grows a box around one counterfactual, one changed feature
and one side at a time (binary search on the feature's grid, each step proven),
keeping the features the counterfactual leaves unchanged at the query's values
and staying inside the query's constraints (its bounds: ranges, directions,
allowed values, the schema's domain).

A box is *certified* when, for every model the answer must hold for (the
explained one and any ``robust_to``), each condition of the target region
(the decision, and ``P(target) >= p`` with a margin) holds at every point of
the box:

1. first by interval bounds over the box (:func:`counterfact.models._compile.interval_bounds`:
   exact for a linear model on numeric features, sound for every model);
2. else by a MILP that minimises the condition over the box
   (:mod:`counterfact.solvers._milp`): its proven dual bound must clear the
   threshold.  Exact for linear models, ReLU networks and tree ensembles.

The proof is over every float64 value of the box as :meth:`Region.contains`
reads it (each range widened by :meth:`Region.accepts`, the fixed
features too), not only over its grid.  A tree compares the value the
model itself compares (``float32(x) <= threshold`` for scikit-learn trees and
XGBoost, float64 for LightGBM and HistGradientBoosting): the compiler turns
each threshold into the exact float64 cut in raw units, and the MILP lets every
value reach the branch the model sends it to -- next to a cut too
(``encode_outputs(..., cover=True)``), where a search keeps a safety distance
from the cut.  The box's bounds are grid values as a person writes them
(``k * step`` rounded to the step's decimals).

Before a region is returned it is *checked* with the real models (the judge:
the decision, the margin, every ``robust_to`` model): at every corner of the
box and at seeded points inside it, half on the grid (the points of
:mod:`counterfact.result._points`, the same rule as a loaded file's re-check).  This
is a check, not the proof: it guards the proof's encoding against a
disagreement with the model.  A box that fails it is never certified: the
region falls back to the counterfactual itself, with the reason in ``how``.
The region records the corners and points checked and the check's time.

A model the compiler does not support (or a decision that is not one
conjunction, as a multi-class one-vs-one SVM) cannot be certified: its box is
checked on sampled points with the real models and reported with
``certified=False``.  Under causal constraints or relations between features
no box is grown (the features are tied together): the region is the
counterfactual itself.  Under a timeline the features it moves (age, a band, a paced
saving) keep the answer's values: they are tied to the answer's month.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ..._utils._values import _py
from ...constraints._bounds import FeatureBounds, QueryBounds
from ...exceptions import UnsupportedModelError
from ...models._compile import (
    compile_model,
    interval_bounds,
    probability_link,
    with_min_probability,
    with_min_vote_share,
)
from ...models._fastpredict import spread_rows
from ...result import Region
from ...result._points import CHECK_CORNERS, CHECK_INSIDE, corner_values, inside_values, on_grid
from ...solvers._milp import Model, encode_inputs, encode_outputs, quicksum
from ._judge import Judge
from ._snap import resolution

__all__ = ["RegionFinder"]

#: bisection steps per feature side (the width found is within 1/256 of what is provable)
_STEPS = 8
#: sampled points per check of a box that cannot be proven
_SAMPLES = 256


@dataclass
class _Exact:
    """One model as the solvers see it: compiled with the margin (None: not compilable)."""

    view: Any
    adapter: Any


@dataclass
class RegionFinder:
    """Regions for the counterfactuals of one ``explain`` call (module docstring)."""

    schema: Any
    judge: Judge
    data_X: pd.DataFrame
    seconds: float = 10.0
    _models: list[_Exact] | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_models"] = None  # compiled again where it is used
        return state

    # ---------------------------------------------------------------- models
    def models(self) -> list[_Exact]:
        """The explained model and the ``robust_to`` ones, compiled with the margin where
        possible."""
        if self._models is None:
            sample = spread_rows(self.data_X)
            out = []
            for adapter in (self.judge.model, *self.judge.others):
                try:
                    compiled = compile_model(adapter.model, self.schema)
                    link = probability_link(compiled, adapter.predict_proba, sample)
                    view = with_min_probability(compiled, link, self.judge.min_probability)
                    view = with_min_vote_share(view, self.judge.min_vote_share)
                except UnsupportedModelError:
                    view = None
                out.append(_Exact(view, adapter))
            self._models = out
        return self._models

    @property
    def exact(self) -> bool:
        """Whether every model can be certified by the solvers."""
        return all(m.view is not None and len(m.view.rule.region(0)) == 1 for m in self.models())

    # ------------------------------------------------------------------ find
    def find(
        self,
        x: pd.Series,
        bounds: QueryBounds,
        row: pd.Series,
        target: Any,
        deadline: Deadline | None = None,
    ) -> Region:
        """The region around counterfactual ``row`` of query ``x`` (constraints: ``bounds``)."""
        deadline = deadline or Deadline.after(self.seconds)
        box = _Box.start(self.schema, x, bounds, row)
        start = dict(box.bounds)
        check = _Checker(self, box, target)
        held = check(box.bounds)
        if held and not bounds.causal and not bounds.relations:
            for name in box.order():
                if deadline.expired():
                    break
                box.grow(name, check, deadline)
        certified, how = check.certified and held, check.how
        if not held:
            check.n_checked = 0  # the answer alone is returned: no sampled box stands
            how = "the counterfactual itself, checked with the real models: " + (
                "the solvers could not prove it (the encoding's margin or time limit)"
                if check.certified
                else "a sampled point around it failed"
            )
        return self._checked(box, target, start, (certified, how, check.n_checked))

    def _checked(
        self, box: _Box, target: Any, start: dict[str, Any], claim: tuple[bool, str, int]
    ) -> Region:
        """The region of ``box`` after the check with the real models (module docstring);
        a box that fails it shrinks to the counterfactual itself (``start``), not
        certified.  ``claim``: (certified, how, points sampled while growing)."""
        certified, how, n_sampled = claim
        clock = time.perf_counter()
        corners, inside, failed = _RealCheck(self, box, target).run()
        if failed:
            how = (
                f"not certified: the real models reject {failed} of {corners + inside} points "
                f"checked in the box ({how or 'sampled'}); the counterfactual itself is given"
            )
            certified, box.bounds, n_sampled = False, start, 0
            corners, inside, _ = _RealCheck(self, box, target).run()
        return box.region(
            certified,
            how,
            n_sampled + inside,
            corners=corners,
            check_seconds=time.perf_counter() - clock,
        )


class _Checker:
    """Whether a box (per changed feature: interval or set) reaches the target everywhere."""

    def __init__(self, finder: RegionFinder, box: _Box, target: Any) -> None:
        self.finder, self.box, self.target = finder, box, target
        self.certified = finder.exact
        self.how = "proven by interval bounds and a MILP over the box" if self.certified else ""
        self.n_checked = 0
        self.rng = np.random.default_rng(0)

    def __call__(self, changed: dict[str, Any]) -> bool:
        if self.certified:
            return all(self._proven(m, changed) for m in self.finder.models())
        return self._sampled(changed)

    def _proven(self, exact: _Exact, changed: dict[str, Any]) -> bool:
        view = exact.view
        t = view.class_index(self.target)
        conj = view.rule.region(int(t))[0]
        mg = float(view.rule.margin)
        qb = self.box.query_bounds(changed)
        lo, hi = self.box.z_box(view.inputs, changed)
        ib = interval_bounds(view, lo, hi)
        for cnd in conj:
            coef = np.asarray(cnd.coef, dtype=float)
            least = float(np.sum(np.where(coef > 0, coef * ib.y_lo, coef * ib.y_hi)))
            if least >= float(cnd.rhs) + mg:
                continue
            if not self._milp(view, qb, coef, float(cnd.rhs) + mg):
                return False
        return True

    @staticmethod
    def _milp(view: Any, qb: QueryBounds, coef: np.ndarray, threshold: float) -> bool:
        """Whether min over the box of ``coef @ y`` is proven at least ``threshold``."""
        m = Model("region")
        inputs = encode_inputs(m, view.inputs, qb)
        out = encode_outputs(m, view, inputs.z, cover=True)  # every value of the box
        m.add_objective(quicksum(float(coef[k]) * out[k] for k in np.flatnonzero(coef)))
        sol = m.solve("highs", time_limit=5.0, gap=1e-9)
        return bool(math.isfinite(sol.bound) and sol.bound >= threshold)

    def _sampled(self, changed: dict[str, Any]) -> bool:
        frame = self.box.sample(changed, self.rng, _SAMPLES)
        self.how = "checked on sampled points with the real models (the model cannot be compiled)"
        t = self.target
        ok, _ = self.finder.judge(
            frame, [t] * len(frame), [self.finder.judge.model.class_index(t)] * len(frame)
        )
        held = bool(ok.all())
        if held:  # the box kept last is the last that held: its points are the ones said
            self.n_checked = len(frame.drop_duplicates())
        return held


class _RealCheck:
    """The check with the real models before a region is returned (module docstring):
    its corners and seeded points inside it, judged as the answers were."""

    def __init__(self, finder: RegionFinder, box: _Box, target: Any) -> None:
        self.finder, self.box, self.target = finder, box, target
        self.rng = np.random.default_rng(0)

    def run(self) -> tuple[int, int, int]:
        """(corners checked, points inside checked, points the real models reject)."""
        corners = self.box.corners(self.rng, CHECK_CORNERS)
        frames = [corners]
        if len(corners) > 1:  # a box, not a point
            frames.append(self.box.inside(self.rng, CHECK_INSIDE))
        frame = pd.concat(frames, ignore_index=True)
        judge = self.finder.judge
        n = len(frame)
        ok, _ = judge(frame, [self.target] * n, [judge.model.class_index(self.target)] * n)
        return len(corners), n - len(corners), int(n - np.count_nonzero(ok))


@dataclass
class _Box:
    """The growing box: per changed feature its current range or set, and its limits."""

    schema: Any
    x: pd.Series
    row: pd.Series
    limits: dict[str, Any]
    bounds: dict[str, Any]

    @classmethod
    def start(cls, schema: Any, x: pd.Series, qb: QueryBounds, row: pd.Series) -> _Box:
        limits: dict[str, Any] = {}
        bounds: dict[str, Any] = {}
        timed = set() if qb.timeline is None else set(qb.timeline.rules)
        for j, b in enumerate(qb.features):
            f, v = b.feature, _py(row[b.feature.name])
            if not _differs(f, _py(x[f.name]), v):
                continue
            if j in timed:  # tied to the answer's month: a box of its own value only
                limits[f.name] = (float(v), float(v)) if f.is_numeric else frozenset({v})
            elif f.is_numeric:
                ends = (v, v) if b.values is not None else (b.lower, b.upper)
                limits[f.name] = (float(ends[0]), float(ends[1]))  # type: ignore[arg-type]
            else:
                limits[f.name] = frozenset(
                    b.values if b.values is not None else (f.categories or ())
                )
            bounds[f.name] = (float(v), float(v)) if f.is_numeric else frozenset({v})
        return cls(schema, x, row, limits, bounds)

    def order(self) -> list[str]:
        return list(self.bounds)

    def grow(self, name: str, check: _Checker, deadline: Deadline) -> None:
        if isinstance(self.bounds[name], frozenset):
            for value in sorted(self.limits[name] - self.bounds[name], key=str):
                if deadline.expired():
                    return
                trial = dict(self.bounds, **{name: self.bounds[name] | {value}})
                if check(trial):
                    self.bounds = trial
            return
        for side in (1, 0):
            self._extend(name, side, check, deadline)

    def _extend(self, name: str, side: int, check: _Checker, deadline: Deadline) -> None:
        """Push one side of a numeric range as far as the checker allows (bisection on the grid)."""
        f = self.schema[name]
        step = resolution(f)
        cur = self.bounds[name]
        good, far = cur[side], self.limits[name][side]
        for k in range(_STEPS + 1):
            if deadline.expired() or _same(good, far, step):
                return
            trial_value = far if k == 0 else on_grid((good + far) / 2.0, step, toward=good)
            if _same(trial_value, good, step):
                return
            trial = list(self.bounds[name])
            trial[side] = trial_value
            if check(dict(self.bounds, **{name: tuple(trial)})):
                good = trial_value
                self.bounds[name] = tuple(trial)
                if k == 0:
                    return
            else:
                far = trial_value

    def query_bounds(self, changed: dict[str, Any]) -> QueryBounds:
        """The box as a query's bounds, as :meth:`Region.contains` reads it (numeric
        ranges widened by its slack; unchanged features at the query's values)."""
        feats = []
        for f in self.schema:
            v = _py(self.x[f.name])
            b = changed.get(f.name)
            if b is None:
                feats.append(
                    FeatureBounds(f, v, *Region.accepts(v, v))
                    if f.is_numeric
                    else FeatureBounds(f, v, values=(v,))
                )
            elif isinstance(b, frozenset):
                feats.append(FeatureBounds(f, v, values=tuple(c for c in f.categories if c in b)))
            else:
                feats.append(FeatureBounds(f, v, *Region.accepts(b[0], b[1])))
        return QueryBounds(self.schema, self.x, tuple(feats), None, ())

    def z_box(self, space: Any, changed: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the raw vector ``z`` over the box."""
        lo, hi = np.zeros(space.n), np.zeros(space.n)
        for blk in space.blocks:
            b = changed.get(blk.name)
            v = _py(self.x[blk.name])
            if blk.is_indicator:
                allowed = b if isinstance(b, frozenset) else {v}
                for k, c in enumerate(blk.categories):
                    hi[blk.start + k] = 1.0 if c in allowed else 0.0
                    lo[blk.start + k] = 1.0 if allowed == {c} else 0.0
            elif blk.kind == "ordinal":
                vals = b if isinstance(b, frozenset) else {v}
                ranks = [list(blk.categories).index(c) for c in vals]
                lo[blk.start], hi[blk.start] = min(ranks), max(ranks)
            else:
                lo[blk.start], hi[blk.start] = Region.accepts(
                    *((b[0], b[1]) if b is not None else (v, v))
                )
        return lo, hi

    def sample(self, changed: dict[str, Any], rng: np.random.Generator, n: int) -> pd.DataFrame:
        """``n`` points of the box: its corners first (up to half), then uniform draws on
        the grid."""
        names = list(changed)
        cols: dict[str, list[Any]] = {name: [] for name in names}
        for k in range(n):
            for j, name in enumerate(names):
                b = changed[name]
                if isinstance(b, frozenset):
                    options = sorted(b, key=str)
                    cols[name].append(options[int(rng.integers(len(options)))])
                elif k < n // 2:
                    cols[name].append(b[(k >> j) & 1])
                else:
                    cols[name].append(
                        on_grid(
                            float(rng.uniform(b[0], b[1])),
                            resolution(self.schema[name]),
                            toward=b[0],
                        )
                    )
        frame = pd.DataFrame([self.x] * n).reset_index(drop=True)
        for name in names:
            frame[name] = cols[name]
        return self.schema.coerce(frame)

    def corners(self, rng: np.random.Generator, cap: int) -> pd.DataFrame:
        """The box's corners (:func:`~counterfact.result._points.corner_values`)."""
        return self._frame(corner_values(self.bounds, rng, cap)[0])

    def inside(self, rng: np.random.Generator, n: int) -> pd.DataFrame:
        """``n`` points inside the box (:func:`~counterfact.result._points.inside_values`)."""
        return self._frame(inside_values(self.bounds, self.schema, rng, n), n)

    def _frame(self, cols: dict[str, list[Any]], n: int = 1) -> pd.DataFrame:
        """Rows of the query with the columns ``cols`` set (``n`` rows when none is)."""
        n = len(next(iter(cols.values()))) if cols else n
        frame = pd.DataFrame([self.x] * n).reset_index(drop=True)
        for name, values in cols.items():
            frame[name] = values
        return self.schema.coerce(frame)

    def region(self, certified: bool, how: str, n_checked: int, **check: Any) -> Region:
        """The box as a :class:`Region`; ``check``: what the real models checked."""
        fixed = {f.name: _py(self.x[f.name]) for f in self.schema if f.name not in self.bounds}
        domain = {
            n: (float(self.limits[n][0]), float(self.limits[n][1]))
            for n, b in self.bounds.items()
            if not isinstance(b, frozenset)
        }
        return Region(dict(self.bounds), fixed, certified, how, n_checked, domain, **check)


def _differs(f: Any, a: Any, b: Any) -> bool:
    if f.is_numeric:
        return abs(float(a) - float(b)) > 1e-9 * max(1.0, abs(float(a)), abs(float(b)))
    return bool(a != b)


def _same(a: float, b: float, step: float | None) -> bool:
    return abs(a - b) <= (step or 0.0) * 0.5 + 1e-12 * max(1.0, abs(a), abs(b))
