"""Loading the user's model file (a pickled or joblib model) with clean errors.

Shared by the command line and the server: every problem with a file the user
named becomes one :class:`~counterfact.exceptions.ValidationError` that says
which file, what is wrong with it and how to fix it, never a parser's
traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..data import Dataset
from ..data._loading import _existing_file
from ..exceptions import ValidationError
from ._adapter import as_adapter
from ._adapter import check_model as _check_against

__all__ = ["UNSAFE_MODEL_HELP", "check_model", "load_model_file"]


#: why loading a model file needs an explicit acknowledgement
UNSAFE_MODEL_HELP = (
    "loading a pickled/joblib model runs arbitrary code from the file: only load files you trust, "
    "and pass --allow-unsafe-model-load to acknowledge it"
)


def _not_a_model(p: Path, exc: BaseException) -> ValidationError:
    if isinstance(exc, ModuleNotFoundError):
        return ValidationError(
            f"--model-file {str(p)!r} needs the Python package {exc.name!r} to load; install it "
            "(the model was saved with a library that is missing here)."
        )
    detail = " ".join(str(exc).split())[:200]
    return ValidationError(
        f"--model-file {str(p)!r} is not a joblib/pickle file of a fitted model "
        f"({type(exc).__name__}: {detail}); save the model with joblib.dump(model, path)."
    )


def load_model_file(
    path: str | os.PathLike[str], *, allow_unsafe: bool, data: Dataset | None = None
) -> Any:
    """A fitted classifier from a joblib/pickle file, checked against ``data``.

    Parameters
    ----------
    path : path-like
        The file written with ``joblib.dump(model, path)`` (or ``pickle``).
    allow_unsafe : bool
        Loading a pickle runs code from the file; it is refused unless the
        caller acknowledges that (the command line's
        ``--allow-unsafe-model-load``).
    data : Dataset, optional
        The data the model will be explained on: the model is checked to
        accept its columns (see :func:`check_model`).

    Raises
    ------
    ValidationError
        Not acknowledged, missing file, not a pickle, not a fitted classifier,
        or a model that does not accept ``data``'s columns.
    """
    if not allow_unsafe:
        raise ValidationError(f"--model-file: {UNSAFE_MODEL_HELP}.")
    p = _existing_file(path, "--model-file")
    if p.stat().st_size == 0:
        raise ValidationError(
            f"--model-file {str(p)!r} is empty; save the model with joblib.dump(model, path)."
        )
    import joblib

    try:
        model = joblib.load(p)
    except MemoryError:
        raise
    except Exception as exc:  # a pickle can fail in any way: every failure means "not a model file"
        raise _not_a_model(p, exc) from None
    if data is not None:
        check_model(model, data, what=f"--model-file {str(p)!r}")
    return model


def check_model(model: Any, data: Dataset, *, what: str = "the model") -> None:
    """Check that ``model`` is a fitted classifier that accepts ``data``'s rows.

    Checks ``predict_proba`` and ``classes_``, then the same checks as a
    method's ``fit`` (:func:`counterfact.models._adapter.check_model`): the
    column names the model was fitted on against the data's features, a
    prediction on a few rows, and the data's classes among the model's.

    Raises
    ------
    ValidationError
        Naming the mismatch (missing or extra columns, the model's error on a
        few rows, classes the model does not know).
    """
    if not hasattr(model, "predict_proba") or not hasattr(model, "classes_"):
        raise ValidationError(
            f"{what} holds a {type(model).__name__}, not a fitted classifier with predict_proba "
            "and classes_ (e.g. a fitted scikit-learn classifier or Pipeline)."
        )

    _check_against(as_adapter(model, data.schema), data, owner=what)
