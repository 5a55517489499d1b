"""The solver-neutral intermediate representation (IR) of a compiled classifier.

A fitted model (a scikit-learn pipeline: preprocessing + estimator, or an
XGBoost / LightGBM classifier) compiles into a :class:`CompiledModel`:

``raw vector z  --AffineMap-->  x  --estimator node-->  outputs y  --DecisionRule-->  class``

Everything is piecewise linear, so every backend (Z3 for MACE, a MILP for
CE-OCL) is a lookup from IR node to solver constraints.  Backends read only the
dataclasses below; the numpy evaluator (:meth:`CompiledModel.predict_raw`)
reproduces the real model's ``predict`` and is what the faithfulness tests check.

1. Input space (:class:`InputSpace`, :class:`RawBlock`)
-------------------------------------------------------
One *raw block* per schema feature, in schema order, laid out contiguously in
the raw vector ``z`` (length ``InputSpace.n``):

* ``real`` / ``integer``: one scalar variable, in the feature's raw units
  (integral for ``integer``), domain ``[lower, upper]`` of the schema;
* ``binary`` / ``categorical``: one 0/1 indicator per category, in the schema's
  category order; exactly one of them is 1;
* ``ordinal``: one integer rank variable in ``0 .. k-1`` (schema level order).

``RawBlock.start``/``size`` give the columns of a block in ``z``;
:meth:`InputSpace.encode` / :meth:`InputSpace.decode` convert raw DataFrames.

2. Preprocessing (:class:`AffineMap`, :class:`XColumn`)
--------------------------------------------------------
The estimator's input is ``x = A @ z + c`` (``A``: ``(n_x, n_z)``, dense).  Each
x-column depends on exactly one raw feature (``XColumn.feature``): it is
``scale * v + offset`` (``scale > 0`` for scalers) where the *base value*
``v = base_coef @ z[block] + base_const`` is the raw number, a one-hot
indicator, or an ordinal code.  ``XColumn.ops`` records the exact floating-point
operations scikit-learn applies (``("sub", m)``, ``("div", s)``, ``("mul", s)``,
``("add", m)``) so that the evaluator is bit-faithful; ``A``/``c`` are their
composition in float64 (exact up to one rounding, absorbed by the margin).

3. Estimator nodes (outputs ``y``, length ``n_outputs``)
--------------------------------------------------------
* :class:`Linear`: ``y = W @ x + b`` (LogisticRegression, LinearSVC, SVC linear;
  SVC one-vs-one multi-class gives one output per class pair, see ``ovo``).
* :class:`MLP`: ``h_0 = x``, ``h_l = act_l(W_l @ h_{l-1} + b_l)`` with
  ``act`` ``"relu"`` (``max(0, .)``) or ``"identity"``; the last layer is
  identity and ``y`` is its output (the logits, before sigmoid / softmax).
* :class:`TreeEnsemble`: ``y = base + (sum_t tree_t(x)) / divisor``.
  ``aggregation="mean_proba"`` (RandomForest / ExtraTrees / DecisionTree: leaf
  values are class-probability vectors, ``divisor`` = number of trees, soft
  voting) or ``"sum_margin"`` (GradientBoosting, HistGradientBoosting, XGBoost,
  LightGBM: leaf values already include the learning rate, ``divisor = 1``,
  ``base`` is the initial raw score).  ``Tree.output`` is the single output a
  boosting tree contributes to (``None``: all outputs).

  Split semantics (exact): at an internal node with split ``s`` the sample goes
  left iff ``cast(x[s.column]) <= s.le``, where ``cast`` is float32 rounding when
  ``TreeEnsemble.dtype == "float32"`` (scikit-learn trees, GradientBoosting,
  XGBoost) and identity for ``"float64"`` (HistGradientBoosting, LightGBM).
  ``s.ge`` is the next representable number after ``s.le`` in that dtype.
  **Safe encoding for solvers**: left branch ``x <= le``, right branch
  ``x >= ge``; the open gap ``(le, ge)`` must be excluded (no input lands in it
  in float arithmetic).  Because every x-column is an image of one raw feature,
  splits are also given in raw units: numeric raw features ``z <= raw_le``
  (left) / ``z >= raw_ge`` (right), exact for float64 inputs, and integers:
  ``raw_le = K*`` and ``raw_ge = K* + 1`` are integers (may lie outside the
  domain: then one branch is empty); discrete raw features: ``left_categories``
  is the set of category indices (ranks for ordinals) that go left (ordinal
  splits whose left set is a prefix ``0..K*`` also carry ``raw_le=K*``,
  ``raw_ge=K*+1``).  Prefer the raw form: it is exact.

4. Decision rule (:class:`DecisionRule`)
----------------------------------------
Maps outputs ``y`` to a class index (position in :attr:`CompiledModel.classes`),
with the model's own tie-breaking:

* ``"threshold"`` (binary, one output): class 1 iff ``y[0] > 0``
  (``y[0] >= 0`` when ``positive_on_tie``: binary SVC), else class 0;
* ``"argmax"``: the class with the largest output, ties to the lowest index;
* ``"ovo"`` (SVC multi-class): output ``p`` decides pair ``pairs[p] = (i, j)``,
  ``i`` wins iff ``y[p] > 0`` else ``j``; most votes wins, ties to the lowest index.

:meth:`DecisionRule.region` gives, for a target class, an exact description of
``{y : rule(y) == target}`` as a disjunction (tuple) of conjunctions (tuples) of
:class:`OutputCondition` ``coef @ y > rhs`` (``strict``) or ``>= rhs``.  Threshold
and argmax rules give a single conjunction.  **Backends encode each condition
as ``coef @ y >= rhs + margin``** with ``DecisionRule.margin`` (default 1e-4, on
the logit / margin or on the mean probability): the margin stands in for strict
inequalities and absorbs solver tolerances and float rounding.  Every answer is
re-checked with the real model anyway.

All IR classes are frozen dataclasses; those holding arrays compare by
identity (``eq=False``).

5. Utilities
------------
:func:`counterfact.models.compile.interval_bounds` (box -> bounds of x, of
every MLP pre-activation, and of the outputs) and
:meth:`CompiledModel.raw_thresholds` (distinct raw-unit tree cuts per feature).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...schema import Schema

__all__ = [
    "MLP",
    "AffineMap",
    "CompiledModel",
    "DecisionRule",
    "Dense",
    "Estimator",
    "InputSpace",
    "Leaf",
    "Linear",
    "OutputCondition",
    "RawBlock",
    "Split",
    "Tree",
    "TreeEnsemble",
    "XColumn",
]

# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class RawBlock:
    """The raw variables of one schema feature (see module docstring, section 1).

    Attributes
    ----------
    name : str
        Feature name.
    kind : str
        Schema kind: real | integer | binary | categorical | ordinal.
    start, size : int
        Columns ``z[start:start + size]``.  ``size`` is 1 for numeric and
        ordinal features, the number of categories otherwise.
    lower, upper : float
        Domain of each variable of the block: the schema bounds for numeric
        features, ``0 .. k-1`` for ordinal ranks, ``0 .. 1`` for indicators.
    categories : tuple or None
        Categories (discrete kinds), in schema order.
    """

    name: str
    kind: str
    start: int
    size: int
    lower: float
    upper: float
    categories: tuple[Any, ...] | None = None

    @property
    def columns(self) -> slice:
        """``slice(start, start + size)`` into ``z``."""
        return slice(self.start, self.start + self.size)

    @property
    def is_indicator(self) -> bool:
        """One-hot indicators (binary / categorical)."""
        return self.kind in ("binary", "categorical")

    @property
    def integral(self) -> bool:
        """Whether the block's variables take integer values."""
        return self.kind != "real"


