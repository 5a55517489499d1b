"""Saving and loading a trained L2C generator (format ``counterfact.l2c``, version 3).

One file written with ``torch.save`` and read with ``torch.load(weights_only=True)``:
a dict of plain values (strings of JSON, tensors), no pickled code.  It holds
G's and S's weights, the parameters (the training options as a dict of
their fields), the schema, the discretisation (bins and
representatives), the model's classes, the training history and two
fingerprints that :func:`load` checks:

* **the model**: its probabilities on up to 16 training rows (saved with
  the file); the model given to :func:`load` must reproduce them (to 1e-9);
* **the training data**: its row count and a hash of its rows and labels
  (:func:`pandas.util.hash_pandas_object`); the data given to :func:`load`
  must be the same (the discretisation, the fallback and the pipeline's
  diversity steps are computed from it).

The model itself is not saved: pickling it would make the file executable
code.  A file of another format version is refused (retrain and save again).

:func:`save` and :func:`load` take the L2C object (and class) typed ``Any``:
the class imports this module, so this module does not import it back.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from io import StringIO
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from ..._utils._validation import check_writable
from ..._utils._values import _py
from ...data import Dataset
from ...exceptions import ValidationError
from ...schema import Schema
from ._networks import build_mlp
from ._options import TrainingOptions
from ._representation import Representation

FORMAT = "counterfact.l2c"
VERSION = 3
_N_FINGERPRINT_ROWS = 16

T = TypeVar("T")


def data_fingerprint(data: Dataset) -> str:
    """Row count and a hash of the rows and labels of ``data``."""
    frame = data.frame.reset_index(drop=True)
    h = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    digest = hashlib.sha256(np.ascontiguousarray(h).tobytes()).hexdigest()
    return f"{len(frame)}:{digest}"


def _fingerprint_rows(data: Dataset) -> pd.DataFrame:
    X = data.X.reset_index(drop=True)
    idx = np.unique(np.linspace(0, len(X) - 1, min(len(X), _N_FINGERPRINT_ROWS)).astype(int))
    return X.iloc[idx].reset_index(drop=True)


def save(method: Any, path: str | os.PathLike[str]) -> None:
    """Write ``method`` (a fitted L2C) to ``path``."""
    method._check_fitted()
    check_writable(path, "path")  # a bad path is said in words, before torch writes
    torch = import_optional("torch", purpose="L2C")
    data = getattr(method, "data_", None)
    if data is None:
        raise ValidationError(
            "This L2C has no training data attached (data_); fit it (or load it with data=) "
            "before saving."
        )
    rows = _fingerprint_rows(data)
    proba = method.model_.predict_proba(rows)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "params": json.dumps(_plain_params(method)),
        "schema": json.dumps(method.schema_.to_dict()),
        "representation": json.dumps(method.representation_.to_dict()),
        "classes": json.dumps([_py(c) for c in method.classes_]),
        "gradient": method.gradient_,
        "history": json.dumps(method.history_),
        "training_time": float(getattr(method, "training_time_", 0.0)),
        "data_fingerprint": data_fingerprint(data),
        "model_rows": rows.to_json(orient="split", index=False),
        "model_proba": json.dumps(np.asarray(proba, dtype=float).tolist()),
        "generator": {k: v.detach().cpu() for k, v in method.generator_.state_dict().items()},
        "selector": {k: v.detach().cpu() for k, v in method.selector_.state_dict().items()},
    }
    torch.save(payload, os.fspath(path))


def load(cls: Callable[..., T], path: str | os.PathLike[str], model: Any, data: Any) -> T:
    """Read a file written by :func:`save` and check ``model`` and ``data`` against it.

    ``cls`` is the method class (called with the saved parameters); the object it
    returns gets the fitted attributes, then its ``_restore`` finishes the job.
    """
    torch = import_optional("torch", purpose="L2C")
    where = os.fspath(path)
    payload = _read(torch, where)
    _check_data(payload, data, where)
    method: Any = cls(**_method_params(json.loads(payload["params"])))
    method._validate_params()
    method._attach(model, data)  # what fit sets for every method: schema, data, model, classes, ...
    method.representation_ = Representation.from_dict(
        method.schema_, json.loads(payload["representation"])
    )
    _check_model(payload, method.model_, method.schema_, where)
    _load_networks(torch, payload, method, where)
    method.gradient_ = str(payload["gradient"])
    method.mirror_kind_ = None
    method.history_ = json.loads(payload["history"])
    method.n_epochs_ = len(method.history_)
    method.training_time_ = float(payload.get("training_time", 0.0))
    method._restore(torch)
    return method


def _plain_params(method: Any) -> dict[str, Any]:
    """The method's parameters as JSON values: the training options as a dict."""
    params = dict(method.get_params())
    params["training"] = method._training_options().to_dict()
    return params


