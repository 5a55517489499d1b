"""Array libraries for the swarm update: numpy (default) and torch (``device=``).

Only the handful of operations the update needs.  Random numbers are always
drawn from the query's numpy Generator and moved to the device, so both
libraries follow the same random stream: a torch run on the CPU reproduces the
numpy run up to floating-point rounding (tested), and results never depend on
torch's global RNG.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._utils._deps import import_optional, torch_device

__all__ = ["Arrays", "NumpyArrays", "TorchArrays", "array_library"]


class NumpyArrays:
    """float64 numpy arrays."""

    name = "numpy"

    def asarray(self, a: Any) -> np.ndarray:
        return np.asarray(a, dtype=float)

    def asindex(self, a: Any) -> np.ndarray:
        return np.asarray(a, dtype=np.int64)

    def asbool(self, a: Any) -> np.ndarray:
        return np.asarray(a, dtype=bool)

    def to_numpy(self, a: Any) -> np.ndarray:
        return np.asarray(a)

    def clip(self, a: Any, lo: Any, hi: Any) -> Any:
        return np.minimum(np.maximum(a, lo), hi)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return np.where(c, a, b)

    def abs(self, a: Any) -> Any:
        return np.abs(a)

    def amax(self, a: Any, axis: int) -> Any:
        return a.max(axis=axis)

    def amin(self, a: Any, axis: int) -> Any:
        return a.min(axis=axis)

    def copy(self, a: Any) -> Any:
        return a.copy()

    def rint(self, a: Any) -> Any:
        return np.rint(a)

    def floor(self, a: Any) -> Any:
        return np.floor(a)

    def argmax(self, a: Any, axis: int) -> Any:
        return np.argmax(a, axis=axis)

    def argsort(self, a: Any, axis: int = -1, descending: bool = False) -> Any:
        return np.argsort(-a if descending else a, axis=axis, kind="stable")

    def searchsorted(self, grid: Any, v: Any) -> Any:
        return np.searchsorted(grid, v)

    def zeros(self, shape: tuple[int, ...]) -> Any:
        return np.zeros(shape)

    def arange(self, n: int) -> Any:
        return np.arange(n)

    def one_hot(self, idx: Any, k: int) -> Any:
        out = np.zeros((idx.shape[0], k))
        out[np.arange(idx.shape[0]), idx] = 1.0
        return out


class TorchArrays(NumpyArrays):
    """float64 torch tensors on ``device``."""

    name = "torch"

    def __init__(self, device: Any) -> None:
        self.torch = import_optional("torch", purpose="MDPSO(device=...)")
        self.device = torch_device(self.torch, device, "MDPSO")

    def asarray(self, a: Any) -> Any:
        if isinstance(a, self.torch.Tensor):
            return a.to(device=self.device, dtype=self.torch.float64)
        return self.torch.as_tensor(
            np.asarray(a, dtype=float), dtype=self.torch.float64, device=self.device
        )

    def asindex(self, a: Any) -> Any:
        return self.torch.as_tensor(np.asarray(a, dtype=np.int64), device=self.device)

    def asbool(self, a: Any) -> Any:
        return self.torch.as_tensor(np.asarray(a, dtype=bool), device=self.device)

    def to_numpy(self, a: Any) -> np.ndarray:
        if isinstance(a, self.torch.Tensor):
            return a.detach().cpu().numpy()
        return np.asarray(a)

    def clip(self, a: Any, lo: Any, hi: Any) -> Any:
        return self.torch.clamp(a, lo, hi)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        t = self.torch
        like = a if isinstance(a, t.Tensor) else b if isinstance(b, t.Tensor) else None
        dtype = like.dtype if like is not None else t.float64
        a = a if isinstance(a, t.Tensor) else t.as_tensor(a, dtype=dtype, device=self.device)
        b = b if isinstance(b, t.Tensor) else t.as_tensor(b, dtype=dtype, device=self.device)
        return t.where(c, a, b)

    def abs(self, a: Any) -> Any:
        return self.torch.abs(a)

    def amax(self, a: Any, axis: int) -> Any:
        return self.torch.amax(a, dim=axis)

    def amin(self, a: Any, axis: int) -> Any:
        return self.torch.amin(a, dim=axis)

    def copy(self, a: Any) -> Any:
        return a.clone()

    def rint(self, a: Any) -> Any:
        return self.torch.round(a)  # half to even, like numpy.rint

    def floor(self, a: Any) -> Any:
        return self.torch.floor(a)

    def argmax(self, a: Any, axis: int) -> Any:
        return self.torch.argmax(a, dim=axis)  # first maximum, like numpy

    def argsort(self, a: Any, axis: int = -1, descending: bool = False) -> Any:
        return self.torch.argsort(a, dim=axis, descending=descending, stable=True)

    def searchsorted(self, grid: Any, v: Any) -> Any:
        return self.torch.searchsorted(grid, v.contiguous())

    def zeros(self, shape: tuple[int, ...]) -> Any:
        return self.torch.zeros(shape, dtype=self.torch.float64, device=self.device)

    def arange(self, n: int) -> Any:
        return self.torch.arange(n, device=self.device)

    def one_hot(self, idx: Any, k: int) -> Any:
        return self.torch.nn.functional.one_hot(idx, k).to(self.torch.float64)


Arrays = NumpyArrays  # the interface; TorchArrays implements it with tensors


def array_library(device: Any) -> Arrays:
    """``None`` -> numpy; anything else (``"cpu"``, ``"cuda"``, a ``torch.device``) -> torch."""
    if device is None:
        return NumpyArrays()
    return TorchArrays(device)