@dataclass(frozen=True)
class InputSpace:
    """Raw-variable layout of a schema (see module docstring, section 1)."""

    blocks: tuple[RawBlock, ...]
    n: int

    @classmethod
    def from_schema(cls, schema: Schema) -> InputSpace:
        """Lay out one block per schema feature, in schema order."""
        blocks = []
        start = 0
        for f in schema.features:
            if f.is_numeric:
                b = RawBlock(f.name, f.kind, start, 1, float(f.lower), float(f.upper))  # type: ignore[arg-type]
            elif f.kind == "ordinal":
                k = len(f.categories)  # type: ignore[arg-type]
                b = RawBlock(f.name, f.kind, start, 1, 0.0, float(k - 1), f.categories)
            else:
                k = len(f.categories)  # type: ignore[arg-type]
                b = RawBlock(f.name, f.kind, start, k, 0.0, 1.0, f.categories)
            blocks.append(b)
            start += b.size
        return cls(tuple(blocks), start)

    @property
    def names(self) -> list[str]:
        """Feature names, in block order."""
        return [b.name for b in self.blocks]

    @cached_property
    def _by_name(self) -> dict[str, RawBlock]:
        return {b.name: b for b in self.blocks}

    def block(self, name: str) -> RawBlock:
        """The block of feature ``name``."""
        b = self._by_name.get(name)
        if b is not None:
            return b
        raise ValidationError(f"Unknown feature '{name}'. Known features: {self.names}.")

    def lower(self) -> np.ndarray:
        """Per-variable lower bounds of the domain, shape ``(n,)``."""
        out = np.empty(self.n)
        for b in self.blocks:
            out[b.columns] = b.lower
        return out

    def upper(self) -> np.ndarray:
        """Per-variable upper bounds of the domain, shape ``(n,)``."""
        out = np.empty(self.n)
        for b in self.blocks:
            out[b.columns] = b.upper
        return out

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw DataFrame (schema columns) -> ``z`` matrix of shape ``(n_rows, n)``."""
        missing = [b.name for b in self.blocks if b.name not in frame.columns]
        if missing:
            raise ValidationError(f"The frame lacks the columns {missing}; expected {self.names}.")
        Z = np.zeros((len(frame), self.n))
        for b in self.blocks:
            col = frame[b.name]
            if b.kind in ("real", "integer"):
                Z[:, b.start] = pd.to_numeric(col).to_numpy(dtype=float)
                continue
            lookup = {c: i for i, c in enumerate(b.categories)}  # type: ignore[arg-type]
            vals = [v.item() if isinstance(v, np.generic) else v for v in col.tolist()]
            bad = sorted({repr(v) for v in vals if v not in lookup})
            if bad:
                raise ValidationError(
                    f"Column '{b.name}' has values {bad[:5]} that are not among its categories "
                    f"{list(b.categories)}."  # type: ignore[arg-type]
                )
            idx = np.array([lookup[v] for v in vals], dtype=int)
            if b.kind == "ordinal":
                Z[:, b.start] = idx
            else:
                Z[np.arange(len(frame)), b.start + idx] = 1.0
        return Z

    def decode(self, Z: np.ndarray) -> pd.DataFrame:
        """``z`` matrix -> raw DataFrame (integers rounded, argmax indicator, ranks clipped)."""
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        cols: dict[str, Any] = {}
        for b in self.blocks:
            v = Z[:, b.columns]
            if b.kind == "real":
                cols[b.name] = v[:, 0].astype(float)
            elif b.kind == "integer":
                cols[b.name] = np.round(v[:, 0]).astype(np.int64)
            elif b.kind == "ordinal":
                r = np.clip(np.round(v[:, 0]).astype(int), 0, len(b.categories) - 1)  # type: ignore[arg-type]
                cols[b.name] = pd.Series([b.categories[i] for i in r], dtype=object)  # type: ignore[index]
            else:
                r = np.argmax(v, axis=1)
                cols[b.name] = pd.Series([b.categories[i] for i in r], dtype=object)  # type: ignore[index]
        return pd.DataFrame({k: (c.to_numpy() if isinstance(c, pd.Series) else c) for k, c in cols.items()})


# --------------------------------------------------------------------------- preprocessing


@dataclass(frozen=True, eq=False)
class XColumn:
    """One estimator input column (see module docstring, section 2).

    Attributes
    ----------
    name : str
        Output name (``num__age``, ``cat__job_A``...).
    feature : str
        The raw feature the column is a function of.
    base : {"value", "indicator", "code"}
        What the base value is: the raw number (numeric features; numeric
        categories passed through), a one-hot indicator, or an ordinal code.
    base_coef : ndarray
        Coefficients over the feature's raw block (length ``block.size``).
    base_const : float
        Constant added to the base value (e.g. a one-hot column for a category
        not in the schema is the constant 0).
    ops : tuple of (str, float)
        scikit-learn's elementwise operations, applied in order to the base
        value: ``"sub"``, ``"div"``, ``"mul"``, ``"add"``.
    scale, offset : float
        Their composition: ``x = scale * v + offset``.
    """

    name: str
    feature: str
    base: str
    base_coef: np.ndarray
    base_const: float = 0.0
    ops: tuple[tuple[str, float], ...] = ()
    scale: float = 1.0
    offset: float = 0.0

    def evaluate(self, zb: np.ndarray) -> np.ndarray:
        """Column values from the feature's raw block values ``zb`` (shape ``(n, size)``)."""
        zb = np.atleast_2d(np.asarray(zb, dtype=float))
        nz = np.flatnonzero(self.base_coef)
        if nz.size == 1 and self.base_coef[nz[0]] == 1.0 and self.base_const == 0.0:
            v = zb[:, nz[0]]
        else:
            v = (zb * self.base_coef).sum(axis=1) + self.base_const
        return self.apply_ops(v)

    def apply_ops(self, v: np.ndarray) -> np.ndarray:
        """Apply :attr:`ops` to base values with scikit-learn's float operations."""
        v = np.array(v, dtype=float, copy=True)
        for op, a in self.ops:
            if op == "sub":
                v -= a
            elif op == "div":
                v /= a
            elif op == "mul":
                v *= a
            else:
                v += a
        return v


