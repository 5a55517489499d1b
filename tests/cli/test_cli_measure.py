"""--measure (what "smaller" means) and --units (a CSV's units) on the command line."""

from __future__ import annotations

import json

import pytest

import counterfact as cf
from counterfact.cli import main

ROWS = ["--model", "lr", "--method", "nearest", "--rows", "0:40", "-q", "--format", "json"]


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    """German Credit as a user's own CSV (every feature free, so that observed rows answer)."""
    data = cf.datasets.load("german_credit")
    path = tmp_path_factory.mktemp("own") / "credit.csv"
    data.frame.iloc[:400].to_csv(path, index=False)
    return path


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("measure", "moves", "per_change"), [("fewest-changes", 0.01, None), ("range-l1", 1.0, 0.0)]
)
def test_measure_reaches_the_requirements(csv, capsys, measure, moves, per_change):
    out = _json(
        capsys,
        ["explain", "--data", str(csv), "--target", "credit_risk", *ROWS, "--measure", measure],
    )
    costs = out["costs"]["model"]["costs"]
    assert costs["moves"] == moves and costs["per_change"] == per_change
    assert cf.Costs.from_dict(costs).preset_name == measure


def test_measure_own_keeps_each_methods_objective(csv, capsys):
    out = _json(
        capsys,
        ["explain", "--data", str(csv), "--target", "credit_risk", *ROWS, "--measure", "own"],
    )
    assert out["costs"] is None and out["counterfactuals"]


def test_no_measure_is_the_effort(csv, capsys):
    out = _json(capsys, ["explain", "--data", str(csv), "--target", "credit_risk", *ROWS])
    assert cf.Costs.from_dict(out["costs"]["model"]["costs"]).preset_name == "effort"


def test_units_name_a_csvs_numeric_features_in_the_answers(csv, capsys):
    argv = [
        "explain",
        "--data",
        str(csv),
        "--target",
        "credit_risk",
        "--model",
        "lr",
        "--method",
        "nearest",
        "--rows",
        "0:40",
        "-q",
    ]
    assert main([*argv, "--units", "credit_amount=EUR,duration_months=mo"]) == 0
    text = capsys.readouterr().out
    assert " EUR" in text or " mo" in text
    assert main(argv) == 0
    assert " EUR" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("units", "message"),
    [
        ("credit_amount", "not FEATURE=UNIT"),
        ("purpose=x", "categorical"),
        ("nope=x", "Unknown feature 'nope'"),
    ],
)
def test_bad_units_are_one_clear_error(csv, capsys, units, message):
    argv = ["explain", "--data", str(csv), "--target", "credit_risk", "--units", units]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("counterfact: error: --units") and message in err


def test_an_unknown_measure_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["explain", "--measure", "cheapest"])
    assert exc.value.code == 2 and "fewest-changes" in capsys.readouterr().err
