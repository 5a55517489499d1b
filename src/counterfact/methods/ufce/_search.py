"""UFCE's search as plain functions over code rows (see ``_space``).

One *problem* is one query with its INTERVALS subspace.  A *spec* is one
perturbation path: a perturbed feature ``i`` (moved up or down for a numeric
feature, to each other category for a discrete one) and a *chain* of
dependent features whose values follow from the dependency models
(Single_F: empty chain; Double_F: one dependent; Triple_F: two).  Every round
evaluates the candidate rows of every spec of every problem with **one**
model call (``decide``: the class index the model assigns) and one LOF call
on the valid rows; numeric specs then
refine the bracket between the last rejected and the first accepted value
(a batched k-ary search: the paper's binary search with k points per step).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ._score import prox_euc, prox_jac, score

__all__ = ["Problem", "Spec", "intervals", "plan", "prox_euc", "prox_jac", "run", "score"]

DecideFn = Callable[[np.ndarray], np.ndarray]
MaskFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
DepFn = Callable[[int, np.ndarray], np.ndarray]


@dataclass
class Problem:
    """One query: its code row, the point the search starts from and its subspace.

    ``lo``/``hi`` are the INTERVALS bounds a perturbed numeric feature moves
    in; ``blo``/``bhi`` the user's bounds (ranges, directions, domain) a
    predicted dependent value must respect; ``values[j]`` the finite set of
    allowed values (category codes for discrete features) or None.
    """

    x: np.ndarray
    base: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    blo: np.ndarray
    bhi: np.ndarray
    values: list[np.ndarray | None]
    target_index: int
    max_changes: int | None = None

    @property
    def perturbable(self) -> np.ndarray:
        """Features that can take a value other than the start point's."""
        out = np.zeros(self.x.size, dtype=bool)
        for j in range(self.x.size):
            v = self.values[j]
            if v is not None:
                out[j] = bool(np.any(v != self.base[j]))
            else:
                out[j] = self.hi[j] > self.base[j] or self.lo[j] < self.base[j]
        return out


@dataclass
class Spec:
    """One perturbation path of one problem."""

    problem: int
    feature: int
    direction: int  # +1 / -1 numeric, 0 enumerated values
    chain: tuple[int, ...] = ()
    enumerate_first: bool = (
        False  # first dependent enumerated (paper: two categorical features flip together)
    )
    variant: int = 1


def intervals(
    lo: float, hi: float, base: float, nn_min: float, nn_max: float
) -> tuple[float, float]:
    """INTERVALS (Algorithm 2, lines 17-25) for one numeric feature.

    The user's interval is clipped to the neighbourhood on its far sides only:
    the search never has to jump to the neighbourhood's edge before moving
    away from the query, but never goes past the neighbours either.
    """
    return max(lo, min(nn_min, base)), min(hi, max(nn_max, base))


def plan(
    problems: Sequence[Problem],
    discrete: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    variants: set[int],
    n_pairs: int,
) -> list[Spec]:
    """Every spec of every problem (Single_F, Double_F over the top MI pairs, Triple_F),
    ordered by variant (all Single_F paths first)."""
    specs: list[Spec] = []
    for p, prob in enumerate(problems):
        pert = prob.perturbable

        def dirs(i: int, prob: Problem = prob) -> list[int]:
            if prob.values[i] is not None:
                return [0]
            return [
                d
                for d, ok in ((1, prob.hi[i] > prob.base[i]), (-1, prob.lo[i] < prob.base[i]))
                if ok
            ]

        if 1 in variants:
            for f in np.flatnonzero(pert).tolist():
                specs += [Spec(p, f, d, (), False, 1) for d in dirs(f)]
        if not variants & {2, 3}:
            continue
        top = [(a, b) for a, b in pairs if pert[a] and pert[b]][:n_pairs]
        for a, b in top:
            for i, j in ((a, b), (b, a)):
                both = bool(discrete[i] and discrete[j])
                if 2 in variants:
                    specs += [Spec(p, i, d, (j,), both, 2) for d in dirs(i)]
                if 3 in variants:
                    for k in np.flatnonzero(pert).tolist():
                        if k in (i, j):
                            continue
                        specs += [Spec(p, i, d, (j, k), both, 3) for d in dirs(i)]
    # searched in this order (stable: problem, then path within a variant), so that
    # a time limit cuts the most expensive paths first
    return sorted(specs, key=lambda s: s.variant)


