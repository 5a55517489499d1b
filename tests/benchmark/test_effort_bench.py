"""benchmarks/effort.py's judge on a tiny real case: its two counts are the default measure,
it keeps valid answers and drops the rest, and its dominance check catches an answer
beaten on both counts beyond the stated tolerance and spares one within it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from bench_scripts import load

import counterfact as cf

effort = load("effort")


@pytest.fixture(scope="module")
def case():
    """German Credit, a logistic regression, one rejected row explained by MACE under the
    default measure (3 options), judged."""
    pytest.importorskip("z3")
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test).head(1)
    mace = cf.MACE(time_limit=10, random_state=0).fit(model, train)
    run = effort.explain(mace, X, effort.EFFORT, True)
    judge = effort.Judge.of(model, train)
    worst = effort.score([run], judge, cf.Costs().bind(train.schema, train.X))
    return run, judge, train, worst


def test_counts_are_the_default_measure(case):
    run, judge, train, worst = case
    assert len(run.result.counterfactuals) > 0 and worst < 1e-9
    query = run.result.queries.iloc[0]
    numeric = next(f for f in train.schema if f.is_numeric)
    category = next(f for f in train.schema if f.kind == "categorical")
    j = train.schema.names.index(numeric.name)
    other = next(v for v in category.categories if v != query[category.name])
    row = query.copy()
    row[numeric.name] = float(query[numeric.name]) + 2 * judge.spread[j]
    row[category.name] = other
    changes, move = judge.counts(query, row.to_frame().T)
    assert changes[0] == 2 and move[0] == pytest.approx(3.0)  # 2 MADs + 1 category
    lib = cf.Costs().bind(train.schema, train.X).evaluate(query, row.to_frame().T)
    assert float(lib[0]) == pytest.approx(5.0)


def test_verified_keeps_answers_and_drops_the_query_itself(case):
    run, judge, _, _ = case
    result, q = run.result, run.result.queries.index[0]
    assert len(judge.verified(result, q)) == int(result.found[q])
    cfs = result.counterfactuals.copy()
    cfs.iloc[0] = result.queries.loc[q].to_numpy()  # the rejected row itself
    planted = type(result)(**{**result.parts(), "counterfactuals": cfs})
    assert len(judge.verified(planted, q)) == int(result.found[q]) - 1


def _planted(run, judge, back: float):
    """The first answer with its largest numeric move taken ``back`` MAD-units toward
    the query, as another run's only answer."""
    q = run.result.queries.index[0]
    query = run.result.queries.loc[q]
    first, c, m = effort.first_answer(run, judge, q)
    moves = {
        j: abs(float(first[f.name]) - float(query[f.name])) / judge.spread[j]
        for j, f in enumerate(judge.schema)
        if f.is_numeric and first[f.name] != query[f.name]
    }
    assert moves, "the case needs a numeric change"
    j = max(moves, key=moves.get)
    name = judge.schema.names[j]
    assert moves[j] > back
    row = first.copy()
    step = back * judge.spread[j] * np.sign(float(query[name]) - float(first[name]))
    row[name] = float(first[name]) + step
    rows = row.to_frame().T
    changes, move = judge.counts(query, rows)
    other = replace(run, name="planted", exact=False, answers={q: (rows, changes, move)})
    return other, effort.tolerance(run, q, c + m)


def test_beaten_catches_a_dominating_answer_beyond_the_tolerance(case, monkeypatch):
    run, judge, _, _ = case
    assert run.result.status.iloc[0] == "optimal"
    # the planted rows move toward the query, across the decision: count them all here
    # (test_an_answer_within_the_margin_gap_is_not_covered checks the coverage rule)
    monkeypatch.setattr(effort, "covered", lambda run, q, rows, judge: np.ones(len(rows), bool))
    same, tol = _planted(run, judge, 0.0)
    assert tol > 0
    assert effort.beaten(run, [run, same], judge) == (1, [])
    inside, tol = _planted(run, judge, 0.5 * tol)
    assert effort.beaten(run, [run, inside], judge) == (1, [])
    beyond, tol = _planted(run, judge, 2 * tol)
    n, found = effort.beaten(run, [run, beyond], judge)
    assert n == 1 and len(found) == 1 and found[0].other == "planted (effort)"
    assert "->" in found[0].text(run.result.queries.iloc[0])


def test_own_runs_are_compared_with_the_heuristics_and_the_other_own_run(case):
    run = case[0]
    a_own = replace(run, name="A", measure=effort.OWN)
    a_eff = replace(run, name="A")
    b_own = replace(run, name="B", measure=effort.OWN)
    b_eff = replace(run, name="B")
    h = replace(run, name="H", exact=False)
    runs = [a_own, a_eff, b_own, b_eff, h]
    assert [r.key for r in effort.others_of(a_own, runs)] == ["B (own)", "H (effort)"]
    assert len(effort.others_of(a_eff, runs)) == 4


def test_an_answer_within_the_margin_gap_is_not_covered(case):
    """A proof stated for answers past the threshold by more than its margin tolerance
    says nothing about an answer nearer the threshold, and one far past it is covered."""
    run, judge, _, _ = case
    q = run.result.queries.index[0]
    rec = run.result.certificate_record(q)
    rows = run.result.for_query(q).loc[:, judge.schema.names].astype(judge.dtypes.to_dict())
    if rec.margin_tolerance is None or rec.margin_tolerance >= 0:
        assert effort.covered(run, q, rows, judge).all()
        return
    query = run.result.queries.loc[[q]].astype(judge.dtypes.to_dict())
    # the query itself is rejected: below the threshold, outside what the proof covers
    assert not effort.covered(run, q, query, judge).any()
