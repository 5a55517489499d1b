"""The MILP oracle's box narrowed to a distance bound (``_narrow.narrow_bounds``): every
point within the bound stays in the box, and a bounded check proves the same optimum
over the narrowed box as over the whole one."""

from __future__ import annotations

import numpy as np
import pytest

import counterfact as cf
from counterfact._utils._deadline import Deadline
from counterfact.models._compile import compile_model
from counterfact.solvers._milp._narrow import narrow_bounds
from counterfact.solvers._milp._oracle import MipOracle
from counterfact.solvers._problem import solver_values


@pytest.fixture(scope="module")
def credit():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    x = test.X[model.predict(test.X) != 1].iloc[0]
    return train, model, x


def _in_box(bounds, row) -> bool:
    for b in bounds.features:
        v = row[b.feature.name]
        if b.values is not None and v not in b.values:
            return False
        if b.feature.is_numeric and not b.lower <= float(v) <= b.upper:
            return False
    return True


@pytest.mark.parametrize("costs", [True, False], ids=["effort", "eq3"])
def test_every_point_within_the_radius_stays_in_the_narrowed_box(credit, costs, milp_problem):
    train, _, x = credit
    p = milp_problem(train, x, costs)
    rng = np.random.default_rng(0)
    rows = train.X.sample(400, random_state=0).copy()
    for name in train.schema.names:  # most of each row keeps the query's values
        keep = rng.random(len(rows)) < 0.85
        rows.loc[keep, name] = x[name]
    d = np.array([p.distance(solver_values(train.schema, r)) for _, r in rows.iterrows()])
    allowed = np.array([_in_box(p.bounds, r) for _, r in rows.iterrows()])
    radius = float(np.quantile(d[allowed], 0.3))
    narrowed = narrow_bounds(p, radius)
    assert narrowed is not None  # something narrows at this radius
    inside = np.array([_in_box(narrowed, r) for _, r in rows.iterrows()])
    near = allowed & (d <= radius)
    assert near.sum() > 20
    assert inside[near].all()
    assert not inside[allowed & (d > radius)].all()  # the box did shrink


@pytest.mark.parametrize("costs", [True, False], ids=["effort", "eq3"])
def test_a_bounded_check_proves_the_same_optimum_over_the_narrowed_box(credit, costs, milp_problem):
    pytest.importorskip("highspy")
    train, model, x = credit
    compiled = compile_model(model, train.schema)
    p = milp_problem(train, x, costs)
    whole = MipOracle(p, compiled, train.schema, rel_gap=0.01).check(None, Deadline.none())
    assert whole.verdict == "sat"
    for factor in (1.5, 1.0 + 1e-6):
        oracle = MipOracle(p, compiled, train.schema, rel_gap=0.01)
        ans = oracle.check(whole.distance * factor, Deadline.none())
        assert oracle.radius < np.inf  # the model was rebuilt over a narrower box
        assert ans.verdict == "sat"
        assert ans.distance == pytest.approx(whole.distance, rel=1e-4)
    below = MipOracle(p, compiled, train.schema, rel_gap=0.01)
    assert below.check(whole.lower_bound * 0.99, Deadline.none()).verdict == "unsat"
