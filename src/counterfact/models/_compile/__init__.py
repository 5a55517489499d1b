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
* estimators: :data:`SUPPORTED_ESTIMATORS`, derived from the registered front
  ends (LogisticRegression and the other linear classifiers, SVC / NuSVC with
  a linear kernel, ReLU MLPClassifier, scikit-learn's trees, forests and
  gradient boosting, XGBClassifier and LGBMClassifier with native categorical
  splits, binary CatBoostClassifier with float and one-hot categorical splits,
  interpret's ExplainableBoostingClassifier; binary
  ``CalibratedClassifierCV`` with one calibrated model and optbinning's
  ``Scorecard`` around them).

Adding a model kind
-------------------
One :class:`FrontEnd` subclass, decorated with :func:`register_front_end`: it
declares the estimator classes it compiles (``"module:Class"`` strings for
optional libraries, never imported by the lookup) and compiles a fitted one
into an IR estimator node and a :class:`DecisionRule`; the dispatcher finds it
by the estimator's MRO.  A new IR estimator node implements
:class:`EstimatorNode` (outputs, bounds, probability, splits) and needs an
entry in each solver's encoder table (``tests/models/test_ir_contract.py``
lists them).

Layout (a module imports only modules listed before it)
-------------------------------------------------------
* the IR: :mod:`._interval` (interval arithmetic), :mod:`._columns`
  (non-affine column operations), :mod:`._ir_inputs` (raw inputs,
  preprocessing), :mod:`._ir_rules` (decision rules), :mod:`._ir` (estimator
  nodes, :class:`CompiledModel`), and :mod:`._bounds` (interval bounds over
  it);
* the front-end registry, :mod:`._frontend`;
* helpers shared by the front ends: :mod:`._support` (what is supported, the
  error for the rest), :mod:`._xcolumns` (building input columns),
  :mod:`._splits` (building trees), :mod:`._cells` (step functions of raw
  features as trees), :mod:`._lift` (linear models over piecewise-constant
  columns of integral variables as ReLU networks), :mod:`._steps` (linear
  models and MLPs over bins of real values as trees: scorecards);
* front ends, one per family: :mod:`._encoders`, :mod:`._numeric`,
  :mod:`._optbinning` and :mod:`._pre` (pipelines and preprocessing),
  :mod:`._sk_linear`, :mod:`._sk_trees`, :mod:`._boosters`, :mod:`._catboost`,
  :mod:`._ebm`, :mod:`._calibrated` (wrappers, given the dispatcher as a callable);
* the dispatcher, :mod:`._dispatch`: ``compile_model``, which imports every
  front-end module (registering its front ends).
"""

from ._bounds import IntervalBounds, interval_bounds
from ._dispatch import (
    SUPPORTED_ESTIMATORS,
    compile_model,
    native_category_frame,
    raw_thresholds,
)
from ._frontend import FrontEnd, WrapperFrontEnd, front_ends, register_front_end
from ._ir import (
    MLP,
    AffineMap,
    CompiledModel,
    DecisionRule,
    Dense,
    Estimator,
    EstimatorNode,
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
from ._probability import probability_function, probability_link, with_min_probability
from ._support import SUPPORTED_TRANSFORMERS
from ._votes import vote_shares, with_min_vote_share

__all__ = [
    "MLP",
    "SUPPORTED_ESTIMATORS",
    "SUPPORTED_TRANSFORMERS",
    "AffineMap",
    "CompiledModel",
    "DecisionRule",
    "Dense",
    "Estimator",
    "EstimatorNode",
    "FrontEnd",
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
    "WrapperFrontEnd",
    "XColumn",
    "compile_model",
    "front_ends",
    "interval_bounds",
    "native_category_frame",
    "probability_function",
    "probability_link",
    "raw_thresholds",
    "register_front_end",
    "vote_shares",
    "with_min_probability",
    "with_min_vote_share",
]
