"""``Requirements(robustness=p)``: the share of retrained models that should still accept
each answer, estimated on retrained copies never shown to the search, checked against
20 more retrained models (the judges) that the method never sees either."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import ValidationError
from counterfact.methods._pipeline._copies import (
    accepted,
    copies_for,
    predicted_share,
    reaches,
    scores,
)
from counterfact.result._robustness import clopper_pearson
from counterfact.solvers._options import OPTIONS_PROVEN, options_proven
from counterfact.testing._fast import fast_method

pytest.importorskip("z3")


@pytest.fixture(scope="module")
def german():
    """German Credit, a logistic regression, six rejected test rows and 20 judges:
    retrained copies with seeds of their own, never given to any method."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    rows = cf.rows_to_explain(model, test).head(6)
    judges = cf.models.retrained(model, train, n=20, random_state=123)
    method = fast_method("mace", random_state=0).fit(model, train)
    return train, model, rows, judges, method


def _judged(result: cf.CounterfactualResult, judges: list) -> np.ndarray:
    """Per answer, the share of the judges that predict its target."""
    cfs = result.counterfactuals
    targets = result.target.loc[cfs.index.get_level_values(0)].to_numpy()
    names = result.schema.names
    return np.mean([j.predict(cfs.loc[:, names]) == targets for j in judges], axis=0)


@pytest.fixture(scope="module")
def half(german):
    """Robustness 0.5: mostly the plain answers, on the boundary, where the estimate
    has something to say (neither all nor none of the copies accept)."""
    _, _, rows, _, method = german
    return method.explain(rows, requirements=cf.Requirements(robustness=0.5))


def test_the_interval_covers_the_validity_measured_on_unseen_judges(german, half):
    _, _, _, judges, _ = german
    table = half.robustness()
    assert len(table) == len(half.counterfactuals) >= 5
    measured = _judged(half, judges)
    # on average, and answer by answer (20 judges are themselves a sample)
    assert table["low"].mean() <= measured.mean() <= table["high"].mean()
    covered = (table["low"].to_numpy() <= measured) & (measured <= table["high"].to_numpy())
    assert covered.mean() >= 0.8
    # the estimates are not all the same: they measure something
    assert table["estimate"].nunique() > 1
    assert table["estimate"].min() < 1.0


def test_the_estimate_is_the_share_of_the_held_out_copies(german, half):
    _, _, _, _, method = german
    table = half.robustness()
    copies = copies_for(method, 8)
    assert len(copies.held_out) == 8 and (table["copies"] == 8).all()
    cfs = half.counterfactuals
    targets = half.target.loc[cfs.index.get_level_values(0)].to_numpy()
    counts = accepted(copies, cfs.loc[:, half.schema.names], targets)
    assert table["accepted"].tolist() == counts.tolist()
    assert np.allclose(table["estimate"], counts / 8)
    low, high = clopper_pearson(int(counts[0]), 8)
    assert (table["low"].iloc[0], table["high"].iloc[0]) == pytest.approx((low, high))
    reached = table["estimate"] >= 0.5
    assert (table.loc[reached, "shortfall"] == 0).all()
    assert (half.requirements["robustness"], half.requirements["min_probability"]) == (0.5, None)


def test_the_copies_that_choose_are_not_the_ones_that_estimate(german, half):
    _, _, _, _, method = german
    copies = copies_for(method, 8)
    assert len(copies.choosing) == 16 and len(copies.held_out) == 8
    assert not {id(m.model) for m in copies.choosing} & {id(m.model) for m in copies.held_out}
    cfs = half.counterfactuals
    rows = cfs.loc[:, half.schema.names]
    targets = half.target.loc[cfs.index.get_level_values(0)].to_numpy()
    # different refits: their scores differ answer by answer
    assert not np.allclose(
        scores(copies.choosing[:8], rows, targets), scores(copies.held_out, rows, targets)
    )
    # a row is said to reach p exactly when the choosing copies let all its answers reach
    # it and the held-out copies' share of its least robust answer confirms it
    ok, _ = reaches(copies, rows, targets, 0.5)
    held = pd.Series(accepted(copies, rows, targets) / 8, index=cfs.index)
    per_row = (pd.Series(ok.astype(bool), index=cfs.index) & (held >= 0.5)).groupby(level=0).all()
    said = half.diagnostics["robustness_reached"]
    assert said.loc[per_row.index].tolist() == per_row.tolist()
    assert (half.robustness()["reached"] == said.loc[cfs.index.get_level_values(0)].values).all()


def test_the_predicted_share_is_the_student_prediction_interval():
    from scipy.stats import t as student

    draws = np.array([[1.0, -1.0, 3.0], [2.0, -2.0, 3.0], [3.0, 0.5, 3.0], [2.0, 0.0, 3.0]])
    share = predicted_share(draws)
    mean, sd = draws[:, 0].mean(), draws[:, 0].std(ddof=1)
    assert share[0] == pytest.approx(student.cdf(mean / (sd * np.sqrt(1 + 1 / 4)), df=3))
    assert 0.2 < share[1] < 0.5  # leans to the other class
    assert share[2] == 1.0  # every copy the same and for the target: no spread, certain
    # all four copies accept the first answer, yet a fifth is not certain to
    assert (draws[:, 0] > 0).all() and share[0] < 0.99


