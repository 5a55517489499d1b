"""--robustness and --min-vote-share on the command line: each answer with the share of
retrained models kept out of the search that still accept it, and clear errors."""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.cli._commands import bound_robustness
from counterfact.cli._options import ROBUSTNESS_TIME_LIMIT

pytest.importorskip("z3")

RUN = ["explain", "--dataset", "german_credit", "--model", "lr", "--method", "mace"]
ROWS = ["--rows", "0:12", "--time-limit", "10", "-q"]


def test_each_answer_says_how_many_retrained_models_accept_it(capsys):
    assert main([*RUN, *ROWS, "--robustness", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "asked for advice that still holds after the model is retrained: 80 %" in out
    held = [line for line in out.splitlines() if "retrained models kept out of the search" in line]
    answers = [line for line in out.splitlines() if line.startswith("  #")]
    assert held and len(held) == len(answers)
    assert all("of 8 retrained models" in line for line in held)
    assert all("reaches the 80 % asked" in line for line in held)


def test_the_json_keeps_the_estimates(capsys):
    assert main([*RUN, *ROWS, "--robustness", "0.8", "--format", "json"]) == 0
    result = cf.CounterfactualResult.from_json(capsys.readouterr().out)
    assert result.requirements["robustness"] == 0.8
    table = result.robustness()
    assert len(table) == len(result.counterfactuals) > 0
    assert ((table["low"] <= table["estimate"]) & (table["estimate"] <= table["high"])).all()


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--robustness", "1.2"], "--robustness must be between 0 and 1"),
        (["--robustness", "0.9", "--robust-to", "2"], "cannot be combined with --robust-to"),
        (["--min-vote-share", "0"], "--min-vote-share must be in (0, 1]"),
    ],
)
def test_bad_values_are_named_before_any_work(capsys, flags, says):
    assert main([*RUN, *ROWS, *flags]) == 2
    assert says in capsys.readouterr().err


