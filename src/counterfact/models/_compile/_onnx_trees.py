"""The ONNX-ML tree operators (``TreeEnsembleClassifier`` / ``TreeEnsembleRegressor``) as a
:class:`TreeEnsemble`.

Semantics read from the operator's attributes (ONNX-ML opset 1-3):

* a node compares its feature with its threshold (``nodes_values``, float32, or
  ``nodes_values_as_tensor``) by its mode: ``BRANCH_LEQ`` (true iff
  ``x <= t``), ``BRANCH_LT`` (``x < t``), ``BRANCH_GTE``, ``BRANCH_GT``; true goes
  to ``nodes_truenodeids``.  The IR's left branch is ``x <= le``: ``le = t``
  for ``LEQ``, the number just below ``t`` for ``LT`` (in the input's
  precision), and the true / false children swap for ``GTE`` / ``GT``.  The
  comparison reads the input in its own precision: float32 inputs give a
  ``"float32"`` ensemble, double inputs a ``"float64"`` one.  ``BRANCH_EQ`` /
  ``BRANCH_NEQ`` are refused; missing values never occur in a counterfactual.
* the scores are the sums of the reached leaves' weights per class
  (``class_*`` / ``target_*``), plus ``base_values``; ``AVERAGE`` aggregation
  divides by the number of trees.  A binary classifier with weights for one
  class only (XGBoost, LightGBM, gradient boosting) has one score: class 1
  iff it is above 0 (above 0.5 when every weight is positive, as onnxruntime
  decides).  ``post_transform`` (``LOGISTIC``, ``SOFTMAX``...) is monotone and
  leaves the decision unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._ir import AffineMap, DecisionRule, TreeEnsemble
from ._onnx_graph import attribute, refuse
from ._splits import TreeBuilder, next_down

__all__ = ["TreeHead", "tree_node"]

_LEFT_IS_TRUE = {"BRANCH_LEQ": True, "BRANCH_LT": True, "BRANCH_GTE": False, "BRANCH_GT": False}
_STRICT = {"BRANCH_LT", "BRANCH_GTE"}


@dataclass(frozen=True)
class TreeHead:
    """A tree operator and how it is read: its input's precision and its class count."""

    node: Any
    dtype: str
    n_classes: int


def _array(node: Any, name: str, default: Any = None) -> np.ndarray | None:
    found = attribute(node, name)
    if found is None:
        found = attribute(node, f"{name}_as_tensor")
    return default if found is None else np.asarray(found)


def _structure(node: Any) -> dict[str, np.ndarray]:
    names = ("treeids", "nodeids", "featureids", "truenodeids", "falsenodeids")
    out = {k: np.asarray(_array(node, f"nodes_{k}", []), dtype=np.int64) for k in names}
    out["modes"] = np.asarray(attribute(node, "nodes_modes", []), dtype=object)
    out["values"] = np.asarray(_array(node, "nodes_values", []), dtype=float)
    bad = sorted(set(out["modes"]) - set(_LEFT_IS_TRUE) - {"LEAF"})
    if bad:
        raise refuse(node, f"the node modes {bad} (only <, <=, >, >= comparisons are compiled)")
    return out


