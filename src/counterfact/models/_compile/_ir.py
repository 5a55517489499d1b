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

Non-affine columns (``XColumn.is_affine`` false; :mod:`._columns`): element-wise
monotone maps (``("fn", f)``: log, quantile and power transforms, bin codes)
and lookups over an integer code (``("table", T)``: one-hot indicators of an
ordinal's level, of a bin, target encodings of an ordinal).  Their rows of
``A``/``c`` are zero.  They occur only in tree models (every split on them
carries an exact raw form: ``raw_le``/``raw_ge`` or ``left_categories``) and,
for tables over an integral variable, in linear models and MLPs *lifted* to an
:class:`MLP` whose first ReLU layer computes exact step units
(``relu(z - t + 1) - relu(z - t) = [z >= t]`` for integral ``z``;
:mod:`._lift`); step functions of a real variable in front of linear models and
MLPs become trees (:mod:`._steps`: a :class:`TreeEnsemble`, or the ``steps`` of
a :class:`StepMLP`), so back ends only ever read the affine rows.  Extra
estimator-unused x-columns may be appended for trees (bin codes of rewritten
splits, the raw value, category index or rank that step trees split on).

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
* :class:`StepMLP`: an :class:`MLP` whose first layer's pre-activation also
  adds a ``"sum_margin"`` :class:`TreeEnsemble` (``steps``, float64 splits,
  one output per unit of that layer): the exact form of linear models and MLPs
  over step functions of a real raw value (``KBinsDiscretizer`` bins, weights
  of evidence), which ReLU networks cannot compute.  The x-columns those step
  functions come from have zero weight in the network (:mod:`._steps`).

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
:func:`counterfact.models._compile.interval_bounds` (box -> bounds of x, of
every MLP pre-activation, and of the outputs) and
:meth:`CompiledModel.raw_thresholds` (distinct raw-unit tree cuts per feature).

The IR layer is this module (section 3 and :class:`CompiledModel`) with
:mod:`._ir_inputs` (sections 1-2), :mod:`._ir_rules` (section 4) and
:mod:`._columns` (the non-affine columns); it imports neither the front ends
that build it nor the dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...schema import Schema
from ._interval import NodeBounds, affine_bounds, network_bounds, widen
from ._ir_inputs import AffineMap, InputSpace, RawBlock, XColumn
from ._ir_rules import DecisionRule, OutputCondition

__all__ = [
    "MLP",
    "AffineMap",
    "CompiledModel",
    "DecisionRule",
    "Dense",
    "Estimator",
    "EstimatorNode",
    "InputSpace",
    "Leaf",
    "Linear",
    "OutputCondition",
    "RawBlock",
    "Split",
    "StepMLP",
    "Tree",
    "TreeEnsemble",
    "XColumn",
]

# --------------------------------------------------------------------------- estimators


class EstimatorNode(Protocol):
    """What every estimator node declares, for the consumers of the IR that are not
    solver encoders (those keep one table per solver, keyed by node class:
    ``tests/models/test_ir_contract.py`` lists every consumer a new node must
    provide).

    Attributes
    ----------
    n_outputs : int
        Length of the outputs ``y``.
    has_relu : bool
        The node computes ReLUs (a MILP encodes it best).
    outputs_are_probabilities : bool
        The outputs are the class probabilities themselves (forests' mean leaf
        probabilities): the probability link of :mod:`._probability` can be
        ``"identity"``.
    tree_splits : tuple of Split
        The tree splits the node decides by (raw cuts:
        :meth:`CompiledModel.raw_thresholds`); empty for networks.
    """

    @property
    def n_outputs(self) -> int: ...

    @property
    def has_relu(self) -> bool: ...

    @property
    def outputs_are_probabilities(self) -> bool: ...

    @property
    def tree_splits(self) -> tuple[Split, ...]: ...

    def forward(self, X: np.ndarray) -> np.ndarray:
        """``x`` rows -> ``y`` rows, with the IR's exact semantics."""
        ...

    def output_bounds(self, lo: np.ndarray, hi: np.ndarray) -> NodeBounds:
        """Bounds over the input box ``lo <= x <= hi``: ``(pre, post, y)``, with
        ``pre``/``post`` each network layer's pre-activation and activation (empty
        for other nodes) and ``y`` the outputs' (valid, slightly widened)."""
        ...


@dataclass(frozen=True, eq=False)
class Linear:
    """``y = W @ x + b``; ``W``: ``(n_outputs, n_x)``, ``b``: ``(n_outputs,)``."""

    W: np.ndarray
    b: np.ndarray

    has_relu: ClassVar[bool] = False
    outputs_are_probabilities: ClassVar[bool] = False

    @property
    def n_outputs(self) -> int:
        return int(self.W.shape[0])

    @property
    def tree_splits(self) -> tuple[Split, ...]:
        return ()

    def forward(self, X: np.ndarray) -> np.ndarray:
        return X @ self.W.T + self.b

    def output_bounds(self, lo: np.ndarray, hi: np.ndarray) -> NodeBounds:
        return (), (), affine_bounds(self.W, self.b, lo, hi)


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

    outputs_are_probabilities: ClassVar[bool] = False

    @property
    def n_outputs(self) -> int:
        return int(self.layers[-1].W.shape[0])

    @property
    def has_relu(self) -> bool:
        """At least one ReLU layer."""
        return any(layer.activation == "relu" for layer in self.layers)

    @property
    def tree_splits(self) -> tuple[Split, ...]:
        return ()

    def output_bounds(self, lo: np.ndarray, hi: np.ndarray) -> NodeBounds:
        return network_bounds(self.layers, lo, hi)

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
    left_values : tuple of float or None
        Set-valued (native categorical) splits of XGBoost / LightGBM: the
        sample goes left iff ``x[column]`` (the model's category code) is one
        of these; ``le``/``ge`` are NaN then.  Only the numpy evaluator reads
        it: the split's feature is discrete and ``left_categories`` gives the
        same set in raw terms.
    """

    column: int
    le: float
    ge: float
    feature: str
    raw_le: float | None = None
    raw_ge: float | None = None
    left_categories: tuple[int, ...] | None = None
    left_values: tuple[float, ...] | None = None


@dataclass(frozen=True, eq=False)
class Leaf:
    """A tree leaf: ``conditions`` = ((split index, goes_left), ...) along its path;
    ``value`` its output vector."""

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

    has_relu: ClassVar[bool] = False

    @property
    def outputs_are_probabilities(self) -> bool:
        """Forests: the outputs are the mean leaf class probabilities."""
        return self.aggregation == "mean_proba"

    @property
    def tree_splits(self) -> tuple[Split, ...]:
        return self.splits

    def output_bounds(self, lo: np.ndarray, hi: np.ndarray) -> NodeBounds:
        """Bounds of the outputs (whatever the input box): every tree's extreme leaves."""
        low = np.zeros(self.n_outputs)
        high = np.zeros(self.n_outputs)
        for tree in self.trees:
            leaf = tree.left < 0
            low += tree.value[leaf].min(axis=0)
            high += tree.value[leaf].max(axis=0)
        return (), (), widen(self.base + low / self.divisor, self.base + high / self.divisor)

    def leaf_index(self, X: np.ndarray) -> np.ndarray:
        """Leaf node reached in every tree, shape ``(n_rows, n_trees)`` (exact semantics)."""
        X = np.atleast_2d(np.asarray(X, dtype=float))
        Xc = X.astype(np.float32).astype(float) if self.dtype == "float32" else X
        col = np.array([s.column for s in self.splits], dtype=int)
        le = np.array([s.le for s in self.splits], dtype=float)
        sets = {
            i: np.array(s.left_values, dtype=float)
            for i, s in enumerate(self.splits)
            if s.left_values is not None
        }
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
                if sets:
                    for sid, vals in sets.items():
                        at = s == sid
                        if at.any():
                            go_left[at] = np.isin(Xc[r[at], col[sid]], vals)
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


@dataclass(frozen=True, eq=False)
class StepMLP:
    """A ReLU network whose first layer also reads step functions of raw features.

    ``y = net(x)`` except that the first layer's pre-activation is
    ``W_1 @ x + b_1 + steps(x)``: ``steps`` is a :class:`TreeEnsemble`
    (``"sum_margin"``, one output per unit of the first layer) of one- or
    two-feature trees, the exact form of inputs that are step functions of a
    raw value at real cut points (bins of a real feature, weights of evidence),
    which no ReLU network computes.  ``net``'s first layer has zero weights on
    those x-columns.  A linear model over such inputs is a one-layer
    (identity) ``net``.
    """

    steps: TreeEnsemble
    net: MLP

    has_relu: ClassVar[bool] = True
    outputs_are_probabilities: ClassVar[bool] = False

    @property
    def n_outputs(self) -> int:
        return self.net.n_outputs

    @property
    def tree_splits(self) -> tuple[Split, ...]:
        return self.steps.splits

    def output_bounds(self, lo: np.ndarray, hi: np.ndarray) -> NodeBounds:
        """The network's bounds, the steps' output bounds added to its first layer."""
        shift = self.steps.output_bounds(lo, hi)[2]
        return network_bounds(self.net.layers, lo, hi, shift)

    def forward(self, X: np.ndarray) -> np.ndarray:
        first, *rest = self.net.layers
        h = X @ first.W.T
        h += first.b
        h += self.steps.forward(X)
        if first.activation == "relu":
            np.maximum(h, 0, out=h)
        for layer in rest:
            h = h @ layer.W.T
            h += layer.b
            if layer.activation == "relu":
                np.maximum(h, 0, out=h)
        return h


Estimator = Linear | MLP | TreeEnsemble | StepMLP

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
    estimator : Linear | MLP | TreeEnsemble | StepMLP
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
    estimator_class : str
        The class name of the compiled estimator (``"XGBClassifier"``, ...;
        the inner estimator of a calibrated one), for messages.
    front_end : str
        The name of the front end that compiled that estimator (``"xgboost"``,
        ``"sklearn-forest"``, ...: :attr:`._frontend.FrontEnd.name`), for
        choices made per model family (a solver preferred for it).
    """

    inputs: InputSpace
    affine: AffineMap
    estimator: Linear | MLP | TreeEnsemble | StepMLP
    rule: DecisionRule
    classes: np.ndarray
    schema: Schema
    source: str = ""
    estimator_class: str = ""
    front_end: str = ""

    @property
    def n_outputs(self) -> int:
        """Length of ``y``."""
        return self.rule.n_outputs

    @property
    def n_classes(self) -> int:
        return self.rule.n_classes

    @property
    def has_relu(self) -> bool:
        """Whether the estimator computes ReLUs (:attr:`EstimatorNode.has_relu`: an MLP
        with at least one ReLU layer, or a :class:`StepMLP`; both are encoded by the
        MILP: MACE's MIP oracle)."""
        return bool(self.estimator.has_relu)

    def class_index(self, label: Any) -> int:
        """Position of ``label`` in :attr:`classes`."""
        hits = np.flatnonzero(self.classes == label)
        if hits.size == 0:
            raise ValidationError(
                f"Class {label!r} is not a class of the model; its classes are "
                f"{self.classes.tolist()}."
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
        for non-tree models; categorical features are not listed.  Only cuts
        inside the domain (``lower <= t < upper``) are listed; integer and
        ordinal cuts are integers.  A :class:`StepMLP` lists the cuts of its steps.
        """
        cuts: dict[str, set[float]] = {}
        for s in self.estimator.tree_splits:
            if s.raw_le is None or not np.isfinite(s.raw_le):
                continue
            blk = self.inputs.block(s.feature)
            if blk.is_indicator:
                continue
            if not blk.lower <= s.raw_le < blk.upper:
                continue  # does not split the domain
            cuts.setdefault(s.feature, set()).add(float(s.raw_le))
        return {k: np.array(sorted(v)) for k, v in cuts.items()}
