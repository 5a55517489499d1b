"""L2C, Learning to Counter (Vo et al., 2023): an amortized generator of diverse
counterfactuals; :class:`TrainingOptions` holds the settings of its training.

Imported as ``counterfact.methods.l2c:L2C`` by the registry; torch loads only
when an L2C is fitted or loaded.
"""

from __future__ import annotations

from ._method import L2C
from ._options import TrainingOptions

__all__ = ["L2C", "TrainingOptions"]
