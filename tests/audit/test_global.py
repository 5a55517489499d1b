"""cf.global_recourse: a planted population whose best actions are known, every covered person
verified with the real model and their own constraints, per-group figures recomputed from the
per-person table, greedy against the exact MILP, JSON round trip, reuse of an audit, bad input,
the report section and the CLI."""

from __future__ import annotations

import itertools
import math
from html import escape

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.recourse import ActionSearch, Batch, Statistics
from counterfact.recourse._actions import Action, ActionSpace, Atom
from counterfact.recourse._cover import choose, greedy, improve
from counterfact.recourse._global._stats import newcombe
from counterfact.recourse._stats import wilson

pytest.importorskip("z3")


# --------------------------------------------------------------- planted answer
@pytest.fixture(scope="module")
def planted():
    """Favourable iff x1 >= 60 or x2 >= 80 (a tree learns it exactly on this grid).

    Region A (30 people) can only raise x1 (x2 is immutable for them), region B (20) only x2,
    region C (10) either, and is cheaper via x1. So the best single action covers A + C (40 of
    60), the best two -- "x1 to at least 60" and "x2 to at least 80" -- cover everyone, at
    exactly each person's proven minimal (MACE) cost."""
    grid, coarse = np.arange(0, 101), np.arange(0, 101, 5)
    tr = pd.DataFrame(
        [(a, b) for a in grid for b in coarse] + [(a, b) for a in coarse for b in grid],
        columns=["x1", "x2"],
    ).drop_duplicates()
    tr["y"] = ((tr.x1 >= 60) | (tr.x2 >= 80)).astype(int)
    schema = cf.Schema(
        (
            cf.Feature("x1", "integer", lower=0, upper=100),
            cf.Feature("x2", "integer", lower=0, upper=100),
        ),
        target="y",
    )
    data = cf.Dataset(tr, schema)
    data.metadata["favourable"] = 1
    model = cf.models.fit(data, "tree", random_state=0)
    rng = np.random.default_rng(0)

    def block(n, x1, x2, region):
        return pd.DataFrame(
            {
                "x1": rng.integers(x1[0], x1[1] + 1, n),
                "x2": rng.integers(x2[0], x2[1] + 1, n),
                "region": region,
            }
        )

    X = pd.concat(
        [
            block(30, (40, 55), (0, 30), "A"),
            block(20, (0, 20), (60, 75), "B"),
            block(10, (20, 35), (20, 35), "C"),
            block(4, (65, 90), (0, 50), "A"),
        ],
        ignore_index=True,
    )
    X.index = [f"p{i}" for i in range(len(X))]
    cons = [
        cf.Constraints(immutable=["x2"])
        if r == "A"
        else cf.Constraints(immutable=["x1"])
        if r == "B"
        else None
        for r in X["region"]
    ]
    mace = cf.MACE(random_state=0).fit(model, data)
    return data, model, mace, X, cons


@pytest.fixture(scope="module")
def planted_result(planted):
    _, _, mace, X, cons = planted
    return cf.global_recourse(
        mace,
        X[["x1", "x2"]],
        max_actions=2,
        groups=X["region"],
        constraints=cons,
        statistics=Statistics(n_bootstrap=200, min_group_size=5, random_state=1),
    )


def test_the_best_two_actions_are_found(planted, planted_result):
    g = planted_result
    assert [a.describe(g.schema) for a in g.rules] == [
        "raise x1 to at least 60",
        "raise x2 to at least 80",
    ]
    assert g.rules[0] == Action((Atom("x1", "at_least", 60),))
    assert g.n_rejected == 60 and g.n_covered == 60 and g.coverage == 1.0
    curve = g.curve.set_index("k")
    assert curve.loc[1, "n_covered"] == 40 and curve.loc[2, "n_covered"] == 60
    assert curve["optimal"].all() and (curve["bound"] == curve["n_covered"]).all()
    # each person's proven minimum (MACE) is exactly what the common action costs them
    pr = g.per_row[g.per_row["rejected"]]
    assert pr["individual_proven"].all() and g.meta["individual_lower_bound"]
    np.testing.assert_allclose(pr["cost_ratio"], 1.0, atol=1e-9)
    region = planted[3]["region"]
    assert set(g.action_of[region == "A"].dropna()) == {"A1"}
    assert set(g.action_of[region == "B"].dropna()) == {"A2"}
    assert set(g.action_of[region == "C"].dropna()) == {"A1"}  # cheaper than x2 for every C person
    assert g.action_of[g.per_row["rejected"] == False].isna().all()  # noqa: E712 - the accepted


