"""Where L2C trains: ``device="auto"`` picks CUDA only where it was measured faster.

G and S are two-layer networks of 50 units.  A training step on a GPU is
bound by the latency of launching its kernels, not by arithmetic, so CUDA pays
only when each step carries a large batch.  Measured on one machine with an
H200 GPU and 16 cores, the same script on both devices
(``benchmarks/l2c_device.py``; seconds per epoch, CUDA / CPU at L2C's default
``torch_threads=1``):

* batch 64: German Credit MLP 2.9x (CUDA slower), Adult MLP 1.75x (slower);
* batch 1024: German Credit MLP 0.76x, Adult MLP 0.44x, Adult forest 0.46x
  (the score-function gradient, which asks the forest on the host about every
  sample of every step, gains as much as the pathwise one);
* against 8 CPU threads at batch 1024: Adult MLP 0.57x, Adult forest 0.86x.

Hence the rule: CUDA when it is available and the training batch holds at
least :data:`CUDA_MIN_BATCH` rows (``batch_size="auto"`` reaches it on about
23,000 training rows and more); otherwise the CPU.  Inference draws in one
batched pass and is not worth a transfer (explain times per row were the same
on both devices): a generator loaded without training runs on the CPU under
``"auto"``.
"""

from __future__ import annotations

from typing import Any

from ..._utils._deps import torch_device

__all__ = ["CUDA_MIN_BATCH", "pick_device"]

#: the smallest training batch at which ``device="auto"`` uses CUDA (see the module docstring)
CUDA_MIN_BATCH = 1024


def pick_device(torch: Any, requested: str, *, batch_size: int = 0) -> Any:
    """The ``torch.device`` L2C trains and samples on.

    ``requested``: the ``device`` parameter (``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"cuda:1"``...); an explicit device is used as given, and one this torch cannot reach
    is a :class:`~counterfact.exceptions.ValidationError`.  ``"auto"``: CUDA
    only when it is available and ``batch_size >= CUDA_MIN_BATCH`` (0: no
    training, the CPU).
    """
    if requested != "auto":
        return torch_device(torch, requested, "L2C")
    if batch_size >= CUDA_MIN_BATCH and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
