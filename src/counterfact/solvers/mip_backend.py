"""The compiler's IR as mixed-integer constraints on a :class:`~counterfact.solvers.mip.Model`.

Used by CE-OCL (the whole counterfactual MIP) and by MACE's MILP oracle for ReLU
networks.  Three steps, each a plain function:

1. :func:`encode_inputs` -- the raw input vector ``z`` of one query (the
   :class:`~counterfact.models.compile.InputSpace` layout: numeric raw values,
   one 0/1 indicator per category, ordinal ranks) as variables whose domain is
   the query's :class:`~counterfact.constraints.QueryBounds`: one-hot
   coherence (``sum = 1``, disallowed categories fixed to 0), integer domains,
   immutables (fixed), directions and ranges (bounds), finite allowed values
   (value indicators), and optionally *change indicators* ``b_j`` with direction
   binaries ``u_j + w_j = b_j`` (``u_j => x_j >= q_j + step``, ``w_j => x_j <=
   q_j - step``, ``b_j = 0 => x_j = q_j``; ``reference/solvers.md`` §4: without
   the direction binaries a no-good cut can be dodged with a zero change), the
   change cap ``sum_j b_j <= K``.
2. :func:`encode_model` -- the estimator on ``z``: :class:`Linear` as rows,
   :class:`MLP` with big-M ReLUs whose bounds come from interval arithmetic over
   the query's box (stable units need no binary), :class:`TreeEnsemble` in
   Mišić's split-variable formulation (one binary per distinct raw cut per
   feature, ``y_{j,k} = 1 <=> z_j <= t_k``, ordered ``y_{j,k} <= y_{j,k+1}``;
   continuous leaf variables per tree; categorical splits read the one-hot
   indicators directly), then the decision rule's target region with every
   condition as ``coef @ y >= rhs + margin`` (margin 1e-4 by default; a
   disjunction gets one binary per conjunction).
3. :func:`feature_deltas` -- per-feature normalised deviations
   ``|x_j - q_j| / scale_j`` (categorical: the change indicator), from which
   callers build their distance (MACE's normalised l0/l1/linf, CE-OCL's l1/l2).

:func:`decode` turns a solution back into a raw row, :func:`no_good_superset`
adds the cut that excludes every superset of an earlier change set, and
:func:`encode_regressor` embeds a fitted regressor (linear models, ReLU
``MLPRegressor``, optionally behind scalers) for learned causal constraints.

Example (MACE-style feasibility of "a counterfactual within distance ``d``")::

    m = Model()
    inp = encode_inputs(m, compiled.inputs, query.bounds, changes=False)
    encode_model(m, compiled, inp.z, query.target_index)
    deltas = feature_deltas(m, inp, scales=schema.ranges())
    m.add_le(quicksum(deltas) * (1 / len(deltas)), d)      # normalised l1
    sol = m.solve("highs", time_limit=10)
    row = decode(inp, sol.x) if sol.has_solution else None
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..constraints import QueryBounds
from ..exceptions import UnsupportedModelError
from ._mip_inputs import (
    REAL_STEP,
    FeatureVars,
    RawInputs,
    declare_inputs,
    encode_inputs,
    restrict_inputs,
)
from ._mip_regressor import encode_regressor
from .mip import Expr, Model, Var, lin, quicksum

__all__ = [
    "FeatureVars",
    "RawInputs",
    "Template",
    "add_change_limit",
    "changed_set",
    "declare_inputs",
    "decode",
    "encode_decision",
    "encode_inputs",
    "encode_model",
    "encode_outputs",
    "encode_regressor",
    "encode_template",
    "feature_deltas",
    "no_good_superset",
    "restrict_inputs",
]


@dataclass
class Template:
    """The estimator and its decision region embedded once per model, target and
    margin over the whole input domain (:func:`encode_template`).

    Per query, :meth:`instance` copies it and narrows the inputs to the query's
    bounds (:func:`restrict_inputs`): only the query-dependent parts (bounds,
    change indicators, objective) are built per query.
    """

    model: Model
    z: list[Var]
    outputs: list[Expr]
    compiled: Any
    seconds: float = 0.0

    def instance(
        self, bounds: QueryBounds, target_index: int, margin: float | None = None, *, changes: bool
    ) -> tuple[Model, RawInputs] | None:
        """A copy narrowed to one query with its decision region (target, margin),
        or None when the query's box leaves the template's domain."""
        m = self.model.copy()
        inp = restrict_inputs(m, self.compiled.inputs, self.z, bounds, changes=changes)
        if inp is None:
            return None
        encode_decision(m, self.compiled, self.outputs, target_index, margin)
        return m, inp


def encode_template(compiled: Any) -> Template:
    """:func:`declare_inputs` over the whole domain plus :func:`encode_outputs` (a
    :class:`Template`; the decision region is added per query).  Big-M constants
    come from the domain, so they hold for every query inside it."""
    import time

    t0 = time.perf_counter()
    m = Model("template")
    z = declare_inputs(m, compiled.inputs)
    out = encode_outputs(m, compiled, z)
    m.freeze()
    return Template(m, z, out, compiled, time.perf_counter() - t0)


def add_change_limit(m: Model, inputs: RawInputs, k: int) -> None:
    """``sum_j b_j <= k`` (needs ``encode_inputs(..., changes=True)``)."""
    ch = inputs.changed()
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
        raise ValueError("no_good_superset needs change indicators (encode_inputs(..., changes=True)).")
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
            if sum(c * x[k] for k, c in e.terms.items()) + e.const < 0.5 and f.lower <= f.query <= f.upper:
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


# ------------------------------------------------------------------- model
def encode_outputs(m: Model, compiled: Any, z: list[Var]) -> list[Expr]:
    """The estimator's outputs ``y`` as expressions over ``z``."""
    from ..models.compile import MLP, Linear, TreeEnsemble

    est = compiled.estimator
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    if isinstance(est, Linear):
        W = np.asarray(est.W, dtype=float)
        return _affine(z, W @ A, W @ c + np.asarray(est.b, dtype=float))
    if isinstance(est, MLP):
        return _mlp(m, z, A, c, est)
    if isinstance(est, TreeEnsemble):
        from ._mip_trees import encode_trees

        return encode_trees(m, compiled, z)
    raise UnsupportedModelError(
        f"The MIP backend cannot encode the IR node {type(est).__name__}; it supports Linear, MLP "
        "and TreeEnsemble. Use a model kind the compiler supports (lr, svm, tree, rf, gbm, mlp, xgb, lgbm)."
    )