def test_one_action_leaves_a_known_gap(planted):
    _, _, mace, X, cons = planted
    g = cf.global_recourse(
        mace,
        X[["x1", "x2"]],
        max_actions=1,
        groups=X["region"],
        constraints=cons,
        statistics=Statistics(n_bootstrap=100, min_group_size=5),
    )
    assert [a.describe(g.schema) for a in g.rules] == ["raise x1 to at least 60"]
    s = g.summary().set_index(["grouping", "group"])
    assert s.loc[("region", "A"), "coverage"] == 1.0 and s.loc[("region", "C"), "coverage"] == 1.0
    assert (
        s.loc[("region", "B"), "coverage"] == 0.0 and s.loc[("region", "B"), "coverage_gap"] == 1.0
    )
    lo, hi = newcombe(30, 30, 0, 20, 0.95)
    assert s.loc[("region", "B"), "coverage_gap_ci_low"] == pytest.approx(lo)
    assert s.loc[("region", "B"), "coverage_gap_ci_high"] == pytest.approx(hi)
    assert 0.7 < lo < 1.0 and hi == pytest.approx(1.0)
    b = g.per_row[(X["region"] == "B") & g.per_row["rejected"]]
    assert (~b["covered"]).all() and b["reason"].str.contains("none of the 1 actions").all()


# ------------------------------------------------------------ real data, verified
@pytest.fixture(scope="module")
def german():
    data = cf.datasets.load("german_credit")
    # the features only time moves may rise here (as before timelines), so that the nearest
    # observed rows of people who differ in age or tenure are admissible
    rising = {f.name: "increasing" for f in data.schema if f.actionability == "time"}
    data = data.with_schema(data.schema.with_actionability(**rising))
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, train)
    X = test.X.iloc[:120]
    cons = [
        cf.Constraints(immutable=["duration_months"])
        if i % 3 == 0
        else cf.Constraints(max_changes=2)
        if i % 3 == 1
        else None
        for i in range(len(X))
    ]
    g = cf.global_recourse(
        method,
        X,
        max_actions=3,
        groups=["personal_status_sex", "age"],
        data=test,
        constraints=cons,
        statistics=Statistics(n_bootstrap=200, min_group_size=5),
        search=ActionSearch(max_candidates=60),
    )
    return data, model, method, X, cons, test, g


def test_every_covered_person_reaches_the_target_within_their_constraints(german):
    data, model, _, X, cons, _, g = german
    schema = data.schema
    pr = g.per_row
    covered = pr.index[pr["rejected"] & pr["covered"]]
    assert 0 < len(covered) and g.n_covered == len(covered)
    reached = g.counterfactuals
    assert list(reached.index) == list(X.index)
    assert (
        reached.drop(index=covered).isna().all().all()
    )  # empty where no action works, and for the accepted
    rows = schema.coerce(reached.loc[covered])
    assert (model.predict(rows) == 1).all()  # the real model, not the library's bookkeeping
    space = ActionSpace(schema)
    by_name = dict(zip(g.names, g.rules, strict=True))
    for q in covered:
        i = X.index.get_loc(q)
        bad = cf.violations(X.loc[q], rows.loc[[q]], schema, cons[i])
        assert len(bad) == 0, (q, bad)
        again = space.decode(
            space.apply(by_name[g.action_of[q]], space.encode(X.loc[[q]]))[0], index=[q]
        )
        pd.testing.assert_frame_equal(again, rows.loc[[q]], check_dtype=False)
        for f in schema:
            if f.is_numeric and f.resolution:
                v = float(rows.loc[q, f.name]) / f.resolution
                assert abs(v - round(v)) < 1e-9, (q, f.name)


def test_uncovered_people_really_have_no_working_action(german):
    data, model, _, X, cons, _, g = german
    space = ActionSpace(data.schema)
    pr = g.per_row
    left = pr.index[pr["rejected"] & ~pr["covered"]]
    for q in left:
        i = X.index.get_loc(q)
        b = (cons[i] or cf.Constraints()).resolve(data.schema).for_query(X.loc[q])
        for action in g.rules:
            V, inside = space.apply(action, space.encode(X.loc[[q]]))
            row = space.decode(V, index=[q])
            assert not (inside[0] and b.satisfied(row)[0] and model.predict(row)[0] == 1)


