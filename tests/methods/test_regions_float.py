"""Certified regions are exact in floating point: a known answer where a tree's threshold
falls between two float32 values next to a grid value, and the check with the real model
that every certified region passes before it is returned."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._bounds import FeatureBounds, QueryBounds
from counterfact.methods._pipeline import _region
from counterfact.models._compile import compile_model
from counterfact.result import SLACK, Region
from counterfact.solvers._milp import (
    SPLIT_TOL,
    Model,
    encode_inputs,
    encode_outputs,
    quicksum,
)

#: the grid value next to the split: float32(150.18) goes left, 150.19 goes right
EDGE = 150.18


@pytest.fixture(scope="module")
def stump():
    """``a`` on a grid of 0.01 around :data:`EDGE` (never equal to it), class 1 iff
    ``a > EDGE``: scikit-learn splits at the float64 midpoint of float32(150.17) and
    float32(150.19), 150.18000030517578, which lies within the old encoding's safety
    distance of the grid value 150.18 -- a value the model sends left."""
    rng = np.random.default_rng(0)
    k = np.concatenate([rng.integers(15018 - 60, 15018, 200), rng.integers(15019, 15078, 200)])
    a = np.round(k * 0.01, 2)
    frame = pd.DataFrame({"a": a, "b": rng.integers(0, 10, 400), "y": (a > EDGE).astype(int)})
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "tree", random_state=0, max_depth=1)
    return data, model


def _p1(model, schema, rows):
    return model.predict_proba(schema.coerce(pd.DataFrame(rows)))[:, 1]


def test_the_stump_splits_between_two_float32_values_next_to_a_grid_value(stump):
    data, model = stump
    t = float(model[-1].tree_.threshold[0])
    assert float(np.float32(EDGE)) <= t < EDGE + SPLIT_TOL * EDGE  # inside the old gap
    assert data.schema["a"].resolution == 0.01
    p = _p1(model, data.schema, [{"a": EDGE, "b": 3}, {"a": 150.19, "b": 3}])
    assert p.tolist() == [0.0, 1.0]


def _least_p1(data, model, cover: bool) -> float:
    """min of P(class 1) over the box a in [EDGE, 150.77], b = 3, proven by the MILP."""
    compiled = compile_model(model, data.schema)
    x = pd.Series({"a": 150.5, "b": 3})
    feats = (
        FeatureBounds(data.schema["a"], 150.5, EDGE, 150.77),
        FeatureBounds(data.schema["b"], 3, 3.0, 3.0),
    )
    m = Model("box")
    inputs = encode_inputs(m, compiled.inputs, QueryBounds(data.schema, x, feats, None, ()))
    out = encode_outputs(m, compiled, inputs.z, cover=cover)
    m.add_objective(quicksum([out[1]]))
    return float(m.solve("highs", time_limit=5.0, gap=1e-9).bound)


def test_a_proof_over_a_box_covers_the_values_next_to_a_cut(stump):
    """The search encoding keeps a safety distance from the cut, so the grid value
    150.18 looks unreachable on its own branch and the box seems all class 1; the
    proof's encoding reaches it and finds the class-0 leaf."""
    data, model = stump
    assert _least_p1(data, model, cover=False) == pytest.approx(1.0)  # the old, wrong answer
    assert _least_p1(data, model, cover=True) == pytest.approx(0.0)


def test_a_certified_region_stops_at_the_first_grid_value_the_model_accepts(stump):
    data, model = stump
    X = data.X[data.X["a"] < 150.0].head(2)
    r = (
        cf.NearestObservable()
        .fit(model, data)
        .explain(X, requirements=cf.Requirements(regions=True))
    )
    rng = np.random.default_rng(1)
    for (q, _), region in r.regions.items():
        assert region.certified
        lo, hi = region.bounds["a"]
        assert lo == 150.19  # the known answer: 150.18 goes left in the real model
        assert region.corners == 2 and region.n_checked == 200 and region.check_seconds > 0
        b = r.queries.loc[q, "b"]
        inside = [{"a": v, "b": b} for v in [lo, hi, *rng.uniform(lo, hi, 300)]]
        frame = data.schema.coerce(pd.DataFrame(inside))
        assert region.contains(frame).all()
        assert (model.predict(frame) == 1).all()


