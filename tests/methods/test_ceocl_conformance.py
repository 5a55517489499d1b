"""The conformance suite for CE-OCL with a sparsity penalty and with SCIP
(tests/methods/test_common.py runs it with HiGHS and the fast parameters)."""

from __future__ import annotations

import pytest

import counterfact as cf
from counterfact.testing import make_setting
from counterfact.testing._conformance import conformance_checks

pytest.importorskip("highspy")
pytest.importorskip("pyscipopt")

CHECKS = conformance_checks()


@pytest.mark.parametrize("backend", ["highs", "scip"])
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_conformance_lr(check, backend):
    check(
        lambda: cf.CEOCL(norm="l1", alpha=0.05, solver=backend, time_limit=20, random_state=0),
        make_setting("lr"),
    )


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_conformance_tree_scip(check):
    setting = make_setting("tree")
    check(lambda: cf.CEOCL(norm="l1", solver="scip", time_limit=20, random_state=0), setting)
