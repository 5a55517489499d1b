"""The model compiler: a fitted classifier -> a solver-neutral piecewise-linear IR.

``compile_model(model, schema)`` turns a supported fitted model (a scikit-learn
pipeline's preprocessing plus its estimator, or an XGBoost / LightGBM
classifier) into a :class:`CompiledModel`; MACE (Z3) and CE-OCL (MILP) each
translate the IR into their solver's constraints.  The semantics of every IR
node are specified in :mod:`counterfact.models._compile._ir`.

Supported (``docs/models.md`` has the tested matrix)
---------------------------------------------------
* preprocessing: ``ColumnTransformer`` (columns by name, position, mask or
  ``make_column_selector``; ``remainder="drop"|"passthrough"|transformer``),
  nested ``Pipeline``, ``set_output(transform="pandas")``, fitted on
  DataFrames or arrays; ``OneHotEncoder`` on any discrete or integer feature
  (every option: ``drop``, ``handle_unknown``, infrequent grouping, explicit
  ``categories``, sparse output), ``OrdinalEncoder`` (any order,
  ``unknown_value``), ``TargetEncoder``, the scalers, ``KBinsDiscretizer``,
  ``SimpleImputer`` / ``MissingIndicator`` (rows without missing values),
  optbinning's ``BinningProcess``, and -- for tree models only -- monotone
  maps (``FunctionTransformer`` with ``np.log1p`` etc., ``QuantileTransformer``,
  ``PowerTransformer``); bins of real features (``KBinsDiscretizer``,
  ``BinningProcess``) in front of linear models and MLPs become trees
  (:mod:`._steps`);
* estimators: LogisticRegression, LinearSVC, SVC(kernel="linear"),
  MLPClassifier (activation relu / identity), DecisionTreeClassifier,
  RandomForestClassifier, ExtraTreesClassifier, GradientBoostingClassifier,
  HistGradientBoostingClassifier (numerical splits), XGBClassifier and
  LGBMClassifier (also native categorical splits); binary and multi-class;
  binary ``CalibratedClassifierCV`` (sigmoid / isotonic) with one calibrated
  model; interpret's ``ExplainableBoostingClassifier`` (binary, pairs);
  optbinning's ``Scorecard``.

Layout (a module imports only modules listed before it)
-------------------------------------------------------
* the IR: :mod:`._columns` (non-affine column operations), :mod:`._ir_inputs`
  (raw inputs, preprocessing), :mod:`._ir_rules` (decision rules),
  :mod:`._ir` (estimator nodes, :class:`CompiledModel`), and
  :mod:`._bounds` (interval bounds over it);
* helpers shared by the front ends: :mod:`._support` (what is supported, the
  error for the rest), :mod:`._xcolumns` (building input columns),
  :mod:`._splits` (building trees), :mod:`._cells` (step functions of raw
  features as trees), :mod:`._lift` (linear models over piecewise-constant
  columns of integral variables as ReLU networks), :mod:`._steps` (linear
  models and MLPs over bins of real values as trees: scorecards);
* front ends, one per family: :mod:`._encoders`, :mod:`._numeric`,
  :mod:`._optbinning` and :mod:`._pre` (pipelines and preprocessing),
  :mod:`._sk_linear`, :mod:`._sk_trees`, :mod:`._boosters`, :mod:`._ebm`,
  :mod:`._calibrated` (given the dispatcher as a callable);
* the dispatcher, :mod:`._dispatch`: ``compile_model`` and its lookup tables.
"""

from ._bounds import IntervalBounds, interval_bounds
from ._dispatch import (
    SUPPORTED_ESTIMATORS,
    compile_model,
    native_category_frame,
    raw_thresholds,
)
from ._ir import (
    MLP,
    AffineMap,
    CompiledModel,
    DecisionRule,
    Dense,
    Estimator,
    InputSpace,
    Leaf,
    Linear,
    OutputCondition,
    RawBlock,
    Split,
    StepMLP,
    Tree,
    TreeEnsemble,
    XColumn,
)
from ._probability import probability_link, with_min_probability
from ._support import SUPPORTED_TRANSFORMERS

__all__ = [
    "MLP",
    "SUPPORTED_ESTIMATORS",
    "SUPPORTED_TRANSFORMERS",
    "AffineMap",
    "CompiledModel",
    "DecisionRule",
    "Dense",
    "Estimator",
    "InputSpace",
    "IntervalBounds",
    "Leaf",
    "Linear",
    "OutputCondition",
    "RawBlock",
    "Split",
    "StepMLP",
    "Tree",
    "TreeEnsemble",
    "XColumn",
    "compile_model",
    "interval_bounds",
    "native_category_frame",
    "probability_link",
    "raw_thresholds",
    "with_min_probability",
]
