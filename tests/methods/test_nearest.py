from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing import make_setting
from counterfact.testing._conformance import conformance_checks


@pytest.mark.parametrize("check", conformance_checks(), ids=lambda c: c.__name__)
def test_conformance_forest(check):
    """On a forest too (tests/methods/test_common.py checks a linear model and a tree)."""
    check(lambda: cf.NearestObservable(), make_setting("rf"))


def test_known_answer_brute_force():
    # numeric a in [0, 10], b in [0, 4]; categorical c; the class is 1 iff a + b > 8
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 11, 200),
            "b": rng.uniform(0, 4, 200).round(2),
            "c": rng.choice(["u", "v"], 200),
        }
    )
    frame["y"] = (frame["a"] + frame["b"] > 8).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "tree", max_depth=None)
    m = cf.NearestObservable(norm="l1").fit(model, data)
    x = pd.DataFrame({"a": [2], "b": [1.0], "c": ["u"]})
    r = m.explain(x, n_counterfactuals=3, requirements=cf.Requirements(costs="own"))
    # brute force: MACE-normalised l1 = mean over features of |da|/10, |db|/range_b, [c changed]
    pool = data.X[model.predict(data.X) == 1].drop_duplicates()
    ra, rb = data.schema["a"].range, data.schema["b"].range
    d = ((pool["a"] - 2).abs() / ra + (pool["b"] - 1.0).abs() / rb + (pool["c"] != "u")) / 3
    best = np.sort(d.to_numpy())[:3]
    got = r.for_query(0)
    dg = ((got["a"] - 2).abs() / ra + (got["b"] - 1.0).abs() / rb + (got["c"] != "u")) / 3
    # the nearest row first; the others are options (a row dominated by an earlier answer is
    # dropped, see test_options.py): observed rows at least as far, in order
    assert dg.iloc[0] == pytest.approx(best[0])
    assert np.all(np.diff(dg.to_numpy()) >= -1e-12) and len(got) >= 2
    assert len(pool.merge(got[["a", "b", "c"]], on=["a", "b", "c"])) >= len(got)
    assert r.status[0] == "feasible"  # the nearest observed row proves nothing about others
    assert r.diagnostics.loc[0, "nearest_value"] == pytest.approx(best[0])
    assert "the nearest observed row of the target class" in r.certificate(0)


def test_constraints_are_filters():
    data = cf.datasets.load("german_credit")
    train, test = data.split(random_state=0)
    model = cf.models.fit(train, "lr")
    num = [f.name for f in data.schema if f.is_numeric and f.actionability == "free"]
    c = cf.Constraints(increasing=num[:2], max_changes=4)
    r = (
        cf.NearestObservable()
        .fit(model, train)
        .explain(test.X.iloc[:10], constraints=c, n_counterfactuals=2)
    )
    for q in r.queries.index:
        v = cf.violations(r.queries.loc[q], r.for_query(q), data.schema, c)
        assert v.empty


def test_a_row_without_an_answer_says_whether_its_fixed_values_rule_out_every_row():
    """No observed row of the target class is admissible: when the values that may not
    change (immutable, not allowed to vary, moved only by time) already rule out every one,
    the reason says so; when other constraints do, the general reason stays."""
    from counterfact.methods.nearest._method import NO_ADMISSIBLE, NONE_KEEPS

    # a in [0, 10] free, b held fixed; the class is 1 iff a > 5, and no row of class 1 has b 9
    frame = pd.DataFrame({"a": np.tile(np.arange(11), 20), "b": np.repeat(np.arange(20), 11)})
    frame = frame[~((frame["b"] == 9) & (frame["a"] > 5))]
    frame["y"] = (frame["a"] > 5).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "tree", max_depth=None)
    m = cf.NearestObservable().fit(model, data)
    x = pd.DataFrame({"a": [2, 2], "b": [9, 3]})
    plain = m.explain(x, constraints=cf.Constraints(immutable=["b"]))
    assert plain.status.tolist() == ["failed", "feasible"]
    assert plain.reason[0] == NONE_KEEPS  # b 9 is kept by no row of class 1
    n_class_1 = int((model.predict(data.X) == 1).sum())
    said = f"; of the {n_class_1} rows of the target class, none keeps b 9"
    assert plain.certificate(0).endswith(said)  # the value named, with the counts
    assert plain.certificate(0, numbers=False).startswith("nearest observed row: ")
    assert said in plain.certificate(0, numbers=False)
    capped = m.explain(
        x.iloc[[1]], constraints=cf.Constraints(immutable=["b"], ranges={"a": (0, 4)})
    )
    assert capped.reason[1] == NO_ADMISSIBLE  # rows keep b 3, but a may not reach them


