"""Recourse that holds: a probability margin, validity across models, certified regions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.testing._fast import fast_method

METHODS = ["nearest", "mace", "ceocl", "ufce", "mdpso", "l2c"]


@pytest.fixture(scope="module")
def line():
    """Two numeric features, class 1 iff a + b is large: a logistic regression with
    known weights, and a grid fine enough to brute-force the nearest answers."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"a": rng.integers(0, 101, n), "b": rng.integers(0, 101, n)})
    frame["y"] = (frame["a"] + frame["b"] + rng.normal(0, 8, n) > 100).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "lr", random_state=0)
    return data, model


def _brute_force(model, x, p):
    """The nearest grid point (l1 over ranges, MACE's eq. 3) whose P(1) >= p."""
    a, b = np.meshgrid(np.arange(0, 101), np.arange(0, 101))
    grid = pd.DataFrame({"a": a.ravel(), "b": b.ravel()})
    ok = model.predict_proba(grid)[:, 1] >= p
    ok &= model.predict(grid) == 1
    d = (np.abs(grid["a"] - x["a"]) + np.abs(grid["b"] - x["b"])) / 100 / 2
    return float(d[ok].min())


def test_the_margin_is_a_known_answer_for_the_exact_methods(line):
    data, model = line
    X = data.X[model.predict(data.X) == 0].iloc[:4]
    for p in (0.6, 0.8):
        r = (
            cf.MACE(rel_gap=1e-4, time_limit=30)
            .fit(model, data)
            .explain(X, requirements=cf.Requirements(costs="own", min_probability=p))
        )
        for q in X.index:
            best = _brute_force(model, X.loc[q], p)
            assert r.status[q] == "optimal"
            assert r.diagnostics.loc[q, "delta_max"] == pytest.approx(best, abs=2e-3)
            assert r.confidence.loc[(q, 0)] >= p
        assert r.requirements["min_probability"] == p


@pytest.mark.parametrize("name", METHODS)
def test_every_method_honours_the_margin(name, line):
    data, model = line
    X = data.X[model.predict(data.X) == 0].iloc[:5]
    r = (
        fast_method(name)
        .fit(model, data)
        .explain(X, requirements=cf.Requirements(min_probability=0.7), n_counterfactuals=2)
    )
    assert len(r.counterfactuals) > 0
    assert (model.predict_proba(r.counterfactuals.loc[:, data.schema.names])[:, 1] >= 0.7).all()
    assert (r.confidence >= 0.7).all()


def test_a_margin_the_solver_cannot_encode_raises(line):
    data, _ = line
    svm = cf.models.fit(data, "svm", random_state=0)  # Platt-scaled probabilities: no exact link
    X = data.X[svm.predict(data.X) == 0].iloc[:2]
    with pytest.raises(cf.UnsupportedConstraintError, match="min_probability"):
        cf.MACE(time_limit=10).fit(svm, data).explain(
            X, requirements=cf.Requirements(min_probability=0.7)
        )
    # a heuristic still honours it, verified with the model
    r = (
        cf.NearestObservable()
        .fit(svm, data)
        .explain(X, requirements=cf.Requirements(min_probability=0.7))
    )
    assert (r.confidence >= 0.7).all()
    with pytest.raises(cf.ValidationError, match="min_probability"):
        cf.NearestObservable().fit(svm, data).explain(
            X, requirements=cf.Requirements(min_probability=1.5)
        )


@pytest.fixture(scope="module")
def credit():
    data = cf.datasets.load("german_credit")
    # the features only time moves may rise here, so that nearest observed rows are admissible
    rising = {f.name: "increasing" for f in data.schema if f.actionability == "time"}
    data = data.with_schema(data.schema.with_actionability(**rising))
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=5)
    others = cf.models.retrained(model, train, n=2, random_state=1)
    X = cf.rows_to_explain(model, test).head(4)
    return train, model, others, X


def test_retrained_copies(credit):
    train, model, others, _ = credit
    again = cf.models.retrained(model, train, n=2, random_state=1)
    assert [type(m) for m in others] == [type(model)] * 2
    pd.testing.assert_frame_equal(  # seeded: the same copies again
        pd.DataFrame(again[0].predict_proba(train.X)),
        pd.DataFrame(others[0].predict_proba(train.X)),
    )
    assert not np.array_equal(others[0].predict_proba(train.X), others[1].predict_proba(train.X))
    with pytest.raises(cf.ValidationError, match="n must be"):
        cf.models.retrained(model, train, n=0)


@pytest.mark.parametrize("name", ["mace", "ceocl", "nearest", "mdpso"])
def test_robust_answers_hold_in_every_model(name, credit):
    train, model, others, X = credit
    r = (
        fast_method(name)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(robust_to=others))
    )
    assert r.requirements["robust_to"] == 2
    cfs = r.counterfactuals.loc[:, train.schema.names]
    assert len(cfs) > 0
    for q in cfs.index.get_level_values(0).unique():  # the proof is among such answers only
        for numbers in (True, False):
            assert r.certificate(q, numbers=numbers).endswith(
                "; required: the target in each of 2 other models too"
            )
    targets = r.target.loc[cfs.index.get_level_values(0)].to_numpy()
    for m in (model, *others):
        assert (m.predict(cfs) == targets).all()