@dataclass(frozen=True, eq=False)
class AffineMap:
    """``x = A @ z + c``: the preprocessing, folded (module docstring, section 2)."""

    A: np.ndarray
    c: np.ndarray
    columns: tuple[XColumn, ...]
    space: InputSpace

    @property
    def n_x(self) -> int:
        """Number of estimator inputs."""
        return len(self.columns)

    def apply(self, Z: np.ndarray) -> np.ndarray:
        """Bit-faithful evaluation of the preprocessing on raw vectors ``Z``."""
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        X = np.empty((Z.shape[0], self.n_x))
        for j, col in enumerate(self.columns):
            X[:, j] = col.evaluate(Z[:, self.space.block(col.feature).columns])
        return X


# --------------------------------------------------------------------------- estimators


@dataclass(frozen=True, eq=False)
class Linear:
    """``y = W @ x + b``; ``W``: ``(n_outputs, n_x)``, ``b``: ``(n_outputs,)``."""

    W: np.ndarray
    b: np.ndarray

    @property
    def n_outputs(self) -> int:
        return int(self.W.shape[0])

    def forward(self, X: np.ndarray) -> np.ndarray:
        return X @ self.W.T + self.b


@dataclass(frozen=True, eq=False)
class Dense:
    """One MLP layer ``act(W @ h + b)``; ``W``: ``(n_out, n_in)``."""

    W: np.ndarray
    b: np.ndarray
    activation: Literal["relu", "identity"]


