"""Where L2C trains: ``device="auto"`` picks CUDA only where it was measured faster.

G and S are two-layer networks of 50 units.  A training step on a GPU is
bound by the latency of launching its kernels, not by arithmetic, so CUDA pays
only when each step carries a large batch and never leaves the device.
Measured on one machine with an H200 GPU and 16 cores (same script, fit times):

* batch 64: German Credit MLP 2.97 s on CUDA against 1.42 s on the CPU; Adult
  MLP 36.7 s against 26.3 s; Adult forest 55.8 s against 45.9 s;
* Adult MLP, 5 epochs: batch 1024 instead of 64 cut the seconds per epoch 2.4x
  on the CPU (2.56 -> 1.08) and 4x on CUDA (3.85 -> 0.96), where CUDA first
  edges out the CPU (1.1x).

Hence the rule: CUDA when it is available, the gradient is pathwise (the whole
step runs on the device; the score-function estimator asks the model, on the
host, about every sample of every step) and the batch holds at least
:data:`CUDA_MIN_BATCH` rows.  Otherwise the CPU.  Inference draws in one
batched pass and is not worth a transfer: a generator loaded without training
runs on the CPU under ``"auto"``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CUDA_MIN_BATCH", "pick_device"]

#: the smallest training batch at which ``device="auto"`` uses CUDA (see the module docstring)
CUDA_MIN_BATCH = 1024


def pick_device(torch: Any, requested: str, *, pathwise: bool = False, batch_size: int = 0) -> Any:
    """The ``torch.device`` L2C trains and samples on.

    ``requested``: the ``device`` parameter (``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"cuda:1"``...); an explicit device is used as given.  ``"auto"``: CUDA
    only when it is available, ``pathwise`` and ``batch_size >= CUDA_MIN_BATCH``.
    """
    if requested != "auto":
        return torch.device(requested)
    if pathwise and batch_size >= CUDA_MIN_BATCH and torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
