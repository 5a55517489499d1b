"""Tree ensembles under a measure of effort: the branch and bound, CP-SAT and Z3 price
each interval between cuts exactly and prove the same optimum (German Credit, a small
forest and a small boosted ensemble, the default measure: 1 per changed feature plus
each move in MADs)."""

from __future__ import annotations

import pytest

import counterfact as cf

pytest.importorskip("ortools")
pytest.importorskip("z3")

FREE = ["duration_months", "credit_amount", "installment_rate", "other_debtors", "savings"]


@pytest.fixture(scope="module")
def setting():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test


@pytest.mark.parametrize(
    "kind,params",
    [("rf", {"n_estimators": 8, "max_depth": 4}), ("gbm", {"n_estimators": 15})],
)
def test_oracles_agree_under_the_default_measure(setting, kind, params):
    train, test = setting
    model = cf.models.fit(train, kind, random_state=0, **params)
    rows = cf.rows_to_explain(model, test).head(3)
    cons = cf.Constraints(immutable=[n for n in train.schema.names if n not in FREE])
    costs = {}
    for solver in ("bnb", "cpsat", "z3"):
        mace = cf.MACE(solver=solver, time_limit=60, random_state=0, warm_start=0)
        res = mace.fit(model, train).explain(rows, constraints=cons)
        assert set(res.diagnostics["solver"]) == {solver}
        assert (res.status == "optimal").all(), (solver, res.status)
        costs[solver] = res.cost().to_numpy()
    assert costs["cpsat"] == pytest.approx(costs["bnb"], rel=0.01)
    assert costs["z3"] == pytest.approx(costs["bnb"], rel=0.01)
    assert (costs["bnb"] >= 1).all()  # every answer changes something: at least 1


def test_auto_walks_the_branch_and_bound_first_under_costs(setting):
    train, test = setting
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=8, max_depth=4)
    rows = cf.rows_to_explain(model, test).head(1)
    cons = cf.Constraints(immutable=[n for n in train.schema.names if n not in FREE])
    one = cf.MACE(time_limit=60, random_state=0).fit(model, train).explain(rows, constraints=cons)
    assert one.diagnostics["solver"].iloc[0] == "bnb"
    assert one.status.iloc[0] == "optimal"
