"""L2C: conformance, the exact torch mirror, the score-function path, masks, save/load."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing import make_setting

torch = pytest.importorskip("torch")

from counterfact.methods.l2c import L2C, TrainingOptions  # noqa: E402
from counterfact.methods.l2c._blackbox import mirror_of  # noqa: E402
from counterfact.methods.l2c._networks import build_mlp  # noqa: E402
from counterfact.methods.l2c._representation import Representation  # noqa: E402
from counterfact.methods.l2c._training import TrainConfig, cap_changes, train  # noqa: E402


def small(training=None, **kw):
    """A fast L2C for tests (the paper's lr 1e-4 / 200 epochs take longer);
    ``training``: fields of :class:`TrainingOptions` that replace the fast ones."""
    options = TrainingOptions(
        **{"max_epochs": 12, "learning_rate": 3e-3, "patience": 5, **(training or {})}
    )
    return L2C(training=options, **{"n_samples": 40, "random_state": 0, "device": "cpu", **kw})


@pytest.fixture(scope="module")
def lr_setting():
    return make_setting("lr")


@pytest.fixture(scope="module")
def fitted(lr_setting):
    return small().fit(lr_setting.model, lr_setting.train)


def test_registry_and_lazy_class():
    assert cf.methods.get_class("l2c") is L2C
    assert cf.L2C is L2C
    assert isinstance(cf.methods.get("l2c", n_samples=5), L2C)


# ------------------------------------------------------------ representation
def test_representation_bins_and_decoding(lr_setting):
    train = lr_setting.train
    X = train.X.reset_index(drop=True)
    rep = Representation.from_data(train.schema, X, n_bins=4, min_count=40)
    for f in rep.features:
        if f.numeric:
            assert 1 <= f.size <= 4
            lv = rep.levels(X)[:, train.schema.index(f.name)]
            counts = np.bincount(lv, minlength=f.size)
            assert f.size == 1 or counts.min() >= 40, (f.name, counts)
            assert np.all(f.rep >= f.lo) and np.all(f.rep <= np.maximum(f.lo, f.hi))
    levels = rep.levels(X)
    values = rep.values(X)
    lower, upper, allowed, _ = rep.schema_bounds(levels, values)
    table, mask = rep.tables(levels, values, lower, upper, allowed)
    # own levels decode to the row itself
    # every row's own level is admissible under the schema's bounds
    assert mask[np.arange(len(X))[:, None], rep.starts[None, :] + levels].all()
    back = rep.decode(levels, np.arange(len(X)), table)
    pd.testing.assert_frame_equal(
        train.schema.coerce(back), train.schema.coerce(X), check_dtype=False
    )
    # random admissible levels decode to coherent, in-domain rows, vectorised
    rng = np.random.default_rng(0)
    owner = rng.integers(0, len(X), size=5000)
    cand = np.stack([rng.integers(0, s, size=owner.size) for s in rep.sizes], axis=1)
    frame = rep.decode(cand, owner, table)
    for f in train.schema:
        col = frame[f.name]
        if f.kind == "integer":
            assert pd.api.types.is_integer_dtype(col)
        assert all(f.contains(v) for v in col.head(500)), f.name
    # changed numeric values are the (clipped) bin representatives
    j = next(i for i, f in enumerate(rep.features) if f.numeric and f.size > 1)
    f = rep.features[j]
    other = levels[owner, j] != cand[:, j]
    assert np.isin(frame[f.name].to_numpy()[other], f.rep).mean() > 0.9


def test_representative_midpoint_or_median():
    """A changed numeric feature decodes to its bin's mid-point (paper) or the bin's median."""
    rng = np.random.default_rng(3)
    v = np.concatenate([rng.exponential(1.0, 300), [0.0, 20.0]])
    X = pd.DataFrame({"v": v})
    schema = cf.Schema((cf.Feature("v", "real", lower=0.0, upper=20.0),), target="y")
    mid = Representation.from_data(schema, X, n_bins=4, min_count=40)
    med = Representation.from_data(schema, X, n_bins=4, min_count=40, representative="median")
    fm, fd = mid.features[0], med.features[0]
    assert fm.size == fd.size == 4
    np.testing.assert_allclose(fm.rep, 0.5 * (fm.edges[:-1] + fm.edges[1:]))
    own = med.levels(X)[:, 0]
    np.testing.assert_allclose(fd.rep, [np.median(v[own == j]) for j in range(4)])
    # skewed data: the last bin's median sits well below its mid-point
    assert fd.rep[-1] < fm.rep[-1]
    # decoding a changed level gives the representative, an unchanged one the row's own value
    lv = med.levels(X)
    lower, upper, allowed, _ = med.schema_bounds(lv, med.values(X))
    table, _ = med.tables(lv, med.values(X), lower, upper, allowed)
    row = int(np.flatnonzero(own == 0)[0])
    back = med.decode(np.array([[3], [0]]), np.array([row, row]), table)
    assert back["v"].tolist() == [fd.rep[3], v[row]]


def test_representation_json_roundtrip(fitted):
    rep = fitted.representation_
    again = Representation.from_dict(rep.schema, rep.to_dict())
    assert again.to_dict() == rep.to_dict()
    assert again.n_columns == rep.n_columns


# ------------------------------------------------------------------- mirror
@pytest.mark.parametrize("kind", ["lr", "mlp"])
def test_mirror_equals_sklearn_predict_proba(kind, lr_setting):
    train = lr_setting.train
    model = cf.models.fit(train, kind, random_state=0)
    X = train.X.reset_index(drop=True)
    rep = Representation.from_data(train.schema, X, n_bins=4, min_count=20)
    mirror = mirror_of(torch, model, rep, dtype=torch.float64)
    assert mirror is not None
    levels, values = rep.levels(X), rep.values(X)
    lower, upper, allowed, _ = rep.schema_bounds(levels, values)
    table, _ = rep.tables(levels, values, lower, upper, allowed)
    rng = np.random.default_rng(1)
    owner = rng.integers(0, len(X), size=2000)
    cand = np.stack([rng.integers(0, s, size=owner.size) for s in rep.sizes], axis=1)
    frame = rep.decode(cand, owner, table)
    z = torch.as_tensor(rep.onehot(cand), dtype=torch.float64)
    got = mirror(z, torch.as_tensor(table[owner], dtype=torch.float64)).exp().numpy()
    np.testing.assert_allclose(got, model.predict_proba(frame), rtol=0, atol=1e-10)


def _largest_mirror_error(mirror, model, rep, X):
    """The largest gap between the mirror's and the model's probabilities on random rows."""
    levels, values = rep.levels(X), rep.values(X)
    lower, upper, allowed, _ = rep.schema_bounds(levels, values)
    table, _ = rep.tables(levels, values, lower, upper, allowed)
    rng = np.random.default_rng(3)
    owner = rng.integers(0, len(X), size=1000)
    cand = np.stack([rng.integers(0, s, size=owner.size) for s in rep.sizes], axis=1)
    z = torch.as_tensor(rep.onehot(cand), dtype=torch.float64)
    got = mirror(z, torch.as_tensor(table[owner], dtype=torch.float64)).exp().numpy()
    return np.max(np.abs(got - model.predict_proba(rep.decode(cand, owner, table))))


@pytest.mark.filterwarnings("ignore::UserWarning")  # the tanh network's convergence
def test_mirror_is_translated_from_the_compiled_model(lr_setting):
    """Any pipeline the compiler folds is mirrored exactly (here a min-max scaler, not the
    standard pipeline's); networks the compiler refuses (tanh) use the score function."""
    from sklearn.preprocessing import MinMaxScaler

    train = lr_setting.train
    X = train.X.reset_index(drop=True)
    rep = Representation.from_data(train.schema, X, n_bins=4, min_count=20)
    pipe = cf.models.make_pipeline(train.schema, "lr").set_params(pre__num=MinMaxScaler())
    pipe.fit(train.X, train.y)
    mirror = mirror_of(torch, pipe, rep, dtype=torch.float64)
    assert mirror is not None and mirror.kind == "linear model"
    assert _largest_mirror_error(mirror, pipe, rep, X) <= 1e-10
    tanh = cf.models.fit(train, "mlp", activation="tanh", max_iter=50)
    assert mirror_of(torch, tanh, rep) is None


@pytest.mark.parametrize("tanh", [False, True])
def test_mirror_equals_torch_model(lr_setting, tanh):
    """A torch Sequential of Linear/ReLU is mirrored through the compiled model (the IR);
    a module the compiler refuses (a Tanh) is used as it is."""
    train = lr_setting.train
    enc = cf.Encoder(train.schema)
    V = torch.as_tensor(enc.transform(train.X), dtype=torch.float32)
    g = torch.Generator().manual_seed(0)
    module = build_mlp(torch, V.shape[1], 2, 8, g, "cpu")
    if tanh:
        module[1] = torch.nn.Tanh()
    tm = cf.models.TorchModel(module, enc, classes=list(train.classes))
    X = train.X.reset_index(drop=True)
    rep = Representation.from_data(train.schema, X, min_count=20)
    mirror = mirror_of(torch, tm, rep)
    assert mirror is not None and mirror.kind == ("torch module" if tanh else "ReLU network")
    levels, values = rep.levels(X), rep.values(X)
    lower, upper, allowed, _ = rep.schema_bounds(levels, values)
    table, _ = rep.tables(levels, values, lower, upper, allowed)
    rng = np.random.default_rng(2)
    owner = rng.integers(0, len(X), size=500)
    cand = np.stack([rng.integers(0, s, size=owner.size) for s in rep.sizes], axis=1)
    with torch.no_grad():
        got = (
            mirror(
                torch.as_tensor(rep.onehot(cand)),
                torch.as_tensor(table[owner], dtype=torch.float32),
            )
            .exp()
            .numpy()
        )
    np.testing.assert_allclose(got, tm.predict_proba(rep.decode(cand, owner, table)), atol=1e-5)


def test_not_mirrorable_models_use_score_function(lr_setting):
    rf = cf.models.fit(lr_setting.train, "tree", random_state=0)
    rep = Representation.from_data(lr_setting.train.schema, lr_setting.train.X)
    assert mirror_of(torch, rf, rep) is None
    with pytest.raises(cf.UnsupportedModelError, match="score_function"):
        small(training={"gradient": "pathwise"}).fit(rf, lr_setting.train)


def test_a_value_the_row_must_leave_is_changed_in_every_draw():
    """German Credit: only "real estate" allowed as property, and a duration of exactly 12
    months. A row that has neither must move both; L2C used to keep its own (a one-value
    bound read as immutable) and failed every such row."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test.X).head(6)
    method = small().fit(model, train)
    for cons in (
        cf.Constraints(allowed_values={"property": ["real estate"]}),
        cf.Constraints(ranges={"duration_months": (12, 12)}),
    ):
        r = method.explain(rows, n_counterfactuals=3, constraints=cons)
        assert (r.found > 0).sum() >= 5, r.reason.tolist()
        for q in rows.index:
            assert cf.violations(rows.loc[q], r.for_query(q), train.schema, cons).empty


def test_fewer_answers_asked_are_filled_from_the_next_draws(lr_setting):
    """L2C proposes as many of its valid draws as the pipeline sparsifies, not only the
    number asked: when sparsification makes some the same answer, the next ones fill in,
    and the reason counts them (it proposed 5 and said "no other valid answer")."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test.X).head(12)
    method = small().fit(model, train)
    cons = cf.Constraints(
        immutable=["installment_rate"],
        decreasing=["duration_months"],
        ranges={"credit_amount": (500, 6000)},
        max_changes=2,
    )
    few = method.explain(rows, n_counterfactuals=5, constraints=cons)
    many = method.explain(rows, n_counterfactuals=10, constraints=cons)
    for q in rows.index:
        assert few.found[q] >= min(5, many.found[q]), (q, few.reason[q])
    assert (few.diagnostics["n_proposed"] > 5).any()


def test_training_options_object(lr_setting):
    """The training settings are one parameter: validated when built (or at fit for a
    dict), stored unchanged, replaced by set_params; defaults as documented."""
    import dataclasses

    options = TrainingOptions()
    assert (options.max_epochs, options.learning_rate, options.patience) == (200, 1e-3, 10)
    assert L2C().training == options and "training" not in repr(L2C())
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_epochs = 3  # type: ignore[misc]
    with pytest.raises(cf.ValidationError, match=r"'tau' parameter of TrainingOptions"):
        TrainingOptions(tau=0)
    with pytest.raises(cf.ValidationError, match=r"'training' parameter of L2C.*\['epochs'\]"):
        L2C(training={"epochs": 3}).fit(lr_setting.model, lr_setting.train)
    with pytest.raises(cf.ValidationError, match=r"learning_rate.*TrainingOptions"):
        L2C(training={"learning_rate": -1.0}).fit(lr_setting.model, lr_setting.train)
    with pytest.raises(cf.ValidationError, match=r"'n_bins' parameter of TrainingOptions"):
        TrainingOptions(n_bins=1)  # one bin: no numeric feature could move
    if not torch.cuda.is_available():
        with pytest.raises(cf.ValidationError, match=r"L2C\(device='cuda'\): this torch sees"):
            small(device="cuda").fit(lr_setting.model, lr_setting.train)
        with pytest.raises(cf.ValidationError, match=r"MDPSO\(device='cuda'\): this torch"):
            cf.MDPSO(device="cuda").fit(lr_setting.model, lr_setting.train)
    m = L2C(training=TrainingOptions(max_epochs=2))
    assert m.get_params()["training"].max_epochs == 2
    m.set_params(training={"max_epochs": 1, "hidden_size": 4})
    assert m.get_params()["training"] == {"max_epochs": 1, "hidden_size": 4}
    m.set_params(device="cpu").fit(lr_setting.model, lr_setting.train)
    assert m.n_epochs_ == 1 and m.generator_[0].out_features == 4


# ----------------------------------------------------------------- training
def test_pathwise_gradient_reaches_the_generator(fitted, lr_setting):
    """The released code's smoothing left G with zero gradient; ours trains G."""
    rep = fitted.representation_
    X = lr_setting.train.X.reset_index(drop=True)
    rows = fitted._rows(X)
    rows.predicted = fitted._class_indices(np.asarray(fitted.model_.predict(X)))
    mirror = mirror_of(torch, lr_setting.model, rep)
    cfg = TrainConfig(
        hidden=16,
        alpha=1e-3,
        tau=0.2,
        learning_rate=1e-2,
        max_epochs=1,
        batch_size=64,
        patience=1,
        straight_through=True,
        n_score_samples=4,
        n_validation_samples=2,
        max_numeric=2,
        verbose=0,
    )
    init = build_mlp(
        torch, rep.n_columns + 2, rep.n_columns, 16, torch.Generator().manual_seed(5), "cpu"
    )
    G, _S, hist = train(
        torch,
        rep,
        rows,
        rows,
        2,
        cfg,
        mirror=mirror,
        score=fitted._score,
        generator=torch.Generator().manual_seed(5),
        rng=np.random.default_rng(0),
        device="cpu",
    )
    for (k, a), b in zip(init.state_dict().items(), G.state_dict().values(), strict=True):
        assert not torch.equal(a, b), f"generator parameter {k} did not change"
    assert len(hist) == 1 and 0 <= hist[0]["validation_validity"] <= 1


def test_score_function_on_random_forest():
    s = make_setting("rf")
    m = small(training={"max_epochs": 10, "n_score_samples": 6, "batch_size": 32}).fit(
        s.model, s.train
    )
    assert m.gradient_ == "score_function"
    X = s.train.X.iloc[:40]
    r = m.explain(X, n_counterfactuals=3)
    validity = r.diagnostics["sample_validity"]
    assert validity.notna().all()
    assert validity.mean() > 0.8, validity.describe()
    assert (r.status == "feasible").mean() >= 0.9
    cfs = r.counterfactuals
    pred = s.model.predict(cfs.loc[:, s.train.schema.names])
    tgt = r.target.loc[cfs.index.get_level_values("query")].to_numpy()
    assert (pred == tgt).all()


def test_history_and_early_stopping(fitted):
    h = fitted.history_
    assert 1 <= len(h) <= 12 and fitted.n_epochs_ == len(h)
    assert {"loss", "validation_validity", "mean_changes"} <= set(h[0])
    assert fitted.gradient_ == "pathwise" and fitted.training_time_ > 0


# -------------------------------------------------------------- inference
def test_many_samples_batched_and_ranked(fitted, lr_setting, monkeypatch):
    # L2C's own proposals, as the base class receives them (its sparsification
    # pass reverts changes, which makes rows coincide and reorders distances)
    monkeypatch.setattr(fitted, "sparsify", False)
    r = fitted.explain(lr_setting.train.X.iloc[:30], n_counterfactuals=40)
    d = r.diagnostics
    assert (d["n_samples"] == 40).all()
    assert (d["n_duplicates"] == 0).all()  # de-duplicated before the base re-check
    assert (d["n_rejected_model"] == 0).all()  # only model-valid candidates proposed
    cost = r.cost()  # ranked in the call's measure of effort, cheapest first
    for q in r.queries.index[:10]:
        if len(r.for_query(q)) > 1:
            assert np.all(np.diff(cost.loc[q].to_numpy()) >= -1e-9)


def test_cap_changes_keeps_a_subset():
    changed = np.array([[True, True, True, False, True]])
    is_num = np.array([True, True, True, True, False])
    pr = np.array([[0.3, 0.1, 0.2, 0.0, 0.9]])
    keep = cap_changes(changed, pr, is_num, 2, None)
    assert keep.tolist() == [[False, True, True, False, True]]
    keep = cap_changes(changed, pr, is_num, 2, 2)
    assert keep.tolist() == [[False, True, True, False, False]]


def test_masks_respected(fitted, lr_setting):
    """Per-query constraints are masked into sampling: nothing proposed violates them."""
    schema = lr_setting.train.schema
    num = [f.name for f in schema if f.is_numeric and f.actionability == "free"]
    cats = [f.name for f in schema if f.is_categorical and f.actionability == "free"]
    ordn = [f.name for f in schema if f.kind == "ordinal" and f.actionability == "free"]
    X = lr_setting.train.X.iloc[:25]
    col = lr_setting.train.frame[num[1]]
    cons = cf.Constraints(
        immutable=[cats[0]],
        increasing=[num[0], *ordn[:1]],
        decreasing=[num[2]] if len(num) > 2 else [],
        ranges={
            num[1]: (
                float(min(col.min(), X[num[1]].min())),
                float(max(col.median(), X[num[1]].max())),
            )
        },
        allowed_values={
            cats[1]: list(schema[cats[1]].categories[:2])
            + [v for v in X[cats[1]].unique() if v not in schema[cats[1]].categories[:2]]
        },
        max_changes=4,
    )
    r = fitted.explain(X, n_counterfactuals=40, constraints=cons)
    assert (r.diagnostics["n_rejected_constraints"] == 0).all()
    assert r.found.sum() > 0
    for q in X.index:
        v = cf.violations(X.loc[q], r.for_query(q), schema, cons)
        assert v.empty, v
    # features_to_vary: nothing else moves
    keep = [num[0], cats[1]]
    r2 = fitted.explain(X, n_counterfactuals=40, constraints=cf.Constraints(features_to_vary=keep))
    assert (r2.diagnostics["n_rejected_constraints"] == 0).all()
    others = [c for c in schema.names if c not in keep]
    for q in X.index:
        cfs = r2.for_query(q)
        if len(cfs):
            assert (
                cfs[others].astype(object).to_numpy()
                == X.loc[[q], others].astype(object).to_numpy()
            ).all()


def test_threshold_on_numeric_changes(lr_setting):
    m = small(max_numeric_changes=1, relax_threshold=False).fit(lr_setting.model, lr_setting.train)
    X = lr_setting.train.X.iloc[:20]
    r = m.explain(X, n_counterfactuals=40)
    num = lr_setting.train.schema.numeric
    for q in X.index:
        cfs = r.for_query(q)
        if len(cfs):
            moved = (cfs[num].to_numpy(dtype=float) != X.loc[[q], num].to_numpy(dtype=float)).sum(
                axis=1
            )
            assert moved.max() <= 1


def test_multiclass_target():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.choice(["x", "y", "z"], size=n)}
    )
    frame["y"] = np.where(frame.a + 0.5 * (frame.c == "x") > 0.5, 2, np.where(frame.b > 0, 1, 0))
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "lr", random_state=0)
    m = small(training={"max_epochs": 15}, max_numeric_changes=None).fit(model, data)
    X = data.X[model.predict(data.X) == 0].iloc[:10]
    r = m.explain(X, n_counterfactuals=3, target=2)
    assert (r.status == "feasible").mean() >= 0.8
    assert (model.predict(r.counterfactuals.loc[:, data.schema.names]) == 2).all()


