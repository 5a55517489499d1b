"""The package's structure, read from its source with ``ast`` (see ``tests/architecture.py``).

These fail on a change that brings back what the layout removed: an import
circle (imports inside functions and under ``TYPE_CHECKING`` included), an
import that points up the layers, a function over 60 lines, a source line over
100 characters, a package module in the package root beside ``exceptions``, a
method's name as a literal outside ``methods/``, and a pipeline module reading an
attribute of a method that the pipeline's protocol does not declare.
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


def test_no_function_over_60_lines():
    longs = arch.long_functions()
    assert not longs, f"functions over {arch.MAX_FUNCTION_LINES} lines:\n" + "\n".join(
        f"{n:4d} {where}" for where, n in longs
    )


def test_the_root_holds_only_the_facade_and_the_exceptions():
    assert arch.root_modules() == ["exceptions"]


def test_no_source_line_over_100_characters():
    longs = arch.long_lines()
    assert not longs, f"source lines over {arch.MAX_LINE_CHARS} characters:\n" + "\n".join(longs)


#: where a method's name may appear as a literal outside methods/: the datasets' variants
#: are named after the paper that used them (``variant="mace"``), not after our classes
NAME_LITERALS_ALLOWED = ("counterfact/datasets/",)


def test_no_method_name_literal_outside_methods():
    """A method's name as a string literal outside methods/ is a table of method facts or
    a hard-coded choice waiting to drift: facts are tags, the default method and the
    list of names come from the registry (``counterfact.methods``)."""
    names = sorted(set(arch.METHOD_NAMES) | set(_registered_names()))
    literals = arch.name_literals(names)
    found = [lit for lit in literals if not lit.startswith(NAME_LITERALS_ALLOWED)]
    assert not found, "method-name literals outside methods/:\n" + "\n".join(found)


def _registered_names() -> list[str]:
    from counterfact.methods import names

    return names(available=False, peers=True)


def test_the_pipeline_reads_only_the_protocol():
    """Every attribute the pipeline reads from a method is declared in its protocol."""
    from counterfact.methods._pipeline._protocol import PIPELINE_READS

    pipeline = arch.SRC / arch.PACKAGE / "methods" / "_pipeline"
    reads = arch.attribute_reads(pipeline)
    stray = [f"{where} {attr}" for where, attr in reads if attr not in PIPELINE_READS]
    assert not stray, "method attributes the pipeline reads outside its protocol:\n" + (
        "\n".join(stray)
    )


def test_the_attribute_scan_sees_every_form(tmp_path):
    (tmp_path / "m.py").write_text(
        "def f(method):\n"
        "    a = method.model_\n"
        "    b = getattr(method, 'trust_region', None)\n"
        "    return type(method).tags, hasattr(method, 'norm')\n"
    )
    found = sorted(a for _, a in arch.attribute_reads(tmp_path))
    assert found == ["model_", "norm", "tags", "trust_region"]


def test_the_analysis_sees_a_circle_hidden_in_a_function(tmp_path):
    """The checker itself: a module importing its importer inside a function is a circle."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text(
        "def f():\n    from .a import x\n    return x\n\n\n" + "def g():\n" + "    y = 1\n" * 61
    )
    graph = arch.import_graph(tmp_path, "pkg")
    assert arch.circles(graph) == [["pkg.a", "pkg.b"]]
    assert [n for _, n in arch.long_functions(tmp_path, "pkg")] == [62]


def test_the_package_imports_nothing_deprecated():
    """Every module of the package imports without a deprecation warning of ours."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=DeprecationWarning, message=r"counterfact\.")
        for name in sorted(arch.modules()):
            if not name.endswith(".__main__"):  # runs the command line
                importlib.import_module(name)
