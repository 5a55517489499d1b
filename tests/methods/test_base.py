"""The base class: verification, statuses, seeding, parallel runs, bad input."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact._utils._validation import Interval
from counterfact.constraints._kinds import CONSTRAINT_KINDS
from counterfact.exceptions import NotFittedError, UnsupportedConstraintError, ValidationError
from counterfact.methods import Candidates, CounterfactualMethod, MethodTags
from counterfact.methods._pipeline._prepare import prepare


class RandomProbe(CounterfactualMethod):
    """Test method: samples rows inside the query's bounds; optionally proposes junk."""

    name: ClassVar[str] = "random_probe"
    #: checks its rows with ``verify``, so it honours every kind but causal relations
    tags: ClassVar[MethodTags] = MethodTags(
        display_name="random probe",
        summary="a test method",
        constraints=frozenset(CONSTRAINT_KINDS) - {"causal"},
    )
    _parameter_constraints: ClassVar[dict] = {"n_samples": [Interval(int, 1, None)]}

    def __init__(
        self,
        *,
        n_samples: int = 200,
        junk: bool = False,
        random_state: int | None = None,
        time_limit: float | None = None,
        verbose: int = 0,
    ):
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
        m.explain(
            test.X.iloc[:1],
            constraints=cf.Constraints(
                causal=[cf.Causal(child="b", parents=("a",), coef={"a": 1.0})]
            ),
        )
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
    assert {"query", "rank", "feature", "from", "to"} <= set(d.columns)
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
    per_row = [
        cf.Constraints(immutable=["c"]) if k % 2 else cf.Constraints(features_to_vary=["a"])
        for k in range(len(X))
    ]
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
    from counterfact.models._adapter import as_adapter

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


class CountingProbe(RandomProbe):
    """RandomProbe that records which queries reached the search."""

    name: ClassVar[str] = "counting_probe"
    calls: ClassVar[list] = []

    def _explain_one(self, query):
        CountingProbe.calls.append(query.id)
        return super()._explain_one(query)


def test_contradictory_row_is_invalid_others_explained(setting):
    """Per-row constraints: a row whose own constraints contradict themselves gets
    status 'invalid' with the reason; the other rows are explained; errors='raise'
    raises before any search starts."""
    train, test, model = setting
    X = test.X.iloc[:5]
    a2 = float(X.iloc[2]["a"])
    per_row = [
        cf.Constraints(),
        cf.Constraints(increasing=["c"]),  # 'c' is unordered: contradicts the schema
        cf.Constraints(immutable=["a"], ranges={"a": (a2 + 1, a2 + 5)}),  # contradicts the row
        cf.Constraints(decreasing=["a"], ranges={"a": (60, 70)}),  # no allowed value for 'a'
        None,
    ]
    m = CountingProbe(random_state=0).fit(model, train)
    CountingProbe.calls.clear()
    r = m.explain(X, n_counterfactuals=2, constraints=per_row)
    assert list(r.status.iloc[1:4]) == ["invalid"] * 3
    assert "unordered" in r.diagnostics.loc[X.index[1], "reason"]
    assert "immutable" in r.diagnostics.loc[X.index[2], "reason"]
    assert "'a'" in r.diagnostics.loc[X.index[3], "reason"]
    assert r.found.iloc[1:4].sum() == 0
    assert set(CountingProbe.calls) <= {X.index[0], X.index[4]}
    ok = [q for q in (X.index[0], X.index[4]) if r.status[q] != "invalid"]
    assert len(ok) == 2 and r.found[ok].sum() > 0
    # the same rows with a valid list give the same answers for the valid rows
    clean = m.explain(
        X,
        n_counterfactuals=2,
        constraints=[c if k in (0, 4) else None for k, c in enumerate(per_row)],
    )
    for q in ok:
        pd.testing.assert_frame_equal(clean.for_query(q), r.for_query(q))
    # errors="raise": today's behaviour, and nothing is searched first
    CountingProbe.calls.clear()
    with pytest.raises(cf.ConstraintError, match="unordered"):
        m.explain(X, constraints=per_row, errors="raise")
    with pytest.raises(cf.ConstraintError, match="immutable"):
        m.explain(X, constraints=[None, None, per_row[2], None, None], errors="raise")
    assert CountingProbe.calls == []
    # a shared Constraints that contradicts itself still raises; one the row cannot reach is
    # infeasible
    with pytest.raises(cf.ConstraintError):
        m.explain(X, constraints=per_row[1])
    assert (m.explain(X.iloc[:2], constraints=per_row[3]).status == "infeasible").all()
    with pytest.raises(ValidationError, match="errors must be"):
        m.explain(X, errors="ignore")


