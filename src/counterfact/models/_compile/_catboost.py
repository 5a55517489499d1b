"""Front end for CatBoost classifiers (``CatBoostClassifier``), read from the model's JSON dump.

CatBoost grows *symmetric* (oblivious) trees: a tree of depth ``d`` applies
the same ``d`` splits at every level, and the leaf a sample reaches is the
bit pattern of the split outcomes, ``splits[i]`` being bit ``i``.  Read from
``save_model(path, format="json")``:

* a float split sets its bit iff ``float32(x) > border`` (CatBoost rounds its
  inputs to float32; the borders are float32): the sample goes left (bit 0)
  iff ``float32(x) <= border``, the IR's ``"float32"`` split semantics;
* a one-hot split on a categorical feature sets its bit iff the category
  equals one value.  CatBoost stores that value as a hash of the category's
  text; which of the schema's categories it is is asked of the model itself
  (:meth:`calc_leaf_indexes` on one probe row per category), never by
  re-computing CatBoost's hash;
* the raw score is ``scale * (sum of leaf values) + bias`` and, for the
  ``Logloss`` / ``CrossEntropy`` losses, ``predict_proba[:, 1]`` is its
  sigmoid (the IR's ``"sigmoid"`` probability link).

Each oblivious tree is expanded into an ordinary tree with ``2**d`` leaves,
``splits[d-1]`` at the root, so that the leaf at position ``p`` of the bottom
level is CatBoost's leaf ``p``.  Categorical features encoded by target
statistics (CTRs: features with more categories than ``one_hot_max_size``)
depend on the training labels through tables and feature combinations, and
are refused, naming the feature and the setting that avoids them.

Native categorical inputs: the columns CatBoost reads as categorical
(``cat_features``) must be raw categorical, binary or ordinal features of the
schema; the compiled model reads them as the category's position in the
schema (:meth:`CatBoostFrontEnd.inputs`).  Before the compiled ensemble is
returned, it is checked against CatBoost's own raw scores on probe rows at
every border (both sides) and every category (:func:`check_faithful`).

This module imports the IR, the registry and the shared helpers
(:mod:`._splits`, :mod:`._xcolumns`); it never imports ``catboost`` (it calls
the fitted model's own methods).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import UnsupportedModelError
from ...schema import Schema
from ._frontend import FrontEnd, register_front_end
from ._ir import AffineMap, DecisionRule, InputSpace, TreeEnsemble, XColumn
from ._splits import TreeBuilder, next_up
from ._xcolumns import RAW, table_column

__all__ = ["CatBoostFrontEnd", "check_faithful", "compile_catboost"]

#: the losses whose ``predict_proba[:, 1]`` is the sigmoid of the raw score
_BINARY_LOSSES = ("Logloss", "CrossEntropy")
#: the largest difference between CatBoost's raw score and the compiled one, relative to
#: ``1 + |raw score|``, that the faithfulness check accepts (summation order only)
RAW_TOLERANCE = 1e-9
#: probe rows per round of the faithfulness check, and rounds (each with its own shuffle)
_PROBE_ROUNDS = 4
_MAX_PROBE_ROWS = 4096


def json_dump(est: Any) -> dict[str, Any]:
    """The model as CatBoost writes it with ``save_model(format="json")``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.json"
        est.save_model(str(path), format="json")
        return json.loads(path.read_text(encoding="utf-8"))


def compile_catboost(
    est: Any, affine: AffineMap, margin: float
) -> tuple[TreeEnsemble, DecisionRule]:
    """A binary ``CatBoostClassifier`` (symmetric trees, float and one-hot splits) as a
    ``"sum_margin"`` :class:`TreeEnsemble` with float32 splits and a threshold rule."""
    dump = json_dump(est)
    _check_model(est, dump, affine)
    float_flat, cat_flat = _flat_indices(dump)
    members = _one_hot_members(est, dump, affine, cat_flat)
    scale, bias = dump["scale_and_bias"]
    builder = TreeBuilder(affine, "float32", 1)
    for tree in dump["oblivious_trees"]:
        _add_oblivious(builder, tree, float(scale), float_flat, cat_flat, members)
    ens = builder.build(np.array([float(bias[0])]), divisor=1.0, aggregation="sum_margin")
    check_faithful(est, ens, affine, dump)
    return ens, DecisionRule("threshold", 2, 1, margin)


