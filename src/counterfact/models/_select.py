"""Choosing the rows worth explaining.

A counterfactual answers "what would have to change for the model to decide
otherwise?".  For a row the model already assigns to the desired class there
is nothing to change: explaining it either fails (``explain`` marks it
``failed``, "query already predicted as target") or, worse, when the desired
class is left to default to "the other class", shows an approved applicant how
to get rejected.  :func:`rows_to_explain` keeps only the rows that still need
an explanation.

>>> import counterfact as cf
>>> data = cf.datasets.load("german_credit")
>>> train, test = data.split(test_size=0.2, random_state=0)
>>> model = cf.models.fit(train, "lr", random_state=0)
>>> rejected = cf.rows_to_explain(model, test)   # rows not predicted "good credit risk"
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..data import Dataset
from ..exceptions import ValidationError
from ._adapter import as_adapter

__all__ = ["check_label", "desired_class", "rows_to_explain"]


def _favourable(data: Dataset | None) -> Any:
    if data is None:
        return None
    meta = data.metadata or {}
    fav = meta.get("favourable")
    return meta.get("favourable_class") if fav is None else fav


def desired_class(model: Any, *, target: Any = None, data: Dataset | None = None) -> Any:
    """The class counterfactuals should reach, as :func:`rows_to_explain` decides it.

    Parameters
    ----------
    model : classifier
        A fitted classifier with ``classes_``.
    target : label, optional
        The desired class, when given (it must be one of ``model.classes_``).
    data : Dataset, optional
        A dataset whose ``metadata["favourable"]`` names the outcome a person
        would want (every bundled dataset that has one sets it; see
        :func:`counterfact.datasets.favourable`).

    Returns
    -------
    label
        ``target`` if given; else the dataset's favourable class when known;
        else, for a binary model, its last class (``classes_[-1]``, the
        conventional positive label such as ``1`` or ``"yes"``).

    Raises
    ------
    ValidationError
        The model has no ``classes_``, the class is not one of the model's, or
        the model has more than two classes and neither ``target`` nor a
        favourable class is known.
    """
    classes = getattr(model, "classes_", None)
    if classes is None:
        raise ValidationError(
            "rows_to_explain needs a fitted classifier with classes_; got "
            f"{type(model).__name__}. Fit it first."
        )
    classes = np.asarray(classes)
    if len(classes) < 2:
        raise ValidationError(
            f"The model knows a single class {classes.tolist()}: it predicts it for every row, so "
            "no change can flip its decision. Fit it on data with at least two classes."
        )
    chosen = target if target is not None else _favourable(data)
    if chosen is None:
        if len(classes) != 2:
            raise ValidationError(
                f"The model has {len(classes)} classes {classes.tolist()} and the dataset names no "
                "favourable class; pass target= the desired class."
            )
        chosen = classes[-1]
    check_label(
        classes, chosen, what="target" if target is not None else "the dataset's favourable class"
    )
    hits = np.flatnonzero(classes == chosen)
    if hits.size == 0:
        where = "target" if target is not None else "the dataset's favourable class"
        raise ValidationError(
            f"{where} {chosen!r} is not a class of the model; its classes are {classes.tolist()}. "
            "Pass target= one of them."
        )
    return classes[hits[0]].item() if hasattr(classes[hits[0]], "item") else classes[hits[0]]


def _rows_and_data(X: Any, data: Dataset | None) -> tuple[pd.DataFrame, Dataset | None]:
    """The rows of ``X`` (a DataFrame or Dataset), and the dataset that names the
    favourable class (``data``, else ``X`` when it is a Dataset)."""
    if isinstance(X, Dataset):
        return X.X, X if data is None else data
    if isinstance(X, pd.DataFrame):
        return X, data
    raise ValidationError(
        "rows_to_explain needs X as a DataFrame of raw rows or a cf.Dataset. Got "
        f"{type(X).__name__}."
    )


def _warn_assumed(classes: Any, wanted: Any) -> None:
    """Warn that the last of two classes was taken as the one a person wants: with
    nothing naming the favourable class, 1 may as well be the rejection (COMPAS's 1 is
    "reoffended"; UCI German Credit's 2 is the bad risk)."""
    labels = [_py(c) for c in np.asarray(classes)]
    other = next(c for c in labels if c != _py(wanted))
    warnings.warn(
        f"The class a person wants is taken to be {_py(wanted)!r}, the model's last class: "
        "nothing names the favourable class (pass data=, a dataset whose "
        f"metadata['favourable'] names it, or target=). If it is {other!r}, pass "
        f"target={other!r}.",
        UserWarning,
        stacklevel=3,
    )


def check_label(classes: Any, label: Any, *, what: str = "target") -> None:
    """Raise :class:`ValidationError` when ``label`` is a boolean and ``classes`` are not.

    ``True == 1`` in Python and NumPy, so ``target=True`` would silently pick
    the class ``1``: a boolean names a class only when the classes are booleans.
    """
    if not isinstance(label, (bool, np.bool_)):
        return
    arr = np.asarray(classes)
    if arr.dtype == bool or (
        arr.dtype == object and all(isinstance(c, (bool, np.bool_)) for c in arr.tolist())
    ):
        return
    raise ValidationError(
        f"{what} {bool(label)!r} is a boolean, but the model's classes are {arr.tolist()}; a "
        "boolean is not a class label here. Pass one of the classes."
    )


def rows_to_explain(
    model: Any,
    X: pd.DataFrame | Dataset,
    *,
    target: Any = None,
    data: Dataset | None = None,
) -> pd.DataFrame:
    """The rows of ``X`` that the model does not already assign to the desired class.

    Parameters
    ----------
    model : classifier
        A fitted classifier with ``predict`` (or ``predict_proba``) on raw rows
        and ``classes_``, e.g. a scikit-learn pipeline.
    X : DataFrame or Dataset
        Candidate rows (raw columns).  A :class:`~counterfact.Dataset` also
        supplies the favourable class when ``data`` is not given.
    target : label, optional
        The desired class.  Default: the dataset's favourable class
        (``data.metadata["favourable"]``, e.g. "good credit risk" for German Credit),
        else the model's last class for a binary model, with a warning
        (see :func:`desired_class`).
    data : Dataset, optional
        Where to read the favourable class from (the training data, say).

    Returns
    -------
    DataFrame
        A new frame with the selected rows of ``X`` (same index and columns, in order);
        ``X`` is not modified.  With more than two classes, pass it to ``explain`` with
        ``target=desired_class(...)``.

    Raises
    ------
    ValidationError
        See :func:`desired_class`; also when ``X`` is not a DataFrame or Dataset.
    """
    frame, data = _rows_and_data(X, data)
    wanted = desired_class(model, target=target, data=data)
    if target is None and _favourable(data) is None:  # the last class, assumed
        _warn_assumed(model.classes_, wanted)
    if len(frame) == 0:
        return frame.copy()
    cols = list(data.schema.names) if data is not None else list(frame.columns)
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValidationError(
            f"X lacks the columns {missing} of the dataset; pass rows with the training columns."
        )
    pred = np.asarray(as_adapter(model).predict(frame.loc[:, cols]))
    keep = pred != wanted
    return frame.loc[keep].copy()
