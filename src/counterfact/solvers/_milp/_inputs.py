"""The raw input vector of one query as MILP variables, and what is read or cut from it.

Steps 1 and 3 of the MILP encoder (:mod:`counterfact.solvers._milp`):
:func:`encode_inputs` (or :func:`declare_inputs` over the whole domain, then
:func:`restrict_inputs` per query) and :func:`feature_deltas`; then the change
cap (:func:`add_change_limit`), the cuts that exclude an earlier answer
(:func:`no_good_superset`, :func:`exclude_point`), and the readers of a
solution (:func:`changed_set`, :func:`decode`).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._utils._values import _py
from ...constraints._bounds import QueryBounds
from ._expr import Expr, Var, lin, quicksum
from ._model import Model

__all__ = [
    "REAL_STEP",
    "FeatureVars",
    "RawInputs",
    "add_change_limit",
    "changed_set",
    "declare_inputs",
    "decode",
    "encode_inputs",
    "exclude_point",
    "feature_deltas",
    "no_good_superset",
    "restrict_inputs",
]

#: minimum change of a real feature flagged as changed (relative to its range)
REAL_STEP = 1e-5


@dataclass
class FeatureVars:
    """The variables of one raw feature.

    ``value``: the numeric value or ordinal rank (a variable), ``None`` for
    categorical features.  ``indicators``: one-hot category indicators
    (categorical), or value indicators (finite allowed values).  ``query``:
    the query in solver units (value, rank or category index).  ``changed``:
    the change indicator ``b_j`` as an expression (``None`` unless requested;
    the constant 0 for fixed features).  ``up``/``down``: direction binaries.
    """

    name: str
    kind: str
    query: float
    lower: float
    upper: float
    value: Var | None = None
    indicators: list[Var] = field(default_factory=list)
    values: tuple[float, ...] | None = None
    changed: Expr | None = None
    up: Var | None = None
    down: Var | None = None
    fixed: bool = False
    span: float = 1.0  # the schema's range of a real feature (steps are fractions of it)


@dataclass
class RawInputs:
    """The raw vector ``z`` (variables, InputSpace layout) and per-feature handles."""

    space: Any
    z: list[Var]
    features: list[FeatureVars]

    def changed(self) -> list[Expr]:
        """Change indicators of the features that can change."""
        return [f.changed for f in self.features if f.changed is not None and not f.fixed]


# ------------------------------------------------------------------ inputs
def encode_inputs(
    m: Model,
    space: Any,
    bounds: QueryBounds,
    *,
    changes: bool = False,
    real_step: float = REAL_STEP,
) -> RawInputs:
    """Variables for the raw vector of one query (:mod:`counterfact.solvers._milp` docstring,
    step 1).

    Parameters
    ----------
    m : Model
    space : InputSpace
        ``compiled.inputs`` (or ``InputSpace.from_schema(schema)``).
    bounds : QueryBounds
        The query's per-feature bounds (every constraint kind merged).
    changes : bool
        Create change indicators (forced when ``bounds.max_changes`` is set).
    real_step : float
        Smallest change of a real feature that counts as a change, as a
        fraction of its range (integers and ranks: 1).
    """
    z = declare_inputs(m, space, bounds)
    out = restrict_inputs(m, space, z, bounds, changes=changes, real_step=real_step)
    assert out is not None  # internal invariant: the variables were declared on this box
    return out


def _query_box(blk: Any, b: Any) -> tuple[float, float, float, tuple[float, ...] | None, bool]:
    """(query value, lower, upper, finite values or None, integral) of a numeric / ordinal block."""
    q = _py(b.value)
    if blk.kind == "ordinal":
        cats = list(blk.categories)
        ranks = sorted(cats.index(c) for c in (b.values if b.values is not None else cats))
        lo, hi = (float(ranks[0]), float(ranks[-1])) if ranks else (0.0, -1.0)
        vals = (
            None if ranks == list(range(int(lo), int(hi) + 1)) else tuple(float(r) for r in ranks)
        )
        return float(cats.index(q)), lo, hi, vals, True
    vals = None if b.values is None else tuple(sorted({float(v) for v in b.values}))
    return float(q), float(b.lower), float(b.upper), vals, blk.kind == "integer"


def declare_inputs(m: Model, space: Any, bounds: QueryBounds | None = None) -> list[Var]:
    """The raw vector ``z`` as variables: one-hot indicators (with ``sum = 1``) per
    categorical feature and one variable per numeric value or ordinal rank.

    With ``bounds`` the variables get the query's box; without, the whole domain
    of the input space (a per-model template that :func:`restrict_inputs` narrows
    per query).
    """
    z: list[Var | None] = [None] * space.n
    for blk in space.blocks:
        if blk.is_indicator:
            cats = list(blk.categories)
            allowed = set(range(len(cats)))
            if bounds is not None:
                b = bounds[blk.name]
                allowed = {cats.index(c) for c in (b.values if b.values is not None else cats)}
            ind = [
                m.add_var(0.0, 1.0 if k in allowed else 0.0, integer=True, name=f"{blk.name}={c}")
                for k, c in enumerate(cats)
            ]
            m.add_eq(quicksum(ind), 1.0)
            for k, v in enumerate(ind):
                z[blk.start + k] = v
            continue
        if bounds is not None:
            _, lo, hi, _, integral = _query_box(blk, bounds[blk.name])
        else:
            lo, hi, integral = (
                float(blk.lower),
                float(blk.upper),
                blk.kind in ("integer", "ordinal"),
            )
        z[blk.start] = m.add_var(lo, hi, integer=integral, name=blk.name)
    return z  # type: ignore[return-value]


def restrict_inputs(
    m: Model,
    space: Any,
    z: list[Var],
    bounds: QueryBounds,
    *,
    changes: bool = False,
    real_step: float = REAL_STEP,
) -> RawInputs | None:
    """Narrow the variables ``z`` (from :func:`declare_inputs`) to one query's
    bounds and add its value indicators and change indicators.

    Returns None when the query's box is not inside the variables' current
    bounds (then the model's big-M constants, derived from those bounds, would
    cut the query's domain: build the model for the query instead).
    """
    changes = changes or bounds.max_changes is not None
    feats: list[FeatureVars] = []
    for blk in space.blocks:
        if blk.is_indicator:
            fv = _restrict_categorical(m, blk, bounds[blk.name], z, changes=changes)
        else:
            fv = _restrict_numeric(
                m, blk, bounds[blk.name], z, changes=changes, real_step=real_step
            )
        if fv is None:
            return None
        feats.append(fv)
    return RawInputs(space, z, feats)


def _restrict_categorical(
    m: Model, blk: Any, b: Any, z: list[Var], *, changes: bool
) -> FeatureVars | None:
    """Close the one-hot indicators of the categories ``b`` does not allow; None when an
    allowed category's indicator is already closed in ``m``."""
    cats = list(blk.categories)
    qi = cats.index(_py(b.value))
    allowed = set(cats.index(c) for c in (b.values if b.values is not None else cats))
    ind = [z[blk.start + k] for k in range(len(cats))]
    for k, v in enumerate(ind):
        _, vhi = m.var_bounds(v)
        if k not in allowed:
            m.set_bounds(v, 0.0, 0.0)
        elif vhi < 1.0:
            return None
    fixed = allowed <= {qi}
    fv = FeatureVars(
        blk.name, blk.kind, float(qi), 0.0, float(len(cats) - 1), None, ind, fixed=fixed
    )
    if changes:
        fv.changed = (1 - ind[qi]) if qi in allowed else Expr({}, 1.0)
    return fv


def _restrict_numeric(
    m: Model, blk: Any, b: Any, z: list[Var], *, changes: bool, real_step: float
) -> FeatureVars | None:
    """Narrow a numeric or ordinal variable to the query's box (with value indicators
    when only listed values are allowed); None when the box is not inside the
    variable's current bounds."""
    qv, lo, hi, vals, integral = _query_box(blk, b)
    step = 1.0 if integral else max(real_step * b.feature.range, 1e-9)
    x = z[blk.start]
    if integral:
        lo, hi = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))
    vlo, vhi = m.var_bounds(x)
    if lo < vlo - 1e-9 or hi > vhi + 1e-9:
        return None
    m.set_bounds(x, lo, hi)
    fv = FeatureVars(
        blk.name,
        blk.kind,
        qv,
        lo,
        hi,
        x,
        values=vals,
        span=1.0 if integral else float(b.feature.range),
    )
    if vals is not None:
        fv.indicators = [m.add_binary(name=f"{blk.name}={v:g}") for v in vals]
        m.add_eq(quicksum(fv.indicators), 1.0)
        m.add_eq(x - lin(fv.indicators, vals), 0.0)
        fv.fixed = len(vals) == 1 and abs(vals[0] - qv) <= 1e-12
    else:
        fv.fixed = hi - lo <= 0 and abs(lo - qv) <= 1e-12
    if changes:
        _change_indicator(m, fv, step)
    return fv


