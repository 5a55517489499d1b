"""One formatter: values at resolution, only changed features, reasons and certificates."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.constraints._bounds import changed
from counterfact.methods._registry import certificate_text
from counterfact.result import STATUSES, CounterfactualResult, changes
from counterfact.result._status import DEFAULT_REASONS
from counterfact.result._text import describe_changes
from counterfact.schema._format import format_value


@pytest.fixture
def schema() -> cf.Schema:
    return cf.Schema(
        (
            cf.Feature("credit_amount", "real", lower=250, upper=20000, resolution=1),
            cf.Feature("drinks", "real", lower=0, upper=10, resolution=0.01),
            cf.Feature("mcv", "integer", lower=60, upper=110),
            cf.Feature("purpose", "categorical", categories=("car", "radio", "business")),
            cf.Feature("rate", "real", lower=0, upper=1),  # no resolution: 6 significant digits
        ),
        target="y",
        classes=(0, 1),
    )


def test_format_value_at_resolution(schema):
    assert format_value(schema["credit_amount"], 1031.000061) == "1031"
    assert format_value(schema["credit_amount"], np.float32(1330.0)) == "1330"
    assert format_value(schema["drinks"], 0.5714850416607664) == "0.57"
    assert format_value(schema["drinks"], 0.5) == "0.50"
    assert format_value(schema["drinks"], -0.001) == "0.00"  # no "-0.00"
    assert format_value(schema["mcv"], 96.0) == "96"
    assert format_value(schema["mcv"], np.int64(96)) == "96"
    assert format_value(schema["purpose"], "car") == "car"
    assert format_value(schema["rate"], 1 / 3) == "0.333333"
    assert format_value(schema["rate"], None) == "?"


def test_changes_dtype_aware(schema):
    x = pd.Series({"credit_amount": 1330, "drinks": 0.5, "mcv": 96, "purpose": "car", "rate": 0.25})
    c = pd.Series(
        {
            "credit_amount": 1031.000061,
            "drinks": 0.5714850416607664,
            "mcv": 96.0,
            "purpose": "car",
            "rate": 0.25,
        }
    )
    ch = changes(schema, x, c)
    assert [c.feature for c in ch] == ["credit_amount", "drinks"]  # mcv 96 vs 96.0 is no change
    assert (ch[0].before_text, ch[0].after_text) == ("1330", "1031")
    assert ch[0].before == 1330 and ch[0].after == pytest.approx(1031.000061)  # raw values kept
    assert describe_changes(ch) == "credit_amount 1330 -> 1031; drinks 0.50 -> 0.57"
    assert describe_changes([]) == "no change"
    assert changes(schema, x, x.copy()) == []


def test_sub_resolution_change_never_reads_as_a_to_a(schema):
    x = pd.Series({"credit_amount": 1330, "drinks": 0.5, "mcv": 96, "purpose": "car", "rate": 0.25})
    c = x.copy()
    c["credit_amount"] = 1330.2
    (ch,) = changes(schema, x, c)
    assert ch.before_text != ch.after_text
    assert "1330.2" in ch.after_text


def test_certificate_text():
    t = certificate_text("mace", "optimal", {"delta_min": 0.1, "delta_max": 0.1009})
    assert "proven nearest" in t and "no answer is more than 0.89 % closer" in t
    assert "proven: no counterfactual exists" in certificate_text("mace", "infeasible", {})
    assert certificate_text("ceocl", "optimal", {"gap": 0.0}).startswith("CE-OCL: optimal")
    assert "relative gap 5 %" in certificate_text("ceocl", "feasible", {"gap": 0.05})
    for m in ("ufce", "mdpso", "l2c", "nearest"):
        assert "not proven nearest" in certificate_text(m, "feasible", {})
        t = certificate_text(
            m, "failed", {"reason": "no admissible observed row of the target class"}
        )
        assert "no admissible observed row" in t and "not a proof" in t
    assert "time limit" in certificate_text("ufce", "timeout", {})
    # a row the model already assigns to the target: nothing to prove either way
    t = certificate_text("nearest", "failed", {"reason": "query already predicted as target"})
    assert "already predicts the target" in t and "not a proof" not in t
    assert "contradict" in certificate_text("mace", "invalid", {})


def _result(schema: cf.Schema) -> CounterfactualResult:
    names = schema.names
    queries = pd.DataFrame(
        [
            [1330.0, 0.5, 96, "car", 0.25],
            [2000.0, 1.0, 80, "radio", 0.5],
            [500.0, 2.0, 70, "car", 0.1],
            [700.0, 2.0, 70, "car", 0.1],
        ],
        columns=names,
        index=pd.Index([10, 11, 12, 13]),
    )
    cfs = pd.DataFrame(
        [[1031.000061, 0.5714850416607664, 96.0, "car", 0.25], [1330.0, 0.5, 96, "radio", 0.25]],
        columns=names,
        index=pd.MultiIndex.from_tuples([(10, 0), (10, 1)], names=["query", "rank"]),
    )
    status = pd.Series(
        ["feasible", "failed", "timeout", "invalid"], index=queries.index, dtype=object
    )
    diag = pd.DataFrame(
        {"reason": [None, "query already predicted as target", None, None]}, index=queries.index
    )
    return CounterfactualResult(
        queries=queries,
        counterfactuals=cfs,
        status=status,
        runtime=pd.Series(0.1, index=queries.index),
        diagnostics=diag,
        schema=schema,
        target=pd.Series(1, index=queries.index),
        method="ufce",
        confidence=pd.Series([0.61, 0.7], index=cfs.index),
        query_confidence=pd.Series([0.2, 0.9, 0.3, 0.3], index=queries.index),
    )


def test_result_renderings_list_only_changes_at_resolution(schema):
    r = _result(schema)
    text = r.describe()
    assert "query 10, #0: credit_amount 1330 -> 1031; drinks 0.50 -> 0.57" in text
    assert "query 10, #1: purpose 'car' -> 'radio'" in text  # categories quoted next to "->"
    assert "mcv" not in text and "1031.000061" not in text
    d = r.diffs()
    assert set(d["feature"]) == {"credit_amount", "drinks", "purpose"}
    assert list(d.columns) == ["query", "rank", "feature", "from", "to", "from_text", "to_text"]
    assert d.loc[d["feature"] == "credit_amount", "to"].iloc[0] == pytest.approx(1031.000061)
    assert d.loc[d["feature"] == "credit_amount", "to_text"].iloc[0] == "1031"
    assert [c.feature for c in r.changes(10, 0)] == ["credit_amount", "drinks"]
    with pytest.raises(cf.exceptions.ValidationError, match="rank"):
        r.changes(11, 0)
    page = r._repr_html_()
    assert "mcv" not in page and "1031.000061" not in page and "0.5714850416607664" not in page
    assert "1330 &rarr; 1031" in page
    assert "0.200 &rarr; 0.610" in page  # P(target) before and after
    assert "query already predicted as target" in page
    assert "not proven nearest" in page  # certificate in words
    # no rendering shows "a -> a"
    for a, b in re.findall(r"(\S+) -> (\S+?)[;\n]", text + "\n"):
        assert a != b


def test_every_non_success_has_a_reason(schema):
    r = _result(schema)
    assert "invalid" in STATUSES
    reason = r.reason
    assert reason[10] == ""
    assert reason[11] == "query already predicted as target"  # the method's own
    assert reason[12] == DEFAULT_REASONS["timeout"]
    assert reason[13] == DEFAULT_REASONS["invalid"]
    text = r.describe()
    assert "query 11: no counterfactual (failed: query already predicted as target)" in text
    assert "query 12: no counterfactual (timeout: time limit reached" in text
    assert "summary" and "reason" in r.summary().columns
    # reasons survive JSON
    back = CounterfactualResult.from_json(r.to_json())
    pd.testing.assert_series_equal(back.reason, r.reason)
    assert back.describe() == text


def test_real_run_renders_only_changes():
    data = cf.datasets.load("german_credit")
    model = cf.models.fit(data, "lr")
    method = cf.methods.get("ufce", random_state=0).fit(model, data)
    pred = model.predict(data.X)
    rows = data.X[pred == 0].iloc[:5]
    r = method.explain(rows, target=1, n_counterfactuals=2)
    assert len(r.counterfactuals) > 0
    d = r.diffs()
    for (q, rank), g in d.groupby(["query", "rank"]):
        x, c = r.queries.loc[q], r.counterfactuals.loc[(q, rank)]
        unchanged = {f.name for f in data.schema if not changed(f, x[f.name], c[f.name])}
        assert not unchanged & set(g["feature"])
        assert (g["from_text"] != g["to_text"]).all()
    assert "credit_amount" in data.schema and data.schema["credit_amount"].resolution is not None
    text = r.describe()
    for a, b in re.findall(r"(\S+) -> (\S+?)(?:;|$)", text, flags=re.M):
        assert a != b
