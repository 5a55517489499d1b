"""Every query explained is in every output format; a results folder holds one run's
settings; an --out that cannot be written fails before the work; an audit prints what it
measured."""

from __future__ import annotations

import io
import json
import os

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main

ERR = "counterfact: error: "
#: query 986 (test row 2) has provably no answer under these constraints; row 0 (query 40)
#: is already predicted as the desired class
FROZEN = [
    "explain",
    "--dataset",
    "german_credit",
    "--model",
    "lr",
    "--rows",
    "0:4",
    "--time-limit",
    "5",
    "--max-changes",
    "1",
    "--immutable",
    "other_debtors,telephone",
    "-q",
]


# ------------------------------------------------------- 3. CSV rows without an answer
@pytest.mark.parametrize("all_rows", [False, True])
def test_csv_has_a_row_for_every_query_even_without_an_answer(capsys, all_rows):
    extra = ["--all-rows"] if all_rows else []
    assert main([*FROZEN, *extra, "--format", "json"]) == 0
    wanted = json.loads(capsys.readouterr().out)
    assert main([*FROZEN, *extra, "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    status = dict(zip(table["query"], table["_status"], strict=True))
    assert "infeasible" in status.values()  # the proven-infeasible query is there
    queries = wanted["queries"]["index"]
    assert list(dict.fromkeys(table["query"])) == queries  # every query, in order
    assert [status[q] for q in queries] == wanted["status"]
    empty = table[table["rank"].isna()]
    assert len(empty) and empty["_reason"].notna().all()
    assert empty["credit_amount"].isna().all()  # no feature cells for a query without answer
    if all_rows:
        assert status[40] == "failed"


# ------------------------------------------------------ 4. one run's settings per folder
SPEC = """\
name: tiny
datasets:
  - {name: german_credit, max_rows: 200}
models: [lr]
methods: [nearest]
queries: 2
seeds: [0]
time_limit: 5
"""


@pytest.fixture()
def spec(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return path


def test_benchmark_resumes_the_same_settings_and_refuses_others(tmp_path, spec, capsys):
    out = tmp_path / "res"
    assert main(["benchmark", str(spec), "--out", str(out), "-q"]) == 0
    cell = next(p for p in (out / "cells").glob("*.json") if ".result" not in p.name)
    stamp = cell.stat().st_mtime_ns
    before = (out / "results.csv").read_text()
    assert main(["benchmark", str(spec), "--out", str(out), "-q"]) == 0  # resumes
    assert cell.stat().st_mtime_ns == stamp
    capsys.readouterr()
    for flags, named in (
        (["--time-limit", "3"], "time_limit 5.0 -> 3.0"),
        (["--queries", "1"], "queries 2 -> 1"),
    ):
        code = main(["benchmark", str(spec), "--out", str(out), "-q", *flags])
        lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith(ERR)]
        assert code == 2 and len(lines) == 1 and named in lines[0]
        assert "new --out" in lines[0] and "delete" in lines[0]
    assert (out / "results.csv").read_text() == before
    assert json.loads((out / "spec.json").read_text())["time_limit"] == 5.0  # not rewritten
    with pytest.raises(cf.ValidationError, match="other settings"):
        cf.benchmark.run(spec, out=out, verbose=False, time_limit=3)
    # run every cell again under the new settings: no mix left
    cf.benchmark.run(spec, out=out, verbose=False, time_limit=3, resume=False)


def test_no_resume_refuses_a_folder_with_another_runs_cells(tmp_path, spec, capsys):
    out = tmp_path / "res"
    assert main(["benchmark", str(spec), "--out", str(out), "-q"]) == 0
    other = tmp_path / "other.yaml"
    other.write_text(SPEC.replace("methods: [nearest]", "methods: [mace]"))
    before = (out / "results.csv").read_text()
    capsys.readouterr()
    code = main(["benchmark", str(other), "--out", str(out), "-q", "--no-resume"])
    err = capsys.readouterr().err
    assert code == 2 and "would leave them in the tables" in err and "new --out" in err
    assert (out / "results.csv").read_text() == before
    with pytest.raises(cf.ValidationError, match="would leave them"):
        cf.benchmark.run(other, out=out, verbose=False, resume=False)


def test_benchmark_settings_said_in_words_and_queries_flag_checked(tmp_path, capsys):
    """A setting the old run left unset reads "not set", never Python's None; a
    --queries below 1 is refused by the flag's own name."""
    spec = tmp_path / "every.yaml"
    spec.write_text(SPEC.replace("time_limit: 5\n", ""))
    out = tmp_path / "res"
    assert main(["benchmark", str(spec), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["benchmark", str(spec), "--out", str(out), "-q", "--time-limit", "3"]) == 2
    err = capsys.readouterr().err
    assert "time_limit not set -> 3.0" in err and "None" not in err
    assert main(["benchmark", str(spec), "--out", str(out), "-q", "--queries", "0"]) == 2
    assert "--queries must be a whole number >= 1" in capsys.readouterr().err


# -------------------------------------------------- 8. an --out that cannot be written
def test_benchmark_out_that_is_a_file_is_a_user_error(tmp_path, spec, capsys):
    target = tmp_path / "results.csv"
    target.write_text("x\n")
    code = main(["benchmark", str(spec), "--out", str(target), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "is a file; pass a folder" in err


def test_audit_out_where_no_file_can_be_made_fails_before_work(capsys):
    from counterfact._utils._validation import can_write_in

    if not os.path.isdir("/proc/1") or can_write_in("/proc/1"):
        pytest.skip("needs a folder no file can be made in (/proc/1)")
    argv = ["audit", "--dataset", "german_credit", "--model", "lr", "--out", "/proc/1/x"]
    code = main([*argv, "--max-rows", "5", "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "is not a writable folder" in err and "internal error" not in err


def test_report_to_a_missing_folder_is_a_user_error(tmp_path, spec, capsys):
    out = tmp_path / "res"
    assert main(["benchmark", str(spec), "--out", str(out), "-q"]) == 0
    capsys.readouterr()
    code = main(["report", str(out), "--out", str(tmp_path / "nope" / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be written" in err and "internal error" not in err


def test_demo_checks_its_out_before_working(tmp_path, capsys):
    code = main(["demo", "--rows", "1", "--out", str(tmp_path / "nope" / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "loading German Credit" not in err


# ------------------------------------------------------------ 11. audit --protected
def test_audit_prints_the_protected_features_sensitivity(tmp_path, capsys):
    argv = [
        "audit",
        "--dataset",
        "german_credit",
        "--model",
        "lr",
        "--method",
        "nearest",
        "--max-rows",
        "30",
        "--n-bootstrap",
        "20",
        "--no-html",
        "-q",
        "--protected",
        "other_debtors",
        "--out",
        str(tmp_path / "a"),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "protected other_debtors:" in out and "frozen" in out