def test_contains_accepts_exactly_what_the_proof_covers():
    region = Region({"a": (1.5, 2.5)}, {"b": 3.0}, True, "proven", 0, {"a": (0.0, 10.0)})
    lo, hi = Region.accepts(1.5, 2.5)
    assert (lo, hi) == (1.5 - 1.5 * SLACK, 2.5 + 2.5 * SLACK)
    frame = pd.DataFrame(
        {
            "a": [lo, hi, np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf), 2.0, 2.0],
            "b": [3.0, 3.0, 3.0, 3.0, 3.0 + 3.0 * SLACK, 3.0 + 4.0 * SLACK],
        }
    )
    assert region.contains(frame).tolist() == [True, True, False, False, True, False]
    back = Region.from_dict(region.to_dict())
    assert back == region
    old = {k: v for k, v in region.to_dict().items() if k not in ("corners", "check_seconds")}
    assert Region.from_dict(old).corners == 0


def test_a_bound_at_the_edge_of_the_domain_is_widened_only_by_the_checkers_tolerance():
    """At the schema's lowest value (250) the proof's slack (2.5e-7) would let in values the
    domain forbids; the region stops where cf.violations does (1e-9), and keeps its slack
    where the bound lies inside the domain."""
    region = Region({"a": (250.0, 400.0)}, {}, True, "proven", 0, {"a": (250.0, 18424.0)})
    inside, beyond = 250.0 - 5e-10, 250.0 - 2e-7
    above = 400.0 + 2e-7  # within SLACK of a bound inside the domain
    frame = pd.DataFrame({"a": [inside, beyond, above]})
    assert region.contains(frame).tolist() == [True, False, True]


def test_a_box_the_real_model_rejects_is_never_certified(stump, monkeypatch):
    """With a proof that accepts everything, the box grows over the whole domain; the
    check with the real model catches it and the region shrinks to the answer."""
    data, model = stump
    monkeypatch.setattr(_region._Checker, "_proven", lambda self, exact, changed: True)
    X = data.X[data.X["a"] < 150.0].head(1)
    r = (
        cf.NearestObservable()
        .fit(model, data)
        .explain(X, requirements=cf.Requirements(regions=True))
    )
    ((key, region),) = r.regions.items()
    cf_a = float(r.counterfactuals.loc[key, "a"])
    assert not region.certified and "reject" in region.how
    assert region.bounds["a"] == (cf_a, cf_a) and region.corners == 1
    assert region.contains(r.counterfactuals.loc[[key]].droplevel(0)).all()


def test_a_sampled_region_counts_only_the_points_of_the_box_it_returns():
    """A model the compiler cannot read (k nearest neighbours): a region that stayed at
    its answer says so and counts no sample of the larger boxes it tried; the notice does
    not offer the answer again as an option."""
    from sklearn.base import clone
    from sklearn.neighbors import KNeighborsClassifier

    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    lr = cf.models.fit(train, "lr", random_state=0)
    knn = clone(getattr(lr, "model", lr))
    knn.steps[-1] = (knn.steps[-1][0], KNeighborsClassifier(15))
    knn.fit(train.X, train.y)
    rows = cf.rows_to_explain(knn, test).head(3)
    result = (
        cf.UFCE(time_limit=5)
        .fit(knn, train)
        .explain(rows, requirements=cf.Requirements(regions=True))
    )
    points = [(key, r) for key, r in result.regions.items() if r.is_point()]
    assert points, "the rows give at least one region that stayed at its answer"
    for (q, rank), region in points:
        assert not region.certified and region.n_checked <= 1
        assert "only the counterfactual itself" in region.describe(train.schema)
        assert "would also have sufficed" not in result.notice(q, rank)
