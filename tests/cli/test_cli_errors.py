"""Every user error of the command line is one `counterfact: error:` line and exit status 2."""

from __future__ import annotations

import subprocess
import sys
import types

import joblib
import pytest

import counterfact as cf
from counterfact.cli import main

ERR = "counterfact: error: "


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_errors")
    data = cf.datasets.load("german_credit")
    small = data.frame.iloc[:120].reset_index(drop=True)
    good = d / "good.csv"
    small.to_csv(good, index=False)
    (d / "empty.csv").write_text("")
    (d / "header.csv").write_text(",".join(small.columns) + "\n")
    (d / "ragged.csv").write_text("a,b\n1,2\n3,4,5,6\n")
    (d / "binary.csv").write_bytes(bytes(range(256)) * 8)
    (d / "not_a_model.joblib").write_text("this is not a pickle\n")
    joblib.dump({"weights": [1, 2, 3]}, d / "a_dict.joblib")
    compas = cf.datasets.load("compas")
    joblib.dump(cf.models.fit(compas, "lr", random_state=0), d / "compas_lr.joblib")
    (d / "bad.yaml").write_text("immutable: [age\nincreasing: x: y\n")
    (d / "unknown_key.yaml").write_text("immutible: [age]\n")
    queries = small.drop(columns=[data.target, "age"]).iloc[:3]
    queries.to_csv(d / "queries_missing_col.csv", index=False)
    return d, data.target


def _run(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith(ERR)]
    return code, err, lines


def _cases(d, target):
    return {**_file_cases(d, target), **_option_cases(d), **_choice_cases(d)}


def _file_cases(d, target):
    """Bad data and model files."""
    good = str(d / "good.csv")
    data = ["explain", "--data", good, "--target", target]  # --model-file: no --model
    mfile = ["--allow-unsafe-model-load", "--model-file"]
    return {
        "data missing": (
            ["explain", "--data", str(d / "nope.csv"), "--target", target],
            "no such file",
        ),
        "data is a folder": (["explain", "--data", str(d), "--target", target], "folder"),
        "data empty": (["explain", "--data", str(d / "empty.csv"), "--target", target], "empty"),
        "data header only": (
            ["explain", "--data", str(d / "header.csv"), "--target", target],
            "no data rows",
        ),
        "data malformed": (
            ["explain", "--data", str(d / "ragged.csv"), "--target", "a"],
            "well-formed CSV",
        ),
        "data binary": (["explain", "--data", str(d / "binary.csv"), "--target", "a"], "--data"),
        "data without target": (["explain", "--data", good], "--target"),
        "data unknown target": (
            ["explain", "--data", good, "--target", "nope"],
            "no column 'nope'",
        ),
        "model file missing": ([*data, *mfile, str(d / "nope.joblib")], "no such file"),
        "model file not a pickle": (
            [*data, *mfile, str(d / "not_a_model.joblib")],
            "not a joblib/pickle",
        ),
        "model file not a model": (
            [*data, *mfile, str(d / "a_dict.joblib")],
            "not a fitted classifier",
        ),
        "model file other columns": ([*data, *mfile, str(d / "compas_lr.joblib")], "other columns"),
    }


def _option_cases(d):
    """Bad options: rows, constraints, parameters, choices."""
    return {
        "rows abc": (["explain", "--model", "lr", "--rows", "abc"], "not a row number"),
        "rows out of range": (["explain", "--model", "lr", "--rows", "999999"], "outside"),
        "rows empty": (["explain", "--model", "lr", "--rows", ""], "--rows"),
        "range not numbers": (
            ["explain", "--model", "lr", "--range", "duration_months=abc:def"],
            "not a number",
        ),
        "range no colon": (
            ["explain", "--model", "lr", "--range", "duration_months=12"],
            "FEATURE=LOW:HIGH",
        ),
        "range unknown feature": (["explain", "--model", "lr", "--range", "nope=1:2"], "nope"),
        "allowed malformed": (["explain", "--model", "lr", "--allowed", "purpose"], "FEATURE=v1"),
        "unknown param": (
            ["explain", "--model", "lr", "--param", "no_such_param=3"],
            "no parameter 'no_such_param'",
        ),
        "param without value": (
            ["explain", "--model", "lr", "--param", "time_limit"],
            "NAME=VALUE",
        ),
        "bad param value": (["explain", "--model", "lr", "--param", "norm=l7"], "norm"),
        "constraints missing": (
            ["explain", "--model", "lr", "--constraints", str(d / "nope.yaml")],
            "does not exist",
        ),
        "constraints bad yaml": (
            ["explain", "--model", "lr", "--constraints", str(d / "bad.yaml")],
            "not valid YAML",
        ),
        "constraints unknown key": (
            ["explain", "--model", "lr", "--constraints", str(d / "unknown_key.yaml")],
            "immutible",
        ),
    }


