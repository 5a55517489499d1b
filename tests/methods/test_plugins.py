"""Methods of other packages, through the entry-point group ``counterfact.methods``.

The package in ``examples/third_party_method`` is made visible as an installed
distribution without building it: its source folder on the path plus a
``.dist-info`` folder whose ``entry_points.txt`` is generated from the example's own
``pyproject.toml`` (what pip would write).  It is then listed by ``counterfact
methods``, offered by ``counterfact explain --method`` and passes the conformance
checks; a package whose entry point is broken is reported and left out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.methods import _registry
from counterfact.testing import check_method
from counterfact.testing._conformance import conformance_checks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "third_party_method"


def fake_distribution(where: Path, name: str, entry_points: dict[str, str]) -> Path:
    """A ``.dist-info`` folder in ``where`` declaring ``entry_points`` in our group."""
    info = where / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    lines = [f"[{_registry.GROUP}]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return where


def example_entry_points() -> dict[str, str]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    return project["entry-points"][_registry.GROUP]


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry discovered again from the entry points (and restored afterwards)."""
    monkeypatch.setattr(_registry, "_REGISTRY", {})
    monkeypatch.setattr(_registry, "_PLUGINS", {})
    monkeypatch.setattr(_registry, "_discovered", False)
    return monkeypatch


@pytest.fixture
def example_installed(tmp_path, fresh_registry):
    site = fake_distribution(tmp_path / "site", "counterfact-greedy", example_entry_points())
    fresh_registry.syspath_prepend(str(site))
    fresh_registry.syspath_prepend(str(EXAMPLE / "src"))
    return site


def test_the_example_declares_its_method_as_an_entry_point():
    assert example_entry_points() == {"greedy": "counterfact_greedy:GreedySearch"}


def test_an_installed_method_is_listed_offered_and_conformant(example_installed, capsys):
    assert "greedy" in cf.methods.names()
    cls = cf.methods.get_class("greedy")
    assert cls.__module__.startswith("counterfact_greedy")
    assert "GreedySearch" not in _registry.builtin_classes()  # not one of cf.<Class>
    assert main(["methods"]) == 0
    assert "greedy search" in capsys.readouterr().out
    assert main(["methods", "--markdown"]) == 0
    row = capsys.readouterr().out.splitlines()[-1]
    assert row.startswith("| `counterfact_greedy.GreedySearch` | `greedy` |")
    assert row.endswith("| `pip install counterfact-greedy` |")
    args = ["explain", "--method", "greedy", "--model", "lr", "--rows", "0:2"]
    assert main([*args, "--format", "json", "-q"]) == 0
    assert '"method": "greedy"' in capsys.readouterr().out
    assert [c.__name__ for c in conformance_checks()] == check_method(cls)


def test_the_command_line_of_a_fresh_interpreter_lists_it(tmp_path):
    site = fake_distribution(tmp_path / "site", "counterfact-greedy", example_entry_points())
    paths = [str(site), str(EXAMPLE / "src"), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    proc = subprocess.run(
        [sys.executable, "-m", "counterfact.cli", "methods"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "greedy" in proc.stdout and "mace" in proc.stdout


def test_a_broken_plugin_is_reported_and_left_out(tmp_path, fresh_registry):
    site = fake_distribution(
        tmp_path / "site",
        "counterfact-broken",
        {
            "broken": "no_such_module_for_counterfact:Thing",
            "no_colon": "counterfact_greedy.GreedySearch",
            "mace": "counterfact_greedy:GreedySearch",
        },
    )
    fresh_registry.syspath_prepend(str(site))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = cf.methods.names()
    text = "\n".join(str(w.message) for w in caught)
    assert "'broken' of counterfact-broken" in text and "no_such_module_for_counterfact" in text
    assert "'no_colon'" in text and "'mace'" in text and "taken" in text
    assert "broken" not in found and "no_colon" not in found
    assert cf.methods.get_class("mace") is cf.MACE  # the library's own name wins


def test_a_broken_plugin_does_not_break_the_import(tmp_path):
    site = fake_distribution(
        tmp_path / "site", "counterfact-broken", {"broken": "no_such_module_for_counterfact:X"}
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT / "src")])}
    code = "import counterfact as cf; print(cf.MACE.__name__, cf.methods.names())"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("MACE ['mace'")
    assert "'broken' of counterfact-broken" in proc.stderr


def test_a_source_checkout_reads_its_own_pyproject():
    """The library's own methods come from the checkout's pyproject.toml (no reinstall
    needed after adding one), the same list the installed metadata holds."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    own = declared["project"]["entry-points"][_registry.GROUP]
    assert own["mace"] == "counterfact.methods.mace:MACE"
    assert set(own) == set(_registry.builtin_classes().values())
    checkout = _registry._checkout_entry_points()  # None when installed (not editable)
    assert checkout is None or checkout == own
