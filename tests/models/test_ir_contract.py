"""What a new IR estimator node must provide: the node's own contract
(:class:`EstimatorNode`) and an entry in every consumer's table.

Adding a node to ``Estimator`` without the entries below fails here, naming the
consumer that lacks it.
"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

from counterfact.models._compile import (
    MLP,
    CompiledModel,
    Dense,
    Estimator,
    EstimatorNode,
    Linear,
    StepMLP,
    TreeEnsemble,
    interval_bounds,
)

NODES = typing.get_args(Estimator)

#: the node's own contract, read by the IR's utilities and the methods
NODE_MEMBERS = (
    "n_outputs",  # everyone
    "forward",  # CompiledModel.predict_raw, the faithfulness tests
    "output_bounds",  # interval_bounds: big-M constants, stable ReLUs
    "has_relu",  # the solver choice (a MILP for ReLU networks)
    "outputs_are_probabilities",  # probability_link ("identity": forests)
    "tree_splits",  # CompiledModel.raw_thresholds
)


def _solver_tables() -> dict[str, tuple[dict[type, object], set[type]]]:
    """Each solver encoder table -> (the table, the nodes it leaves out on purpose)."""
    from counterfact.solvers._milp import _encoder as milp
    from counterfact.solvers._smt import _encoder as smt

    return {
        "the MILP encoder (milp ENCODERS)": (milp.ENCODERS, set()),
        # Z3 has no exact form of a StepMLP's real-valued steps: refused with a message
        "the Z3 region encoder (smt ENCODERS)": (smt.ENCODERS, {StepMLP}),
        # tree ensembles reach Z3 only as a region (smt ENCODERS)
        "the Z3 output encoder (smt OUTPUT_ENCODERS)": (
            smt.OUTPUT_ENCODERS,
            {TreeEnsemble, StepMLP},
        ),
    }


def test_the_estimator_nodes_are_the_known_ones() -> None:
    """A new node is added here on purpose, after giving it every entry below."""
    assert set(NODES) == {Linear, MLP, TreeEnsemble, StepMLP}


@pytest.mark.parametrize("node", NODES, ids=lambda n: n.__name__)
def test_every_node_declares_the_node_contract(node: type) -> None:
    protocol = {m for m in dir(EstimatorNode) if not m.startswith("_")}
    assert protocol == set(NODE_MEMBERS)
    fields = {f.name for f in dataclasses.fields(node)}
    missing = [m for m in NODE_MEMBERS if not hasattr(node, m) and m not in fields]
    assert not missing, f"{node.__name__} lacks {missing}"


@pytest.mark.parametrize("node", NODES, ids=lambda n: n.__name__)
def test_every_node_has_an_entry_in_every_solver_table(node: type) -> None:
    pytest.importorskip("z3")
    for consumer, (table, left_out) in _solver_tables().items():
        covered = any(cls in table for cls in node.__mro__)
        assert covered or node in left_out, f"{node.__name__} has no entry in {consumer}"


def _tiny_nodes() -> list[object]:
    W = np.array([[1.0, -2.0]])
    b = np.array([0.5])
    linear = Linear(W=W, b=b)
    mlp = MLP(
        layers=(
            Dense(W=np.array([[1.0, 1.0], [-1.0, 2.0]]), b=np.zeros(2), activation="relu"),
            Dense(W=np.array([[1.0, -1.0]]), b=np.array([0.1]), activation="identity"),
        )
    )
    return [linear, mlp]


@pytest.mark.parametrize("node", _tiny_nodes(), ids=lambda n: type(n).__name__)
def test_output_bounds_contain_the_outputs(node: EstimatorNode) -> None:
    rng = np.random.default_rng(0)
    lo, hi = np.array([-1.0, 0.0]), np.array([2.0, 3.0])
    X = rng.uniform(lo, hi, size=(2000, 2))
    pre, post, (yl, yh) = node.output_bounds(lo, hi)
    Y = node.forward(X)
    assert np.all(Y >= yl) and np.all(Y <= yh)
    assert len(pre) == len(post) == (2 if isinstance(node, MLP) else 0)
    assert node.has_relu == isinstance(node, MLP)
    assert not node.outputs_are_probabilities and node.tree_splits == ()


def test_interval_bounds_read_the_node(german_rf: CompiledModel) -> None:
    bounds = interval_bounds(german_rf)
    _, _, y = german_rf.estimator.output_bounds(bounds.x_lo, bounds.x_hi)
    np.testing.assert_array_equal(bounds.y_lo, y[0])
    np.testing.assert_array_equal(bounds.y_hi, y[1])
    assert german_rf.estimator.outputs_are_probabilities
    assert german_rf.estimator.tree_splits == german_rf.estimator.splits


@pytest.fixture(scope="module")
def german_rf() -> CompiledModel:
    import counterfact as cf
    from counterfact.models._compile import compile_model

    ds = cf.datasets.load("german_credit")
    model = cf.models.fit(ds, "rf", n_estimators=5, max_depth=4)
    return compile_model(model, ds.schema)