@dataclass(frozen=True, eq=False)
class MLP:
    """Feed-forward ReLU network; ``y`` is the last (identity) layer's output."""

    layers: tuple[Dense, ...]

    @property
    def n_outputs(self) -> int:
        return int(self.layers[-1].W.shape[0])

    def forward(self, X: np.ndarray) -> np.ndarray:
        h = X
        for layer in self.layers:
            h = h @ layer.W.T
            h += layer.b
            if layer.activation == "relu":
                np.maximum(h, 0, out=h)
        return h


@dataclass(frozen=True)
class Split:
    """A tree split (module docstring, section 3): left iff ``cast(x[column]) <= le``.

    Attributes
    ----------
    column : int
        Estimator input column.
    le, ge : float
        Safe bounds: left branch ``x <= le``, right branch ``x >= ge``
        (``ge`` is the next representable number after ``le`` in the
        ensemble's dtype).
    feature : str
        Raw feature of the column.
    raw_le, raw_ge : float or None
        Numeric raw features (and ordinal prefix splits): left iff raw value
        ``<= raw_le``, right iff ``>= raw_ge``; integers for integer/ordinal.
        ``-inf``/``inf`` when one side is empty.
    left_categories : tuple of int or None
        Discrete raw features: indices (schema order; ranks for ordinals) of
        the categories that go left.
    """

    column: int
    le: float
    ge: float
    feature: str
    raw_le: float | None = None
    raw_ge: float | None = None
    left_categories: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class Leaf:
    """A tree leaf: ``conditions`` = ((split index, goes_left), ...) along its path; ``value`` its output vector."""

    node: int
    conditions: tuple[tuple[int, bool], ...]
    value: np.ndarray


