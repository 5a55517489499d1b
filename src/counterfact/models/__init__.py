"""Model adapters, standard model kinds, loading a model file, choosing the rows to
explain, retrained copies, and the model compiler's entry points: :func:`compile_model`
(the piecewise-linear form the exact methods solve over) and :func:`native_category_frame`
(a frame cast to a native categorical XGBoost / LightGBM model's own categories)."""

from ._adapter import ModelAdapter, TorchModel, as_adapter
from ._compile import compile_model, native_category_frame
from ._fit import KINDS, fit, make_pipeline, preprocessor
from ._loading import UNSAFE_MODEL_HELP, load_model_file
from ._retrain import retrained
from ._select import check_label, desired_class, rows_to_explain

__all__ = [
    "KINDS",
    "UNSAFE_MODEL_HELP",
    "ModelAdapter",
    "TorchModel",
    "as_adapter",
    "check_label",
    "compile_model",
    "desired_class",
    "fit",
    "load_model_file",
    "make_pipeline",
    "native_category_frame",
    "preprocessor",
    "retrained",
    "rows_to_explain",
]
