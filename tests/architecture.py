"""Static facts about the package's structure, read with :mod:`ast`.

Used by ``tests/test_architecture.py`` and runnable on its own to print the figures::

    python tests/architecture.py            # modules, circles, long functions, name literals
    python tests/architecture.py --circles  # every import circle, module by module

An *import edge* is any ``import`` / ``from ... import`` statement of one package module
naming another, wherever it stands (module level, inside a function, under
``TYPE_CHECKING``): a circle hidden in a function is still a circle. ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``).
Importing ``a.b.c`` is not counted as importing ``a`` and ``a.b``: a package's ``__init__``
re-exporting its private modules is the layout the package follows, not a circle.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "counterfact"

#: long functions: the house limit (from ``def`` to the last line, docstring included)
MAX_FUNCTION_LINES = 60
#: long lines: the house limit (ruff's E501 at the same length)
MAX_LINE_CHARS = 100


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def modules(src: Path = SRC, package: str = PACKAGE) -> dict[str, Module]:
    """Every module of the package: dotted name -> Module."""
    out: dict[str, Module] = {}
    root = src / package
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        out[name] = Module(name, path, is_package)
    return out


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: Module, known: dict[str, Module]) -> set[str]:
    """The package modules ``module`` imports, anywhere in its body."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    out.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    out.add(sub)
                elif target in known:
                    out.add(target)
        elif isinstance(node, ast.Call) and _is_import_module(node):
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value in known:
                out.add(arg.value)
    out.discard(module.name)
    return out


def _is_import_module(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "import_module"


def import_graph(src: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    known = modules(src, package)
    return {name: imports_of(mod, known) for name, mod in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def long_functions(
    src: Path = SRC, package: str = PACKAGE, limit: int = MAX_FUNCTION_LINES
) -> list[tuple[str, int]]:
    """``(path:line name, length)`` of every function or method longer than ``limit`` lines."""
    out = []
    for mod in modules(src, package).values():
        tree = ast.parse(mod.path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    rel = mod.path.relative_to(src)
                    out.append((f"{rel}:{node.lineno} {node.name}", length))
    return sorted(out)


def function_imports(src: Path = SRC, package: str = PACKAGE) -> int:
    """Import statements of package modules placed inside functions."""
    known = modules(src, package)
    count = 0
    for mod in known.values():
        tree = ast.parse(mod.path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (
                    node.level > 0 or (node.module or "").startswith(package)
                ):
                    count += 1
                elif isinstance(node, ast.Import) and any(
                    a.name.startswith(package) for a in node.names
                ):
                    count += 1
    return count


def name_literals(
    names: list[str],
    src: Path = SRC,
    package: str = PACKAGE,
    allowed: tuple[str, ...] = ("methods",),
) -> list[str]:
    """``path:line 'name'`` for each string literal equal to a method name outside ``allowed``
    subpackages (docstrings excluded)."""
    wanted = set(names)
    out = []
    for mod in modules(src, package).values():
        parts = mod.name.split(".")
        if len(parts) > 1 and parts[1] in allowed:
            continue
        tree = ast.parse(mod.path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in wanted
                and id(node) not in docstrings
            ):
                out.append(f"{mod.path.relative_to(src)}:{node.lineno} {node.value!r}")
    return sorted(out)


def long_lines(src: Path = SRC, package: str = PACKAGE, limit: int = MAX_LINE_CHARS) -> list[str]:
    """``path:line (n chars)`` of every source line longer than ``limit`` characters."""
    out = []
    for mod in modules(src, package).values():
        for i, line in enumerate(mod.path.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > limit:
                out.append(f"{mod.path.relative_to(src)}:{i} ({len(line)} chars)")
    return sorted(out)


def attribute_reads(folder: Path, names: tuple[str, ...] = ("method",)) -> list[tuple[str, str]]:
    """``(path:line, attribute)`` for each ``method.<attr>``, ``getattr(method, "<attr>")``,
    ``hasattr(method, "<attr>")`` and ``type(method).<attr>`` in the modules of ``folder``."""
    out = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            attr = _read_attribute(node, names)
            if attr is not None:
                out.append((f"{path.name}:{node.lineno}", attr))
    return out


def _is_name(node: ast.AST, names: tuple[str, ...]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return (  # type(method)
        isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "type"
        and len(node.args) == 1
        and _is_name(node.args[0], names)
    )


def _read_attribute(node: ast.AST, names: tuple[str, ...]) -> str | None:
    if isinstance(node, ast.Attribute) and _is_name(node.value, names):
        return node.attr
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", "") in ("getattr", "hasattr", "setattr")
        and len(node.args) >= 2
        and _is_name(node.args[0], names)
    ):
        arg = node.args[1]
        return arg.value if isinstance(arg, ast.Constant) else "<computed>"
    return None


def root_modules(src: Path = SRC, package: str = PACKAGE) -> list[str]:
    """Plain modules (not subpackages) directly in the package root, ``__init__`` excluded."""
    return sorted(p.stem for p in (src / package).glob("*.py") if p.stem != "__init__")


def lines_of_code(src: Path = SRC, package: str = PACKAGE) -> int:
    return sum(
        len(p.read_text(encoding="utf-8").splitlines()) for p in (src / package).rglob("*.py")
    )


METHOD_NAMES = ["nearest", "mace", "ceocl", "ufce", "mdpso", "l2c", "dice"]


def main(argv: list[str]) -> int:
    graph = import_graph()
    found = circles(graph)
    print(f"modules in the package root : {len(root_modules())}")
    print(f"modules in all              : {len(graph)}")
    print(f"import circles              : {len(found)}")
    print(f"imports inside functions    : {function_imports()}")
    longs = long_functions()
    print(f"functions over {MAX_FUNCTION_LINES} lines     : {len(longs)}")
    print(f"lines over {MAX_LINE_CHARS} characters  : {len(long_lines())}")
    lits = name_literals(METHOD_NAMES)
    print(f"method-name literals outside methods/: {len(lits)}")
    reads = {a for _, a in attribute_reads(SRC / PACKAGE / "methods" / "_pipeline")}
    print(f"method attributes the pipeline reads: {len(reads)}")
    print(f"lines of code               : {lines_of_code()}")
    if "--circles" in argv:
        for comp in found:
            print(f"  circle of {len(comp)}: {', '.join(comp)}")
    if "--long" in argv:
        for where, n in longs:
            print(f"  {n:4d}  {where}")
    if "--literals" in argv:
        for lit in lits:
            print(f"  {lit}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
