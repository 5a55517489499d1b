"""Front end for PyTorch networks: a :class:`~counterfact.models.TorchModel` -> :class:`MLP`.

A :class:`~counterfact.models.TorchModel` is a torch module plus the
:class:`~counterfact.data.Encoder` it was trained on.  The encoder is the
preprocessing: numeric and ordinal features scaled (``(v - offset) / scale``,
the encoder's own float64 operations), binary and categorical features one-hot,
so its columns are exact :class:`XColumn` s (:func:`encoder_columns`).

The module must be an ``nn.Sequential`` (nested ones are flattened) of

* ``nn.Linear`` -- a :class:`Dense` layer, its weights copied in float64;
* ``nn.ReLU`` -- the activation of the layer before it (a ReLU on the encoded
  inputs is an identity layer with a ReLU; a second ReLU changes nothing);
* ``nn.Dropout``, ``nn.Identity``, ``nn.Flatten`` of the feature axis --
  identities in eval mode, which :class:`~counterfact.models.TorchModel` runs;
* ``nn.BatchNorm1d`` with running statistics -- in eval mode the per-column
  affine map ``s * h + t``, folded into the ``Linear`` before it when no ReLU
  lies between them, else into the next ``Linear``;
* a final ``nn.Softmax`` over the class axis, or ``nn.Sigmoid`` on a single
  output (the module then returns probabilities, as ``TorchModel(output=...)``
  must say; ``"auto"`` does).

Any other module is refused by name with :class:`UnsupportedModelError`; the
model-agnostic methods still explain the model through its ``predict_proba``.

The decision: one output ``y`` (binary): class 1 iff ``y > 0``; two outputs for
two classes: the last layer is rewritten as the one output ``y1 - y0`` (class 1
iff ``y1 > y0``, the first class on ties, as ``argmax`` decides), so that
``P(class 1) = sigmoid(y1 - y0)`` and a probability margin is exact; more
classes: the argmax of the outputs.

Faithfulness: torch computes in float32, the compiled network in float64.
Before the compiled model is handed out, :func:`check_faithful` runs the
module and the compiled network on rows spread over the schema's domain; they
must agree to within :data:`TOLERANCE` times ``1 + the largest |output|``
(logits, or probabilities for a module ending in Softmax / Sigmoid), else the
model is refused.  The decision margin (``1e-4`` on the logit by default)
covers the float32 rounding at the decision boundary, and the exact methods
verify every answer with the module itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit, softmax

from ..._utils._deps import import_optional
from ..._utils._values import _py
from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from .._adapter import TorchModel
from ._frontend import FrontEnd, register_front_end
from ._ir import MLP, AffineMap, DecisionRule, Dense, InputSpace, XColumn
from ._ir_inputs import with_op

__all__ = ["TOLERANCE", "TorchFrontEnd", "check_faithful", "encoder_columns", "read_sequential"]

#: the largest gap, relative to ``1 + the largest |output|``, between the module's and the
#: compiled network's outputs on the probe rows (float32 against float64 arithmetic)
TOLERANCE = 1e-4

#: rows spread over the schema's domain on which the compiled network is checked
PROBE_ROWS = 256

#: the modules accepted (the module docstring says how each is read)
SUPPORTED_MODULES = (
    "Linear",
    "ReLU",
    "Dropout",
    "Identity",
    "Flatten",
    "BatchNorm1d",
    "Softmax (last)",
    "Sigmoid (last)",
)


# ------------------------------------------------------------------ inputs
def encoder_columns(encoder: Any, schema: Schema, space: InputSpace) -> list[XColumn]:
    """The encoder's output columns as :class:`XColumn` s over the raw inputs ``space``."""
    names = list(encoder.schema.names)
    if sorted(names) != sorted(schema.names):
        raise ValidationError(
            f"The TorchModel's encoder encodes the features {names}, but the schema has "
            f"{list(schema.names)}. Compile against the schema the encoder was built on."
        )
    cols: list[XColumn] = []
    for f in encoder.schema:
        blk = space.block(f.name)
        if f.is_categorical != blk.is_indicator or (f.kind == "ordinal") != (blk.kind == "ordinal"):
            raise ValidationError(
                f"Feature '{f.name}' is {f.kind} in the TorchModel's encoder but {blk.kind} in "
                "the schema. Compile against the schema the encoder was built on."
            )
        if f.is_categorical:
            cols += _indicator_columns(f, blk)
        else:
            cols.append(_scaled_column(encoder, f, blk))
    return cols