@dataclass(frozen=True, eq=False)
class Tree:
    """One tree.  Node 0 is the root; ``left``/``right``/``split`` are -1 at leaves.

    ``split[i]`` indexes :attr:`TreeEnsemble.splits`; ``value[i]`` (shape
    ``(n_outputs,)``) is the tree's contribution at leaf ``i``.  ``output`` is
    the only output a boosting tree contributes to (``None``: all).
    """

    left: np.ndarray
    right: np.ndarray
    split: np.ndarray
    value: np.ndarray
    output: int | None = None
    leaves: tuple[Leaf, ...] = field(default=(), compare=False)

    @property
    def n_nodes(self) -> int:
        return int(self.left.shape[0])

    def bottom_up(self) -> list[int]:
        """Nodes reachable from the root, every child before its parent."""
        order: list[int] = []
        stack = [0]
        while stack:
            n = stack.pop()
            order.append(n)
            if self.split[n] >= 0:
                stack.extend((int(self.left[n]), int(self.right[n])))
        order.reverse()
        return order


@dataclass(frozen=True, eq=False)
class TreeEnsemble:
    """``y = base + (sum_t tree_t(x)) / divisor`` (module docstring, section 3)."""

    trees: tuple[Tree, ...]
    splits: tuple[Split, ...]
    n_outputs: int
    base: np.ndarray
    divisor: float
    aggregation: Literal["mean_proba", "sum_margin"]
    dtype: Literal["float32", "float64"]

    def leaf_index(self, X: np.ndarray) -> np.ndarray:
        """Leaf node reached in every tree, shape ``(n_rows, n_trees)`` (exact semantics)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        Xc = X.astype(np.float32).astype(float) if self.dtype == "float32" else X
        col = np.array([s.column for s in self.splits], dtype=int)
        le = np.array([s.le for s in self.splits], dtype=float)
        out = np.empty((X.shape[0], len(self.trees)), dtype=int)
        rows = np.arange(X.shape[0])
        for t, tree in enumerate(self.trees):
            node = np.zeros(X.shape[0], dtype=int)
            active = tree.split[node] >= 0
            while active.any():
                r = rows[active]
                nd = node[active]
                s = tree.split[nd]
                go_left = Xc[r, col[s]] <= le[s]
                node[active] = np.where(go_left, tree.left[nd], tree.right[nd])
                active = tree.split[node] >= 0
            out[:, t] = node
        return out

    def forward(self, X: np.ndarray) -> np.ndarray:
        leaves = self.leaf_index(X)
        if self.divisor == 1.0:  # boosting: start from the base score, add trees in order
            acc = np.tile(self.base, (leaves.shape[0], 1))
            for t, tree in enumerate(self.trees):
                acc += tree.value[leaves[:, t]]
            return acc
        acc = np.zeros((leaves.shape[0], self.n_outputs))  # averaging: sum, divide, shift
        for t, tree in enumerate(self.trees):
            acc += tree.value[leaves[:, t]]
        acc /= self.divisor
        return acc + self.base if np.any(self.base) else acc


Estimator = Linear | MLP | TreeEnsemble

# --------------------------------------------------------------------------- decision


@dataclass(frozen=True, eq=False)
class OutputCondition:
    """``coef @ y > rhs`` (``strict``) or ``coef @ y >= rhs``; encode as ``>= rhs + margin``."""

    coef: np.ndarray
    rhs: float
    strict: bool

    def holds(self, Y: np.ndarray) -> np.ndarray:
        v = np.atleast_2d(Y) @ self.coef
        return v > self.rhs if self.strict else v >= self.rhs


@dataclass(frozen=True)
class DecisionRule:
    """Outputs -> class index, with the model's tie-breaking (module docstring, section 4)."""

    kind: Literal["threshold", "argmax", "ovo"]
    n_classes: int
    n_outputs: int
    margin: float = 1e-4
    positive_on_tie: bool = False
    pairs: tuple[tuple[int, int], ...] = ()

    def predict(self, Y: np.ndarray) -> np.ndarray:
        """Class indices for outputs ``Y`` (shape ``(n_rows, n_outputs)``)."""
        Y = np.atleast_2d(np.asarray(Y, dtype=float))
        if self.kind == "threshold":
            pos = Y[:, 0] >= 0 if self.positive_on_tie else Y[:, 0] > 0
            return pos.astype(int)
        if self.kind == "argmax":
            return np.argmax(Y, axis=1)
        votes = np.zeros((Y.shape[0], self.n_classes), dtype=int)
        for p, (i, j) in enumerate(self.pairs):
            win = Y[:, p] > 0
            votes[:, i] += win
            votes[:, j] += ~win
        return np.argmax(votes, axis=1)

    def region(self, target: int) -> tuple[tuple[OutputCondition, ...], ...]:
        """Exact ``{y : rule(y) == target}`` as a disjunction of conjunctions."""
        from ._rules import rule_region

        return rule_region(self, int(target))


