"""UFCE's ranking of accepted candidates: eq. 4-6 of the paper over code rows."""

from __future__ import annotations

import numpy as np

__all__ = ["prox_euc", "prox_jac", "score"]


def prox_jac(Z: np.ndarray, x: np.ndarray, discrete: np.ndarray) -> np.ndarray:
    """Eq. 5: ``1 - Jaccard`` of the (feature, category) sets of the discrete features.

    With ``m`` discrete features of which ``c`` differ, the sets share
    ``m - c`` elements out of ``m + c``, so the distance is ``2c / (m + c)``;
    0 without discrete features.
    """
    m = int(discrete.sum())
    if m == 0:
        return np.zeros(len(Z))
    c = (Z[:, discrete] != x[discrete]).sum(axis=1)
    return 2.0 * c / (m + c)


def prox_euc(Z: np.ndarray, x: np.ndarray, numeric: np.ndarray, mad: np.ndarray) -> np.ndarray:
    """Eq. 6: ``sum_i sqrt((z_i - x_i)^2) / MAD_i`` over the numeric features."""
    if not numeric.any():
        return np.zeros(len(Z))
    return (np.abs(Z[:, numeric] - x[numeric]) / mad[numeric]).sum(axis=1)


def score(
    Z: np.ndarray, x: np.ndarray, scaled: np.ndarray, mad: np.ndarray, lam: float
) -> np.ndarray:
    """Eq. 4: ``delta = prox_Jac + lam * prox_Euc`` with prox_Euc (over the
    ``scaled`` features: numeric values, ordinal ranks) mapped to [0, 1) by
    ``e / (1 + e)`` (the paper asks for a normalisation to [0, 1] without
    fixing one; this one does not depend on the other candidates) and
    prox_Jac over the others (binary, categorical)."""
    e = prox_euc(Z, x, scaled, mad)
    return prox_jac(Z, x, ~scaled) + lam * e / (1.0 + e)
