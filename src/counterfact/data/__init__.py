"""Datasets in memory: :class:`Dataset` (a frame, its schema and its target), the
numeric encoding the methods search in (:mod:`.encoding`), and reading the user's
own files with clear errors.  The bundled datasets are in :mod:`counterfact.datasets`."""

from . import encoding
from ._dataset import Dataset, mad, quantile_bins, ranges
from ._loading import load_csv, read_csv, read_structured
from .encoding import Encoder, Scaling

__all__ = [
    "Dataset",
    "Encoder",
    "Scaling",
    "encoding",
    "load_csv",
    "mad",
    "quantile_bins",
    "ranges",
    "read_csv",
    "read_structured",
]
