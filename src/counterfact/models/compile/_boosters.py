"""Front ends for XGBoost and LightGBM classifiers, read from their model dumps.

* XGBoost (``Booster.save_raw("json")``): a sample goes to the left ("yes")
  child iff ``float32(x) < split_condition`` (a float32), i.e.
  ``float32(x) <= prev32(split_condition)``; the margin is
  ``base_margin + sum of leaf values`` (float32 arithmetic inside XGBoost).
* LightGBM (``Booster.dump_model()``): left iff ``x <= threshold`` in float64;
  the initial score is folded into the first trees' leaves.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._ir import AffineMap, DecisionRule, TreeEnsemble
from ._splits import TreeBuilder, next_down


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
    obj = learner["objective"]["name"]
    n_classes = len(est.classes_)
    K = 1 if n_classes == 2 else n_classes
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
    # float32 base margin, as XGBoost stores it
    base = base.astype(np.float32).astype(float)
    model = gb["model"]
    trees = model["trees"]
    info = list(model.get("tree_info", [0] * len(trees)))
    indptr = model.get("iteration_indptr")
    start, stop = est._get_iteration_range(None) if hasattr(est, "_get_iteration_range") else (0, 0)
    if indptr is not None and stop:
        keep = range(int(indptr[start]), int(indptr[stop]))
    else:
        keep = range(len(trees))
    builder = TreeBuilder(affine, "float32", K)
    n_codes = {j: len(c) for j, c in (native_categories(est) or {}).items()}
    for t in keep:
        tr = trees[t]
        left_sets: dict[int, tuple[float, ...]] = {}
        for p, node in enumerate(tr.get("categories_nodes", [])):
            # XGBoost: the categories stored at a node go right; the others go left
            a = int(tr["categories_segments"][p])
            right_codes = {int(v) for v in tr["categories"][a : a + int(tr["categories_sizes"][p])]}
            j = int(tr["split_indices"][node])
            left_sets[int(node)] = tuple(float(v) for v in range(n_codes.get(j, 0)) if v not in right_codes)
        left = np.asarray(tr["left_children"], dtype=np.int64)
        right = np.asarray(tr["right_children"], dtype=np.int64)
        cond = np.asarray(tr["split_conditions"], dtype=np.float32).astype(float)
        col = np.asarray(tr["split_indices"], dtype=np.int64)
        leaf = left < 0
        le = np.array([next_down(c, "float32") if not lf else np.nan for c, lf in zip(cond, leaf, strict=True)])
        k = int(info[t]) if K > 1 else 0
        val = np.zeros((left.shape[0], K))
        val[:, k] = np.where(leaf, cond, 0.0)
        builder.add(np.where(leaf, -1, left), np.where(leaf, -1, right), col, le, val, output=k, left_sets=left_sets)
    ens = builder.build(base, divisor=1.0, aggregation="sum_margin")
    if K == 1:
        return ens, DecisionRule("threshold", 2, 1, margin)
    return ens, DecisionRule("argmax", n_classes, K, margin)


def compile_lgbm(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """LGBMClassifier (gbdt / goss / rf with numerical splits), binary / multiclass / multiclassova."""
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
        builder.add(np.array(left), np.array(right), np.array(col), np.array(le), v, output=k, left_sets=sets)
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


def native_categories(est: Any) -> dict[int, list[Any]] | None:
    """Input position -> the model's category list, for XGBoost / LightGBM models with
    native categorical features (pandas ``category`` columns); None if there are none."""
    name = type(est).__name__
    out: dict[int, list[Any]] = {}
    if name == "XGBClassifier":
        booster = est.get_booster()
        types = list(booster.feature_types or [])
        if "c" not in types:
            return None
        try:
            cats = booster.get_categories(export_to_arrow=True).to_arrow()
        except (AttributeError, TypeError, ValueError):
            raise UnsupportedModelError(
                "XGBClassifier with categorical features: this XGBoost version does not store the "
                "category values in the model (XGBoost >= 3.1 does); one-hot encode them instead."
            ) from None
        for j, (_, arr) in enumerate(cats):
            if types[j] == "c":
                out[j] = [] if arr is None else list(arr.to_pylist())
        return out
    if name == "LGBMClassifier":
        booster = est.booster_
        pandas_cats = getattr(booster, "pandas_categorical", None) or []
        infos = booster.dump_model().get("feature_infos", {})
        names = booster.feature_name()
        cat_pos = [j for j, n in enumerate(names) if isinstance(infos.get(n), dict) and infos[n].get("values")]
        if not cat_pos:
            return None
        if len(cat_pos) != len(pandas_cats):
            raise UnsupportedModelError(
                "LGBMClassifier with categorical features given as integer codes (categorical_feature=...) "
                "is not supported; fit it on pandas 'category' columns, or one-hot encode them."
            )
        return {j: list(c) for j, c in zip(cat_pos, pandas_cats, strict=True)}
    return None

