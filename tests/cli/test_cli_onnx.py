"""The command line explains a model given as an ONNX file, without --allow-unsafe-model-load."""

from __future__ import annotations

import warnings

import joblib
import numpy as np
import pytest

import counterfact as cf
from counterfact.cli import main

skl2onnx = pytest.importorskip("skl2onnx")
pytest.importorskip("onnxruntime")


def test_explain_an_onnx_file_without_the_unsafe_flag(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr")
    X = train.X.iloc[:1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = skl2onnx.to_onnx(model, X.astype({c: "float32" for c in X.select_dtypes("float")}))
    path = tmp_path / "model.onnx"
    path.write_bytes(proto.SerializeToString())
    pickled = tmp_path / "model.joblib"
    joblib.dump(model, pickled)
    argv = ["explain", "--method", "mace", "--rows", "0:3", "--format", "json", "--out"]
    assert main([*argv, str(tmp_path / "onnx.json"), "--model-file", str(path)]) == 0
    assert "model: OnnxModel" in capsys.readouterr().err
    unsafe = ["--model-file", str(pickled), "--allow-unsafe-model-load"]
    assert main([*argv, str(tmp_path / "pickle.json"), *unsafe]) == 0
    results = [
        cf.CounterfactualResult.from_json((tmp_path / f"{name}.json").read_text())
        for name in ("onnx", "pickle")
    ]
    assert results[0].queries.index.tolist() == results[1].queries.index.tolist()
    assert set(results[0].status) == {"optimal"}
    costs = [np.asarray(cf.metrics.distance(r), dtype=float) for r in results]
    # both optimal within MACE's default relative gap (1%)
    assert costs[0].size and np.allclose(costs[0], costs[1], rtol=0.01, atol=1e-6)