def test_the_copies_are_fitted_once_per_fitted_method(german):
    train, model, _, _, _ = german
    method = fast_method("mace", random_state=0).fit(model, train)
    first = copies_for(method, 2)
    assert copies_for(method, 2) is first and len(first.held_out) == 2
    assert first.search(0) == ()  # the search's copies are fitted only when asked for
    method.fit(model, train)  # refitted: new copies
    assert copies_for(method, 2) is not first


def test_a_high_share_holds_better_under_unseen_retrains(german, half):
    _, _, rows, judges, method = german
    strict = method.explain(rows.head(3), requirements=cf.Requirements(robustness=0.95))
    table = strict.robustness()
    assert len(table) == 3
    reached = table["shortfall"] == 0
    assert (table.loc[reached, "estimate"] >= 0.95).all()
    assert (table["setting"] != "plain").any()
    before = _judged(half, judges)[:3].mean()  # half's first answers: its first rows'
    assert list(half.counterfactuals.index.get_level_values(0)[:3]) == list(rows.index[:3])
    assert _judged(strict, judges).mean() > before
    for q in strict.queries.index:
        assert "retrained copies never shown to the search" in strict.certificate(q)


def test_a_row_that_cannot_reach_the_share_gets_its_most_robust_answer(german):
    from counterfact.methods._pipeline._robustness import ladder

    _, _, rows, _, method = german
    only = cf.Constraints(features_to_vary=["duration_months"])
    result = method.explain(rows, constraints=only, requirements=cf.Requirements(robustness=0.95))
    table = result.robustness()
    short = table[table["shortfall"] > 0]
    assert len(short) >= 1
    assert np.allclose(short["shortfall"], 0.95 - short["estimate"])
    queries = short.index.get_level_values(0).unique()
    # no answer every ladder setting could give them is more robust than the one kept
    copies, names = copies_for(method, 8), result.schema.names
    for q in queries:
        kept = result.for_query(q).loc[:, names]
        target = np.array([result.target[q]] * len(kept), dtype=object)
        share = reaches(copies, kept, target, 0.95)[1].min()
        for setting in ladder(None, 0.95):
            req = setting.requirements(cf.Requirements(), copies)
            alone = method.explain(rows.loc[[q]], constraints=only, requirements=req)
            cfs = alone.for_query(q).loc[:, names]
            if len(cfs):
                other = reaches(copies, cfs, target[:1].repeat(len(cfs)), 0.95)[1].min()
                assert share >= other - 1e-9, (q, setting.words())
    for q in queries:
        assert result.found[q] == 1
        assert "No setting tried reached robustness 95 %" in result.certificate(q)
        # the lay words too: the row is not said to reach the share
        assert "; not said to reach it)" in result.certificate(q, numbers=False)
        assert result.diagnostics.loc[q, "robustness_shortfall"] > 0
    # rows without any answer keep their status and reason, and no robustness
    none = result.found[result.found == 0].index
    assert (result.status[none] == "infeasible").all()
    assert result.diagnostics.loc[none, "robustness_shortfall"].isna().all()


def test_a_short_row_bisects_the_margin_up_to_where_answers_stop():
    """Bisection steps for rows short of p, on the settings each row met: halfway between
    the last answered and the first blocked margin per number of copies; a blocked margin
    with fewer copies bounds more copies too; a vote rung bounds no margin."""
    from counterfact.methods._pipeline._robustness import RESOLUTION, Setting, _Rows

    rows = _Rows(0.95, 8)
    rows.answered = {"a": [Setting(None, 0), Setting(0.6, 0)], "b": [Setting(None, 4)]}
    rows.blocked = {"a": [Setting(0.7, 0)], "b": [Setting(0.6, 0), Setting(None, 8, 0.8)]}
    rows.answered["c"], rows.reached["c"] = [Setting(None, 0)], [Setting(None, 0)]
    rows.answered["d"] = [Setting(None, 0), Setting(0.9, 0)]  # nothing blocked: nothing to do
    steps = rows.between(["a", "b", "c", "d"])
    assert steps == {Setting(0.65, 0): ["a"], Setting(0.55, 4): ["b"]}
    rows.answered["a"].append(Setting(0.65, 0))
    rows.blocked["a"].append(Setting(0.67, 0))
    rows.blocked["b"].append(Setting(0.55, 4))
    assert rows.between(["a", "b"]) == {Setting(0.525, 4): ["b"]}  # a: 0.02 apart
    assert 0.67 - 0.65 <= RESOLUTION + 1e-12 < 0.55 - 0.5
    floored = _Rows(0.95, 8, floor=0.52)
    floored.answered = {"e": [Setting(0.52, 0)]}
    floored.blocked = {"e": [Setting(0.6, 0)]}
    assert floored.between(["e"]) == {Setting(0.56, 0): ["e"]}


def test_the_robustness_survives_a_saved_result(half):
    back = cf.CounterfactualResult.from_json(half.to_json())
    pd.testing.assert_frame_equal(back.robustness(), half.robustness())
    assert back.requirements["robustness"] == 0.5


