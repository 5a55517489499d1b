"""Front ends for ONNX graphs (:class:`~counterfact.models.OnnxModel`): the ONNX-ML operators
skl2onnx and onnxmltools write, and the operators of small ReLU networks.

The graph is read with ``onnx`` only (no runtime) and interpreted
symbolically, from the tensor holding the class scores back to the graph's
inputs:

1. **the head** -- walking back from the scores through the operators that
   leave the decision unchanged (``ZipMap``, ``Identity``, ``Cast``,
   ``Reshape``, ``Flatten``, ``Normalizer``, a final ``Sigmoid`` / ``Softmax``,
   the ``[1 - p, p]`` columns of a binary network) to the estimator: a
   ``TreeEnsembleClassifier`` / ``Regressor`` (:mod:`._onnx_trees`), a
   ``LinearClassifier`` / ``Regressor``, or else the logits of a network
   (:mod:`._onnx_net`);
2. **the inputs** -- each operator between the graph's inputs and the head is
   evaluated on symbolic values (:mod:`._onnx_pre`): tensors of input columns
   (:class:`XColumn`, one raw feature each, as for scikit-learn pipelines)
   and network layers.  An operator outside the supported set is refused by
   name and node (:data:`._onnx_graph.SUPPORTED_OPERATORS`).

Graph inputs and the schema: one input per column is matched to the
schema's features by name (``OnnxModel.feature_names_in_``); one input tensor
reads the schema's features by position, in schema order.

Faithfulness before trust: when onnxruntime is installed, every compiled
graph is checked against onnxruntime on :data:`N_CHECK_ROWS` seeded rows
spread over the schema's domain before the compiled form is returned: the
compiled decision must equal onnxruntime's label on every row whose compiled
outputs are further than :data:`CHECK_TOLERANCE` (relative to the outputs'
size) from a tie -- onnxruntime computes in float32, the compiled model in
float64; the tree splits themselves are exact (float32 inputs and thresholds
reproduced bit for bit).  A disagreement raises :class:`UnsupportedModelError`.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._utils._deps import is_available
from ..._utils._values import _py
from ...exceptions import UnsupportedModelError
from ...schema import Schema
from .._onnx_adapter import TREE_OPERATORS, OnnxModel, OnnxTreeModel
from ._frontend import FrontEnd, register_front_end
from ._ir import AffineMap, DecisionRule, Estimator, InputSpace, Linear, XColumn
from ._onnx_graph import GraphView, attribute, refuse
from ._onnx_net import NET_OPERATORS, Net, network_node
from ._onnx_pre import PRE_OPERATORS, Cols, Context
from ._onnx_trees import TreeHead, tree_node

__all__ = ["CHECK_TOLERANCE", "N_CHECK_ROWS", "OnnxFrontEnd", "OnnxTreeFrontEnd"]

#: rows of the schema's domain the compiled graph is checked on against onnxruntime
N_CHECK_ROWS = 256
#: how close to a tie (relative to the outputs' size) a row may be decided otherwise
CHECK_TOLERANCE = 1e-4

_LINEAR = ("LinearClassifier", "LinearRegressor")
#: operators the walk from the scores back to the estimator passes through
_DECISION_KEEPING = ("ZipMap", "Identity", "Cast", "Reshape", "Flatten", "Normalizer")
_FINAL = ("Sigmoid", "Softmax")
_CLASSIFIERS = ("TreeEnsembleClassifier", "LinearClassifier")
_INPUT_TYPES = {"float32", "float64", "int64", "int32", "string"}


@dataclass(frozen=True)
class Analysis:
    """A graph read against a schema: the estimator's input columns and its head."""

    cols: Cols
    head: Any  # TreeHead, the linear operator node, or a Net


#: the last analysis of each model (the dispatcher asks for its inputs, then compiles it)
_ANALYSES: weakref.WeakKeyDictionary[Any, tuple[InputSpace, Analysis]] = weakref.WeakKeyDictionary()


def _is_binary_probabilities(view: GraphView, node: Any) -> bool:
    """``Concat(1 - p, p)``: the two class probabilities of a binary network."""
    if node.op_type != "Concat" or len(node.input) != 2:
        return False
    first = view.producer.get(node.input[0])
    return (
        first is not None
        and first.op_type == "Sub"
        and view.is_const(first.input[0])
        and first.input[1] == node.input[1]
    )


