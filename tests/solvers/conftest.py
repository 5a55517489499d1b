"""Shared helpers of the solver tests."""

from __future__ import annotations

import pytest

import counterfact as cf
from counterfact.constraints._resolve import resolve
from counterfact.methods.mace._problem import build_problem


@pytest.fixture
def milp_problem():
    """``make(train, x, costs)``: the MACE problem of row ``x`` with no constraints, a
    margin of 1e-4 on class 1, in the l1 distance or (``costs=True``) the default measure
    of effort."""

    def make(train, x, costs: bool):
        bounds = resolve(cf.Constraints(), train.schema).for_query(x)
        p = build_problem(
            train.schema, bounds, weights=(0.0, 1.0, 0.0), target_index=1, margin=1e-4
        )
        if costs:
            p.costs = cf.Costs().bind(train.schema, train.X).for_query(x)
            p.weights = (0.0, 0.0, 0.0)
        return p

    return make
