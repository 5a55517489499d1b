"""Differentiable views of the black box for L2C's pathwise gradient.

L2C (Sec. 3.3) back-propagates the cross-entropy of the classifier through
the relaxed samples, so it needs the classifier as a differentiable function
of the generator's decoded representation.  This module builds one, exactly
equal to the real model on discrete rows:

* a model the model compiler (:mod:`counterfact.models._compile`) compiles to
  a linear model or a ReLU network (:class:`~counterfact.models._compile.Linear`,
  :class:`~counterfact.models._compile.MLP`) over affine preprocessing, whose
  ``predict_proba`` is a sigmoid, softmax or one-vs-rest function of the
  compiled outputs (measured on sample rows:
  :func:`~counterfact.models._compile.probability_function`):
  scikit-learn's ``LogisticRegression`` and ReLU ``MLPClassifier``, bare or in
  a pipeline, among others, and a :class:`~counterfact.models.TorchModel`
  whose module is an ``nn.Sequential`` of ``Linear`` and ``ReLU`` (its encoder
  is the compiled preprocessing).  The torch copy is translated from the IR:
  its preprocessing ``x = A z + c`` and its layers;
* any other :class:`~counterfact.models.TorchModel`: its module itself, behind
  a differentiable version of its :class:`~counterfact.data.Encoder`.

The input map is linear in the representation: with ``zbar`` the (relaxed)
one-hot vector and ``table`` the per-row decoding table
(:meth:`Representation.tables`), the model's input is
``(zbar * table) @ P_num + zbar @ P_disc + offset`` -- numeric features as the
table-weighted sum of their levels, one-hot and ordinal columns as fixed
linear images of the levels.  Anything else (trees, forests, boosting, kernel
SVMs, non-piecewise-linear networks, models the compiler does not support)
returns ``None`` and is trained with the score-function estimator instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..._utils._values import _py
from ...exceptions import UnsupportedModelError, ValidationError
from ...models import TorchModel
from ...models._compile import MLP, CompiledModel, Linear, compile_model, probability_function
from ._representation import Representation

__all__ = ["Mirror", "mirror_of"]

#: rows of the representation on which the probability function is measured
_PROBE_ROWS = 64


class Mirror:
    """A differentiable classifier over L2C's representation.

    Calling it with ``(zbar, table)`` (both ``(B, D)`` tensors) returns class
    log-probabilities ``(B, n_classes)`` in the model's ``classes_`` order.
    """

    def __init__(
        self,
        torch: Any,
        p_num: np.ndarray,
        p_disc: np.ndarray,
        offset: np.ndarray,
        head: Any,
        kind: str,
        dtype: Any,
        device: Any,
    ) -> None:
        self.torch = torch
        self.kind = kind
        self.p_num = torch.as_tensor(p_num, dtype=dtype, device=device)
        self.p_disc = torch.as_tensor(p_disc, dtype=dtype, device=device)
        self.offset = torch.as_tensor(offset, dtype=dtype, device=device)
        self.head = head

    def inputs(self, zbar: Any, table: Any) -> Any:
        """The model's input vectors."""
        return (zbar * table) @ self.p_num + zbar @ self.p_disc + self.offset

    def __call__(self, zbar: Any, table: Any) -> Any:
        return self.head(self.inputs(zbar, table))


# ----------------------------------------------------------------- heads
class _NetworkHead:
    """The compiled estimator node (a :class:`Linear` is a one-layer network) and the
    model's probability function of its outputs, as class log-probabilities."""

    def __init__(
        self, torch: Any, layers: list[tuple[Any, Any, bool]], link: str, dtype: Any, device: Any
    ) -> None:
        self.torch = torch
        self.layers = [
            (
                torch.as_tensor(np.asarray(W).T, dtype=dtype, device=device),
                torch.as_tensor(np.asarray(b), dtype=dtype, device=device),
                relu,
            )
            for W, b, relu in layers
        ]
        self.link = link

    def __call__(self, x: Any) -> Any:
        h = x
        for w, b, relu in self.layers:
            h = h @ w + b
            if relu:
                h = self.torch.relu(h)
        return _log_probabilities(self.torch, h, self.link)


def _log_probabilities(torch: Any, y: Any, link: str) -> Any:
    """Class log-probabilities from the outputs ``y`` under the probability function
    ``link`` (``"sigmoid"``: one output, binary; ``"softmax"``; ``"ovr"``)."""
    logsigmoid = torch.nn.functional.logsigmoid
    if link == "sigmoid":
        d = y[:, 0]
        return torch.stack([logsigmoid(-d), logsigmoid(d)], dim=1)
    if link == "ovr":
        ls = logsigmoid(y)
        return ls - torch.logsumexp(ls, dim=1, keepdim=True)
    return torch.log_softmax(y, dim=1)


#: the probability functions the head computes
_LINKS = ("sigmoid", "softmax", "ovr")


class _ModuleHead:
    """A :class:`TorchModel`'s module, its outputs read as the model reads them."""

    def __init__(self, model: TorchModel) -> None:
        self.model = model
        self.module = model.module

    def __call__(self, x: Any) -> Any:
        p = next(iter(self.module.parameters()), None)
        if p is not None and (x.dtype != p.dtype or x.device != p.device):
            x = x.to(dtype=p.dtype, device=p.device)
        return self.model.log_probabilities(self.module(x))


# --------------------------------------------------------------- builders
def _compiled(model: Any, rep: Representation) -> CompiledModel | None:
    """The compiled model, or None when the compiler does not support it."""
    try:
        return compile_model(model, rep.schema)
    except (UnsupportedModelError, ValidationError):
        return None


