"""What the preprocessing front ends support, and the error for what they do not.

A shared helper of the front ends (:mod:`._pre`, :mod:`._encoders`,
:mod:`._numeric`, :mod:`._xcolumns`) and the dispatcher; it imports no other
module of the compiler.
"""

from __future__ import annotations

from ...exceptions import UnsupportedModelError

__all__ = ["SUPPORTED_TRANSFORMERS", "unsupported"]

SUPPORTED_TRANSFORMERS = (
    "ColumnTransformer",
    "Pipeline",
    "OneHotEncoder",
    "OrdinalEncoder",
    "TargetEncoder",
    "StandardScaler",
    "MinMaxScaler",
    "MaxAbsScaler",
    "RobustScaler",
    "KBinsDiscretizer",
    "BinningProcess (optbinning)",
    "SimpleImputer",
    "MissingIndicator",
    "FunctionTransformer(func=None|np.log1p|np.log|np.sqrt|...)",
    "QuantileTransformer",
    "PowerTransformer",
    "'passthrough'",
)


def unsupported(element: str, where: str = "", why: str = "") -> UnsupportedModelError:
    """The error for an unsupported preprocessing element, naming it and its position."""
    at = f" at {where}" if where else ""
    extra = f" ({why})" if why else ""
    return UnsupportedModelError(
        f"The model compiler does not support the preprocessing element {element}{at}{extra}. "
        f"Supported: {', '.join(SUPPORTED_TRANSFORMERS)}, with ColumnTransformer remainder "
        "'drop' or 'passthrough' (see docs/models.md). Rebuild the pipeline with these "
        "(counterfact.models.make_pipeline gives a supported layout), or use a model-agnostic "
        "method (e.g. cf.UFCE, cf.MDPSO)."
    )
