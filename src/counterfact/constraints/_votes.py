"""The vote-share rule for forests: how many trees must vote for the target.

A random forest (or extra-trees ensemble) is one draw of a randomised training
procedure: retrain it and its trees change.  Forel, Parmentier & Vidal ("Don't
explain noise: robust counterfactuals for randomized ensembles", CPAIOR 2024)
tie the chance that a retrained forest still accepts an answer to the share of
the trees that vote for the target:

* let ``p(x)`` be the probability that one tree grown by the training procedure
  votes for the target at ``x`` (its leaf's largest class);
* a retrained forest of ``T`` trees that decides by majority accepts ``x`` with
  probability ``g_T(p) = P[Binomial(T, p) >= floor(T / 2) + 1]``, increasing in ``p``;
* so a retrained forest accepts ``x`` with probability at least ``1 - alpha`` iff
  ``p(x) >= tau = g_T^{-1}(1 - alpha)``;
* the fitted forest's own vote share (the trees voting for the target over ``T``)
  estimates ``p(x)``: the rule asks it to be at least ``tau``
  (:func:`vote_share_for`), i.e. at least :func:`votes_needed` trees.

The rule is exact on the fitted forest's trees (the solvers count the votes);
the probability it stands for is the paper's model of retraining (trees drawn
independently), not a guarantee for any particular retrain.
"""

from __future__ import annotations

import math
from typing import Any

from .._utils._validation import is_number, is_whole
from ..exceptions import ValidationError

__all__ = ["vote_share_for", "votes_needed"]

#: the bisection's tolerance on ``tau`` (far below ``1 / T`` for any forest)
_TOL = 1e-12


def _check_trees(n_trees: Any) -> int:
    if not is_whole(n_trees) or n_trees < 1:
        raise ValidationError(
            f"n_trees must be an int >= 1 (the number of trees in the forest). Got {n_trees!r}."
        )
    return int(n_trees)


def _check_alpha(alpha: Any) -> float:
    if not is_number(alpha) or not math.isfinite(alpha) or not 0.0 < float(alpha) < 0.5:
        raise ValidationError(
            "alpha must be a number in (0, 0.5): the chance a retrained forest may reject the "
            f"answer (0.05 asks for 95 %). Got {alpha!r}."
        )
    return float(alpha)


def _accepts(n_trees: int, p: float) -> float:
    """``g_T(p)``: the chance that a majority of ``n_trees`` independent trees, each
    voting for the target with probability ``p``, vote for it."""
    from scipy import stats

    return float(stats.binom.sf(n_trees // 2, n_trees, p))


def vote_share_for(n_trees: int, alpha: float = 0.05) -> float:
    """The least share of the trees that must vote for the target so that a retrained
    forest of ``n_trees`` trees still accepts the answer with probability at least
    ``1 - alpha`` (Forel, Parmentier & Vidal's threshold; the module docstring gives the
    derivation).

    Parameters
    ----------
    n_trees : int
        The number of trees of the forest (``n_estimators``).
    alpha : float
        In ``(0, 0.5)``: the chance a retrained forest may reject the answer.

    Returns
    -------
    float
        ``tau`` in ``(0.5, 1]``; pass it as ``cf.Requirements(min_vote_share=tau)``.

    Examples
    --------
    >>> import counterfact as cf
    >>> round(cf.vote_share_for(100, 0.05), 3)
    0.586
    """
    n, a = _check_trees(n_trees), _check_alpha(alpha)
    lo, hi = 0.5, 1.0
    if _accepts(n, hi) < 1.0 - a:
        return 1.0
    while hi - lo > _TOL:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _accepts(n, mid) < 1.0 - a else (lo, mid)
    return hi


def votes_needed(share: float, n_trees: int) -> int:
    """The least number of the ``n_trees`` trees whose votes reach ``share`` of them
    (``ceil(share * n_trees)``, at least 1; a share that is a whole number of trees up
    to 1e-9 counts as that number)."""
    n = _check_trees(n_trees)
    return max(1, min(n, math.ceil(float(share) * n - 1e-9)))
