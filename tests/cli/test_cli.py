from __future__ import annotations

import json

import joblib
import pytest

import counterfact as cf
from counterfact.cli import build_parser, main
from counterfact.models._fit import KINDS


def test_datasets_lists_every_bundled_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in cf.datasets.names():
        assert name in out


def test_datasets_describe(capsys):
    assert main(["datasets", "german_credit"]) == 0
    out = capsys.readouterr().out
    assert "kind" in out and "actionability" in out


def test_explain_german_rf(capsys, tmp_path):
    # MD-PSO: under German Credit's defaults (a credit history is a record, balances only improve)
    # the nearest observed row finds no admissible row for these applicants
    out_file = tmp_path / "r.json"
    args = [
        "explain",
        "--dataset",
        "german_credit",
        "--model",
        "rf",
        "--method",
        "mdpso",
        "--rows",
        "0:10",
        "-n",
        "3",
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "->" in captured.out and "query" in captured.out
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "rf", random_state=0)
    rejected = [
        q
        for q, p in zip(test.X.index[:10], model.predict(test.X.iloc[:10]), strict=False)
        if p != 1
    ]
    assert 0 < len(rejected) < 10  # the first 10 rows mix approved and rejected applicants
    assert f"skipped {10 - len(rejected)} of 10 rows" in captured.err
    assert main([*args, "--format", "json", "--out", str(out_file)]) == 0
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    # only the rejected rows are explained, towards the favourable class
    assert list(r.queries.index) == rejected and r.found.max() <= 3
    assert (r.target == cf.datasets.favourable("german_credit")).all()
    # the model confirms every counterfactual and no immutable feature changed
    for q in r.queries.index:
        cfs = r.for_query(q)
        if len(cfs):
            assert (model.predict(cfs) == r.target[q]).all()
            for name in data.schema.immutable:
                assert (cfs[name].astype(str) == str(r.queries.loc[q, name])).all()


def test_all_rows_keeps_rows_already_favourable(tmp_path, capsys):
    out_file = tmp_path / "r.json"
    assert (
        main(
            [
                "explain",
                "--model",
                "rf",
                "--rows",
                "0:4",
                "--all-rows",
                "--format",
                "json",
                "--out",
                str(out_file),
            ]
        )
        == 0
    )
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    assert len(r) == 4
    already = r.status[r.reason.str.contains("already")]
    assert len(already) >= 1 and (already == "failed").all()


