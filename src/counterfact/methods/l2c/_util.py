"""Small array functions of L2C's inference (distinct draws, torch threads, row subsets)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["_distinct", "_threads"]


def _distinct(draws: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of ``draws`` (n, S, N) per query: ``(owner, levels, counts)``,
    sorted by owner.  Rows are packed into byte strings (owner big-endian first)
    so that one 1-D sort does the work."""
    n, S, N = draws.shape
    owner_all = np.repeat(np.arange(n), S)
    flat = draws.reshape(n * S, N)
    if sizes.max() > 255 or n >= 2**16:
        keys, counts = np.unique(np.column_stack([owner_all, flat]), axis=0, return_counts=True)
        return keys[:, 0], keys[:, 1:], counts
    packed = np.empty((n * S, N + 2), dtype=np.uint8)
    packed[:, 0] = owner_all >> 8
    packed[:, 1] = owner_all & 0xFF
    packed[:, 2:] = flat
    void = np.ascontiguousarray(packed).view(np.dtype((np.void, N + 2))).ravel()
    _, first, counts = np.unique(void, return_index=True, return_counts=True)
    return owner_all[first], flat[first], counts


@contextmanager
def _threads(torch: Any, n: int | None) -> Iterator[None]:
    """Run with ``n`` torch CPU threads, restoring the previous setting."""
    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