def _grid(a: float, b: float, n: int, integer: bool) -> np.ndarray:
    """Up to ``n`` values in the half-open segment from ``a`` (excluded) to ``b``
    (included), ordered from ``a`` outwards."""
    if integer:
        lo, hi = (np.floor(a) + 1, np.floor(b)) if b > a else (np.ceil(b), np.ceil(a) - 1)
        count = int(hi - lo + 1)
        if count <= 0:
            return np.zeros(0)
        vals = np.arange(lo, hi + 1) if count <= n else np.unique(np.rint(np.linspace(lo, hi, n)))
        return vals if b > a else vals[::-1]
    return a + (b - a) * np.arange(1, n + 1) / n


def _first_values(prob: Problem, s: Spec, n_grid: int, integer: np.ndarray) -> np.ndarray:
    i = s.feature
    vals = prob.values[i]
    if vals is not None:
        return vals[vals != prob.base[i]]
    end = prob.hi[i] if s.direction > 0 else prob.lo[i]
    return _grid(prob.base[i], end, n_grid, bool(integer[i]))


@dataclass
class _Batch:
    rows: np.ndarray
    owner: np.ndarray  # spec index per row
    t: np.ndarray  # perturbed value per row


def _build(
    specs: list[Spec], active: list[int], tvals: dict[int, np.ndarray], problems: Sequence[Problem]
) -> _Batch:
    blocks, owners, ts = [], [], []
    for si in active:
        s = specs[si]
        prob = problems[s.problem]
        t = tvals[si]
        if t.size == 0:
            continue
        if s.enumerate_first:
            j = s.chain[0]
            vj = prob.values[j]
            alt_j = vj[vj != prob.base[j]] if vj is not None else np.zeros(0)
            combos = list(itertools.product(t, alt_j))
            if not combos:
                continue
            Z = np.repeat(prob.base[None, :], len(combos), axis=0)
            Z[:, s.feature] = [c[0] for c in combos]
            Z[:, j] = [c[1] for c in combos]
            tt = np.array([c[0] for c in combos])
        else:
            Z = np.repeat(prob.base[None, :], t.size, axis=0)
            Z[:, s.feature] = t
            tt = t
        blocks.append(Z)
        owners.append(np.full(len(Z), si))
        ts.append(tt)
    if not blocks:
        d = problems[0].x.size if problems else 0
        return _Batch(np.zeros((0, d)), np.zeros(0, dtype=int), np.zeros(0))
    return _Batch(np.vstack(blocks), np.concatenate(owners), np.concatenate(ts))


@dataclass
class _SpecArrays:
    """Per-spec facts as arrays (indexed by spec), for vectorised bookkeeping."""

    problem: np.ndarray
    target: np.ndarray
    first: np.ndarray  # first dependent, -1 if none
    second: np.ndarray  # second dependent, -1 if none
    enumerated_first: np.ndarray
    numeric_search: np.ndarray

    @classmethod
    def of(cls, specs: list[Spec], problems: Sequence[Problem]) -> _SpecArrays:
        return cls(
            np.array([s.problem for s in specs], dtype=int),
            np.array([problems[s.problem].target_index for s in specs], dtype=int),
            np.array([s.chain[0] if s.chain else -1 for s in specs], dtype=int),
            np.array([s.chain[1] if len(s.chain) > 1 else -1 for s in specs], dtype=int),
            np.array([s.enumerate_first for s in specs], dtype=bool),
            np.array([s.direction != 0 for s in specs], dtype=bool),
        )


def _apply_dependents(
    batch: _Batch,
    sa: _SpecArrays,
    problems: Sequence[Problem],
    dep: DepFn,
    *,
    delta: bool,
    discrete: np.ndarray,
    integer: np.ndarray,
) -> np.ndarray:
    """Fill the chained features in place; returns the rows to keep.

    ``delta``: ``z_j = x_j + h_j(z) - h_j(x)`` clipped to the user's bounds;
    otherwise the paper's rule, ``z_j = h_j(z)``, the row rejected when the
    value lies outside them.
    """
    n = len(batch.rows)
    ok = np.ones(n, dtype=bool)
    if n == 0:
        return ok
    probs = sa.problem[batch.owner]
    for step in (0, 1):
        js = (sa.first if step == 0 else sa.second)[batch.owner]
        need = js >= 0
        if step == 0:
            need &= ~sa.enumerated_first[batch.owner]
        if not need.any():
            continue
        for j in np.unique(js[need]):
            m = need & (js == j) & ok
            if not m.any():
                continue
            idx = np.flatnonzero(m)
            new = _dependent_values(
                batch.rows[idx], probs[idx], int(j), problems, dep, delta, bool(discrete[j])
            )
            if integer[j]:
                new = np.rint(new)
            good = _fit_to_bounds(new, probs[idx], int(j), problems, delta, bool(discrete[j]))
            batch.rows[idx, j] = new
            ok[idx] &= good
    return ok