def _score_source(view: GraphView, name: str) -> tuple[str, Any]:
    """The tensor the scores are a monotone function of, and its estimator operator
    (None: the logits of a network)."""
    seen_final = False
    while True:
        node = view.producer.get(name)
        if node is None:
            return name, None
        if node.op_type in _CLASSIFIERS or node.op_type in _LINEAR + TREE_OPERATORS:
            return name, node
        if node.op_type in _FINAL and not seen_final:
            seen_final = True
        elif node.op_type not in _DECISION_KEEPING and not _is_binary_probabilities(view, node):
            return name, None
        name = node.input[1] if node.op_type == "Concat" else node.input[0]


class _Interpreter:
    """Evaluates tensors of the graph on symbolic values (module docstring)."""

    def __init__(self, ctx: Context, raw: dict[str, Cols]) -> None:
        self.ctx = ctx
        self.memo: dict[str, Any] = dict(raw)

    def value(self, name: str) -> Any:
        if name in self.memo:
            return self.memo[name]
        view = self.ctx.view
        if view.is_const(name):
            return view.const(name, None)
        node = view.producer.get(name)
        if node is None:
            raise UnsupportedModelError(f"The ONNX graph has no value for the tensor {name!r}.")
        if node.op_type in _CLASSIFIERS + _LINEAR + TREE_OPERATORS:
            raise refuse(node, "an estimator whose output feeds another estimator")
        args = [self.value(i) if i else None for i in node.input]
        network = node.op_type in ("MatMul", "Gemm", "Relu") or any(
            isinstance(a, Net) for a in args
        )
        handler = (NET_OPERATORS if network else PRE_OPERATORS).get(node.op_type)
        if handler is None:
            raise refuse(node)
        self.memo[name] = handler(node, args, self.ctx)
        return self.memo[name]


def _raw_inputs(
    est: OnnxModel, cols: list[XColumn], view: GraphView, schema: Schema
) -> dict[str, Cols]:
    """The graph's inputs as raw columns (module docstring: by name, or by position)."""
    names = [n for n in view.input_types]
    for n in names:
        if view.input_types[n] not in _INPUT_TYPES:
            raise UnsupportedModelError(
                f"The ONNX input {n!r} has the type {view.input_types[n]}; the model compiler "
                "reads float, double, int64 and string inputs."
            )
    if len(names) > 1:
        by_name = {c.name: c for c in cols}
        return {n: Cols((by_name[n],), view.input_types[n]) for n in names}
    dims = next(i for i in view.graph.input if i.name == names[0]).type.tensor_type.shape.dim
    width = dims[-1].dim_value if len(dims) > 1 else 0
    if width and width != len(cols):
        raise UnsupportedModelError(
            f"The ONNX input {names[0]!r} takes {width} columns but the schema has {len(cols)} "
            f"features {schema.names}; a one-tensor graph reads the schema's features by "
            "position, in schema order."
        )
    return {names[0]: Cols(tuple(cols), view.input_types[names[0]])}


def analyse(est: OnnxModel, cols: list[XColumn], schema: Schema, space: InputSpace) -> Analysis:
    """The estimator's input columns and its head (module docstring)."""
    view = GraphView(est.proto)
    scores, op = _score_source(view, est.probability_output)
    exact = op is not None and op.op_type in TREE_OPERATORS
    ctx = Context(view, schema, space, exact)
    run = _Interpreter(ctx, _raw_inputs(est, cols, view, schema))
    if op is None:
        net = run.value(scores)
        if not isinstance(net, Net):
            raise UnsupportedModelError(
                "The ONNX graph's scores are not computed by a classifier operator or a network "
                f"(tensor {scores!r}); the model compiler cannot find its estimator."
            )
        return Analysis(net.inputs, net)
    inputs = run.value(op.input[0])
    if not isinstance(inputs, Cols):
        raise refuse(op, "its input is not a tensor of input columns")
    if exact:
        dtype = "float32" if inputs.dtype == "float32" else "float64"
        return Analysis(inputs, TreeHead(op, dtype, len(est.classes_)))
    return Analysis(inputs, op)