def test_a_chunked_parallel_run_gives_what_one_call_gives(german, half):
    """Each worker process fits its own retrained copies from the method's seed, so the
    settings, held-out counts and words equal those of one ``explain`` call."""
    _, _, rows, _, method = german
    report = cf.methods.explain_in_chunks(
        method, rows, chunk_size=4, n_jobs=2, requirements=cf.Requirements(robustness=0.5)
    )
    assert report.failed == {}
    got = report.result
    pd.testing.assert_frame_equal(got.counterfactuals, half.counterfactuals)
    pd.testing.assert_frame_equal(got.robustness(), half.robustness())
    for q in rows.index:
        assert got.certificate(q) == half.certificate(q)
        assert got.diagnostics.at[q, "robustness_note"] == half.diagnostics.at[q, "robustness_note"]


def test_a_chunked_run_fits_the_copies_once_not_per_chunk(german, monkeypatch):
    """Each task unpickles a model of its own; the copies fitted before the tasks travel
    with it, so three chunks refit nothing (before: every chunk refitted all of them)."""
    from counterfact.methods._pipeline._copies import Copies

    train, _, rows, _, _ = german
    method = fast_method("mace", random_state=0).fit(
        cf.models.fit(train, "lr", random_state=0), train
    )
    refits = []
    original = Copies._refit

    def counted(self, n, seed):
        refits.append(n)
        return original(self, n, seed)

    monkeypatch.setattr(Copies, "_refit", counted)
    asked = cf.Requirements(robustness=0.5)
    report = cf.methods.explain_in_chunks(method, rows, chunk_size=2, requirements=asked)
    assert report.failed == {} and len(report.done) == 3
    assert sorted(refits) == [8, 8, 16]  # held out, search, choosing: once each
    alone = method.explain(rows, requirements=asked)
    pd.testing.assert_frame_equal(report.result.robustness(), alone.robustness())
    assert sorted(refits) == [8, 8, 16]


def test_the_lay_guarantee_names_the_setting_it_holds_under(german, half):
    """ "Proven: no answer with fewer changes" holds among the answers under the setting a
    row kept, not among every answer that crosses the boundary: the words say so."""
    settings = half.robustness()["setting"].groupby(level=0).first()
    reached = half.diagnostics["robustness_reached"]
    for q, setting in settings.items():
        named = "the plain decision" if setting == "plain" else setting
        named += "" if reached[q] else "; not said to reach it"
        scope = f", under the setting chosen for robustness 50 % ({named})"
        lay = half.certificate(q, numbers=False)
        assert lay.endswith(scope), lay
        # the numbers (the HTTP API, audits): the scope once, then the held-out count
        said = half.certificate(q, numbers=True)
        assert said.count("under the setting chosen") == 1, said
        assert f"{scope}. " in said and said.endswith(" accept it."), said
        assert "., " not in said and ".." not in said, said
    back = cf.CounterfactualResult.from_json(half.to_json())
    q = settings.index[0]
    for numbers in (False, True):
        assert back.certificate(q, numbers=numbers) == half.certificate(q, numbers=numbers)
    _, _, rows, _, method = german
    plain = method.explain(rows.head(1))
    for numbers in (False, True):
        assert "under the setting" not in plain.certificate(rows.index[0], numbers=numbers)


def test_the_notice_states_each_answers_estimate(german, half):
    """The notice of an answer says how many held-out copies accept it, its estimate and
    interval, and whether it reaches the share asked, as result.robustness() holds them."""
    table = half.robustness()
    for (q, rank), row in table.iterrows():
        accepted, copies = int(row["accepted"]), int(row["copies"])
        text = half.notice(q, rank)
        assert f"This answer holds for {accepted} of {copies} retrained models" in text, text
        assert f"estimate {round(100 * row['estimate'], 1):g} %" in text
        assert f"reaches the 50 % asked: {'yes' if row['reached'] else 'no'}" in text
    _, _, rows, _, method = german
    plain = method.explain(rows.head(1))
    assert "retrained models" not in plain.notice(rows.index[0])


def test_describe_states_each_answers_estimate_under_the_answer(german, half):
    """describe(), the summary read first, gives each answer's held-out count and estimate
    on the line under it, as result.robustness() holds them; without the requirement, none."""
    table = half.robustness()
    lines = half.describe().splitlines()
    for (q, rank), row in table.iterrows():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"query {q}, #{rank}:"))
        below = lines[at + 1]
        said = f"holds for {int(row['accepted'])} of {int(row['copies'])} retrained models"
        assert below.strip().startswith(said), below
        assert f"estimate {round(100 * row['estimate'], 1):g} %" in below
    _, _, rows, _, method = german
    assert "retrained models" not in method.explain(rows.head(1)).describe()


def test_a_result_without_the_requirement_says_how_to_get_it(german):
    _, _, rows, _, method = german
    plain = method.explain(rows.head(1))
    with pytest.raises(ValidationError, match=r"Requirements\(robustness=0.95\)"):
        plain.robustness()


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1, True, float("nan"), "high"])
def test_a_share_outside_the_open_unit_interval_is_refused(bad):
    with pytest.raises(ValidationError, match=r"robustness=.*strictly between 0 and 1"):
        cf.Requirements(robustness=bad)