# ---------------------------------------------------------------- what is supported
def _check_model(est: Any, dump: dict[str, Any], affine: AffineMap) -> None:
    """Refuse what the front end does not compile exactly, saying what to do instead."""
    loss = str(est.get_all_params().get("loss_function", ""))
    if loss not in _BINARY_LOSSES or len(est.classes_) != 2:
        raise UnsupportedModelError(
            f"CatBoostClassifier with loss_function={loss!r} and {len(est.classes_)} classes: "
            "the model compiler supports binary classification with loss_function='Logloss' "
            "or 'CrossEntropy'."
        )
    if "oblivious_trees" not in dump:
        raise UnsupportedModelError(
            "CatBoostClassifier with non-symmetric trees: the model compiler supports "
            "grow_policy='SymmetricTree' (CatBoost's default)."
        )
    info = dump.get("features_info", {})
    for kind in ("text_features", "embedding_features"):
        if info.get(kind):
            raise UnsupportedModelError(
                f"CatBoostClassifier with {kind.replace('_', ' ')}: the model compiler supports "
                "float and categorical features only."
            )
    _refuse_ctrs(dump, affine)


def _refuse_ctrs(dump: dict[str, Any], affine: AffineMap) -> None:
    """Refuse a model that splits on target statistics (CTRs) of categorical features."""
    uses_ctr = any(
        s.get("split_type") == "OnlineCtr"
        for tree in dump["oblivious_trees"]
        for s in tree.get("splits") or ()
    )
    if not uses_ctr:
        return
    _, cat_flat = _flat_indices(dump)
    cat_ids = {
        int(e["cat_feature_index"])
        for ctr in dump["features_info"].get("ctrs", ())
        for e in ctr.get("elements", ())
        if "cat_feature_index" in e
    }
    names = [affine.columns[cat_flat[k]].feature for k in sorted(cat_ids) if k in cat_flat]
    sizes = [len(affine.space.block(n).categories or ()) for n in names]
    listed = ", ".join(f"'{n}' ({k} categories)" for n, k in zip(names, sizes, strict=True))
    raise UnsupportedModelError(
        f"CatBoostClassifier encodes the categorical feature(s) {listed or '?'} by target "
        "statistics (CTRs), which the model compiler cannot encode exactly. Refit it with "
        f"one_hot_max_size={max(sizes, default=255)} or more (at least each feature's number "
        "of categories), so that CatBoost one-hot encodes them; or explain it with a "
        "model-agnostic method (cf.UFCE, cf.MDPSO, cf.NearestObservable)."
    )


def _flat_indices(dump: dict[str, Any]) -> tuple[dict[int, int], dict[int, int]]:
    """Float feature index -> input column, and categorical feature index -> input column."""
    info = dump.get("features_info", {})

    def flat(kind: str) -> dict[int, int]:
        return {int(f["feature_index"]): int(f["flat_feature_index"]) for f in info.get(kind, ())}

    return flat("float_features"), flat("categorical_features")


# ---------------------------------------------------------------- one-hot splits
def _categories(affine: AffineMap, column: int) -> tuple[Any, ...]:
    """The schema's categories of the raw feature behind input column ``column``."""
    return tuple(affine.space.block(affine.columns[column].feature).categories or ())


def _one_hot_members(
    est: Any, dump: dict[str, Any], affine: AffineMap, cat_flat: dict[int, int]
) -> dict[tuple[int, int], tuple[int, ...]]:
    """``(categorical feature index, hash) -> the codes`` (schema positions) of the
    categories equal to that hash, read off CatBoost's own leaf indexes on probe rows
    (row ``r`` holds category ``r`` of every categorical feature, clipped to its last)."""
    splits = _one_hot_splits(dump)
    if not splits:
        return {}
    sizes = {k: len(_categories(affine, c)) for k, c in cat_flat.items()}
    n = max(sizes.values())
    codes = np.zeros((n, affine.n_x))
    for k, c in cat_flat.items():
        codes[:, c] = np.minimum(np.arange(n), sizes[k] - 1)
    leaves = np.asarray(est.calc_leaf_indexes(model_frame(est, affine, codes)), dtype=np.int64)
    out: dict[tuple[int, int], tuple[int, ...]] = {}
    for t, level, k, h in splits:
        rows = np.flatnonzero((leaves[: sizes[k], t] >> level) & 1)
        found = tuple(int(r) for r in rows)
        if out.setdefault((k, h), found) != found:
            raise UnsupportedModelError(
                "CatBoostClassifier: a one-hot split value matches different categories in "
                "different trees; the model compiler cannot read its categories."
            )
    return out


