"""Information value of each feature (MD-PSO, Shekhar et al. 2023, Appendix eq. 16).

``IV = sum_i (P_i - N_i) * ln(P_i / N_i)`` over the bins of a feature, where
``P_i = n_p^i / n_p`` and ``N_i = n_n^i / n_n`` are the shares of the positive
and negative class that fall in bin ``i``.

Choices where the paper is vague (documented in :class:`~counterfact.MDPSO`):

* eq. (16) as printed multiplies by the ratio ``P_i / N_i``; the logarithm of
  the weight of evidence was lost in typesetting: the thresholds the paper
  quotes from its reference [27] (0.3 "strong", 0.5 "extremely strong") are
  those of the standard IV, which has the logarithm.  We use the standard IV.
* "10 bins after removal of data points that are outliers": numeric features
  with more than ``n_bins`` distinct values are cut into ``n_bins``
  equal-width bins after dropping, for that feature only, the values outside
  Tukey's fences ``[Q1 - 1.5 IQR, Q3 + 1.5 IQR]`` (no removal when the IQR is
  0, which would drop every non-modal value).  Outlier removal only matters
  for equal-width bins, which is why we read the paper that way.  Features
  with at most ``n_bins`` distinct values (and categorical features) get one
  bin per value.
* Empty cells: a bin with no row of one class gets ``smoothing`` (0.5) rows,
  the usual correction that keeps the logarithm finite.
* Multi-class problems: one-vs-rest IV for each class (the query's target
  class is the positive class).  For two classes the IV is symmetric, so both
  columns agree.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import Schema

__all__ = ["bin_feature", "information_value", "iv_from_bins"]


def bin_feature(
    values: np.ndarray, *, n_bins: int = 10, iqr_factor: float = 1.5
) -> tuple[np.ndarray, np.ndarray]:
    """Bin codes of one feature and the mask of rows kept (outliers removed).

    ``values`` are numbers (ordinal features as ranks, categorical features as
    category codes with ``n_bins=0`` meaning "one bin per value").
    Returns ``(codes, kept)``: ``codes`` are bin indices for the kept rows.
    """
    v = np.asarray(values, dtype=float)
    uniq = np.unique(v)
    if n_bins <= 0 or uniq.size <= max(n_bins, 1):
        return np.searchsorted(uniq, v), np.ones(v.size, dtype=bool)
    q1, q3 = np.quantile(v, [0.25, 0.75])
    iqr = q3 - q1
    kept = np.ones(v.size, dtype=bool)
    if iqr > 0:
        kept = (v >= q1 - iqr_factor * iqr) & (v <= q3 + iqr_factor * iqr)
    w = v[kept]
    lo, hi = float(w.min()), float(w.max())
    if hi <= lo:
        return np.zeros(w.size, dtype=int), kept
    codes = np.floor((w - lo) / (hi - lo) * n_bins).astype(int)
    return np.clip(codes, 0, n_bins - 1), kept


def iv_from_bins(codes: np.ndarray, positive: np.ndarray, *, smoothing: float = 0.5) -> float:
    """Information value of one binned feature (``positive``: boolean class mask)."""
    codes = np.asarray(codes, dtype=int)
    pos = np.asarray(positive, dtype=bool)
    n_p, n_n = int(pos.sum()), int((~pos).sum())
    if n_p == 0 or n_n == 0 or codes.size == 0:
        return 0.0
    k = int(codes.max()) + 1
    cp = np.bincount(codes[pos], minlength=k).astype(float)
    cn = np.bincount(codes[~pos], minlength=k).astype(float)
    used = (cp + cn) > 0
    cp, cn = cp[used], cn[used]
    cp[cp == 0] = smoothing
    cn[cn == 0] = smoothing
    p, n = cp / n_p, cn / n_n
    return float(np.sum((p - n) * np.log(p / n)))


def information_value(
    X: pd.DataFrame,
    y: np.ndarray,
    schema: Schema,
    classes: np.ndarray,
    *,
    n_bins: int = 10,
    iqr_factor: float = 1.5,
    smoothing: float = 0.5,
) -> np.ndarray:
    """One-vs-rest information value of every feature for every class.

    Returns an array of shape ``(n_classes, n_features)`` (columns in schema order).
    """
    y = np.asarray(y)
    classes = np.asarray(classes)
    out = np.zeros((len(classes), len(schema)))
    # with two classes the IV is symmetric: compute it once
    todo = [0] if len(classes) == 2 else list(range(len(classes)))
    for j, f in enumerate(schema):
        col = X[f.name]
        if f.is_numeric:
            codes, kept = bin_feature(
                pd.to_numeric(col).to_numpy(dtype=float), n_bins=n_bins, iqr_factor=iqr_factor
            )
        elif f.kind == "ordinal":
            ranks = np.array([f.rank(v) for v in col], dtype=float)
            codes, kept = bin_feature(ranks, n_bins=n_bins, iqr_factor=iqr_factor)
        else:
            lookup = {c: i for i, c in enumerate(f.categories)}  # type: ignore[arg-type]
            codes = np.array([lookup[v] for v in col], dtype=int)
            kept = np.ones(codes.size, dtype=bool)
        for c in todo:
            out[c, j] = iv_from_bins(codes, (y == classes[c])[kept], smoothing=smoothing)
    if len(classes) == 2:
        out[1] = out[0]
    return out
