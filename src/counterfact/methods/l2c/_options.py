"""The training settings: :class:`TrainingOptions`, the ``training`` parameter of :class:`L2C`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..._utils._options import OptionGroup
from ..._utils._validation import Interval, Options, TypeSpec

__all__ = ["TrainingOptions"]


@dataclass(frozen=True)
class TrainingOptions(OptionGroup):
    """Settings of L2C's training, in :meth:`L2C.fit` (the ``training`` parameter).

    The discretisation, the networks, the objective, the optimiser and the early
    stop.  Every field is checked when the object is built; an invalid value
    raises :class:`~counterfact.exceptions.ValidationError` naming the field.
    The defaults are :class:`L2C`'s (see its docstring for where they depart
    from the paper); ``L2C(training={"max_epochs": 20})`` (a dict of fields,
    e.g. from a configuration file) is the same as
    ``L2C(training=TrainingOptions(max_epochs=20))``.
    ``TrainingOptions(learning_rate=1e-4, patience=200, validity_hinge=None,
    entropy=0)`` trains as the paper.

    Parameters
    ----------
    n_bins : int
        Maximum quantile bins per numeric feature (the paper: 4); at least 2, since
        one bin leaves a numeric feature no value to move to.
    min_bin_count : int, optional
        Minimum training rows per bin (the paper: 100); ``None`` uses 100, or
        ``n_rows // (2 * n_bins)`` when that is smaller.
    representative : {"midpoint", "median"}
        Value a changed numeric feature takes in its new bin.
    hidden_size : int
        Units per hidden layer of G and S (the paper: 50).
    alpha : float
        Weight of the sparsity term ``||pi||_1`` (the paper: 0.001).
    tau : float
        Temperature of the Gumbel-softmax and binary-concrete relaxations (0.2).
    learning_rate : float
        Adam's learning rate (the paper: 1e-4; 1e-3 here).
    max_epochs : int
        Epoch cap (the paper trains 200 epochs).
    batch_size : int or "auto"
        Training rows per step; ``"auto"``: grows with the training set
        (``L2C.batch_size_`` holds the value used).
    validity_hinge : float or None
        Probability of the desired class from which a sample's validity loss is
        zero (a hinge on eq. 3's cross-entropy); ``None``: the paper's plain
        cross-entropy.
    entropy : float
        Weight of the diversity term (G's mean per-feature entropy, subtracted
        from the loss); 0: the paper's objective.
    patience : int
        Training stops after this many epochs in which neither the validation
        validity nor the validation yield rose by more than 0.005.
    validation_fraction : float
        Share of the training rows held out for early stopping (0: use the
        training rows).
    gradient : {"auto", "pathwise", "score_function"}
        ``auto``: pathwise when the model can be mirrored, score-function
        otherwise.
    n_score_samples : int
        Samples per row for the score-function estimator (and its baseline).
    straight_through : bool
        Discrete forward pass with relaxed gradients (pathwise only).
    """

    n_bins: int = 4
    min_bin_count: int | None = None
    representative: str = "midpoint"
    hidden_size: int = 50
    alpha: float = 0.001
    tau: float = 0.2
    learning_rate: float = 1e-3
    max_epochs: int = 200
    batch_size: int | str = "auto"
    validity_hinge: float | None = 0.6
    entropy: float = 0.1
    patience: int = 10
    validation_fraction: float = 0.2
    gradient: str = "auto"
    n_score_samples: int = 8
    straight_through: bool = True

    _constraints: ClassVar[dict[str, list[Any]]] = {
        "n_bins": [Interval(int, 2, None)],
        "min_bin_count": [None, Interval(int, 1, None)],
        "representative": [Options(("midpoint", "median"))],
        "hidden_size": [Interval(int, 1, None)],
        "alpha": [Interval(float, 0, None)],
        "tau": [Interval(float, 0, None, closed="neither")],
        "learning_rate": [Interval(float, 0, None, closed="neither")],
        "max_epochs": [Interval(int, 1, None)],
        "batch_size": [Interval(int, 1, None), Options(("auto",))],
        "validity_hinge": [None, Interval(float, 0, 1, closed="neither")],
        "entropy": [Interval(float, 0, None)],
        "patience": [Interval(int, 1, None)],
        "validation_fraction": [Interval(float, 0, 1, closed="left")],
        "gradient": [Options(("auto", "pathwise", "score_function"))],
        "n_score_samples": [Interval(int, 2, None)],
        "straight_through": [TypeSpec((bool,), "a bool")],
    }
