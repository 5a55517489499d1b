"""PyTorch networks compiled exactly: a TorchModel of an nn.Sequential of Linear / ReLU
becomes the IR's MLP, MACE and CE-OCL find the brute-force optimum on it, the
probability margin is exact, and every other module is refused by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

import counterfact as cf  # noqa: E402
from counterfact.models._compile import compile_model, probability_link  # noqa: E402
from counterfact.models._compile._torch import TOLERANCE  # noqa: E402

nn = torch.nn
TOP = 40  # a and b are integers 0..TOP: the grid brute force walks


def _data() -> cf.Dataset:
    """Two integer features and a categorical one; class 1 iff a + b (+15 for 'z') is large."""
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, TOP + 1, n),
            "b": rng.integers(0, TOP + 1, n),
            "c": rng.choice(["x", "y", "z"], n),
        }
    )
    frame.loc[:1, ["a", "b"]] = [[0, 0], [TOP, TOP]]  # the domain is 0..TOP
    score = frame["a"] + frame["b"] + 15 * (frame["c"] == "z") + rng.normal(0, 3, n)
    frame["y"] = (score > TOP).astype(int)
    return cf.Dataset.from_frame(frame, target="y")


def _train(data: cf.Dataset, *layers: nn.Module, loss: str = "logits") -> cf.models.TorchModel:
    """A TorchModel of ``nn.Sequential(*layers)`` trained 150 full-batch Adam steps, seeded."""
    enc = cf.Encoder(data.schema)
    V = torch.as_tensor(enc.transform(data.X), dtype=torch.float32)
    y = torch.as_tensor(data.y.to_numpy().copy())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny network: threads only contend
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        for layer in layers:  # built by the caller: initialised here, seeded
            if hasattr(layer, "reset_parameters"):
                layer.reset_parameters()
        net = nn.Sequential(*layers)
        opt = torch.optim.Adam(net.parameters(), lr=0.05)
        for _ in range(150):
            net.train()
            opt.zero_grad()
            out = net(V)
            if loss == "sigmoid":
                err = nn.functional.binary_cross_entropy(out[:, 0], y.float())
            elif loss == "softmax":
                err = nn.functional.nll_loss(torch.log(out), y)
            else:
                err = nn.functional.cross_entropy(out, y)
            err.backward()
            opt.step()
    torch.set_num_threads(threads)
    return cf.models.TorchModel(net, enc, classes=[0, 1])


@pytest.fixture(scope="module")
def setting():
    data = _data()
    model = _train(data, nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
    return data, model


def _grid() -> pd.DataFrame:
    a, b, c = np.meshgrid(np.arange(TOP + 1), np.arange(TOP + 1), np.arange(3), indexing="ij")
    cats = np.array(["x", "y", "z"], dtype=object)
    return pd.DataFrame({"a": a.ravel(), "b": b.ravel(), "c": cats[c.ravel()]})


def _brute_force(model, x: pd.Series, p: float | None = None) -> float:
    """The smallest eq. (3) l1 distance (numeric range-normalised, a category change 1,
    averaged over the 3 features) from ``x`` to a grid row the model calls 1 (at
    ``P(1) >= p``)."""
    grid = _grid()
    ok = model.predict(grid) == 1
    if p is not None:
        ok &= model.predict_proba(grid)[:, 1] >= p
    d = (np.abs(grid["a"] - x["a"]) + np.abs(grid["b"] - x["b"])) / TOP
    d = (d + (grid["c"] != x["c"])) / 3
    return float(d[ok].min())


def _queries(data, model, n=3) -> pd.DataFrame:
    return data.X[model.predict(data.X) == 0].iloc[:n]


# ------------------------------------------------------------------ compiled exactly
def test_compiles_to_the_mlp_and_reproduces_the_module_on_the_training_rows(setting):
    data, model = setting
    compiled = compile_model(model, data.schema)
    assert compiled.front_end == "torch" and compiled.estimator_class == "TorchModel"
    assert compiled.rule.kind == "threshold"  # two logits: one output y1 - y0
    np.testing.assert_array_equal(compiled.predict(data.X), model.predict(data.X))
    np.testing.assert_array_equal(compiled.predict(_grid()), model.predict(_grid()))
    out = model.outputs(data.X)
    y = compiled.outputs_raw(compiled.encode(data.X))[:, 0]
    gap = np.max(np.abs(y - (out[:, 1] - out[:, 0])))
    assert gap <= TOLERANCE * (1 + np.max(np.abs(out))) and gap > 0  # float32 vs float64
    assert probability_link(compiled, model.predict_proba, data.X) == "sigmoid"


@pytest.mark.parametrize(
    "head",
    ["sigmoid", "softmax", "dropout-batchnorm", "relu-first"],
)
def test_heads_and_folded_modules_compile_faithfully(head):
    data = _data()
    if head == "sigmoid":
        layers, loss = (nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 1), nn.Sigmoid()), "sigmoid"
    elif head == "softmax":
        layers, loss = (nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 2), nn.Softmax(dim=1)), "softmax"
    elif head == "dropout-batchnorm":
        layers = (nn.Linear(5, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Dropout(0.2))
        layers, loss = (*layers, nn.BatchNorm1d(6), nn.Linear(6, 2)), "logits"
    else:
        layers, loss = (nn.ReLU(), nn.Linear(5, 6), nn.ReLU(), nn.ReLU(), nn.Linear(6, 2)), "logits"
    model = _train(data, *layers, loss=loss)
    assert model.output == ("logits" if loss == "logits" else "probabilities")
    compiled = compile_model(model, data.schema)
    grid = _grid()
    np.testing.assert_array_equal(compiled.predict(grid), model.predict(grid))
    if head != "dropout-batchnorm":  # folded normalisations move float32 results by ~1e-6
        assert probability_link(compiled, model.predict_proba, data.X) == "sigmoid"
    assert model.predict_proba(grid).sum(axis=1) == pytest.approx(1.0, abs=1e-6)


def test_multiclass_network_decides_by_argmax():
    data = _data()
    frame = data.X.assign(y=np.digitize(data.X["a"] + data.X["b"], [30, 50]))
    data3 = cf.Dataset.from_frame(frame, target="y")
    model = _train(data3, nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    model = cf.models.TorchModel(model.module, model.encoder, classes=[0, 1, 2])
    compiled = compile_model(model, data3.schema)
    assert compiled.rule.kind == "argmax" and compiled.rule.n_classes == 3
    np.testing.assert_array_equal(compiled.predict(_grid()), model.predict(_grid()))


# ------------------------------------------------------------------ known answers
@pytest.mark.parametrize("method", [cf.MACE, cf.CEOCL])
def test_exact_methods_find_the_brute_force_optimum(setting, method):
    data, model = setting
    X = _queries(data, model)
    r = method(time_limit=30).fit(model, data).explain(X)
    for q in X.index:
        best = _brute_force(model, X.loc[q])
        assert r.status[q] == "optimal"
        cfx = r.counterfactuals.loc[[(q, 0)], data.schema.names]
        assert model.predict(cfx)[0] == 1  # valid for the torch model itself
        got = (abs(cfx["a"].iloc[0] - X.loc[q, "a"]) + abs(cfx["b"].iloc[0] - X.loc[q, "b"])) / TOP
        got = (got + (cfx["c"].iloc[0] != X.loc[q, "c"])) / 3
        assert got == pytest.approx(best, abs=1e-9)


def test_the_margin_is_exact(setting):
    data, model = setting
    X = _queries(data, model, n=2)
    for p in (0.7, 0.95):
        req = cf.Requirements(costs="own", min_probability=p)  # eq. (3), as brute-forced
        r = cf.MACE(time_limit=30).fit(model, data).explain(X, requirements=req)
        for q in X.index:
            assert r.status[q] == "optimal"
            assert r.diagnostics.loc[q, "delta_max"] == pytest.approx(
                _brute_force(model, X.loc[q], p), abs=2e-3
            )
            assert r.confidence.loc[(q, 0)] >= p


# ------------------------------------------------------------------ refused
def _tanh_network(data, encoder):
    """A tanh network with seeded weights under which the rows get both decisions (the
    first seed that gives both; the global random stream is left as it was)."""
    for seed in range(100):
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            layers = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))
        tanh = cf.models.TorchModel(layers, encoder, [0, 1])
        if set(tanh.predict(data.X)) == {0, 1}:
            return tanh
    raise AssertionError("no seed below 100 gives a tanh network with both decisions")


def test_other_modules_are_refused_by_name(setting):
    data, model = setting
    tanh = _tanh_network(data, model.encoder)
    with pytest.raises(cf.UnsupportedModelError, match=r"torch module Tanh \(at module 1"):
        compile_model(tanh, data.schema)
    with pytest.raises(cf.UnsupportedModelError, match="Tanh"):
        cf.MACE().fit(tanh, data)
    r = cf.NearestObservable().fit(tanh, data).explain(data.X.iloc[:1])
    assert len(r.counterfactuals) == 1  # the heuristics still explain it

    wide = cf.models.TorchModel(nn.Sequential(nn.Linear(5, 2), nn.Sigmoid()), model.encoder, [0, 1])
    with pytest.raises(cf.UnsupportedModelError, match="Sigmoid over 2 outputs"):
        compile_model(wide, data.schema)
    twice = cf.models.TorchModel(
        nn.Sequential(nn.Linear(5, 2), nn.Softmax(dim=1)), model.encoder, [0, 1], output="logits"
    )
    with pytest.raises(cf.UnsupportedModelError, match="output='auto'"):
        compile_model(twice, data.schema)
    hidden = cf.models.TorchModel(
        nn.Sequential(nn.Linear(5, 3), nn.Sigmoid(), nn.Linear(3, 1)), model.encoder, [0, 1]
    )
    with pytest.raises(cf.UnsupportedModelError, match="follows a sigmoid") as err:
        compile_model(hidden, data.schema)
    assert "a hidden one is not piecewise linear" in str(err.value)
    assert "cf.UFCE" in str(err.value)
    bare = cf.models.TorchModel(nn.Linear(5, 2), model.encoder, [0, 1])
    with pytest.raises(cf.UnsupportedModelError, match=r"nn\.Sequential; got Linear"):
        compile_model(bare, data.schema)


def test_a_module_that_is_not_its_layers_fails_the_faithfulness_check(setting):
    data, model = setting

    class Doubled(nn.Linear):  # read as a Linear, but its forward is not one
        def forward(self, x):
            return 2 * super().forward(x)

    odd = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), Doubled(8, 2))
    odd.load_state_dict(model.module.state_dict())
    with pytest.raises(cf.UnsupportedModelError, match="does not reproduce"):
        compile_model(cf.models.TorchModel(odd, model.encoder, [0, 1]), data.schema)


def test_torch_model_reads_one_output_as_the_second_class(setting):
    data, model = setting
    one = cf.models.TorchModel(nn.Sequential(nn.Linear(5, 1)), model.encoder, [0, 1])
    P = one.predict_proba(data.X)
    logit = one.outputs(data.X)[:, 0]
    np.testing.assert_allclose(P[:, 1], 1 / (1 + np.exp(-logit)), atol=1e-6)
    np.testing.assert_array_equal(one.predict(data.X), (P[:, 1] > 0.5).astype(int))
    with pytest.raises(cf.ValidationError, match="output must be one of"):
        cf.models.TorchModel(model.module, model.encoder, [0, 1], output="scores")
