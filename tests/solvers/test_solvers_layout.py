"""counterfact.solvers: the encoders dispatch on IR node classes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from counterfact.exceptions import UnsupportedModelError
from counterfact.models._compile import MLP, Linear, StepMLP, TreeEnsemble
from counterfact.solvers import _milp as milp
from counterfact.solvers import _smt as smt


def test_dispatch_tables_are_keyed_on_ir_nodes() -> None:
    assert set(milp.ENCODERS) == {Linear, MLP, TreeEnsemble, StepMLP}
    assert set(smt.ENCODERS) == {Linear, MLP, TreeEnsemble}  # StepMLP: MACE's MIP oracle
    assert set(smt.OUTPUT_ENCODERS) == {Linear, MLP}
    unknown = SimpleNamespace(estimator=SimpleNamespace())
    with pytest.raises(UnsupportedModelError, match=r"MILP encoder.*SimpleNamespace.*model kind"):
        milp.encode_outputs(milp.Model(), unknown, [])
    with pytest.raises(UnsupportedModelError, match=r"Z3 encoder.*SimpleNamespace.*solver='highs'"):
        smt.encode_model(unknown, [], 0)
