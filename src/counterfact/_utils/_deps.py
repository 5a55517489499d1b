"""Lazy imports of optional dependencies with an install hint.

Which ``counterfact[extra]`` brings a package is read from the installed
package's own metadata (its ``pyproject.toml`` extras), so the hint never drifts
from what ``pip install`` actually does.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import re
from types import ModuleType
from typing import Any

from ..exceptions import MissingDependencyError, ValidationError

__all__ = ["import_optional", "install_hint", "is_available", "torch_device"]

#: import name -> pip distribution, where they differ
_DISTRIBUTIONS: dict[str, str] = {
    "z3": "z3-solver",
    "dice_ml": "dice-ml",
    "dask": "dask[distributed]",
    "distributed": "dask[distributed]",
    "sklearn": "scikit-learn",
    "interpret": "interpret-core",
}
#: extras that bundle the others (never the hint when a narrower one has the package)
_BUNDLES = frozenset({"all", "test", "dev"})


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()


@functools.lru_cache(maxsize=1)
def _extras() -> dict[str, str]:
    """``{distribution: the first extra that requires it}`` from the installed metadata."""
    out: dict[str, str] = {}
    try:
        requires = importlib.metadata.requires("counterfact") or []
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return out
    for req in requires:
        m = re.match(
            r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?[^;]*;\s*extra\s*==\s*['\"]([^'\"]+)['\"]", req
        )
        if m and m.group(3) not in _BUNDLES:
            out.setdefault(_canonical(m.group(1)), m.group(3))
    return out


def install_hint(name: str) -> str:
    """The pip command that installs the optional module ``name``."""
    dist = _DISTRIBUTIONS.get(name.split(".")[0], name.split(".")[0])
    extra = _extras().get(_canonical(dist), "all")
    return f'pip install "counterfact[{extra}]"  (or: pip install {dist})'


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
        dist = _DISTRIBUTIONS.get(name.split(".")[0], name.split(".")[0])
        what = f"{purpose} needs" if purpose else "This feature needs"
        raise MissingDependencyError(
            f"{what} the optional dependency '{dist}', which is not installed. Install it "
            f"with: {install_hint(name)}"
        ) from exc


def is_available(name: str) -> bool:
    """Whether an optional module can be imported (without raising)."""
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def torch_device(torch: Any, requested: Any, owner: str) -> Any:
    """``torch.device(requested)``, refused with a :class:`ValidationError` naming
    ``owner``'s parameter when it asks for CUDA that this torch cannot reach (a CPU
    build, no GPU, or an index beyond the GPUs present), or for an Apple GPU (mps) it
    cannot reach."""
    try:
        device = torch.device(requested)
    except (RuntimeError, TypeError) as exc:
        raise ValidationError(f"{owner}(device={requested!r}): {exc}") from None
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValidationError(
            f"{owner}(device={requested!r}): this torch cannot reach an Apple GPU (mps) here "
            f"(torch {torch.__version__}). Use device='cpu' (or 'auto')."
        )
    if device.type != "cuda":
        return device
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n == 0 or (device.index is not None and device.index >= n):
        reach = "no CUDA device" if n == 0 else f"{n} CUDA device{'s' if n != 1 else ''}"
        raise ValidationError(
            f"{owner}(device={requested!r}): this torch sees {reach} "
            f"(torch {torch.__version__}). Use device='cpu' (or 'auto'), or install a "
            "CUDA build of torch on a machine with a GPU."
        )
    return device
