"""The vote-share rule (``Requirements(min_vote_share=...)``) on a small forest: MACE's and
CE-OCL's optima under the rule equal brute force over the whole (small) domain, and every
answer of every method meets the rule by the real trees' votes."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._votes import votes_needed
from counterfact.exceptions import UnsupportedModelError, ValidationError
from counterfact.models import ModelAdapter
from counterfact.models._votes import tree_votes

pytest.importorskip("z3")

#: German Credit on five features small enough to enumerate (4 x 69 x 5 x 4 x 3 rows)
COLUMNS = ["checking_status", "duration_months", "savings", "installment_rate", "housing"]
SHARE = 0.8  # 8 of the 9 trees
#: a measure without a charge per change: each move in MADs (a convex cost per feature)
MEASURE = "smallest-moves"


@pytest.fixture(scope="module")
def setting():
    full = cf.datasets.load("german_credit")
    schema = cf.Schema([full.schema[c] for c in COLUMNS], target=full.target)
    data = cf.Dataset(full.frame[[*COLUMNS, full.target]], schema, name="german_credit_5")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=9, max_depth=4)
    X = cf.rows_to_explain(model, test).head(4)
    return data.schema, train, model, X


def _grid(schema: cf.Schema) -> pd.DataFrame:
    values = []
    for f in schema:
        if f.kind == "integer":
            values.append(np.arange(int(f.lower), int(f.upper) + 1))
        else:
            values.append(list(f.categories))
    frame = pd.DataFrame(list(itertools.product(*values)), columns=schema.names)
    for f in schema:
        if f.kind == "ordinal":
            frame[f.name] = pd.Categorical(frame[f.name], categories=f.categories, ordered=True)
    return frame


def _allowed(schema: cf.Schema, grid: pd.DataFrame, q: pd.Series) -> np.ndarray:
    """The grid rows the schema's actionability allows from ``q`` (ordinals that may only
    increase)."""
    ok = np.ones(len(grid), dtype=bool)
    for f in schema:
        if f.actionability == "increasing" and f.kind == "ordinal":
            rank = {c: i for i, c in enumerate(f.categories)}
            ok &= grid[f.name].map(rank).astype(int).to_numpy() >= rank[q[f.name]]
    return ok


def _brute(schema, model, costs, q: pd.Series, target, share: float | None) -> float:
    """The least cost of a domain point the forest sends to ``target`` (with at least
    ``share`` of its trees' votes)."""
    grid = _grid(schema)
    grid = grid[_allowed(schema, grid, q)]
    adapter = ModelAdapter(model, schema)
    ok = adapter.predict(grid) == target
    if share is not None:
        votes = tree_votes(adapter, grid)[:, adapter.class_index(target)]
        ok &= votes >= votes_needed(share, 9)
    cost = costs.evaluate(q, grid[ok])
    return float(cost.min()) if len(cost) else np.inf


def _check(result, schema, model, X, share):
    adapter = ModelAdapter(model, schema)
    cfs = result.counterfactuals
    assert len(cfs), "no answers"
    tgt = result.target.loc[cfs.index.get_level_values(0)].to_numpy()
    votes = tree_votes(adapter, cfs.loc[:, schema.names])
    cols = [adapter.class_index(t) for t in tgt]
    got = votes[np.arange(len(cfs)), cols]
    assert (got >= votes_needed(share, 9)).all(), got
    cost = result.cost()
    for qid in X.index:
        best = _brute(schema, model, result.costs, X.loc[qid], result.target[qid], share)
        if not np.isfinite(best):
            assert result.status[qid] == "infeasible"
            continue
        assert result.status[qid] == "optimal", result.status[qid]
        found = float(cost.loc[(qid, 0)])
        assert best - 1e-6 <= found <= best * (1 + result.diagnostics.loc[qid, "rel_gap"]) + 1e-6
    return got


@pytest.mark.parametrize("method", ["MACE-z3", "MACE-cpsat", "CEOCL"])
def test_vote_share_equals_brute_force(setting, method):
    schema, train, model, X = setting
    name, _, solver = method.partition("-")
    kw = {"solver": solver} if solver else {}
    fitted = getattr(cf, name)(random_state=0, **kw).fit(model, train)
    req = cf.Requirements(min_vote_share=SHARE, costs=MEASURE)
    result = fitted.explain(X, requirements=req)
    got = _check(result, schema, model, X, SHARE)
    plain = fitted.explain(X, requirements=cf.Requirements(costs=MEASURE))
    # the rule binds: without it some answer has fewer votes, and it costs no more
    adapter = ModelAdapter(model, schema)
    first = plain.counterfactuals.xs(0, level=1)
    tgt = [adapter.class_index(t) for t in plain.target.loc[first.index]]
    before = tree_votes(adapter, first.loc[:, schema.names])[np.arange(len(first)), tgt]
    assert before.min() < got.min()
    assert (plain.cost().xs(0, level=1) <= result.cost().xs(0, level=1) + 1e-9).all()


def test_heuristic_answers_meet_the_rule(setting):
    """A search that does not encode the rule: the shared checker keeps only answers with
    enough votes."""
    schema, train, model, X = setting
    result = (
        cf.NearestObservable(random_state=0)
        .fit(model, train)
        .explain(X, requirements=cf.Requirements(min_vote_share=SHARE))
    )
    adapter = ModelAdapter(model, schema)
    cfs = result.counterfactuals
    assert len(cfs)
    cols = [adapter.class_index(t) for t in result.target.loc[cfs.index.get_level_values(0)]]
    votes = tree_votes(adapter, cfs.loc[:, schema.names])[np.arange(len(cfs)), cols]
    assert (votes >= votes_needed(SHARE, 9)).all()


def test_vote_share_for():
    # T = 9 trees decide by majority (5 votes): tau solves P[Binomial(9, tau) >= 5] = 1 - alpha
    from scipy import stats

    for n, alpha in [(9, 0.05), (100, 0.01), (30, 0.2)]:
        tau = cf.vote_share_for(n, alpha)
        assert stats.binom.sf(n // 2, n, tau) == pytest.approx(1 - alpha, abs=1e-9)
        assert 0.5 < tau < 1
    assert cf.vote_share_for(1, 0.05) == pytest.approx(0.95)
    assert cf.vote_share_for(100, 0.01) > cf.vote_share_for(100, 0.05)
    assert votes_needed(0.8, 9) == 8 and votes_needed(2 / 3, 9) == 6
    with pytest.raises(ValidationError, match="alpha"):
        cf.vote_share_for(10, 0.7)
    with pytest.raises(ValidationError, match="min_vote_share"):
        cf.Requirements(min_vote_share=1.5)


def test_refused_for_other_models(setting):
    _, train, _, X = setting
    lr = cf.models.fit(train, "lr", random_state=0)
    mace = cf.MACE(random_state=0).fit(lr, train)
    with pytest.raises(UnsupportedModelError, match="RandomForestClassifier"):
        mace.explain(X.head(1), requirements=cf.Requirements(min_vote_share=SHARE))
    # a model in robust_to that is no forest: the way out names it, not robust_to itself
    forest = cf.models.fit(train, "rf", random_state=0, n_estimators=9, max_depth=4)
    near = cf.methods.get("nearest").fit(forest, train)
    mixed = cf.Requirements(min_vote_share=SHARE, robust_to=[lr])
    with pytest.raises(UnsupportedModelError, match=r"drop robust_to\[0\], or drop min_vote_share"):
        near.explain(X.head(1), requirements=mixed)


def test_robustness_keeps_the_users_vote_share(setting):
    """``robustness`` climbs its own ladder of vote shares and margins; a ``min_vote_share``
    the user asked for stays in every setting (it was dropped once), like the user's
    margin, and the result records it."""
    from counterfact.methods._pipeline._robustness import Setting, ladder

    rungs = ladder(None, 0.95, n_trees=9, vote_floor=SHARE)
    assert rungs[0].words() == "vote share 0.8"
    # the share written asks for the trees the answers got: 13 of 15 is 0.8666, not 0.87
    # (ceil(0.87 * 15) is 14 trees)
    thirteen = Setting(None, 0, 13 / 15)
    assert thirteen.words() == "vote share 0.8666"
    assert votes_needed(float(thirteen.words().split()[-1]), 15) == 13
    assert all(votes_needed(s.vote_share, 9) >= votes_needed(SHARE, 9) for s in rungs)
    assert [s.vote_share for s in rungs].count(SHARE) == len(rungs) - 1  # and 9 of 9 trees
    schema, train, model, X = setting
    method = cf.MACE(time_limit=20, random_state=0).fit(model, train)
    req = cf.Requirements(robustness=0.6, min_vote_share=SHARE, costs=MEASURE)
    result = method.explain(X, requirements=req)
    assert result.requirements["min_vote_share"] == SHARE
    cfs = result.counterfactuals
    assert len(cfs) > 0
    votes = tree_votes(ModelAdapter(model), cfs.loc[:, schema.names])
    targets = result.target.loc[cfs.index.get_level_values(0)].to_numpy()
    classes = list(model.classes_)
    got = votes[np.arange(len(cfs)), [classes.index(t) for t in targets]]
    assert (got >= votes_needed(SHARE, 9)).all()
    assert result.robustness()["setting"].str.contains("vote share").all()
    back = cf.CounterfactualResult.from_json(result.to_json())
    assert back.requirements == result.requirements


def test_the_certificate_says_what_the_answers_were_held_to(setting):
    """A proof under a vote share or a margin speaks of the answers that meet it: "no
    counterfactual exists" under all nine trees' votes is not "none crosses the boundary"
    (the plain decision has answers), so both wordings end with what was required, after
    a JSON round trip too; a plain result's do not."""
    _, train, _, X = setting
    model = cf.models.fit(train, "rf", random_state=0, n_estimators=9, max_depth=4)
    mace = cf.MACE(time_limit=20, random_state=0).fit(model, train)
    row = X.iloc[[1]]  # with three features kept, no change wins all nine trees
    q = row.index[0]
    fixed = cf.Constraints(immutable=["checking_status", "savings", "housing"])
    plain = mace.explain(row, constraints=fixed)
    assert plain.found[q] > 0
    cases = {
        cf.Requirements(min_vote_share=1.0): "; required: at least 100 % of the trees' votes",
        cf.Requirements(min_probability=0.6, min_vote_share=SHARE): (
            "; required: a probability of at least 0.6 for the target, at least 80 % of the "
            "trees' votes"
        ),
    }
    statuses = set()
    for req, said in cases.items():
        result = mace.explain(row, constraints=fixed, requirements=req)
        statuses.add(result.status[q])
        back = cf.CounterfactualResult.from_json(result.to_json())
        for r in (result, back):
            for numbers in (True, False):
                assert r.certificate(q, numbers=numbers).endswith(said), r.certificate(q)
    assert statuses == {"infeasible", "optimal"}
    # a method that found nothing says what its search was held to as well
    nearest = cf.methods.get("nearest").fit(model, train)
    none = nearest.explain(row, constraints=fixed, requirements=cf.Requirements(min_vote_share=1.0))
    assert none.found[q] == 0
    assert none.certificate(q).endswith("; required: at least 100 % of the trees' votes")
    for numbers in (True, False):
        assert "required:" not in plain.certificate(q, numbers=numbers)