# --------------------------------------------------------------------------- compiled model


@dataclass(frozen=True, eq=False)
class CompiledModel:
    """A compiled classifier: ``z -> x -> y -> class`` (module docstring).

    Attributes
    ----------
    inputs : InputSpace
        Raw-variable layout.
    affine : AffineMap
        Preprocessing ``x = A z + c``.
    estimator : Linear | MLP | TreeEnsemble
        The estimator node producing the outputs ``y``.
    rule : DecisionRule
        Outputs -> class index.
    classes : ndarray
        Class labels; a class index is a position here (= column of the
        model's ``predict_proba``).
    schema : Schema
        The schema the model was compiled against.
    source : str
        What was compiled (for messages).
    """

    inputs: InputSpace
    affine: AffineMap
    estimator: Linear | MLP | TreeEnsemble
    rule: DecisionRule
    classes: np.ndarray
    schema: Schema
    source: str = ""

    @property
    def n_outputs(self) -> int:
        """Length of ``y``."""
        return self.rule.n_outputs

    @property
    def n_classes(self) -> int:
        return self.rule.n_classes

    @property
    def has_relu(self) -> bool:
        """Whether the estimator is an MLP with at least one ReLU layer."""
        return isinstance(self.estimator, MLP) and any(
            layer.activation == "relu" for layer in self.estimator.layers
        )

    def class_index(self, label: Any) -> int:
        """Position of ``label`` in :attr:`classes`."""
        hits = np.flatnonzero(self.classes == label)
        if hits.size == 0:
            raise ValidationError(
                f"Class {label!r} is not a class of the model; its classes are {self.classes.tolist()}."
            )
        return int(hits[0])

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw DataFrame -> ``z``."""
        return self.inputs.encode(frame)

    def decode(self, Z: np.ndarray) -> pd.DataFrame:
        """``z`` -> raw DataFrame."""
        return self.inputs.decode(Z)

    def transform_raw(self, Z: np.ndarray) -> np.ndarray:
        """``z`` -> estimator input ``x`` (bit-faithful to the pipeline)."""
        return self.affine.apply(Z)

    def outputs_raw(self, Z: np.ndarray) -> np.ndarray:
        """``z`` -> outputs ``y``, shape ``(n_rows, n_outputs)``."""
        return self.estimator.forward(self.transform_raw(Z))

    def predict_raw(self, Z: np.ndarray) -> np.ndarray:
        """``z`` -> class indices, with the IR's exact semantics."""
        return self.rule.predict(self.outputs_raw(Z))

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """Raw DataFrame -> class labels, computed through the IR."""
        return self.classes[self.predict_raw(self.encode(frame))]

    def raw_thresholds(self) -> dict[str, np.ndarray]:
        """Distinct raw-unit tree cuts ``raw_le`` per numeric / ordinal feature (sorted).

        A sample goes left at a cut ``t`` iff its raw value is ``<= t``.  Empty
        for non-tree models; categorical features are not listed.
        """
        from ._bounds import raw_thresholds

        return raw_thresholds(self)
