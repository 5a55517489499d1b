"""Reading an ONNX graph for the ONNX front end: constants, attributes, producers.

A helper of the ONNX front-end modules (:mod:`._onnx_pre`, :mod:`._onnx_net`,
:mod:`._onnx_trees`, :mod:`._onnx`).  :class:`GraphView` indexes a graph once:
the constant tensors (initializers and ``Constant`` nodes, as numpy arrays),
the node producing each tensor, and the declared element type of each graph
input.  :func:`refuse` is the error for an operator (or a use of one) the
compiler does not support, naming the operator and its node.  Only the
``onnx`` package is imported (lazily, through the model object that holds the
graph); onnxruntime never is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError

__all__ = [
    "DOUBLE",
    "FLOAT",
    "SUPPORTED_OPERATORS",
    "GraphView",
    "attribute",
    "node_label",
    "refuse",
]

#: onnx element types the front end distinguishes
FLOAT, DOUBLE = 1, 11
_TYPE_NAMES = {1: "float32", 11: "float64", 7: "int64", 6: "int32", 8: "string", 9: "bool"}

#: what the ONNX front end compiles, for its messages
SUPPORTED_OPERATORS = (
    "TreeEnsembleClassifier",
    "TreeEnsembleRegressor",
    "LinearClassifier",
    "LinearRegressor",
    "Scaler",
    "OneHotEncoder",
    "LabelEncoder",
    "Binarizer",
    "Imputer",
    "Normalizer (on the class scores)",
    "ZipMap",
    "Cast",
    "Concat",
    "ArrayFeatureExtractor",
    "Gather",
    "Identity",
    "Reshape",
    "Flatten",
    "Sub",
    "Add",
    "Mul",
    "Div",
    "Gemm",
    "MatMul",
    "Relu",
    "Sigmoid (last)",
    "Softmax (last)",
    "Transpose (of a constant)",
    "Constant",
)


def attribute(node: Any, name: str, default: Any = None) -> Any:
    """The value of attribute ``name`` of ``node`` (strings decoded), or ``default``."""
    import onnx

    for a in node.attribute:
        if a.name == name:
            value = onnx.helper.get_attribute_value(a)
            if isinstance(value, list) and value and isinstance(value[0], bytes):
                return [v.decode() for v in value]
            if isinstance(value, onnx.TensorProto):
                return onnx.numpy_helper.to_array(value)
            return value.decode() if isinstance(value, bytes) else value
    return default


def node_label(node: Any) -> str:
    """How a message names a node: its operator and its name (or first output)."""
    return f"{node.op_type} (node {node.name or node.output[0]!r})"


def refuse(node: Any, why: str = "") -> UnsupportedModelError:
    """The error for a node the ONNX front end does not compile."""
    extra = f": {why}" if why else ""
    return UnsupportedModelError(
        f"The model compiler does not support the ONNX operator {node_label(node)}{extra}. "
        f"Supported: {', '.join(SUPPORTED_OPERATORS)} (docs/models.md, 'ONNX models'). The "
        "model-agnostic methods (e.g. cf.UFCE, cf.MDPSO, cf.NearestObservable) still explain "
        "it through onnxruntime."
    )


class GraphView:
    """One ONNX graph, indexed: constants, the producer of every tensor, input types."""

    def __init__(self, proto: Any) -> None:
        from onnx import numpy_helper

        graph = proto.graph
        self.graph = graph
        self.consts: dict[str, np.ndarray] = {
            t.name: np.asarray(numpy_helper.to_array(t)) for t in graph.initializer
        }
        self.producer: dict[str, Any] = {}
        for node in graph.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                self.consts[node.output[0]] = self._constant(node)
                continue
            for out in node.output:
                self.producer[out] = node
        self.input_types = {
            i.name: _TYPE_NAMES.get(i.type.tensor_type.elem_type, "other")
            for i in graph.input
            if i.name not in self.consts
        }

    @staticmethod
    def _constant(node: Any) -> np.ndarray:
        for name in ("value", "value_float", "value_floats", "value_int", "value_ints"):
            found = attribute(node, name)
            if found is not None:
                return np.asarray(found)
        raise refuse(node, "a Constant of an unsupported kind")

    def const(self, name: str, node: Any) -> np.ndarray:
        """The constant tensor ``name`` (an input of ``node``)."""
        if name in self.consts:
            return self.consts[name]
        src = self.producer.get(name)
        if src is not None and src.op_type == "Transpose" and src.input[0] in self.consts:
            perm = attribute(src, "perm")
            return np.transpose(self.consts[src.input[0]], perm)
        raise refuse(node, f"its input {name!r} must be a constant of the graph")

    def is_const(self, name: str) -> bool:
        src = self.producer.get(name)
        return name in self.consts or (
            src is not None and src.op_type == "Transpose" and src.input[0] in self.consts
        )
