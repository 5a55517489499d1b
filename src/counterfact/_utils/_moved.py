"""Deprecation aliases for module paths that moved.

``import counterfact.select`` keeps working after ``select`` moved into
:mod:`counterfact.models`: a finder placed first on :data:`sys.meta_path` answers
for the old names only, warns once per import with a :class:`DeprecationWarning`
that names the new place, and hands back the module at the new place (or, for a
module whose contents were split, a read-only view whose attributes come from
each new place in turn).  No file is left at the old path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MovedModules", "install"]


class _SplitModule(types.ModuleType):
    """A module whose names come from several modules, looked up in order."""

    def __init__(self, name: str, sources: Sequence[str]) -> None:
        super().__init__(name)
        self.__sources = tuple(sources)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for source in self.__sources:
            module = importlib.import_module(source)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for source in self.__sources:
            names.update(n for n in dir(importlib.import_module(source)) if not n.startswith("__"))
        return sorted(names)


def _caller_stacklevel() -> int:
    """The stack level of the first frame outside the import machinery and this module."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<frozen importlib") or name == __file__):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 1


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finder and loader of the old module names in ``table``.

    ``table`` maps an old dotted name to ``(hint, source, ...)``: what to import
    instead (shown in the warning), then the module(s) now holding its names.
    """

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table: dict[str, tuple[str, ...]] = {}
        self.update(table)

    def update(self, table: Mapping[str, Sequence[str]]) -> None:
        """Add aliases; an alias whose new place is itself (or another alias) is refused."""
        for old, (hint, *sources) in table.items():
            moved = [s for s in sources if s == old or s in table or s in self.table]
            if moved:
                raise ValueError(f"the alias {old!r} points to {moved}, which are aliases themselves")
            self.table[old] = (hint, *sources)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.table:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        _hint, *sources = self.table[spec.name]
        return _SplitModule(spec.name, sources)

    def exec_module(self, module: types.ModuleType) -> None:
        hint, *sources = self.table[module.__name__]
        warnings.warn(
            f"{module.__name__} is deprecated and will be removed; {hint}.",
            DeprecationWarning,
            stacklevel=_caller_stacklevel(),
        )
        if len(sources) == 1:  # the import statement returns what sys.modules holds now
            sys.modules[module.__name__] = importlib.import_module(sources[0])


def install(table: Mapping[str, Sequence[str]]) -> MovedModules:
    """Put a :class:`MovedModules` finder for ``table`` first on :data:`sys.meta_path` (once)."""
    for finder in sys.meta_path:
        if isinstance(finder, MovedModules):
            finder.update(table)
            return finder
    finder = MovedModules(table)
    sys.meta_path.insert(0, finder)
    return finder
