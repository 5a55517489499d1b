"""The generator G and the selector S, and the relaxed samplers (L2C, Sec. 3.3-3.4, App. A.2).

G and S are 2-layer MLPs (``hidden`` units, ReLU); G's output layer gives one
logit per column of ``z`` (the per-feature categorical perturbation
distribution), S's one logit per feature (the Bernoulli selection
probability ``pi = sigmoid(S(z))``).  Weights are initialised from an explicit
``torch.Generator``; ``nn.Linear``'s own initialisation, which draws from the
global RNG, runs inside ``fork_rng`` so the global state is left as it was.

Blocks of ``z`` have different sizes; the per-feature softmax runs on a
padded ``(batch, N, c_max)`` view built with one gather.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["BlockLayout", "build_mlp", "uniform"]


def uniform(torch: Any, shape: Any, generator: Any, device: Any) -> Any:
    """Uniform noise of ``shape`` on ``device``, drawn from ``generator``: on the
    device itself when the generator lives there (no host-to-device copy per
    training step on CUDA), else drawn on the host and moved."""
    return torch.rand(shape, generator=generator, device=generator.device).to(
        device
    )  # .to: a no-op on its own device


def build_mlp(torch: Any, n_in: int, n_out: int, hidden: int, generator: Any, device: Any) -> Any:
    """``Linear-ReLU-Linear-ReLU-Linear`` initialised like ``nn.Linear`` from ``generator``."""
    nn = torch.nn
    sizes = [(n_in, hidden), (hidden, hidden), (hidden, n_out)]
    layers: list[Any] = []
    for k, (a, b) in enumerate(sizes):
        with torch.random.fork_rng(devices=[]):  # nn.Linear's own init draws from the global RNG
            lin = nn.Linear(a, b)
        bound = 1.0 / math.sqrt(a)
        with torch.no_grad():
            lin.weight.copy_(torch.rand((b, a), generator=generator) * (2 * bound) - bound)
            lin.bias.copy_(torch.rand((b,), generator=generator) * (2 * bound) - bound)
        layers.append(lin)
        if k < len(sizes) - 1:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers).to(device)


class BlockLayout:
    """Index maps between the flat ``z`` (``D`` columns) and the padded
    ``(N, c_max)`` per-feature view, on a device."""

    def __init__(self, torch: Any, starts: np.ndarray, sizes: np.ndarray, device: Any) -> None:
        self.torch = torch
        n = len(sizes)
        self.n_features = n
        self.n_columns = int(sizes.sum())
        self.c_max = int(sizes.max())
        idx = np.full((n, self.c_max), self.n_columns, dtype=np.int64)  # padding -> extra column
        for i, (s, c) in enumerate(zip(starts, sizes, strict=True)):
            idx[i, :c] = np.arange(s, s + c)
        self.valid = torch.as_tensor(idx < self.n_columns, device=device)
        self.gather = torch.as_tensor(idx.reshape(-1), device=device)
        self.flat_valid = torch.as_tensor(
            np.flatnonzero(idx.reshape(-1) < self.n_columns), device=device
        )
        self.column_feature = torch.as_tensor(np.repeat(np.arange(n), sizes), device=device)

    def padded(self, flat: Any, fill: float) -> Any:
        """``(B, D)`` -> ``(B, N, c_max)`` with ``fill`` in the padding."""
        torch = self.torch
        ext = torch.cat(
            [flat, torch.full((flat.shape[0], 1), fill, dtype=flat.dtype, device=flat.device)],
            dim=1,
        )
        return ext[:, self.gather].reshape(flat.shape[0], self.n_features, self.c_max)

    def flat(self, padded: Any) -> Any:
        """Inverse of :meth:`padded` (padding dropped)."""
        return padded.reshape(padded.shape[0], -1)[:, self.flat_valid]

    def expand(self, per_feature: Any) -> Any:
        """``(B, N)`` -> ``(B, D)``: each feature's value on all its columns."""
        return per_feature[:, self.column_feature]


def masked_logits(torch: Any, logits: Any, mask: Any) -> Any:
    """Logits with inadmissible levels at -inf-like (finite, so softmax stays NaN-free)."""
    return logits.masked_fill(~mask, -1e9)


def gumbel_softmax(
    torch: Any, layout: BlockLayout, logits: Any, tau: float, hard: bool, generator: Any
) -> Any:
    """Categorical-concrete sample per feature block (Jang et al. 2016; L2C eq. 4),
    straight-through one-hot when ``hard``."""
    u = uniform(torch, logits.shape, generator, logits.device).clamp(1e-10, 1 - 1e-7)
    g = -torch.log(-torch.log(u))
    y = layout.padded((logits + g) / tau, -1e9)
    soft = torch.softmax(y, dim=-1)
    if hard:
        idx = soft.argmax(dim=-1, keepdim=True)
        one = torch.zeros_like(soft).scatter_(-1, idx, 1.0)
        soft = one - soft.detach() + soft
    return layout.flat(soft)


def binary_concrete(torch: Any, logit: Any, tau: float, hard: bool, generator: Any) -> Any:
    """Binary-concrete (relaxed Bernoulli) sample of ``sigmoid(logit)`` (L2C eq. 5),
    straight-through 0/1 when ``hard``."""
    u = uniform(torch, logit.shape, generator, logit.device).clamp(1e-10, 1 - 1e-10)
    soft = torch.sigmoid((logit + torch.log(u) - torch.log1p(-u)) / tau)
    if hard:
        one = (soft > 0.5).to(soft.dtype)
        soft = one - soft.detach() + soft
    return soft


def block_log_softmax(torch: Any, layout: BlockLayout, logits: Any) -> Any:
    """Per-feature log-probabilities ``(B, N, c_max)`` (padding at -inf-like)."""
    return torch.log_softmax(layout.padded(logits, -1e9), dim=-1)