def _node_layers(compiled: CompiledModel) -> list[tuple[Any, Any, bool]] | None:
    """``(W, b, relu)`` per layer of the compiled estimator node over affine inputs
    (None: trees, step functions, or non-affine preprocessing)."""
    if not all(col.is_affine for col in compiled.affine.columns):
        return None
    est = compiled.estimator
    if isinstance(est, Linear):
        return [(est.W, est.b, False)]
    if isinstance(est, MLP):
        return [(layer.W, layer.b, layer.activation == "relu") for layer in est.layers]
    return None


def _probe_rows(rep: Representation, n: int = _PROBE_ROWS) -> pd.DataFrame:
    """``n`` raw rows drawn over the representation's levels (numeric features at
    their levels' representatives), seeded."""
    rng = np.random.default_rng(0)
    data: dict[str, Any] = {}
    for f in rep.features:
        level = rng.integers(0, f.size, size=n)
        if f.numeric:
            data[f.name] = np.asarray(f.rep, dtype=float)[level]
        else:
            cats = list(f.categories or ())
            data[f.name] = [cats[j] for j in level]
    return pd.DataFrame(data, columns=list(rep.schema.names))


def _raw_inputs(
    rep: Representation, compiled: CompiledModel
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(Z_num, Z_disc)``: the IR's raw vector ``z`` as ``(zbar * table) @ Z_num +
    zbar @ Z_disc`` (None when a level is not a category of the compiled schema)."""
    space = compiled.inputs
    z_num = np.zeros((rep.n_columns, space.n))
    z_disc = np.zeros((rep.n_columns, space.n))
    for f in rep.features:
        blk = space.block(f.name)
        rows = slice(f.start, f.start + f.size)
        if f.numeric:
            z_num[rows, blk.start] = 1.0
        elif not blk.is_indicator:  # ordinal: the rank of the level
            z_disc[rows, blk.start] = np.arange(f.size)
        else:
            cats = [_py(v) for v in blk.categories]
            if any(c not in cats for c in f.categories or ()):
                return None
            for j, cat in enumerate(f.categories or ()):
                z_disc[f.start + j, blk.start + cats.index(cat)] = 1.0
    return z_num, z_disc


def _compiled_inputs(
    rep: Representation, compiled: CompiledModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """P_num, P_disc, offset: the raw map of :func:`_raw_inputs` followed by the
    compiled preprocessing ``x = A z + c``."""
    raw = _raw_inputs(rep, compiled)
    if raw is None:
        return None
    A, c = compiled.affine.A, compiled.affine.c
    return raw[0] @ A.T, raw[1] @ A.T, np.asarray(c, dtype=float)


def _encoder_inputs(
    encoder: Any, rep: Representation
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The differentiable form of a counterfact Encoder."""
    if list(encoder.schema.names) != list(rep.schema.names):
        return None
    width = encoder.n_columns
    D = rep.n_columns
    p_num = np.zeros((D, width))
    p_disc = np.zeros((D, width))
    offset = np.zeros(width)
    for f, feat in zip(rep.features, encoder.schema, strict=True):
        cols = encoder.block(f.name)
        if f.numeric:
            off, scale = encoder.scale_of(f.name)
            p_num[f.start : f.start + f.size, cols.start] = 1.0 / scale
            offset[cols.start] = -off / scale
        elif feat.kind == "ordinal":
            off, scale = encoder.scale_of(f.name)
            p_disc[f.start : f.start + f.size, cols.start] = np.arange(f.size) / scale
            offset[cols.start] = -off / scale
        else:
            enc_cats = [_py(v) for v in feat.categories]  # type: ignore[union-attr]
            for j, cat in enumerate(f.categories):  # type: ignore[arg-type]
                p_disc[f.start + j, cols.start + enc_cats.index(cat)] = 1.0
    return p_num, p_disc, offset


def mirror_of(
    torch: Any, model: Any, rep: Representation, *, dtype: Any = None, device: Any = "cpu"
) -> Mirror | None:
    """A differentiable :class:`Mirror` of ``model`` (the user's object), or ``None``
    when the model is not one of the supported differentiable kinds."""
    dtype = dtype or torch.float32
    mirror = _compiled_mirror(torch, model, rep, dtype, device)
    if mirror is None and isinstance(model, TorchModel):  # a module the compiler refuses
        return _torch_mirror(torch, model, rep, dtype, device)
    return mirror


def _torch_mirror(
    torch: Any, model: TorchModel, rep: Representation, dtype: Any, device: Any
) -> Mirror | None:
    """A :class:`TorchModel`'s module itself behind its encoder's differentiable form."""
    mod = model.module
    if not isinstance(mod, torch.nn.Module):
        return None
    inputs = _encoder_inputs(model.encoder, rep)
    if inputs is None:
        return None
    mod.eval()
    return Mirror(torch, *inputs, _ModuleHead(model), "torch module", dtype, device)


def _compiled_mirror(
    torch: Any, model: Any, rep: Representation, dtype: Any, device: Any
) -> Mirror | None:
    """The torch copy of the compiled model (module docstring), or None."""
    predict_proba = getattr(model, "predict_proba", None)
    compiled = _compiled(model, rep) if predict_proba is not None else None
    layers = None if compiled is None else _node_layers(compiled)
    if compiled is None or layers is None:
        return None
    link = probability_function(compiled, predict_proba, _probe_rows(rep))
    inputs = _compiled_inputs(rep, compiled)
    if link not in _LINKS or inputs is None:
        return None
    head = _NetworkHead(torch, layers, link, dtype, device)
    kind = "linear model" if len(layers) == 1 else "ReLU network"
    return Mirror(torch, *inputs, head, kind, dtype, device)
