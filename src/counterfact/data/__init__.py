"""Datasets in memory: :class:`Dataset` (a frame, its schema and its target) and the
numeric encoding the methods search in (:class:`Encoder`, :mod:`.encoding`).  The
bundled datasets are in :mod:`counterfact.datasets`."""

from ._dataset import Dataset
from .encoding import Encoder

__all__ = ["Dataset", "Encoder"]