def test_action_table_and_group_figures_equal_a_recomputation(german):
    *_, g = german
    pr = g.per_row
    rej = pr[pr["rejected"]]
    a = g.actions
    assert list(a.index) == g.names and len(g.names) <= 3
    for name in g.names:
        works = rej[f"works:{name}"]
        assert a.loc[name, "n_works"] == works.sum()
        assert a.loc[name, "cost_median"] == pytest.approx(rej.loc[works, f"cost:{name}"].median())
        assert a.loc[name, "n_assigned"] == (rej["action"] == name).sum()
        for level in g._order["personal_status_sex"]:
            m = rej["group:personal_status_sex"] == level
            assert a.loc[name, f"coverage:personal_status_sex={level}"] == pytest.approx(
                works[m].mean()
            )
    assert a["n_new"].sum() == g.n_covered
    s = g.summary()
    for _, row in s.iterrows():
        sub = rej if row["grouping"] == "" else rej[rej[f"group:{row['grouping']}"] == row["group"]]
        k, n = int(sub["covered"].sum()), len(sub)
        assert row["n_covered"] == k and row["coverage"] == pytest.approx(k / n)
        assert (row["coverage_ci_low"], row["coverage_ci_high"]) == pytest.approx(
            wilson(k, n, 0.95)
        )
        pair = sub[sub["covered"] & (sub["individual"] == "recourse")]
        assert row["cost_ratio"] == pytest.approx(
            pair["cost"].mean() / pair["individual_cost"].mean(), nan_ok=True
        )
        assert row["individual_rate"] == pytest.approx((sub["individual"] == "recourse").mean())
    for grouping in ("personal_status_sex", "age"):
        rows = s[s["grouping"] == grouping]
        ref = rows[~rows["small"]] if (~rows["small"]).any() else rows
        best = ref["coverage"].max()
        np.testing.assert_allclose(rows["coverage_gap"], best - rows["coverage"])
        assert rows["best_off"].sum() == 1


def test_findings_and_per_row_costs(german):
    *_, g = german
    text = " ".join(g.findings())
    assert f"get {g.n_covered} of the {g.n_rejected} rejected people" in text
    assert "not proven nearest" in text  # a heuristic's per-person cost is no lower bound
    assert "rejected people" in text and "to the class 'good' (1)." in text
    pr = g.per_row[g.per_row["covered"]]
    np.testing.assert_allclose(
        pr["cost"], [pr.loc[q, f"cost:{pr.loc[q, 'action']}"] for q in pr.index]
    )
    for q in pr.index:  # the cheapest chosen action that works
        costs = [pr.loc[q, f"cost:{n}"] for n in g.names if pr.loc[q, f"works:{n}"]]
        assert pr.loc[q, "cost"] == pytest.approx(min(costs))


# ---------------------------------------------------------------- the choice
def _brute(works: np.ndarray, k: int) -> int:
    return max(
        int(works[list(c)].any(axis=0).sum())
        for r in range(1, k + 1)
        for c in itertools.combinations(range(works.shape[0]), r)
    )


def test_greedy_and_the_exact_milp_on_small_instances():
    # the classic instance: greedy takes the biggest set first and covers 7 of 9, the MILP 8
    sets = [{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5, 8}]
    works = np.array([[p in s for p in range(9)] for s in sets])
    cost = np.where(works, 1.0, np.nan)
    plain = greedy(works, 2, cost, fill=False)
    assert plain == [2, 0] and works[plain].any(axis=0).sum() == 7
    m = choose(works, cost, 2, solver="milp")
    assert m.n_covered == 8 and m.optimal and m.bound == 8 and set(m.chosen) == {0, 1}
    assert 7 >= (1 - (1 - 1 / 2) ** 2) * m.n_covered
    g = choose(works, cost, 2, solver="greedy")  # a swap repairs it, but nothing proves it
    assert g.n_covered == 8 and not g.optimal and g.bound == 9
    rng = np.random.default_rng(7)
    for _ in range(25):
        works = rng.random((7, 12)) < rng.uniform(0.1, 0.5)
        cost = np.where(works, rng.random(works.shape), np.nan)
        for k in (1, 2, 3):
            best = _brute(works, k)
            g, m = choose(works, cost, k, solver="greedy"), choose(works, cost, k, solver="milp")
            assert m.n_covered == best and m.optimal
            assert (1 - 1 / math.e) * best - 1e-9 <= g.n_covered <= best <= g.bound
            if k == 1:  # one action: the cheapest of those with the best coverage, both ways
                top = np.flatnonzero(works.sum(axis=1) == best)
                cheapest = min(_total(works, cost, [a]) for a in top)
                assert _total(works, cost, g.chosen) == pytest.approx(cheapest)
                assert _total(works, cost, m.chosen) == pytest.approx(cheapest)


