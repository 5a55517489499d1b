"""The ONNX front end and adapter: graphs written by skl2onnx / onnxmltools (and built by hand)
compiled into the IR, checked against onnxruntime, and explained like their originals."""

from __future__ import annotations

import pickle
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline

import counterfact as cf
from counterfact.exceptions import UnsupportedModelError, ValidationError
from counterfact.models import OnnxModel, compile_model
from counterfact.models._loading import load_model_file

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
skl2onnx = pytest.importorskip("skl2onnx")
from onnx import TensorProto, helper  # noqa: E402

#: onnxruntime computes in float32: the compiled outputs agree to this
FLOAT32_TOLERANCE = 1e-5


def float32_frame(X: pd.DataFrame) -> pd.DataFrame:
    """The frame skl2onnx reads the input types from (float columns as float32)."""
    return X.iloc[:1].astype({c: "float32" for c in X.select_dtypes("float").columns})


@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train.subset(train.frame.index[:300]), test


def _pipeline(train: cf.Dataset, est, scale: bool) -> Pipeline:
    pre = cf.models.preprocessor(train.schema, scale=scale)
    return Pipeline([("pre", pre), ("clf", est)]).fit(train.X, train.y)


def _converted(model, train: cf.Dataset) -> OnnxModel:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = skl2onnx.to_onnx(model, float32_frame(train.X))
    return OnnxModel(proto.SerializeToString())


@pytest.fixture(scope="module")
def converted(german):
    """Each family's scikit-learn original and its ONNX conversion."""
    train, _ = german
    originals = {
        "lr": _pipeline(train, LogisticRegression(max_iter=2000), True),
        "rf": _pipeline(train, RandomForestClassifier(8, max_depth=4, random_state=0), False),
        "gb": _pipeline(train, GradientBoostingClassifier(n_estimators=15, random_state=0), False),
        "mlp": _pipeline(train, MLPClassifier((8,), max_iter=400, random_state=0), True),
    }
    return {k: (m, _converted(m, train)) for k, m in originals.items()}


@pytest.mark.parametrize(
    "kind, node, link",
    [("lr", "Linear", expit), ("gb", "TreeEnsemble", expit), ("mlp", "MLP", expit)],
)
def test_compiled_graph_reproduces_onnxruntime(german, converted, kind, node, link):
    train, _ = german
    _, om = converted[kind]
    compiled = compile_model(om, train.schema)
    assert type(compiled.estimator).__name__ == node
    assert compiled.front_end in ("onnx", "onnx-trees")
    Y = compiled.outputs_raw(compiled.encode(train.X))
    P = om.predict_proba(train.X)
    assert np.abs(link(Y[:, 0]) - P[:, 1]).max() < FLOAT32_TOLERANCE
    assert np.array_equal(compiled.predict(train.X), om.predict(train.X))


def test_forest_scores_are_the_mean_probability(german, converted):
    """skl2onnx's binary forest: one score, class 1 iff it exceeds one half."""
    train, _ = german
    model, om = converted["rf"]
    compiled = compile_model(om, train.schema)
    assert compiled.estimator.dtype == "float32"
    Y = compiled.outputs_raw(compiled.encode(train.X))
    assert np.abs(Y[:, 0] + 0.5 - model.predict_proba(train.X)[:, 1]).max() < FLOAT32_TOLERANCE
    assert np.array_equal(compiled.predict(train.X), model.predict(train.X))


def test_adapter_reads_classes_and_inputs(german, converted):
    train, _ = german
    model, om = converted["lr"]
    assert om.classes_.tolist() == [0, 1]
    assert sorted(om.feature_names_in_) == sorted(train.schema.names)
    assert np.abs(om.predict_proba(train.X) - model.predict_proba(train.X)).max() < 1e-6
    again = pickle.loads(pickle.dumps(om))
    assert np.array_equal(again.predict(train.X), om.predict(train.X))
    with pytest.raises(UnsupportedModelError, match="cannot be refitted"):
        om.fit(train.X, train.y)


