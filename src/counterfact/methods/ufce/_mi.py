"""Mutual information between feature pairs (UFCE's CMI, Algorithm 2, Sec. 4.2).

The paper scores every pair with scikit-learn's ``mutual_info_classif`` (the
second feature used as a class label, whatever its type) and keys a dict by
the score, so pairs with equal scores overwrite each other.  Here each pair
is scored with the estimator that fits the second feature's type
(``mutual_info_classif`` for a discrete one, ``mutual_info_regression`` for
a continuous one), ``discrete_features`` tells the estimator whether the
first feature is discrete, and ties are kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import Schema

__all__ = ["discrete_mask", "mutual_information", "rank_pairs"]

#: integer features with at most this many distinct values count as discrete for MI
MAX_DISCRETE_LEVELS = 10


def discrete_mask(R: np.ndarray, schema: Schema) -> np.ndarray:
    """Which features are discrete for the MI estimators.

    Binary, categorical and ordinal features are discrete; so are integer
    features with at most ``MAX_DISCRETE_LEVELS`` distinct observed values (a
    nearest-neighbour entropy estimate is meaningless on a handful of ties).
    ``R`` holds raw numeric values and category codes (see ``_space``).
    """
    out = np.zeros(len(schema), dtype=bool)
    for j, f in enumerate(schema):
        if not f.is_numeric:
            out[j] = True
        elif f.kind == "integer":
            out[j] = np.unique(R[:, j]).size <= MAX_DISCRETE_LEVELS
    return out


def mutual_information(
    R: np.ndarray,
    schema: Schema,
    *,
    random_state: int,
    max_rows: int = 2000,
    n_neighbors: int = 3,
) -> pd.DataFrame:
    """Symmetric matrix of pairwise mutual information (nats).

    Parameters
    ----------
    R : ndarray of shape (n, d)
        Raw numeric values and category codes of the training rows.
    schema : Schema
    random_state : int
        Seeds the row subsample and the estimators' jitter.
    max_rows : int
        At most this many rows (a seeded subsample) feed the estimators.
    n_neighbors : int
        ``n_neighbors`` of the Kraskov estimator.

    Returns
    -------
    DataFrame
        ``mi.loc[a, b]`` for feature names ``a != b``; the diagonal is NaN.
    """
    rng = np.random.default_rng(random_state)
    n, d = R.shape
    if n > max_rows:
        R = R[np.sort(rng.choice(n, size=max_rows, replace=False))]
    disc = discrete_mask(R, schema)
    names = schema.names
    M = np.full((d, d), np.nan)
    k = max(1, min(n_neighbors, len(R) - 1))
    for j in range(d):
        y = R[:, j]
        if np.unique(y).size < 2:
            M[:, j] = M[j, :] = 0.0
            continue
        for i in range(j):
            x = R[:, [i]]
            if np.unique(x[:, 0]).size < 2:
                M[i, j] = M[j, i] = 0.0
                continue
            seed = int(rng.integers(0, 2**31 - 1))
            s = _pair_mi(x, y, bool(disc[i]), bool(disc[j]), k, seed)
            M[i, j] = M[j, i] = max(0.0, float(s[0]))
    np.fill_diagonal(M, np.nan)
    return pd.DataFrame(M, index=names, columns=names)


def rank_pairs(mi: pd.DataFrame) -> list[tuple[str, str, float]]:
    """Unordered feature pairs by decreasing MI (ties in schema order)."""
    names = list(mi.index)
    pairs = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            pairs.append((names[a], names[b], float(mi.iat[a, b])))
    order = sorted(range(len(pairs)), key=lambda t: (-pairs[t][2], t))
    return [pairs[t] for t in order]


def _pair_mi(
    x: np.ndarray, y: np.ndarray, x_discrete: bool, y_discrete: bool, k: int, seed: int
) -> np.ndarray:
    """scikit-learn's estimate of the mutual information of one column ``x`` and
    ``y``: a classification estimate when ``y`` is discrete, else a regression one."""
    from sklearn.feature_selection import mutual_info_classif, mutual_info_regression

    if y_discrete:
        return mutual_info_classif(  # type: ignore[no-any-return]
            x,
            y.astype(np.int64),
            discrete_features=[x_discrete],
            n_neighbors=k,
            random_state=seed,
        )
    return mutual_info_regression(  # type: ignore[no-any-return]
        x, y, discrete_features=[x_discrete], n_neighbors=k, random_state=seed
    )
