"""The MILP oracle's cheap first answer (``_first.first_answer``): an accepted point whose
distance bounds the first call; the bounded call proves the same optimum as the unbounded
one, and a first answer the encoding does not accept falls back to the unbounded call."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact._utils._deadline import Deadline
from counterfact.models._compile import compile_model
from counterfact.solvers._milp import _oracle
from counterfact.solvers._milp._first import encode_points, first_answer
from counterfact.solvers._milp._oracle import MipOracle
from counterfact.solvers._problem import decode, exact_distance

pytest.importorskip("highspy")


@pytest.fixture(scope="module")
def credit_mlp():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "mlp", random_state=0, hidden_layer_sizes=(8,))
    X = test.X[model.predict(test.X) != 1].iloc[:3]
    return train, model, compile_model(model, train.schema), X


def _unbounded(p, compiled, schema, monkeypatch):
    """The unbounded check without a first answer."""
    with monkeypatch.context() as mp:
        mp.setattr(_oracle, "first_answer", lambda *a, **k: None)
        return MipOracle(p, compiled, schema, rel_gap=0.01).check(None, Deadline.none())


def test_the_first_answer_is_accepted_and_no_nearer_than_the_optimum(
    credit_mlp, monkeypatch, milp_problem
):
    train, model, compiled, X = credit_mlp
    found = 0
    for i in range(len(X)):
        p = milp_problem(train, X.iloc[i], costs=True)
        first = first_answer(p, compiled)
        if first is None:
            continue
        found += 1
        point, cost = first
        assert cost == pytest.approx(exact_distance(p, point))
        row = pd.DataFrame([decode(train.schema, point)], columns=train.schema.names)
        assert np.asarray(p.bounds.satisfied(row)).all()
        assert model.predict(row)[0] == 1
        z = encode_points(p, compiled, np.asarray([point], dtype=float))
        assert compiled.predict_raw(z)[0] == 1
        best = _unbounded(p, compiled, train.schema, monkeypatch)
        assert best.verdict == "sat"
        assert cost >= best.lower_bound - 1e-9
    assert found >= 2


def test_the_bounded_first_call_proves_the_unbounded_optimum(credit_mlp, monkeypatch, milp_problem):
    train, _, compiled, X = credit_mlp
    for i in range(len(X)):
        p = milp_problem(train, X.iloc[i], costs=True)
        whole = _unbounded(p, compiled, train.schema, monkeypatch)
        oracle = MipOracle(p, compiled, train.schema, rel_gap=0.01)
        ans = oracle.check(None, Deadline.none())
        assert ans.verdict == "sat"
        assert ans.distance == pytest.approx(whole.distance, rel=2e-4)
        assert ans.lower_bound <= whole.distance * (1 + 2e-4)
        assert whole.lower_bound <= ans.distance * (1 + 2e-4)


def test_a_first_answer_the_encoding_rejects_falls_back_to_the_unbounded_call(
    credit_mlp, monkeypatch, milp_problem
):
    train, _, compiled, X = credit_mlp
    p = milp_problem(train, X.iloc[0], costs=True)
    whole = _unbounded(p, compiled, train.schema, monkeypatch)
    query = tuple(v.query for v in p.vars)  # not a counterfactual: cost far below the optimum
    monkeypatch.setattr(_oracle, "first_answer", lambda *a, **k: (query, whole.distance / 4))
    oracle = MipOracle(p, compiled, train.schema, rel_gap=0.01)
    ans = oracle.check(None, Deadline.none())
    assert ans.verdict == "sat"
    assert ans.distance == pytest.approx(whole.distance, rel=2e-4)
    assert oracle.radius == np.inf  # rebuilt over the query's whole box


def test_no_first_answer_for_a_distance_that_is_not_a_sum_of_feature_costs(
    credit_mlp, milp_problem
):
    train, _, compiled, X = credit_mlp
    assert first_answer(milp_problem(train, X.iloc[0], costs=False), compiled) is None