# ---------------------------------------------------------------- save/load
def test_save_load_roundtrip(fitted, lr_setting, tmp_path):
    path = tmp_path / "l2c.pt"
    fitted.save(path)
    payload = torch.load(path, weights_only=True)  # no pickled code needed
    assert payload["format"] == "counterfact.l2c"
    loaded = L2C.load(path, lr_setting.model, lr_setting.train)
    X = lr_setting.queries
    a = fitted.explain(X, n_counterfactuals=5)
    b = loaded.explain(X, n_counterfactuals=5)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    assert loaded.get_params() == fitted.get_params()

    class Relabelled:
        classes_ = np.array([5, 6])

        def predict_proba(self, X):
            return lr_setting.model.predict_proba(X)

    other = Relabelled()
    with pytest.raises(cf.ValidationError, match="classes"):
        L2C.load(path, other, lr_setting.train)
    bad = tmp_path / "bad.pt"
    torch.save({"format": "something else"}, bad)
    with pytest.raises(cf.ValidationError, match="not an L2C file"):
        L2C.load(bad, lr_setting.model, lr_setting.train)


# ----------------------------------------------------------------- fallback
def test_fallback_nearest_reported(lr_setting):
    # a generator that can change nothing numeric and only one categorical feature rarely succeeds
    m = small(
        training={"max_epochs": 1},
        n_samples=2,
        max_samples=None,
        relax_threshold=False,
        fallback="nearest",
    ).fit(lr_setting.model, lr_setting.train)
    X = lr_setting.train.X.iloc[:30]
    r = m.explain(X, n_counterfactuals=1)
    src = r.diagnostics["source"]
    assert set(src) <= {"l2c", "nearest"}
    assert (src == "nearest").any()
    for q in X.index[src == "nearest"]:
        cfs = r.for_query(q)
        if len(cfs):  # the nearest observable row of the target class
            assert (lr_setting.model.predict(cfs) == r.target[q]).all()