def test_numpy_numbers_are_numbers():
    """A share or a count read from an array is as good as a Python number."""
    asked = cf.Requirements(
        robustness=np.float32(0.9),
        robustness_copies=np.int64(6),
        min_probability=np.float32(0.6),
        min_vote_share=np.float64(0.7),
    )
    assert asked.robustness == 0.9 and asked.robustness_copies == 6  # the share typed
    assert asked.min_probability == 0.6
    assert type(asked.robustness_copies) is int and type(asked.robustness) is float
    assert cf.vote_share_for(np.int64(100), np.float32(0.05)) == pytest.approx(
        cf.vote_share_for(100, 0.05), abs=1e-6
    )
    with pytest.raises(ValidationError, match="robustness"):
        cf.Requirements(robustness=np.bool_(True))


def test_a_dict_of_requirements_is_refused_with_every_field_named(german):
    _, _, rows, _, method = german
    with pytest.raises(ValidationError, match=r"robustness.*Requirements\(\*\*that_dict\)"):
        method.explain(rows.head(1), requirements={"robustness": 0.9})


def test_robustness_and_robust_to_together_are_refused(german):
    train, model, _, _, _ = german
    copies = cf.models.retrained(model, train, n=1, random_state=5)
    with pytest.raises(ValidationError, match="cannot be combined with robust_to"):
        cf.Requirements(robustness=0.9, robust_to=copies)


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "8"])
def test_a_bad_number_of_copies_is_refused(bad):
    with pytest.raises(ValidationError, match=r"robustness_copies=.*int in \[2, 1000\]"):
        cf.Requirements(robustness=0.9, robustness_copies=bad)
    with pytest.raises(ValidationError, match="pass robustness too"):
        cf.Requirements(robustness_copies=8)


class _Frozen:
    """A classifier that cannot be refitted (not a scikit-learn estimator)."""

    def __init__(self, model):
        self._model = model
        self.classes_ = model.classes_

    def predict_proba(self, X):
        return self._model.predict_proba(X)

    def predict(self, X):
        return self._model.predict(X)


def test_a_model_that_cannot_be_retrained_is_refused_with_the_way_out(german):
    train, model, rows, _, _ = german
    method = fast_method("nearest", random_state=0).fit(_Frozen(model), train)
    with pytest.raises(ValidationError, match=r"cannot be retrained.*robust_to"):
        method.explain(rows.head(1), requirements=cf.Requirements(robustness=0.9))


def test_a_heuristic_honours_it_through_the_shared_checker(german):
    train, model, rows, _, _ = german
    method = fast_method("mdpso", random_state=0).fit(model, train)
    asked = cf.Requirements(robustness=0.8, robustness_copies=5)
    result = method.explain(rows.head(3), requirements=asked)
    table = result.robustness()
    assert len(table) >= 1
    assert (model.predict(result.counterfactuals) == 1).all()
    assert (table["copies"] == 5).all()
    copies = copies_for(method, 5)
    cfs = result.counterfactuals
    targets = result.target.loc[cfs.index.get_level_values(0)].to_numpy()
    ok, _ = reaches(copies, cfs.loc[:, result.schema.names], targets, 0.8)
    said = ok.astype(bool) & (table["estimate"].to_numpy() >= 0.8)  # one answer per row
    assert table["reached"].tolist() == said.tolist()
    for (q, _rank), chosen in zip(table.index, ok.astype(bool), strict=True):
        words = "chosen on 10 other retrained copies" if chosen else "No setting tried reached"
        assert words in result.certificate(q)


def test_the_audit_and_the_page_say_what_was_asked(german):
    from counterfact.serve import Limits, Service

    train, model, rows, _, method = german
    asked = cf.Requirements(robustness=0.95, robustness_copies=8)
    audit = cf.audit(method, rows.head(2), requirements=asked)
    words = "advice that still holds after the model is retrained: 95 %"
    assert words in audit.guarantee["recourse"]
    # how many rows with recourse reach the share, and that the others count too
    said = audit.per_row["robustness_reached"]
    rec = audit.per_row["outcome"] == "recourse"
    n, k = int(rec.sum()), int(said[rec].fillna(False).astype(bool).sum())
    assert f"Of the {n} rows with recourse, {k} are said to reach it" in audit.guarantee["recourse"]
    overall = audit.summary().iloc[0]  # the same count as a figure, with its interval
    assert overall["n_holding"] == k and overall["holding_rate"] == k / overall["n_rejected"]
    assert overall["holding_ci_low"] <= overall["holding_rate"] <= overall["holding_ci_high"]
    first = audit.result.robustness().xs(0, level="rank")["estimate"]
    assert audit.per_row.loc[first.index, "robustness_estimate"].tolist() == first.tolist()
    limits = Limits(max_rows=3, max_time_limit=60.0, default_time_limit=30.0)
    service = Service(data=train, model=model, methods={"mace": method}, limits=limits)
    row = rows.iloc[0].to_dict()
    out = service.explain(rows=[row], method="mace", robustness=0.95)
    assert out["robustness_words"] == words
    result = out["results"][0]
    assert result["status"] in ("optimal", "feasible"), result["reason"]
    answer = result["counterfactuals"][0]["robustness"]
    assert answer["copies"] == 8 and 0 <= answer["low"] <= answer["estimate"] <= answer["high"]
    with pytest.raises(ValidationError, match="strictly between 0 and 1"):
        service.explain(rows=[row], method="mace", robustness=1.2)


