"""The model compiler: a fitted classifier -> a solver-neutral piecewise-linear IR.

``compile_model(model, schema)`` turns a supported fitted model (a scikit-learn
pipeline's preprocessing plus its estimator, or an XGBoost / LightGBM
classifier) into a :class:`CompiledModel`; MACE (Z3) and CE-OCL (MILP) each
translate the IR into their solver's constraints.  The semantics of every IR
node are specified in :mod:`counterfact.models.compile._ir`.

Supported
---------
* preprocessing: ``ColumnTransformer`` of ``OneHotEncoder`` (``drop`` too),
  ``OrdinalEncoder``, ``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
  ``RobustScaler``, ``"passthrough"``, nested ``Pipeline`` of those,
  ``remainder="drop"|"passthrough"``, followed by any number of column-wise
  scalers; or no preprocessing (the estimator fitted on the raw columns);
* estimators: LogisticRegression, LinearSVC, SVC(kernel="linear"),
  MLPClassifier (activation relu / identity), DecisionTreeClassifier,
  RandomForestClassifier, ExtraTreesClassifier, GradientBoostingClassifier,
  HistGradientBoostingClassifier (numerical splits), XGBClassifier,
  LGBMClassifier; binary and multi-class.
"""

from ._bounds import IntervalBounds, interval_bounds, raw_thresholds
from ._compile import SUPPORTED_ESTIMATORS, SUPPORTED_TRANSFORMERS, compile_model
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
    Tree,
    TreeEnsemble,
    XColumn,
)

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
    "Tree",
    "TreeEnsemble",
    "XColumn",
    "compile_model",
    "interval_bounds",
    "raw_thresholds",
]
