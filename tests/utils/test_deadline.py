"""Deadline: one object for a time budget, and its use down the pipeline."""

from __future__ import annotations

import math
import time

import pytest

from counterfact._utils._deadline import Deadline
from counterfact._utils._deps import install_hint


def test_no_limit():
    d = Deadline.none()
    assert not d.limited and not d.expired()
    assert d.left() == math.inf and d.seconds() is None
    assert d.reserve(5.0) is d
    assert Deadline.after(None) == d
    assert Deadline(math.inf) == d


def test_a_limit_counts_down_and_expires():
    start = time.perf_counter()
    d = Deadline.after(10.0, start=start)
    assert d.limited and 9.0 < d.left() <= 10.0
    assert 9.0 < d.seconds() <= 10.0
    gone = Deadline.after(-1.0)
    assert (
        gone.expired() and gone.left() < 0 and gone.seconds() == 0.0 and gone.seconds(0.01) == 0.01
    )


def test_reserve_keeps_time_back_and_earliest_picks_the_first():
    d = Deadline.after(10.0, start=100.0)
    assert d.reserve(2.5).at == pytest.approx(107.5)
    assert d.reserve(-3.0) == d  # nothing is given back
    early = Deadline.after(1.0, start=100.0)
    assert d.earliest(early) is early and early.earliest(d) is early
    assert d.earliest(Deadline.none()) is d and Deadline.none().earliest(d) is d


def test_install_hints_come_from_the_package_metadata():
    assert install_hint("z3") == 'pip install "counterfact[mace]"  (or: pip install z3-solver)'
    assert "[l2c]" in install_hint("torch")
    assert "[ceocl]" in install_hint("pyscipopt")
    assert "[dist]" in install_hint("distributed") and "dask[distributed]" in install_hint(
        "distributed"
    )
    assert "[all]" in install_hint("no_such_module")
