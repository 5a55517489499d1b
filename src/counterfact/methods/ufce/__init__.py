"""UFCE counterfactuals (Suffian, Alonso-Moral & Bogliolo 2024): see :class:`UFCE`.

Layout: ``_feedback`` (the paper's simulated user feedback as Constraints),
``_mi`` (pairwise mutual information, CMI), ``_space`` (code rows <->
raw frames <-> encoded vectors), ``_dependency`` (cached dependency
models), ``_search`` (FNN/INTERVALS subspace, Single_F/Double_F/Triple_F as a
batched search over arrays), ``_score`` (eq. 4-6 ranking) and ``_method``
(the method class).
"""

from __future__ import annotations

from ._feedback import FEEDBACK_LEVELS, feedback_levels, random_feedback
from ._method import UFCE

__all__ = ["FEEDBACK_LEVELS", "UFCE", "feedback_levels", "random_feedback"]
