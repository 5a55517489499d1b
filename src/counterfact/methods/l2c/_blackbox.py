"""Differentiable views of the black box for L2C's pathwise gradient.

L2C (Sec. 3.3) back-propagates the cross-entropy of the classifier through
the relaxed samples, so it needs the classifier as a differentiable function
of the generator's decoded representation.  This module builds one, exactly
equal to the real model on discrete rows:

* a scikit-learn ``LogisticRegression`` or ``MLPClassifier`` inside the
  library's standard pipeline (``ColumnTransformer`` with ``num`` scaler or
  passthrough, ``cat`` one-hot, ``ord`` ordinal codes; see
  :mod:`counterfact.models._fit`), or on a purely numeric frame: a torch
  mirror built from the fitted weights and the preprocessing's statistics;
* a :class:`~counterfact.models.TorchModel`: its module behind a
  differentiable version of its :class:`~counterfact.data.Encoder`.

The input map is linear in the representation: with ``zbar`` the (relaxed)
one-hot vector and ``table`` the per-row decoding table
(:meth:`Representation.tables`), the model's input is
``(zbar * table) @ P_num + zbar @ P_disc + offset`` -- numeric features as the
table-weighted sum of their levels, one-hot and ordinal columns as fixed
linear images of the levels.  Anything else (trees, forests, boosting, SVMs,
other pipelines) returns ``None`` and is trained with the score-function
estimator instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._utils._values import _py
from ...models import TorchModel
from ._representation import Representation

__all__ = ["Mirror", "mirror_of"]


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
class _LinearHead:
    def __init__(
        self,
        torch: Any,
        coef: np.ndarray,
        intercept: np.ndarray,
        ovr: bool,
        dtype: Any,
        device: Any,
    ) -> None:
        self.torch = torch
        self.w = torch.as_tensor(np.asarray(coef).T, dtype=dtype, device=device)
        self.b = torch.as_tensor(np.asarray(intercept), dtype=dtype, device=device)
        self.ovr = ovr

    def __call__(self, x: Any) -> Any:
        torch = self.torch
        d = x @ self.w + self.b
        if d.shape[1] == 1:
            d = d[:, 0]
            return torch.stack(
                [torch.nn.functional.logsigmoid(-d), torch.nn.functional.logsigmoid(d)], dim=1
            )
        if self.ovr:
            ls = torch.nn.functional.logsigmoid(d)
            return ls - torch.logsumexp(ls, dim=1, keepdim=True)
        return torch.log_softmax(d, dim=1)


class _MLPHead:
    def __init__(
        self,
        torch: Any,
        coefs: list[np.ndarray],
        intercepts: list[np.ndarray],
        activation: str,
        out: str,
        dtype: Any,
        device: Any,
    ) -> None:
        self.torch = torch
        self.ws = [torch.as_tensor(w, dtype=dtype, device=device) for w in coefs]
        self.bs = [torch.as_tensor(b, dtype=dtype, device=device) for b in intercepts]
        self.activation = activation
        self.out = out

    def _act(self, h: Any) -> Any:
        torch = self.torch
        if self.activation == "relu":
            return torch.relu(h)
        if self.activation == "tanh":
            return torch.tanh(h)
        if self.activation == "logistic":
            return torch.sigmoid(h)
        return h

    def __call__(self, x: Any) -> Any:
        torch = self.torch
        h = x
        for k, (w, b) in enumerate(zip(self.ws, self.bs, strict=True)):
            h = h @ w + b
            if k < len(self.ws) - 1:
                h = self._act(h)
        if self.out == "logistic" and h.shape[1] == 1:
            d = h[:, 0]
            return torch.stack(
                [torch.nn.functional.logsigmoid(-d), torch.nn.functional.logsigmoid(d)], dim=1
            )
        if self.out == "logistic":  # multi-label output: not a classifier we can mirror
            raise ValueError("multi-label MLP")
        return torch.log_softmax(h, dim=1)


class _ModuleHead:
    def __init__(self, torch: Any, module: Any) -> None:
        self.torch = torch
        self.module = module

    def __call__(self, x: Any) -> Any:
        p = next(iter(self.module.parameters()), None)
        if p is not None and (x.dtype != p.dtype or x.device != p.device):
            x = x.to(dtype=p.dtype, device=p.device)
        return self.torch.log_softmax(self.module(x), dim=1)


# --------------------------------------------------------------- builders
def _estimator_head(torch: Any, est: Any, dtype: Any, device: Any) -> tuple[Any, str] | None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier

    if isinstance(est, LogisticRegression):
        ovr = getattr(est, "multi_class", "auto") == "ovr" or (
            getattr(est, "multi_class", "auto") == "auto"
            and getattr(est, "solver", "") == "liblinear"
            and len(est.classes_) > 2
        )
        return _LinearHead(
            torch, est.coef_, est.intercept_, bool(ovr), dtype, device
        ), "logistic regression"
    if isinstance(est, MLPClassifier):
        if est.out_activation_ not in ("logistic", "softmax") or (
            est.out_activation_ == "logistic" and len(est.classes_) != 2
        ):
            return None
        return _MLPHead(
            torch,
            list(est.coefs_),
            list(est.intercepts_),
            est.activation,
            est.out_activation_,
            dtype,
            device,
        ), "MLP"
    return None


def _pipeline_inputs(
    pre: Any, rep: Representation
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """P_num, P_disc, offset for a fitted ColumnTransformer of the standard layout."""
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler

    schema = rep.schema
    blocks: list[tuple[str, Any, list[str]]] = []
    for name, trans, cols in pre.transformers_:
        if isinstance(trans, str) and trans == "drop":
            continue
        if isinstance(cols, slice) or (len(cols) and not isinstance(next(iter(cols)), str)):
            return None
        cols = list(cols)
        if not cols:
            continue
        if any(c not in schema for c in cols):
            return None
        blocks.append((name, trans, cols))
    width = 0
    for _, trans, cols in blocks:
        if isinstance(trans, OneHotEncoder):
            width += sum(len(c) for c in trans.categories_)
        else:
            width += len(cols)
    D = rep.n_columns
    p_num = np.zeros((D, width))
    p_disc = np.zeros((D, width))
    offset = np.zeros(width)
    pos = 0
    for _, trans, cols in blocks:
        if (isinstance(trans, str) and trans == "passthrough") or isinstance(trans, StandardScaler):
            mean = getattr(trans, "mean_", None) if not isinstance(trans, str) else None
            scale = getattr(trans, "scale_", None) if not isinstance(trans, str) else None
            for k, c in enumerate(cols):
                i = schema.index(c)
                f = rep.features[i]
                if not f.numeric:
                    return None
                m = 0.0 if mean is None else float(mean[k])
                s = 1.0 if scale is None else float(scale[k])
                p_num[f.start : f.start + f.size, pos] = 1.0 / s
                offset[pos] = -m / s
                pos += 1
        elif isinstance(trans, OneHotEncoder):
            if getattr(trans, "drop_idx_", None) is not None:
                return None
            for k, c in enumerate(cols):
                f = rep.features[schema.index(c)]
                if f.numeric:
                    return None
                enc_cats = [_py(v) for v in trans.categories_[k]]
                for j, cat in enumerate(f.categories):  # type: ignore[arg-type]
                    if cat in enc_cats:
                        p_disc[f.start + j, pos + enc_cats.index(cat)] = 1.0
                pos += len(enc_cats)
        elif isinstance(trans, OrdinalEncoder):
            for k, c in enumerate(cols):
                f = rep.features[schema.index(c)]
                if f.numeric:
                    return None
                enc_cats = [_py(v) for v in trans.categories_[k]]
                for j, cat in enumerate(f.categories):  # type: ignore[arg-type]
                    if cat not in enc_cats:
                        return None
                    p_disc[f.start + j, pos] = float(enc_cats.index(cat))
                pos += 1
        else:
            return None
    return p_num, p_disc, offset


def _numeric_inputs(
    est: Any, rep: Representation
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A bare estimator fitted on the raw (all-numeric) frame."""
    names = list(getattr(est, "feature_names_in_", rep.schema.names))
    if any(n not in rep.schema for n in names):
        return None
    D = rep.n_columns
    p_num = np.zeros((D, len(names)))
    for pos, n in enumerate(names):
        f = rep.features[rep.schema.index(n)]
        if not f.numeric:
            return None
        p_num[f.start : f.start + f.size, pos] = 1.0
    return p_num, np.zeros((D, len(names))), np.zeros(len(names))


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
    if isinstance(model, TorchModel):
        mod = model.module
        if not isinstance(mod, torch.nn.Module):
            return None
        inputs = _encoder_inputs(model.encoder, rep)
        if inputs is None:
            return None
        mod.eval()
        return Mirror(torch, *inputs, _ModuleHead(torch, mod), "torch module", dtype, device)
    steps = getattr(model, "steps", None)
    if steps is not None and type(model).__name__ == "Pipeline":
        if len(steps) != 2:
            return None
        pre, est = steps[0][1], steps[1][1]
        from sklearn.compose import ColumnTransformer

        if not isinstance(pre, ColumnTransformer):
            return None
        inputs = _pipeline_inputs(pre, rep)
    else:
        est = model
        inputs = _numeric_inputs(est, rep)
    if inputs is None:
        return None
    try:
        built = _estimator_head(torch, est, dtype, device)
    except ValueError:
        return None
    if built is None:
        return None
    head, kind = built
    if list(np.asarray(est.classes_)) != list(np.asarray(model.classes_)):
        return None
    return Mirror(torch, *inputs, head, kind, dtype, device)
