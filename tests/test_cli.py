from __future__ import annotations

import json

import joblib
import pytest

import counterfact as cf
from counterfact.cli import main


def test_datasets_lists_every_bundled_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in cf.datasets.names():
        assert name in out


def test_datasets_describe(capsys):
    assert main(["datasets", "german_credit"]) == 0
    out = capsys.readouterr().out
    assert "kind" in out and "actionability" in out


def test_explain_german_rf_nearest(capsys, tmp_path):
    out_file = tmp_path / "r.json"
    args = ["explain", "--dataset", "german_credit", "--model", "rf", "--method", "nearest", "--rows", "0:5", "-n", "3"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "->" in text and "query" in text
    assert main([*args, "--format", "json", "--out", str(out_file)]) == 0
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    assert len(r) == 5 and r.found.max() <= 3
    # the model confirms every counterfactual and no immutable feature changed
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0)
    for q in r.queries.index:
        cfs = r.for_query(q)
        if len(cfs):
            assert (model.predict(cfs) == r.target[q]).all()
            for name in data.schema.immutable:
                assert (cfs[name].astype(str) == str(r.queries.loc[q, name])).all()


def test_constraint_flags_and_file(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    num = data.schema.numeric[0]
    cfile = tmp_path / "c.yaml"
    cfile.write_text(f"increasing: [{num}]\nmax_changes: 3\n")
    out_file = tmp_path / "r.json"
    assert main(["explain", "--model", "lr", "--rows", "0:3", "--constraints", str(cfile), "--format", "json", "--out", str(out_file)]) == 0
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    assert r.constraints.increasing == (num,) and r.constraints.max_changes == 3
    for q in r.queries.index:
        cfs = r.for_query(q)
        assert (cfs[num] >= r.queries.loc[q, num]).all()


def test_model_file_requires_acknowledgement(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    train, _ = data.split(test_size=0.2, random_state=0)
    path = tmp_path / "m.joblib"
    joblib.dump(cf.models.fit(train, "lr"), path)
    assert main(["explain", "--model-file", str(path), "--rows", "0:1"]) == 2
    assert "allow-unsafe-model-load" in capsys.readouterr().err
    assert main(["explain", "--model-file", str(path), "--allow-unsafe-model-load", "--rows", "0:1"]) == 0


def test_bad_input_is_a_clear_error(capsys):
    assert main(["explain", "--rows", "0:2", "--immutable", "no_such_feature"]) == 2
    assert "unknown features" in capsys.readouterr().err
    assert main(["explain", "--rows", "999999"]) == 2
    with pytest.raises(SystemExit):
        main(["explain", "--format", "xml"])


def test_demo_runs(capsys):
    assert main(["demo", "--method", "nearest", "--rows", "2"]) == 0
    assert "->" in capsys.readouterr().out


def test_json_is_valid(capsys):
    assert main(["explain", "--rows", "0:2", "--format", "json"]) == 0
    json.loads(capsys.readouterr().out)