def test_the_fixed_values_that_rule_out_every_row_are_named_rarest_first():
    """Neither b 1 nor c 1 alone rules out the rows of class 1; together they do. The
    certificate names the rarer first, with exact counts, then the one that empties it."""
    grid = pd.DataFrame(
        [(a, b, c) for a in range(11) for b in range(3) for c in range(4)], columns=["a", "b", "c"]
    )
    frame = grid[~((grid["b"] == 1) & (grid["c"] == 1) & (grid["a"] > 5))].copy()
    frame["y"] = (frame["a"] > 5).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "tree", max_depth=None)
    m = cf.NearestObservable().fit(model, data)
    r = m.explain(
        pd.DataFrame({"a": [2], "b": [1], "c": [1]}),
        constraints=cf.Constraints(immutable=["b", "c"]),
    )
    pos = data.X[model.predict(data.X) == 1]
    n_c = int((pos["c"] == 1).sum())  # 5 values of a x 2 other b: rarer than b 1
    assert n_c < int((pos["b"] == 1).sum())
    said = (
        f"of the {len(pos)} rows of the target class, {n_c} keep c 1; none of those also keeps b 1"
    )
    assert r.certificate(0).endswith(said), r.certificate(0)


def test_past_four_values_the_certificate_says_none_keeps_them_all():
    """Six fixed values, each common, none kept all at once by a row of class 1: four are
    named with their counts, and the certificate ends by saying none keeps all six."""
    bits = [f"b{i}" for i in range(6)]
    grid = pd.DataFrame(
        [(a, *((k >> i) & 1 for i in range(6))) for a in range(11) for k in range(64)],
        columns=["a", *bits],
    )
    frame = grid[~((grid[bits] == 1).all(axis=1) & (grid["a"] > 5))].copy()
    frame["y"] = (frame["a"] > 5).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "tree", max_depth=None)
    x = pd.DataFrame([[2, *[1] * 6]], columns=["a", *bits])
    m = cf.NearestObservable().fit(model, data)
    said = m.explain(x, constraints=cf.Constraints(immutable=bits)).certificate(0)
    assert said.endswith("; none keeps all 6 values that may not change"), said
    assert said.count(" of those also keep") == 3  # four named: the first, then three more


def test_under_a_timeline_the_certificate_says_the_rows_were_moved_onto_it():
    """Under a timeline the observed rows are moved onto the person's timeline before the
    nearest is chosen, so the answer need not be an observed row: the certificate says so,
    and without a timeline it speaks of the observed rows alone."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=4)
    rows = cf.rows_to_explain(model, test).head(3)
    timeline = cf.Constraints(timeline=cf.datasets.timeline("german_credit", horizon=12))
    method = cf.NearestObservable(random_state=0).fit(model, train)
    timed = method.explain(rows, constraints=timeline)
    moved = [q for q in rows.index if timed.diagnostics.at[q, "observed_moved_by_time"]]
    answered = [q for q in moved if timed.status[q] == "feasible"]
    assert answered
    observed = {tuple(r) for r in train.X.itertuples(index=False)}
    for q in answered:
        said = timed.certificate(q)
        assert "so the answer need not be an observed row itself" in said, said
    assert any(tuple(timed.for_query(q).iloc[0][train.X.columns]) not in observed for q in answered)
    plain = method.explain(rows)
    for q in rows.index:
        if plain.status[q] == "feasible":
            assert "need not be an observed row" not in plain.certificate(q)