def _choice_cases(d):
    """Unknown names and bad values of the remaining options."""
    return {
        "immutable unknown feature": (
            ["explain", "--model", "lr", "--immutable", "no_such_feature"],
            "no_such_feature",
        ),
        "unknown method": (["explain", "--method", "magic"], "magic"),
        "unknown model kind": (["explain", "--model", "deepforest"], "deepforest"),
        "unknown dataset": (["explain", "--dataset", "no_such_dataset"], "no_such_dataset"),
        "unknown format": (["explain", "--format", "xml"], "xml"),
        "queries missing column": (
            ["explain", "--model", "lr", "--queries", str(d / "queries_missing_col.csv")],
            "age",
        ),
        "out unwritable": (
            ["explain", "--model", "lr", "--out", str(d / "no" / "such" / "dir" / "r.txt")],
            "--out",
        ),
        "zero counterfactuals": (["explain", "--model", "lr", "-n", "0"], "at least 1"),
        "negative time limit": (["explain", "--model", "lr", "--time-limit", "-1"], "time-limit"),
        "infinite time limit": (
            ["explain", "--model", "lr", "--method", "mace", "--time-limit", "inf"],
            "leave it out",
        ),
        "zero jobs": (["explain", "--model", "lr", "--n-jobs", "0"], "n-jobs"),
        "negative seed": (["explain", "--model", "lr", "--seed", "-3"], "seed"),
        "dataset not installed": (["explain", "--dataset", "heloc"], "heloc"),
        "target class unknown": (
            ["explain", "--model", "lr", "--target-class", "7"],
            "--target-class '7' is not a class of the model",
        ),
        "target with dataset": (["explain", "--target", "y"], "--target"),
        "verbose and quiet": (["-v", "-q", "datasets"], "exclude"),
        "unknown command": (["frobnicate"], "frobnicate"),
        "missing dependency style": (["datasets", "no_such_dataset"], "no_such_dataset"),
    }


CASE_NAMES = [
    "data missing",
    "data is a folder",
    "data empty",
    "data header only",
    "data malformed",
    "data binary",
    "data without target",
    "data unknown target",
    "model file missing",
    "model file not a pickle",
    "model file not a model",
    "model file other columns",
    "rows abc",
    "rows out of range",
    "rows empty",
    "range not numbers",
    "range no colon",
    "range unknown feature",
    "allowed malformed",
    "unknown param",
    "param without value",
    "bad param value",
    "constraints missing",
    "constraints bad yaml",
    "constraints unknown key",
    "immutable unknown feature",
    "unknown method",
    "unknown model kind",
    "unknown dataset",
    "unknown format",
    "queries missing column",
    "out unwritable",
    "zero counterfactuals",
    "negative time limit",
    "infinite time limit",
    "zero jobs",
    "negative seed",
    "dataset not installed",
    "target class unknown",
    "target with dataset",
    "verbose and quiet",
    "unknown command",
    "missing dependency style",
]


@pytest.mark.parametrize("case", CASE_NAMES)
def test_user_error_is_one_line_and_exit_2(case, files, capsys, monkeypatch):
    d, target = files
    for var in ("COUNTERFACT_DATA_DIR", "COUNTERFACT_HELOC"):  # HELOC counts as not installed here
        monkeypatch.delenv(var, raising=False)
    argv, needle = _cases(d, target)[case]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors (unknown choice) exit through SystemExit
        code = exc.code
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith(ERR)]
    assert code == 2, err
    assert len(errors) == 1, err
    assert needle.lower() in errors[0].lower(), errors[0]
    assert "Traceback" not in err
    assert not any(ln.startswith("usage:") for ln in err.splitlines())


def test_cases_cover_the_list():
    assert set(CASE_NAMES) == set(_cases(__import__("pathlib").Path("."), "t"))


def test_debug_shows_the_exception(files):
    _d, _target = files
    with pytest.raises(cf.ValidationError, match="not a row number"):
        main(["--debug", "explain", "--model", "lr", "--rows", "abc"])
    with pytest.raises(cf.ValidationError, match="not a row number"):
        main(["explain", "--model", "lr", "--rows", "abc", "--debug"])


def test_no_traceback_in_a_real_process(files):
    d, _target = files
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "counterfact.cli",
            "explain",
            "--data",
            str(d / "ragged.csv"),
            "--target",
            "a",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().startswith(ERR) and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ benchmark
TINY = """\
name: tiny
datasets:
  - name: german_credit
    max_rows: 120
models: [lr]
methods:
{methods}
queries: 1
time_limit: 5
"""


def _spec(tmp_path, methods, text=None):
    path = tmp_path / "spec.yaml"
    path.write_text(text if text is not None else TINY.format(methods=methods))
    return path


