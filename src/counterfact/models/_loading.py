"""Loading the user's model file (an ONNX file, or a pickled or joblib model) with clean errors.

Shared by the command line and the server: every problem with a file the user
named becomes one :class:`~counterfact.exceptions.ValidationError` that says
which file, what is wrong with it and how to fix it, never a parser's
traceback.  An ``.onnx`` file is data (a graph of standard operators), read
and run without executing anything its author wrote, so it needs no
acknowledgement; a pickle or joblib file runs code from the file as it loads,
so it needs ``--allow-unsafe-model-load``.
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
from ._onnx_adapter import OnnxModel

__all__ = ["ONNX_SUFFIX", "UNSAFE_MODEL_HELP", "check_model", "load_model_file"]


#: why loading a model file needs an explicit acknowledgement
UNSAFE_MODEL_HELP = (
    "loading a pickled/joblib model runs arbitrary code from the file: only load files you trust, "
    "and pass --allow-unsafe-model-load to acknowledge it, or export the model to ONNX "
    "(a model.onnx file loads safely, without the flag)"
)
#: the file suffix of ONNX models, loaded without running code from the file
ONNX_SUFFIX = ".onnx"


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
    """A fitted classifier from an ONNX or joblib/pickle file, checked against ``data``.

    Parameters
    ----------
    path : path-like
        An ``.onnx`` file (read as an :class:`~counterfact.models.OnnxModel`),
        or the file written with ``joblib.dump(model, path)`` (or ``pickle``).
    allow_unsafe : bool
        Loading a pickle runs code from the file; it is refused unless the
        caller acknowledges that (the command line's
        ``--allow-unsafe-model-load``).  An ONNX file needs no acknowledgement.
    data : Dataset, optional
        The data the model will be explained on: the model is checked to
        accept its columns (see :func:`check_model`).

    Raises
    ------
    ValidationError
        Not acknowledged, missing file, not a pickle, not a fitted classifier,
        or a model that does not accept ``data``'s columns.
    """
    if Path(path).suffix.lower() == ONNX_SUFFIX:
        model: Any = _load_onnx(_existing_file(path, "--model-file"))
    else:
        model = _load_pickle(path, allow_unsafe)
    if data is not None:
        check_model(model, data, what=f"--model-file {str(path)!r}")
    return model


def _load_onnx(p: Path) -> OnnxModel:
    """An ONNX file as a model (reading it runs nothing from the file)."""
    try:
        return OnnxModel(p)
    except ValidationError as exc:
        raise ValidationError(f"--model-file: {exc}") from None


def _load_pickle(path: str | os.PathLike[str], allow_unsafe: bool) -> Any:
    """A joblib/pickle file's model, once the caller acknowledged that it runs code."""
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
