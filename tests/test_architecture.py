"""The package's structure, read from its source with ``ast`` (see ``tests/architecture.py``).

These fail on a change that brings back what the layout removed: an import
circle (imports inside functions and under ``TYPE_CHECKING`` included), an
import that points up the layers, a function over 100 lines, a package module
in the package root beside ``exceptions``, a table of method facts keyed by
method names outside ``methods/`` and ``cli/``.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import architecture as arch

#: the layers, bottom first; a module may import its own layer and the ones below
LAYERS: list[set[str]] = [
    {"exceptions"},
    {"_utils"},
    {"schema"},
    {"data", "constraints"},
    {"datasets"},
    {"models"},
    {"solvers"},
    {"metrics"},
    {"result"},
    {"methods"},
    {"testing", "benchmark", "recourse", "serve"},
    {"report"},
    {"cli"},
    {"<root>"},
]
#: applications of one layer that may use each other
SIBLINGS_OK = {("report", "benchmark")}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "<root>"


def _rank(part: str) -> int:
    for i, layer in enumerate(LAYERS):
        if part in layer:
            return i
    raise AssertionError(
        f"subpackage {part!r} is in no layer of tests/test_architecture.py: place it"
    )


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return arch.import_graph()


def test_no_import_circle(graph):
    found = arch.circles(graph)
    assert not found, "import circles (imports inside functions count):\n" + "\n".join(
        ", ".join(c) for c in found
    )


def test_imports_point_down_the_layers(graph):
    upward = []
    for src, targets in graph.items():
        a = _part(src)
        for dst in targets:
            b = _part(dst)
            if a == b or (a, b) in SIBLINGS_OK:
                continue
            if _rank(b) > _rank(a) or (_rank(b) == _rank(a) and a != b):
                upward.append(f"{src} -> {dst}")
    assert not upward, "imports that point up (or across) the layers:\n" + "\n".join(sorted(upward))


def test_no_function_over_100_lines():
    longs = arch.long_functions()
    assert not longs, "functions over 100 lines:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in longs
    )


def test_the_root_holds_only_the_facade_and_the_exceptions():
    assert arch.root_modules() == ["exceptions"]


def test_no_method_facts_keyed_by_name_outside_methods():
    """Method names as string literals outside methods/ and cli/ are defaults or dataset
    variants named after a paper, never tables of method facts (those are tags)."""
    literals = arch.name_literals(arch.METHOD_NAMES)
    assert len(literals) <= 10, "method-name literals outside methods/ and cli/:\n" + "\n".join(
        literals
    )
    facts = [lit for lit in literals if not lit.startswith("counterfact/datasets/")]
    assert not facts, (
        "method names used as keys outside methods/ and cli/ (declare the fact in tags):\n"
        + "\n".join(facts)
    )


def test_the_analysis_sees_a_circle_hidden_in_a_function(tmp_path):
    """The checker itself: a module importing its importer inside a function is a circle."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text(
        "def f():\n    from .a import x\n    return x\n\n\n" + "def g():\n" + "    y = 1\n" * 101
    )
    graph = arch.import_graph(tmp_path, "pkg")
    assert arch.circles(graph) == [["pkg.a", "pkg.b"]]
    assert [n for _, n in arch.long_functions(tmp_path, "pkg")] == [102]


def test_the_package_imports_nothing_deprecated():
    """Every module of the package imports without a deprecation warning of ours."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=DeprecationWarning, message=r"counterfact\.")
        for name in sorted(arch.modules()):
            if not name.endswith(".__main__"):  # runs the command line
                importlib.import_module(name)