def test_fallback_switched_on_after_fit(lr_setting):
    """set_params(fallback=...) after training: no retraining, the uncovered rows get the
    fallback."""
    m = small(training={"max_epochs": 1}, n_samples=2, max_samples=None, relax_threshold=False).fit(
        lr_setting.model, lr_setting.train
    )
    X = lr_setting.train.X.iloc[:30]
    r0 = m.explain(X)
    assert (r0.status == "failed").any()
    m.set_params(fallback="nearest")
    r1 = m.explain(X)
    assert (r1.diagnostics["source"] == "nearest").any()
    assert (r1.found > 0).sum() > (r0.found > 0).sum()
    m.set_params(fallback=None)
    pd.testing.assert_series_equal(m.explain(X).status, r0.status)


def test_second_draw_for_uncovered_rows(lr_setting):
    """Rows with no valid sample among n_samples draw max_samples more; the first pass is
    unchanged."""
    X = lr_setting.train.X.iloc[:30]
    once = small(
        training={"max_epochs": 1}, n_samples=2, max_samples=None, relax_threshold=False
    ).fit(lr_setting.model, lr_setting.train)
    r1 = once.explain(X, n_counterfactuals=3)
    twice = small(
        training={"max_epochs": 1}, n_samples=2, max_samples=300, relax_threshold=False
    ).fit(lr_setting.model, lr_setting.train)
    r2 = twice.explain(X, n_counterfactuals=3)
    failed = r1.status.index[r1.status == "failed"]
    assert len(failed) > 0
    # rows covered by the first pass are identical
    ok = r1.status.index[r1.status == "feasible"]
    pd.testing.assert_frame_equal(
        r1.counterfactuals.loc[list(ok)], r2.counterfactuals.loc[list(ok)]
    )
    d = r2.diagnostics.loc[failed]
    assert (d["n_samples"] == 302).all()
    retried = failed[(d["source"] == "l2c (retry)").to_numpy()]
    assert len(retried) > 0 and (r2.status[retried] == "feasible").all()
    pd.testing.assert_series_equal(
        r2.diagnostics.loc[failed, "sample_validity"], r1.diagnostics.loc[failed, "sample_validity"]
    )
    cfs = r2.counterfactuals.loc[list(retried)]
    tgt = r2.target.loc[cfs.index.get_level_values("query")].to_numpy()
    assert (lr_setting.model.predict(cfs) == tgt).all()


