"""What outside checks found wrong in what the library says, each fixed: a subsampled
trust region's proofs, a method parameter a measure of effort ignores, the reasons and
errors that named the wrong cause."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import counterfact as cf


@pytest.fixture(scope="module")
def credit():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = test.X[model.predict(test.X) == 0].iloc[:6]
    return train, model, X


# ------------------------------------------------------ CE-OCL: a subsampled hull
def test_a_subsampled_hull_proves_nothing_about_the_whole_trust_region(credit):
    """Five kept points of 506: a row the full hull answers was called ``infeasible``
    ("no counterfactual exists"), and answers in the small hull ``optimal``."""
    train, model, X = credit
    small = cf.CEOCL(trust_region="hull", max_hull_points=5, random_state=0, time_limit=20)
    full = cf.CEOCL(trust_region="hull", max_hull_points=None, random_state=0, time_limit=20)
    r_small = small.fit(model, train).explain(X)
    r_full = full.fit(model, train).explain(X)
    assert "infeasible" not in set(r_small.status)
    assert "optimal" not in set(r_small.status)
    failed = r_small.status.index[r_small.status == "failed"]
    assert len(failed) >= 1
    assert (r_full.status.loc[failed] != "infeasible").any()  # the full hull answers some
    for q in failed:
        assert "max_hull_points" in r_small.reason.loc[q]
    for q in r_small.status.index[r_small.status == "feasible"]:
        record = r_small.certificate_record(q)
        assert record.lower_bound is None  # no bound over the whole region
        assert "not proven nearest" in record.sentence and "hull of 5 of" in record.sentence
    assert "hull_subsampled" not in r_full.diagnostics.columns or (
        r_full.diagnostics["hull_subsampled"].isna().all()
    )


# ------------------------------------------------ a parameter the measure ignores
def _own_objective_warnings(method, X, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        method.explain(X, **kw)
    return [str(w.message) for w in caught if "own objective" in str(w.message)]


def test_a_norm_under_the_measure_of_effort_is_said_to_do_nothing(credit):
    train, model, X = credit
    q = X.iloc[:1]
    linf = cf.MACE(norm="linf", random_state=0).fit(model, train)
    said = _own_objective_warnings(linf, q)
    assert len(said) == 1 and "norm='linf'" in said[0] and "costs='own'" in said[0]
    own = cf.Requirements(costs="own")
    assert _own_objective_warnings(linf, q, requirements=own) == []
    plain = cf.MACE(random_state=0).fit(model, train)
    assert _own_objective_warnings(plain, q) == []
    ceocl = cf.CEOCL(alpha=0.5, time_limit=10, random_state=0).fit(model, train)
    said = _own_objective_warnings(ceocl, q, requirements=cf.Requirements(costs=cf.Costs()))
    assert len(said) == 1 and "alpha=0.5" in said[0] and "the call's costs" in said[0]


def test_the_parameters_named_exist_on_each_method():
    for name in cf.methods.names():
        cls = type(cf.methods.get(name))
        for param in cls.tags.own_objective:
            assert param in cls().get_params(), (name, param)


# -------------------------------------------------------------- reasons and errors
def test_a_range_on_a_feature_held_fixed_names_why_it_is_fixed(credit):
    train, model, X = credit
    ufce = cf.UFCE(random_state=0).fit(model, train)
    c = cf.Constraints(features_to_vary=["duration_months"], ranges={"credit_amount": (1, 2)})
    with pytest.raises(cf.exceptions.ConstraintError, match="features_to_vary leaves it out"):
        ufce.explain(X.iloc[:1], constraints=c)
    c = cf.Constraints(immutable=["credit_amount"], ranges={"credit_amount": (1, 2)})
    with pytest.raises(cf.exceptions.ConstraintError, match="immutable in the constraints"):
        ufce.explain(X.iloc[:1], constraints=c)


def test_a_causal_child_held_fixed_names_why(credit):
    train, model, X = credit
    c = cf.Constraints(
        causal=[cf.Causal("credit_amount", ("duration_months",), coef={"duration_months": 150.0})],
        features_to_vary=["duration_months", "installment_rate"],
    )
    ceocl = cf.CEOCL(time_limit=5, random_state=0).fit(model, train)
    with pytest.raises(cf.exceptions.ConstraintError, match="features_to_vary leaves it out"):
        ceocl.explain(X.iloc[:1], constraints=c)


def test_plausibility_without_labels_names_evaluates_keyword(credit):
    train, model, X = credit
    result = cf.MACE(random_state=0).fit(model, train).explain(X.iloc[:1])
    with pytest.raises(cf.exceptions.ValidationError, match="lof_reference='all'"):
        result.evaluate(train.X)


def test_ufce_feedback_builders_are_public(credit):
    from counterfact.methods.ufce import feedback_levels, random_feedback

    train, _, X = credit
    assert isinstance(feedback_levels(train, X.iloc[0], "very_limited"), cf.Constraints)
    assert callable(random_feedback)


def test_an_empty_swarm_says_the_box_is_the_methods():
    pytest.importorskip("torch")
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    X = test.X[model.predict(test.X) == 0].iloc[:3]
    pso = cf.MDPSO(epsilon=0.01, random_state=0, time_limit=10).fit(model, train)
    pso.set_params(swarm={"n_restarts": 0, "max_iter": 5})
    res = pso.explain(X, constraints=cf.Constraints(features_to_vary=["duration_months"]))
    failed = res.status.index[res.status == "failed"]
    assert len(failed) >= 1
    for q in failed:
        assert "epsilon 0.01" in res.reason.loc[q] and "not the constraints'" in res.reason.loc[q]


def test_global_findings_do_not_compare_a_group_with_itself():
    from counterfact.recourse._global._text import _ratio_sentence

    row = {"group": "a", "cost_ratio": 1.0, "cost_ratio_ci_low": 1.0, "cost_ratio_ci_high": 1.0}
    same = _ratio_sentence(pd.Series(row), pd.Series({**row, "group": "b"}), "95%", "own")
    assert "every group 1.00×" in same and " a " not in same
    other = _ratio_sentence(pd.Series({**row, "cost_ratio": 1.5}), pd.Series(row), "95%", "own")
    assert "against 1.00× for a" in other


def test_a_relation_the_rows_fixed_values_break_is_an_error(credit):
    """As a range that excludes a fixed value is: the search proved "infeasible" (exact
    methods) or failed (heuristics), blaming the probability."""
    train, model, X = credit
    c = cf.Constraints(immutable=["credit_amount"], relations=["credit_amount <= 1000"])
    for method in (cf.MACE(random_state=0), cf.UFCE(random_state=0)):
        method.fit(model, train)
        with pytest.raises(cf.exceptions.ConstraintError, match="credit_amount <= 1000"):
            method.explain(X.iloc[:1], constraints=c)
    fine = cf.Constraints(immutable=["credit_amount"], relations=["credit_amount <= 100000"])
    assert (
        cf.MACE(random_state=0)
        .fit(model, train)
        .explain(X.iloc[:1], constraints=fine)
        .found.iloc[0]
    )
    with pytest.raises(cf.exceptions.ConstraintError, match="immutable in the schema"):
        cf.MACE(random_state=0).fit(model, train).explain(
            X.iloc[:1], constraints=cf.Constraints(relations=["purpose == 'business'"])
        )


def test_a_region_checked_only_at_the_answer_says_so(credit):
    train, _, _ = credit
    region = cf.result.Region(
        bounds={"credit_amount": (1235.0, 1235.0)}, fixed={}, certified=False, how="", n_checked=0
    )
    assert "checked on 0 samples" not in region.describe(train.schema)
    assert "only the counterfactual itself" in region.sentence(train.schema)


# ------------------------------------- a forest's probability exactly at min_probability
def _lattice_forest():
    """Two whole features and a category; a 20-tree forest, whose probabilities are
    multiples of 1/20, so that 0.7 is reached exactly by some points."""
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 16, n),
            "b": rng.integers(0, 16, n),
            "h": rng.choice(["rent", "own", "mortgage"], n),
        }
    )
    score = 0.3 * frame.a + 0.2 * frame.b - 0.01 * frame.a * frame.b + 1.5 * (frame.h == "own")
    frame["y"] = (score + rng.normal(0, 0.8, n) > 4.5).astype(int)
    data = cf.Dataset.from_frame(frame, target="y")
    model = cf.models.fit(data, "rf", random_state=0, n_estimators=20)
    return data, model


@pytest.mark.parametrize(
    "make",
    [
        lambda: cf.CEOCL(time_limit=20, random_state=0),
        lambda: cf.MACE(solver="highs", time_limit=20, random_state=0),
    ],
    ids=["ceocl", "mace-highs"],
)
def test_a_point_exactly_at_the_required_probability_is_found(make):
    """A MILP that asks the probability past ``p`` by its margin lost the answers exactly
    at ``p`` and still said "optimal" (row 1: cost 3.5 where 2.5 reaches 0.7 exactly)."""
    data, model = _lattice_forest()
    weights = {"a": 1.0, "b": 1.0, "h": 1.5}
    X = data.X[model.predict(data.X) == 0].head(8)
    grid = pd.DataFrame(
        [
            {"a": a, "b": b, "h": h}
            for a in range(16)
            for b in range(16)
            for h in ("rent", "own", "mortgage")
        ]
    ).astype(data.X.dtypes.to_dict())
    reach = grid[model.predict_proba(grid)[:, 1] >= 0.7]
    req = cf.Requirements(min_probability=0.7, costs=cf.Costs(weights=weights))
    result = make().fit(model, data).explain(X, requirements=req)
    ties = 0
    for q, x in X.iterrows():
        cost = (reach.a - x.a).abs() + (reach.b - x.b).abs() + 1.5 * (reach.h != x.h)
        best = float(cost.min())
        ties += int(np.isclose(model.predict_proba(reach[cost == best])[:, 1], 0.7).any())
        assert result.status.loc[q] == "optimal"
        assert result.cost().loc[(q, 0)] == pytest.approx(best, abs=1e-9)
        assert result.certificate_record(q).lower_bound <= best + 1e-9
        assert result.certificate_record(q).margin_tolerance >= 0  # ties are covered
    assert ties >= 1  # the case that failed: a cheapest point exactly at 0.7


def test_a_tie_inclusive_result_saves_and_loads():
    """The first answer's margin is negative there (-1e-5 on the probability); a saved
    result was refused on loading."""
    data, model = _lattice_forest()
    X = data.X[model.predict(data.X) == 0].head(3)
    req = cf.Requirements(min_probability=0.7, costs=cf.Costs(weights={"a": 1.0, "b": 1.0}))
    result = cf.CEOCL(time_limit=20, random_state=0).fit(model, data).explain(X, requirements=req)
    assert (result.diagnostics["margin"] < 0).any()
    loaded = type(result).from_json(result.to_json(), model=model)
    assert loaded.status.tolist() == result.status.tolist()


def test_further_answers_keep_a_margin_above_the_threshold():
    """After a first answer found below the threshold's margin, the options were searched
    there too: their points just under ``p`` failed the model's check."""
    data, model = _lattice_forest()
    X = data.X[model.predict(data.X) == 0].head(8)
    weights = {"a": 1.0, "b": 1.0, "h": 1.5}
    req = cf.Requirements(min_probability=0.7 + 5e-6, costs=cf.Costs(weights=weights))
    ceocl = cf.CEOCL(time_limit=20, random_state=0, solution_pool=False).fit(model, data)
    result = ceocl.explain(X, n_counterfactuals=4, requirements=req)
    assert not result.reason.str.contains("failed verification").any(), result.reason.tolist()


