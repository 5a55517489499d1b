"""benchmarks/claims.py's checks on a tiny real case: each one passes a true claim and
catches a false one (a region holding a rejected point, a bound above a valid answer,
an answer below the margin, "infeasible" beside a valid answer)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest
from bench_scripts import load

import counterfact as cf

claims = load("claims")


@pytest.fixture(scope="module")
def case():
    """German Credit, a logistic regression, one rejected row explained by MACE with a
    margin and its certified region."""
    pytest.importorskip("z3")
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test).head(1)
    mace = cf.MACE(time_limit=10, random_state=0).fit(model, train)
    req = cf.Requirements(min_probability=0.6, regions=True)
    run = claims.explain("MACE", mace, X, req)
    truth = claims.Truth(model, train.schema, train.X.dtypes, 0.6)
    return run, truth


def _args() -> argparse.Namespace:
    return argparse.Namespace(corners=64, inside=200)


def test_region_sampling_passes_a_true_region_and_catches_a_false_one(case):
    run, truth = case
    (q, rank), region = next(iter(run.result.regions.items()))
    assert region.certified
    tally, rng = claims.Tally(), np.random.default_rng(0)
    claims.check_regions(run, truth, tally, _args(), rng)
    assert tally.checked["region"] == 1 and tally.wrong["region"] == 0
    # the same box stretched back to the query's own (rejected) values
    query = run.result.queries.loc[q]
    wide = {
        n: (min(b[0], float(query[n])), max(b[1], float(query[n])))
        if not isinstance(b, frozenset)
        else b | {query[n]}
        for n, b in region.bounds.items()
    }
    bad = cf.result.Region(wide, region.fixed, True, "stretched")
    answer = run.result.counterfactuals.loc[(q, rank)]
    check = claims.check_region(bad, query, answer, run.result.target[q], truth, _args(), rng)
    assert not check.passing.all()
    sides = [len(b) if isinstance(b, frozenset) else len({b[0], b[1]}) for b in wide.values()]
    assert check.n_corners == min(int(np.prod(sides)), 64)


def test_grid_draw_stays_on_the_grid_and_inside_the_range():
    f = cf.Feature("amount", "real", lower=0, upper=100, resolution=0.05)
    v = np.array(claims.grid_draw(f, 1.02, 1.33, 500, np.random.default_rng(0)))
    assert v.min() >= 1.02 and v.max() <= 1.33
    assert np.allclose(v / 0.05, np.round(v / 0.05))


def test_optimal_check_catches_a_bound_above_a_valid_answer(case, monkeypatch):
    run, truth = case
    tally = claims.Tally()
    pool = claims.valid_answers(run, truth, tally)
    assert tally.checked["margin"] == 1 and tally.wrong["margin"] == 0
    claims.check_optimal(run, pool, truth.schema, tally)
    assert tally.checked["optimal"] == 1 and tally.wrong["optimal"] == 0
    assert tally.wrong["value"] == 0
    true_claim = claims.optimal_claim(run.result, run.result.queries.index[0])
    inflated = claims.Claim(true_claim.value, 2 * true_claim.value + 0.01, {})
    monkeypatch.setattr(claims, "optimal_claim", lambda result, q: inflated)
    claims.check_optimal(run, pool, truth.schema, tally)
    assert tally.wrong["optimal"] == 1


def test_margin_and_infeasible_checks_catch_false_claims(case):
    run, truth = case
    strict = claims.Truth(truth.model, truth.schema, truth.dtypes, 0.9999)
    tally = claims.Tally()
    pool = claims.valid_answers(run, strict, tally)
    assert tally.wrong["margin"] == 1 and len(pool) == 0
    pool = claims.valid_answers(run, truth, claims.Tally())
    none = pd.Series("infeasible", index=run.result.status.index)
    said_none = claims.MethodRun(
        "x", run.method, type(run.result)(**{**run.result.parts(), "status": none}), 0.0
    )
    claims.check_infeasible(said_none, pool, tally)
    assert tally.checked["infeasible"] == 1 and tally.wrong["infeasible"] == 1