def _one_hot_splits(dump: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """``(tree, level, categorical feature index, hash)`` of every one-hot split."""
    return [
        (t, level, int(s["cat_feature_index"]), int(s["value"]))
        for t, tree in enumerate(dump["oblivious_trees"])
        for level, s in enumerate(tree.get("splits") or ())
        if s.get("split_type") == "OneHotFeature"
    ]


def model_frame(est: Any, affine: AffineMap, X: np.ndarray) -> pd.DataFrame:
    """Estimator inputs ``X`` (category codes in the categorical columns) as the frame
    CatBoost reads: its own column names, the schema's categories in its categorical
    columns."""
    names = [str(n) for n in est.feature_names_]
    cats = {int(j) for j in est.get_cat_feature_indices()}
    data: dict[str, Any] = {}
    for j, name in enumerate(names):
        if j in cats:
            levels = np.array(_categories(affine, j), dtype=object)
            data[name] = levels[X[:, j].astype(int)]
        else:
            data[name] = X[:, j].astype(float)
    return pd.DataFrame(data, columns=names)


# ---------------------------------------------------------------- trees
def _add_oblivious(
    builder: TreeBuilder,
    tree: dict[str, Any],
    scale: float,
    float_flat: dict[int, int],
    cat_flat: dict[int, int],
    members: dict[tuple[int, int], tuple[int, ...]],
) -> None:
    """Add one oblivious tree, expanded into a full binary tree, to ``builder``.

    Nodes are numbered level by level (node ``i``'s children are ``2i+1`` and
    ``2i+2``); level ``l`` splits by ``splits[d-1-l]``, so the bottom level lists
    the leaves in CatBoost's leaf order."""
    splits = list(tree.get("splits") or ())
    d = len(splits)
    n_inner = 2**d - 1
    n_nodes = 2 ** (d + 1) - 1
    left = np.full(n_nodes, -1, dtype=np.int64)
    right = np.full(n_nodes, -1, dtype=np.int64)
    column = np.full(n_nodes, -1, dtype=np.int64)
    le = np.full(n_nodes, np.nan)
    value = np.zeros((n_nodes, 1))
    value[n_inner:, 0] = scale * np.asarray(tree["leaf_values"], dtype=float)
    sets: dict[int, tuple[float, ...]] = {}
    for i in range(n_inner):
        level = (i + 1).bit_length() - 1
        left[i], right[i] = 2 * i + 1, 2 * i + 2
        s = splits[d - 1 - level]
        if s["split_type"] == "FloatFeature":
            column[i] = float_flat[int(s["float_feature_index"])]
            le[i] = float(np.float32(s["border"]))
            continue
        k = int(s["cat_feature_index"])
        column[i] = cat_flat[k]
        sets[i] = _left_codes(builder.affine, cat_flat[k], members[(k, int(s["value"]))])
    builder.add(left, right, column, le, value, output=0, left_sets=sets)


def _left_codes(affine: AffineMap, column: int, equal: tuple[int, ...]) -> tuple[float, ...]:
    """The codes going left (bit 0) at a one-hot split: every category but those equal."""
    return tuple(float(c) for c in range(len(_categories(affine, column))) if c not in equal)


# ---------------------------------------------------------------- faithfulness
def check_faithful(
    est: Any, ens: TreeEnsemble, affine: AffineMap, dump: dict[str, Any] | None = None
) -> float:
    """Check the compiled ensemble against CatBoost's own raw scores on probe rows: every
    border of every float feature, the float32 numbers above and below it and the
    float64 number just above it, and every category, shuffled into rows.  Returns the
    largest difference found.

    Raises
    ------
    UnsupportedModelError
        If a raw score differs by more than :data:`RAW_TOLERANCE` ``* (1 + |score|)``.
    """
    n_model = len(est.feature_names_)
    if affine.n_x != n_model:  # splits rewritten over extra code columns: checked upstream
        return 0.0
    X = _probe_rows(dump if dump is not None else json_dump(est), affine)
    want = np.asarray(
        est.predict(model_frame(est, affine, X), prediction_type="RawFormulaVal"), dtype=float
    ).reshape(-1)
    got = ens.forward(X)[:, 0]
    worst = float(np.max(np.abs(got - want) / (1.0 + np.abs(want)))) if len(X) else 0.0
    if worst > RAW_TOLERANCE:
        raise UnsupportedModelError(
            "The compiled CatBoostClassifier disagrees with CatBoost's own raw scores on probe "
            f"rows (relative difference {worst:.3g} > {RAW_TOLERANCE:g}); its exact form is not "
            "trusted. Explain it with a model-agnostic method (cf.UFCE, cf.MDPSO)."
        )
    return worst


def _probe_values(dump: dict[str, Any], affine: AffineMap) -> list[np.ndarray]:
    """Per input column, the values worth probing: the float borders with the float32
    numbers on either side and the float64 number just above, or every category code."""
    float_flat, cat_flat = _flat_indices(dump)
    values = [np.zeros(1) for _ in range(affine.n_x)]
    for f in dump.get("features_info", {}).get("float_features", ()):
        b = np.asarray(f.get("borders") or [0.0], dtype=np.float32).astype(float)
        up = np.array([next_up(v, "float32") for v in b])
        down = np.nextafter(b.astype(np.float32), np.float32(-np.inf)).astype(float)
        hair = np.nextafter(b, np.inf)  # a float64 above the border that CatBoost rounds onto it
        values[float_flat[int(f["feature_index"])]] = np.concatenate([b, up, down, hair])
    for c in cat_flat.values():
        values[c] = np.arange(max(1, len(_categories(affine, c))), dtype=float)
    return values


def _probe_rows(dump: dict[str, Any], affine: AffineMap) -> np.ndarray:
    """Rows combining the probe values of every column, each round shuffled anew."""
    values = _probe_values(dump, affine)
    n = min(max(len(v) for v in values), _MAX_PROBE_ROWS // _PROBE_ROUNDS)
    rng = np.random.default_rng(0)
    rounds = []
    for _ in range(_PROBE_ROUNDS):
        cols = [rng.permutation(np.resize(v, max(n, len(v))))[:n] for v in values]
        rounds.append(np.column_stack(cols))
    return np.vstack(rounds)


# ---------------------------------------------------------------- inputs
def catboost_inputs(
    est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
) -> list[XColumn]:
    """The columns ``est`` reads: in its own column order (CatBoost matches a frame's
    columns by name), its categorical columns as the category's position in the schema."""
    names = [str(n) for n in est.feature_names_]
    by_name = {c.name: c for c in cols}
    if len(names) == len(cols) and all(c.base == RAW for c in cols) and set(names) <= set(by_name):
        cols = [by_name[n] for n in names]
    out = list(cols)
    for j in (int(j) for j in est.get_cat_feature_indices()):
        col = cols[j]
        if col.base != RAW or schema[col.feature].is_numeric:
            raise UnsupportedModelError(
                f"CatBoostClassifier reads input column {j} ('{col.name}') as categorical "
                "(cat_features), but it is not a raw categorical, binary or ordinal feature of "
                "the schema; declare the feature categorical, or fit CatBoost on the raw "
                "DataFrame columns."
            )
        k = len(schema[col.feature].categories or ())
        out[j] = table_column(col.name, space, col.feature, np.arange(k, dtype=float))
    return out


@register_front_end
class CatBoostFrontEnd(FrontEnd):
    """``CatBoostClassifier`` (binary, symmetric trees): :func:`compile_catboost`."""

    name = "catboost"
    estimators = ("catboost:CatBoostClassifier",)
    supported = ("CatBoostClassifier",)
    trees = True

    def inputs(
        self, est: Any, cols: list[XColumn], schema: Schema, space: InputSpace
    ) -> list[XColumn]:
        return catboost_inputs(est, cols, schema, space)

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_catboost(est, affine, margin)
