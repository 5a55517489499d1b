"""The vote-share rule as outputs of the compiled forest: exact in every solver.

A random forest's compiled outputs are its mean leaf probabilities.  Under
``Requirements(min_vote_share=s)`` the same trees get ``n_classes`` more outputs:
each leaf also carries the one-hot vector of its largest class (the tree's vote,
the first class on ties, as the tree's ``predict``), so output ``n_classes + c``
is the share of the trees voting for class ``c``.  The decision rule's region
then also asks the target's share to reach ``(k - 1/2) / T``, where ``T`` is the
number of trees and ``k = ceil(s T)`` the votes needed
(:func:`~counterfact.constraints._votes.votes_needed`).  Shares are multiples of
``1 / T``, so the condition holds exactly when at least ``k`` trees vote for the
target, whatever decision margin a solver adds (below ``1 / (2 T)``: 1e-4 and
1e-6 margins, forests of up to 5,000 trees).  Every solver already encodes the
region's linear conditions over the leaves (Z3, CP-SAT, the MILP back ends, the
branch and bound), so each counts the votes exactly without code of its own.

The vote view of a forest is built once per compiled forest (cached by the
estimator node) so that the solvers' per-model caches keep working across
queries.
"""

from __future__ import annotations

import weakref
from dataclasses import replace

import numpy as np

from ...constraints._votes import votes_needed
from ...exceptions import UnsupportedModelError
from ._ir import CompiledModel, Leaf, Tree, TreeEnsemble

__all__ = ["FOREST_ESTIMATORS", "MAX_VOTE_TREES", "vote_shares", "with_min_vote_share"]

#: the compiled estimators the rule applies to (``CompiledModel.estimator_class``)
FOREST_ESTIMATORS = ("RandomForestClassifier", "ExtraTreesClassifier")
#: the most trees for which a 1e-4 decision margin stays below half a vote share
MAX_VOTE_TREES = 5000

_VIEWS: weakref.WeakKeyDictionary[TreeEnsemble, TreeEnsemble] = weakref.WeakKeyDictionary()


def _check_forest(compiled: CompiledModel) -> TreeEnsemble:
    est = compiled.estimator
    if (
        compiled.estimator_class not in FOREST_ESTIMATORS
        or not isinstance(est, TreeEnsemble)
        or est.aggregation != "mean_proba"
        or compiled.rule.kind != "argmax"
    ):
        raise UnsupportedModelError(
            f"{compiled.source or compiled.estimator_class}: min_vote_share counts the votes of "
            "a random forest's or an extra-trees ensemble's trees; this model is "
            f"{compiled.estimator_class or 'another kind'}. Use min_probability or robust_to."
        )
    if len(est.trees) > MAX_VOTE_TREES:
        raise UnsupportedModelError(
            f"min_vote_share is encoded exactly for forests of up to {MAX_VOTE_TREES} trees; "
            f"this one has {len(est.trees)}."
        )
    return est


def _vote_tree(tree: Tree, n_classes: int) -> Tree:
    """The tree with each node's one-hot vote appended to its value."""
    value = np.asarray(tree.value, dtype=float)
    vote = np.zeros((value.shape[0], n_classes))
    vote[np.arange(value.shape[0]), np.argmax(value[:, :n_classes], axis=1)] = 1.0
    leaves = tuple(
        Leaf(leaf.node, leaf.conditions, np.concatenate([leaf.value, vote[leaf.node]]))
        for leaf in tree.leaves
    )
    return replace(tree, value=np.hstack([value, vote]), leaves=leaves)


def _vote_ensemble(est: TreeEnsemble, n_classes: int) -> TreeEnsemble:
    hit = _VIEWS.get(est)
    if hit is None:
        hit = replace(
            est,
            trees=tuple(_vote_tree(t, n_classes) for t in est.trees),
            n_outputs=2 * n_classes,
            base=np.concatenate([np.asarray(est.base, dtype=float), np.zeros(n_classes)]),
        )
        _VIEWS[est] = hit
    return hit


def with_min_vote_share(compiled: CompiledModel, share: float | None) -> CompiledModel:
    """The same forest whose target region also asks at least ``share`` of its trees to
    vote for the target (module docstring); ``compiled`` unchanged.  Raises
    :class:`UnsupportedModelError` for a model that is not a random forest or extra trees."""
    if share is None:
        return compiled
    est = _check_forest(compiled)
    k, n_trees = votes_needed(share, len(est.trees)), len(est.trees)
    K = compiled.n_classes
    rule = replace(compiled.rule, n_outputs=2 * K, vote_floor=(k - 0.5) / n_trees)
    return replace(compiled, estimator=_vote_ensemble(est, K), rule=rule)


def vote_shares(compiled: CompiledModel, Z: np.ndarray) -> np.ndarray:
    """``(n_rows, n_classes)``: each class's share of the compiled forest's tree votes at
    the raw rows ``Z`` (the same numbers the solvers count)."""
    est = _check_forest(compiled)
    K = compiled.n_classes
    return _vote_ensemble(est, K).forward(compiled.transform_raw(Z))[:, K:]
