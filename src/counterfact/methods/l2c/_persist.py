"""Saving and loading a trained L2C generator (format ``counterfact.l2c``, version 2).

One file written with ``torch.save`` and read with ``torch.load(weights_only=True)``:
a dict of plain values (strings of JSON, tensors), no pickled code.  It holds
G's and S's weights, the parameters, the schema, the discretisation (bins and
representatives), the model's classes, the training history and two
fingerprints that :func:`load` checks:

* **the model**: its probabilities on up to 16 training rows (saved with
  the file); the model given to :func:`load` must reproduce them (to 1e-9);
* **the training data**: its row count and a hash of its rows and labels
  (:func:`pandas.util.hash_pandas_object`); the data given to :func:`load`
  must be the same (the discretisation, the fallback and the base class's
  diversity steps are computed from it).

The model itself is not saved: pickling it would make the file executable
code.  A file of another format version is refused (retrain and save again).
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..._utils._deps import import_optional
from ..._utils._values import _py
from ...data import Dataset
from ...exceptions import ValidationError
from ...models import as_adapter
from ...schema import Schema
from ._representation import Representation

if TYPE_CHECKING:  # pragma: no cover
    from ._method import L2C

FORMAT = "counterfact.l2c"
VERSION = 2
_N_FINGERPRINT_ROWS = 16


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


def save(method: L2C, path: str | os.PathLike[str]) -> None:
    """Write ``method`` (fitted) to ``path``."""
    method._check_fitted()
    torch = import_optional("torch", purpose="L2C")
    data = getattr(method, "data_", None)
    if data is None:
        raise ValidationError("This L2C has no training data attached (data_); fit it (or load it with data=) before saving.")
    rows = _fingerprint_rows(data)
    proba = method.model_.predict_proba(rows)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "params": json.dumps(method.get_params()),
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


def load(cls: type[L2C], path: str | os.PathLike[str], model: Any, data: Any) -> L2C:
    """Read a file written by :func:`save` and check ``model`` and ``data`` against it."""
    from ._networks import build_mlp

    torch = import_optional("torch", purpose="L2C")
    where = os.fspath(path)
    if not os.path.exists(where):
        raise ValidationError(f"No L2C file at {where!r}.")
    try:
        payload = torch.load(where, weights_only=True, map_location="cpu")
    except Exception as exc:
        raise ValidationError(f"Could not read an L2C file from {where!r}: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ValidationError(f"{where!r} is not an L2C file saved by counterfact (L2C.save).")
    version = payload.get("version")
    if version != VERSION:
        raise ValidationError(
            f"{where!r} has L2C file format version {version!r}; this counterfact reads version {VERSION}. "
            "Fit the L2C again with this version and save it."
        )
    if not isinstance(data, Dataset):
        raise ValidationError(
            f"L2C.load needs the training Dataset the generator was fitted with as data. Got {type(data).__name__}."
        )
    schema = Schema.from_dict(json.loads(payload["schema"]))
    if data.schema.to_dict() != schema.to_dict():
        saved = {f.name: f.kind for f in schema}
        given = {f.name: f.kind for f in data.schema}
        diff = sorted(set(saved.items()) ^ set(given.items()))
        detail = f" (differing features: {diff[:6]})" if diff else " (same features, other domains or actionability)"
        raise ValidationError(f"The data's schema differs from the schema the L2C in {where!r} was trained on{detail}.")
    if data_fingerprint(data) != payload["data_fingerprint"]:
        raise ValidationError(
            f"The data differs from the training data the L2C in {where!r} was fitted with (other rows or labels); "
            "pass the same training Dataset."
        )
    params = json.loads(payload["params"])
    self = cls(**params)
    self._validate_params()
    self.schema_ = data.schema
    self.data_ = data
    self.representation_ = Representation.from_dict(self.schema_, json.loads(payload["representation"]))
    self.model_ = as_adapter(model, self.schema_)
    self.classes_ = self.model_.classes_
    saved_classes = json.loads(payload["classes"])
    if [_py(c) for c in self.classes_] != saved_classes:
        raise ValidationError(
            f"The model's classes {self.classes_.tolist()} differ from the saved generator's {saved_classes}; "
            "load it with the model it was trained for."
        )
    rows = pd.read_json(_StringIO(payload["model_rows"]), orient="split")
    rows = self.schema_.coerce(rows.loc[:, self.schema_.names])
    want = np.asarray(json.loads(payload["model_proba"]), dtype=float)
    try:
        got = self.model_.predict_proba(rows)
    except Exception as exc:
        raise ValidationError(f"The model cannot score the training rows of the L2C in {where!r}: {exc}") from exc
    if got.shape != want.shape or not np.allclose(got, want, rtol=0.0, atol=1e-9):
        raise ValidationError(
            f"The model is not the one the L2C in {where!r} was trained for: its probabilities on saved training "
            "rows differ. Load it with that model, or fit a new L2C."
        )
    device = self._device(torch)
    self.device_ = str(device)
    d_in = self.representation_.n_columns + len(saved_classes)
    gen = torch.Generator()
    self.generator_ = build_mlp(torch, d_in, self.representation_.n_columns, self.hidden_size, gen, device)
    self.selector_ = build_mlp(torch, d_in, self.representation_.n_features, self.hidden_size, gen, device)
    try:
        self.generator_.load_state_dict(payload["generator"])
        self.selector_.load_state_dict(payload["selector"])
    except (RuntimeError, KeyError) as exc:
        raise ValidationError(f"The weights in {where!r} do not fit the saved representation: {exc}") from exc
    self.generator_.eval()
    self.selector_.eval()
    self.gradient_ = str(payload["gradient"])
    self.mirror_kind_ = None
    self.history_ = json.loads(payload["history"])
    self.n_epochs_ = len(self.history_)
    self.training_time_ = float(payload.get("training_time", 0.0))
    self._restore(torch)
    return self


def _StringIO(text: str) -> Any:
    from io import StringIO

    return StringIO(text)
