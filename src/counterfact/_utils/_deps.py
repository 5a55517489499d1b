"""Lazy imports of optional dependencies with an install hint."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..exceptions import MissingDependencyError

#: import name -> (pip distribution, counterfact extra)
_EXTRAS: dict[str, tuple[str, str]] = {
    "z3": ("z3-solver", "mace"),
    "highspy": ("highspy", "mace"),
    "pyscipopt": ("pyscipopt", "ceocl"),
    "torch": ("torch", "l2c"),
    "matplotlib": ("matplotlib", "report"),
    "pyarrow": ("pyarrow", "report"),
    "dask": ("dask[distributed]", "dist"),
    "distributed": ("dask[distributed]", "dist"),
    "ray": ("ray", "dist"),
    "xgboost": ("xgboost", "boost"),
    "lightgbm": ("lightgbm", "boost"),
    "dice_ml": ("dice-ml", "peers"),
    "ortools": ("ortools", "mace"),
    "jinja2": ("jinja2", "report"),
    "fastapi": ("fastapi", "serve"),
    "uvicorn": ("uvicorn", "serve"),
}


def import_optional(name: str, *, purpose: str | None = None) -> ModuleType:
    """Import ``name`` or raise :class:`MissingDependencyError` with the pip line to run.

    Parameters
    ----------
    name : str
        Importable module name (``"z3"``, ``"torch"``, ...).
    purpose : str, optional
        What needs it, used in the message (``"MACE"``).
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        dist, extra = _EXTRAS.get(name.split(".")[0], (name, "all"))
        what = f"{purpose} needs" if purpose else "This feature needs"
        raise MissingDependencyError(
            f"{what} the optional dependency '{dist}', which is not installed. "
            f'Install it with: pip install "counterfact[{extra}]"  (or: pip install {dist})'
        ) from exc


def is_available(name: str) -> bool:
    """Whether an optional module can be imported (without raising)."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True
