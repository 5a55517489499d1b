"""counterfact.solvers: the old module paths are deprecation aliases; the encoders dispatch on IR node classes."""

from __future__ import annotations

import importlib
import sys
from types import SimpleNamespace

import pytest

import counterfact.solvers as solvers
from counterfact.exceptions import UnsupportedModelError
from counterfact.models.compile import MLP, Linear, StepMLP, TreeEnsemble
from counterfact.solvers import milp, smt

#: old module -> (the public names it had, where each lives now)
OLD_PATHS = {
    "counterfact.solvers.mip": (
        ["BACKENDS", "INF", "Expr", "Model", "Solution", "SolverError", "Term", "Var", "as_expr", "lin", "quicksum"],
        [milp],
    ),
    "counterfact.solvers.mip_backend": (
        [
            "REAL_STEP", "Expr", "FeatureVars", "Model", "RawInputs", "Template", "Var", "add_change_limit",
            "changed_set", "declare_inputs", "decode", "encode_decision", "encode_inputs", "encode_model",
            "encode_outputs", "encode_regressor", "encode_template", "exclude_point", "feature_deltas", "lin",
            "no_good_superset", "quicksum", "restrict_inputs",
        ],
        [milp],
    ),
    "counterfact.solvers.z3_backend": (
        ["ForestText", "encode_model", "encode_outputs", "forest_in_box", "has_relu", "is_forest", "rational", "z_box"],
        [smt, solvers],
    ),
}


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_old_paths_warn_and_give_the_same_objects(old: str) -> None:
    names, sources = OLD_PATHS[old]
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=old.replace(".", r"\.")):
        module = importlib.import_module(old)
    for name in names:
        new = next(getattr(s, name) for s in sources if hasattr(s, name))
        assert getattr(module, name) is new, name


def test_dispatch_tables_are_keyed_on_ir_nodes() -> None:
    assert set(milp.ENCODERS) == {Linear, MLP, TreeEnsemble, StepMLP}
    assert set(smt.ENCODERS) == {Linear, MLP, TreeEnsemble}  # StepMLP: MACE's MIP oracle
    assert set(smt.OUTPUT_ENCODERS) == {Linear, MLP}
    unknown = SimpleNamespace(estimator=SimpleNamespace())
    with pytest.raises(UnsupportedModelError, match=r"MILP encoder.*SimpleNamespace.*model kind"):
        milp.encode_outputs(milp.Model(), unknown, [])
    with pytest.raises(UnsupportedModelError, match=r"Z3 encoder.*SimpleNamespace.*oracle='mip'"):
        smt.encode_model(unknown, [], 0)