def test_the_ladder_goes_from_the_floor_to_the_search_copies():
    from counterfact.methods._pipeline._robustness import ladder

    plain = ladder(None, 0.95)
    words = [s.words() for s in plain]
    assert words[0] == "plain" and "margin 0.9" in words
    assert words.index("margin 0.9") < words.index("4 copies") < words.index("8 copies")
    assert words[-1] == "8 copies + margin 0.6"
    # a floor of 0.65: no margin below it, the copies' bare rungs keep the floor
    floored = [s.words() for s in ladder(0.65, 0.95)]
    assert floored[0] == "margin 0.65" and "margin 0.6" not in floored
    assert "4 copies + margin 0.65" in floored and "8 copies + margin 0.65" in floored
    # a forest of 30 trees: Forel et al.'s vote shares right after the floor, whole
    # numbers of trees from the level 0.4 to 0.001, 1 - p among them, none twice
    forest = ladder(None, 0.95, n_trees=30)
    shares = [s.vote_share for s in forest if s.vote_share is not None]
    assert forest[1 : 1 + len(shares)] == [s for s in forest if s.vote_share is not None]
    trees = [round(v * 30) for v in shares]
    assert trees == sorted(set(trees)) and np.allclose(np.array(trees) / 30, shares)
    needed = [int(np.ceil(cf.vote_share_for(30, a) * 30 - 1e-9)) for a in (0.4, 0.05, 0.001)]
    assert trees[0] == needed[0] and needed[1] in trees and trees[-1] == needed[2]
    assert 6 <= len(trees) <= 9
    # no rung repeats, and each stricter rung covers the looser ones it follows in kind
    assert len(set(forest)) == len(forest)


def test_each_row_keeps_the_cheapest_answer_that_reaches_the_share(german):
    """Against every setting of the ladder run on its own: no setting whose answer the
    choosing copies let reach p has a cheaper first answer than the one kept."""
    from counterfact.methods._pipeline._robustness import ladder

    _, _, rows, _, method = german
    some = rows.head(3)
    result = method.explain(some, requirements=cf.Requirements(robustness=0.9))
    copies = copies_for(method, 8)
    kept = result.cost().groupby(level=0).first()
    for setting in ladder(None, 0.9):
        alone = method.explain(some, requirements=setting.requirements(cf.Requirements(), copies))
        for q in alone.queries.index:
            cfs = alone.for_query(q)
            if len(cfs) == 0 or not result.diagnostics.at[q, "robustness_reached"]:
                continue
            targets = np.array([alone.target[q]] * len(cfs), dtype=object)
            ok, _ = reaches(copies, cfs.loc[:, alone.schema.names], targets, 0.9)
            if ok.all():
                assert kept[q] <= float(alone.cost(q).iloc[0]) + 1e-6, (q, setting.words())


def test_it_works_under_each_methods_own_objective(german):
    _, _, rows, _, method = german
    result = method.explain(rows.head(2), requirements=cf.Requirements(robustness=0.8, costs="own"))
    table = result.robustness()
    assert len(table) >= 1 and table["reached"].notna().all()


def test_a_row_is_said_to_reach_p_only_when_the_held_out_copies_confirm_it():
    """The choosing copies' verdict alone is not the claim: an answer they let reach 0.95
    that 5 of 8 held-out copies accept keeps its place but is not said to reach it, and
    its certificate says by how much the estimate falls short."""
    from counterfact.methods._pipeline._robustness import (
        Setting,
        _Attempt,
        _diagnostics,
        _Rows,
    )

    rows = _Rows(0.95, 8)
    chosen = Setting(0.6, 0)
    rows.best = {
        "confirmed": _Attempt(None, chosen, [True], 0.97, [8], 2.0),
        "not confirmed": _Attempt(None, chosen, [True], 0.96, [5], 2.0),
        "short": _Attempt(None, Setting(0.9, 8), [False], 0.70, [7], 9.0),
    }
    ids = list(rows.best)
    diag = _diagnostics(pd.DataFrame(index=ids), rows, ids)
    assert diag["robustness_reached"].tolist() == [True, False, False]
    assert diag["robustness_shortfall"].tolist() == pytest.approx([0.0, 0.95 - 5 / 8, 0.95 - 7 / 8])
    certs = diag["robustness_note"]
    assert "short" not in certs["confirmed"]
    assert (
        "short of the share asked for by 32.5 points, so the row is not said to reach it"
        in (certs["not confirmed"])
    )
    assert certs["short"].startswith("No setting tried reached robustness 95 %")


def test_a_cancelled_ladder_says_it_stopped_before_every_setting(german):
    """Cancelled after its first setting (a server's deadline, a client gone), the ladder
    tries nothing more: no row is said to have no setting that reaches p, each says the
    search stopped before every setting was tried, in both wordings and its reason."""
    from counterfact._utils._deadline import CancelToken
    from counterfact.methods._pipeline._explain import explain as run_pipeline
    from counterfact.methods._pipeline._robustness import STOPPED_REASON, explain_robust

    _, _, rows, _, method = german
    token, calls = CancelToken(), []

    def run(*args, **kwargs):
        calls.append(kwargs["requirements"])
        out = run_pipeline(*args, **kwargs)
        token.cancel()
        return out

    asked = cf.Requirements(robustness=0.99)
    result = explain_robust(run, method, rows.head(3), asked, cancel=token)
    assert len(calls) == 1  # the plain decision, then nothing
    table = result.robustness()
    assert (table["setting"] == "plain").all() and not table["reached"].any()
    for q in result.queries.index[result.found > 0]:
        for numbers in (True, False):
            said = result.certificate(q, numbers=numbers)
            assert "the search stopped before every setting was tried" in said, said
        assert f"{STOPPED_REASON}: a setting not tried may reach the share" in result.reason[q]
        assert "No setting tried reached robustness 99 %" in result.certificate(q)


