"""cf.audit under a timeline (German Credit, its own timeline): waiting is priced and aging is
not an action; a protected feature only time moves is frozen by allowing no waiting."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.exceptions import UnsupportedConstraintError, ValidationError
from counterfact.recourse import Statistics
from counterfact.recourse._run import _frozen

pytest.importorskip("z3")

#: the features German Credit's schema lets only time move
TIME_MOVED = {"age", "employment_since", "residence_since"}
WAIT = re.compile(r"^no change needed: wait (\d+) months?")


@pytest.fixture(scope="module")
def setting(credit_mace):
    train, test, model, mace = credit_mace
    X = test.X[model.predict(test.X) == 0].iloc[:12]
    advice = cf.Constraints(timeline=cf.datasets.timeline("german_credit", horizon=24))
    return train, mace, X, advice


@pytest.fixture(scope="module")
def timed_audit(setting):
    _, mace, X, advice = setting
    stats = Statistics(n_bootstrap=20, random_state=0)
    return cf.audit(mace, X, constraints=advice, protected="age", statistics=stats)


def test_waiting_is_priced_and_aging_is_not_an_action(setting, timed_audit):
    _, mace, X, advice = setting
    rows = timed_audit.per_row[timed_audit.per_row["outcome"] == "recourse"]
    result = mace.explain(X, constraints=advice)
    first = result.cost().xs(0, level="rank")  # the measure of effort, waiting priced
    assert rows["cost_effort"].to_numpy() == pytest.approx(first[rows.index].to_numpy())
    waits = rows[rows["changes"].str.match(WAIT)]
    assert len(waits) >= 1  # answers that only wait: the case the measure must price
    wait_cost = advice.timeline.wait_cost
    for changes, cost in zip(waits["changes"], waits["cost_effort"], strict=True):
        assert cost == pytest.approx(int(WAIT.match(changes).group(1)) * wait_cost)
    said = waits["changes"].str.extract(WAIT)[0].astype(float)
    assert waits["months"].to_numpy() == pytest.approx(said.to_numpy())  # the months column
    months = result.elapsed().xs(0, level="rank")
    assert rows["months"].to_numpy() == pytest.approx(months[rows.index].to_numpy())
    assert all(not set(c) & TIME_MOVED for c in rows["changed"])
    assert (waits["n_changed"] == 0).all() and (waits["protected_changed"] == 1).all()
    assert "age" not in set(timed_audit.actions().query("n_changed > 0")["feature"])
    assert "(waiting only)" in set(timed_audit.change_sets()["features"])


def test_freezing_age_allows_no_waiting_and_never_costs_less(timed_audit):
    paired = timed_audit.sensitivity_rows
    assert len(paired) >= 1
    assert (paired["status_frozen"] == "optimal").all()
    # MACE proves both answers nearest (to within 1 %): with no time allowed, never cheaper
    assert (paired["cost_frozen"] >= paired["cost_allowed"] * 0.99 - 1e-9).all()
    assert not paired["changes_frozen"].str.match(r"in \d+ months?, if|no change needed").any()
    assert timed_audit.sensitivity()["increase_mean"] > 0


def test_frozen_keeps_the_timeline_and_everything_else(setting):
    train, _, _, advice = setting
    schema = train.schema
    given = cf.Constraints(
        timeline=advice.timeline, max_changes=3, ranges={"duration_months": (6, 48)}
    )
    no_time = _frozen(given, "age", schema)
    assert no_time.timeline.horizon == 0 and "age" not in no_time.immutable
    assert no_time.max_changes == 3 and no_time.ranges == given.ranges
    other = _frozen(given, "duration_months", schema)
    assert other.timeline == advice.timeline and "duration_months" in other.immutable
    assert other.max_changes == 3 and "duration_months" not in other.ranges
    other.resolve(schema)  # a paced feature frozen under its timeline is no contradiction
    _frozen(given, "savings", schema).resolve(schema)


def test_a_protected_feature_only_time_moves_needs_a_timeline(setting):
    _, mace, X, _ = setting
    with pytest.raises(ValidationError, match=r"moves only with time.*timeline"):
        cf.audit(mace, X, protected="age")


def test_the_command_lines_horizon_is_the_datasets_timeline(tmp_path, capsys):
    args = ["audit", "--model", "lr", "--method", "mace", "--protected", "age"]
    args += ["--horizon", "24", "--max-rows", "60", "--n-bootstrap", "20", "--no-html", "-q"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    rows = pd.read_csv(tmp_path / "per_row.csv")
    waits = rows[rows["changes"].fillna("").str.match(WAIT)]
    assert len(waits) >= 1
    wait_cost = cf.datasets.timeline("german_credit", horizon=24).wait_cost
    assert wait_cost > 0  # the dataset's cost of waiting, not a free wait
    months = waits["changes"].str.extract(WAIT)[0].astype(int)
    assert waits["cost_effort"].to_numpy() == pytest.approx((months * wait_cost).to_numpy())


def test_an_answers_change_text_says_when(setting, timed_audit):
    _, mace, X, advice = setting
    result = mace.explain(X.iloc[:3], constraints=advice)
    for q in result.queries.index:
        text = result.change_text(q)
        assert f"query {q}, #0: {text}" in result.describe()
        assert text == timed_audit.per_row.loc[q, "changes"]
    with pytest.raises(ValidationError, match="No answer 5"):
        result.change_text(X.index[0], 5)


def test_global_recourse_refuses_a_timeline_rather_than_ignore_it(setting, tmp_path, capsys):
    _, mace, X, advice = setting
    with pytest.raises(UnsupportedConstraintError, match="timeline"):
        cf.global_recourse(mace, X, max_actions=2, constraints=advice)
    with pytest.raises(UnsupportedConstraintError, match="timeline"):
        cf.global_recourse(mace, X, max_actions=2, constraints=[None, advice] + [None] * 10)
    args = ["audit", "--model", "lr", "--method", "mace", "--global", "2", "--horizon", "24"]
    assert main([*args, "--out", str(tmp_path), "-q"]) == 2
    assert "drop --horizon" in capsys.readouterr().err


def test_the_report_says_frozen_means_no_waiting(timed_audit):
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    assert timed_audit.sensitivity()["by_time"]
    again = type(timed_audit).from_json(timed_audit.to_json())
    assert again.sensitivity()["by_time"]
    page = timed_audit.to_html()
    assert "answers ask the person to wait" in page and "with no waiting (age frozen)" in page
