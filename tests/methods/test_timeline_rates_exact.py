"""A rate stands for the fraction it names: German Credit's savings rise one level in six
months (1/6 a month), though six times the float 1/6, read exactly, is a little below 1.
Z3 reads the rate as the fraction, as the checker does, so the level six months reach is
not proven out of reach.  Known answer: the same query's optimum from HiGHS, whose
tolerance covers it."""

from __future__ import annotations

from fractions import Fraction

import pytest

import counterfact as cf

pytest.importorskip("z3")


def test_six_months_of_one_sixth_reach_one_level():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    train = train.subset(train.X.index[:400])
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=4)
    row = cf.rows_to_explain(model, test).loc[[775]]
    assert Fraction(1 / 6) * 6 < 1  # the float, read exactly, falls short
    timeline = cf.datasets.timeline(train, horizon=6)
    assert timeline.rates["savings"][0] == 1 / 6
    vary = ["duration_months", "savings", "age", "residence_since", "employment_since"]
    constraints = cf.Constraints(timeline=timeline, features_to_vary=vary)
    found = {}
    for solver in ("z3", "highs"):
        method = cf.MACE(solver=solver, time_limit=30, random_state=0).fit(model, train)
        found[solver] = method.explain(row, constraints=constraints)
    z3, highs = found["z3"], found["highs"]
    assert z3.status[775] == "optimal", z3.certificate(775)
    assert highs.status[775] == "optimal"
    answer = z3.counterfactuals.loc[(775, 0)]
    assert answer["savings"] != row.loc[775, "savings"]  # a level up: only six months do it
    assert int(z3.elapsed().loc[(775, 0)]) == 6
    assert model.predict(z3.counterfactuals[list(row.columns)])[0] == 1
    assert float(z3.cost().loc[(775, 0)]) == pytest.approx(
        float(highs.cost().loc[(775, 0)]), rel=0.01
    )