def test_a_setting_that_ran_out_of_time_does_not_count_as_none_there():
    """A setting that leaves a row without an answer because its search ran out of time
    proves nothing: the stricter settings it skips make the row 'stopped', unlike those
    skipped after a proof (infeasible)."""
    from counterfact.methods._pipeline._robustness import Setting, _Rows

    rows = _Rows(0.9, 8)
    rows.timed_out = {"a": [Setting(0.7, 0)]}
    rows.blocked = {"b": [Setting(0.7, 0)]}
    assert rows.todo(["a", "b"], Setting(0.8, 0)) == []
    assert rows.cut_short(["a", "b"], Setting(0.8, 0)) == ["a"]  # "b" is proven blocked
    assert rows.todo(["a", "b"], Setting(None, 4)) == ["a", "b"]
    assert rows.cut_short(["a", "b"], Setting(None, 4)) == []
    assert rows.stopped == set()  # asking records nothing; the ladder notes them


def test_a_stopped_row_says_what_the_untried_settings_leave_open():
    """Said to reach p, a row cut short may still have a cheaper answer; not said to
    reach it, a setting not tried may reach it. The row's own reason is kept first."""
    from counterfact.methods._pipeline._robustness import STOPPED_REASON, _stopped_reason

    assert (
        _stopped_reason("", True)
        == f"{STOPPED_REASON}: a cheaper answer that reaches the share may exist"
    )
    said = _stopped_reason("2 answers asked, 1 found", False)
    assert said.startswith("2 answers asked, 1 found; " + STOPPED_REASON)
    assert said.endswith(": a setting not tried may reach the share")


def test_duplicate_row_ids_are_refused_as_without_robustness(german):
    _, _, rows, _, method = german
    twice = rows.head(2).set_axis([7, 7])
    with pytest.raises(ValidationError, match="duplicate index labels"):
        method.explain(twice, requirements=cf.Requirements(robustness=0.8))


def test_the_share_asked_is_never_rounded_to_another():
    """0.995 is not "100 %": the words keep four significant digits."""
    from counterfact.result._robustness import held_words, robustness_words

    assert robustness_words(0.995).endswith(": 99.5 %")
    assert robustness_words(0.95).endswith(": 95 %")
    row = {"accepted": 8, "copies": 8, "estimate": 1.0, "low": 0.63, "high": 1.0}
    said = held_words({**row, "asked": 0.995, "shortfall": 0.0, "reached": True})
    assert "reaches the 99.5 % asked: yes" in said
    # 7 of 8 is 87.5 %, 2.5 points short of 90 %: the figures add up (not "88 %")
    low, high = clopper_pearson(7, 8)
    short = {"accepted": 7, "copies": 8, "estimate": 7 / 8, "low": low, "high": high}
    said = held_words({**short, "asked": 0.9, "shortfall": 0.025, "reached": False})
    assert "(estimate 87.5 %, 95 % interval 47-100 %)" in said
    assert said.endswith("no, short by 2.5 points")


def test_a_row_the_choosing_copies_held_back_is_not_said_short(german):
    """Its held-out copies accept the answer as often as asked, but the copies that
    choose did not let any setting reach p: the certificate says so, not "short by 0.0 points"."""
    from counterfact.methods._pipeline._robustness import Setting, _Attempt, _note, _Rows

    rows = _Rows(0.9, 8)
    said = _note(_Attempt(None, Setting(0.6, 0), [False], 0.8, [8], 2.0), rows)
    assert "0.0 points" not in said
    assert said.endswith("as many as asked, but the copies that choose did not confirm it.")


def test_a_proof_without_an_answer_keeps_the_users_margin_in_its_words(german):
    """Under robustness a row with no answer kept no setting: its proof was made under the
    user's own floor, and both wordings say so."""
    _, _, rows, _, method = german
    only = cf.Constraints(features_to_vary=["duration_months"])
    asked = cf.Requirements(robustness=0.9, min_probability=0.6)
    result = method.explain(rows.head(2), constraints=only, requirements=asked)
    none = [q for q in result.queries.index if result.status[q] == "infeasible"]
    assert none
    for q in none:
        for numbers in (True, False):
            said = result.certificate(q, numbers=numbers)
            assert said.endswith("; required: a probability of at least 0.6 for the target"), said


def test_each_answer_is_said_to_reach_p_on_its_own_count():
    """With two answers, the row's verdict speaks of the weaker; each answer's own says
    whether the choosing copies let it and its own estimate confirms it."""
    from counterfact.methods._pipeline._robustness import Setting, _Attempt, _diagnostics, _Rows
    from counterfact.result._robustness import _reached

    rows = _Rows(0.9, 8)
    rows.best = {"q": _Attempt(None, Setting(0.6, 0), [True, True], 0.95, [8, 7], 2.0)}
    diag = _diagnostics(pd.DataFrame(index=["q"]), rows, ["q"])
    assert diag.at["q", "robustness_reached"] == False  # noqa: E712 (a numpy bool)
    assert _reached(diag, "q", 0, 8 / 8, 0.9) is True
    assert _reached(diag, "q", 1, 7 / 8, 0.9) is False
    assert "7 of 8" in diag.at["q", "robustness_note"]  # the certificate: the weaker one
    old = diag.drop(columns="robustness_chosen")  # a result saved before: the row's verdict
    assert _reached(old, "q", 0, 8 / 8, 0.9) is False


