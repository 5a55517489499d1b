"""A heuristic's answer does not wait for what it can have today: a candidate that
proposed an older age beside changes the model already accepts at once is brought
forward to the earliest month at which its actions verify.  Checked from outside: the
answer with every feature time moves put back to today's value is refused by the model
(or needs a savings level only time reaches)."""

from __future__ import annotations

import pytest

import counterfact as cf


@pytest.fixture(scope="module")
def credit():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    train = train.subset(train.frame.sample(300, random_state=0).index)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=20, max_depth=6)
    rows = cf.rows_to_explain(model, test).head(8)
    return train, model, rows, cf.datasets.timeline(train, horizon=24)


def _today(answer, query, timeline):
    """``answer`` with the features time moves at the query's values, or None when a
    feature time raises at a rate (savings) differs from it: that needs the wait."""
    today = answer.copy()
    for name in ("age", "residence_since", "employment_since"):
        today[name] = query[name]
    rated = [name for name in timeline.rates if answer[name] != query[name]]
    return None if rated else today


@pytest.mark.parametrize(
    "method",
    [
        cf.MDPSO(random_state=0, swarm={"n_particles": 20, "max_iter": 30}, time_limit=20),
        cf.NearestObservable(),
    ],
    ids=["mdpso", "nearest"],
)
def test_no_answer_waits_for_what_it_can_have_today(credit, method):
    train, model, rows, timeline = credit
    result = method.fit(model, train).explain(
        rows, n_counterfactuals=3, constraints=cf.Constraints(timeline=timeline)
    )
    waited, needless = 0, []
    elapsed = result.elapsed()
    for (q, r), answer in result.counterfactuals[list(rows.columns)].iterrows():
        if elapsed.loc[(q, r)] == 0:
            continue
        waited += 1
        today = _today(answer, rows.loc[q], timeline)
        if today is not None and model.predict(today.to_frame().T)[0] == result.target[q]:
            needless.append((q, r, int(elapsed.loc[(q, r)])))
    assert not needless, needless
    assert waited or len(result.counterfactuals)
