"""The CE-OCL German Credit walkthrough (paper Section 3, Table 5, parts A-F):
the qualitative facts of each part, on the script that docs/ceocl_walkthrough.md shows."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import counterfact as cf

pytest.importorskip("highspy")

ROOT = Path(__file__).resolve().parents[2]
IMMUTABLE = ("purpose", "personal_status_sex", "people_liable", "foreign_worker")
INCREASING = ("age", "residence_since", "employment_since")
TIME_LIMIT = 10.0
HULL_POINTS = 200  # a seeded subsample of the hull: a subset hull, so the facts still hold


def _load_walkthrough():
    path = ROOT / "examples" / "ceocl_german_walkthrough.py"
    spec = importlib.util.spec_from_file_location("ceocl_german_walkthrough", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = mod  # type: ignore[union-attr]  (dataclasses resolve their module)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


W = _load_walkthrough()


@pytest.fixture(scope="module")
def setup():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = W.setup("svm", n_queries=4)
    s.queries = s.queries.iloc[[0, 3]]
    return s


@pytest.fixture(scope="module")
def parts(setup):
    out = {}
    for part in W.PARTS:
        out[part] = W.run_part(part, setup, time_limit=TIME_LIMIT, max_hull_points=HULL_POINTS)
    return out


def _rank(f, v):
    return f.rank(v) if f.kind == "ordinal" else float(v)


def _every_cf(result):
    for qid in result.queries.index:
        x = result.queries.loc[qid]
        for _, row in result.for_query(qid).iterrows():
            yield x, row


def _flips(model, result) -> bool:
    cfs = result.counterfactuals
    return bool(len(cfs)) and bool(np.all(model.predict(cfs.reset_index(drop=True)) == 1))


def test_every_part_is_valid(setup, parts):
    for part, (_, res) in parts.items():
        if part in ("E", "F"):
            assert (res.found > 0).any(), f"part {part} found nothing"
        else:
            assert (res.found > 0).all(), f"part {part}: {res.status.tolist()}"
        if len(res.counterfactuals):
            assert _flips(setup.model, res), f"part {part} returned a row the SVM does not flip"


def test_part_a_leaves_the_domain_only_without_bounds(setup, parts):
    """Without bounds (parts A-C) the optimum may propose a negative credit amount
    (the paper's part A: -333.52) or leave another feature's domain; with the
    schema's bounds (part A re-run, parts D-F) it never does."""
    schema = setup.train.schema
    unbounded = pd.concat([parts[p][1].counterfactuals for p in "ABC"])
    outside = [
        not all(schema[c].contains(v) for c, v in row.items()) for _, row in unbounded.iterrows()
    ]
    assert any(outside)
    assert (unbounded["credit_amount"] < 0).any()
    # part A again, same everything but the schema's bounds (actionability still free)
    free = setup.train.with_schema(schema.with_actionability(**{f.name: "free" for f in schema}))
    bounded = (
        W.part_method("A", time_limit=TIME_LIMIT)
        .fit(setup.model, free)
        .explain(setup.queries, requirements=W.PAPER)
    )
    a = parts["A"][1]
    for qid in setup.queries.index:
        assert (bounded.for_query(qid)["credit_amount"] >= schema["credit_amount"].lower).all()
        # dropping bounds can only lower the optimum
        assert (
            a.diagnostics.loc[qid, "objective"] <= bounded.diagnostics.loc[qid, "objective"] + 1e-6
        )
    for p in "DEF":
        for _, row in parts[p][1].counterfactuals.iterrows():
            assert all(schema[c].contains(v) for c, v in row.items()), (p, row.to_dict())


def test_part_b_sparsity_never_adds_changes(setup, parts):
    """With the penalty alpha per change, the optimum changes at most as many
    features as part A's (d_B + alpha k_B <= d_A + alpha k_A and d_A <= d_B)."""
    schema = setup.train.schema
    for qid in setup.queries.index:
        x = setup.queries.loc[qid]
        k = {}
        for p in "AB":
            row = parts[p][1].for_query(qid).iloc[0]
            k[p] = sum(row[c] != x[c] for c in schema.names)
        assert k["B"] <= k["A"]
    assert float(cf.metrics.dice_sparsity(parts["B"][1]).mean()) >= float(
        cf.metrics.dice_sparsity(parts["A"][1]).mean()
    )


def _repeats(schema, x: pd.Series, later: pd.Series, earlier: pd.Series) -> bool:
    """Whether ``later`` changes every feature ``earlier`` changes, the same way and at
    least as far (the same category): ``earlier`` plus further moves."""
    for f in schema:
        a, b, q = earlier[f.name], later[f.name], x[f.name]
        if a == q:
            continue
        if f.is_numeric or f.kind == "ordinal":
            ra, rb, rq = _rank(f, a), _rank(f, b), _rank(f, q)
            if (ra - rq) * (rb - rq) <= 0 or abs(rb - rq) < abs(ra - rq):
                return False
        elif b != a:
            return False
    return True


def test_part_c_diversity(setup, parts):
    """Three counterfactuals per query; the first is part B's optimum; they are distinct
    options: none repeats an earlier one's changes, each at least as far."""
    b, c = parts["B"][1], parts["C"][1]
    schema = setup.train.schema
    names = schema.names
    for qid in setup.queries.index:
        rows = c.for_query(qid)
        assert len(rows) == 3
        assert not rows.duplicated().any()
        x = setup.queries.loc[qid]
        first = {n for n in names if rows.iloc[0][n] != x[n]}
        assert first == {n for n in names if b.for_query(qid).iloc[0][n] != x[n]}
        for i, j in itertools.permutations(range(len(rows)), 2):
            assert not _repeats(schema, x, rows.iloc[j], rows.iloc[i]), (qid, i, j)
    assert float(cf.metrics.count_diversity(c).mean()) > 0


def test_part_d_actionability(setup, parts):
    """Immutables never change; age, residence and employment never decrease."""
    schema = setup.train.schema
    for x, row in _every_cf(parts["D"][1]):
        for name in IMMUTABLE:
            assert row[name] == x[name]
        for name in INCREASING:
            assert _rank(schema[name], row[name]) >= _rank(schema[name], x[name])
    for p in "EF":
        for x, row in _every_cf(parts[p][1]):
            assert all(row[n] == x[n] for n in IMMUTABLE)


def _in_hull(method, row: pd.Series, eps: float, tol: float = 1e-6) -> bool:
    """LP check, independent of the MIP: is z(row) within eps (linf, scaled) of
    a convex combination of the method's hull points?"""
    from scipy.optimize import linprog

    hull = method.hulls_[1]  # class index of "good"
    P, sc = hull.points, method.hull_scales_
    z = method.compiled_.inputs.encode(row.to_frame().T)[0]
    N, n = P.shape
    A_eq = np.hstack([P.T / sc[:, None], -np.eye(n)])
    A_eq = np.vstack([A_eq, np.r_[np.ones(N), np.zeros(n)]])
    b_eq = np.r_[z / sc, 1.0]
    bounds = [(0, 1)] * N + [(-eps - tol, eps + tol)] * n
    res = linprog(np.zeros(N + n), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    return bool(res.status == 0)


def test_part_e_f_lie_in_the_enlarged_hull(setup, parts):
    for p in "EF":
        method, res = parts[p]
        assert len(res.counterfactuals)
        for _, row in _every_cf(res):
            assert _in_hull(method, row, W.TRUST_EPSILON)
    # and a part-D counterfactual that moves far from the data need not be in it:
    # the trust region is a real restriction (the paper's part D (c): age 75.52)
    method_e = parts["E"][0]
    d_rows = [row for _, row in _every_cf(parts["D"][1])]
    assert not all(_in_hull(method_e, row, W.TRUST_EPSILON) for row in d_rows)


def test_part_f_learned_causality(setup, parts):
    """credit_amount - x_credit = c(duration') - c(duration) with the learned MLP, within
    tolerance."""
    _method, res = parts["F"]
    rel = cf.Causal("credit_amount", ("duration_months",), model=setup.causal_model, tol=1e-2)
    rng = setup.train.schema["credit_amount"].range
    n = 0
    for x, row in _every_cf(res):
        r = rel.residual(x, row.to_frame().T)
        assert abs(float(r[0])) <= rel.tol * rng
        n += 1
    assert n > 0
    # the same relation is generally violated by part E's counterfactuals (it is a real constraint)
    e_res = [
        abs(float(rel.residual(x, row.to_frame().T)[0])) for x, row in _every_cf(parts["E"][1])
    ]
    assert max(e_res) > rel.tol * rng
