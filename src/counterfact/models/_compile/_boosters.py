"""Front ends for XGBoost and LightGBM classifiers, read from their model dumps.

* XGBoost (``Booster.save_raw("json")``): a sample goes to the left ("yes")
  child iff ``float32(x) < split_condition`` (a float32), i.e.
  ``float32(x) <= prev32(split_condition)``; the margin is
  ``base_margin + sum of leaf values`` (float32 arithmetic inside XGBoost).
* LightGBM (``Booster.dump_model()``): left iff ``x <= threshold`` in float64;
  the initial score is folded into the first trees' leaves.

Columns either model reads as pandas categories (native categorical splits)
hold the model's category codes: :func:`native_category_codes` gives the
input columns that, before the preprocessing is folded.  The front ends
(:class:`XGBoostFrontEnd`, :class:`LightGBMFrontEnd`) compile ``(est, affine,
margin) -> (TreeEnsemble, DecisionRule)``.  This module imports the IR, the
registry, the shared helpers (:mod:`._splits`, :mod:`._xcolumns`) and, from the model adapter below
the compiler, :func:`~counterfact.models._adapter.native_categories`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from .._adapter import native_categories
from ._frontend import FrontEnd, register_front_end
from ._ir import AffineMap, DecisionRule, InputSpace, TreeEnsemble, XColumn
from ._splits import TreeBuilder, next_down
from ._xcolumns import RAW, table_column


def _floats(s: Any) -> np.ndarray:
    if isinstance(s, str):
        s = s.strip()
        if s.startswith("["):
            return np.array([float(v) for v in s.strip("[]").split(",") if v.strip()], dtype=float)
        return np.array([float(s)])
    return np.atleast_1d(np.asarray(s, dtype=float))


def compile_xgb(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """XGBClassifier (gbtree, numerical splits), binary:logistic / multi:softprob|softmax."""
    booster = est.get_booster()
    d = json.loads(bytes(booster.save_raw(raw_format="json")).decode())
    learner = d["learner"]
    gb = learner["gradient_booster"]
    if gb.get("name") != "gbtree":
        raise UnsupportedModelError(
            f"XGBClassifier(booster={gb.get('name')!r}): only booster='gbtree' is supported."
        )
    n_classes = len(est.classes_)
    K = 1 if n_classes == 2 else n_classes
    base = _xgb_base(learner, K)
    model = gb["model"]
    trees = model["trees"]
    info = list(model.get("tree_info", [0] * len(trees)))
    builder = TreeBuilder(affine, "float32", K)
    n_codes = {j: len(c) for j, c in (native_categories(est) or {}).items()}
    for t in _xgb_kept_trees(est, model):
        k = int(info[t]) if K > 1 else 0
        _add_xgb_tree(builder, trees[t], k, K, n_codes)
    ens = builder.build(base, divisor=1.0, aggregation="sum_margin")
    if K == 1:
        return ens, DecisionRule("threshold", 2, 1, margin)
    return ens, DecisionRule("argmax", n_classes, K, margin)


def _xgb_base(learner: dict[str, Any], K: int) -> np.ndarray:
    """The base margin of each of the ``K`` outputs (float32, as XGBoost stores it)."""
    obj = learner["objective"]["name"]
    base_raw = _floats(learner["learner_model_param"]["base_score"])
    if obj in ("binary:logistic", "reg:logistic"):
        p = float(base_raw[0])
        base = np.array([math.log(p / (1.0 - p))])
    elif obj in ("binary:logitraw", "multi:softprob", "multi:softmax"):
        base = base_raw * np.ones(K)
    else:
        raise UnsupportedModelError(
            f"XGBClassifier with objective {obj!r}: supported objectives are binary:logistic, "
            "binary:logitraw, multi:softprob and multi:softmax."
        )
    return base.astype(np.float32).astype(float)


def _xgb_kept_trees(est: Any, model: dict[str, Any]) -> range:
    """The trees ``predict`` uses (the best iteration's, after early stopping)."""
    indptr = model.get("iteration_indptr")
    start, stop = est._get_iteration_range(None) if hasattr(est, "_get_iteration_range") else (0, 0)
    if indptr is not None and stop:
        return range(int(indptr[start]), int(indptr[stop]))
    return range(len(model["trees"]))


def _xgb_left_sets(tr: dict[str, Any], n_codes: dict[int, int]) -> dict[int, tuple[float, ...]]:
    """Node -> the category codes going left, at the native categorical splits of ``tr``."""
    left_sets: dict[int, tuple[float, ...]] = {}
    for p, node in enumerate(tr.get("categories_nodes", [])):
        # XGBoost: the categories stored at a node go right; the others go left
        a = int(tr["categories_segments"][p])
        right_codes = {int(v) for v in tr["categories"][a : a + int(tr["categories_sizes"][p])]}
        j = int(tr["split_indices"][node])
        left_sets[int(node)] = tuple(
            float(v) for v in range(n_codes.get(j, 0)) if v not in right_codes
        )
    return left_sets


def _add_xgb_tree(
    builder: TreeBuilder, tr: dict[str, Any], k: int, K: int, n_codes: dict[int, int]
) -> None:
    """Add the dumped tree ``tr``, contributing to output ``k`` of ``K``, to ``builder``."""
    left = np.asarray(tr["left_children"], dtype=np.int64)
    right = np.asarray(tr["right_children"], dtype=np.int64)
    cond = np.asarray(tr["split_conditions"], dtype=np.float32).astype(float)
    col = np.asarray(tr["split_indices"], dtype=np.int64)
    leaf = left < 0
    le = np.array(
        [next_down(c, "float32") if not lf else np.nan for c, lf in zip(cond, leaf, strict=True)]
    )
    val = np.zeros((left.shape[0], K))
    val[:, k] = np.where(leaf, cond, 0.0)
    builder.add(
        np.where(leaf, -1, left),
        np.where(leaf, -1, right),
        col,
        le,
        val,
        output=k,
        left_sets=_xgb_left_sets(tr, n_codes),
    )


def compile_lgbm(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """LGBMClassifier (gbdt / goss / rf with numerical splits), binary / multiclass /
    multiclassova."""
    d = est.booster_.dump_model()
    obj = str(d.get("objective", "")).split(" ")[0]
    n_classes = len(est.classes_)
    if obj not in ("binary", "multiclass", "multiclassova", "softmax", "multiclass_ova", "ova"):
        raise UnsupportedModelError(
            f"LGBMClassifier with objective {obj!r}: supported objectives are binary, multiclass "
            "and multiclassova."
        )
    K = int(d.get("num_tree_per_iteration", 1))
    builder = TreeBuilder(affine, "float64", K)
    infos = d["tree_info"]
    for ti in infos:
        if ti.get("is_linear", False):
            raise UnsupportedModelError(
                "LGBMClassifier with linear trees (linear_tree=True) is not supported."
            )
        left, right, col, le, val, sets = _flatten_lgbm(ti["tree_structure"])
        k = int(ti["tree_index"]) % K
        v = np.zeros((len(left), K))
        v[:, k] = val
        builder.add(
            np.array(left),
            np.array(right),
            np.array(col),
            np.array(le),
            v,
            output=k,
            left_sets=sets,
        )
    divisor = float(len(infos) // K) if d.get("average_output") else 1.0
    ens = builder.build(np.zeros(K), divisor=divisor, aggregation="sum_margin")
    if K == 1:
        return ens, DecisionRule("threshold", n_classes, 1, margin)
    return ens, DecisionRule("argmax", n_classes, K, margin)


def _flatten_lgbm(
    root: dict[str, Any],
) -> tuple[list[int], list[int], list[int], list[float], list[float], dict[int, tuple[float, ...]]]:
    """Node arrays (root = 0) of a LightGBM ``tree_structure``; categorical ('==') splits
    send the listed category codes left."""
    sets: dict[int, tuple[float, ...]] = {}
    left: list[int] = []
    right: list[int] = []
    col: list[int] = []
    le: list[float] = []
    val: list[float] = []
    stack: list[tuple[dict[str, Any], int, bool]] = [(root, -1, True)]
    while stack:
        node, parent, is_left = stack.pop()
        i = len(left)
        if parent >= 0:
            (left if is_left else right)[parent] = i
        left.append(-1)
        right.append(-1)
        if "leaf_value" in node:
            col.append(-1)
            le.append(np.nan)
            val.append(float(node["leaf_value"]))
            continue
        if node.get("decision_type") == "==":
            sets[i] = tuple(float(v) for v in str(node["threshold"]).split("||"))
            col.append(int(node["split_feature"]))
            le.append(np.nan)
            val.append(0.0)
            stack.append((node["right_child"], i, False))
            stack.append((node["left_child"], i, True))
            continue
        if node.get("decision_type", "<=") != "<=" or node.get("missing_type") == "Zero":
            raise UnsupportedModelError(
                "LGBMClassifier split with decision_type "
                f"{node.get('decision_type')!r} / missing_type {node.get('missing_type')!r} is "
                "not supported (only numerical '<=' splits, without zero_as_missing)."
            )
        col.append(int(node["split_feature"]))
        le.append(float(node["threshold"]))
        val.append(0.0)
        stack.append((node["right_child"], i, False))
        stack.append((node["left_child"], i, True))
    return left, right, col, le, val, sets


def native_category_codes(
    est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
) -> list[XColumn]:
    """Columns an XGBoost / LightGBM model reads as pandas categories -> the model's
    category codes."""
    cats = native_categories(est)
    if not cats:
        return cols
    out = list(cols)
    name = type(est).__name__
    for j, model_cats in cats.items():
        col = cols[j]
        f = schema[col.feature]
        if col.base != RAW or f.is_numeric:
            raise UnsupportedModelError(
                f"{name} reads input column {j} ('{col.name}') as a categorical, but it is not a "
                "raw categorical / ordinal feature of the schema; declare the feature categorical "
                "or ordinal."
            )
        pos = {c: k for k, c in enumerate(model_cats)}
        unknown = [c for c in f.categories or () if c not in pos]
        if unknown:
            raise ValidationError(
                f"Feature '{f.name}': categories {unknown[:5]} of the schema are unknown to the "
                f"{name} model (it was fitted without them). Restrict the schema's categories, or "
                "fit the model on pandas categoricals holding every category (pd.Categorical(..., "
                "categories=schema levels))."
            )
        codes = np.array([float(pos[c]) for c in f.categories or ()])
        out[j] = table_column(col.name, space, col.feature, codes)
    return out


class _BoosterFrontEnd(FrontEnd):
    """What XGBoost and LightGBM share: tree ensembles reading native category codes."""

    trees = True

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        return native_category_codes(est, cols, schema, space)


@register_front_end
class XGBoostFrontEnd(_BoosterFrontEnd):
    """``XGBClassifier``: :func:`compile_xgb`; it misreads sparse input (``dense_input``)."""

    name = "xgboost"
    estimators = ("xgboost:XGBClassifier",)
    supported = ("XGBClassifier",)
    dense_input = True

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_xgb(est, affine, margin)


@register_front_end
class LightGBMFrontEnd(_BoosterFrontEnd):
    """``LGBMClassifier``: :func:`compile_lgbm`."""

    name = "lightgbm"
    estimators = ("lightgbm:LGBMClassifier",)
    supported = ("LGBMClassifier",)

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_lgbm(est, affine, margin)
