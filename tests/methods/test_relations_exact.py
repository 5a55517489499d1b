"""Known answers under relations between features: brute force over a small domain
finds the same optimum as MACE (Z3 and MILP oracles) and CE-OCL, and the
same "none exists"; oracles that cannot state a relation exactly refuse it."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.metrics._distances import DistanceEncoder

pytest.importorskip("z3")
pytest.importorskip("highspy")

LEVELS = ["lo", "mid", "high", "top"]
HOUSING = ["rent", "own", "free"]
EPSILON = 1e-3

RELATIONS = {
    "linear and implications": [
        "a + b <= 10",
        "c - c@ >= -2",
        "if h != h@ then a >= a@ + 1",
        "if a >= 5 then e >= 'mid'",
        "if b - b@ >= 2 then h == 'own'",
    ],
    "ordinal by rank": ["a - a@ >= 2 * (e - e@)", "if e != e@ then b == b@", "b <= b@ + 3"],
    "none exists": ["a >= a@ + 20"],
}


@functools.lru_cache(maxsize=4)
def setting(kind: str):
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 9, n),
            "b": rng.integers(0, 9, n),
            "c": rng.integers(0, 9, n),
            "e": rng.choice(LEVELS, n),
            "h": rng.choice(HOUSING, n),
        }
    )
    rank = frame["e"].map(LEVELS.index)
    score = frame["a"] + 1.5 * frame["b"] - frame["c"] + 2 * rank + 2 * (frame["h"] == "own")
    frame["y"] = (score + rng.normal(0, 1, n) > 11).astype(int)
    data = cf.Dataset.from_frame(
        frame,
        target="y",
        kinds={"e": "ordinal"},
        categories={"e": LEVELS, "h": HOUSING},
        bounds={"a": (0, 8), "b": (0, 8), "c": (0, 8)},
    )
    params = {"n_estimators": 5, "max_depth": 3} if kind == "rf" else {}
    model = cf.models.fit(data, kind, random_state=0, **params)
    grid = pd.DataFrame(
        list(itertools.product(range(9), range(9), range(9), LEVELS, HOUSING)),
        columns=["a", "b", "c", "e", "h"],
    )
    grid = data.schema.coerce(grid)
    pred = np.asarray(model.predict(grid))
    queries = data.X[np.asarray(model.predict(data.X)) == 0].iloc[:3]
    return data, model, grid, pred, queries


def brute_force(kind: str, relations: list[str]) -> dict:
    """Per query: the least l1 distance (MACE eq. 3) of a point of the domain that the
    model puts in class 1 and that satisfies the relations (None: there is none)."""
    data, _, grid, pred, queries = setting(kind)
    c = cf.Constraints(relations=relations)
    rc = c.resolve(data.schema)
    enc = DistanceEncoder(data.schema)
    Z = enc.transform(grid)
    best = {}
    for qid, x in queries.iterrows():
        ok = (pred == 1) & rc.for_query(x).satisfied(grid)
        if not ok.any():
            best[qid] = None
            continue
        d = enc.distances(Z[ok], enc.transform(x.to_frame().T)[0], "l1")
        best[qid] = float(d.min())
    return best


def distance_of(kind: str, x: pd.Series, rows: pd.DataFrame) -> float:
    data = setting(kind)[0]
    enc = DistanceEncoder(data.schema)
    return float(enc.distances(enc.transform(rows), enc.transform(x.to_frame().T)[0], "l1").min())


def _compare(kind: str, relations: list[str], method, *, tol: float) -> None:
    data, model, _, _, queries = setting(kind)
    best = brute_force(kind, relations)
    m = method.fit(model, data)
    r = m.explain(
        queries,
        constraints=cf.Constraints(relations=relations),
        requirements=cf.Requirements(costs="own"),
    )
    for qid, x in queries.iterrows():
        if best[qid] is None:
            assert r.status[qid] == "infeasible", (qid, r.status[qid])
            continue
        assert r.status[qid] == "optimal", (qid, r.status[qid], r.reason[qid])
        rows = r.for_query(qid)
        assert cf.violations(x, rows, data.schema, cf.Constraints(relations=relations)).empty
        got = distance_of(kind, x, rows)
        assert best[qid] - 1e-9 <= got <= best[qid] + tol, (qid, got, best[qid])


@pytest.mark.parametrize("relations", list(RELATIONS), ids=str)
@pytest.mark.parametrize("kind", ["lr", "tree", "rf"])
@pytest.mark.parametrize("oracle", ["z3", "highs"])
def test_mace_matches_brute_force(oracle, kind, relations):
    mace = cf.MACE(norm="l1", rel_gap=EPSILON, solver=oracle, time_limit=60, random_state=0)
    _compare(kind, RELATIONS[relations], mace, tol=EPSILON + 1e-9)


@pytest.mark.parametrize("relations", list(RELATIONS), ids=str)
@pytest.mark.parametrize("kind", ["lr", "tree"])
def test_ceocl_matches_brute_force(kind, relations):
    # l1 scaled by the schema's ranges: CE-OCL's objective is J times MACE's l1 distance
    ceocl = cf.CEOCL(norm="l1", distance_scale="range", time_limit=60, random_state=0)
    _compare(kind, RELATIONS[relations], ceocl, tol=1e-6)


def test_cpsat_oracle_refuses_relations_and_auto_answers_with_z3():
    pytest.importorskip("ortools")
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "gbm", random_state=0, n_estimators=10)
    x = cf.rows_to_explain(model, test).head(1)
    c = cf.Constraints(relations=["credit_amount <= 600 * duration_months"])
    with pytest.raises(
        cf.UnsupportedConstraintError, match="credit_amount <= 600 \\* duration_months"
    ):
        cf.MACE(solver="cpsat", time_limit=20).fit(model, train).explain(
            x, constraints=c, requirements=cf.Requirements(costs="own")
        )
    # the branch-and-bound oracle refuses them too
    with pytest.raises(cf.UnsupportedConstraintError, match="relations"):
        cf.MACE(solver="bnb", time_limit=20).fit(model, train).explain(
            x, constraints=c, requirements=cf.Requirements(costs="own")
        )
    r = (
        cf.MACE(time_limit=30)
        .fit(model, train)
        .explain(x, constraints=c, requirements=cf.Requirements(costs="own"))
    )  # "auto": Z3 answers it
    assert r.status.iloc[0] in ("optimal", "infeasible")
    assert r.diagnostics["solver"].iloc[0] == "z3"  # the oracle that searched, not the default one
    if len(r.counterfactuals):
        assert cf.violations(x.iloc[0], r.for_query(x.index[0]), train.schema, c).empty


def test_ceocl_refuses_a_strict_inequality_over_a_continuous_feature():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    x = cf.rows_to_explain(model, test).head(1)
    ceocl = cf.CEOCL(time_limit=20).fit(model, train)
    # its negation 'credit_amount > 5000' is open
    closed = "if credit_amount <= 5000 then duration_months <= 24"
    with pytest.raises(cf.UnsupportedConstraintError, match="credit_amount <= 5000"):
        ceocl.explain(
            x,
            constraints=cf.Constraints(relations=[closed]),
            requirements=cf.Requirements(costs="own"),
        )
    # negation 'credit_amount >= 5000': closed
    strict = "if credit_amount < 5000 then duration_months <= 24"
    r = ceocl.explain(
        x, constraints=cf.Constraints(relations=[strict]), requirements=cf.Requirements(costs="own")
    )
    assert r.status.iloc[0] in ("optimal", "feasible", "infeasible")
    if len(r.counterfactuals):
        assert cf.violations(
            x.iloc[0], r.for_query(x.index[0]), train.schema, cf.Constraints(relations=[strict])
        ).empty


def test_metrics_count_relation_violations():
    data, _, _, _, queries = setting("lr")
    x = queries.iloc[0]
    rows = pd.DataFrame([x, x]).reset_index(drop=True)
    rows.loc[0, "a"] = min(8, int(x["a"]) + 1)
    rows.loc[1, "c"] = max(0, int(x["c"]) - 5)  # breaks "c - c@ >= -2" when c can drop by 5
    c = cf.Constraints(relations=["c - c@ >= -2"])
    counts = cf.metrics.violation_counts(x, rows, data.schema, c)
    assert counts["relations"] == int(x["c"] >= 3)
    assert counts["total"] >= counts["relations"]


def test_audit_accepts_relations():
    """The audit passes relations to the method: where they leave no recourse, the audit
    reports it as proven (MACE's 'infeasible'), and elsewhere the brute-force optimum."""
    data, model, _, _, queries = setting("lr")
    mace = cf.MACE(norm="l1", solver="z3", time_limit=30, random_state=0).fit(model, data)
    none = cf.audit(
        mace,
        queries,
        constraints=cf.Constraints(relations=RELATIONS["none exists"]),
        statistics=cf.recourse.Statistics(n_bootstrap=10),
    )
    assert set(none.per_row["status"]) == {"infeasible"}
    rels = RELATIONS["linear and implications"]
    some = cf.audit(
        mace,
        queries,
        constraints=cf.Constraints(relations=rels),
        statistics=cf.recourse.Statistics(n_bootstrap=10),
    )
    best = brute_force("lr", rels)
    for qid, row in some.per_row.iterrows():
        assert (row["status"] == "optimal") == (best[qid] is not None)
