"""What the command line says, in a reader's words: ranges as "up to" / "from ... to", a
timeline's pace as "1 every 6 months", one success line under -v, and the options each
command really has."""

from __future__ import annotations

import re

import counterfact as cf
from counterfact.cli import main

BASE = ["explain", "--dataset", "german_credit", "--model", "lr", "--rows", "0:6"]
BASE += ["--method", "nearest"]


def test_ranges_read_as_words_not_python(capsys):
    argv = [*BASE, "--range", "credit_amount=:6000", "--range", "duration_months=6:36"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "ranges credit_amount up to 6000, duration_months from 6 to 36" in out
    assert "None" not in out


def test_a_timelines_pace_reads_as_one_step_every_so_many_months():
    words = cf.datasets.timeline("german_credit", horizon=12).words()
    assert "savings up at most 1 every 6 months" in words and "0.17" not in words
    assert (
        cf.Timeline(horizon=3, rates={"savings": 0.4})
        .words()
        .startswith("within 3 months; savings up at most 0.4 a month")
    )


def test_verbose_prints_one_success_line(capsys):
    assert main([*BASE, "-v"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if re.search(r"\d+/\d+ \w+ got (a|no) count", line)]
    assert len(said) == 1, err


def test_audit_help_names_only_options_audit_has(capsys):
    try:
        main(["audit", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "not with --data or --queries" not in text and "not with --data)" in text