def linear_node(op: Any, n_x: int, n_classes: int, margin: float) -> tuple[Linear, DecisionRule]:
    """``LinearClassifier`` / ``LinearRegressor``: ``scores = W x + b``; one score (or the
    two scores ``(-s, s)`` of a binary model): class 1 iff it is positive, several: the
    largest."""
    coef = np.asarray(attribute(op, "coefficients", []), dtype=float)
    k = coef.size // max(n_x, 1)
    if k * n_x != coef.size or k == 0:
        raise refuse(op, f"{coef.size} coefficients for {n_x} input columns")
    b = np.asarray(attribute(op, "intercepts", np.zeros(k)), dtype=float).reshape(-1)
    W, b = coef.reshape(k, n_x), np.resize(b, k) if b.size else np.zeros(k)
    if k == 2 and n_classes == 2 and np.array_equal(W[0], -W[1]) and b[0] == -b[1]:
        W, b, k = W[1:], b[1:], 1  # scores (-s, s): class 1 iff s > 0, as argmax decides
    lin = Linear(W=W, b=b)
    if k == 1:
        return lin, DecisionRule("threshold", n_classes, 1, margin)
    return lin, DecisionRule("argmax", n_classes, k, margin)


# ----------------------------------------------------------------------- faithfulness
def _tie_distance(Y: np.ndarray, rule: DecisionRule) -> np.ndarray:
    if rule.kind == "threshold":
        return np.abs(Y[:, 0])
    top = np.sort(Y, axis=1)
    return top[:, -1] - top[:, -2]


def check_faithful(est: OnnxModel, affine: AffineMap, node: Estimator, rule: DecisionRule) -> None:
    """Refuse a compiled graph that decides otherwise than onnxruntime (module docstring);
    nothing to check without onnxruntime."""
    if not is_available("onnxruntime"):
        return
    space = affine.space
    frame = space.decode(space.spread(N_CHECK_ROWS))
    Y = node.forward(affine.apply(space.encode(frame)))
    got = rule.predict(Y)
    labels = np.asarray(est.predict(frame))
    want = np.array([int(np.flatnonzero(est.classes_ == v)[0]) for v in labels])
    size = np.maximum(1.0, np.abs(Y).max(axis=1))
    bad = np.flatnonzero((got != want) & (_tie_distance(Y, rule) > CHECK_TOLERANCE * size))
    if bad.size:
        row = frame.iloc[int(bad[0])].to_dict()
        mine, theirs = _py(est.classes_[got[bad[0]]]), _py(labels[bad[0]])
        raise UnsupportedModelError(
            f"The compiled ONNX graph decides {bad.size} of {len(frame)} rows of the domain "
            f"otherwise than onnxruntime (e.g. {row}: compiled class {mine!r}"
            f", onnxruntime {theirs!r}); the exact methods cannot rely on it. Use a "
            "model-agnostic method (e.g. cf.UFCE, cf.MDPSO), and please report the graph."
        )


# ----------------------------------------------------------------------- front ends
@register_front_end
class OnnxFrontEnd(FrontEnd):
    """ONNX graphs of linear models and ReLU networks (module docstring)."""

    name = "onnx"
    estimators = (OnnxModel,)
    supported = ("OnnxModel (ONNX: LinearClassifier, Gemm/MatMul/Relu networks)",)

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        found = analyse(est, cols, schema, space)
        _ANALYSES[est] = (space, found)
        return list(found.cols.columns)

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[Estimator, DecisionRule]:
        space, found = _ANALYSES.get(est, (None, None))
        if found is None or space != affine.space:
            raise UnsupportedModelError("Compile an OnnxModel with compile_model(model, schema).")
        head = found.head
        n_classes = len(est.classes_)
        node: Estimator
        if isinstance(head, TreeHead):
            node, rule = tree_node(head, affine, margin)
        elif isinstance(head, Net):
            node, rule = network_node(head, n_classes, margin)
        else:
            node, rule = linear_node(head, len(found.cols.columns), n_classes, margin)
        if rule.n_classes != n_classes:
            raise UnsupportedModelError(
                f"The ONNX graph's estimator decides among {rule.n_classes} classes but the "
                f"model has {n_classes} ({est.classes_.tolist()}); pass the class labels of "
                "its scores as OnnxModel(path, classes=[...])."
            )
        check_faithful(est, affine, node, rule)
        return node, rule


@register_front_end
class OnnxTreeFrontEnd(OnnxFrontEnd):
    """ONNX graphs of tree ensembles (``TreeEnsembleClassifier`` / ``Regressor``)."""

    name = "onnx-trees"
    estimators = (OnnxTreeModel,)
    supported = ("OnnxModel (ONNX: TreeEnsembleClassifier / TreeEnsembleRegressor)",)
    trees = True
