"""Polishing: move a counterfactual the oracle found back toward the query.

An SMT model of "counterfactual at distance <= bound" is usually a point *on*
the bound, far from the optimum when the bound is loose; Algorithm 1 then
needs many more (and, for large forests, slow) checks to bring the upper bound
down.  :func:`polish` shrinks such a point cheaply, with the compiled model
evaluated in numpy on batches of candidates:

1. the segment from the query to the point: the smallest fraction ``t`` of the
   change (on a grid) that still gives the target class with the margin;
2. greedy per-feature moves: for every changed feature, revert it to the
   query's value or keep only a fraction of its change; take the candidate
   with the smallest distance that keeps the target; repeat while it helps.

Candidates respect the per-feature domain (bounds, allowed values, integers,
the grid of real features: a moved value is rounded away from the query).
The result is only a *proposal*: the caller certifies it with the exact oracle
(:meth:`Z3Oracle.check_point`, which also checks the margin in exact
arithmetic, the change cap and the diversity clauses) and keeps the oracle's
own point otherwise.  Upper bounds only ever come from certified points and
lower bounds only from UNSAT answers, so Algorithm 1's guarantee is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._utils._deadline import Deadline
from ...schema._resolution import decimals
from ._problem import Problem

__all__ = ["Polisher"]

#: fractions of a feature's change tried in the greedy step (0 = revert)
_FRACTIONS = np.array([0.0, 0.125, 0.25, 0.5, 0.75, 0.875])
#: grid over the segment query -> point
_SEGMENT = np.linspace(0.0, 1.0, 33)[1:]


class Polisher:
    """Batch evaluation of candidates in solver units for one :class:`Problem`.

    Parameters
    ----------
    problem : Problem
        The query (solver units, bounds, weights, target, margin).
    compiled : CompiledModel
        The model IR (its numpy forward pass).
    max_rounds : int
        Greedy rounds at most.
    others : sequence of (CompiledModel, int)
        Other models and their target indices a proposal must also reach (``robust_to``).
    """

    def __init__(
        self,
        problem: Problem,
        compiled: Any,
        *,
        max_rounds: int = 12,
        others: Sequence[tuple[Any, int]] = (),
    ) -> None:
        self.problem = problem
        self.compiled = compiled
        #: every model an answer must reach its target in, with that target's region
        self.models = [(compiled, compiled.rule.region(int(problem.target_index)))]
        self.models += [(c, c.rule.region(int(t))) for c, t in others]
        self.max_rounds = int(max_rounds)
        vs = problem.vars
        self.J = len(vs)
        self.q = np.array([float(v.query) for v in vs])
        self.cat = np.array([v.kind == "categorical" for v in vs])
        self.integral = np.array([v.integral for v in vs])
        self.scale = np.array([1.0 if v.kind == "categorical" else float(v.scale) for v in vs])
        #: grid step of real features (0: none); moved values stay on it, as the oracle's do
        self.grid = np.array(
            [float(v.grid) if v.grid is not None and not v.integral else 0.0 for v in vs]
        )
        self._grid_decimals = np.array([decimals(g) if g > 0 else 0 for g in self.grid], dtype=int)
        self.start = np.zeros(self.J, dtype=int)
        for j, blk in enumerate(compiled.inputs.blocks):
            self.start[j] = blk.start
        self.nz = compiled.inputs.n

    # ------------------------------------------------------------ helpers
    def distances(self, P: np.ndarray) -> np.ndarray:
        """Eq. (3) for each row of ``P`` (solver units); the call's costs when it has them."""
        if self.problem.costs is not None:
            per_feature = [c(P[:, j]) for j, c in enumerate(self.problem.costs)]
            return np.sum(per_feature, axis=0)  # type: ignore[no-any-return]
        a, b, g = self.problem.weights
        D = np.where(self.cat, (P != self.q).astype(float), np.abs(P - self.q) / self.scale)
        out = np.zeros(len(P))
        if a:
            out += a * np.count_nonzero(D > 0, axis=1) / self.J
        if b:
            out += b * D.sum(axis=1) / self.J
        if g:
            out += g * D.max(axis=1, initial=0.0)
        return out

    def _in_domain(self, P: np.ndarray) -> np.ndarray:
        ok = np.ones(len(P), dtype=bool)
        for j, v in enumerate(self.problem.vars):
            x = P[:, j]
            if v.fixed:
                ok &= x == self.q[j]
                continue
            if v.values is not None:
                ok &= np.isin(x, np.asarray(v.values, dtype=float))
            if v.kind != "categorical":
                ok &= (x >= float(v.lower)) & (x <= float(v.upper))  # type: ignore[arg-type]
        return ok

    def _to_z(self, P: np.ndarray) -> np.ndarray:
        Z = np.zeros((len(P), self.nz))
        rows = np.arange(len(P))
        for j in range(self.J):
            k = self.start[j]
            if self.cat[j]:
                Z[rows, k + P[:, j].astype(int)] = 1.0
            else:
                Z[:, k] = P[:, j]
        return Z

    def valid(self, P: np.ndarray) -> np.ndarray:
        """In the domain and in the target region with the margin (numpy, a little conservative)."""
        ok = self._in_domain(P)
        if not ok.any():
            return ok
        Z = self._to_z(P[ok])
        mg = float(self.problem.margin) * (1 + 1e-6) + 1e-12
        every = np.ones(int(ok.sum()), dtype=bool)
        for compiled, region in self.models:
            Y = compiled.outputs_raw(Z)
            hit = np.zeros_like(every)
            for conj in region:
                h = np.ones_like(hit)
                for c in conj:
                    h &= Y @ np.asarray(c.coef, dtype=float) >= float(c.rhs) + mg
                hit |= h
            every &= hit
        ok[ok] = every
        return ok

    def _toward(self, P: np.ndarray, T: np.ndarray) -> np.ndarray:
        """Numeric entries of ``P`` moved to ``q + T (P - q)``; integers rounded away from the
        query."""
        X = self.q + T * (P - self.q)
        up = P >= self.q
        Xi = np.where(up, np.ceil(X - 1e-9), np.floor(X + 1e-9))
        X = np.where(self.integral, Xi, X)
        if self.grid.any():
            g = np.where(self.grid > 0, self.grid, 1.0)
            K = np.where(up, np.ceil(X / g - 1e-9), np.floor(X / g + 1e-9))
            Xg = K * g
            for j in np.flatnonzero(self.grid > 0):
                Xg[:, j] = np.round(Xg[:, j], int(self._grid_decimals[j]))
            moved = np.abs(X - self.q) > 0
            X = np.where((self.grid > 0) & moved, Xg, X)
        return np.where(self.cat, P, X)

    # --------------------------------------------------------------- main
    def __call__(
        self, point: tuple[Any, ...], deadline: Deadline | None = None
    ) -> tuple[Any, ...] | None:
        """A nearer counterfactual proposal than ``point`` (solver units), or None.

        ``deadline``: no new batch is evaluated after it; the best proposal so
        far is returned.
        """
        p = np.array([float(x) for x in point])
        best = p[None, :]
        d_best = float(self.distances(best)[0])
        # 1. the segment query -> point
        S = self._toward(np.repeat(best, len(_SEGMENT), axis=0), _SEGMENT[:, None])
        ok = self.valid(S)
        if ok.any():
            i0 = int(np.flatnonzero(ok)[0])
            d0 = float(self.distances(S[i0 : i0 + 1])[0])
            if d0 < d_best:
                best, d_best = S[i0 : i0 + 1], d0
        # 2. greedy per-feature moves
        for _ in range(self.max_rounds):
            if deadline is not None and deadline.expired():
                break
            cur = best[0]
            changed = np.flatnonzero(cur != self.q)
            if changed.size == 0:
                break
            cands = []
            for j in changed:
                fr = _FRACTIONS[:1] if self.cat[j] else _FRACTIONS
                C = np.repeat(cur[None, :], len(fr), axis=0)
                if self.cat[j]:
                    C[:, j] = self.q[j]
                else:
                    T = np.ones((len(fr), self.J))
                    T[:, j] = fr
                    C = self._toward(C, T)
                cands.append(C)
            C = np.concatenate(cands)
            dc = self.distances(C)
            better = dc < d_best - 1e-15
            if not better.any():
                break
            C, dc = C[better], dc[better]
            ok = self.valid(C)
            if not ok.any():
                break
            i = int(np.argmin(np.where(ok, dc, np.inf)))
            best, d_best = C[i : i + 1], float(dc[i])
        if best is p[None, :] or d_best >= float(self.distances(p[None, :])[0]):
            return None
        out: list[Any] = []
        for v, x in zip(self.problem.vars, best[0].tolist(), strict=True):
            out.append(round(x) if (v.integral or v.kind == "categorical") else float(x))
        return tuple(out)
