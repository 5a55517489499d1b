"""The plug-in passes counterfact's conformance checks and is found through its entry point."""

from __future__ import annotations

from counterfact_greedy import GreedySearch

import counterfact as cf
from counterfact.testing import check_method, make_setting


def test_greedy_passes_the_conformance_checks():
    passed = check_method(GreedySearch)
    assert "check_valid_and_constrained" in passed


def test_greedy_on_a_tree_model():
    check_method(GreedySearch(max_steps=4), setting=make_setting("tree"))


def test_greedy_answers_flip_the_model():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test).head(3)
    result = GreedySearch().fit(model, train).explain(rows)
    for q in rows.index:
        answers = result.for_query(q)
        if len(answers):
            assert (model.predict(answers[train.schema.names]) == result.target[q]).all()


def test_installed_greedy_is_a_registered_method():
    """Once the package is installed, its entry point makes it one of counterfact's methods."""
    assert "greedy" in cf.methods.names()
    assert cf.methods.get_class("greedy") is GreedySearch
