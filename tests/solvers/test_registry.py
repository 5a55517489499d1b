"""counterfact.solvers: the registry of solver backends and MACE's walk over it."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact import solvers
from counterfact.solvers import Solver
from counterfact.solvers._oracle import Answer
from counterfact.solvers._problem import Search
from counterfact.solvers._registry import build_first, milp_names, unregister

BUILT_IN = {"z3", "highs", "scip", "cpsat", "bnb"}


@pytest.fixture
def linear_setting():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(0, 10, 200), "b": rng.uniform(0, 10, 200)})
    data = cf.Dataset.from_frame(X.assign(y=(X.a + X.b > 10).astype(int)), target="y", name="ab")
    model = cf.models.fit(data, "lr", random_state=0)
    rows = cf.rows_to_explain(model, data).head(2)
    return data, model, rows


@pytest.fixture
def registered():
    """Registers test backends and removes them afterwards."""
    added: list[str] = []

    def add(cls: type[Solver]) -> type[Solver]:
        solvers.register(cls)
        added.append(cls.name)
        return cls

    yield add
    for name in added:
        unregister(name)


def test_every_backend_declares_a_name_requirements_and_reasons():
    assert BUILT_IN <= set(solvers.names())
    assert milp_names()[:2] == ("highs", "scip")
    for name in solvers.names():
        s = solvers.get(name)
        assert s.name == name and isinstance(s.requires, tuple) and s.summary
        assert s.supports(None) in (None, s.missing())
    # a backend refuses what it does not take, with a reason that says why
    assert "MILP" in solvers.get("z3").supports(object())
    assert "MILP" in solvers.get("bnb").supports(object())
    assert solvers.get("highs").supports(object()) == solvers.get("highs").missing()


def test_missing_package_is_a_reason_with_the_install_hint():
    class Absent(Solver):
        name = "absent"
        requires = ("no_such_module_here",)

    why = Absent().supports(None)
    assert "no_such_module_here is not installed" in why and "pip install" in why


def test_unknown_names_and_bad_classes_are_refused():
    with pytest.raises(cf.ValidationError, match=r"Unknown solver 'gurobi'.*z3"):
        solvers.get("gurobi")
    with pytest.raises(cf.ValidationError, match="subclass"):
        solvers.register(int)  # type: ignore[arg-type]
    with pytest.raises(cf.ValidationError, match="solver"):
        cf.MACE(solver="gurobi").fit(*_fit_args())
    with pytest.raises(cf.ValidationError, match="solver"):
        cf.CEOCL(solver="z3").fit(*_fit_args())  # not a MILP solver


def _fit_args():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 60), "b": rng.uniform(0, 1, 60)})
    data = cf.Dataset.from_frame(X.assign(y=(X.a > X.b).astype(int)), target="y", name="x")
    return cf.models.fit(data, "lr", random_state=0), data


def test_model_solve_dispatches_through_the_registry(registered):
    from counterfact.solvers._milp import Model, Solution

    calls = []

    class Recorder(solvers.MilpSolver):
        name = "recorder"
        summary = "records the settings it is given"

        def solve(self, model, settings):
            calls.append((model.n_vars, settings.time_limit, settings.gap))
            return Solution(status="infeasible", backend=self.name)

    registered(Recorder)
    m = Model()
    m.add_var(0, 1)
    assert m.solve("recorder", time_limit=3.0, gap=0.5).status == "infeasible"
    assert calls == [(1, 3.0, 0.5)]
    with pytest.raises(solvers._milp.SolverError, match="Unknown MIP backend 'z3'"):
        m.solve("z3")


class _Echo(Solver):
    """A fake backend: answers every check with the query itself (distance 0)."""

    name = "echo"
    summary = "test double"
    built: ClassVar[list[Search]] = []

    def supports(self, problem=None):
        return None

    def build(self, problem):
        _Echo.built.append(problem)
        return _EchoOracle(problem)


class _EchoOracle:
    def __init__(self, search: Search) -> None:
        self.problem = search.problem

    def check(self, bound, deadline):
        point = tuple(v.query for v in self.problem.vars)
        return Answer("sat", point, 0.0, 0.0)


class _Refuses(Solver):
    name = "refuses"
    summary = "test double"

    def supports(self, problem=None):
        return "it refuses every problem (a test double)"


def test_mace_walks_the_preference_and_takes_the_first_that_supports(
    registered, linear_setting, monkeypatch
):
    data, model, rows = linear_setting
    registered(_Echo)
    registered(_Refuses)
    mace = cf.MACE(random_state=0, warm_start=0, polish=False).fit(model, data)
    monkeypatch.setattr(mace, "solvers_", ("refuses", "echo", "z3"))
    _Echo.built.clear()
    # the method's own objective: under a measure of effort a linear model walks HiGHS first
    result = mace.explain(rows.head(1), requirements=cf.Requirements(costs="own"))
    assert len(_Echo.built) >= 1  # "refuses" said no; "echo" was built before z3
    assert result.diagnostics["solver"].iloc[0] == "echo"
    # the echo oracle answers the query itself, which the real model rejects
    assert result.found.iloc[0] == 0


class _AlsoRefuses(Solver):
    name = "also_refuses"
    summary = "test double"

    def supports(self, problem=None):
        return "no, twice"


def test_a_problem_no_solver_takes_raises_naming_every_reason(registered, linear_setting):
    data, model, rows = linear_setting
    registered(_Refuses)
    registered(_AlsoRefuses)
    with pytest.raises(cf.UnsupportedConstraintError) as info:
        cf.MACE(solver="refuses").fit(model, data).explain(rows.head(1))
    assert "refuses: it refuses every problem" in str(info.value)
    # the walk itself names every backend's reason
    search = Search(problem=None, compiled=None)  # type: ignore[arg-type]
    with pytest.raises(cf.UnsupportedConstraintError) as info:
        build_first(("refuses", "also_refuses"), search)
    text = str(info.value)
    assert "refuses: it refuses every problem" in text and "also_refuses: no, twice" in text


def test_a_named_solver_is_checked_before_any_search(linear_setting):
    data, model, rows = linear_setting
    with pytest.raises(cf.UnsupportedConstraintError, match=r"bnb: .*no tree ensemble"):
        cf.MACE(solver="bnb").fit(model, data).explain(rows.head(1))


def test_a_milp_solver_without_solve_is_refused():
    class Incomplete(solvers.MilpSolver):
        name = "incomplete"

    with pytest.raises(cf.ValidationError, match="must implement solve"):
        solvers.register(Incomplete)
    assert "incomplete" not in solvers.names()