def _dependent_values(
    rows: np.ndarray,
    probs: np.ndarray,
    j: int,
    problems: Sequence[Problem],
    dep: DepFn,
    delta: bool,
    discrete: bool,
) -> np.ndarray:
    """Feature ``j`` of ``rows`` (of problems ``probs``) as its dependency predicts it:
    ``h_j(z)`` (the paper), or with ``delta`` the query's value moved by
    ``h_j(z) - h_j(x)`` (a discrete feature: the query's value unless the
    prediction changed).  One call of ``dep`` for the rows and the queries."""
    owners_p = np.unique(probs)
    bases = np.vstack([problems[p].base for p in owners_p])
    pred = dep(j, np.vstack([rows, bases]))
    new, at_base = pred[: len(rows)], pred[len(rows) :]
    if delta:
        pos = np.searchsorted(owners_p, probs)
        base_j, ref_j = bases[pos, j], at_base[pos]
        if discrete:
            new = np.where(new == ref_j, base_j, new)
        else:
            new = base_j + (new - ref_j)
    return new


def _fit_to_bounds(
    new: np.ndarray,
    probs: np.ndarray,
    j: int,
    problems: Sequence[Problem],
    delta: bool,
    discrete: bool,
) -> np.ndarray:
    """Bring the dependent values ``new`` of feature ``j`` (edited in place) inside
    each problem's allowed values or bounds; returns the rows to keep."""
    good = np.ones(new.size, dtype=bool)
    for p in np.unique(probs):
        mp = probs == p
        prob = problems[p]
        vals = prob.values[j]
        if vals is not None:
            if discrete:
                inside = np.isin(new[mp], vals)
                # delta: a category the user does not allow leaves the feature as it was
                good[mp] = True if delta else inside
                new[mp] = np.where(inside, new[mp], prob.base[j])
            else:
                new[mp] = vals[np.argmin(np.abs(new[mp][:, None] - vals[None, :]), axis=1)]
        else:
            tol = 1e-9 * max(1.0, abs(prob.base[j]))
            # delta: clipped to the user's bounds; absolute (the paper): rejected outside
            if not delta:
                good[mp] = (new[mp] >= prob.blo[j] - tol) & (new[mp] <= prob.bhi[j] + tol)
            new[mp] = np.clip(new[mp], prob.blo[j], prob.bhi[j])
    return good


@dataclass
class Found:
    """Accepted candidates (code rows) and bookkeeping of a run."""

    rows: list[list[np.ndarray]]
    variants: list[list[int]]
    stats: dict[str, int]
    timed_out: bool = False
    #: per problem: candidate rows evaluated, valid ones, search rounds it took part in
    rows_of: np.ndarray | None = None
    valid_of: np.ndarray | None = None
    rounds_of: np.ndarray | None = None
    #: per problem: whether the time limit cut its search short
    timed_out_of: np.ndarray | None = None

    @classmethod
    def empty(cls, n_prob: int) -> Found:
        """Nothing found yet for ``n_prob`` problems."""
        return cls(
            [[] for _ in range(n_prob)],
            [[] for _ in range(n_prob)],
            {"rows": 0, "model_calls": 0, "valid": 0, "lof_rows": 0, "plausible": 0},
            rows_of=np.zeros(n_prob, dtype=np.int64),
            valid_of=np.zeros(n_prob, dtype=np.int64),
            rounds_of=np.zeros(n_prob, dtype=np.int64),
            timed_out_of=np.zeros(n_prob, dtype=bool),
        )


#: seconds of work one block of candidate rows aims at (the clock is checked between blocks)
BLOCK_SECONDS = 0.1
#: rows of the first block, and the bounds of the adaptive block size
FIRST_BLOCK_ROWS, MIN_BLOCK_ROWS, MAX_BLOCK_ROWS = 512, 64, 65536


def _spec_rows(s: Spec, t: np.ndarray, prob: Problem) -> int:
    """Candidate rows ``_build`` makes for spec ``s`` with perturbed values ``t``."""
    if s.enumerate_first:
        vj = prob.values[s.chain[0]]
        return int(t.size * (0 if vj is None else int(np.sum(vj != prob.base[s.chain[0]]))))
    return int(t.size)


def _blocks(active: list[int], sizes: list[int], limit: Callable[[], int]) -> Iterator[list[int]]:
    """Consecutive groups of whole specs of about ``limit()`` rows (at least one spec)."""
    block: list[int] = []
    rows = 0
    cap = limit()
    for si, n in zip(active, sizes, strict=True):
        if block and rows + n > cap:
            yield block
            block, rows, cap = [], 0, limit()
        block.append(si)
        rows += n
    if block:
        yield block