def _total(works, cost, chosen):
    c = np.where(works[list(chosen)], cost[list(chosen)], np.inf).min(axis=0)
    return float(c[np.isfinite(c)].sum())


def test_free_slots_and_swaps_lower_the_cost():
    works = np.array([[1, 1, 1], [1, 0, 0], [0, 1, 1], [1, 1, 1]], dtype=bool)
    cost = np.array([[5.0, 5, 5], [1, np.nan, np.nan], [np.nan, 1, 1], [4, 4, 4]])
    assert greedy(works, 1, cost) == [3]  # full coverage, the cheaper of the two
    assert greedy(works, 3, cost) == [3, 2, 1]
    assert improve(works, cost, [0], 1) == [3]  # a swap keeps the coverage and lowers the cost
    assert sorted(choose(works, cost, 2, solver="greedy").chosen) == [
        1,
        2,
    ]  # 2 actions: cover all at cost 3


# ------------------------------------------------------------- export and reuse
def test_json_round_trip(german, tmp_path):
    *_, g = german
    back = cf.GlobalRecourse.from_json(g.to_json())
    pd.testing.assert_frame_equal(back.summary(), g.summary())
    pd.testing.assert_frame_equal(back.actions, g.actions)
    pd.testing.assert_frame_equal(back.per_row, g.per_row, check_dtype=False)
    pd.testing.assert_frame_equal(
        back.counterfactuals.dropna(), g.counterfactuals.dropna(), check_dtype=False
    )
    assert back.rules == g.rules and back.coverage == g.coverage
    paths = g.save(tmp_path, html=False)
    assert {"actions", "summary", "per_row", "counterfactuals", "json"} <= set(paths)
    assert pd.read_csv(paths["actions"])["n_works"].tolist() == g.actions["n_works"].tolist()
    with pytest.raises(ValidationError, match="format tag"):
        cf.GlobalRecourse.from_json('{"format": "other"}')


def test_an_audit_is_reused_and_gives_the_same_answer(german):
    _, _, method, X, _, test, _ = german
    audit = cf.audit(
        method,
        X,
        groups=["personal_status_sex"],
        data=test,
        statistics=Statistics(n_bootstrap=50),
    )
    a = cf.global_recourse(
        method,
        X,
        max_actions=2,
        groups=["personal_status_sex"],
        data=test,
        individual=audit,
        statistics=Statistics(n_bootstrap=50),
    )
    b = cf.global_recourse(
        method,
        X,
        max_actions=2,
        groups=["personal_status_sex"],
        data=test,
        statistics=Statistics(n_bootstrap=50),
    )
    assert a.rules == b.rules
    pd.testing.assert_frame_equal(a.per_row, b.per_row)
    with pytest.raises(ValidationError, match=r"'individual'.*do not cover"):
        cf.global_recourse(
            method,
            X,
            individual=cf.audit(method, X.iloc[:20], statistics=Statistics(n_bootstrap=0)),
        )
    with pytest.raises(ValidationError, match="other constraints"):
        cf.global_recourse(
            method, X, individual=audit, constraints=cf.Constraints(immutable=["age"])
        )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_actions": 0}, "max_actions"),
        ({"measure": "l3"}, "measure"),
        ({"measure": {"nope": 1.0}}, "measure"),
        ({"measure": {"age": -1}}, "measure"),
        ({"constraints": [cf.Constraints()]}, "constraints"),
        ({"constraints": "age"}, "constraints"),
        ({"max_cost": -1.0}, "max_cost"),
        ({"max_cost_ratio": 0}, "max_cost_ratio"),
        ({"individual": "audit"}, "individual"),
        ({"n_counterfactuals": 1.5}, "n_counterfactuals"),
        ({"search": {"solver": "greedy"}}, "search"),
        ({"statistics": 0.9}, "statistics"),
        ({"batch": 2}, "batch"),
    ],
)
def test_bad_input_names_the_parameter(german, kwargs, name):
    _, _, method, X, *_ = german
    with pytest.raises(ValidationError, match=f"'{name}'"):
        cf.global_recourse(method, X.iloc[:30], **kwargs)


