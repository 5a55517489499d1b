"""Options, not copies, searched by the exact methods (``blocking="options"``, the default).

On German Credit with a few small features free to move (two ordinals that may only
rise, the installment rate, other debtors, telephone: at most 480 points), every
point is enumerated.  A point *escapes* an earlier answer when some feature the
answer changes keeps the query's value, moves less far by at least the feature's
step, or moves the other way (another category).  Brute force then gives, answer
by answer, the cheapest counterfactual that escapes every earlier answer in the
default measure of effort: MACE's and CE-OCL's k-th answer must cost exactly that,
a query with fewer answers than asked must have no such point left, and
``alternatives_exhausted`` is set exactly then.  Every result also passes the
shared check that no answer of a query dominates another.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing._conformance import option_faults

pytest.importorskip("z3")
pytest.importorskip("highspy")

#: the features free to move (everything else is fixed by ``features_to_vary``)
WIDE = ("checking_status", "savings", "installment_rate", "other_debtors", "telephone")
NARROW = ("installment_rate", "telephone")
N_CF = 3
#: relative tolerance on costs: MACE's search gap (``rel_gap``) and float round-off
RTOL = 1e-4


@pytest.fixture(scope="module")
def credit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = cf.datasets.load("german_credit")
        train, test = data.split(test_size=0.2, random_state=0)
        models = {
            "lr": cf.models.fit(train, "lr", random_state=0),
            "rf": cf.models.fit(train, "rf", random_state=0, n_estimators=10, max_depth=4),
        }
    return train, test, models


def _values(f, x):  # type: ignore[no-untyped-def]
    """The values feature ``f`` may take for query value ``x`` (its actionability)."""
    if f.kind == "integer":
        return list(range(int(f.lower), int(f.upper) + 1))
    cats = list(f.categories)
    if f.actionability == "increasing":
        return cats[cats.index(x) :]
    return cats


def _grid(schema, x: pd.Series, free: tuple[str, ...]) -> pd.DataFrame:
    """Every point the query may move to (the free features over their values)."""
    axes = [_values(schema[n], x[n]) for n in free]
    rows = []
    for combo in itertools.product(*axes):
        row = x.copy()
        for n, v in zip(free, combo, strict=True):
            row[n] = v
        rows.append(row)
    return schema.coerce(pd.DataFrame(rows).reset_index(drop=True))


def _escapes(  # type: ignore[no-untyped-def]
    schema, x: pd.Series, earlier: pd.Series, grid: pd.DataFrame, steps
) -> np.ndarray:
    """Per grid point, whether it escapes the earlier answer (module docstring)."""
    out = np.zeros(len(grid), dtype=bool)
    for j, f in enumerate(schema):
        a, q = earlier[f.name], x[f.name]
        if a == q:
            continue
        col = grid[f.name]
        if f.kind == "integer" or f.kind == "ordinal":
            rank = (lambda v, f=f: f.rank(v)) if f.kind == "ordinal" else float
            s = max(1, math.ceil(float(steps[j]) - 1e-9)) if f.kind == "integer" else 1
            ra, rq = rank(a), rank(q)
            rv = np.array([rank(v) for v in col], dtype=float)
            out |= rv <= max(rq, ra - s) if ra > rq else rv >= min(rq, ra + s)
        else:
            out |= (col.astype(object) != a).to_numpy()
    return out


def _brute(setting, free, method, query_id, result):  # type: ignore[no-untyped-def]
    """Check one query's answers against the enumeration; returns whether its options
    ran out before ``N_CF``."""
    train, test, model = setting
    schema = train.schema
    x = test.X.loc[query_id]
    grid = _grid(schema, x, free)
    cf_mask = np.asarray(model.predict(grid)) == result.target[query_id]
    cost = cf.Costs().bind(schema, train.X).evaluate(x, grid)
    answers = result.for_query(query_id)
    left = cf_mask.copy()
    steps = method.diversity_steps_
    for k in range(len(answers)):
        row = answers.iloc[k]
        assert left.any(), f"query {query_id}: answer {k} where no option is left"
        best = float(cost[left].min())
        got = float(cf.Costs().bind(schema, train.X).evaluate(x, row.to_frame().T)[0])
        assert got == pytest.approx(best, rel=RTOL, abs=1e-9), (query_id, k, row[list(free)])
        left &= _escapes(schema, x, row, grid, steps)
    short = len(answers) < N_CF
    if short:  # fewer than asked: brute force finds no option left, and the method proved it
        assert not left.any(), f"query {query_id}: {len(answers)} answers, options left"
        assert "proved" in result.diagnostics.loc[query_id, "reason"]
    assert _flag(result, query_id) == short
    return short


def _flag(result, query_id) -> bool:  # type: ignore[no-untyped-def]
    """``diagnostics["alternatives_exhausted"]`` of one query (absent: False)."""
    v = result.diagnostics.loc[query_id].get("alternatives_exhausted")
    return v is not None and not (isinstance(v, float) and math.isnan(v)) and bool(v)


def _queries(setting, n: int) -> pd.DataFrame:
    _train, test, model = setting
    return cf.rows_to_explain(model, test).head(n)


def _run(  # type: ignore[no-untyped-def]
    method, setting, free, n_queries: int = 4
) -> tuple[int, int]:
    """Explain a few rejected rows; check each against brute force.  Returns the
    number of queries with every answer asked and with their options exhausted."""
    train, _test, model = setting
    method.fit(model, train)
    steps = method.diversity_steps_
    assert steps[train.schema.index("installment_rate")] <= 1  # the grid step is the step
    X = _queries(setting, n_queries)
    res = method.explain(
        X, n_counterfactuals=N_CF, constraints=cf.Constraints(features_to_vary=list(free))
    )
    assert option_faults(res, cf.Costs().bind(train.schema, train.X)) == []
    full = short = 0
    for qid in X.index:
        if res.found[qid] == 0:
            assert res.status[qid] == "infeasible"
            continue
        if _brute(setting, free, method, qid, res):
            short += 1
        else:
            full += 1
    return full, short


def _setting(credit, kind: str):  # type: ignore[no-untyped-def]
    train, test, models = credit
    return train, test, models[kind]


@pytest.mark.parametrize(
    ("kind", "solver"), [("lr", "auto"), ("lr", "z3"), ("rf", "auto")], ids=str
)
def test_mace_answers_are_the_brute_force_options(credit, kind, solver):
    setting = _setting(credit, kind)
    mace = cf.MACE(solver=solver, rel_gap=1e-6, random_state=0)
    full_w, short_w = _run(mace, setting, WIDE)
    full_n, short_n = _run(mace, setting, NARROW)
    # both cases occur: three options found, and fewer with the proof that none is left
    assert full_w + full_n >= 1 and short_w + short_n >= 1


@pytest.mark.parametrize("kind", ["lr", "rf"])
def test_ceocl_answers_are_the_brute_force_options(credit, kind):
    setting = _setting(credit, kind)
    ceocl = cf.CEOCL(solution_pool=False, random_state=0)
    full_w, short_w = _run(ceocl, setting, WIDE)
    full_n, short_n = _run(ceocl, setting, NARROW)
    assert full_w + full_n >= 1 and short_w + short_n >= 1


def test_other_blockings_stay_available_and_claim_no_proof(credit):
    """``blocking="points"`` still searches point-diverse answers (the shared selection
    then drops the dominated ones) and never claims the options exhausted."""
    train, _test, model = _setting(credit, "lr")
    X = _queries(_setting(credit, "lr"), 3)
    c = cf.Constraints(features_to_vary=list(NARROW))
    for method in (cf.MACE(blocking="points"), cf.CEOCL(blocking="points")):
        res = method.fit(model, train).explain(X, n_counterfactuals=N_CF, constraints=c)
        assert option_faults(res, cf.Costs().bind(train.schema, train.X)) == []
        assert not any(_flag(res, qid) for qid in X.index)
    with pytest.raises(cf.exceptions.ValidationError):
        cf.CEOCL(blocking="nope").fit(model, train)