@pytest.mark.parametrize(
    "methods, text, needle",
    [
        ("  - name: magic", None, "unknown method 'magic'"),
        ("  - name: nearest\n    params: {no_such_param: 1}", None, "no_such_param"),
        ("  - name: nearest\n    colour: red", None, "colour"),
        (
            "  - nearest",
            "datasets: [no_such_dataset]\nmodels: [lr]\nmethods: [nearest]\n",
            "no_such_dataset",
        ),
        (
            "  - nearest",
            "datasets: [german_credit]\nmodels: [deepforest]\nmethods: [nearest]\n",
            "deepforest",
        ),
        (
            "  - nearest",
            "datasets: [german_credit]\nmodels: [lr]\nmethods: [nearest]\nqueries: 2\nsedes: [0]\n",
            "sedes",
        ),
        ("  - nearest", "datasets: [german_credit\nmodels: lr\n", "not valid YAML"),
        ("  - nearest", "- just\n- a list\n", "mapping"),
        ("  - nearest", "", "empty"),
    ],
)
def test_invalid_spec_fails_before_running(tmp_path, capsys, methods, text, needle):
    path = _spec(tmp_path, methods, text)
    out = tmp_path / "results"
    code, err, lines = _run(capsys, ["benchmark", str(path), "--out", str(out)])
    assert code == 2, err
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err
    assert not out.exists()  # nothing ran


def test_missing_spec_file(tmp_path, capsys):
    code, _err, lines = _run(capsys, ["benchmark", str(tmp_path / "nope.yaml")])
    assert code == 2 and len(lines) == 1 and "does not exist" in lines[0]


def test_erroring_cell_makes_the_run_fail(tmp_path, capsys):
    methods = "  - name: nearest\n  - name: nearest\n    label: broken\n    explain: {target: 7}"
    path = _spec(tmp_path, methods)
    out = tmp_path / "results"
    code = main(["benchmark", str(path), "--out", str(out), "-q"])
    captured = capsys.readouterr()
    assert code == 1
    assert (
        "1 benchmark cell(s) failed" in captured.err
        and "broken" in captured.err
        and "Target class 7" in captured.err
    )
    failed = cf.benchmark.failed_cells(out)
    assert list(failed["method"]) == ["broken"]
    # the healthy cell ran
    assert (out / "summary.csv").exists()


def test_clean_benchmark_exits_0(tmp_path, capsys):
    path = _spec(tmp_path, "  - name: nearest")
    assert main(["benchmark", str(path), "--out", str(tmp_path / "r"), "-q"]) == 0
    assert len(cf.benchmark.failed_cells(tmp_path / "r")) == 0


# ------------------------------------------------------------ extra commands
def test_help_works_without_the_server_extras(monkeypatch, capsys):
    """fastapi/uvicorn missing (or a subcommand module failing to import) must not break the CLI."""
    for mod in list(sys.modules):
        if mod.startswith(("counterfact.serve", "counterfact.recourse")):
            monkeypatch.delitem(sys.modules, mod)
    for mod in ("fastapi", "uvicorn", "counterfact.serve._cli"):
        monkeypatch.setitem(sys.modules, mod, None)  # importing it raises ImportError
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "explain" in capsys.readouterr().out
    assert main(["datasets"]) == 0


def test_extra_command_modules_are_registered(monkeypatch, capsys):
    import counterfact.cli as cli

    fake = types.ModuleType("counterfact_fake_cli")

    def add_parser(sub):
        p = sub.add_parser("hello", help="say hello")
        p.add_argument("--who", default="world", help="whom to greet")
        p.set_defaults(func=lambda args: print(f"hello {args.who}") or 0)

    fake.add_parser = add_parser  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "counterfact_fake_cli", fake)
    monkeypatch.setattr(
        cli, "EXTRA_COMMANDS", ("counterfact_fake_cli", "counterfact.no_such_module")
    )
    assert main(["hello", "--who", "you"]) == 0
    assert capsys.readouterr().out.strip() == "hello you"
    assert main(["hello", "-q"]) == 0  # the common options work after an extra subcommand too
    code = None
    try:
        main(["hello", "--bogus"])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(ERR) and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["audit", "--dataset", "german_credit", "--rows", "3", "--out", "x"], "--max-rows?"),
        (["explain", "--dataset", "german_credit", "--time-limt=3"], "--time-limit?"),
        (["explain", "--dataset", "german_credit", "--bogus"], None),
    ],
)
def test_an_unknown_option_is_named_with_its_subcommands_help(capsys, argv, said):
    """An option the subcommand does not know points to that subcommand's --help (not
    the top level's), with its closest option when one is close."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2
    assert err.startswith(ERR + "unrecognized arguments: ") and len(err.splitlines()) == 1
    assert f"(see 'counterfact {argv[0]} --help')" in err
    assert (said in err) if said else "did you mean" not in err
