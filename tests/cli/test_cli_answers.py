"""What the command line shows of a decision and its answers: the class names, the
probability after each answer, the features' descriptions; and the audit's files, all
or none."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.cli._output import class_label


def test_table_shows_class_names_probability_after_and_descriptions(capsys):
    assert (
        main(["explain", "--model", "lr", "--method", "mace", "--rows", "0:6", "-n", "2", "-q"])
        == 0
    )
    out = capsys.readouterr().out
    assert "wanted: good (1)" in out and "P(good) now " in out  # German Credit's class names
    answers = [ln for ln in out.splitlines() if re.match(r"\s+#\d+: ", ln)]
    assert answers, out
    # the probability after, then the cost in the measure of effort
    assert all(re.search(r"-> P\(good\) \d+\.\d %; cost \d+(\.\d+)?$", ln) for ln in answers), (
        answers
    )
    # what "smaller" means, once; per query one line: the guarantee, constraints, margin
    assert "Smaller means fewer changes or smaller moves, counting 1 per changed feature" in out
    heads = [i for i, ln in enumerate(out.splitlines()) if ln.startswith("query ")]
    lines = out.splitlines()
    for i in heads:
        said = lines[i + 1]
        assert said.startswith("  MACE: ") and "; constraints: none beyond the schema" in said
        assert "margin asked: none (crossing is enough)" in said, said
        assert "closer" not in said and "costs less than" not in said  # no raw certificate
    described = [
        f.description for f in cf.datasets.load("german_credit").schema if f.description in out
    ]
    assert described, out  # the changed features' descriptions from the schema


def test_a_margin_is_said_once_in_the_certificate_not_again(capsys):
    argv = ["explain", "--model", "lr", "--method", "mace", "--rows", "0:6", "-q"]
    assert main([*argv, "--min-probability", "0.7", "--robust-to", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    said = [lines[i + 1] for i, ln in enumerate(lines) if ln.startswith("query ")]
    assert said, lines
    for line in said:
        scope = "required: a probability of at least 0.7 for the target, the target in 1 other"
        assert scope in line, line
        assert "margin asked:" not in line and "also holds for" not in line, line
        assert line.endswith("; constraints: none beyond the schema"), line


def test_own_class_names(tmp_path, capsys):
    data = cf.datasets.load("graduate_admission")
    path = tmp_path / "own.csv"
    data.frame.to_csv(path, index=False)
    args = [
        "explain",
        "--data",
        str(path),
        "--target",
        "admit",
        "--model",
        "lr",
        "--method",
        "nearest",
        "--rows",
        "0:40",
        "-q",
        "--class-names",
        "0=declined,1=admitted",
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "wanted: admitted (1)" in out and "P(admitted) now" in out
    assert main([*args[:-1], "1admitted"]) == 2  # malformed: CLASS=NAME
    assert "--class-names" in capsys.readouterr().err


def test_class_label():
    assert class_label(1, {1: "good"}) == "good (1)"
    assert class_label(1, None) == "1" and class_label("yes", {"yes": "yes"}) == "yes"


@pytest.fixture(scope="module")
def small_audit():
    data = cf.datasets.load("graduate_admission")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    return cf.audit(
        method, test.X.iloc[:40], data=data, statistics=cf.recourse.Statistics(n_bootstrap=20)
    )


def test_audit_save_writes_all_files_or_none(small_audit, tmp_path, monkeypatch):
    out = tmp_path / "audit"

    def broken(self, path, **kwargs):
        raise RuntimeError("the HTML report failed")

    monkeypatch.setattr(type(small_audit), "to_html", broken)
    with pytest.raises(RuntimeError):
        small_audit.save(out, html=True)
    assert list(out.iterdir()) == []  # nothing half-written
    monkeypatch.undo()
    paths = small_audit.save(out, html=False)
    assert {p.name for p in out.iterdir()} == {p.name for p in paths.values()}
    assert pd.read_csv(paths["summary"]).shape[0] == len(small_audit.summary())


def test_resumed_audit_reports_the_total_time(tmp_path):
    data = cf.datasets.load("graduate_admission")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    cf.audit(
        method,
        test.X,
        data=data,
        statistics=cf.recourse.Statistics(n_bootstrap=20),
        batch=cf.recourse.Batch(out_dir=tmp_path / "chunks", chunk_size=20),
    )
    again = cf.audit(
        method,
        test.X,
        data=data,
        statistics=cf.recourse.Statistics(n_bootstrap=20),
        batch=cf.recourse.Batch(out_dir=tmp_path / "chunks", chunk_size=20),
    )
    stamp = tmp_path / "chunks" / "explained" / "audit-run.json"
    recorded = sum(pd.read_json(stamp, typ="series")["chunk_seconds"].values())
    # the resumed run redid no chunk; it reports the seconds the chunks took when they ran
    assert again.meta["seconds"] >= recorded > 0