def _weights(node: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(tree ids, node ids, output ids, weights)`` of the leaves."""
    kind = "class" if node.op_type == "TreeEnsembleClassifier" else "target"
    return (
        np.asarray(_array(node, f"{kind}_treeids", []), dtype=np.int64),
        np.asarray(_array(node, f"{kind}_nodeids", []), dtype=np.int64),
        np.asarray(_array(node, f"{kind}_ids", []), dtype=np.int64),
        np.asarray(_array(node, f"{kind}_weights", []), dtype=float),
    )


def _order(tree: np.ndarray, nodes: dict[str, np.ndarray]) -> list[int]:
    """The positions of one tree's nodes, root first (the node no other node points to)."""
    pos = {int(nodes["nodeids"][i]): int(i) for i in tree}
    children = {
        int(nodes[k][i])
        for i in tree
        if nodes["modes"][i] != "LEAF"
        for k in ("truenodeids", "falsenodeids")
    }
    roots = [p for nid, p in pos.items() if nid not in children]
    order, stack = [], roots[:1]
    while stack:
        i = stack.pop()
        order.append(i)
        if nodes["modes"][i] != "LEAF":
            stack += [pos[int(nodes["falsenodeids"][i])], pos[int(nodes["truenodeids"][i])]]
    return order


def _le(threshold: float, mode: str, dtype: str) -> float:
    t = float(np.float32(threshold)) if dtype == "float32" else float(threshold)
    return next_down(t, dtype) if mode in _STRICT else t


def _add_tree(
    builder: TreeBuilder, tree: np.ndarray, nodes: dict[str, np.ndarray], leaf_value: Any
) -> None:
    order = _order(tree, nodes)
    local = {int(nodes["nodeids"][p]): k for k, p in enumerate(order)}
    n = len(order)
    left, right = np.full(n, -1), np.full(n, -1)
    column, le = np.zeros(n, dtype=np.int64), np.full(n, np.nan)
    value = np.zeros((n, builder.n_outputs))
    for k, p in enumerate(order):
        mode = nodes["modes"][p]
        if mode == "LEAF":
            value[k] = leaf_value(int(nodes["nodeids"][p]))
            continue
        t, f = local[int(nodes["truenodeids"][p])], local[int(nodes["falsenodeids"][p])]
        left[k], right[k] = (t, f) if _LEFT_IS_TRUE[mode] else (f, t)
        column[k] = nodes["featureids"][p]
        le[k] = _le(nodes["values"][p], mode, builder.dtype)
    builder.add(left, right, column, le, value)


def tree_node(
    head: TreeHead, affine: AffineMap, margin: float
) -> tuple[TreeEnsemble, DecisionRule]:
    """The ensemble and decision rule of a tree operator reading ``affine``'s columns."""
    node = head.node
    nodes = _structure(node)
    if nodes["featureids"].size and int(nodes["featureids"].max()) >= affine.n_x:
        raise refuse(node, f"it reads feature {int(nodes['featureids'].max())} of {affine.n_x}")
    t_ids, n_ids, o_ids, weights = _weights(node)
    binary = head.n_classes == 2 and len(set(o_ids.tolist())) == 1
    K = 1 if binary else max(head.n_classes, int(attribute(node, "n_targets", 1)))
    table: dict[tuple[int, int], np.ndarray] = {}
    for t, nid, o, w in zip(t_ids, n_ids, o_ids, weights, strict=True):
        row = table.setdefault((int(t), int(nid)), np.zeros(K))
        row[0 if binary else int(o)] += w
    builder = TreeBuilder(affine, head.dtype, K)
    trees = sorted(set(nodes["treeids"].tolist()))
    for t in trees:
        members = np.flatnonzero(nodes["treeids"] == t)
        _add_tree(builder, members, nodes, lambda nid, t=t: table.get((t, nid), np.zeros(K)))
    base = np.asarray(_array(node, "base_values", np.zeros(K)), dtype=float).reshape(-1)
    base = base[-1:] if binary else np.resize(base, K) if base.size else np.zeros(K)
    return _ensemble(builder, head, base, weights, len(trees), binary, margin)


def _ensemble(
    builder: TreeBuilder,
    head: TreeHead,
    base: np.ndarray,
    weights: np.ndarray,
    n_trees: int,
    binary: bool,
    margin: float,
) -> tuple[TreeEnsemble, DecisionRule]:
    node = head.node
    proba = node.op_type == "TreeEnsembleClassifier" and bool(np.all(weights >= 0))
    if binary and proba:
        base = base - 0.5  # onnxruntime: class 1 iff the summed weights exceed one half
    average = attribute(node, "aggregate_function", "SUM") == "AVERAGE"
    ens = builder.build(
        base,
        divisor=float(n_trees) if average else 1.0,
        aggregation="mean_proba" if proba and not binary else "sum_margin",
    )
    if builder.n_outputs == 1:
        return ens, DecisionRule("threshold", max(head.n_classes, 2), 1, margin)
    return ens, DecisionRule("argmax", head.n_classes, builder.n_outputs, margin)