def test_a_subclass_with_its_own_constructor_explains(credit):
    train, model, X = credit

    class Tagged(cf.NearestObservable):
        def __init__(self, tag, **kw):
            super().__init__(**kw)
            self.tag = tag

        def get_params(self, deep=True):
            return {**super().get_params(deep), "tag": self.tag}

    result = Tagged("t", random_state=0).fit(model, train).explain(X.iloc[:1])
    assert len(result.status) == 1


# ------------------------------------------------------------------------------ L2C
def test_an_unreachable_apple_gpu_is_refused_in_words():
    torch = pytest.importorskip("torch")
    from counterfact._utils._deps import torch_device

    if torch.backends.mps.is_available():
        pytest.skip("this machine reaches an Apple GPU")
    with pytest.raises(cf.exceptions.ValidationError, match="device='cpu'"):
        torch_device(torch, "mps", "L2C")


def test_a_file_l2c_did_not_write_is_refused_without_unsafe_advice(credit, tmp_path):
    pytest.importorskip("torch")
    train, model, _ = credit
    path = tmp_path / "garbage.pt"
    path.write_bytes(b"not a torch file at all")
    with pytest.raises(cf.exceptions.ValidationError) as info:
        cf.L2C.load(path, model, train)
    assert "weights_only" not in str(info.value) and "not a file L2C.save wrote" in str(info.value)


def test_saving_an_unfitted_generator_names_save(tmp_path):
    with pytest.raises(cf.exceptions.NotFittedError, match="before 'save'"):
        cf.L2C().save(tmp_path / "g.pt")
