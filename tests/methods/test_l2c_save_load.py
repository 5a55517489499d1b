"""L2C: saving and loading the trained generator, training progress, the exact fast scorer,
time limits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.testing import make_setting

torch = pytest.importorskip("torch")

from counterfact.methods.l2c import L2C, TrainingOptions, _persist  # noqa: E402
from counterfact.models._adapter import as_adapter  # noqa: E402
from counterfact.models._fastpredict import FastPredictor  # noqa: E402


def small(training=None, **kw):
    """A fast L2C; ``training``: fields of :class:`TrainingOptions` that replace the fast ones."""
    options = TrainingOptions(
        **{"max_epochs": 8, "learning_rate": 3e-3, "patience": 4, **(training or {})}
    )
    return L2C(training=options, **{"n_samples": 30, "random_state": 0, "device": "cpu", **kw})


@pytest.fixture(scope="module")
def setting():
    return make_setting("lr")


@pytest.fixture(scope="module")
def fitted(setting):
    return small().fit(setting.model, setting.train)


@pytest.fixture(scope="module")
def saved(fitted, tmp_path_factory):
    path = tmp_path_factory.mktemp("l2c") / "gen.pt"
    fitted.save(path)
    return path


def test_round_trip_gives_identical_counterfactuals(fitted, saved, setting):
    loaded = L2C.load(saved, setting.model, setting.train)
    a = fitted.explain(setting.queries, n_counterfactuals=10)
    b = loaded.explain(setting.queries, n_counterfactuals=10)
    pd.testing.assert_frame_equal(a.counterfactuals, b.counterfactuals)
    pd.testing.assert_series_equal(a.status, b.status)
    assert loaded.get_params() == fitted.get_params()
    assert loaded.n_epochs_ == fitted.n_epochs_ and loaded.history_ == fitted.history_
    for k, v in fitted.generator_.state_dict().items():
        assert torch.equal(v, loaded.generator_.state_dict()[k])
    payload = torch.load(saved, weights_only=True)  # plain values only, no pickled code
    assert payload["format"] == "counterfact.l2c" and payload["version"] == _persist.VERSION


def test_training_options_saved_and_restored(setting, tmp_path):
    """The training options travel in the file as a dict of fields and come back as
    :class:`TrainingOptions`, also when the L2C was given a dict; the network size
    comes from them."""
    m = L2C(
        training={"max_epochs": 1, "hidden_size": 7, "batch_size": 32},
        n_samples=5,
        device="cpu",
        random_state=0,
    ).fit(setting.model, setting.train)
    m.save(tmp_path / "dict.pt")
    loaded = L2C.load(tmp_path / "dict.pt", setting.model, setting.train)
    want = TrainingOptions(max_epochs=1, hidden_size=7, batch_size=32)
    assert loaded.training == want and isinstance(loaded.training, TrainingOptions)
    assert "training=TrainingOptions(" in repr(loaded) and "hidden_size=7" in repr(loaded)
    assert loaded.generator_.state_dict().keys() == m.generator_.state_dict().keys()
    for k, v in m.generator_.state_dict().items():
        assert torch.equal(v, loaded.generator_.state_dict()[k])
    payload = torch.load(tmp_path / "dict.pt", weights_only=True)
    assert '"hidden_size": 7' in payload["params"]


def test_refuses_other_version(saved, setting, tmp_path):
    payload = torch.load(saved, weights_only=True)
    payload["version"] = _persist.VERSION + 1
    old = tmp_path / "other.pt"
    torch.save(payload, old)
    with pytest.raises(cf.ValidationError, match="format version"):
        L2C.load(old, setting.model, setting.train)


def test_refuses_another_model_with_the_same_classes(saved, setting):
    other = cf.models.fit(setting.train, "tree", random_state=0)
    with pytest.raises(cf.ValidationError, match="not the one"):
        L2C.load(saved, other, setting.train)


def test_refuses_other_data(saved, setting):
    fewer = setting.train.subset(setting.train.frame.index[:-5])
    with pytest.raises(cf.ValidationError, match="training data"):
        L2C.load(saved, setting.model, fewer)
    with pytest.raises(cf.ValidationError, match="Dataset"):
        L2C.load(saved, setting.model, setting.train.X)
    frozen = setting.train.with_schema(
        setting.train.schema.with_actionability(**{setting.train.schema.names[0]: "immutable"})
    )
    with pytest.raises(cf.ValidationError, match="schema"):
        L2C.load(saved, setting.model, frozen)
    shuffled = setting.train.subset(setting.train.frame.index[::-1])
    with pytest.raises(cf.ValidationError, match="another order"):
        L2C.load(saved, setting.model, shuffled)


def test_save_to_a_path_that_cannot_be_written_is_said_in_words(fitted, tmp_path):
    with pytest.raises(cf.ValidationError, match="does not exist"):
        fitted.save(tmp_path / "no_such_folder" / "g.pt")
    with pytest.raises(cf.ValidationError, match="is a folder"):
        fitted.save(tmp_path)


def test_refuses_missing_and_foreign_files(setting, tmp_path):
    with pytest.raises(cf.ValidationError, match="No L2C file"):
        L2C.load(tmp_path / "missing.pt", setting.model, setting.train)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file")
    with pytest.raises(cf.ValidationError, match="Could not read"):
        L2C.load(junk, setting.model, setting.train)


# --------------------------------------------------------------- progress
def test_training_progress_on_stderr_under_verbose(setting, capsys):
    small(training={"max_epochs": 3}, verbose=1).fit(setting.model, setting.train)
    out, err = capsys.readouterr()
    assert "L2C training" in err and "epoch" in err
    assert "L2C training" not in out  # stdout stays clean


def test_no_training_progress_when_quiet(setting, capsys):
    small(training={"max_epochs": 2}, verbose=0).fit(setting.model, setting.train)
    _out, err = capsys.readouterr()
    assert "L2C training" not in err


def test_history_has_validity_and_yield(fitted):
    h = fitted.history_
    assert 1 <= len(h) <= 8
    for row in h:
        assert 0.0 <= row["validation_yield"] <= row["validation_validity"] <= 1.0


# --------------------------------------------------------------- fast scorer
@pytest.mark.parametrize("kind", ["lr", "rf", "mlp", "tree"])
def test_fast_predictor_equals_the_model(kind):
    s = make_setting(kind)
    ad = as_adapter(s.model, s.train.schema)
    fast = FastPredictor.build(ad, s.train.schema, s.train.X.iloc[:64])
    assert fast is not None
    if kind in ("rf", "tree"):
        assert fast.kind == "forest"
    rng = np.random.default_rng(0)
    rows = s.train.X.iloc[rng.integers(0, len(s.train.X), 300)].reset_index(drop=True)
    for n in (7, 300):  # both forest strategies (all-trees numpy, per-tree compiled)
        part = rows.iloc[:n]
        got = fast.predict_proba(part)
        assert np.array_equal(got, ad.predict_proba(part))
        assert np.array_equal(ad.classes_[np.argmax(got, axis=1)], np.asarray(ad.predict(part)))


def test_l2c_scores_through_the_fast_path_exactly(setting):
    m = small(training={"max_epochs": 2}).fit(setting.model, setting.train)
    assert m._fast is not None
    rows = m._rows(setting.train.X.iloc[:20].reset_index(drop=True))
    rng = np.random.default_rng(1)
    levels = np.stack([rng.integers(0, size, 20) for size in m.representation_.sizes], axis=1)
    owner = np.arange(20)
    frame = m.representation_.decode(levels, owner, rows.table)
    assert np.array_equal(m._score(levels, owner, rows), m.model_.predict_proba(frame))


# ------------------------------------------------------------- time limit
def test_time_limit_skips_further_draws(setting):
    """Past the (pooled) limit, rows the first pass left uncovered get ``timeout``
    instead of the retry and relaxed draws; covered rows keep their answers."""
    X = setting.train.X.iloc[:30]
    kw = dict(
        training={"max_epochs": 1},
        n_samples=5,
        max_samples=50,
        max_numeric_changes=0,
        sparsify=False,
    )
    free = small(**kw).fit(setting.model, setting.train)
    r1 = free.explain(X, n_counterfactuals=2)
    limited = small(time_limit=1e-9, **kw).fit(setting.model, setting.train)
    r2 = limited.explain(X, n_counterfactuals=2)
    first_pass = r2.diagnostics["n_samples"] == 5
    assert first_pass.all()  # no second draw was started
    late = r2.status.index[r2.status == "timeout"]
    assert len(late) > 0 and (r2.found[late] == 0).all()
    assert r2.diagnostics.loc[late, "reason"].str.contains("time limit").all()
    done = r2.status.index[r2.status == "feasible"]
    pd.testing.assert_frame_equal(
        r1.counterfactuals.loc[list(done)], r2.counterfactuals.loc[list(done)]
    )
