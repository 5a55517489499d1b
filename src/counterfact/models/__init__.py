"""Model adapters, standard model kinds (:func:`fit`, :func:`make_pipeline`), choosing the
rows to explain, retrained copies, and the model compiler's entry points:
:func:`compile_model` (the piecewise-linear form the exact methods solve over) and
:func:`native_category_frame` (a frame cast to a native categorical XGBoost / LightGBM
model's own categories); :class:`OnnxModel`, a classifier stored as an ONNX file."""

from ._adapter import ModelAdapter, TorchModel
from ._compile import compile_model, native_category_frame
from ._fit import check_params, fit, make_pipeline, preprocessor
from ._onnx_adapter import OnnxModel
from ._retrain import retrained
from ._select import desired_class, rows_to_explain

__all__ = [
    "ModelAdapter",
    "OnnxModel",
    "TorchModel",
    "check_params",
    "compile_model",
    "desired_class",
    "fit",
    "make_pipeline",
    "native_category_frame",
    "preprocessor",
    "retrained",
    "rows_to_explain",
]