def _change_indicator(m: Model, fv: FeatureVars, step: float) -> None:
    q, lo, hi, x = fv.query, fv.lower, fv.upper, fv.value
    assert x is not None  # internal invariant
    if fv.fixed:
        fv.changed = Expr()
        return
    if fv.values is not None:
        hits = [k for k, v in enumerate(fv.values) if abs(v - q) <= 1e-12]
        fv.changed = (1 - fv.indicators[hits[0]]) if hits else Expr({}, 1.0)
        return
    if q < lo or q > hi:  # the query is outside its own allowed box: must change
        fv.changed = Expr({}, 1.0)
        return
    can_up = hi >= q + step
    can_down = lo <= q - step
    terms = Expr()
    if can_up:
        u = fv.up = m.add_binary(name=f"{fv.name}_up")
        m.add_le(x - q - (hi - q) * u, 0.0)  # x <= q unless up
        m.add_indicator(u, x.expr(), ">=", q + step)  # up => x >= q + step
        terms = terms + u
    else:
        m.set_bounds(x, lo, min(hi, q))
    if can_down:
        w = fv.down = m.add_binary(name=f"{fv.name}_down")
        m.add_le(q - x - (q - lo) * w, 0.0)  # x >= q unless down
        m.add_indicator(w, x.expr(), "<=", q - step)
        terms = terms + w
    else:
        m.set_bounds(x, max(lo, q), m.var_bounds(x)[1])
    if can_up and can_down:
        m.add_le(fv.up + fv.down, 1.0)  # type: ignore[operator]
    fv.changed = terms


