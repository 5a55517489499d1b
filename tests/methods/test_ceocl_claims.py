"""What CE-OCL's (and the MILP oracle's) certificates claim holds for the returned answer.

* a feature on a coarse grid (resolution 0.5): the MIP's point is rounded to the
  grid, which raises the returned answer's objective far above the proven bound;
  the certificate states the returned answer's value, and the status is
  ``feasible`` ("an answer may be up to X % closer"), not ``optimal``;
* the proven bound lies at or below every valid point of the grid (enumerated);
* German Credit, logistic regression: an ``optimal`` certificate's value is the
  returned answer's own objective and lies within the stated tolerance;
* MACE with HiGHS on a small ReLU network: the bound accounts for the solver's
  feasibility tolerance (``solver_slack``) and never exceeds the answer's value;
* the margin fields: ``answer_margin`` is what the answers keep, ``margin_tolerance``
  (negative) how far above the threshold the proofs start.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.result import Certificate
from counterfact.solvers._milp import FEASIBILITY_TOLERANCE, bound_slack

#: the paper's own objective: the known answers here are in it
OWN = cf.Requirements(costs="own")


@pytest.fixture(scope="module")
def coarse():
    """Two real features on a grid of 0.5 (0..10); approval rises mostly with ``x``."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"x": rng.integers(0, 21, n) * 0.5, "y": rng.integers(0, 21, n) * 0.5})
    score = 0.9 * frame["x"] + 0.1 * frame["y"] - 5.3
    frame["ok"] = (score + rng.logistic(0, 0.2, n) > 0).astype(int)
    data = cf.Dataset.from_frame(frame, target="ok")
    model = cf.models.fit(data, "lr", random_state=0)
    rejected = data.X[model.predict(data.X) == 0].head(4)
    return data, model, rejected


def _ceocl(model, data):
    method = cf.CEOCL(norm="l1", distance_scale="range", random_state=0)
    return method.fit(model, data)


def _objective(data: cf.Dataset, query: pd.Series, rows: pd.DataFrame) -> np.ndarray:
    """CE-OCL's l1 objective over range-scaled features, computed by hand."""
    span = np.array([f.upper - f.lower for f in data.schema], dtype=float)
    diff = rows[data.schema.names].to_numpy(dtype=float) - query.to_numpy(dtype=float)
    return np.abs(diff / span).sum(axis=1)


def test_rounding_above_the_bound_is_feasible_not_optimal(coarse):
    data, model, X = coarse
    r = _ceocl(model, data).explain(X, requirements=OWN)
    downgraded = 0
    for q in X.index:
        rec = r.certificate_record(q)
        own = _objective(data, X.loc[q], r.for_query(q).iloc[[0]])[0]
        assert rec.value == pytest.approx(own, rel=1e-9, abs=1e-12)
        assert rec.lower_bound is not None and rec.lower_bound <= rec.value
        assert (r.status[q] == "optimal") == rec.within_tolerance()
        if not rec.within_tolerance():
            downgraded += 1
            assert r.status[q] == "feasible" and rec.status == "feasible"
            assert "an answer may be up to" in rec.sentence
            assert rec.proven_gap > rec.rel_gap
    assert downgraded > 0  # the grid of 0.5 moves the MIP's point on these rows


def test_the_bound_is_below_every_valid_grid_point(coarse):
    data, model, X = coarse
    r = _ceocl(model, data).explain(X, requirements=OWN)
    axes = [np.arange(0.0, 10.25, 0.5)] * 2
    grid = pd.DataFrame(list(itertools.product(*axes)), columns=["x", "y"])
    accepted = grid[model.predict(grid) == 1]
    for q in X.index:
        rec = r.certificate_record(q)
        least = _objective(data, X.loc[q], accepted).min()
        assert rec.lower_bound <= least + 1e-12
        assert rec.value >= least - 1e-12


def test_an_optimal_certificate_states_the_returned_answer():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = test.X.loc[[79, 383]]
    r = _ceocl(model, train).explain(X, requirements=OWN)
    for q in X.index:
        rec = r.certificate_record(q)
        assert rec.value == pytest.approx(r.diagnostics.loc[q, "answer_value"])
        assert rec.solver_slack == pytest.approx(bound_slack(len(train.schema), rec.value), 0.5)
        assert rec.lower_bound <= rec.value
        if r.status[q] == "optimal":
            assert rec.value - rec.lower_bound <= max(rec.rel_gap * rec.value, rec.abs_floor)


def test_margin_fields_say_what_the_proofs_cover(coarse):
    data, model, X = coarse
    r = _ceocl(model, data).explain(X.iloc[:1], requirements=OWN)
    rec = r.certificate_record(X.index[0])
    assert rec.answer_margin == pytest.approx(1e-4)
    assert rec.margin_tolerance == pytest.approx(-1e-4)  # only points past the margin
    back = Certificate.from_dict(rec.to_dict())
    assert back == rec


def test_mace_highs_bound_accounts_for_the_solver_tolerance(coarse):
    data, _, _ = coarse
    net = cf.models.fit(data, "mlp", random_state=0)
    X = data.X[net.predict(data.X) == 0].head(3)
    method = cf.MACE(solver="highs", random_state=0, time_limit=20).fit(net, data)
    r = method.explain(X, requirements=OWN)
    n_terms = len(data.schema)
    for q in X.index:
        rec = r.certificate_record(q)
        if rec.value is None:
            continue
        own = cf.metrics.distance(X.loc[q], r.for_query(q).iloc[[0]], data.schema, norm="l1")
        assert rec.value == pytest.approx(float(np.asarray(own)[0]), rel=1e-9, abs=1e-12)
        assert rec.lower_bound <= rec.value
        assert rec.solver_slack is not None and rec.solver_slack >= FEASIBILITY_TOLERANCE
        assert rec.abs_floor >= 2 * bound_slack(n_terms) * (1 - 1e-12)
        assert (rec.status == "optimal") <= rec.within_tolerance()


def test_within_tolerance_is_the_stated_rule():
    c = Certificate("optimal", "", value=1.0, lower_bound=0.99, rel_gap=0.01, abs_floor=0.0)
    assert c.within_tolerance()
    c = Certificate("optimal", "", value=1.0, lower_bound=0.98, rel_gap=0.01, abs_floor=0.0)
    assert not c.within_tolerance()
    c = Certificate("optimal", "", value=1e-4, lower_bound=0.0, rel_gap=0.01, abs_floor=2e-4)
    assert c.within_tolerance()
    assert bound_slack(3, 0.5) == pytest.approx(4e-6)
    assert bound_slack(3, 10.0) == pytest.approx(4e-5)
