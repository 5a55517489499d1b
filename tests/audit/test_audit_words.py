"""What an audit and a timeline say in words, checked from the outside: a bad answer count is
refused before any work, sentences agree in number, a timeline is described for people, a
single pair has no bootstrap interval, and a timed audit refused by global recourse says
the timeline is why."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.exceptions import ConstraintError, ValidationError
from counterfact.recourse import AuditResult
from counterfact.recourse._global._text import _ratio_interval
from counterfact.recourse._report import _constraints_text
from counterfact.recourse._stats import bootstrap_ci


@pytest.fixture(scope="module")
def rejected(credit_mace):
    _, test, model, mace = credit_mace
    return mace, test.X[model.predict(test.X) == 0].iloc[:6]


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_a_bad_answer_count_is_refused_before_any_row_is_explained(rejected, n):
    mace, X = rejected
    with pytest.raises(ValidationError, match="n_counterfactuals must be an int >= 1"):
        cf.audit(mace, X, n_counterfactuals=n)


def _said(outcomes: list[str], reached: list[bool]) -> str:
    audit = AuditResult.__new__(AuditResult)  # the sentence reads the per-row table only
    audit.per_row = pd.DataFrame({"outcome": outcomes, "robustness_reached": reached})
    return audit._short_words()


def test_the_robustness_sentence_agrees_in_number():
    assert _said(["recourse"], [True]) == (
        " Of the 1 row with recourse, it is said to reach it (per row: robustness_reached, "
        "robustness_estimate)."
    )
    assert " Of the 3 rows with recourse, all 3 are said to reach it" in _said(
        ["recourse"] * 3, [True] * 3
    )
    two = _said(["recourse", "recourse"], [True, False])
    assert two.startswith(" Of the 2 rows with recourse, 1 is said to reach it; the other one ")
    assert _said(["proven_none"], [False]) == ""
    assert "the other 0" not in _said(["recourse"], [True])


def test_a_timeline_is_described_for_people():
    timeline = cf.datasets.timeline("german_credit", horizon=12)
    text = _constraints_text({"timeline": timeline.to_dict(), "immutable": ["foreign_worker"]})
    assert "within 12 months" in text and "a month of waiting costs" in text
    assert "0.1666666" not in text and "{" not in text
    assert cf.Timeline(horizon=0, rates={"savings": 1 / 6}).words() == (
        "today only: no waiting; savings cannot change (paced by time)"
    )
    assert cf.Timeline(horizon=0).words() == "today only: no waiting"


@pytest.mark.parametrize("value", ["12", True, [12]])
def test_a_timeline_that_is_not_one_is_refused_with_what_a_timeline_is(value):
    with pytest.raises(ConstraintError, match=r"a whole number of months .the horizon., or a "):
        cf.Constraints(timeline=value)


def test_a_horizon_given_as_text_is_refused_as_in_constraints():
    with pytest.raises(ConstraintError, match=r"whole number of months\. Got '12'"):
        cf.Timeline(horizon="12")


def test_one_pair_has_no_bootstrap_interval():
    rng = np.random.default_rng(0)
    assert np.isnan(bootstrap_ci(np.array([1.84]), "median", 200, 0.95, rng)).all()
    lo, hi = bootstrap_ci(np.array([1.0, 2.0, 3.0]), "median", 200, 0.95, rng)
    assert lo < hi
    row = pd.Series({"cost_ratio_ci_low": np.nan, "cost_ratio_ci_high": np.nan, "n_paired": 1})
    assert _ratio_interval(row, "95%") == "one person, so no interval"
    row = pd.Series({"cost_ratio_ci_low": 1.1, "cost_ratio_ci_high": 1.5, "n_paired": 9})
    assert _ratio_interval(row, "95%").startswith("95% interval [")


def test_global_recourse_names_the_timeline_of_a_timed_audit(rejected):
    mace, X = rejected
    advice = cf.Constraints(timeline=cf.datasets.timeline("german_credit", horizon=6))
    timed = cf.audit(mace, X.iloc[:3], constraints=advice)
    with pytest.raises(ValidationError, match="computed under a timeline"):
        cf.global_recourse(mace, X.iloc[:3], individual=timed)


@pytest.mark.parametrize(
    ("file_text", "expected"),
    [
        ("timeline:\n  horizon: 6\n  wait_cost: 0\n", {"horizon": 24, "wait_cost": 0.0}),
        # a file timeline that looks like the flag's own still gets no dataset rates
        ("timeline: 6\n", {"horizon": 24, "wait_cost": cf.Timeline().wait_cost}),
    ],
)
def test_horizon_flag_sets_the_horizon_of_a_file_timeline_and_nothing_else(
    tmp_path, capsys, file_text, expected
):
    file = tmp_path / "c.yaml"
    file.write_text(file_text)
    argv = ["explain", "--dataset", "german_credit", "--model", "lr", "--rows", "0:3"]
    argv += ["--constraints", str(file), "--horizon", "24", "--format", "json"]
    assert main([*argv, "--time-limit", "5"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["constraints"]["timeline"] == pytest.approx(expected)


def test_the_reports_cards_agree_in_number(rejected):
    mace, X = rejected
    page = cf.audit(mace, X.iloc[:1]).to_html()
    assert "(1 row)" in page and "(1 rows)" not in page
    assert "(0 rows)" in page  # and a zero count stays plural
