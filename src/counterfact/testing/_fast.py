"""Small, fast, seeded parameters for every registered method (tests and quick demos)."""

from __future__ import annotations

from typing import Any

__all__ = ["FAST_PARAMS", "fast_method"]

#: per registered method, parameters that make it fast on a few hundred rows
FAST_PARAMS: dict[str, dict[str, Any]] = {
    "nearest": {},
    "mace": {"norm": "l1", "epsilon": 1e-2, "time_limit": 20.0},
    "ceocl": {"norm": "l1", "time_limit": 20.0, "random_state": 0},
    "ufce": {"n_grid": 8, "n_refine": 1, "n_pairs": 3, "random_state": 0},
    "mdpso": {"n_particles": 16, "max_iter": 30, "patience": 8, "random_state": 0},
    "l2c": {"max_epochs": 8, "learning_rate": 3e-3, "n_samples": 40, "patience": 4, "device": "cpu", "random_state": 0},
    "dice": {"random_state": 0},
}


def fast_method(name: str, **params: Any) -> Any:
    """An unfitted instance of the method registered as ``name`` with fast
    parameters (``params`` override them)."""
    from ..methods import get

    return get(name, **{**FAST_PARAMS.get(name, {}), **params})