@pytest.mark.parametrize(
    ("group", "kwargs", "name"),
    [
        (ActionSearch, {"max_features": 6}, "max_features"),
        (ActionSearch, {"solver": "best"}, "solver"),
        (ActionSearch, {"time_limit": 0}, "time_limit"),
        (ActionSearch, {"max_candidates": 0}, "max_candidates"),
        (Statistics, {"confidence": 1.5}, "confidence"),
        (Statistics, {"n_bootstrap": -1}, "n_bootstrap"),
        (Statistics, {"random_state": "a"}, "random_state"),
        (Batch, {"n_jobs": 0}, "n_jobs"),
        (Batch, {"chunk_size": 0}, "chunk_size"),
    ],
)
def test_bad_grouped_setting_names_the_group_and_field(group, kwargs, name):
    with pytest.raises(ValidationError, match=rf"{group.__name__}\({name}=\.\.\.\)"):
        group(**kwargs)


def test_nobody_rejected_or_nobody_helped(german):
    _, model, method, X, *_ = german
    accepted = X[model.predict(X) == 1].iloc[:10]
    g = cf.global_recourse(method, accepted, statistics=Statistics(n_bootstrap=0))
    assert g.n_rejected == 0 and math.isnan(g.coverage) and g.rules == [] and len(g.actions) == 0
    assert g.findings() == ["No row is rejected by the model, so there is nothing to recourse."]
    assert g.action_of.isna().all() and g.counterfactuals.isna().all().all()
    back = cf.GlobalRecourse.from_json(g.to_json())
    assert back.n_rejected == 0 and list(back.actions.columns) == list(g.actions.columns)
    rejected = X[model.predict(X) == 0].iloc[:5]
    none = cf.global_recourse(
        method, rejected, max_cost=1e-9, statistics=Statistics(n_bootstrap=0)
    )  # nothing is that cheap
    assert none.n_rejected == 5 and none.n_covered == 0 and none.coverage == 0.0
    assert (none.per_row["reason"] != "").all()


def test_unfitted_method_and_method_cost(german):
    data, model, method, X, *_ = german
    with pytest.raises(cf.NotFittedError):
        cf.global_recourse(cf.NearestObservable(), X)
    own = cf.global_recourse(
        method, X.iloc[:40], measure="method", statistics=Statistics(n_bootstrap=0)
    )  # nearest's own l1 distance
    plain = cf.global_recourse(method, X.iloc[:40], statistics=Statistics(n_bootstrap=0))
    np.testing.assert_allclose(own.per_row["cost"], plain.per_row["cost"])
    assert cf.MDPSO.tags.measure is None
    mdpso = cf.MDPSO(**cf.MDPSO.tags.fast_params).fit(
        model, data.split(test_size=0.2, random_state=0)[0]
    )
    with pytest.raises(ValidationError, match="no distance of its own"):
        cf.global_recourse(mdpso, X.iloc[:30], measure="method")


def test_cost_caps_keep_actions_within_reach(german):
    _, _, method, X, _, _, g = german
    capped = cf.global_recourse(
        method,
        X,
        max_actions=3,
        max_cost_ratio=0.5,
        statistics=Statistics(n_bootstrap=0),
        search=ActionSearch(max_candidates=60),
    )
    pr = capped.per_row[capped.per_row["covered"] & capped.per_row["individual_cost"].notna()]
    assert len(pr) and (pr["cost"] <= 0.5 * pr["individual_cost"] * (1 + 1e-9)).all()
    hard = cf.global_recourse(
        method,
        X,
        max_actions=3,
        max_cost=0.01,
        statistics=Statistics(n_bootstrap=0),
        search=ActionSearch(max_candidates=60),
    )
    assert (hard.per_row.loc[hard.per_row["covered"], "cost"] <= 0.01 + 1e-12).all()
    assert hard.n_covered <= g.n_covered