def test_constraint_flags_and_file(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    num = data.schema.numeric[0]
    cfile = tmp_path / "c.yaml"
    cfile.write_text(f"increasing: [{num}]\nmax_changes: 3\n")
    out_file = tmp_path / "r.json"
    assert (
        main(
            [
                "explain",
                "--model",
                "lr",
                "--rows",
                "0:10",
                "--constraints",
                str(cfile),
                "--format",
                "json",
                "--out",
                str(out_file),
            ]
        )
        == 0
    )
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
    assert main(["explain", "--model-file", str(path), "--rows", "0:5"]) == 2
    assert "allow-unsafe-model-load" in capsys.readouterr().err
    assert (
        main(["explain", "--model-file", str(path), "--allow-unsafe-model-load", "--rows", "0:5"])
        == 0
    )


def test_bad_input_is_a_clear_error(capsys):
    assert main(["explain", "--rows", "0:2", "--immutable", "no_such_feature"]) == 2
    assert "unknown features" in capsys.readouterr().err
    assert main(["explain", "--rows", "999999"]) == 2
    with pytest.raises(SystemExit):
        main(["explain", "--format", "xml"])


def test_demo_runs(capsys):
    assert main(["demo", "--method", "mdpso", "--rows", "2"]) == 0
    assert "->" in capsys.readouterr().out


def test_json_is_valid(capsys):
    assert main(["explain", "--format", "json"]) == 0
    captured = capsys.readouterr()
    r = cf.CounterfactualResult.from_json(captured.out)
    json.loads(captured.out)
    assert len(r) == 5 and "first 5" in captured.err  # the default: the first 5 rows to explain


def test_version_and_help_list_choices(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0 and cf.__version__ in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in cf.methods.names():
        assert name in text
    for kind in KINDS:
        assert kind in text
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():  # every option of every subcommand has a help text
        for action in p._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"


def test_verbose_and_quiet(capsys):
    assert main(["explain", "--method", "nearest", "--model", "lr", "--rows", "0:5", "-v"]) == 0
    err = capsys.readouterr().err
    assert "counterfact:" in err and ("query" in err or "it/s" in err or "%" in err)
    assert (
        main(
            [
                "explain",
                "--method",
                "nearest",
                "--model",
                "lr",
                "--rows",
                "0:5",
                "-q",
                "--format",
                "json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)


def test_data_rows_index_the_users_file(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    frame = data.frame.iloc[:300].reset_index(drop=True)
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    out_file = tmp_path / "r.json"
    args = [
        "explain",
        "--data",
        str(path),
        "--target",
        data.target,
        "--model",
        "lr",
        "--rows",
        "0:20",
        "--format",
        "json",
        "--out",
        str(out_file),
    ]
    assert main(args) == 0
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    # the model is fitted on the whole file; the query ids are row positions in the file
    model = cf.models.fit(cf.Dataset.from_frame(frame, target=data.target), "lr", random_state=0)
    pred = model.predict(frame.drop(columns=[data.target]).iloc[:20])
    assert list(r.queries.index) == [i for i in range(20) if pred[i] != 1]
    for q in r.queries.index:
        assert r.queries.loc[q, "credit_amount"] == frame.loc[q, "credit_amount"]


def test_table_gives_the_methods_words_for_rows_without_an_answer(capsys):
    frozen = (
        "duration_months,credit_amount,checking_status,credit_history,savings,employment_since,"
        "installment_rate,other_debtors,residence_since,property,other_installment_plans,housing,"
        "existing_credits,job,telephone,age"
    )
    assert (
        main(
            [
                "explain",
                "--model",
                "lr",
                "--method",
                "mace",
                "--immutable",
                frozen,
                "--rows",
                "0:10",
                "-q",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "status infeasible" in out
    assert "  MACE: proven: no counterfactual exists under these constraints" in out
    assert (
        main(["explain", "--model", "lr", "--method", "mace", "--all-rows", "--rows", "0:3", "-q"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "status failed" in out
        and "already predicts the target class" in out
        and "not a proof" not in out
    )


def test_desired_class_is_named_plainly(tmp_path, capsys):
    """A file without a known favourable class: the status line names the class as the user
    wrote it."""
    data = cf.datasets.load("german_credit")
    path = tmp_path / "mine.csv"
    data.frame.iloc[:200].to_csv(path, index=False)
    assert (
        main(
            [
                "explain",
                "--data",
                str(path),
                "--target",
                data.target,
                "--model",
                "lr",
                "--rows",
                "0:10",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "desired class: 1, the model's last class" in err
    assert "np." not in err and "int64" not in err


def test_queries_file_against_a_model_file(tmp_path, capsys):
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    mpath = tmp_path / "m.joblib"
    joblib.dump(model, mpath)
    qpath = tmp_path / "q.csv"
    test.X.iloc[:12].to_csv(qpath, index=False)
    out_file = tmp_path / "r.json"
    assert (
        main(
            [
                "explain",
                "--queries",
                str(qpath),
                "--model-file",
                str(mpath),
                "--allow-unsafe-model-load",
                "--rows",
                ":",
                "--format",
                "json",
                "--out",
                str(out_file),
            ]
        )
        == 0
    )
    r = cf.CounterfactualResult.from_json(out_file.read_text())
    pred = model.predict(test.X.iloc[:12])
    assert list(r.queries.index) == [i for i in range(12) if pred[i] != 1]
    assert "already predicted" in capsys.readouterr().err