def test_a_share_just_short_of_all_is_not_written_as_all():
    from counterfact._utils._values import share_percent

    assert share_percent(0.99999) == "99.999 %" and share_percent(1.0) == "100 %"
    assert share_percent(0.995) == "99.5 %" and share_percent(0.8) == "80 %"


def test_a_bar_follows_the_ladder_when_asked_and_none_otherwise(german, capsys):
    """With ``verbose`` one bar follows the ladder (its settings and how many rows are
    still short), not one bar per setting; without it, and inside a chunk
    (``feedback=False``), nothing is printed."""
    train, model, rows, _, _ = german
    req = cf.Requirements(robustness=0.8)
    loud = cf.methods.get("nearest", verbose=1).fit(model, train)
    loud.explain(rows.head(3), requirements=req)
    err = capsys.readouterr().err
    assert "robustness 80 %" in err and "rows short" in err
    assert err.count("query/s") + err.count("s/query") == 0  # no inner per-setting bars
    quiet = cf.methods.get("nearest").fit(model, train)
    quiet.explain(rows.head(3), requirements=req)
    assert "robustness 80 %" not in capsys.readouterr().err


@pytest.mark.parametrize("name", ["mace", "ceocl"])
def test_a_model_without_an_exact_margin_climbs_the_copies_alone(name):
    """A multi-class logistic regression has no exact margin for MACE: the ladder leaves
    the margins out (it raised about a ``min_probability`` the user never gave), every
    answer comes from the copies, and a row short of ``p`` says no margin was tried."""
    from sklearn.datasets import make_classification

    from counterfact.methods._pipeline._robustness import ladder

    assert [s.words() for s in ladder(None, 0.9, margins=False)] == [
        "plain",
        "4 copies",
        "8 copies",
    ]
    X, y = make_classification(
        n_samples=400, n_features=4, n_informative=3, n_redundant=0, n_classes=3, random_state=0
    )
    data = cf.Dataset.from_frame(pd.DataFrame(X, columns=list("abcd")).assign(y=y), target="y")
    model = cf.models.fit(data, "lr", random_state=0)
    rows = data.X[model.predict(data.X) == 0].head(3)
    exact = fast_method(name, random_state=0).fit(model, data)
    with pytest.raises(cf.exceptions.UnsupportedConstraintError, match="min_probability"):
        exact.explain(rows, target=2, requirements=cf.Requirements(min_probability=0.6))
    r = exact.explain(rows, target=2, requirements=cf.Requirements(robustness=0.8))
    table = r.robustness()
    assert len(table) == 3 and not table["setting"].str.contains("margin").any()
    short = table.index[~table["reached"]].get_level_values(0)
    assert len(short) >= 1  # seeded: one row stays short of 0.8
    assert all("No margin was tried" in r.certificate(q) for q in short)
    # the command line's table says it under the short row's answers too
    from counterfact.cli._output import _answers
    from counterfact.result._robustness import NO_MARGIN

    for q in r.queries.index:
        said = "\n".join(_answers(r, q, "2"))
        assert (NO_MARGIN in said) == (q in set(short)), said


def test_an_alternative_short_of_p_is_left_out_not_held_against_the_first(german, monkeypatch):
    """With several answers, a setting whose first answer reaches p keeps it and drops the
    later answers the choosing copies hold back (before, the whole setting was judged by
    its least robust answer, and asking for more answers made the first one dearer); the
    reason says how many were left out."""
    import counterfact.methods._pipeline._robustness as robust

    def second_falls_short(copies, rows, targets, p):
        ok = np.array([rank != 1 for rank in range(len(rows))], dtype=float)
        return np.vstack([ok, np.where(ok > 0, 0.99, 0.5)])

    monkeypatch.setattr(robust, "reaches", second_falls_short)
    _, _, rows, _, method = german
    some = rows.head(3)
    plain = method.explain(some, n_counterfactuals=3)
    result = method.explain(some, n_counterfactuals=3, requirements=cf.Requirements(robustness=0.9))
    names = result.schema.names
    checked = 0
    for q in some.index:
        full = plain.for_query(q)
        if len(full) < 3:
            continue
        got = result.for_query(q)
        assert list(got.index) == [0, 1]
        pd.testing.assert_frame_equal(
            got.loc[:, names].reset_index(drop=True),
            full.iloc[[0, 2]].loc[:, names].reset_index(drop=True),
        )
        assert result.reason[q].startswith("2 of 3: 1 more was found under the setting kept")
        assert result.robustness().loc[q, "setting"].tolist() == ["plain", "plain"]
        assert result.confidence.loc[q].tolist() == plain.confidence.loc[q].iloc[[0, 2]].tolist()
        # a proof that no other option is left spoke of the three, not of the two kept
        assert OPTIONS_PROVEN not in result.certificate(q)
        assert OPTIONS_PROVEN not in result.certificate_record(q).sentence
        assert not options_proven(result.diagnostics.loc[q].to_dict())
        checked += 1
    assert checked >= 1


