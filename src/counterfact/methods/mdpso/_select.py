"""Choosing k counterfactuals from the final swarm (Section V-B2).

``kmeans`` (the paper's choice): k-means over the valid particles, one per
cluster; ``topk``: the k lowest objective values; ``pbest``: the particles'
personal bests, best first.  Each returns an order over the pool: the chosen
ones first (lowest objective first), then the rest by objective, so that the
caller's verification can fall back on them.
"""

from __future__ import annotations

import numpy as np

from ._search import SwarmResult

__all__ = ["kmeans", "n_handed_on", "pool", "select"]


def n_handed_on(k: int) -> int:
    """How many candidates of a query go on to verification (the chosen ``k`` first)."""
    return 4 * int(k) + 10


def _distinct(X: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``X`` without repeats (lowest cost kept), sorted by cost."""
    if X.shape[0] == 0:
        return X, c
    order = np.argsort(c, kind="stable")
    X, c = X[order], c[order]
    key = np.round(X, 12) + 0.0  # + 0.0 turns -0.0 into 0.0
    _, first = np.unique(key, axis=0, return_index=True)
    keep = np.sort(first)
    return X[keep], c[keep]


def pool(res: SwarmResult, how: str, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Distinct valid candidates ``(X, cost)`` sorted by cost: the final positions
    and the personal bests (``pbest``: personal bests only).  When these hold
    fewer than ``n_handed_on(k)`` distinct rows (the candidates that go on to
    verification; ``pbest``: fewer than ``k``), every valid position the
    swarm visited joins them: a
    swarm that has converged holds few distinct valid rows, and after the
    verified sparsification several of them often become one."""
    if how == "pbest":
        X, c = res.pbest_X[res.pbest_valid], res.pbest_cost[res.pbest_valid]
    else:
        X = np.vstack([res.X[res.valid], res.pbest_X[res.pbest_valid]])
        c = np.concatenate([res.cost[res.valid], res.pbest_cost[res.pbest_valid]])
    X, c = _distinct(X, c)
    need = k if how == "pbest" else n_handed_on(k)
    if X.shape[0] < need and res.archive_X.shape[0]:
        X, c = _distinct(np.vstack([X, res.archive_X]), np.concatenate([c, res.archive_cost]))
    return X, c


def kmeans(X: np.ndarray, k: int, rng: np.random.Generator, n_iter: int = 50) -> np.ndarray:
    """Labels of a seeded k-means (k-means++ start, Lloyd iterations)."""
    n = X.shape[0]
    centres = np.empty((k, X.shape[1]))
    centres[0] = X[rng.integers(n)]
    d2 = ((X - centres[0]) ** 2).sum(1)
    for j in range(1, k):
        total = d2.sum()
        idx = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
        centres[j] = X[idx]
        d2 = np.minimum(d2, ((X - centres[j]) ** 2).sum(1))
    labels = np.full(n, -1)
    for _ in range(n_iter):
        dist = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(2)
        new = np.argmin(dist, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = labels == j
            if members.any():
                centres[j] = X[members].mean(0)
    return labels


def select(
    X: np.ndarray, cost: np.ndarray, k: int, how: str, rng: np.random.Generator
) -> np.ndarray:
    """Order of the pool rows: the ``k`` chosen first, then the rest by cost.

    ``X``/``cost`` come from :func:`pool` (sorted by cost).  With ``kmeans``
    the chosen row of each cluster is its lowest-cost member (the paper picks
    one at random; every member is valid, and the cheapest is the closest and
    sparsest).
    """
    n = X.shape[0]
    order = np.argsort(cost, kind="stable")
    if how != "kmeans" or n <= k:
        return order
    labels = kmeans(X, k, rng)
    chosen = []
    for j in np.unique(labels):
        members = np.flatnonzero(labels == j)
        chosen.append(int(members[np.argmin(cost[members])]))
    chosen_arr = np.array(sorted(chosen, key=lambda i: (cost[i], i)), dtype=int)
    rest = np.array([i for i in order if i not in set(chosen)], dtype=int)
    return np.concatenate([chosen_arr, rest])
