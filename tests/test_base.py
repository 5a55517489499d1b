"""The base class: verification, statuses, seeding, parallel runs, bad input."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact._validation import Interval
from counterfact.exceptions import NotFittedError, UnsupportedConstraintError, ValidationError
from counterfact.methods import Candidates, CounterfactualMethod


class RandomProbe(CounterfactualMethod):
    """Test method: samples rows inside the query's bounds; optionally proposes junk."""

    name: ClassVar[str] = "random_probe"
    _parameter_constraints: ClassVar[dict] = {"n_samples": [Interval(int, 1, None)]}

    def __init__(self, *, n_samples: int = 200, junk: bool = False, random_state: int | None = None, time_limit: float | None = None, verbose: int = 0):
        self.n_samples = n_samples
        self.junk = junk
        self.random_state = random_state
        self.time_limit = time_limit
        self.verbose = verbose

    def _explain_one(self, query):
        rows = []
        for _ in range(self.n_samples):
            row = {}
            for b in query.bounds.features:
                f = b.feature
                if f.is_numeric:
                    v = query.rng.uniform(b.lower, b.upper)
                    row[f.name] = round(v) if f.kind == "integer" else v
                else:
                    row[f.name] = b.values[query.rng.integers(len(b.values))]
            rows.append(row)
        frame = pd.DataFrame(rows)
        if self.junk:
            bad = frame.iloc[:5].copy()
            bad[frame.columns[0]] = -1e9  # out of domain
            frame = pd.concat([bad, query.x.to_frame().T, frame], ignore_index=True)
        return Candidates(frame, "feasible", {"probe": True})


@pytest.fixture(scope="module")
def setting():
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 50, n),
            "b": rng.normal(0, 1, n),
            "c": rng.choice(["x", "y", "z"], n),
        }
    )
    frame["y"] = ((frame["a"] / 50 + frame["b"] + (frame["c"] == "z")) > 1.0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    train, test = data.split(random_state=0)
    model = cf.models.fit(train, "lr")
    return train, test, model


def test_verification_drops_invalid(setting):
    train, test, model = setting
    m = RandomProbe(junk=True, random_state=0).fit(model, train)
    X = test.X.iloc[:6]
    r = m.explain(X, n_counterfactuals=3)
    assert set(r.status) <= {"feasible", "failed"}
    for q in X.index:
        cfs = r.for_query(q)
        if len(cfs):
            assert (model.predict(cfs) == r.target[q]).all()
            assert (cfs["a"] >= 0).all()
            assert r.diagnostics.loc[q, "n_rejected_constraints"] >= 5
            assert r.diagnostics.loc[q, "probe"]
    assert r.found.sum() > 0
    assert r.confidence.notna().all() and (r.confidence >= 0.5).all()


def test_statuses_and_infeasible(setting):
    train, test, model = setting
    x = test.X.iloc[:3]
    c = cf.Constraints(decreasing=["a"], ranges={"a": (60, 70)})  # cannot be reached
    r = RandomProbe(random_state=0).fit(model, train).explain(x, constraints=c)
    assert (r.status == "infeasible").all() and r.found.sum() == 0


def test_reproducible_and_parallel(setting):
    train, test, model = setting
    X = test.X.iloc[:8]
    r1 = RandomProbe(random_state=3).fit(model, train).explain(X, n_counterfactuals=2)
    r2 = RandomProbe(random_state=3).fit(model, train).explain(X, n_counterfactuals=2, n_jobs=2)
    pd.testing.assert_frame_equal(r1.counterfactuals, r2.counterfactuals)


def test_params_and_errors(setting):
    train, test, model = setting
    with pytest.raises(NotFittedError, match="fit"):
        RandomProbe().explain(test.X.iloc[:1])
    with pytest.raises(ValidationError, match="'n_samples' parameter of RandomProbe"):
        RandomProbe(n_samples=0).fit(model, train)
    with pytest.raises(ValidationError, match="'random_state' parameter"):
        RandomProbe(random_state=-1).fit(model, train)
    with pytest.raises(ValidationError, match="no parameter"):
        RandomProbe().set_params(n_sample=3)
    m = RandomProbe(random_state=0).fit(model, train)
    with pytest.raises(ValidationError, match="n_counterfactuals"):
        m.explain(test.X.iloc[:1], n_counterfactuals=0)
    with pytest.raises(ValidationError, match="not a class"):
        m.explain(test.X.iloc[:1], target=5)
    with pytest.raises(UnsupportedConstraintError, match="causal"):
        m.explain(test.X.iloc[:1], constraints=cf.Constraints(causal=[cf.Causal(child="b", parents=("a",), coef={"a": 1.0})]))
    with pytest.raises(cf.UnsupportedModelError):
        RandomProbe().fit(object(), train)
    assert repr(RandomProbe(n_samples=5)) == "RandomProbe(n_samples=5)"


def test_multiclass_needs_target():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    frame["y"] = np.digitize(frame["a"] + frame["b"], [-0.5, 0.5])
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "lr")
    m = RandomProbe(random_state=0).fit(model, data)
    with pytest.raises(ValidationError, match="target="):
        m.explain(data.X.iloc[:2])
    x = data.X[model.predict(data.X) == 0].iloc[:3]
    r = m.explain(x, target=2)
    assert (r.target == 2).all()
    for q in x.index:
        cfs = r.for_query(q)
        assert (model.predict(cfs) == 2).all()


