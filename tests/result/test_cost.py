"""Each answer's cost in the measure of effort (``result.cost()``), and the measure in words."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.result import CounterfactualResult
from counterfact.result._certificate import Certificate


@pytest.fixture(scope="module")
def train():
    data = cf.datasets.load("german_credit")
    return data.split(test_size=0.2, random_state=0)[0]


def _mad(values) -> float:
    """The median absolute deviation, written out here (not the library's)."""
    v = np.asarray(values, dtype=float)
    return float(np.median(np.abs(v - np.median(v))))


def _result(train, *, costs=True, status="optimal", record=None):
    """One query (the first training row) and two answers: #0 moves credit_amount by two
    MADs and changes purpose; #1 changes purpose only."""
    schema = train.schema
    x = train.X.iloc[[0]].copy()
    x.index = pd.Index([7], name="query")
    mad = _mad(train.X["credit_amount"])
    a, b = x.iloc[0].copy(), x.iloc[0].copy()
    a["credit_amount"] = float(a["credit_amount"]) + 2 * mad
    other = next(c for c in schema["purpose"].categories if c != a["purpose"])
    a["purpose"] = b["purpose"] = other
    idx = pd.MultiIndex.from_tuples([(7, 0), (7, 1)], names=["query", "rank"])
    rec = record or Certificate(
        status=status,
        sentence="MACE: proven nearest within 1 %: no counterfactual closer than 0.01767",
        measure="cost",
        value=3.0,
        lower_bound=2.99,
        rel_gap=0.01,
    )
    return CounterfactualResult(
        queries=x,
        counterfactuals=pd.DataFrame([a, b], index=idx),
        status=pd.Series([status], index=x.index, dtype=object),
        runtime=pd.Series([0.1], index=x.index),
        diagnostics=pd.DataFrame(index=x.index),
        schema=schema,
        target=pd.Series([1], index=x.index),
        method="MACE",
        certificates=pd.Series([rec.sentence], index=x.index, dtype=object),
        certificate_records=pd.Series([rec], index=x.index, dtype=object),
        costs=cf.Costs().bind(schema, train.X) if costs else None,
    )


def test_cost_known_values_in_the_default_measure(train):
    r = _result(train)
    got = r.cost()
    # 1 per changed feature + 2 MADs of credit_amount + 1 for a category change
    assert got.loc[(7, 0)] == pytest.approx(1 + 2 + 1 + 1)
    assert got.loc[(7, 1)] == pytest.approx(1 + 1)  # one category change
    assert list(got.index) == [(7, 0), (7, 1)] and got.name == "cost"
    assert got.attrs["unit"] is None
    assert got.attrs["measure"].startswith("fewer changes or smaller moves, counting 1 per")
    terms = r.cost(per_feature=True)
    assert terms.loc[(7, 0), "credit_amount"] == pytest.approx(3.0)
    assert terms.loc[(7, 0), "purpose"] == pytest.approx(2.0)
    assert terms.loc[(7, 0)].drop(["credit_amount", "purpose"]).abs().max() == 0
    assert list(r.cost(7).index) == [(7, 0), (7, 1)]
    with pytest.raises(cf.ValidationError, match="Unknown query"):
        r.cost(8)


def test_cost_in_another_measure_or_without_costs(train):
    r = _result(train)
    few = r.cost(costs="fewest-changes", train=train)  # 1 per change + a hundredth per MAD
    assert few.loc[(7, 0)] == pytest.approx(2 + 0.01 * 3) and few.loc[(7, 1)] == pytest.approx(1.01)
    with pytest.raises(cf.ValidationError, match="train"):
        r.cost(costs="effort")  # the MADs need the training rows
    with pytest.raises(cf.ValidationError, match="train= scales"):
        r.cost(train=train)  # the result's own costs need no training rows
    own = _result(train, costs=False)
    with pytest.raises(cf.ValidationError, match=r"costs='own'.*cost\(train=train\)"):
        own.cost()
    pd.testing.assert_series_equal(own.cost(train=train), r.cost())
    pd.testing.assert_series_equal(own.cost(train=train.X), r.cost())
    with pytest.raises(cf.ValidationError, match="DataFrame or a counterfact Dataset"):
        own.cost(train=[1, 2])


def test_a_unit_is_reported_with_the_values(train):
    r = _result(train)
    months = cf.Costs(weights={"credit_amount": 0.001}, unit="months", unit_scale=1.0)
    got = r.cost(costs=months.bind(train.schema, train.X))
    assert got.attrs["unit"] == "months" and got.attrs["unit_scale"] == 1.0
    assert got.attrs["measure"].startswith("a lower cost, counting your costs (months)")
    doubled = cf.Costs(weights={"credit_amount": 0.001}, unit="months", unit_scale=2.0)
    twice = r.cost(costs=doubled.bind(train.schema, train.X))
    pd.testing.assert_series_equal(twice, got)  # units of cost: the weights' own
    assert twice.attrs["unit_scale"] == 2.0  # times which they are in months


def test_describe_names_the_measure_and_hides_the_raw_bound(train):
    text = _result(train).describe()
    lines = text.splitlines()
    assert lines[0].startswith("Smaller means fewer changes or smaller moves, counting 1 per")
    assert "query 7, #0: " in text and "; cost 5" in text and "; cost 2" in text
    assert "MACE: proven: no answer with fewer changes or smaller moves (to within 1 %)" in text
    assert "0.01767" not in text and "normalised" not in text
    plain = _result(train).certificate(7, numbers=False)
    assert "0.01767" not in plain and "fewer changes or smaller moves" in plain
    assert "0.01767" in _result(train).certificate(7)  # the fields and sentence are kept
    found = _result(train, status="feasible").certificate(7, numbers=False)
    assert "not proven: an answer with fewer changes or smaller moves may exist" in found


def test_own_measure_is_named_as_the_methods_objective(train):
    rec = Certificate(
        status="optimal",
        sentence="MACE: proven nearest",
        measure="range-normalised distance",
        value=0.1,
        lower_bound=0.1,
    )
    text = _result(train, costs=False, record=rec).describe()
    assert "Smaller means a smaller range-normalised distance (the method's own objective" in text
    assert "; cost" not in text


def test_the_words_name_every_per_change_charge(train):
    words = cf.Costs(per_change={"other_debtors": 50, "telephone": 0}).words()
    assert "other_debtors: 50 per change plus 1 per move in MADs" in words
    assert "telephone: 0 per change plus 1 per move in MADs" in words
    assert words.endswith("others: 1 per change plus 1 per move in MADs")
    named = cf.Costs(weights={"credit_amount": 0.001}, per_change={"credit_amount": 3})
    assert "credit_amount 0.001 per unit moved plus 3 per change" in named.words()
    everyone = cf.Costs(weights={"credit_amount": 0.001}, per_change=2.0).words()
    assert "credit_amount 0.001 per unit moved plus 2 per change" in everyone
    # the words agree with the charges the costs make
    bound = named.bind(train.schema, train.X)
    row = train.X.iloc[0]
    moved = row.copy()
    moved["credit_amount"] = row["credit_amount"] + 1000
    assert float(bound.evaluate(row, moved.to_frame().T)[0]) == pytest.approx(3 + 1.0)


def test_a_result_without_answers_has_the_same_columns(train):
    full = _result(train)
    none = _result(train, status="infeasible")
    none.counterfactuals = none.counterfactuals.iloc[:0]
    assert len(none.to_frame()) == 0
    assert none.to_frame().columns.tolist() == full.to_frame().columns.tolist()
    assert {"_status", "_confidence", "_cost"} <= set(full.to_frame().columns)


def test_the_words_read_a_feature_name_with_spaces_whole():
    words = cf.Costs(weights={"credit amount": 0.001}, per_change={"credit amount": 3}).words()
    assert "credit amount 0.001 per unit moved plus 3 per change" in words
    plain = cf.Costs(weights={"credit amount": 0.001}).words()
    assert "credit amount 0.001 per unit moved," in plain  # named: no charge


def test_the_words_say_what_a_unit_of_cost_is_worth_when_it_is_not_one_unit():
    doubled = cf.Costs(weights={"credit_amount": 0.001}, unit="months", unit_scale=2.0)
    assert doubled.words().startswith("your costs (months; the weights count in units of 2 months)")
    once = cf.Costs(weights={"credit_amount": 0.001}, unit="months", unit_scale=1.0)
    assert once.words().startswith("your costs (months): ")
