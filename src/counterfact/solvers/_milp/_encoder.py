"""The MILP encoder: the compiled model's IR as rows of a :class:`~._model.Model` (step 2).

:data:`ENCODERS` is the lookup table from IR estimator node to the function
that encodes its outputs ``y`` over the raw input variables ``z``:

* :class:`~counterfact.models._compile.Linear` -- affine rows ``W A z + W c + b``;
* :class:`~counterfact.models._compile.MLP` -- big-M ReLUs whose bounds come
  from interval arithmetic over the variables' box (stable units need no binary);
* :class:`~counterfact.models._compile.TreeEnsemble` -- Mišić's split-variable
  formulation (:mod:`._trees`);
* :class:`~counterfact.models._compile.StepMLP` -- its step trees as above, added
  to the first layer's pre-activations of the big-M network.

A node without an entry raises :class:`~counterfact.exceptions.UnsupportedModelError`
naming the node, this encoder and the alternative.  :func:`encode_decision`
adds the decision rule's target region (every condition as
``coef @ y >= rhs + margin``; a disjunction gets one binary per conjunction).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...constraints._bounds import QueryBounds
from ...exceptions import UnsupportedModelError
from ...models._compile import MLP, Linear, StepMLP, TreeEnsemble
from .._dispatch import encoder_for
from ._expr import Expr, Var, lin, quicksum
from ._inputs import RawInputs, declare_inputs, restrict_inputs
from ._model import Model
from ._trees import FeatureCuts, encode_trees

__all__ = [
    "ENCODERS",
    "Template",
    "encode_decision",
    "encode_model",
    "encode_outputs",
    "encode_template",
]

#: an estimator encoder: (model, compiled model, raw input variables z) -> outputs y
OutputEncoder = Callable[[Model, Any, list[Var]], list[Expr]]


def _affine(z: list[Var], M: np.ndarray, b: np.ndarray) -> list[Expr]:
    out = []
    for r in range(M.shape[0]):
        nz = np.flatnonzero(M[r])
        out.append(lin([z[k] for k in nz], M[r, nz], float(b[r])))
    return out


def _encode_linear(m: Model, compiled: Any, z: list[Var]) -> list[Expr]:
    """``W (A z + c) + b``, folded into one affine map of ``z``."""
    est = compiled.estimator
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    W = np.asarray(est.W, dtype=float)
    return _affine(z, W @ A, W @ c + np.asarray(est.b, dtype=float))


def _encode_mlp(m: Model, compiled: Any, z: list[Var]) -> list[Expr]:
    """Big-M ReLU network; pre-activation bounds by interval arithmetic over the
    variables' (query box) bounds -- at layer 1 over ``z`` directly, which is
    tighter than a box on ``x``."""
    return _network(m, compiled, compiled.estimator.layers, z)


def _encode_step_mlp(m: Model, compiled: Any, z: list[Var], cover: bool = False) -> list[Expr]:
    """:class:`~counterfact.models._compile.StepMLP`: its step trees in Mišić's
    formulation (:mod:`._trees`), added to the first layer of the big-M network."""
    est = compiled.estimator
    steps = encode_trees(m, replace(compiled, estimator=est.steps), z, cover=cover)
    return _network(m, compiled, est.net.layers, z, steps)


def _network(
    m: Model, compiled: Any, layers: Any, z: list[Var], steps: list[Expr] | None = None
) -> list[Expr]:
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    first = layers[0]
    W = np.asarray(first.W, dtype=float)
    pre = _affine(z, W @ A, W @ c + np.asarray(first.b, dtype=float))
    if steps is not None:
        pre = [p + s for p, s in zip(pre, steps, strict=True)]
    h: list[Expr] = pre
    for li, layer in enumerate(layers):
        if li > 0:
            Wl = np.asarray(layer.W, dtype=float)
            bl = np.asarray(layer.b, dtype=float)
            pre = [
                quicksum(Wl[r, k] * h[k] for k in np.flatnonzero(Wl[r])) + float(bl[r])
                for r in range(Wl.shape[0])
            ]
        if layer.activation == "relu":
            h = [m.add_relu(p, name=f"h{li}_{r}") for r, p in enumerate(pre)]
        elif layer.activation == "identity":
            h = pre
        else:  # pragma: no cover - the compiler only emits relu / identity
            raise UnsupportedModelError(
                f"The MILP encoder cannot encode activation {layer.activation!r}; supported: "
                "relu, identity."
            )
    return h


#: IR estimator node -> its encoder (module docstring)
ENCODERS: dict[type, OutputEncoder] = {
    Linear: _encode_linear,
    MLP: _encode_mlp,
    TreeEnsemble: encode_trees,
    StepMLP: _encode_step_mlp,
}

#: the nodes whose encoders split on cuts and take ``cover`` (:func:`encode_outputs`)
_SPLITTING = (TreeEnsemble, StepMLP)


def encode_outputs(m: Model, compiled: Any, z: list[Var], *, cover: bool = False) -> list[Expr]:
    """The estimator's outputs ``y`` as expressions over ``z`` (the :data:`ENCODERS` entry of
    its node).  ``cover``: for a proof over the variables' box, every value of the box
    (next to a tree cut too) reaches the branch the model sends it to (:mod:`._trees`);
    by default a solution keeps a safety distance from every cut."""
    encode = encoder_for(
        ENCODERS,
        compiled.estimator,
        encoder="MILP encoder (counterfact.solvers._milp)",
        alternative=(
            "Use a model kind the compiler supports (lr, svm, tree, rf, gbm, mlp, xgb, lgbm)."
        ),
    )
    if cover and isinstance(compiled.estimator, _SPLITTING):
        return encode(m, compiled, z, cover=True)  # type: ignore[call-arg]
    return encode(m, compiled, z)


def encode_decision(
    m: Model, compiled: Any, outputs: list[Expr], target_index: int, margin: float | None = None
) -> None:
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


def encode_model(
    m: Model, compiled: Any, z: list[Var], target_index: int, margin: float | None = None
) -> list[Expr]:
    """:func:`encode_outputs` + :func:`encode_decision`; returns the outputs."""
    out = encode_outputs(m, compiled, z)
    encode_decision(m, compiled, out, target_index, margin)
    return out


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
    # : a tree ensemble's split binaries and rank indicators per feature
    # (:class:`~._trees.FeatureCuts`)
    cuts: dict[str, FeatureCuts] = field(default_factory=dict)

    def instance(
        self,
        bounds: QueryBounds,
        target_index: int,
        margin: float | None = None,
        *,
        changes: bool,
        decision: Any = None,
    ) -> tuple[Model, RawInputs] | None:
        """A copy narrowed to one query with its decision region (target, margin),
        or None when the query's box leaves the template's domain.  ``decision``: the
        same compiled model under another decision rule (a probability margin)."""
        if decision is not None and decision.estimator is not self.compiled.estimator:
            return None  # other outputs (a forest's vote shares): not embedded in the template
        m = self.model.copy()
        inp = restrict_inputs(m, self.compiled.inputs, self.z, bounds, changes=changes)
        if inp is None:
            return None
        encode_decision(
            m, self.compiled if decision is None else decision, self.outputs, target_index, margin
        )
        return m, inp


def encode_template(compiled: Any) -> Template:
    """:func:`declare_inputs` over the whole domain plus :func:`encode_outputs` (a
    :class:`Template`; the decision region is added per query).  Big-M constants
    come from the domain, so they hold for every query inside it."""
    t0 = time.perf_counter()
    m = Model("template")
    z = declare_inputs(m, compiled.inputs)
    cuts: dict[str, FeatureCuts] = {}
    if isinstance(compiled.estimator, TreeEnsemble):
        out = encode_trees(m, compiled, z, cuts=cuts)
    else:
        out = encode_outputs(m, compiled, z)
    m.freeze()
    return Template(m, z, out, compiled, time.perf_counter() - t0, cuts)