def test_time_limit_inf_rejected(setting):
    train, _, model = setting
    with pytest.raises(ValidationError, match="time_limit=None"):
        RandomProbe(time_limit=float("inf")).fit(model, train)
    with pytest.raises(ValidationError, match="time_limit=None"):
        cf.NearestObservable(time_limit=np.inf).fit(model, train)
    RandomProbe(time_limit=None).fit(model, train)


def test_summary_line_counts_reasons():
    from counterfact._utils._progress import summary_line

    st = pd.Series(["feasible", "failed", "failed", "timeout", "invalid", "optimal"])
    diag = pd.DataFrame(
        {
            "reason": [
                None,
                "no admissible observed row of the target class",
                "no admissible observed row of the target class",
                "time limit",
                "bad",
                None,
            ]
        }
    )
    line = summary_line(st, diag)
    assert line.startswith(
        "4/6 queries got no counterfactual: 2 no admissible observed row of the target class"
    )
    assert "1 timeout (time limit)" in line and "1 invalid: bad" in line
    assert summary_line(st.iloc[[0, 5]], diag.iloc[[0, 5]]) == "2/2 queries got a counterfactual"


class BoundaryProbe(CounterfactualMethod):
    """Test method: moves only 'b', to just across the model's decision boundary."""

    name: ClassVar[str] = "boundary_probe"

    def __init__(
        self, *, claim: str = "optimal", random_state: int | None = None, verbose: int = 0
    ):
        self.claim = claim
        self.random_state = random_state
        self.verbose = verbose

    def _explain_one(self, query):
        x = query.x
        grid = np.linspace(-6, 6, 241)
        rows = pd.DataFrame({n: [x[n]] * len(grid) for n in x.index})
        rows["b"] = grid
        hit = np.flatnonzero(self.model_.predict(rows) == query.target)
        if hit.size == 0:
            return Candidates(rows.iloc[0:0], "failed", {})
        far = grid[hit[np.argmin(np.abs(grid[hit] - x["b"]))]]
        path = np.linspace(float(x["b"]), float(far), 20001)
        rows = pd.DataFrame({n: [x[n]] * len(path) for n in x.index})
        rows["b"] = path
        first = int(np.flatnonzero(self.model_.predict(rows) == query.target)[0])
        row = x.copy()
        row["b"] = path[first]
        return Candidates(pd.DataFrame([row]), self.claim, {})


@pytest.fixture(scope="module")
def money_setting():
    rng = np.random.default_rng(1)
    n = 400
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 50, n),
            "b": np.round(rng.normal(0, 1, n), 2),
            "c": rng.choice(["x", "y", "z"], n),
        }
    )
    frame["y"] = ((frame["a"] / 50 + frame["b"] + (frame["c"] == "z")) > 1.0).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    train, test = data.split(random_state=0)
    return train, test, cf.models.fit(train, "lr")


@pytest.mark.parametrize("claim", ["optimal", "feasible"])
def test_snapped_to_resolution_and_verified(claim, money_setting):
    """Reported values lie on the feature's grid and are the verified ones; an
    'optimal' claim is rounded away from the query (the change never shrinks)."""
    train, test, model = money_setting
    assert train.schema["b"].resolution == 0.01
    m = BoundaryProbe(claim=claim).fit(model, train)
    X = test.X.iloc[:12]
    raw = {
        t.id: m._explain_one(t).frame
        for t in prepare(m, X, 1, None, None)[0]
        if t.predicted != t.target
    }
    r = m.explain(X)
    assert r.found.sum() >= 8
    cfs = r.counterfactuals
    b = cfs["b"].to_numpy(dtype=float)
    assert np.allclose(b * 100, np.round(b * 100), atol=1e-6), b
    assert (model.predict(cfs) == r.target.loc[cfs.index.get_level_values(0)].to_numpy()).all()
    for (q, _), row in cfs.iterrows():
        x_b, raw_b = float(X.loc[q, "b"]), float(raw[q]["b"].iloc[0])
        assert abs(float(row["b"]) - raw_b) < 0.01 + 1e-9  # at most one step
        if claim == "optimal":
            assert abs(float(row["b"]) - x_b) >= abs(raw_b - x_b) - 1e-12
            assert r.status[q] == "optimal" and bool(r.diagnostics.loc[q, "snapped"])
            assert 0 < r.diagnostics.loc[q, "snap_shift"] <= 0.01 / train.schema["b"].range + 1e-12
    assert (r.diagnostics["n_snapped"].fillna(0) >= 0).all() and r.diagnostics[
        "n_snapped"
    ].sum() >= 8