# ------------------------------------------------- cuts and read-back
def add_change_limit(m: Model, inputs: RawInputs, k: int, *, skip: Collection[str] = ()) -> None:
    """``sum_j b_j <= k`` over the features not named in ``skip`` (those only time moves)
    (needs ``encode_inputs(..., changes=True)``)."""
    ch = [
        f.changed
        for f in inputs.features
        if f.changed is not None and not f.fixed and f.name not in skip
    ]
    if ch:
        m.add_le(quicksum(ch), float(k))
    elif k < 0:
        m.add_le(Expr({}, 1.0), 0.0)


def no_good_superset(m: Model, inputs: RawInputs, changed_features: list[str]) -> None:
    """Exclude every point whose change set contains ``changed_features``:
    ``sum_{j in S} b_j <= |S| - 1`` (at least one earlier change must stay put)."""
    by = {f.name: f for f in inputs.features}
    terms = [by[n].changed for n in changed_features]
    if any(t is None for t in terms):
        raise ValueError(
            "no_good_superset needs change indicators (encode_inputs(..., changes=True))."
        )
    m.add_le(quicksum(terms), float(len(terms) - 1))  # type: ignore[arg-type]


def exclude_point(
    m: Model, inputs: RawInputs, x: np.ndarray, *, real_step: float = REAL_STEP, steps: Any = None
) -> bool:
    """Demand that the next solution differs from the solution ``x`` in at least
    one feature (the diversity criterion of MACE and CE-OCL): a categorical
    feature takes another category, an integer / ordinal moves by at least 1,
    a real feature by at least ``real_step`` of its range; with ``steps`` (per
    feature, raw units, e.g. the shared diversity steps) a numeric feature must
    move by more than its step.  One binary per
    direction per feature and ``sum >= 1``.  Returns False (adding nothing
    but an infeasible row) when no feature can move at all."""
    terms: list[Expr | Var] = []
    for j, (blk, f) in enumerate(zip(inputs.space.blocks, inputs.features, strict=True)):
        if f.fixed:
            continue
        if f.value is None or f.values is not None:  # a category or a finite value set: another one
            k = int(np.argmax([x[v.index] for v in f.indicators]))
            terms.append(1 - f.indicators[k])
            continue
        v = float(x[f.value.index])
        lo, hi = m.var_bounds(f.value)
        integral = blk.kind in ("integer", "ordinal")
        extra = 0.0 if steps is None else float(steps[j])
        if integral:
            v = float(round(v))
            step = float(math.floor(extra) + 1) if extra >= 1 else 1.0
        else:
            # strictly more than the feature's diversity step
            step = max(real_step * f.span, extra * (1 + 1e-6) + 1e-9, 1e-9)
        if v + step <= hi:
            u = m.add_binary(name=f"{f.name}_gt_prev")
            m.add_indicator(u, f.value.expr(), ">=", v + step)
            terms.append(u)
        if v - step >= lo:
            w = m.add_binary(name=f"{f.name}_lt_prev")
            m.add_indicator(w, f.value.expr(), "<=", v - step)
            terms.append(w)
    if not terms:
        m.add_le(Expr({}, 1.0), 0.0)
        return False
    m.add_ge(quicksum(terms), 1.0)  # type: ignore[arg-type]
    return True