def test_a_vote_share_is_refused_for_a_model_without_trees(capsys):
    assert main([*RUN, *ROWS, "--min-vote-share", "0.6", "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "forest" in err.lower()
    # in the command line's words, and before the method is fitted (no "fitted in" line)
    assert "--min-vote-share counts the votes" in err and "--model lr" in err
    assert "Use --robustness, --min-probability or --robust-to" in err


def test_a_vote_share_is_refused_before_the_method_is_fitted(capsys):
    assert main([*RUN, "--rows", "0:2", "--min-vote-share", "0.6"]) == 2
    err = capsys.readouterr().err
    assert "fitted a 'lr' model" in err and "mace: fitted in" not in err


def test_audit_takes_the_share_and_the_vote_share(tmp_path, capsys):
    argv = ["audit", "--dataset", "german_credit", "--model", "rf", "--method", "mace"]
    argv += ["--max-rows", "12", "--robustness", "0.7", "--min-vote-share", "0.6"]
    assert main([*argv, "--out", str(tmp_path), "--time-limit", "10", "-q"]) == 0
    printed = capsys.readouterr().out
    saved = json.loads((tmp_path / "audit.json").read_text())
    assert (saved["meta"]["robustness"], saved["meta"]["min_vote_share"]) == (0.7, 0.6)
    said = saved["guarantee"]["recourse"]
    assert "at least 60 % of the trees' votes" in said and "retrained: 70 %" in said
    assert "holds among the answers under that setting" in said
    per_row = pd.read_csv(tmp_path / "per_row.csv")
    assert (per_row["outcome"] == "recourse").any()
    # the share of rejected rows whose recourse holds, per group as overall: printed, in
    # summary.csv and in the report
    rejected = per_row[per_row["rejected"]]
    holds = (rejected["outcome"] == "recourse") & rejected["robustness_reached"].eq(True)
    overall = pd.read_csv(tmp_path / "summary.csv").iloc[0]
    assert overall["n_holding"] == int(holds.sum())
    assert overall["holding_rate"] == pytest.approx(holds.sum() / len(rejected))
    assert "holding_rate" in printed.splitlines()[0]
    report = (tmp_path / "audit.html").read_text()
    n = int(holds.sum())
    assert f"recourse that holds ({n} row{'' if n == 1 else 's'})" in report


def test_a_row_without_an_answer_says_the_margin_it_was_searched_under(capsys):
    """Under --robustness, a row that kept no setting was searched under the user's own
    margin alone (none here): it says so, not "and the row's setting"."""
    argv = ["explain", "--dataset", "german_credit", "--model", "rf", "--method", "nearest"]
    assert main([*argv, "--rows", "0:40", "--robustness", "0.8", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = [lines[i + 1] for i, ln in enumerate(lines) if ln.startswith("query ")]
    unanswered = [line for line in said if "no admissible observed row" in line]
    assert unanswered, said
    for line in unanswered:
        assert "margin asked: none (crossing is enough)" in line and "row's setting" not in line
        assert line.endswith("asked for advice that still holds after the model is retrained: 80 %")


def _fitted(kind: str, method: str, **params):
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(
        train, kind, random_state=0, **({"n_estimators": 5} if kind == "rf" else {})
    )
    return cf.methods.get(method, **params).fit(model, train)


def _args(time_limit=None):
    return argparse.Namespace(time_limit=time_limit, quiet=False)


def test_robustness_bounds_a_method_without_a_time_limit(capsys):
    """MACE has no time limit by default; under --robustness each of the ladder's searches
    gets ROBUSTNESS_TIME_LIMIT per row, and the status line says so and how many searches a
    row may take (a forest: vote shares too)."""
    method = _fitted("rf", "mace")
    req = cf.Requirements(robustness=0.9)
    bound_robustness(_args(), method, req)
    assert method.time_limit == ROBUSTNESS_TIME_LIMIT
    err = capsys.readouterr().err
    calls = cf.methods.robustness_calls(method, req)
    assert f"--robustness 0.9: up to {calls} searches per row" in err
    assert "(vote shares, margins, retrained copies)" in err
    assert f"time limit of {ROBUSTNESS_TIME_LIMIT:g} s per row (the --robustness default" in err
    # refitting the copies comes first, and may take longer than the searches (an MLP)
    assert "first, the model is refitted up to 32 times on resamples" in err
    assert cf.methods.robustness_refits(req) == 8 + 16 + 8
    assert cf.methods.robustness_refits(cf.Requirements(robustness=0.9, robustness_copies=4)) == 20
    assert cf.methods.robustness_refits(cf.Requirements()) == 0


def test_robustness_keeps_the_users_time_limit_and_leaves_other_runs_alone(capsys):
    method = _fitted("lr", "mace", time_limit=3.0)
    bound_robustness(_args(3.0), method, cf.Requirements(robustness=0.9))
    assert method.time_limit == 3.0
    err = capsys.readouterr().err
    assert "(margins, retrained copies), each with a time limit of 3 s per row" in err
    assert "default" not in err
    plain = _fitted("lr", "mace")
    bound_robustness(_args(), plain, cf.Requirements(min_probability=0.6))
    assert plain.time_limit is None and capsys.readouterr().err == ""
    nearest = _fitted("lr", "nearest")  # every method's ladder is bounded, not only MACE's
    bound_robustness(_args(), nearest, cf.Requirements(robustness=0.9))
    assert nearest.time_limit == ROBUSTNESS_TIME_LIMIT
    assert "searches per row (margins, retrained copies), each with" in capsys.readouterr().err


def test_the_status_line_names_only_the_rungs_the_ladder_tries(capsys):
    """A multi-class logistic regression has no exact margin for MACE: the ladder climbs the
    retrained copies alone, and the status line says so."""
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=300, n_features=4, n_informative=3, n_redundant=0, n_classes=3, random_state=0
    )
    data = cf.Dataset.from_frame(pd.DataFrame(X, columns=list("abcd")).assign(y=y), target="y")
    mace = cf.MACE().fit(cf.models.fit(data, "lr", random_state=0), data)
    bound_robustness(_args(), mace, cf.Requirements(robustness=0.9))
    assert "searches per row (retrained copies), each with" in capsys.readouterr().err