def test_a_short_row_with_several_answers_is_judged_by_the_least_robust():
    from counterfact.methods._pipeline._robustness import Setting, _Attempt, _note, _Rows

    rows = _Rows(0.9, 8)
    said = _note(_Attempt(None, Setting(0.6, 0), [False] * 3, 0.5, [5, 0, 3], 2.0), rows)
    assert "these are the answers of the setting found most robust: 0 of 8" in said
    assert "accept the least robust of them" in said and "most robust answer found" not in said
    alone = _note(_Attempt(None, Setting(0.6, 0), [False], 0.5, [5], 2.0), rows)
    assert "this is the most robust answer found: 5 of 8" in alone and "accept it" in alone


def test_a_result_under_robustness_pickles(half):
    import pickle

    again = pickle.loads(pickle.dumps(half))
    pd.testing.assert_frame_equal(again.robustness(), half.robustness())


def test_the_kept_ranks_keep_the_first_answer_whole():
    from counterfact.methods._pipeline._robustness import _kept_ranks

    assert _kept_ranks([True, False, True]) == [0, 2]
    assert _kept_ranks([False, True, True]) == [0, 1, 2]  # short: all speak for the row
    assert _kept_ranks([True]) == [0] and _kept_ranks([]) == []


def test_an_edited_file_says_its_robustness_was_not_rechecked(german, half):
    """The held-out copies are not saved, so a file whose hash no longer vouches for it
    cannot have its counts re-checked with the model: it says so; a file whose hash
    matches carries no such note."""
    import json

    _, model, _, _, _ = german
    doc = json.loads(half.to_json())
    doc["params"] = {**doc.get("params", {}), "edited": True}  # any edit: the hash breaks
    edited = cf.CounterfactualResult.from_json(json.dumps(doc), verify=False, model=model)
    assert any("robustness" in n and "not re-checked" in n for n in edited.integrity.notes)
    intact = cf.CounterfactualResult.from_json(half.to_json(), model=model)
    assert not any("robustness" in n for n in intact.integrity.notes)


def test_copies_that_do_not_converge_are_said_once_per_refit(german):
    """An MLP stopped early warns once per fit; its retrained copies are said in one
    warning per set of copies, not one per copy."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    train, _, _, _, _ = german
    model = cf.models.fit(train, "mlp", random_state=0, max_iter=3)
    method = fast_method("nearest", random_state=0).fit(model, train)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        copies_for(method, 3)
    said = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(said) == 2  # the held-out copies, then the choosing ones
    assert "refitting 3 retrained copies" in str(said[0].message)
    assert "stopped before converging 3 times" in str(said[0].message)


def test_the_saved_document_and_the_table_carry_the_robustness(half):
    """A reader of the JSON or of the CSV gets what the certificate and robustness() say:
    each certificate in full (with the setting kept, not the method's sentence alone), and
    per answer its estimate, interval, verdict, setting and cost."""
    import json

    doc = json.loads(half.to_json())
    full = [half.certificate(q) for q in half.queries.index]
    assert doc["certificates_in_full"] == full
    assert any("under the setting chosen for robustness 50 %" in t for t in full)
    frame = half.to_frame()
    table = half.robustness()
    assert frame["_robustness"].tolist() == table["estimate"].tolist()
    assert frame["_robustness_low"].tolist() == table["low"].tolist()
    assert frame["_reached"].tolist() == table["reached"].tolist()
    assert frame["_setting"].tolist() == table["setting"].tolist()
    assert frame["_cost"].tolist() == pytest.approx(half.cost().tolist())


def test_leaving_answers_out_withdraws_the_proof_that_no_other_option_is_left(german):
    """A search that proved no other option is left spoke of all its answers: once one is
    left out for robustness, the certificate no longer says so (CE-OCL on a forest said "no
    other option (proven)" of one answer while the setting alone gave two)."""
    import dataclasses

    from counterfact.methods._pipeline._robustness import Setting, _Attempt, _keep_ranks, _Rows

    _, _, rows, _, method = german
    res = method.explain(rows.head(1), n_counterfactuals=3)
    q = rows.index[0]
    assert len(res.for_query(q)) == 3
    diag = res.diagnostics.copy()
    diag["alternatives_exhausted"] = True
    text = str(res.certificates[q]) + OPTIONS_PROVEN
    certs = res.certificates.copy()
    certs[q] = text
    records = res.certificate_records.copy()
    records[q] = dataclasses.replace(records[q], sentence=text)
    proven = type(res)(
        **{
            **res.parts(),
            "diagnostics": diag,
            "certificates": certs,
            "certificate_records": records,
        }
    )
    assert options_proven(proven.diagnostics.loc[q].to_dict())
    state = _Rows(0.9, 8)
    state.best = {q: _Attempt(proven, Setting(None, 0), [True, True], 0.95, [8, 8], 1.0, [0, 2])}
    kept = _keep_ranks(proven, state)
    assert list(kept.for_query(q).index) == [0, 1]
    assert OPTIONS_PROVEN not in kept.certificates[q]
    assert OPTIONS_PROVEN not in kept.certificate_records[q].sentence
    assert not options_proven(kept.diagnostics.loc[q].to_dict())
    assert kept.reason[q].startswith("2 of 3: 1 more was found under the setting kept")
