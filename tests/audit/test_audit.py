"""cf.audit: known answers on a planted population, proofs only from exact methods,
aggregates that equal a recomputation from the per-row table, JSON round trip, CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.recourse import Batch, Statistics

pytest.importorskip("z3")

BOUNDARY = 100.0


@pytest.fixture(scope="module")
def linear():
    """x1 + x2 > 100 is favourable; a logistic regression learns it almost exactly."""
    rng = np.random.default_rng(0)
    n = 800
    tr = pd.DataFrame({"x1": rng.uniform(0, 100, n), "x2": rng.uniform(0, 100, n)})
    tr["y"] = (tr.x1 + tr.x2 > BOUNDARY).astype(int)
    data = cf.Dataset.from_frame(tr, target="y")
    data.metadata["favourable"] = 1
    model = cf.models.fit(data, "lr", C=1e4)
    return data, model


def _weights(model, data):
    """The fitted logit is linear in the raw features: recover (w, b) exactly from it."""

    def logit(x1, x2):
        p = model.predict_proba(pd.DataFrame({"x1": [x1], "x2": [x2]}))[0, 1]
        return np.log(p / (1 - p))

    b = logit(50.0, 50.0) - 0.0
    w1 = logit(51.0, 50.0) - logit(50.0, 50.0)
    w2 = logit(50.0, 51.0) - logit(50.0, 50.0)
    return np.array([w1, w2]), b - 50 * w1 - 50 * w2


@pytest.fixture(scope="module")
def population():
    """Group A sits just below the boundary, group B far below it (the planted gap);
    a few rows of each are accepted; 'region' is a column that is not a model feature."""
    rng = np.random.default_rng(1)
    rows = []
    for g, lo, hi, n in (
        ("A", 85, 97, 24),
        ("B", 55, 75, 24),
        ("A", 110, 130, 4),
        ("B", 110, 130, 4),
    ):
        s = rng.uniform(lo, hi, n)
        share = rng.uniform(0.35, 0.65, n)
        rows.append(pd.DataFrame({"x1": s * share, "x2": s * (1 - share), "region": g}))
    X = pd.concat(rows, ignore_index=True)
    X.index = [f"r{i}" for i in range(len(X))]
    return X


@pytest.fixture(scope="module")
def mace_audit(linear, population):
    data, model = linear
    mace = cf.MACE(random_state=0, rel_gap=1e-4).fit(model, data)
    return cf.audit(
        mace,
        population,
        groups="region",
        statistics=Statistics(min_group_size=5, n_bootstrap=200, random_state=3),
    )


def test_planted_gap_is_recovered(linear, population, mace_audit):
    data, model = linear
    w, b = _weights(model, data)
    R = data.schema.ranges()
    pr = mace_audit.per_row
    rej = pr[pr["rejected"]]
    assert set(rej.index) == set(population.index[population.x1 + population.x2 < BOUNDARY])
    assert (rej["outcome"] == "recourse").all()
    # exact nearest normalised l1 for a linear model: the whole gap on the cheapest feature
    Xr = population.loc[rej.index, ["x1", "x2"]].to_numpy()
    gap = -(Xr @ w + b)
    expected = gap / np.max(np.abs(w) * R) / 2
    np.testing.assert_allclose(rej["cost_l1"].to_numpy(), expected, atol=2e-3)
    s = mace_audit.summary().set_index(["grouping", "group"])
    burden_a, burden_b = s.loc[("region", "A"), "burden"], s.loc[("region", "B"), "burden"]
    exp_a = expected[population.loc[rej.index, "region"].to_numpy() == "A"].mean()
    exp_b = expected[population.loc[rej.index, "region"].to_numpy() == "B"].mean()
    assert burden_a == pytest.approx(exp_a, abs=2e-3)
    assert burden_b == pytest.approx(exp_b, abs=2e-3)
    assert burden_b > 3 * burden_a  # the planted gap
    assert bool(s.loc[("region", "A"), "best_off"]) and not bool(s.loc[("region", "B"), "best_off"])
    assert s.loc[("region", "B"), "burden_ratio"] == pytest.approx(burden_b / burden_a)
    assert s.loc[("region", "B"), "burden_gap"] == pytest.approx(burden_b - burden_a)
    # MACE's own distance is its l1: identical to the normalised l1 column
    np.testing.assert_allclose(rej["cost_method"], rej["cost_l1"], rtol=1e-9)


def _recompute(pr: pd.DataFrame, col: str | None, level: str | None) -> dict:
    sub = pr if col is None else pr[pr[f"group:{col}"] == level]
    rej = sub[sub["rejected"]]
    rec = rej[rej["outcome"] == "recourse"]
    k = len(rej)
    z = 1.959963984540054
    p = (rej["outcome"] == "recourse").mean()
    centre = (p + z * z / (2 * k)) / (1 + z * z / k)
    half = z * np.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / (1 + z * z / k)
    return {
        "n": len(sub),
        "n_rejected": k,
        "rejection_rate": k / len(sub),
        "recourse_rate": p,
        "recourse_ci_low": 0.0 if p == 0 else centre - half,
        "recourse_ci_high": 1.0 if p == 1 else centre + half,
        "proven_none_rate": (rej["outcome"] == "proven_none").mean(),
        "unknown_rate": (rej["outcome"] == "unknown").mean(),
        "cost_median": rec["cost"].median(),
        "cost_mean": rec["cost"].mean(),
        "burden": rec["cost_l1"].mean(),
    }


def _check_summary(result):
    pr = result.per_row
    s = result.summary()
    for _, row in s.iterrows():
        col = None if row["grouping"] == "" else row["grouping"]
        exp = _recompute(pr, col, None if col is None else row["group"])
        for k, v in exp.items():
            assert row[k] == pytest.approx(v, nan_ok=True, abs=1e-12), (
                row["grouping"],
                row["group"],
                k,
            )
        if not np.isnan(row["cost_median"]):
            assert (
                row["cost_median_ci_low"]
                <= row["cost_median"] + 1e-12
                <= row["cost_median_ci_high"] + 2e-12
            )


def test_aggregates_equal_recomputation(mace_audit):
    _check_summary(mace_audit)
    pr = mace_audit.per_row
    rec = pr[pr["rejected"] & (pr["outcome"] == "recourse")]
    acts = mace_audit.actions().set_index("feature")
    for f in ("x1", "x2"):
        n = sum(f in c for c in rec["changed"])
        assert acts.loc[f, "n_changed"] == n
        assert acts.loc[f, "share"] == pytest.approx(n / len(rec))
    sets = mace_audit.change_sets()
    assert sets["n"].sum() == len(rec)
    by = mace_audit.actions(by="region")
    assert by.groupby("group")["n_recourse"].first().sum() == len(rec)


def test_bootstrap_is_seeded(mace_audit):
    again = cf.AuditResult(mace_audit.per_row, mace_audit.meta)
    pd.testing.assert_frame_equal(again.summary(), mace_audit.summary())
    other = dict(mace_audit.meta)
    other["settings"] = {**json.loads(mace_audit.to_json())["meta"]["settings"], "random_state": 4}
    moved = cf.AuditResult(mace_audit.per_row, other).summary()
    assert not np.allclose(moved["cost_mean_ci_low"], mace_audit.summary()["cost_mean_ci_low"])
    pd.testing.assert_series_equal(moved["cost_mean"], mace_audit.summary()["cost_mean"])


def test_proven_none_only_for_exact_methods_and_truly_stuck_rows(linear, population):
    data, model = linear
    w, b = _weights(model, data)
    cons = cf.Constraints(immutable=["x2"], ranges={"x1": (None, 60.0)})
    mace = cf.MACE(random_state=0).fit(model, data)
    res = cf.audit(
        mace,
        population,
        groups="region",
        constraints=cons,
        statistics=Statistics(n_bootstrap=50),
    )
    pr = res.per_row[res.per_row["rejected"]]
    x = population.loc[pr.index]
    need_x1 = (-b - w[1] * x["x2"]) / w[0]  # x1 at the boundary with x2 frozen
    stuck = need_x1 > 60.0 + 1e-6
    assert stuck.any() and (~stuck).any()
    assert ((pr["outcome"] == "proven_none") == stuck).all()
    assert (pr.loc[~stuck, "outcome"] == "recourse").all()
    assert pr.loc[stuck, "certificate"].str.contains("proven").all()
    # a heuristic under the same constraints never claims a proof
    near = cf.NearestObservable().fit(model, data)
    h = cf.audit(
        near,
        population,
        groups="region",
        constraints=cons,
        statistics=Statistics(n_bootstrap=50),
    )
    hr = h.per_row[h.per_row["rejected"]]
    assert not (hr["outcome"] == "proven_none").any()
    assert (hr.loc[stuck, "outcome"] == "unknown").all()
    assert hr.loc[stuck, "reason"].str.len().gt(0).all()
    assert h.summary()["proven_none_rate"].fillna(0).eq(0).all()
    assert "not a proof" in h.guarantee["none"]
    # every mutable feature frozen: every rejected row is stuck, proven by MACE
    frozen = cf.audit(
        mace,
        population,
        constraints=cf.Constraints(immutable=["x1", "x2"]),
        statistics=Statistics(n_bootstrap=50),
    )
    fr = frozen.per_row[frozen.per_row["rejected"]]
    assert (fr["outcome"] == "proven_none").all()
    _check_summary(res)
    _check_summary(h)


def test_json_round_trip(mace_audit, tmp_path):
    back = cf.AuditResult.from_json(mace_audit.to_json())
    pd.testing.assert_frame_equal(back.per_row, mace_audit.per_row, check_dtype=False)
    pd.testing.assert_frame_equal(back.summary(), mace_audit.summary())
    pd.testing.assert_frame_equal(back.actions(), mace_audit.actions())
    assert back.meta["groups"] == json.loads(mace_audit.to_json())["meta"]["groups"]
    # the method's words and what it proves travel with the audit (MACE's class says them)
    assert back.guarantee == mace_audit.guarantee == cf.MACE.guarantee(mace_audit.meta["params"])
    assert back.proves_infeasibility and mace_audit.meta["proves_infeasibility"]
    older = json.loads(mace_audit.to_json())
    for key in ("guarantee", "proves_infeasibility"):  # an audit saved before they were kept
        older["meta"].pop(key)
    older["version"] = 1  # ... by format 1, which had no hash
    for key in ("sha256", "integrity"):
        older.pop(key)
    old = cf.AuditResult.from_json(json.dumps(older))
    assert old.guarantee == mace_audit.guarantee and old.proves_infeasibility
    paths = mace_audit.save(tmp_path, html=False)
    assert pd.read_csv(paths["summary"]).shape[0] == len(mace_audit.summary())
    with pytest.raises(ValidationError, match="format"):
        cf.AuditResult.from_json(json.dumps({"format": "other"}))


def test_sensitivity_paired_and_never_mixed(linear, population):
    """x1 plays the protected feature: freezing it can only raise MACE's proven-nearest cost.
    MACE's own l1 (costs="own"), aggregated as l1: there both features are equally cheap to
    move, so answers change x1 (the measure of effort prefers changing one feature only)."""
    data, model = linear
    mace = cf.MACE(random_state=0, rel_gap=1e-4).fit(model, data)
    res = cf.audit(
        mace,
        population,
        groups="region",
        protected="x1",
        requirements=cf.Requirements(costs="own"),
        measure="l1",
        statistics=Statistics(n_bootstrap=50),
    )
    s = res.sensitivity()
    pr = res.per_row
    rec = pr[pr["rejected"] & (pr["outcome"] == "recourse")]
    changed = rec[rec["protected_changed"] == 1.0]
    assert s["n_changed"] == len(changed) > 0
    assert s["share_changed"] == pytest.approx(len(changed) / len(rec))
    paired = res.sensitivity_rows
    assert list(paired.index) == list(changed.index)
    assert (paired["cost_allowed"] == rec.loc[paired.index, "cost"]).all()
    ok = paired[paired["outcome_frozen"] == "recourse"]
    assert (ok["increase"] >= -2e-3).all()
    assert s["increase_mean"] == pytest.approx(ok["increase"].mean())
    # the per-row table keeps the unrestricted answers only
    assert (rec.loc[paired.index, "changed"].map(lambda c: "x1" in c)).all()
    back = cf.AuditResult.from_json(res.to_json())
    got = back.sensitivity()
    assert set(got) == set(s)
    for k, v in s.items():  # pytest.approx takes no nested containers: compare key by key
        if isinstance(v, (list, tuple)):
            assert list(got[k]) == pytest.approx(list(v), nan_ok=True), k
        elif isinstance(v, (int, float)):
            assert got[k] == pytest.approx(v, nan_ok=True), k
        else:
            assert got[k] == v, k


def test_numeric_groups_binned_and_validation(linear, population):
    data, model = linear
    with pytest.raises(ValidationError, match="no distance of its own"):
        cf.audit(cf.UFCE().fit(model, data), population, measure="method")
    near = cf.NearestObservable().fit(model, data)
    res = cf.audit(
        near,
        population,
        groups=["region", "x1"],
        bins={"x1": [0, 30, 60, 100]},
        statistics=Statistics(n_bootstrap=20),
    )
    levels = res.summary().query("grouping == 'x1'")["group"].tolist()
    assert levels == ["[0, 30)", "[30, 60)", "[60, 100]"]
    assert res.summary().query("grouping == 'x1'")["n"].sum() == len(population)
    with pytest.raises(ValidationError, match="not aligned"):
        cf.audit(
            near, population, groups=pd.Series(["a"] * 3, index=population.index[:3], name="g")
        )
    with pytest.raises(ValidationError, match="not in X"):
        cf.audit(near, population, groups="nope")
    with pytest.raises(ValidationError, match="one Constraints"):
        cf.audit(near, population, constraints=[cf.Constraints()] * len(population))
    with pytest.raises(ValidationError, match="measure must be one of"):
        cf.audit(near, population, measure="nope")
    with pytest.raises(ValidationError, match="may not change"):
        cf.audit(near, population, protected="x2", constraints=cf.Constraints(immutable=["x2"]))
    before = population.copy()
    cf.audit(near, population, groups="region", statistics=Statistics(n_bootstrap=10))
    pd.testing.assert_frame_equal(population, before)


def test_resume_and_refuse_mixing(linear, population, tmp_path):
    data, model = linear
    near = cf.NearestObservable().fit(model, data)
    first = cf.audit(
        near,
        population,
        statistics=Statistics(n_bootstrap=10),
        batch=Batch(chunk_size=10, out_dir=tmp_path),
    )
    assert len(list((tmp_path / "explained").glob("chunk-*.json"))) >= 2
    again = cf.audit(
        near,
        population,
        statistics=Statistics(n_bootstrap=10),
        batch=Batch(chunk_size=10, out_dir=tmp_path),
    )
    pd.testing.assert_frame_equal(
        again.per_row.drop(columns="runtime"), first.per_row.drop(columns="runtime")
    )
    with pytest.raises(ValidationError, match="different run"):
        cf.audit(
            near,
            population,
            constraints=cf.Constraints(immutable=["x2"]),
            batch=Batch(chunk_size=10, out_dir=tmp_path),
        )


class _Flaky(cf.NearestObservable):
    """Fails on one row: its chunk is lost, the audit says so per row."""

    def _explain_one(self, query):
        if query.id == "r3":
            raise RuntimeError("boom on r3")
        return super()._explain_one(query)


def test_failed_chunk_rows_are_unknown_with_reason(linear, population):
    data, model = linear
    flaky = _Flaky().fit(model, data)
    res = cf.audit(
        flaky,
        population,
        statistics=Statistics(n_bootstrap=10),
        batch=Batch(chunk_size=5),
    )
    pr = res.per_row
    lost = pr[pr["reason"].str.contains("boom on r3", regex=False)]
    assert "r3" in lost.index and 0 < len(lost) <= 5
    assert (lost["outcome"] == "unknown").all()
    _check_summary(res)


def test_cli_smoke(tmp_path, capsys):
    from counterfact.cli import main

    out = tmp_path / "audit"
    code = main(
        [
            "audit",
            "--dataset",
            "german_credit",
            "--model",
            "lr",
            "--method",
            "nearest",
            "--groups",
            "age,personal_status_sex",
            "--max-rows",
            "60",
            "--n-bootstrap",
            "50",
            "--out",
            str(out),
            "--no-html",
            "-q",
        ]
    )
    assert code == 0
    s = pd.read_csv(out / "summary.csv")
    assert s.loc[0, "n"] == 60 and set(s["grouping"].dropna()) == {"age", "personal_status_sex"}
    back = cf.AuditResult.from_json((out / "audit.json").read_text())
    assert len(back.per_row) == 60
    assert "recourse_rate" in capsys.readouterr().out
    assert (
        main(
            [
                "audit",
                "--dataset",
                "german_credit",
                "--model",
                "lr",
                "--groups",
                "nope",
                "--max-rows",
                "20",
                "--out",
                str(tmp_path / "x"),
                "-q",
            ]
        )
        == 2
    )
    assert "nope" in capsys.readouterr().err


def test_cli_user_errors_before_any_fitting(tmp_path, capsys):
    """--out naming a file, or --groups naming no column, fail in one line before a model is
    fitted."""
    from counterfact.cli import main

    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert (
        main(
            [
                "audit",
                "--dataset",
                "german_credit",
                "--model",
                "lr",
                "--method",
                "nearest",
                "--groups",
                "age",
                "--out",
                str(a_file),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        "--out" in err
        and "is a file" in err
        and "Traceback" not in err
        and "internal error" not in err
    )
    assert (
        main(
            [
                "audit",
                "--dataset",
                "german_credit",
                "--model",
                "lr",
                "--method",
                "nearest",
                "--groups",
                "age,nope",
                "--out",
                str(tmp_path / "y"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--groups names columns ['nope']" in err and "fitted" not in err
    assert not (tmp_path / "y").exists()  # a failed audit leaves no empty folder behind
    argv = ["audit", "--dataset", "nosuch", "--out", str(tmp_path / "z")]
    assert main(argv) == 2 and not (tmp_path / "z").exists()


def test_whole_number_groups_get_whole_number_bins():
    """Quantile edges of an integer column (age) fall on integers; the rows per bin are
    unchanged."""
    from counterfact.recourse._groups import resolve_groups

    ages = pd.Series(np.random.default_rng(0).integers(19, 75, 200), name="age")
    X = pd.DataFrame({"age": ages})
    _labels, info = resolve_groups("age", X, bins=4)
    edges = info["age"]["edges"]
    assert all(float(e).is_integer() for e in edges)
    assert all("." not in level for level in info["age"]["order"])
    raw = np.quantile(ages.to_numpy(dtype=float), np.linspace(0, 1, 5))
    same = np.clip(
        np.searchsorted(np.unique(raw), ages.to_numpy(), side="right") - 1,
        0,
        len(np.unique(raw)) - 2,
    )
    mine = np.clip(
        np.searchsorted(np.asarray(edges), ages.to_numpy(), side="right") - 1, 0, len(edges) - 2
    )
    assert (same == mine).all()


def test_report_states_constraints_and_all_small_groupings(linear, population):
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    from counterfact.recourse._report import render

    data, model = linear
    near = cf.NearestObservable().fit(model, data)
    res = cf.audit(
        near,
        population,
        groups="region",
        statistics=Statistics(n_bootstrap=10, min_group_size=1000),
    )
    html = render(res)
    assert "none beyond the schema" in html and "Constraints(" not in html
    assert "Every group here is small" in html
    res = cf.audit(
        near,
        population,
        groups="region",
        constraints=cf.Constraints(max_changes=1),
        statistics=Statistics(n_bootstrap=10, min_group_size=1),
    )
    html = render(res)
    assert "max_changes: 1" in html and "Every group here is small" not in html


def test_population_may_be_a_dataset(linear, population):
    """A Dataset (as split() returns) is audited like its feature columns."""
    data, model = linear
    near = cf.NearestObservable().fit(model, data)
    frame = population.assign(y=(population.x1 + population.x2 > BOUNDARY).astype(int))
    ds = cf.Dataset(frame, data.schema, name="population")
    a = cf.audit(near, ds, groups="x1", statistics=Statistics(n_bootstrap=10))
    b = cf.audit(
        near,
        population[["x1", "x2"]],
        groups="x1",
        statistics=Statistics(n_bootstrap=10),
    )
    pd.testing.assert_frame_equal(a.summary(), b.summary())


def test_audit_under_a_margin_and_retrained_models(linear, population):
    """audit(requirements=Requirements(min_probability=, robust_to=)): every row counted as
    recourse reaches the margin in the model and is accepted by every retrained copy, checked
    here with the real models; the guarantee says so."""
    data, model = linear
    copies = cf.models.retrained(model, data, n=2, random_state=3)
    method = cf.MACE(time_limit=10).fit(model, data)
    res = cf.audit(
        method,
        population,
        groups="region",
        statistics=Statistics(n_bootstrap=50),
        requirements=cf.Requirements(min_probability=0.7, robust_to=copies),
    )
    rec = res.per_row.index[res.per_row["outcome"] == "recourse"]
    assert len(rec) > 0
    cfs = res.result.counterfactuals.xs(0, level="rank").loc[rec, ["x1", "x2"]]
    assert (model.predict_proba(cfs)[:, 1] >= 0.7).all()
    for m in copies:
        assert (m.predict(cfs) == 1).all()
    assert (
        "at least 70 %" in res.guarantee["recourse"]
        and "2 retrained copies" in res.guarantee["recourse"]
    )
    plain = cf.audit(method, population, groups="region", statistics=Statistics(n_bootstrap=50))
    assert plain.summary()["cost_median"].iloc[0] < res.summary()["cost_median"].iloc[0]


def test_audit_refuses_to_resume_under_another_margin(linear, population, tmp_path):
    data, model = linear
    method = cf.MACE(time_limit=10).fit(model, data)
    X = population.head(10)
    cf.audit(
        method,
        X,
        statistics=Statistics(n_bootstrap=20),
        batch=Batch(out_dir=tmp_path),
    )
    with pytest.raises(ValidationError, match="different run"):
        cf.audit(
            method,
            X,
            statistics=Statistics(n_bootstrap=20),
            batch=Batch(out_dir=tmp_path),
            requirements=cf.Requirements(min_probability=0.8),
        )


def test_a_vote_share_is_part_of_what_a_resumed_run_must_share():
    """Chunks explained under one ``min_vote_share`` are not mixed with another's (nor
    with none), and requirements without one keep the fingerprint they had."""
    from counterfact.recourse._batch import Run

    def fingerprint(**req):
        run = Run(None, None, 1, 1, Batch(), None, "effort", cf.Requirements(**req))
        return run.requirements_fingerprint()

    plain, share = fingerprint(), fingerprint(min_vote_share=0.6)
    assert len({plain, share, fingerprint(min_vote_share=0.7)}) == 3
    assert "min_vote_share" not in plain and share == fingerprint(min_vote_share=0.6)


def test_the_default_cost_is_the_effort_with_its_unit(linear, population, mace_audit):
    """Every method's audit aggregates the same measure by default: 1 per changed feature
    plus each move in MAD-units of the training data, named with its unit."""
    data, model = linear
    pr = mace_audit.per_row
    rec = pr[pr["outcome"] == "recourse"]
    assert mace_audit.meta["measure"] == "effort"
    assert mace_audit.meta["cost_unit"] == "changes + MAD-units"
    assert (rec["cost"] == rec["cost_effort"]).all() and len(rec)
    bound = cf.Costs().bind(data.schema, data.X)
    q = rec.index[0]
    answer = mace_audit.result.for_query(q).iloc[[0]]
    assert bound.evaluate(population.loc[q, ["x1", "x2"]], answer)[0] == pytest.approx(
        rec.loc[q, "cost"]
    )
    # the effort counts each changed feature once, plus the moves
    assert (rec["cost_effort"] >= rec["n_changed"]).all()
    assert (mace_audit.summary()["cost_measure"].str.contains("MAD-units")).all()
    # a heuristic's audit is on the same scale, and "own" costs do not change the measure
    near = cf.NearestObservable().fit(model, data)
    own = cf.audit(near, population, requirements=cf.Requirements(costs="own"))
    assert own.meta["measure"] == "effort" and own.meta["cost_unit"] == "changes + MAD-units"
    with pytest.raises(ValidationError, match="measure='costs' needs the costs"):
        cf.audit(near, population, requirements=cf.Requirements(costs="own"), measure="costs")


def test_bins_must_cover_every_row_and_a_numeric_column():
    """Edges that leave rows out, or a non-numeric column cut into bins, are errors naming
    the column (they made an "(outside bins)" group mixing both tails, or wiped the
    grouping into "(missing)")."""
    from counterfact.recourse._groups import resolve_groups

    X = pd.DataFrame(
        {"age": np.arange(20, 70), "housing": np.resize(["rent", "own", "for free"], 50)}
    )
    with pytest.raises(ValidationError, match=r"'age' cover \[30, 50\], but 29 rows lie outside"):
        resolve_groups("age", X, bins={"age": [30, 40, 50]})
    with pytest.raises(ValidationError, match=r"'housing': the column is not numeric"):
        resolve_groups("housing", X, bins={"housing": [0, 1]})
    labels, info = resolve_groups(["age", "housing"], X, bins={"age": [20, 40, 69]})
    assert info["age"]["order"] == ["[20, 40)", "[40, 69]"]
    assert set(labels["housing"]) == {"rent", "own", "for free"}