def test_allowed_value_off_the_grid_is_kept(money_setting):
    """A numeric value the user allowed explicitly is not snapped away from."""
    train, test, model = money_setting
    X = test.X.iloc[:6]
    allowed = [-2.005, 0.125, 1.555, 2.345, 2.995]  # off the 0.01 grid
    c = cf.Constraints(allowed_values={"b": allowed})

    class AllowedProbe(RandomProbe):
        def _explain_one(self, query):
            rows = []
            for v in query.bounds["b"].values:
                row = query.x.copy()
                row["b"] = v
                rows.append(row)
            return Candidates(pd.DataFrame(rows), "feasible", {})

    r = (
        AllowedProbe(random_state=0)
        .fit(model, train)
        .explain(X, constraints=c, n_counterfactuals=3)
    )
    assert r.found.sum() > 0
    assert r.diagnostics["n_snapped"].sum() == 0
    for (q, _), row in r.counterfactuals.iterrows():
        b = float(row["b"])
        assert any(abs(b - a) < 1e-9 for a in allowed) or abs(b - float(X.loc[q, "b"])) < 1e-9


def test_sparsify_typed_frame_is_coerce_of_the_object_matrix():
    """The sparsifier's variant frames are exactly ``Schema.coerce`` of their object
    matrix, also when a numeric cell is text (then it goes through coerce itself)."""
    from counterfact.methods._pipeline._sparsify import _typed_frame

    data = cf.datasets.load("german_credit")
    schema = data.schema
    var = schema.validate_frame(data.X.iloc[:25]).to_numpy(dtype=object)
    numeric = np.array([f.is_numeric for f in schema], dtype=bool)
    want = schema.coerce(pd.DataFrame(var, columns=schema.names))
    pd.testing.assert_frame_equal(_typed_frame(schema, var, numeric), want)
    j = int(np.flatnonzero(numeric)[0])
    var[3, j] = str(var[3, j])
    pd.testing.assert_frame_equal(
        _typed_frame(schema, var, numeric), schema.coerce(pd.DataFrame(var, columns=schema.names))
    )


class CancelsOnFirst(CounterfactualMethod):
    """Cancels the call from inside its first search (as a client that goes away would)."""

    name = "cancels_on_first"
    tags = MethodTags(display_name="cancels on first", summary="a test method")

    def __init__(self, *, random_state: int | None = None) -> None:
        self.random_state = random_state
        self.searched: list[Any] = []

    def _explain_one(self, query):
        self.searched.append(query.id)
        assert not query.deadline.expired()
        query.cancel.cancel()
        assert query.deadline.expired() and query.deadline.seconds() == 0.0
        return Candidates(
            pd.DataFrame(columns=self.schema_.names), "timeout", {"reason": "stopped"}
        )


def test_a_cancelled_call_stops_and_says_so():
    """A token cancelled before the call: no query is searched; cancelled during the
    call: the queries not yet started are not searched, and each says why."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = cf.rows_to_explain(model, test).head(4)
    token = cf.methods.CancelToken()
    token.cancel()
    r = cf.MACE(time_limit=10).fit(model, train).explain(X, cancel=token)
    assert (r.status == "timeout").all() and r.reason.str.contains("cancelled").all()
    m = CancelsOnFirst().fit(model, train)
    r = m.explain(X, cancel=cf.methods.CancelToken())
    assert m.searched == [X.index[0]]
    assert r.reason.iloc[0] == "stopped" and r.reason.iloc[1:].str.contains("cancelled").all()


def test_a_row_outside_the_domain_is_warned_about_not_changed(setting):
    """A numeric value outside its feature's range is accepted (a real person) but named
    in one warning per call, with the range; rows inside the domain stay silent."""
    train, test, model = setting
    m = RandomProbe(random_state=0).fit(model, train)
    X = test.X.iloc[:3].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.explain(X)  # inside the domain: no warning
    X.iloc[1, X.columns.get_loc("a")] = 500
    X.iloc[2, X.columns.get_loc("b")] = -1e6
    before = X.copy()
    with pytest.warns(UserWarning, match="2 values outside") as caught:
        r = m.explain(X)
    text = " ".join(str(w.message) for w in caught)
    assert f"row {int(X.index[1])} has a 500" in text and "range 0 to 49" in text
    assert f"row {int(X.index[2])} has b -1000000" in text
    pd.testing.assert_frame_equal(X, before)
    assert r.queries.loc[X.index[1], "a"] == 500
    from counterfact.methods._pipeline._batch import explain_in_chunks

    with pytest.warns(UserWarning) as chunked:  # once for the run, not once per chunk
        explain_in_chunks(m, X, chunk_size=1)
    said = [str(w.message) for w in chunked if "outside" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("The rows to explain hold 2 values")
    assert chunked[0].filename == __file__


def test_a_target_is_kept_as_the_models_own_class(setting):
    """target=1.0 names the class 1: the result and its words say 1, not 1.0."""
    train, test, model = setting
    m = RandomProbe(random_state=0).fit(model, train)
    r = m.explain(test.X.iloc[:2], target=1.0)
    assert [type(t) for t in r.target] == [int, int] and r.target.tolist() == [1, 1]
    assert "P(1.0)" not in r.describe()
