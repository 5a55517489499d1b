"""The trees' votes of a fitted forest, read from its own trees.

Each tree of a random forest or an extra-trees ensemble votes for the largest
class of the leaf a row reaches (the first on ties, as the tree's own
``predict``).  :func:`tree_votes` counts them per class with scikit-learn's own
``apply``; the checker of ``Requirements(min_vote_share=...)`` reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import UnsupportedModelError

__all__ = ["FOREST_CLASSES", "forest_of", "tree_votes"]

#: the estimators the vote-share rule applies to (the compiled model's ``estimator_class``)
FOREST_CLASSES = ("RandomForestClassifier", "ExtraTreesClassifier")


def forest_of(
    model: Any,
    owner: str = "the model",
    asked: str = "min_vote_share",
    instead: str = "Use min_probability or robust_to for other models.",
) -> Any:
    """The fitted forest of ``model`` (a forest, or a scikit-learn pipeline ending in
    one); raises :class:`UnsupportedModelError` for any other model, naming the setting
    (``asked``) as the caller's user wrote it and what to use ``instead``."""
    from sklearn.pipeline import Pipeline

    inner = getattr(model, "model", model)  # a ModelAdapter
    final = inner.steps[-1][1] if isinstance(inner, Pipeline) else inner
    if type(final).__name__ not in FOREST_CLASSES or not hasattr(final, "estimators_"):
        raise UnsupportedModelError(
            f"{asked} counts the votes of a forest's trees; {owner} is "
            f"{type(final).__name__}, not a fitted RandomForestClassifier or "
            f"ExtraTreesClassifier (alone or at the end of a pipeline). {instead}"
        )
    return final


def tree_votes(adapter: Any, rows: pd.DataFrame) -> np.ndarray:
    """``(n_rows, n_classes)``: how many trees vote for each class (columns in the
    model's ``classes_`` order) on ``rows``; ``adapter`` is a
    :class:`~counterfact.models.ModelAdapter` over a forest (:func:`forest_of`)."""
    from sklearn.pipeline import Pipeline

    forest = forest_of(adapter)
    if len(rows) == 0:
        return np.zeros((0, len(forest.classes_)), dtype=int)
    X = adapter._frame(rows)
    model = adapter.model
    Xt = model[:-1].transform(X) if isinstance(model, Pipeline) and len(model.steps) > 1 else X
    leaves = forest.apply(Xt)
    votes = np.zeros((len(rows), len(forest.classes_)), dtype=int)
    at = np.arange(len(rows))
    for t, tree in enumerate(forest.estimators_):
        value = np.asarray(tree.tree_.value)[:, 0, :]
        np.add.at(votes, (at, np.argmax(value[leaves[:, t]], axis=1)), 1)
    return votes
