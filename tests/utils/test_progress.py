"""Progress, one rule for every method: under ``verbose=1`` a bar over the queries and a
closing summary line go to standard error; standard output stays empty."""

from __future__ import annotations

import importlib.util

import pytest

import counterfact as cf
from counterfact.testing import make_setting
from counterfact.testing._fast import fast_method

_NEEDS = {"mace": "z3", "ceocl": "highspy", "l2c": "torch"}


@pytest.fixture(scope="module")
def setting():
    return make_setting("lr", n_queries=6)


@pytest.mark.parametrize("name", cf.methods.names())
def test_verbose_progress_on_stderr_only(name, setting, capfd):
    if name in _NEEDS and importlib.util.find_spec(_NEEDS[name]) is None:
        pytest.skip(f"{_NEEDS[name]} is not installed")
    method = fast_method(name, verbose=1).fit(setting.model, setting.train)
    capfd.readouterr()  # training output (epoch bars) is not what is checked here
    X = setting.queries
    r = method.explain(X)
    out, err = capfd.readouterr()
    assert out == "", f"{name} wrote to stdout: {out[:300]!r}"
    todo = (
        int((r.diagnostics["reason"] != "query already predicted as target").sum())
        if "reason" in r.diagnostics
        else len(X)
    )
    if todo:
        assert f"{todo}/{todo}" in err, (
            f"{name}: no progress bar over the {todo} queries on stderr: {err[-500:]!r}"
        )
    assert "queries got" in err.splitlines()[-1], f"{name}: no closing summary line: {err[-300:]!r}"


def test_silent_without_verbose(setting, capfd):
    method = fast_method("nearest").fit(setting.model, setting.train)
    capfd.readouterr()
    method.explain(setting.queries)
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # stderr is not a terminal under pytest


def test_chunked_progress_and_summary(setting, capfd):
    from counterfact.methods._pipeline._batch import explain_in_chunks

    method = fast_method("mdpso", verbose=1).fit(setting.model, setting.train)
    capfd.readouterr()
    rep = explain_in_chunks(method, setting.queries, chunk_size=2)
    out, err = capfd.readouterr()
    assert out == "" and not rep.failed
    assert f"{len(setting.queries)}/{len(setting.queries)}" in err
    assert "queries got" in err.splitlines()[-1]
