"""Facts on the class: MethodTags, the registry's order and public names, the guarantee
texts, ``counterfact methods``."""

from __future__ import annotations

import dataclasses

import pytest

import counterfact as cf
from counterfact.cli import main
from counterfact.methods import MethodTags
from counterfact.methods._registry import certificate_text
from counterfact.result import STATUSES


def test_tags_reject_what_they_cannot_mean():
    with pytest.raises(ValueError, match="unknown kinds"):
        MethodTags(display_name="x", summary="y", constraints=frozenset({"teleport"}))
    with pytest.raises(ValueError, match="measure"):
        MethodTags(display_name="x", summary="y", measure="money")
    t = MethodTags(display_name="x", summary="y", fast_params={"a": 1})
    with pytest.raises(TypeError):
        t.fast_params["a"] = 2  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.display_name = "z"  # type: ignore[misc]


def test_the_registry_lists_by_declared_order_and_peers_only_on_request():
    names = cf.methods.names()
    assert names[:2] == ["mace", "ceocl"]  # the exact methods first (tags.order)
    assert "dice" not in names
    orders = [cf.methods.get_class(n).tags.order for n in names]
    assert orders == sorted(orders)
    assert list(cf.methods.classes()) == names


def test_exact_methods_are_the_ones_that_say_so():
    proving = {n for n in cf.methods.names() if cf.methods.get_class(n).tags.proves_infeasibility}
    assert proving == {"mace", "ceocl"}
    assert cf.MACE().supported_constraints == cf.MACE.tags.constraints
    assert (
        "causal" in cf.CEOCL().supported_constraints
        and "causal" not in cf.MACE().supported_constraints
    )


@pytest.mark.parametrize("name", cf.methods.names(peers=True))
def test_every_status_has_words(name):
    cls = cf.methods.get_class(name)
    for status in STATUSES:
        text = certificate_text(name, status, {})
        assert text == cls.certificate(status, {}) and text.startswith(cls.tags.display_name + ": ")
    said = cls.guarantee(cls().get_params())
    assert ("prove" in said["none"]) == cls.tags.proves_infeasibility


def test_an_unknown_name_gets_the_words_that_hold_for_any_method():
    assert certificate_text("someone-else", "infeasible", {}) == (
        "someone-else: no counterfactual exists under these constraints"
    )


def test_results_keep_the_words_of_the_method(lr_german):
    train, test, model = lr_german
    res = cf.MACE(time_limit=20).fit(model, train).explain(cf.rows_to_explain(model, test).head(2))
    q = res.queries.index[0]
    assert res.certificate(q) == cf.MACE.certificate(
        res.status[q], res.diagnostics.loc[q].to_dict()
    )
    assert res.certificate(q).startswith("MACE: proven nearest")
    back = cf.CounterfactualResult.from_json(res.to_json())
    assert back.certificate(q) == res.certificate(q)


def test_the_methods_command_lists_every_registered_method(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in cf.methods.names(peers=True, available=False):
        assert name in out and cf.methods.get_class(name).tags.display_name in out
    assert main(["methods", "--markdown"]) == 0
    table = capsys.readouterr().out
    assert table.startswith("| class | registry |") and "`cf.MACE`" in table


def test_the_public_names_of_the_methods_are_the_registrys():
    """``cf.MACE`` and the package's ``__all__`` come from the registry: every class the
    library declares (peer adapters only under counterfact.methods)."""
    declared = cf.methods._registry.builtin_classes()
    public = {c for c, n in declared.items() if not cf.methods.get_class(n).tags.peer}
    assert public == {name for name in cf.__all__ if name in declared}, (
        "list the library's method classes in counterfact.__all__"
    )
    for cls_name, name in declared.items():
        assert getattr(cf.methods, cls_name) is cf.methods.get_class(name)
        assert hasattr(cf, cls_name) == (cls_name in public)
    with pytest.raises(AttributeError, match="no_such_method"):
        cf.methods.no_such_method  # noqa: B018


def test_the_default_method_is_chosen_in_one_place(monkeypatch):
    from counterfact.methods import _registry

    assert cf.methods.default_method() == "mace"  # z3 is a core dependency
    assert cf.methods.default_method(["nearest", "ceocl"]) == "ceocl"  # the declared order
    monkeypatch.setattr(_registry, "is_available", lambda name: False)  # z3 missing
    assert cf.methods.default_method() == "ufce"
    assert cf.methods.default_method(["mace", "ceocl"]) == "ceocl"
    with pytest.raises(cf.ValidationError, match="No method"):
        cf.methods.default_method([])


@pytest.fixture(scope="module")
def lr_german():
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.2, random_state=0)
    return train, test, cf.models.fit(train, "lr", random_state=0)