def _indicator_columns(feature: Any, blk: Any) -> list[XColumn]:
    """One column per encoder category: the indicator of that category in the raw block
    (constant 0 for a category the schema does not have)."""
    cats = [_py(c) for c in blk.categories]
    own = [_py(c) for c in feature.categories]
    missing = [c for c in cats if c not in own]
    if missing:
        raise ValidationError(
            f"Feature '{feature.name}' has the categories {missing} in the schema, which the "
            "TorchModel's encoder cannot encode. Compile against the schema the encoder was "
            "built on."
        )
    out = []
    for c in own:
        coef = np.zeros(blk.size)
        if c in cats:
            coef[cats.index(c)] = 1.0
        out.append(
            XColumn(
                name=f"{feature.name}={c}", feature=feature.name, base="indicator", base_coef=coef
            )
        )
    return out


def _scaled_column(encoder: Any, feature: Any, blk: Any) -> XColumn:
    """A numeric value or ordinal rank, scaled as the encoder does: ``(v - offset) / scale``."""
    if feature.kind == "ordinal" and [_py(c) for c in feature.categories] != [
        _py(c) for c in blk.categories
    ]:
        raise ValidationError(
            f"Ordinal feature '{feature.name}' has the levels {list(feature.categories)} in the "
            f"TorchModel's encoder but {list(blk.categories)} in the schema. Compile against the "
            "schema the encoder was built on."
        )
    base = "code" if feature.kind == "ordinal" else "value"
    col = XColumn(name=feature.name, feature=feature.name, base=base, base_coef=np.ones(1))
    offset, scale = encoder.scale_of(feature.name)
    return with_op(with_op(col, "sub", offset), "div", scale)


# ------------------------------------------------------------------ layers
def _flat(module: Any, nn: Any, where: str = "") -> list[tuple[str, Any]]:
    """``[(position, module), ...]`` of an ``nn.Sequential``, nested ones flattened."""
    out: list[tuple[str, Any]] = []
    for k, (name, sub) in enumerate(module.named_children()):
        pos = f"{where}module {k} ('{name}')"
        if isinstance(sub, nn.Sequential):
            _check_forward(sub, nn)
            out += _flat(sub, nn, f"{pos} > ")
        else:
            out.append((pos, sub))
    return out


def _check_forward(module: Any, nn: Any) -> None:
    """The error for an ``nn.Sequential`` subclass whose ``forward`` is its own."""
    if type(module).forward is not nn.Sequential.forward:
        raise UnsupportedModelError(
            f"{type(module).__name__} overrides nn.Sequential.forward; the model compiler reads "
            "a plain nn.Sequential, whose output is its modules applied in order."
        )


def _weights(tensor: Any) -> np.ndarray:
    """A parameter or buffer as a float64 array (a copy)."""
    return tensor.detach().cpu().numpy().astype(np.float64)


class _Layers:
    """The network built module by module: its dense layers and an affine map
    ``s * h + t`` (a BatchNorm1d after a ReLU) waiting for the next ``Linear``."""

    def __init__(self, n_in: int) -> None:
        self.n_in = n_in
        self.layers: list[list[Any]] = []  # [W, b, activation]
        self.pending: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def width(self) -> int:
        """The number of values the next module receives."""
        return int(self.layers[-1][0].shape[0]) if self.layers else self.n_in

    def linear(self, W: np.ndarray, b: np.ndarray) -> None:
        if self.pending is not None:
            s, t = self.pending
            W, b = W * s[None, :], W @ t + b
            self.pending = None
        self.layers.append([W, b, "identity"])

    def relu(self) -> None:
        if self.pending is not None or not self.layers:
            self._flush(self.pending or (np.ones(self.width), np.zeros(self.width)))
        if self.layers[-1][2] != "relu":  # relu(relu(h)) = relu(h)
            self.layers[-1][2] = "relu"

    def scale_shift(self, s: np.ndarray, t: np.ndarray) -> None:
        """``h -> s * h + t`` per column (BatchNorm1d in eval mode)."""
        if self.pending is not None:
            ps, pt = self.pending
            self.pending = (s * ps, s * pt + t)
        elif self.layers and self.layers[-1][2] == "identity":
            W, b, _ = self.layers[-1]
            self.layers[-1] = [s[:, None] * W, s * b + t, "identity"]
        else:
            self.pending = (s, t)

    def _flush(self, pending: tuple[np.ndarray, np.ndarray]) -> None:
        """The waiting map as a layer of its own."""
        self.pending = None
        self.layers.append([np.diag(pending[0]), pending[1], "identity"])

    def dense(self) -> list[Dense]:
        if self.pending is not None:
            self._flush(self.pending)
        return [Dense(W=W, b=b, activation=act) for W, b, act in self.layers]


