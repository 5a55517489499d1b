"""The DiCE peer adapter: categories the training split never shows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("dice_ml")

from counterfact.methods.dice._method import _rows_in, _unseen_category_rows


def _data() -> tuple[cf.Dataset, pd.DataFrame]:
    """A small frame whose schema knows categories the training rows lack
    (``flag`` is always 0 and ``colour`` never ``blue`` in training)."""
    rng = np.random.default_rng(0)
    n = 120
    a = rng.uniform(0, 10, n).round(2)
    b = rng.uniform(0, 10, n).round(2)
    colour = rng.choice(["red", "green"], n)
    frame = pd.DataFrame({"a": a, "b": b, "flag": np.zeros(n, dtype=int), "colour": colour})
    frame["y"] = (a + b > 10).astype(int)
    schema = cf.Schema(
        (
            cf.Feature("a", "real", lower=0, upper=10),
            cf.Feature("b", "real", lower=0, upper=10),
            cf.Feature("flag", "binary", categories=(0, 1)),
            cf.Feature("colour", "categorical", categories=("red", "green", "blue")),
        ),
        target="y",
    )
    data = cf.Dataset(frame, schema, name="unseen")
    queries = pd.DataFrame(
        {"a": [2.0, 3.5], "b": [1.5, 2.0], "flag": [1, 0], "colour": ["blue", "red"]}
    )
    return data, queries


def test_query_with_a_category_unseen_in_training_is_explained() -> None:
    data, Q = _data()
    model = cf.models.fit(data, "lr", random_state=0)
    before = data.frame.copy()
    dice = cf.methods.get("dice", dice_method="random", random_state=0).fit(model, data)
    res = dice.explain(Q, n_counterfactuals=2)
    # before the adapter knew the schema's categories, dice-ml refused these queries
    assert list(res.status) == ["feasible", "feasible"], list(res.reason)
    assert (res.found > 0).all()
    # every answer reaches the target under the real model
    assert (model.predict(res.counterfactuals.reset_index(drop=True)) == 1).all()
    pd.testing.assert_frame_equal(data.frame, before)  # the user's data is untouched


def test_added_rows_cover_exactly_the_missing_categories_and_are_never_reported() -> None:
    data, Q = _data()
    frame = data.X.copy()
    for name in ("flag", "colour"):
        frame[name] = frame[name].astype(str)
    frame["__t__"] = 0
    extra = _unseen_category_rows(frame, data.schema, "__t__")
    c0 = frame["colour"].iloc[0]
    assert sorted(zip(extra["flag"], extra["colour"], strict=True)) == sorted(
        [("1", c0), ("0", "blue")]
    )
    # numeric values copy a real training row: DiCE's ranges do not change
    assert (extra["a"] == frame["a"].iloc[0]).all() and (extra["b"] == frame["b"].iloc[0]).all()
    # a DiCE answer equal to an added row is recognised (and dropped by the adapter)
    cands = pd.concat([extra.iloc[[1]], Q.iloc[[0]].astype({"flag": str})], ignore_index=True)
    assert _rows_in(cands, extra, data.schema).tolist() == [True, False]
    model = cf.models.fit(data, "lr", random_state=0)
    dice = cf.methods.get("dice", dice_method="kdtree", random_state=0).fit(model, data)
    res = dice.explain(Q, n_counterfactuals=3)
    reported = res.counterfactuals.reset_index(drop=True).astype({"flag": str})
    assert not _rows_in(reported, dice._synthetic, data.schema).any()


def test_no_rows_added_when_training_shows_every_category() -> None:
    data = cf.datasets.load("compas")
    frame = data.X.copy()
    for f in data.schema:
        if not f.is_numeric:
            frame[f.name] = frame[f.name].astype(str)
    frame["__t__"] = 0
    assert len(_unseen_category_rows(frame, data.schema, "__t__")) == 0
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    dice = cf.methods.get("dice", dice_method="random", random_state=0).fit(model, train)
    assert len(dice._synthetic) == 0
    q = cf.rows_to_explain(model, test.X, data=data).iloc[:1]
    res = dice.explain(q, n_counterfactuals=2)
    assert res.status.iloc[0] == "feasible", list(res.reason)