def test_relaxed_threshold_last_resort(lr_setting):
    """Rows the paper's threshold leaves uncovered get a last draw with the threshold
    relaxed (doubled, then none), marked in the diagnostics; other rows are unchanged."""
    X = lr_setting.train.X.iloc[:30]
    num = lr_setting.train.schema.numeric
    kw = dict(
        training={"max_epochs": 1},
        n_samples=5,
        max_samples=20,
        max_numeric_changes=0,
        sparsify=False,
    )  # L2C's own proposals
    strict = small(relax_threshold=False, **kw).fit(lr_setting.model, lr_setting.train)
    r1 = strict.explain(X, n_counterfactuals=3)
    relaxed = small(**kw).fit(lr_setting.model, lr_setting.train)
    r2 = relaxed.explain(X, n_counterfactuals=3)
    failed = r1.status.index[r1.status == "failed"]
    assert len(failed) > 0 and (r1.diagnostics["numeric_threshold"] == 0).all()
    ok = r1.status.index[r1.status == "feasible"]
    pd.testing.assert_frame_equal(
        r1.counterfactuals.loc[list(ok)], r2.counterfactuals.loc[list(ok)]
    )
    assert set(r2.diagnostics.loc[ok, "source"]) <= {"l2c", "l2c (retry)"}
    d = r2.diagnostics.loc[failed]
    rescued = failed[(d["source"] == "l2c (relaxed)").to_numpy()]
    assert len(rescued) > 0 and (r2.status[rescued] == "feasible").all()
    assert set(r2.diagnostics.loc[rescued, "numeric_threshold"]) <= {1, -1}
    assert (d["n_samples"] > 25).all()  # first pass + retry + at least one relaxed draw
    pd.testing.assert_series_equal(
        d["sample_validity"], r1.diagnostics.loc[failed, "sample_validity"]
    )
    for q in rescued:  # valid for the real model, numeric changes within the cap that found them
        cfs = r2.for_query(q)
        assert (lr_setting.model.predict(cfs) == r2.target[q]).all()
        cap = int(r2.diagnostics.loc[q, "numeric_threshold"])
        moved = (cfs[num].to_numpy(dtype=float) != X.loc[[q], num].to_numpy(dtype=float)).sum(
            axis=1
        )
        assert moved.min() > 0 and (cap < 0 or moved.max() <= cap)


def test_a_failed_rows_reason_names_the_representative_in_use(lr_setting):
    """With representative="median" a row no sample reaches is said to have been tried at
    the bins' training medians, not at their midpoints."""
    s = lr_setting
    method = small(training={"representative": "median"}).fit(s.model, s.train)
    only = next(f.name for f in s.train.schema if f.is_numeric and f.actionability == "free")
    r = method.explain(
        s.queries.iloc[:2],
        constraints=cf.Constraints(features_to_vary=[only]),
        requirements=cf.Requirements(min_probability=0.999),
    )
    failed = r.reason[r.status == "failed"]
    assert len(failed) and failed.str.contains("training median").all()
    assert not failed.str.contains("midpoint").any()