def test_dask_backend_gives_the_same_answer(german):
    pytest.importorskip("distributed")
    _, _, method, X, *_ = german
    Xs = X.iloc[:40]
    serial = cf.global_recourse(method, Xs, max_actions=2, statistics=Statistics(n_bootstrap=0))
    dask = cf.global_recourse(
        method,
        Xs,
        max_actions=2,
        statistics=Statistics(n_bootstrap=0),
        batch=Batch(parallel="dask", n_jobs=1, chunk_size=10),
    )
    assert dask.rules == serial.rules
    pd.testing.assert_frame_equal(dask.per_row, serial.per_row)


# ------------------------------------------------------------ report and CLI
def test_report_section_and_page(german, tmp_path):
    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    _, _, method, X, _, test, _ = german
    audit = cf.audit(
        method,
        X,
        groups=["personal_status_sex"],
        data=test,
        statistics=Statistics(n_bootstrap=50),
    )
    g = cf.global_recourse(
        method,
        X,
        max_actions=2,
        groups=["personal_status_sex"],
        data=test,
        individual=audit,
        statistics=Statistics(n_bootstrap=50),
    )
    html = audit.to_html(tmp_path / "audit.html", global_recourse=g)
    assert 'id="global-recourse"' in html and "Global recourse by personal_status_sex" in html
    assert (
        escape(g.actions.loc["A1", "description"]) in html
        and html.count("data:image/png;base64,") >= 4
    )
    page = g.to_html(tmp_path / "global.html")
    assert page.startswith("<!DOCTYPE html>") and 'id="global-recourse"' in page
    assert "global_actions" in audit.save(tmp_path / "out", global_recourse=g)


def test_report_renders_in_chromium(german, tmp_path):
    import shutil
    from pathlib import Path

    pytest.importorskip("jinja2")
    pytest.importorskip("matplotlib")
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("no Chromium executable on this machine")
    *_, g = german
    path = tmp_path / "global.html"
    g.to_html(path)
    with sync_api.sync_playwright() as p:
        try:
            browser = p.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
            )
        except Exception as exc:  # pragma: no cover - depends on the machine
            pytest.skip(f"Chromium does not start here: {exc}")
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            sizes = page.eval_on_selector_all(
                "img", "els => els.map(e => [e.complete, e.naturalWidth])"
            )
            assert len(sizes) == 2 and all(ok and w > 100 for ok, w in sizes)
            assert page.locator("table.global-actions tr").count() == len(g.rules) + 1
            page.click("text=How the actions were chosen")
            assert page.is_visible("text=verified on every rejected person")
            assert not errors
        finally:
            browser.close()


def test_cli_global(tmp_path, capsys):
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
            "mace",
            "--param",
            "time_limit=10",
            "--groups",
            "personal_status_sex",
            "--max-rows",
            "80",
            "--n-bootstrap",
            "50",
            "--global",
            "2",
            "--out",
            str(out),
            "--no-html",
            "-q",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Global recourse:" in printed and "A1" in printed
    actions = pd.read_csv(out / "global_actions.csv")
    assert 1 <= len(actions) <= 2 and {"description", "coverage", "n_works"} <= set(actions.columns)
    back = cf.GlobalRecourse.from_json((out / "global.json").read_text())
    assert len(back.per_row) == 80
    assert (
        main(
            [
                "audit",
                "--dataset",
                "german_credit",
                "--model",
                "lr",
                "--global",
                "0",
                "--out",
                str(tmp_path / "x"),
                "-q",
            ]
        )
        == 2
    )
    assert "--global must be at least 1" in capsys.readouterr().err


def test_by_default_an_audits_answers_bound_every_actions_cost(credit_mace):
    """The default measure is the audit's (effort), so MACE's proven answers are each
    person's minimum and no action costs a covered person less (to within its 1 %)."""
    _, test, model, mace = credit_mace
    X = cf.rows_to_explain(model, test).head(15)
    audit = cf.audit(mace, X, statistics=Statistics(n_bootstrap=0))
    g = cf.global_recourse(
        mace, X, max_actions=2, individual=audit, statistics=Statistics(n_bootstrap=0)
    )
    assert g.meta["individual_lower_bound"]
    covered = g.per_row[g.per_row["covered"]]
    assert len(covered) >= 5 and (covered["cost_ratio"] >= 0.99).all()
