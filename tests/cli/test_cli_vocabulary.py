"""The command line's words match the API's: --method from the registry (with its default),
--solver for a method's solver parameter, --parallel for where an audit's chunks run."""

from __future__ import annotations

import json

import pytest

import counterfact as cf
from counterfact.cli import build_parser, main


def _choices(command: str, option: str) -> list[str] | None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    action = next(a for a in sub.choices[command]._actions if option in a.option_strings)
    return action.choices


def test_the_method_choices_are_the_registrys():
    # every method 'counterfact methods' lists; a peer whose package is missing is refused
    # with its install command when chosen (tests/cli/test_cli_flags.py)
    listed = cf.methods.names(available=False, peers=True)
    assert _choices("explain", "--method") == listed
    assert _choices("audit", "--method") == listed
    assert _choices("demo", "--method") == cf.methods.names()


def test_the_help_names_the_registrys_default(capsys):
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default: {cf.methods.default_method()})" in text


def test_solver_sets_the_methods_solver_parameter(capsys):
    args = ["explain", "--model", "lr", "--method", "ceocl", "--rows", "0:6", "-q"]
    assert main([*args, "--solver", "highs", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "ceocl"
    assert main([*args, "--solver", "no_such_solver"]) == 2
    assert "solver" in capsys.readouterr().err


def test_solver_on_a_method_without_a_choice_names_those_with_one(capsys):
    args = ["explain", "--model", "lr", "--method", "nearest", "--solver", "highs"]
    assert main([*args, "--rows", "0:1"]) == 2
    err = capsys.readouterr().err
    with_solver = [
        n
        for n in cf.methods.names(peers=True)
        if "solver" in cf.methods.get_class(n)._param_names()
    ]
    assert "has no choice of solver" in err and str(with_solver) in err


def test_audit_runs_its_chunks_where_parallel_says(tmp_path, capsys):
    base = ["audit", "--model", "lr", "--method", "nearest", "--max-rows", "20"]
    base += ["--n-bootstrap", "20", "--no-html", "-q"]
    assert main([*base, "--parallel", "loky", "--out", str(tmp_path / "a")]) == 0
    assert "recourse_rate" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main([*base, "--backend", "loky", "--out", str(tmp_path / "b")])
    assert exc.value.code == 2
    assert "--backend" in capsys.readouterr().err


def test_audit_address_needs_a_cluster_backend(tmp_path, capsys):
    argv = ["audit", "--model", "lr", "--method", "nearest", "--max-rows", "5", "--no-html"]
    argv += ["--address", "127.0.0.1:6379", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "--address names a cluster: pass --parallel dask" in capsys.readouterr().err


@pytest.mark.slow
def test_audit_runs_on_the_ray_cluster_at_its_address(ray_cluster, tmp_path, capsys, monkeypatch):
    import ray

    joined: list = []
    init = ray.init
    monkeypatch.setattr(ray, "init", lambda **kw: (joined.append(kw.get("address")), init(**kw))[1])
    argv = ["audit", "--model", "lr", "--method", "nearest", "--max-rows", "30"]
    argv += ["--n-bootstrap", "20", "--no-html", "-q", "--chunk-size", "10"]
    argv += ["--parallel", "ray", "--address", ray_cluster, "--out", str(tmp_path)]
    assert main(argv) == 0
    assert "recourse_rate" in capsys.readouterr().out
    assert list((tmp_path / "chunks").rglob("chunk-*.json"))  # written by the Ray tasks
    assert joined == [ray_cluster]
