"""Model adapters, standard model kinds, loading a model file, choosing the rows to
explain, retrained copies and (in :mod:`counterfact.models._compile`) the model compiler."""

from ._adapter import ModelAdapter, TorchModel, as_adapter
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
    "desired_class",
    "fit",
    "load_model_file",
    "make_pipeline",
    "preprocessor",
    "retrained",
    "rows_to_explain",
]