def feature_deltas(m: Model, inputs: RawInputs, scales: Any) -> list[Expr]:
    """Per-feature ``|x_j - q_j| / scale_j`` (numeric value or ordinal rank) and the
    change indicator for categorical features; exact where a direction fixes
    the sign, an epigraph variable otherwise (tight when minimised)."""
    scales = np.asarray(scales, dtype=float)
    out: list[Expr] = []
    for j, f in enumerate(inputs.features):
        if f.fixed:
            out.append(Expr())
            continue
        if f.value is None:
            qi = int(f.query)
            out.append(1 - f.indicators[qi])
            continue
        s = 1.0 / scales[j]
        lo, hi = m.var_bounds(f.value)
        if lo >= f.query:
            out.append((f.value - f.query) * s)
        elif hi <= f.query:
            out.append((f.query - f.value) * s)
        else:
            out.append(m.add_abs((f.value - f.query) * s, name=f"d_{f.name}").expr())
    return out


def changed_set(inputs: RawInputs, x: np.ndarray) -> list[str]:
    """Names of the features whose change indicator is on in ``x``."""
    out = []
    for f in inputs.features:
        if f.changed is not None and not f.fixed:
            e = f.changed
            if sum(c * x[k] for k, c in e.terms.items()) + e.const > 0.5:
                out.append(f.name)
    return out


def decode(inputs: RawInputs, x: np.ndarray) -> dict[str, Any]:
    """A solution vector as a raw row (categories as categories, integers as ints,
    reals clipped to their bounds; a value whose change indicator is off, or
    within 1e-9 relative of the query, is snapped to the query's value)."""
    out: dict[str, Any] = {}
    for blk, f in zip(inputs.space.blocks, inputs.features, strict=True):
        if f.value is None:
            vals = np.array([x[v.index] for v in f.indicators])
            out[blk.name] = blk.categories[int(np.argmax(vals))]
            continue
        v = float(x[f.value.index])
        if f.values is not None:
            v = f.values[int(np.argmax([x[i.index] for i in f.indicators]))]
        v = min(max(v, f.lower), f.upper)
        if f.changed is not None:
            e = f.changed
            if (
                sum(c * x[k] for k, c in e.terms.items()) + e.const < 0.5
                and f.lower <= f.query <= f.upper
            ):
                v = f.query
        elif abs(v - f.query) <= 1e-9 * max(1.0, abs(f.query)):
            v = f.query
        if blk.kind == "ordinal":
            out[blk.name] = blk.categories[round(float(v))]
        elif blk.kind == "integer":
            out[blk.name] = round(float(v))
        else:
            out[blk.name] = v
    return out