def run(
    problems: Sequence[Problem],
    specs: list[Spec],
    *,
    decide: DecideFn,
    plausible: MaskFn,
    dep: DepFn,
    discrete: np.ndarray,
    integer: np.ndarray,
    n_grid: int,
    n_refine: int,
    delta: bool,
    expired: Callable[[], bool] = lambda: False,
    time_left: Callable[[], float] | None = None,
) -> Found:
    """Search every spec: a coarse round, then ``n_refine`` refinement rounds.

    Returns, per problem, the valid and plausible rows found: for a numeric
    spec the one closest to the start point on the final grid, for an
    enumerated spec every accepted combination.

    Each round evaluates its specs in blocks of whole specs (a spec's rows are
    never split, so the outcome of a spec does not depend on the blocks),
    sized to take about ``BLOCK_SECONDS`` each (and at most half of
    ``time_left()``, the seconds left, when given; the seconds per row are
    re-measured on every block, quick to rise and slow to fall); ``expired``
    is checked before every block.  When it returns True the search stops and
    keeps what it accepted so far; ``timed_out_of`` marks the problems with
    specs left.
    """
    found = Found.empty(len(problems))
    if not specs:
        return found
    search = _Search(
        problems,
        specs,
        _SpecArrays.of(specs, problems),
        found,
        decide=decide,
        plausible=plausible,
        dep=dep,
        discrete=discrete,
        integer=integer,
        n_grid=n_grid,
        delta=delta,
        expired=expired,
        time_left=time_left,
    )
    active = list(range(len(specs)))
    for rnd in range(n_refine + 1):
        if not active:
            break
        active = search.round(active, refine=rnd < n_refine)
        if found.timed_out:
            break
    for si, row in sorted(search.best.items()):
        found.rows[specs[si].problem].append(row)
        found.variants[specs[si].problem].append(specs[si].variant)
    return found


