"""MACE on a single decision tree under a probability margin: every solver encodes the
margin (the floor of the target region), so each answer meets it by the real model and
the solvers agree on the optimum within ``rel_gap``.

A single tree is encoded by the Z3 oracle as the paths to its target leaves; those
leaves must also meet the region's floors, not only the decision (CP-SAT hands a
single tree to Z3)."""

from __future__ import annotations

import numpy as np
import pytest

import counterfact as cf
from counterfact.solvers import get, names

pytest.importorskip("z3")

REL_GAP = 0.01


def _solvers() -> list[str]:
    """Every solver MACE offers whose package is installed."""
    return [n for n in names() if get(n).supports(None) is None]


def _german() -> tuple[cf.Dataset, cf.Dataset]:
    return cf.datasets.load("german_credit").split(test_size=0.2, random_state=0)


def _tiers() -> tuple[cf.Dataset, cf.Dataset]:
    """Graduate admissions with three classes: the university's rating in tiers."""
    frame = cf.datasets.load("graduate_admission").X.copy()
    rating = frame.pop("university_rating").astype(int)
    frame["tier"] = np.where(rating <= 2, "low", np.where(rating == 3, "mid", "high"))
    data = cf.Dataset.from_frame(frame, target="tier", name="admission_tiers")
    return data.split(test_size=0.2, random_state=0)


#: name -> (data, model kind, model parameters, min_probability, target)
CASES = {
    "tree": (_german, "tree", {"max_depth": 4}, 0.8, None),
    "class_weight": (_german, "tree", {"max_depth": 4, "class_weight": "balanced"}, 0.8, None),
    # one boosted tree from a zero start: a single tree whose probability is a sigmoid
    "sigmoid_tree": (
        _german,
        "gbm",
        {"n_estimators": 1, "init": "zero", "learning_rate": 1.0, "max_depth": 4},
        0.7,
        None,
    ),
    "three_classes": (_tiers, "tree", {"max_depth": 4}, 0.8, "mid"),
}


def _explain(case: str, solver: str, cache: dict) -> tuple[cf.CounterfactualResult, object]:
    if case not in cache:
        load, kind, params, _, target = CASES[case]
        train, test = load()
        model = cf.models.fit(train, kind, random_state=0, **params)
        if target is None:
            X = cf.rows_to_explain(model, test).head(3)
        else:
            X = test.X[np.asarray(model.predict(test.X)) != target].head(3)
        cache[case] = (train, model, X)
    train, model, X = cache[case]
    _, _, _, p, target = CASES[case]
    method = cf.MACE(solver=solver, rel_gap=REL_GAP, time_limit=30, random_state=0)
    result = method.fit(model, train).explain(
        X, target=target, requirements=cf.Requirements(min_probability=p)
    )
    return result, model


@pytest.fixture(scope="module")
def answers() -> dict:
    cache: dict = {}
    return {case: {s: _explain(case, s, cache) for s in _solvers()} for case in CASES}


def _target_probability(model, result: cf.CounterfactualResult) -> tuple[np.ndarray, bool]:
    """The real model's probability of each query's target at its answer, and whether
    the model predicts that target there."""
    rows = result.counterfactuals
    queries = rows.index.get_level_values("query")
    target = result.target.loc[queries].to_numpy()
    proba = model.predict_proba(rows)
    cols = [list(model.classes_).index(t) for t in target]
    reached = np.asarray(model.predict(rows)) == target
    return proba[np.arange(len(rows)), cols], bool(np.all(reached))


@pytest.mark.parametrize("case", list(CASES))
def test_every_answer_meets_the_margin(answers, case):
    p = CASES[case][3]
    for solver, (result, model) in answers[case].items():
        status = dict(result.status)
        assert set(status.values()) <= {"optimal", "infeasible"}, (solver, status)
        assert "optimal" in status.values(), (solver, status)
        prob, reached = _target_probability(model, result)
        assert len(prob) == sum(v == "optimal" for v in status.values())
        assert reached, solver
        assert np.all(prob >= p), (solver, prob)


@pytest.mark.parametrize("case", list(CASES))
def test_solvers_agree_on_the_optimum(answers, case):
    """The same status per query, and each optimum within ``rel_gap`` of Z3's."""
    z3 = answers[case]["z3"][0]
    want = z3.diagnostics["delta_max"].astype(float)
    for solver, (result, _) in answers[case].items():
        assert dict(result.status) == dict(z3.status), solver
        got = result.diagnostics["delta_max"].astype(float).loc[want.index]
        assert np.array_equal(np.isfinite(got), np.isfinite(want)), solver
        a, b = got[np.isfinite(want)].to_numpy(), want[np.isfinite(want)].to_numpy()
        assert np.all(np.abs(a - b) <= REL_GAP * np.maximum(a, b)), (solver, a, b)
