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

from ..exceptions import MissingDependencyError

__all__ = ["import_optional", "install_hint", "is_available"]

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