@pytest.mark.parametrize("kind", ["lr", "rf"])
def test_mace_answers_from_the_onnx_file_cost_the_same(german, converted, kind):
    train, test = german
    model, om = converted[kind]
    queries = cf.rows_to_explain(model, test.X, target=1).iloc[:2]
    costs = []
    for m in (model, om):
        res = cf.MACE(rel_gap=1e-3, time_limit=30, random_state=0).fit(m, train).explain(queries)
        assert set(res.status) == {"optimal"}
        costs.append(np.asarray(cf.metrics.distance(res), dtype=float))
    assert np.allclose(costs[0], costs[1], atol=1e-4)


def test_xgboost_through_onnxmltools(german):
    xgboost = pytest.importorskip("xgboost")
    onnxmltools = pytest.importorskip("onnxmltools")
    from onnxmltools.convert.common.data_types import FloatTensorType

    train, _ = german
    num = train.schema.numeric
    data = cf.Dataset.from_frame(train.frame[[*num, train.schema.target]], target="credit_risk")
    X = data.X.to_numpy(np.float32)
    est = xgboost.XGBClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, data.y)
    types = [("X", FloatTensorType([None, len(num)]))]
    om = OnnxModel(onnxmltools.convert_xgboost(est, initial_types=types))
    compiled = compile_model(om, data.schema)
    Y = compiled.outputs_raw(compiled.encode(data.X))
    assert np.abs(expit(Y[:, 0]) - est.predict_proba(X)[:, 1]).max() < FLOAT32_TOLERANCE
    assert np.array_equal(compiled.predict(data.X), est.predict(X))


# ----------------------------------------------------------------------- hand-built graphs
def _frame(n: int = 11) -> cf.Dataset:
    a = np.arange(n)
    frame = pd.DataFrame({"a": a, "b": (a * 7) % 5, "y": (a >= 4).astype(int)})
    return cf.Dataset.from_frame(frame, target="y")


def _stump(mode: str, threshold: float) -> OnnxModel:
    """One split on feature 0: its true branch is class 0 (weights for class 1 only)."""
    tree = helper.make_node(
        "TreeEnsembleClassifier",
        ["X"],
        ["label", "probabilities"],
        domain="ai.onnx.ml",
        nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2],
        nodes_featureids=[0, 0, 0],
        nodes_modes=[mode, "LEAF", "LEAF"],
        nodes_values=[threshold, 0.0, 0.0],
        nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 0, 0],
        class_treeids=[0, 0],
        class_nodeids=[1, 2],
        class_ids=[1, 1],
        class_weights=[-1.0, 1.0],
        classlabels_int64s=[0, 1],
    )
    graph = helper.make_graph(
        [tree],
        "stump",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
        [
            helper.make_tensor_value_info("label", TensorProto.INT64, [None]),
            helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [None, 2]),
        ],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    return OnnxModel(helper.make_model(graph, opset_imports=opsets))


@pytest.mark.parametrize(
    "mode, threshold, answer",
    [("BRANCH_LT", 4.0, 4), ("BRANCH_LEQ", 4.0, 5), ("BRANCH_LT", 3.5, 4), ("BRANCH_GT", 6.0, 6)],
)
def test_split_modes_known_answers(mode, threshold, answer):
    """The least change of ``a`` (from 1) into class 1, by brute force over its integers,
    equals MACE's answer from the graph; ``BRANCH_GT`` sends ``a > 6`` to class 0."""
    data = _frame()
    om = _stump(mode, threshold)
    if mode == "BRANCH_GT":  # class 1 needs a <= 6: from a = 9 the least change is to 6
        start = 9
    else:
        start = 1
    grid = pd.DataFrame({"a": np.arange(11), "b": start * 7 % 5})
    ok = grid.a[om.predict(grid) == 1]
    assert int(ok.iloc[np.argmin(np.abs(ok - start))]) == answer
    compiled = compile_model(om, data.schema)
    assert np.array_equal(compiled.predict(grid), om.predict(grid))
    query = pd.DataFrame({"a": [start], "b": [start * 7 % 5]})
    res = cf.MACE(time_limit=30, random_state=0).fit(om, data).explain(query, target=1)
    assert res.status.tolist() == ["optimal"]
    assert int(res.for_query(res.queries.index[0]).a.iloc[0]) == answer


