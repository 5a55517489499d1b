"""ElliCE (robust recourse over a Rashomon ellipsoid; ``pip install ellice==0.1.4``) as a
peer of benchmarks/robust.py, for the LR and MLP pipelines of ``cf.models.fit``.

ElliCE searches in the model's input space (the pipeline's encoded columns): the
numeric features it may change are the scaled ``num__*`` columns (ranges and directions
from the schema), every other column stays frozen.  Its answer is decoded back to raw
features (inverse scaling, integers rounded to their resolution, clipped to the schema's
bounds); an answer counts only when the explained model accepts it after decoding.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pandas as pd

import counterfact as cf


def available() -> str | None:
    """None when ElliCE imports, else why not."""
    try:
        import ellice  # noqa: F401
    except ImportError as exc:
        return f"ellice not installed ({exc})"
    return None


def _torch_mlp(clf: Any) -> Any:
    """A scikit-learn MLPClassifier (binary, ReLU) as a torch Sequential of the same weights."""
    import torch
    from torch import nn

    layers: list[Any] = []
    for k, (W, b) in enumerate(zip(clf.coefs_, clf.intercepts_, strict=True)):
        lin = nn.Linear(W.shape[0], W.shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(np.asarray(W.T, dtype=np.float32)))
            lin.bias.copy_(torch.from_numpy(np.asarray(b, dtype=np.float32)))
        layers.append(lin)
        if k < len(clf.coefs_) - 1:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers).eval()


class ElliCEPeer:
    """One fitted ElliCE explainer per (pipeline, robustness_epsilon)."""

    def __init__(self, pipe: Any, train: cf.Dataset, vary: list[str], eps: float) -> None:
        import ellice

        self.pipe, self.schema, self.vary = pipe, train.schema, vary
        self.pre, clf = pipe[:-1], pipe[-1]
        self.columns = [str(c) for c in self.pre.get_feature_names_out()]
        enc = self._encode(train.X)
        codes = np.searchsorted(np.asarray(clf.classes_), train.y.to_numpy())
        data = ellice.Data(
            enc.assign(_y=codes),
            target_column="_y",
            continuous_features=self.columns,
            categorical_features=[],
        )
        model = clf if type(clf).__name__ == "LogisticRegression" else _torch_mlp(clf)
        backend = "sklearn" if model is clf else "pytorch"
        with contextlib.redirect_stdout(io.StringIO()):
            self.explainer = ellice.Explainer(model, data, backend=backend, device="cpu")
        self.eps, self.classes = eps, np.asarray(clf.classes_)
        self.scaler = pipe[0].named_transformers_["num"]

    def _encode(self, X: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(self.pre.transform(X), columns=self.columns, index=X.index)

    def _limits(self) -> tuple[list[str], dict[str, list[float]], dict[str, str]]:
        names, ranges, ways = [], {}, {}
        for name in self.vary:
            f = self.schema[name]
            j = list(self.scaler.feature_names_in_).index(name)
            mu, sd = float(self.scaler.mean_[j]), float(self.scaler.scale_[j])
            col = f"num__{name}"
            names.append(col)
            ranges[col] = [(float(f.lower) - mu) / sd, (float(f.upper) - mu) / sd]
            if f.actionability in ("increasing", "decreasing"):
                ways[col] = "increase" if f.actionability == "increasing" else "decrease"
        return names, ranges, ways

    def _decode(self, q: pd.Series, enc: np.ndarray) -> pd.Series:
        out = q.copy()
        for name in self.vary:
            f = self.schema[name]
            j = list(self.scaler.feature_names_in_).index(name)
            v = enc[self.columns.index(f"num__{name}")] * self.scaler.scale_[j]
            v += self.scaler.mean_[j]
            step = float(f.resolution or 0.0)
            v = round(v / step) * step if step > 0 else v
            out[name] = float(np.clip(v, f.lower, f.upper))
        return out

    def explain(self, X: pd.DataFrame, targets: pd.Series) -> pd.DataFrame:
        """The decoded first answer per row (rows without a valid one left out)."""
        names, ranges, ways = self._limits()
        found = []
        for qid in X.index:
            t = int(np.flatnonzero(self.classes == targets[qid])[0])
            with contextlib.redirect_stdout(io.StringIO()):
                got = self.explainer.generate_counterfactuals(
                    self._encode(X.loc[[qid]]),
                    total_CFs=1,
                    features_to_vary=names,
                    permitted_range=ranges,
                    one_way_change=ways,
                    robustness_epsilon=self.eps,
                    target_class=t,
                    progress_bar=False,
                )
            if got.empty:
                continue
            row = self._decode(X.loc[qid], got.loc[0, self.columns].to_numpy(dtype=float))
            if self.pipe.predict(row.to_frame().T.astype(X.dtypes.to_dict()))[0] == targets[qid]:
                found.append(row.rename(qid))
        return pd.DataFrame(found, columns=X.columns).astype(X.dtypes.to_dict())
