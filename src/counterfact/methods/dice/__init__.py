"""DiCE (Mothilal et al., FAT* 2020) as a peer method, through the ``dice-ml`` package."""

from ._method import DiCE

__all__ = ["DiCE"]
