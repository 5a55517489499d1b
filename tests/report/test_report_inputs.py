"""The report reads a results folder and writes only the report: a broken cell file, an
output path that cannot be written, a card count below zero and a folder with no cell are
refused in words; amortized times carry their mark in every table."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.exceptions import ValidationError
from counterfact.report._build import _intro
from counterfact.report._tables import _three_digits

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")

SPEC = {
    "name": "report-inputs",
    "datasets": [{"name": "german_credit", "max_rows": 200, "actionability": "free"}],
    "models": ["lr"],
    "methods": [
        "nearest",
        {"name": "mdpso", "params": {"swarm": {"n_particles": 8, "max_iter": 5}}},
    ],
    "queries": 2,
    "n_counterfactuals": 1,
    "seeds": [0],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    cf.benchmark.run(SPEC, out=out, verbose=False)
    return out


def _copy(folder: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "results"
    shutil.copytree(folder, copy)
    return copy


def _cell(folder: Path, method: str, suffix: str = ".json") -> Path:
    """The cell file of ``method`` ending in ``suffix`` (the record for ``.json``)."""
    files = (folder / "cells").glob(f"*__{method}__*{suffix}")
    return next(p for p in files if suffix != ".json" or ".result." not in p.name)


def test_a_corrupt_cell_record_is_named_with_the_way_out(folder, tmp_path, capsys):
    results = _copy(folder, tmp_path)
    record = _cell(results, "nearest")
    record.write_text('{"cell": "x", "status": "do')
    with pytest.raises(ValidationError, match=re.escape(record.name)) as err:
        cf.report.build(results)
    said = f"Delete that cell's files (cells/{record.stem}.*), then run the benchmark again"
    assert said in str(err.value)
    assert main(["report", str(results)]) == 2
    message = capsys.readouterr().err
    assert record.name in message and "internal error" not in message


def test_a_corrupt_result_document_is_named(folder, tmp_path):
    results = _copy(folder, tmp_path)
    document = _cell(results, "nearest", ".result.json")
    document.write_text("{not json")
    with pytest.raises(ValidationError, match=re.escape(document.name)):
        cf.report.build(results)


def test_the_report_leaves_the_results_folder_as_it_was(folder, tmp_path):
    results = _copy(folder, tmp_path)
    for name in ("results.csv", "summary.csv", "results.parquet"):
        (results / name).unlink(missing_ok=True)
    before = sorted(p.name for p in results.rglob("*"))
    page = cf.report.build(results, out=tmp_path / "page.html")
    assert page == tmp_path / "page.html" and page.exists()
    assert sorted(p.name for p in results.rglob("*")) == before


def test_an_output_path_that_cannot_be_written_is_refused_in_words(folder, tmp_path):
    with pytest.raises(ValidationError, match="does not exist"):
        cf.report.build(folder, out=tmp_path / "missing" / "page.html")
    if sys.platform.startswith("linux") and Path("/proc").is_dir():
        # a folder the permission check lets through, whose write still fails
        with pytest.raises(ValidationError, match="cannot be written"):
            cf.report.build(folder, out="/proc/page.html")


@pytest.mark.parametrize("cards", [-1, 1.5, "2"])
def test_a_card_count_that_is_not_a_whole_number_from_zero_is_refused(folder, tmp_path, cards):
    with pytest.raises(ValidationError, match="cards_per_cell"):
        cf.report.build(folder, out=tmp_path / "p.html", cards_per_cell=cards)


def test_a_folder_with_no_cell_is_refused(tmp_path):
    (tmp_path / "cells").mkdir()
    with pytest.raises(ValidationError, match="holds no cell yet"):
        cf.report.build(tmp_path)


def test_amortized_times_are_marked_in_the_full_table_too(folder, tmp_path):
    text = cf.report.build(folder, out=tmp_path / "p.html").read_text()
    full = re.search(r"<details>.*?</details>", text, flags=re.S).group(0)
    head = re.findall(r"<th[^>]*>(.*?)</th>", full)
    mdpso = [h.strip() for h in head].index("mdpso") - 1  # the metric column comes first
    rows = re.findall(r"<tr>(.*?)</tr>", full, flags=re.S)
    times = [r for r in rows if re.search(r">time_median", r)]
    assert times, "the full table lists the median time"
    cells = re.findall(r"<td[^>]*>(.*?)</td>", times[0], flags=re.S)
    assert cells[1 + mdpso].endswith("\u1d43")
    nearest = 1 - mdpso  # the other of the two methods
    assert not cells[1 + nearest].endswith("\u1d43")


def test_skipped_cells_wrap_their_reasons(folder, tmp_path):
    results = _copy(folder, tmp_path)
    record = _cell(results, "mdpso")
    meta = json.loads(record.read_text())
    meta.update(status="skipped", reason="a long reason " * 40)
    record.write_text(json.dumps(meta))
    text = cf.report.build(results).read_text()
    assert 'class="tbl reasons"' in text and ".reasons td" in text


def test_times_keep_three_significant_digits_and_the_intro_reads_as_sentences():
    assert [_three_digits(x) for x in (0.014, 0.0452, 100.0, 0.5)] == [
        "0.0140",
        "0.0452",
        "100",
        "0.500",
    ]
    text = _intro(
        {"description": "tiny check run", "queries": 4, "n_counterfactuals": 1, "seeds": [0]},
        pd.DataFrame(),
    )
    assert text.startswith("tiny check run. Up to 4 queries") and "seed 0," in text
    assert "[0]" not in text