def read_sequential(module: Any, n_in: int) -> tuple[list[Dense], str]:
    """The dense layers of an ``nn.Sequential`` over ``n_in`` inputs and its final
    activation (``""``, ``"softmax"`` or ``"sigmoid"``); module docstring."""
    nn = import_optional("torch", purpose="TorchModel").nn
    if not isinstance(module, nn.Sequential):
        raise UnsupportedModelError(
            f"The model compiler reads a TorchModel whose module is an nn.Sequential; got "
            f"{type(module).__name__}. {_HINT}"
        )
    _check_forward(module, nn)
    modules = _flat(module, nn)
    if not any(isinstance(m, nn.Linear) for _, m in modules):
        raise UnsupportedModelError(f"The nn.Sequential has no Linear module. {_HINT}")
    stack, final = _Layers(n_in), ""
    for where, sub in modules:
        if final and not isinstance(sub, nn.Dropout | nn.Identity):
            raise UnsupportedModelError(
                f"{type(sub).__name__} at {where} of the nn.Sequential follows a {final}; the "
                "model compiler reads Softmax or Sigmoid only as the last module (a hidden "
                f"one is not piecewise linear). {_HINT}"
            )
        final = final or _read_module(stack, sub, where, nn)
    return stack.dense(), final


_HINT = (
    f"Supported modules: {', '.join(SUPPORTED_MODULES)}. Use a model-agnostic method "
    "(e.g. cf.UFCE, cf.MDPSO, cf.NearestObservable) for other networks."
)


def _read_module(stack: _Layers, sub: Any, where: str, nn: Any) -> str:
    """Add one module to ``stack``; its final activation's name, if it is one."""
    if isinstance(sub, nn.Linear):
        _check_width(sub.in_features, stack.width, where)
        bias = _weights(sub.bias) if sub.bias is not None else np.zeros(sub.out_features)
        stack.linear(_weights(sub.weight), bias)
    elif isinstance(sub, nn.ReLU):
        stack.relu()
    elif isinstance(sub, nn.BatchNorm1d):
        _check_width(sub.num_features, stack.width, where)
        stack.scale_shift(*_batchnorm(sub, where))
    elif isinstance(sub, nn.Softmax):
        if sub.dim not in (None, 1, -1):
            raise UnsupportedModelError(
                f"Softmax(dim={sub.dim}) at {where}: the model compiler reads a softmax over "
                "the class axis (dim=1 or -1)."
            )
        return "softmax"
    elif isinstance(sub, nn.Sigmoid):
        return "sigmoid"
    elif not _is_identity(sub, nn):
        raise UnsupportedModelError(
            f"The model compiler does not support the torch module {type(sub).__name__} (at "
            f"{where} of the nn.Sequential). {_HINT}"
        )
    return ""


def _is_identity(sub: Any, nn: Any) -> bool:
    """Dropout (eval mode), Identity, and a Flatten of the feature axis of ``(n, d)`` rows."""
    if isinstance(sub, nn.Flatten):
        return sub.start_dim in (1, -1) and sub.end_dim == -1
    return isinstance(sub, nn.Dropout | nn.Identity)


def _check_width(expected: int, width: int, where: str) -> None:
    if int(expected) != width:
        raise UnsupportedModelError(
            f"The module at {where} of the nn.Sequential expects {expected} inputs but receives "
            f"{width} (the encoder's columns, or the previous layer's outputs)."
        )