def _tanh_network() -> OnnxModel:
    rng = np.random.default_rng(0)
    consts = [
        onnx.numpy_helper.from_array(rng.normal(size=(3, 2)).astype(np.float32), "W1"),
        onnx.numpy_helper.from_array(rng.normal(size=(2, 3)).astype(np.float32), "W2"),
    ]
    nodes = [
        helper.make_node("Gemm", ["X", "W1"], ["h"], name="hidden", transB=1),
        helper.make_node("Tanh", ["h"], ["t"], name="squash"),
        helper.make_node("Gemm", ["t", "W2"], ["logits"], name="out", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "tanh",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, 2])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [None, 2])],
        initializer=consts,
    )
    return OnnxModel(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_unknown_operator_is_refused_by_name_and_heuristics_still_work():
    data = _frame()
    om = _tanh_network()
    with pytest.raises(UnsupportedModelError, match=r"operator Tanh \(node 'squash'\)"):
        compile_model(om, data.schema)
    target = om.classes_[1 - int(np.flatnonzero(om.classes_ == om.predict(data.X.iloc[:1])[0])[0])]
    res = cf.NearestObservable(random_state=0).fit(om, data).explain(data.X.iloc[:1], target=target)
    assert len(res.queries) == 1


def test_one_tensor_graph_reads_the_schema_by_position():
    data = _frame()
    om = _stump("BRANCH_LEQ", 4.0)
    assert not hasattr(om, "feature_names_in_")
    three = cf.Dataset.from_frame(data.frame.assign(c=0), target="y")
    with pytest.raises(UnsupportedModelError, match="takes 2 columns but the schema has 3"):
        compile_model(om, three.schema)


def test_onnx_file_loads_without_the_unsafe_flag(german, converted, tmp_path):
    train, _ = german
    model, om = converted["lr"]
    path = tmp_path / "model.onnx"
    path.write_bytes(om.proto.SerializeToString())
    loaded = load_model_file(path, allow_unsafe=False, data=train)
    assert np.array_equal(loaded.predict(train.X), model.predict(train.X))
    pickled = tmp_path / "model.joblib"
    joblib.dump(model, pickled)
    with pytest.raises(ValidationError, match="allow-unsafe-model-load"):
        load_model_file(pickled, allow_unsafe=False)
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a graph")
    with pytest.raises(ValidationError, match="not an ONNX model file"):
        load_model_file(bad, allow_unsafe=False)


def _small_frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"r": rng.uniform(0, 10, 120).round(2), "b": rng.integers(0, 16, 120)})
    frame["h"] = rng.choice(["rent", "own", "mortgage"], 120)
    frame["y"] = ((frame.r * 0.5 + 0.2 * frame.b + rng.normal(0, 0.7, 120)) > 4.0).astype(int)
    return frame


def test_a_graph_onnxruntime_cannot_load_is_named_as_such():
    """skl2onnx given a float64 column writes a graph that mixes float and double tensors;
    the error blamed the preprocessing, not the graph."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    data = cf.Dataset.from_frame(_small_frame(), target="y")
    pre = ColumnTransformer([("num", "passthrough", ["r", "b"]), ("cat", OneHotEncoder(), ["h"])])
    pipe = Pipeline([("pre", pre), ("clf", LogisticRegression())]).fit(data.X, data.y)
    model = OnnxModel(skl2onnx.to_onnx(pipe, data.X.iloc[:1]))
    with pytest.raises(ValidationError, match="onnxruntime cannot load this ONNX graph"):
        model.predict(data.X.head(2))


def test_a_single_input_of_another_width_is_named():
    frame = _small_frame()
    est = GradientBoostingClassifier(n_estimators=5, random_state=0)
    est.fit(frame[["r", "b"]].to_numpy(np.float32), frame.y)
    model = OnnxModel(skl2onnx.to_onnx(est, frame[["r", "b"]].to_numpy(np.float32)[:1]))
    data = cf.Dataset.from_frame(frame[["r", "y"]], target="y")
    with pytest.raises(ValidationError, match="takes 2 columns, but the rows have 1"):
        model.predict(data.X.head(2))
