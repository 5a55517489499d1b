"""The network operators of an ONNX graph (``Gemm``, ``MatMul``, ``Add``, ``Relu``), as an IR
network.

A value of the ONNX front end's interpreter that is an affine function of a
network's last hidden layer is a :class:`Net`: the closed layers so far, and
the open affine map ``W @ h + b`` of the last layer's output ``h`` (of the
input columns before any layer).  A product with a constant matrix
(``MatMul``, ``Gemm``) composes into the open map, a constant added
(``Add``, ``Sub``) into its bias, and ``Relu`` closes a layer
(:class:`Dense` with ``activation="relu"``).  The logits are the open map of
the last layer: :func:`network_node` closes it as the identity layer of an
:class:`MLP` (a :class:`Linear` node when there is no hidden layer), whatever
the graph does after it (``Sigmoid`` / ``Softmax`` / the ``[1 - p, p]``
columns of a binary classifier leave the decision unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._ir import MLP, DecisionRule, Dense, Linear
from ._onnx_graph import attribute, refuse
from ._onnx_pre import Cols, Context

__all__ = ["NET_OPERATORS", "Net", "network_node"]


@dataclass(frozen=True, eq=False)
class Net:
    """``W @ h + b`` over the output ``h`` of the closed ``layers`` (of ``inputs``)."""

    inputs: Cols
    layers: tuple[Dense, ...]
    W: np.ndarray
    b: np.ndarray

    @classmethod
    def of(cls, cols: Cols) -> Net:
        n = len(cols.columns)
        return cls(cols, (), np.eye(n), np.zeros(n))


def _as_net(value: Any, node: Any) -> Net:
    if isinstance(value, Net):
        return value
    if isinstance(value, Cols):
        return Net.of(value)
    raise refuse(node, "its input is neither input columns nor a network layer")


def _product(net: Net, M: np.ndarray, node: Any) -> Net:
    """``net @ M`` for a constant ``M`` of shape ``(n_in, n_out)``."""
    if M.ndim != 2 or M.shape[0] != net.W.shape[0]:
        raise refuse(node, f"a weight matrix of shape {M.shape} for {net.W.shape[0]} inputs")
    return replace(net, W=M.T @ net.W, b=M.T @ net.b)


def _matmul(node: Any, args: list[Any], ctx: Context) -> Net:
    M = np.asarray(ctx.view.const(node.input[1], node), dtype=float)
    return _product(_as_net(args[0], node), M, node)


def _gemm(node: Any, args: list[Any], ctx: Context) -> Net:
    """``alpha * A @ op(B) + beta * C`` with constant ``B`` and ``C``."""
    if int(attribute(node, "transA", 0)):
        raise refuse(node, "transA=1 (the rows would be the features)")
    B = np.asarray(ctx.view.const(node.input[1], node), dtype=float)
    if int(attribute(node, "transB", 0)):
        B = B.T
    alpha = float(attribute(node, "alpha", 1.0))
    net = _product(_as_net(args[0], node), alpha * B, node)
    if len(node.input) > 2 and node.input[2]:
        C = np.asarray(ctx.view.const(node.input[2], node), dtype=float).reshape(-1)
        net = replace(net, b=net.b + float(attribute(node, "beta", 1.0)) * C)
    return net


def _bias(node: Any, args: list[Any], ctx: Context) -> Net:
    """``Add`` / ``Sub`` of a network value and a constant."""
    k = 0 if isinstance(args[0], Net) else 1
    other = node.input[1 - k]
    if not isinstance(args[k], Net) or not ctx.view.is_const(other):
        raise refuse(node, "only a constant added to a network layer is supported")
    if node.op_type == "Sub" and k == 1:
        raise refuse(node, "a network layer subtracted from a constant")
    c = np.asarray(ctx.view.const(other, node), dtype=float).reshape(-1)
    net = args[k]
    if c.size not in (1, net.b.size):
        raise refuse(node, f"a bias of {c.size} values for {net.b.size} units")
    return replace(net, b=net.b - c if node.op_type == "Sub" else net.b + c)


def _relu(node: Any, args: list[Any], ctx: Context) -> Net:
    net = _as_net(args[0], node)
    layer = Dense(W=net.W, b=net.b, activation="relu")
    n = net.W.shape[0]
    return Net(net.inputs, (*net.layers, layer), np.eye(n), np.zeros(n))


def _passthrough(node: Any, args: list[Any], ctx: Context) -> Net:
    if node.op_type == "Reshape" and len(args[0].b) not in (
        abs(int(ctx.view.const(node.input[1], node).reshape(-1)[-1])),
        1,
    ):
        raise refuse(node, "a reshape of a network layer")
    return args[0]


Handler = Callable[[Any, list[Any], Context], Net]

#: the network operators: node, argument values, context -> the network value
NET_OPERATORS: dict[str, Handler] = {
    "MatMul": _matmul,
    "Gemm": _gemm,
    "Add": _bias,
    "Sub": _bias,
    "Relu": _relu,
    "Identity": _passthrough,
    "Flatten": _passthrough,
    "Reshape": _passthrough,
    "Cast": _passthrough,
}


def network_node(net: Net, n_classes: int, margin: float) -> tuple[Linear | MLP, DecisionRule]:
    """The IR node of the logits ``net`` and its decision: one logit, class 1 iff it is
    positive (the sigmoid above one half); several, the largest."""
    k = int(net.W.shape[0])
    node: Linear | MLP
    if net.layers:
        node = MLP(layers=(*net.layers, Dense(W=net.W, b=net.b, activation="identity")))
    else:
        node = Linear(W=net.W, b=net.b)
    if k == 1:
        return node, DecisionRule("threshold", n_classes, 1, margin)
    return node, DecisionRule("argmax", n_classes, k, margin)
