"""Every registered method through every conformance check (like scikit-learn's test_common).

The methods come from the registry (peer adapters included where their package
is installed), each built with its class's ``tags.fast_params`` by the same
:func:`counterfact.testing.check_method` a method's author calls; a method a user
registers is checked the same way (see ``test_a_registered_method_of_ones_own``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact._utils._validation import Interval
from counterfact.constraints._kinds import CONSTRAINT_KINDS
from counterfact.methods import Candidates, CounterfactualMethod, MethodTags, Query
from counterfact.testing import check_method, make_setting
from counterfact.testing._conformance import conformance_checks
from counterfact.testing._fast import fast_method

METHODS = cf.methods.names(peers=True)
CHECKS = conformance_checks()
#: a linear model and a tree: the two model families every method supports (forests are
#: checked in the methods' own test files; a time-limited solver on a forest is not reproducible)
KINDS = ["lr", "tree"]


def test_every_method_is_covered():
    """Every method the library declares is registered and checked here (peer adapters
    when their package is installed)."""
    own = set(cf.methods._registry.builtin_classes().values())
    peers = {n for n in own if cf.methods.get_class(n).tags.peer}
    assert own - peers <= set(METHODS) and len(own - peers) >= 6


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", METHODS)
def test_conformance(name, check, kind):
    cls = cf.methods.get_class(name)
    assert check_method(cls, setting=make_setting(kind), checks=[check.__name__]) == [
        check.__name__
    ]


class RandomNeighbour(CounterfactualMethod):
    """A method written outside the library: walk from the query towards random
    training rows of the target class, one feature at a time (a plain-numpy search);
    the pipeline keeps the steps that satisfy the constraints and flip the model."""

    name = "random_neighbour"
    tags = MethodTags(
        display_name="random neighbour",
        summary="steps towards observed rows of the target class",
        # every step is filtered with the query's bounds: all kinds but causal ones
        constraints=frozenset(CONSTRAINT_KINDS) - {"causal"},
    )
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {"n_draws": [Interval(int, 1, None)]}

    def __init__(self, *, n_draws: int = 20, random_state: int | None = None) -> None:
        self.n_draws = n_draws
        self.random_state = random_state

    def _fit(self) -> None:
        self._rows = self.data_.X.reset_index(drop=True)
        self._pred = np.asarray(self.model_.predict(self._rows))

    def _explain_one(self, query: Query) -> Candidates:
        pool = np.flatnonzero(self._pred == query.target)
        names = self.schema_.names
        steps = []
        for r in query.rng.choice(pool, size=min(self.n_draws, pool.size), replace=False):
            row, order = query.x.copy(), query.rng.permutation(len(names))
            for j in order:
                row[names[j]] = self._rows.iloc[int(r)][names[j]]
                steps.append(row.copy())
        frame = pd.DataFrame(steps, columns=names).reset_index(drop=True)
        frame = frame[np.asarray(query.bounds.satisfied(frame), dtype=bool)]
        return Candidates(frame.reset_index(drop=True), "feasible" if len(frame) else "failed")


def test_a_registered_method_of_ones_own():
    """Registering a class is all a new method needs: it is listed, built with its
    fast parameters and passes the whole suite."""
    cf.methods.register("random_neighbour", RandomNeighbour)
    try:
        assert "random_neighbour" in cf.methods.names()
        factory = lambda: fast_method("random_neighbour", random_state=0)  # noqa: E731
        assert check_method(factory) == [c.__name__ for c in CHECKS]
    finally:
        cf.methods._registry.unregister("random_neighbour")


def test_check_method_takes_a_class_an_instance_or_a_factory():
    """An instance's parameters are kept (each check gets a fresh copy); a failure names
    the check, what it checks and why, for every failed check at once."""
    for method in (RandomNeighbour, RandomNeighbour(n_draws=5, random_state=0)):
        assert check_method(method, checks=["check_tags", "check_reproducible"]) == [
            "check_tags",
            "check_reproducible",
        ]
    with pytest.raises(ValueError, match="no_such_check"):
        check_method(RandomNeighbour, checks=["no_such_check"])
    with pytest.raises(TypeError, match="CounterfactualMethod"):
        check_method(int)


def test_a_class_without_tags_is_refused():
    class Untagged(CounterfactualMethod):
        def __init__(self) -> None:
            pass

    with pytest.raises(cf.ValidationError, match="tags"):
        cf.methods.register("untagged", Untagged)


def test_the_suite_catches_an_override_of_the_pipeline():
    """A method that overrides a private method of the pipeline fails check_tags."""

    class Meddler(RandomNeighbour):
        tags = MethodTags(display_name="meddler", summary="overrides a pipeline method")

        def _check_fitted(self) -> None:
            pass

    with pytest.raises(AssertionError, match="_check_fitted") as info:
        check_method(lambda: Meddler(random_state=0), setting=make_setting("lr"))
    report = str(info.value)
    assert report.startswith("Meddler failed ") and "of 13 conformance checks" in report
    assert "- check_tags: The class declares its facts" in report