def _batchnorm(bn: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
    """``(s, t)`` with ``BatchNorm1d(h) = s * h + t`` in eval mode."""
    if bn.running_mean is None or bn.running_var is None:
        raise UnsupportedModelError(
            f"BatchNorm1d at {where} has no running statistics (track_running_stats=False): "
            "it normalises by each batch's own statistics, which no fixed network reproduces."
        )
    s = 1.0 / np.sqrt(_weights(bn.running_var) + float(bn.eps))
    t = -_weights(bn.running_mean) * s
    if bn.affine:
        gamma, beta = _weights(bn.weight), _weights(bn.bias)
        s, t = gamma * s, gamma * t + beta
    return s, t


# ------------------------------------------------------------------ decision
def network_and_rule(
    layers: list[Dense], final: str, model: TorchModel, margin: float
) -> tuple[MLP, DecisionRule]:
    """The compiled network and its decision rule (module docstring), after checking
    that the final activation agrees with how ``model`` reads the module's outputs."""
    n_classes, n_out = len(model.classes_), int(layers[-1].W.shape[0])
    _check_final(final, model.output, n_out)
    if n_out == 1 and n_classes == 2:
        return MLP(layers=tuple(layers)), DecisionRule("threshold", 2, 1, margin)
    if n_out == n_classes == 2:
        last = layers[-1]
        diff = Dense(W=last.W[1:] - last.W[:1], b=last.b[1:] - last.b[:1], activation="identity")
        return MLP(layers=(*layers[:-1], diff)), DecisionRule("threshold", 2, 1, margin)
    if n_out == n_classes:
        return MLP(layers=tuple(layers)), DecisionRule("argmax", n_classes, n_out, margin)
    raise UnsupportedModelError(
        f"The network has {n_out} outputs but the TorchModel has {n_classes} classes "
        f"{model.classes_.tolist()}; it needs one output per class (or one output for two "
        "classes)."
    )


def _check_final(final: str, output: str, n_out: int) -> None:
    """The errors for a final activation that disagrees with ``TorchModel.output``."""
    if final == "sigmoid" and n_out != 1:
        raise UnsupportedModelError(
            f"The nn.Sequential ends in Sigmoid over {n_out} outputs: independent sigmoids are "
            "no class probabilities. End a binary network in one output (with Sigmoid), or a "
            "multi-class one in Softmax (or in its logits)."
        )
    if final and output == "logits":
        raise UnsupportedModelError(
            f"The nn.Sequential ends in {final.capitalize()}, but TorchModel(output='logits') "
            "reads its outputs as logits; build the TorchModel with output='auto' or "
            "'probabilities'."
        )
    if not final and output == "probabilities":
        raise UnsupportedModelError(
            "TorchModel(output='probabilities') reads the module's outputs as probabilities, but "
            "the nn.Sequential ends in neither Softmax nor Sigmoid; the compiled network's "
            "outputs would be no probabilities. Use output='logits' for a network without them."
        )


# ------------------------------------------------------------------ faithfulness
def _gap(model: TorchModel, frame: Any, Y: np.ndarray) -> tuple[float, float]:
    """The largest gap between the module and the compiled outputs ``Y`` on the rows
    ``frame``, and the scale it is measured against (``1 + the largest |output|``):
    logits (two read as ``y1 - y0``), or class probabilities where the module
    returns probabilities."""
    if model.output == "probabilities":
        want = model.predict_proba(frame)
        got = softmax(Y, axis=1) if Y.shape[1] > 1 else np.c_[expit(-Y[:, 0]), expit(Y[:, 0])]
    else:
        out = model.outputs(frame)
        want, got = (out[:, 1:] - out[:, :1] if out.shape[1] == 2 else out), Y
    return float(np.max(np.abs(got - want))), 1.0 + float(np.max(np.abs(want)))


def check_faithful(model: TorchModel, affine: AffineMap, network: MLP) -> None:
    """Refuse a compiled network that does not reproduce the module on
    :data:`PROBE_ROWS` rows spread over the domain (to :data:`TOLERANCE`)."""
    space = affine.space
    frame = space.decode(space.spread(PROBE_ROWS))
    Y = network.forward(affine.apply(space.encode(frame)))
    gap, scale = _gap(model, frame, Y)
    if not gap <= TOLERANCE * scale:
        raise UnsupportedModelError(
            f"The compiled network does not reproduce the TorchModel's module: its outputs "
            f"differ by up to {gap:.3g} on {PROBE_ROWS} rows spread over the domain (allowed: "
            f"{TOLERANCE:g} x {scale:.3g}). A module whose forward is not its layers in order "
            "cannot be compiled; use a model-agnostic method (e.g. cf.UFCE, cf.MDPSO)."
        )


# ------------------------------------------------------------------ front end
@register_front_end
class TorchFrontEnd(FrontEnd):
    """A :class:`~counterfact.models.TorchModel` whose module is an ``nn.Sequential`` of
    ``Linear`` and ``ReLU`` (module docstring); its encoder is the preprocessing.

    The class declared is counterfact's own wrapper: looking it up imports no torch,
    and torch is imported only to read a TorchModel's module."""

    name = "torch"
    estimators = (TorchModel,)
    supported = ("TorchModel(nn.Sequential of Linear and ReLU)",)

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        return encoder_columns(est.encoder, schema, space)

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[MLP, DecisionRule]:
        layers, final = read_sequential(est.module, affine.n_x)
        network, rule = network_and_rule(layers, final, est, margin)
        check_faithful(est, affine, network)
        return network, rule
