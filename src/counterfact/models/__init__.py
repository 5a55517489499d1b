"""Model adapters, standard model kinds and (in :mod:`counterfact.models.compile`) the model compiler."""

from ._adapter import ModelAdapter, TorchModel, as_adapter
from ._fit import KINDS, fit, make_pipeline, preprocessor

__all__ = ["KINDS", "ModelAdapter", "TorchModel", "as_adapter", "fit", "make_pipeline", "preprocessor"]
