"""What MACE's statuses and certificates claim holds: a relative tolerance, a stated margin
tolerance, proofs over the features' grids, and the certificate's fields.

* German Credit, logistic regression, test row 383: an answer that satisfies
  ``max_changes=2`` cannot be farther under that cap than the proven optimum
  without it (the bounds of both certificates agree);
* a small linear model whose probabilities are computed on the whole integer grid:
  MACE's answer is the brute-force optimum within the stated tolerance, and a
  ``min_probability`` 1e-5 below the highest reachable probability is reached
  (no ``infeasible``), one above it is ``infeasible`` with the probability stated;
* an equality relation whose solutions lie off a feature's grid is refused;
* under ``min_probability`` a MILP's bound speaks of the answers past that probability
  by its margin, and says so (MACE and CE-OCL, brute force over a 2-feature grid);
* the certificate's fields survive the JSON round trip.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from _linear import linear_problem
from counterfact.exceptions import ConstraintError, ValidationError
from counterfact.metrics._distances import DistanceEncoder
from counterfact.result import Certificate


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "lr", random_state=0)


@pytest.fixture(scope="module")
def linear():
    """Approval rises with income, falls with debt; tenure matters little (integers)."""
    return linear_problem(tenure_weight=0.01)


def _grid(data: cf.Dataset, **fixed: int) -> pd.DataFrame:
    """Every integer point of the observed box (``fixed`` features at one value)."""
    X = data.X
    axes = {
        c: [fixed[c]] if c in fixed else range(int(X[c].min()), int(X[c].max()) + 1)
        for c in X.columns
    }
    return pd.DataFrame(list(itertools.product(*axes.values())), columns=list(axes))


def test_a_cap_the_answer_satisfies_cannot_make_it_farther(german):
    train, test, model = german
    x = test.X.loc[[383]]
    mace = cf.MACE(norm="l1", random_state=0).fit(model, train)
    free = mace.explain(x)
    capped = mace.explain(x, constraints=cf.Constraints(max_changes=2))
    a, b = free.certificate_record(383), capped.certificate_record(383)
    assert free.status[383] == capped.status[383] == "optimal"
    for rec in (a, b):
        assert rec.rel_gap == 0.01 and 0 < rec.lower_bound <= rec.value
        assert rec.value - rec.lower_bound <= max(rec.rel_gap * rec.value, rec.abs_floor)
        assert rec.grid == (("credit_amount", 1.0),) and "on the grid of credit_amount" in (
            rec.sentence
        )
    # every answer under the cap is an answer without it: above the free lower bound
    assert b.value >= a.lower_bound
    # the free answer changes one feature, so it is an answer under the cap too
    assert len(free.changes(383)) <= 2 and a.value >= b.lower_bound


def test_the_answer_is_the_brute_force_optimum_within_the_tolerance(linear):
    data, model = linear
    x = pd.DataFrame({"income": [30], "debt": [40], "tenure": [5]})
    grid = _grid(data)
    ok = np.asarray(model.predict(grid)) == 1
    enc = DistanceEncoder(data.schema)
    d = enc.distances(enc.transform(grid), enc.transform(x)[0], "l1")
    best = float(d[ok].min())
    own = cf.Requirements(costs="own")  # the brute force measures eq. (3)'s l1
    r = cf.MACE(norm="l1", random_state=0).fit(model, data).explain(x, requirements=own)
    rec = r.certificate_record(0)
    assert r.status[0] == "optimal"
    assert rec.lower_bound <= best + 1e-12 <= rec.value + 2e-12
    assert rec.value <= best / (1 - rec.rel_gap) + rec.abs_floor
    # no probability floor: the proof covers every point past the strict decision by 1e-6
    assert rec.margin_tolerance == -1e-6 and rec.margin_scale == "logit"


def _boundary_query(data: cf.Dataset, model) -> tuple[pd.DataFrame, float]:
    """A row that only its tenure may change, refused at tenure 0, whose highest
    reachable probability (tenure 20) lies above 0.5; and that probability."""
    for income in range(10, 101):
        rows = _grid(data, income=income, debt=20)
        p = model.predict_proba(rows)[:, 1]
        if p[0] < 0.5 < p.max() < 0.95:
            return rows.iloc[[0]].reset_index(drop=True), float(p.max())
    raise AssertionError("no boundary query in this data")


def test_a_probability_just_below_the_highest_reachable_is_reached(linear):
    data, model = linear
    x, p_max = _boundary_query(data, model)
    mace = cf.MACE(norm="l1", random_state=0).fit(model, data)
    only_tenure = cf.Constraints(features_to_vary=["tenure"])
    near = mace.explain(
        x, constraints=only_tenure, requirements=cf.Requirements(min_probability=p_max - 1e-5)
    )
    assert near.status[0] in ("optimal", "feasible")
    assert near.confidence.iloc[0] >= p_max - 1e-5
    # the 1e-6 tolerance of the proof is the exact oracle's (a MILP states its proofs for
    # the margin it used): the method's own objective searches this linear model with Z3
    above = mace.explain(
        x,
        constraints=only_tenure,
        requirements=cf.Requirements(min_probability=p_max + 1e-3, costs="own"),
    )
    rec = above.certificate_record(0)
    assert above.status[0] == "infeasible" and rec.status == "infeasible"
    assert "none reaches P >= " in rec.sentence and "less the tolerance" in rec.sentence
    assert rec.margin_tolerance == 1e-6


def test_an_equality_off_the_grid_is_refused_with_the_resolution(german):
    train, test, model = german
    mace = cf.MACE(norm="l1", random_state=0).fit(model, train)
    rel = cf.Constraints(relations=["credit_amount == credit_amount@ - 0.5"])
    with pytest.raises(ConstraintError, match=r"credit_amount \(resolution 1\)"):
        mace.explain(test.X.loc[[383]], constraints=rel)
    # on the grid the same relation is searched
    on = mace.explain(
        test.X.loc[[383]],
        constraints=cf.Constraints(relations=["credit_amount == credit_amount@ - 100"]),
    )
    assert on.status[383] in ("optimal", "infeasible")


def test_the_certificate_fields_survive_json(german):
    train, test, model = german
    r = cf.MACE(norm="l1", random_state=0).fit(model, train).explain(test.X.loc[[383, 40]])
    back = cf.CounterfactualResult.from_json(r.to_json())
    for q in (383, 40):
        rec = r.certificate_record(q)
        assert isinstance(rec, Certificate) and rec.sentence == r.certificate(q)
        assert back.certificate_record(q) == rec
        assert Certificate.from_dict(rec.to_dict()) == rec
    with pytest.raises(ValidationError, match="lower_bound"):
        Certificate.from_dict({**rec.to_dict(), "lower_bound": "0.1"})
    with pytest.raises(ValidationError, match="grid"):
        Certificate.from_dict({**rec.to_dict(), "grid": [["credit_amount", -1]]})
    with pytest.raises(ValidationError, match="above 'value'"):
        Certificate.from_dict({**rec.to_dict(), "lower_bound": rec.value + 1})


@pytest.mark.parametrize("name", ["mace", "ceocl"])
def test_under_min_probability_the_bound_speaks_of_the_required_probability(german, name):
    """Row 79, only duration and credit amount free, ``min_probability=0.6``: a MILP's
    proof covers the answers past 0.6 (not past the decision threshold) by its margin.
    Brute force over every whole duration and credit amount: no point past 0.6 by more
    than that margin costs less than the stated bound, while a point inside the margin
    may (duration 4, credit 3493 has P = 0.60002 and costs less)."""
    train, test, model = german
    x = test.X.loc[[79]]
    free = cf.Constraints(features_to_vary=["duration_months", "credit_amount"])
    method = cf.methods.get(name, random_state=0, time_limit=30).fit(model, train)
    r = method.explain(x, constraints=free, requirements=cf.Requirements(min_probability=0.6))
    rec = r.certificate_record(79)
    assert r.status[79] in ("optimal", "feasible") and rec.threshold == 0.6
    assert "past the required probability 0.6 by more than" in rec.sentence
    assert "required probability 0.6 by a margin" in r.certificate(79, numbers=False)
    months, amounts = np.meshgrid(
        np.arange(4, 73), np.arange(250, int(x["credit_amount"].iloc[0]) + 1)
    )
    rows = x.loc[x.index.repeat(months.size)].reset_index(drop=True)
    rows["duration_months"] = months.ravel().astype(x["duration_months"].dtype)
    rows["credit_amount"] = amounts.ravel().astype(x["credit_amount"].dtype)
    p = model.predict_proba(rows)[:, 1]
    logit = np.log(p / (1 - p)) - np.log(0.6 / 0.4)
    cost = cf.Costs().bind(train.schema, train.X).evaluate(x.iloc[0], rows)
    covered = logit > -rec.margin_tolerance
    assert cost[covered].min() >= rec.lower_bound - 1e-9
    plain = method.explain(x, constraints=free)  # without a floor: the decision threshold
    assert plain.certificate_record(79).threshold is None
    assert "past the decision threshold" in plain.certificate(79)