def _affine(z: list[Var], M: np.ndarray, b: np.ndarray) -> list[Expr]:
    out = []
    for r in range(M.shape[0]):
        nz = np.flatnonzero(M[r])
        out.append(lin([z[k] for k in nz], M[r, nz], float(b[r])))
    return out


def _mlp(m: Model, z: list[Var], A: np.ndarray, c: np.ndarray, est: Any) -> list[Expr]:
    """Big-M ReLU network; pre-activation bounds by interval arithmetic over the
    variables' (query box) bounds -- at layer 1 over ``z`` directly, which is
    tighter than a box on ``x``."""
    layers = est.layers
    first = layers[0]
    W = np.asarray(first.W, dtype=float)
    pre = _affine(z, W @ A, W @ c + np.asarray(first.b, dtype=float))
    h: list[Expr] = pre
    for li, layer in enumerate(layers):
        if li > 0:
            Wl = np.asarray(layer.W, dtype=float)
            bl = np.asarray(layer.b, dtype=float)
            pre = [quicksum(Wl[r, k] * h[k] for k in np.flatnonzero(Wl[r])) + float(bl[r]) for r in range(Wl.shape[0])]
        if layer.activation == "relu":
            h = [m.add_relu(p, name=f"h{li}_{r}") for r, p in enumerate(pre)]
        elif layer.activation == "identity":
            h = pre
        else:  # pragma: no cover - the compiler only emits relu / identity
            raise UnsupportedModelError(f"The MIP backend cannot encode activation {layer.activation!r}.")
    return h


def encode_decision(m: Model, compiled: Any, outputs: list[Expr], target_index: int, margin: float | None = None) -> None:
    """Rows forcing ``rule(y) == target`` (each condition ``coef @ y >= rhs + margin``)."""
    mg = float(compiled.rule.margin if margin is None else margin)
    region = compiled.rule.region(int(target_index))

    def cond_expr(cnd: Any) -> Expr:
        nz = np.flatnonzero(cnd.coef)
        return quicksum(float(cnd.coef[k]) * outputs[k] for k in nz)

    if len(region) == 1:
        for cnd in region[0]:
            m.add_ge(cond_expr(cnd), float(cnd.rhs) + mg)
        return
    pick = [m.add_binary(name=f"region{k}") for k in range(len(region))]
    m.add_ge(quicksum(pick), 1.0)
    for a, conj in zip(pick, region, strict=True):
        for cnd in conj:
            m.add_indicator(a, cond_expr(cnd), ">=", float(cnd.rhs) + mg)


def encode_model(m: Model, compiled: Any, z: list[Var], target_index: int, margin: float | None = None) -> list[Expr]:
    """:func:`encode_outputs` + :func:`encode_decision`; returns the outputs."""
    out = encode_outputs(m, compiled, z)
    encode_decision(m, compiled, out, target_index, margin)
    return out