def test_result_api(setting, tmp_path):
    train, test, model = setting
    r = RandomProbe(random_state=0).fit(model, train).explain(test.X.iloc[:4], n_counterfactuals=2)
    assert "->" in r.describe()
    d = r.diffs()
    assert set(d.columns) == {"query", "rank", "feature", "from", "to"}
    assert "<h4>" in r._repr_html_()
    r2 = cf.CounterfactualResult.from_json(r.to_json())
    pd.testing.assert_frame_equal(r.counterfactuals, r2.counterfactuals, check_dtype=False)
    r.to_csv(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().startswith("query,rank")
    both = cf.CounterfactualResult.concat([r, r2])
    assert len(both) == 2 * len(r)


def test_constraints_per_row(setting):
    """One Constraints per row: each query is searched, verified, stored and scored
    under its own; the list and its entries are not mutated."""
    train, test, model = setting
    X = test.X.iloc[:6]
    per_row = [cf.Constraints(immutable=["c"]) if k % 2 else cf.Constraints(features_to_vary=["a"]) for k in range(len(X))]
    before = [c.to_dict() for c in per_row]
    m = RandomProbe(random_state=0).fit(model, train)
    r = m.explain(X, n_counterfactuals=3, constraints=per_row)
    assert [c.to_dict() for c in per_row] == before and len(per_row) == 6
    assert r.constraints is None and len(r.query_constraints) == len(X)
    for k, q in enumerate(X.index):
        assert r.constraints_for(q) is per_row[k]
        cfs = r.for_query(q)
        if k % 2:
            assert (cfs["c"] == X.loc[q, "c"]).all()
        else:  # only 'a' may move
            assert (cfs["c"] == X.loc[q, "c"]).all() and np.allclose(cfs["b"], X.loc[q, "b"])
    assert r.found.sum() > 0
    # the same answers as a call where every row has that row's constraints (same seeds)
    for k in (0, 1):
        shared = m.explain(X, n_counterfactuals=3, constraints=per_row[k])
        for q in X.index[k::2]:
            pd.testing.assert_frame_equal(shared.for_query(q), r.for_query(q))
    # metrics read each query's own constraints: no violations anywhere
    assert (cf.metrics.violation_counts(r)["total"] == 0).all()
    # it round-trips through JSON and survives concat with a differently constrained part
    back = cf.CounterfactualResult.from_json(r.to_json())
    assert back.constraints_for(X.index[0]).to_dict() == per_row[0].to_dict()
    other = m.explain(test.X.iloc[6:8], constraints=cf.Constraints(max_changes=1))
    joined = cf.CounterfactualResult.concat([r, other])
    assert joined.constraints is None
    assert joined.constraints_for(test.X.index[7]).max_changes == 1
    assert joined.constraints_for(X.index[1]).to_dict() == per_row[1].to_dict()
    same = cf.CounterfactualResult.concat([other, other])
    assert same.constraints is not None and same.query_constraints is None


def test_constraints_per_row_errors(setting):
    train, test, model = setting
    m = RandomProbe(random_state=0).fit(model, train)
    with pytest.raises(ValidationError, match="2 entries for 3 rows"):
        m.explain(test.X.iloc[:3], constraints=[cf.Constraints(), cf.Constraints()])
    with pytest.raises(ValidationError, match=r"constraints\[1\] must be a cf.Constraints"):
        m.explain(test.X.iloc[:2], constraints=[cf.Constraints(), {"immutable": ["a"]}])


@pytest.mark.parametrize("kind", ["lr", "svm", "tree", "rf", "gbm", "mlp"])
def test_predict_with_proba_is_the_models_own(kind, setting):
    """One preprocessing pass, the final estimator's own predict and predict_proba:
    identical to the pipeline's two calls (SVC's predict is not an argmax of its
    probabilities, so this also checks that no argmax is taken)."""
    from counterfact.models import as_adapter

    train, test, _ = setting
    model = cf.models.fit(train, kind, random_state=0)
    ad = as_adapter(model, train.schema)
    rng = np.random.default_rng(0)
    X = pd.concat([test.X, train.X.sample(200, random_state=0)])
    X = X.assign(b=X["b"] + rng.normal(0, 0.3, len(X)))  # off the training points
    pred, proba = ad.predict_with_proba(X)
    np.testing.assert_array_equal(pred, model.predict(X))
    np.testing.assert_array_equal(proba, model.predict_proba(X))
    p0, q0 = ad.predict_with_proba(X.iloc[0:0])
    assert p0.shape == (0,) and q0.shape == (0, 2)
