"""Standard output carries only the requested output: `--format json|csv` parses for every method.

Solvers and C libraries write to file descriptor 1 (HiGHS prints a banner); the
command line sends descriptor 1 to standard error while a method runs, so the
captures below are taken at the descriptor level (``capfd``) and, for the
solver-backed methods, in a real subprocess.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main

#: tiny parameters: German Credit test rows 0-2 on a logistic regression (one of them is rejected)
PARAMS: dict[str, list[str]] = {
    "nearest": [],
    "mace": ["--param", "rel_gap=0.01"],
    "ceocl": [],
    "ufce": ["--param", "variant=1", "--param", "n_neighbors=10", "--param", "n_grid=8"],
    "mdpso": ["--param", "swarm={n_particles: 16, max_iter: 20, patience: 5}"],
    "l2c": [
        "--param",
        "training={max_epochs: 3}",
        "--param",
        "n_samples=20",
        "--param",
        "device=cpu",
    ],
}
NEEDS = {"mace": "z3", "ceocl": "highspy", "l2c": "torch"}


def _argv(method: str, fmt: str) -> list[str]:
    return [
        "explain",
        "--dataset",
        "german_credit",
        "--model",
        "lr",
        "--method",
        method,
        "--rows",
        "0:3",
        "--time-limit",
        "20",
        "--format",
        fmt,
        *PARAMS[method],
    ]


def _skip_missing(method: str) -> None:
    if method in NEEDS:
        pytest.importorskip(NEEDS[method])


@pytest.mark.parametrize("method", list(PARAMS))
def test_json_and_csv_parse_for_every_method(method, capfd):
    _skip_missing(method)
    assert main(_argv(method, "json")) == 0
    out = capfd.readouterr().out
    parsed = json.loads(out)
    r = cf.CounterfactualResult.from_json(out)
    assert len(r) >= 1 and isinstance(parsed, dict)
    assert main(_argv(method, "csv")) == 0
    out = capfd.readouterr().out
    frame = pd.read_csv(io.StringIO(out))
    assert len(frame.columns) > 5 and "credit_amount" in frame.columns


@pytest.mark.parametrize("method", ["ceocl"])
def test_solver_output_stays_off_stdout_in_a_real_process(method):
    _skip_missing(method)
    proc = subprocess.run(
        [sys.executable, "-m", "counterfact.cli", *_argv(method, "json"), "-v"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = cf.CounterfactualResult.from_json(proc.stdout)
    json.loads(proc.stdout)
    assert len(r) >= 1
    assert "counterfact:" in proc.stderr  # the status lines went to stderr


def test_c_level_writes_during_a_command_go_to_stderr(capfd, monkeypatch):
    """A library writing straight to descriptor 1 (as HiGHS does) cannot spoil the output."""
    import os

    from counterfact.cli import _output

    def noisy(*args, **kwargs):
        os.write(1, b"Running NoisySolver 1.0 banner\n")
        print("a Python print from inside the method")
        return real(*args, **kwargs)

    real = cf.methods.get_class("nearest").explain
    monkeypatch.setattr(cf.methods.get_class("nearest"), "explain", noisy)
    assert main(_argv("nearest", "json")) == 0
    captured = capfd.readouterr()
    json.loads(captured.out)
    assert "NoisySolver" in captured.err and "a Python print" in captured.err
    assert "NoisySolver" not in captured.out
    assert _output is not None