class _Search:
    """The state of one :func:`run`: the specs' current grids (``tvals``) and start
    points, the best row of every numeric spec, the measured seconds per row,
    and what was found."""

    def __init__(
        self,
        problems: Sequence[Problem],
        specs: list[Spec],
        sa: _SpecArrays,
        found: Found,
        *,
        decide: DecideFn,
        plausible: MaskFn,
        dep: DepFn,
        discrete: np.ndarray,
        integer: np.ndarray,
        n_grid: int,
        delta: bool,
        expired: Callable[[], bool],
        time_left: Callable[[], float] | None,
    ) -> None:
        self.problems, self.specs, self.sa, self.found = problems, specs, sa, found
        self.decide, self.plausible, self.dep = decide, plausible, dep
        self.discrete, self.integer = discrete, integer
        self.n_grid, self.delta = n_grid, delta
        self.expired, self.time_left = expired, time_left
        self.tvals = {
            si: _first_values(problems[s.problem], s, n_grid, integer) for si, s in enumerate(specs)
        }
        self.best: dict[int, np.ndarray] = {}
        self.start = {si: problems[s.problem].base[s.feature] for si, s in enumerate(specs)}
        self.rate = 0.0  # seconds per row, measured on the blocks so far

    def block_rows(self) -> int:
        """Rows of the next block: about ``BLOCK_SECONDS`` of work (never planned to
        outlast half of the time left)."""
        if self.rate <= 0:
            return FIRST_BLOCK_ROWS
        seconds = BLOCK_SECONDS
        if self.time_left is not None:
            seconds = min(seconds, max(0.0, 0.5 * self.time_left()))
        return int(min(MAX_BLOCK_ROWS, max(MIN_BLOCK_ROWS, seconds / self.rate)))

    def round(self, active: list[int], *, refine: bool) -> list[int]:
        """One round over the ``active`` specs, block by block; returns the specs to
        refine in the next round (on expiry, marks the problems with specs left)."""
        specs, problems, found = self.specs, self.problems, self.found
        nxt: list[int] = []
        seen = np.zeros(len(problems), dtype=bool)
        sizes = [
            _spec_rows(specs[si], self.tvals[si], problems[specs[si].problem]) for si in active
        ]
        done = 0
        for block in _blocks(active, sizes, self.block_rows):
            if self.expired():
                found.timed_out = True
                left = active[done:] + nxt
                found.timed_out_of[self.sa.problem[left]] = True  # type: ignore[index]
                break
            done += len(block)
            t0 = time.perf_counter()
            batch = _build(specs, block, self.tvals, problems)
            if len(batch.rows) == 0:
                continue
            nxt += self.evaluate(batch, seen, refine=refine)
            # a block of cheap rows (few valid, so few LOF rows) must not make the next
            # block, which may be all valid rows, many times too large: fall slowly
            self.rate = max((time.perf_counter() - t0) / len(batch.rows), 0.5 * self.rate)
        found.rounds_of[seen] += 1  # type: ignore[index]
        return nxt

    def evaluate(self, batch: _Batch, seen: np.ndarray, *, refine: bool) -> list[int]:
        """One block of one round: fill dependents, one model call, LOF; record the
        accepted rows and return the specs to refine in the next round."""
        sa, found = self.sa, self.found
        n_prob = len(self.problems)
        ok = _apply_dependents(
            batch,
            sa,
            self.problems,
            self.dep,
            delta=self.delta,
            discrete=self.discrete,
            integer=self.integer,
        )
        tgt = sa.target[batch.owner]
        valid = np.zeros(len(batch.rows), dtype=bool)
        if ok.any():
            valid[ok] = self.decide(batch.rows[ok]) == tgt[ok]
            found.stats["model_calls"] += 1
        found.stats["rows"] += len(batch.rows)
        found.stats["valid"] += int(valid.sum())
        prob_of = sa.problem[batch.owner]
        found.rows_of += np.bincount(prob_of, minlength=n_prob)  # type: ignore[operator]
        found.valid_of += np.bincount(prob_of[valid], minlength=n_prob)  # type: ignore[operator]
        seen[np.unique(prob_of)] = True
        accept = _plausible_first(batch, valid, sa, tgt, self.plausible, found.stats)
        # rows are grouped by spec (owner non-decreasing), numeric specs in t order
        acc = np.flatnonzero(accept)
        enum = ~sa.numeric_search[batch.owner[acc]]
        for h in acc[enum]:
            s = self.specs[batch.owner[h]]
            found.rows[s.problem].append(batch.rows[h].copy())
            found.variants[s.problem].append(s.variant)
        return self._keep_numeric(batch, acc[~enum], refine)

    def _keep_numeric(self, batch: _Batch, num: np.ndarray, refine: bool) -> list[int]:
        """Per numeric spec with accepted rows, keep its first (the closest to its
        start) as its best; with ``refine``, a finer grid between the previous
        grid value and that one for the next round (the specs returned)."""
        owners, first = np.unique(batch.owner[num], return_index=True)
        seg_start = np.searchsorted(batch.owner, owners)
        nxt: list[int] = []
        rows = zip(owners.tolist(), num[first].tolist(), seg_start.tolist(), strict=True)
        for si, h, s0 in rows:
            s = self.specs[si]
            self.best[si] = batch.rows[h].copy()
            if refine and self.problems[s.problem].values[s.feature] is None:
                prev = self.start[si] if h == s0 else batch.t[h - 1]
                t = _grid(prev, batch.t[h], self.n_grid, bool(self.integer[s.feature]))
                t = t[:-1] if t.size and np.isclose(t[-1], batch.t[h]) else t
                if t.size:
                    self.tvals[si] = t
                    self.start[si] = prev
                    nxt.append(si)
        return nxt


def _plausible_first(
    batch: _Batch,
    valid: np.ndarray,
    sa: _SpecArrays,
    tgt: np.ndarray,
    plausible: MaskFn,
    stats: dict[str, int],
) -> np.ndarray:
    """Accepted rows (valid and plausible), asking LOF only what the search needs:
    every valid row of an enumerated spec, but for a numeric spec its first valid
    row, and its other valid rows only when that one is an outlier (two LOF calls
    at most)."""
    accept = np.zeros(len(valid), dtype=bool)
    vidx = np.flatnonzero(valid)
    if vidx.size == 0:
        return accept
    numeric = sa.numeric_search[batch.owner[vidx]]
    _, first = np.unique(batch.owner[vidx[numeric]], return_index=True)
    ask = np.sort(np.concatenate([vidx[~numeric], vidx[numeric][first]]))
    pl = plausible(batch.rows[ask], tgt[ask])
    accept[ask[pl]] = True
    stats["lof_rows"] += int(ask.size)
    failed = set(batch.owner[ask[~pl & sa.numeric_search[batch.owner[ask]]]].tolist())
    if failed:
        rest = np.setdiff1d(vidx[numeric][np.isin(batch.owner[vidx[numeric]], list(failed))], ask)
        if rest.size:
            pl2 = plausible(batch.rows[rest], tgt[rest])
            accept[rest[pl2]] = True
            stats["lof_rows"] += int(rest.size)
    stats["plausible"] += int(accept.sum())
    return accept
