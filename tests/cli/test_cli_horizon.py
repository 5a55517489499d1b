"""--horizon N: a bundled dataset's default timeline with horizon N; a CSV's, the horizon alone."""

from __future__ import annotations

import json

import pytest

import counterfact as cf
from counterfact.cli import main

ROWS = ["--model", "lr", "--method", "nearest", "--rows", "0:3", "-q", "--format", "json"]


def _constraints(capsys: pytest.CaptureFixture, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["constraints"]


def test_bundled_dataset_uses_its_default_timeline(capsys: pytest.CaptureFixture) -> None:
    got = _constraints(capsys, ["explain", "--dataset", "german_credit", *ROWS, "--horizon", "6"])
    timeline = cf.Timeline.from_dict(got["timeline"])
    assert timeline == cf.datasets.timeline("german_credit", horizon=6)
    assert timeline.wait_cost == pytest.approx(1 / 24) and "savings" in timeline.rates


def test_own_csv_takes_the_horizon_alone(capsys: pytest.CaptureFixture, tmp_path) -> None:
    path = tmp_path / "credit.csv"
    cf.datasets.load("german_credit").frame.iloc[:300].to_csv(path, index=False)
    argv = ["explain", "--data", str(path), "--target", "credit_risk", *ROWS, "--horizon", "6"]
    assert cf.Timeline.from_dict(_constraints(capsys, argv)["timeline"]) == cf.Timeline(6)


@pytest.mark.parametrize("months", ["-3", "601"])
def test_a_horizon_out_of_range_is_refused_in_the_command_lines_words(capsys, months) -> None:
    argv = ["explain", "--dataset", "german_credit", "--model", "lr", "--method", "nearest"]
    assert main([*argv, "--rows", "0:1", "--horizon", months]) == 2
    err = capsys.readouterr().err
    assert "--horizon must be a whole number of months from 0 to 600" in err and months in err
    assert "Timeline.horizon" not in err


def test_a_horizon_on_data_that_nothing_moves_says_waiting_helps_no_answer(capsys) -> None:
    argv = ["explain", "--dataset", "wine_quality_red", "--model", "lr", "--method", "nearest"]
    assert main([*argv, "--rows", "0:1", "--horizon", "12"]) == 0
    err = capsys.readouterr().err
    assert "counterfact: warning: The timeline's horizon of 12 months helps no answer" in err
    assert "UserWarning" not in err and err.count("helps no answer") == 1
    argv = ["explain", "--dataset", "german_credit", "--model", "lr", "--method", "nearest"]
    assert main([*argv, "--rows", "0:3", "--horizon", "12"]) == 0
    err = capsys.readouterr().err
    assert "fitted a 'lr' model" in err and "helps no answer" not in err
