"""The constraint kinds are declared once (constraints._kinds); the JSON form, the
command line's flags and the methods' declarations all follow from the registry."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

import pytest

import counterfact as cf
from counterfact.constraints import (
    ConstraintKind,
    Constraints,
    _kinds,
    constraint_kinds,
    register_constraint_kind,
)
from counterfact.constraints._kinds import CONSTRAINT_KINDS, cli_arguments, constraint_kind
from counterfact.exceptions import ConstraintError, UnsupportedConstraintError
from counterfact.methods import MethodTags
from counterfact.testing import make_setting
from counterfact.testing._fast import fast_method


def test_the_kinds_are_the_registry_in_order():
    assert list(CONSTRAINT_KINDS) == [k.name for k in constraint_kinds()]
    assert CONSTRAINT_KINDS == tuple(k.name for k in constraint_kinds())
    assert "relations" in CONSTRAINT_KINDS and "teleport" not in CONSTRAINT_KINDS
    assert constraint_kind("max_changes").shape == "count"
    with pytest.raises(ConstraintError, match="Known kinds"):
        constraint_kind("teleport")


def test_every_kind_is_a_keyword_of_constraints():
    fields = {f.name for f in dataclasses.fields(Constraints)}
    assert set(CONSTRAINT_KINDS) == fields


def test_every_kind_round_trips_through_json():
    c = Constraints(
        immutable=["age"],
        increasing=["edu"],
        decreasing=["debt"],
        ranges={"income": (None, 5)},
        allowed_values={"job": ["a", "b"]},
        features_to_vary=["income", "job", "edu", "debt"],
        max_changes=2,
        causal=[cf.Causal(child="debt", parents=("income",), coef={"income": 0.5})],
        relations=["income <= 3 * debt"],
        timeline=cf.Timeline(6, rates={"income": 1.0}),
    )
    d = c.to_dict()
    assert list(d) == list(CONSTRAINT_KINDS)
    assert c.kinds() == set(CONSTRAINT_KINDS)
    back = Constraints.from_dict(d)
    assert back.to_dict() == d


def test_a_learned_causal_function_is_left_out_of_the_lenient_json_only():
    learned = cf.Causal(child="debt", parents=("income",), fn=lambda p: p["income"])
    c = Constraints(immutable=["age"], causal=[learned], relations=["income <= 3 * debt"])
    with pytest.raises(ConstraintError, match="linear"):
        c.to_dict()
    assert c.to_dict(strict=False) == {
        "immutable": ["age"],
        "causal": [],
        "relations": ["income <= 3 * debt"],
    }


def test_the_command_line_flags_come_from_the_registry():
    p = argparse.ArgumentParser()
    for _, form in cli_arguments():
        p.add_argument(form.flag, **form.argparse_kwargs())
    args = p.parse_args(
        ["--immutable", "a,b", "--range", "x=1:2", "--range", "y=:3", "--max-changes", "2"]
    )
    assert args.immutable == "a,b" and args.range == ["x=1:2", "y=:3"] and args.max_changes == 2
    flags = {k.name: form.flag for k, form in cli_arguments()}
    assert flags["features_to_vary"] == "--vary" and "relations" not in flags


def test_a_kind_must_be_new_and_well_formed():
    with pytest.raises(ConstraintError, match="already registered"):
        register_constraint_kind(ConstraintKind("immutable", "again", "names"))
    with pytest.raises(ConstraintError, match="shape"):
        ConstraintKind("curfew", "no such shape", "clock")
    with pytest.raises(ConstraintError, match="identifier"):
        ConstraintKind("cur few", "not an identifier", "names")


@dataclasses.dataclass(frozen=True)
class _CurfewConstraints(Constraints):
    """Constraints with one more kind, as a contributor would add it."""

    curfew: tuple[str, ...] = ()


@pytest.fixture
def curfew(monkeypatch):
    kind = ConstraintKind("curfew", "Features that may not change at night.", "names")
    monkeypatch.setitem(_kinds._REGISTRY, kind.name, kind)
    return _CurfewConstraints(curfew=("duration_months",))


@pytest.mark.parametrize("name", cf.methods.names(peers=True))
def test_a_new_kind_is_honoured_by_no_method(curfew, name):
    assert "curfew" in CONSTRAINT_KINDS and curfew.kinds() == {"curfew"}
    s = make_setting("lr")
    m = fast_method(name).fit(s.model, s.train)
    assert "curfew" not in m.supported_constraints
    with pytest.raises(UnsupportedConstraintError, match="curfew"):
        m.explain(s.queries.iloc[:1], constraints=curfew)


def test_a_method_that_declares_the_new_kind_accepts_it(curfew):
    base = type(fast_method(cf.methods.names()[0]))
    tags: Any = dataclasses.replace(base.tags, constraints=base.tags.constraints | {"curfew"})
    declares = type("DeclaresCurfew", (base,), {"tags": tags})
    assert isinstance(declares.tags, MethodTags)
    s = make_setting("lr")
    m = declares(**fast_method(cf.methods.names()[0]).get_params()).fit(s.model, s.train)
    assert "curfew" in m.supported_constraints
    m.explain(s.queries.iloc[:1], constraints=curfew)  # no UnsupportedConstraintError
