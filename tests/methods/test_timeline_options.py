"""Options under a timeline are different advice: two answers with the same actions after
the same months (they differ only in what time moves) are one option (German Credit)."""

from __future__ import annotations

import pytest

import counterfact as cf

pytest.importorskip("z3")


@pytest.fixture(scope="module")
def timed(credit_mace):
    _, test, model, mace = credit_mace
    timeline = cf.Timeline(horizon=24, rates={"savings": (1 / 6, 0.0)}, wait_cost=1 / 24)
    X = cf.rows_to_explain(model, test).loc[[383, 79]]
    return mace.explain(X, n_counterfactuals=3, constraints=cf.Constraints(timeline=timeline))


def test_no_two_options_are_the_same_advice(timed):
    for q in timed.queries.index:
        texts = [timed.change_text(q, r) for r in range(int(timed.found[q]))]
        acts = [t.split(" (then ")[0] for t in texts]  # the advice, without what time moves
        assert len(set(acts)) == len(acts), texts
    # row 383: waiting 12 months is the cheapest answer; a second "wait 12 months" that
    # leaves the job tenure's band where it is today is a copy, and the reason says so
    assert timed.change_text(383, 0).startswith("no change needed: wait 12 months")
    assert timed.found[383] < 3 and "1 was a copy of these" in timed.reason[383]


def test_a_timeline_on_data_nothing_moves_warns_once():
    """Wine quality has no feature time moves and the timeline gives no rate: waiting
    helps no answer, and explain says so (the answers are today's)."""
    import warnings

    data = cf.datasets.load("wine_quality_red")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable(random_state=0).fit(model, train)
    X = cf.rows_to_explain(model, test.X).iloc[:2]
    idle = cf.Constraints(timeline=cf.Timeline(horizon=12))
    with pytest.warns(UserWarning, match="horizon of 12 months helps no answer") as seen:
        timed = method.explain(X, constraints=[idle, idle])
    assert sum("helps no answer" in str(w.message) for w in seen) == 1
    assert timed.cost().tolist() == method.explain(X).cost().tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a timeline that moves something: no warning
        paced = cf.Timeline(horizon=12, rates={"alcohol": 0.1})
        method.explain(X, constraints=cf.Constraints(timeline=paced))