def _method_params(params: dict[str, Any]) -> dict[str, Any]:
    """The saved parameters as the constructor takes them: the training options as
    :class:`TrainingOptions` (a JSON list of fields back to its tuple)."""
    return {**params, "training": TrainingOptions(**params["training"])}


def _read(torch: Any, where: str) -> dict[str, Any]:
    """The payload of the file at ``where``: an L2C file of this format version."""
    if not os.path.exists(where):
        raise ValidationError(f"No L2C file at {where!r}.")
    try:
        payload = torch.load(where, weights_only=True, map_location="cpu")
    except Exception as exc:  # torch's text advises weights_only=False: not repeated
        raise ValidationError(
            f"Could not read an L2C file from {where!r} ({type(exc).__name__}); it is not a "
            "file L2C.save wrote, or it is damaged. L2C files hold weights only and are never "
            "read as pickled code."
        ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValidationError(f"{where!r} is not an L2C file saved by counterfact (L2C.save).")
    version = payload.get("version")
    if version != VERSION:
        raise ValidationError(
            f"{where!r} has L2C file format version {version!r}; this counterfact reads "
            f"version {VERSION}. Fit the L2C again with this version and save it."
        )
    return payload


def _check_data(payload: dict[str, Any], data: Any, where: str) -> None:
    """``data`` is the training Dataset of the saved generator: same schema, same rows
    and labels."""
    if not isinstance(data, Dataset):
        raise ValidationError(
            "L2C.load needs the training Dataset the generator was fitted with as data. "
            f"Got {type(data).__name__}."
        )
    schema = Schema.from_dict(json.loads(payload["schema"]))
    if data.schema.to_dict() != schema.to_dict():
        saved = {f.name: f.kind for f in schema}
        given = {f.name: f.kind for f in data.schema}
        diff = sorted(set(saved.items()) ^ set(given.items()))
        detail = (
            f" (differing features: {diff[:6]})"
            if diff
            else " (same features, other domains or actionability)"
        )
        raise ValidationError(
            f"The data's schema differs from the schema the L2C in {where!r} was trained "
            f"on{detail}."
        )
    if data_fingerprint(data) != payload["data_fingerprint"]:
        raise ValidationError(
            f"The data differs from the training data the L2C in {where!r} was fitted with "
            "(other rows, the same rows in another order, or other labels); pass the same "
            "training Dataset, its rows in the same order."
        )


def _check_model(payload: dict[str, Any], adapter: Any, schema: Schema, where: str) -> None:
    """The model is the saved generator's: the same classes, the same probabilities on
    the saved rows."""
    saved_classes = json.loads(payload["classes"])
    if [_py(c) for c in adapter.classes_] != saved_classes:
        raise ValidationError(
            f"The model's classes {adapter.classes_.tolist()} differ from the saved "
            f"generator's {saved_classes}; load it with the model it was trained for."
        )
    rows = pd.read_json(StringIO(payload["model_rows"]), orient="split")
    rows = schema.coerce(rows.loc[:, schema.names])
    want = np.asarray(json.loads(payload["model_proba"]), dtype=float)
    try:
        got = adapter.predict_proba(rows)
    except Exception as exc:
        raise ValidationError(
            f"The model cannot score the training rows of the L2C in {where!r}: {exc}"
        ) from exc
    if got.shape != want.shape or not np.allclose(got, want, rtol=0.0, atol=1e-9):
        raise ValidationError(
            f"The model is not the one the L2C in {where!r} was trained for: its "
            "probabilities on saved training rows differ. Load it with that model, or fit "
            "a new L2C."
        )


def _load_networks(torch: Any, payload: dict[str, Any], method: Any, where: str) -> None:
    """Build G and S on the method's device and load the saved weights into them."""
    device = method._device(torch)
    method.device_ = str(device)
    rep = method.representation_
    d_in = rep.n_columns + len(json.loads(payload["classes"]))
    gen = torch.Generator()
    hidden = method._training_options().hidden_size
    method.generator_ = build_mlp(torch, d_in, rep.n_columns, hidden, gen, device)
    method.selector_ = build_mlp(torch, d_in, rep.n_features, hidden, gen, device)
    try:
        method.generator_.load_state_dict(payload["generator"])
        method.selector_.load_state_dict(payload["selector"])
    except (RuntimeError, KeyError) as exc:
        raise ValidationError(
            f"The weights in {where!r} do not fit the saved representation: {exc}"
        ) from exc
    method.generator_.eval()
    method.selector_.eval()