def test_the_exact_robust_optimum_is_never_farther_than_the_nearest_robust_row(credit):
    """MACE over three forests at once: its proven lower bound is at most the cost of the
    nearest observed row valid for all three, and it never claims 'infeasible' where that
    row exists."""
    train, model, others, X = credit
    near = (
        cf.NearestObservable()
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(robust_to=others))
    )
    exact = (
        cf.MACE(time_limit=60)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(robust_to=others))
    )
    near_cost = near.cost()
    for q in X.index:
        if near.found[q]:
            assert exact.status[q] != "infeasible"
            if exact.status[q] == "optimal":  # the proven lower bound, in the same measure
                assert exact.diagnostics.loc[q, "delta_min"] <= near_cost.loc[q].min() + 1e-9


def _inside(region, x, schema, n, rng):
    rows = []
    for _ in range(n):
        row = x.copy()
        for name, b in region.bounds.items():
            row[name] = (
                sorted(b, key=str)[rng.integers(len(b))]
                if isinstance(b, frozenset)
                else rng.uniform(b[0], b[1])
            )
        rows.append(row)
    frame = schema.coerce(pd.DataFrame(rows))
    return frame[region.contains(frame)]


def _corners(region, x, schema):
    """Every corner of a region's numeric ranges (its sets at their first value)."""
    rows = [x.copy()]
    for name, b in region.bounds.items():
        for row in rows:
            row[name] = sorted(b, key=str)[0] if isinstance(b, frozenset) else b[0]
        if not isinstance(b, frozenset) and b[1] != b[0]:
            rows += [row.copy() for row in rows]
            for row in rows[len(rows) // 2 :]:
                row[name] = b[1]
    return schema.coerce(pd.DataFrame(rows))


@pytest.mark.parametrize("kind", ["lr", "rf", "mlp"])
def test_every_point_of_a_certified_region_reaches_the_target(kind):
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    extra = {"n_estimators": 20, "max_depth": 5} if kind == "rf" else {}
    model = cf.models.fit(train, kind, random_state=0, **extra)
    X = cf.rows_to_explain(model, test).head(2)
    r = (
        cf.MACE(time_limit=20)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(min_probability=0.6, regions=True))
    )
    rng = np.random.default_rng(0)
    assert r.regions
    for (q, rank), region in r.regions.items():
        assert region.certified
        assert region.contains(r.counterfactuals.loc[[(q, rank)]].droplevel(0))[0]
        inside = _inside(region, r.queries.loc[q], train.schema, 300, rng)
        assert len(inside) > 0
        assert (model.predict_proba(inside)[:, 1] >= 0.6).all()
        corners = _corners(region, r.queries.loc[q], train.schema)
        assert region.contains(corners).all()
        assert (model.predict_proba(corners)[:, 1] >= 0.6).all()
        assert region.corners >= len(corners) and region.check_seconds > 0
        assert region.describe(train.schema)


def test_the_widest_region_of_a_linear_model_is_its_known_answer(line):
    """One feature may change: the certified interval runs from the first grid value
    whose probability clears the margin to the end of the domain."""
    data, model = line
    X = data.X[model.predict(data.X) == 0].iloc[:3]
    c = cf.Constraints(features_to_vary=["a"])
    r = (
        cf.MACE(time_limit=30)
        .fit(model, data)
        .explain(X, constraints=c, requirements=cf.Requirements(min_probability=0.7, regions=True))
    )
    for q in X.index:
        if not r.found[q]:
            continue
        lo, hi = r.region(q).bounds["a"]
        grid = pd.DataFrame({"a": np.arange(0, 101), "b": int(X.loc[q, "b"])})
        ok = model.predict_proba(grid)[:, 1] >= 0.7
        assert hi == 100 and ok[int(lo)] and not ok[int(lo) - 1]
        assert r.region(q).describe(data.schema) == f"a at least {int(lo)}"


def test_regions_survive_json_and_say_when_they_cannot_be_computed(line):
    data, model = line
    X = data.X[model.predict(data.X) == 0].iloc[:2]
    r = (
        cf.MACE(time_limit=30)
        .fit(model, data)
        .explain(X, requirements=cf.Requirements(min_probability=0.7, regions=True))
    )
    back = cf.CounterfactualResult.from_json(r.to_json())
    assert back.requirements == r.requirements
    for key, region in r.regions.items():
        assert back.region(*key) == region
    lazy = cf.NearestObservable().fit(model, data).explain(X)
    first, second = lazy.queries.index[:2]
    assert lazy.region(first).certified  # computed on demand, kept with the result
    loaded = cf.CounterfactualResult.from_json(lazy.to_json())
    assert loaded.region(first) == lazy.region(first)
    with pytest.raises(cf.ValidationError, match="regions=True"):
        loaded.region(second)


def test_the_command_line_asks_for_all_three(capsys):
    code = main(
        [
            "explain",
            "--dataset",
            "german_credit",
            "--model",
            "lr",
            "--method",
            "mace",
            "--rows",
            "0:40",
            "--min-probability",
            "0.6",
            "--robust-to",
            "1",
            "--regions",
            "--time-limit",
            "20",
            "-q",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "P(good)" in out and "any of:" in out
    assert main(["explain", "--min-probability", "2", "-q"]) == 2
