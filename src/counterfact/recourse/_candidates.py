"""Candidate actions for global recourse, from the per-person counterfactuals.

Two sources, both read off the counterfactuals each person was given:

* **each person's own action**: the changes of their counterfactual as a rule (the
  largest ``max_features`` changes when it makes more), once with numeric changes as
  moves by a delta and once as "to at least / at most" the value reached.  Applied to
  that person it reproduces their counterfactual, so the pool covers everyone the
  per-person method helped (before snapping and the change cap);
* **generalised actions**, as AReS (Rawal & Lakkaraju, NeurIPS 2020) mines frequent
  itemsets of changes and GLOBE-CE (Ley et al., ICML 2023) scales one direction: every
  set of at most ``max_features`` changes (feature, direction, category) shared by at
  least ``min_support`` people becomes a family of rules -- thresholds at quantiles of
  the values those people reached, and the median move scaled by a few factors --
  rounded to two significant digits (in the direction that makes the rule stronger)
  and to the feature's grid, so that they read like "raise capital_gain to at least
  7,700" rather than "to at least 7,688.37".

Which candidates are kept is decided by verification with the real model (see
:mod:`._actions` and :mod:`._global`), never by this module.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._utils._values import _py
from ._actions import Action, ActionSpace, Atom

__all__ = ["QUANTILES", "SCALES", "candidates"]

#: quantiles of the values people reached at which thresholds are set
QUANTILES = (0.25, 0.5, 0.75, 0.9, 1.0)
#: factors of the median move (GLOBE-CE's scaling of one direction)
SCALES = (0.5, 1.0, 1.5, 2.0, 3.0)
#: changes of one counterfactual considered for itemsets (the largest ones)
MAX_ITEMS = 6


@dataclass(frozen=True)
class _Item:
    """One change of one counterfactual: feature position, direction (+1 / -1; 0 for a
    category), the category's code, the move and the value reached (coded)."""

    j: int
    sign: int
    code: float
    delta: float
    reached: float

    @property
    def key(self) -> tuple[int, int, float]:
        return (self.j, self.sign, self.code if self.sign == 0 else 0.0)


@dataclass
class _Itemset:
    people: set[int] = field(default_factory=set)
    items: list[tuple[_Item, ...]] = field(default_factory=list)


def candidates(
    space: ActionSpace,
    M: np.ndarray,
    cfs: Sequence[np.ndarray],
    max_features: int,
    *,
    min_support: int = 2,
    max_itemsets: int = 60,
) -> tuple[list[Action], dict[str, int]]:
    """Candidate actions from the counterfactuals ``cfs[p]`` (coded rows) of the people
    ``M[p]``; also how many came from each source."""
    own: dict[Action, None] = {}
    itemsets: dict[tuple[Any, ...], _Itemset] = defaultdict(_Itemset)
    for p, C in enumerate(cfs):
        for c in C:
            items = _items(space, M[p], c)
            if not items:
                continue
            for a in (
                _own(space, items[:max_features], shift=True),
                _own(space, items[:max_features], shift=False),
            ):
                own.setdefault(a, None)
            for size in range(1, min(max_features, len(items)) + 1):
                for combo in itertools.combinations(items[:MAX_ITEMS], size):
                    combo = tuple(sorted(combo, key=lambda it: it.j))
                    s = itemsets[tuple(it.key for it in combo)]
                    if p not in s.people:
                        s.people.add(p)
                        s.items.append(combo)
    frequent = sorted(
        (s for s in itemsets.values() if len(s.people) >= min_support),
        key=lambda s: (-len(s.people), len(s.items[0]), tuple(it.key for it in s.items[0])),
    )[:max_itemsets]
    general: dict[Action, None] = {}
    for s in frequent:
        for a in _generalised(space, s.items):
            if a not in own:
                general.setdefault(a, None)
    pool = list(own) + list(general)
    return pool, {"own": len(own), "generalised": len(general), "itemsets": len(frequent)}


def _items(space: ActionSpace, x: np.ndarray, c: np.ndarray) -> list[_Item]:
    """The changes from ``x`` to ``c``, largest normalised change first (ties: schema order)."""
    delta, ch = space.deltas(c[None, :], x[None, :])
    js = [int(j) for j in np.flatnonzero(ch[0])]
    js.sort(key=lambda j: (-float(delta[0, j]), j))
    out = []
    for j in js:
        if space.categorical[j]:
            out.append(_Item(j, 0, float(c[j]), 0.0, float(c[j])))
        else:
            out.append(_Item(j, 1 if c[j] > x[j] else -1, 0.0, float(c[j] - x[j]), float(c[j])))
    return out


def _own(space: ActionSpace, items: Sequence[_Item], *, shift: bool) -> Action:
    """One counterfactual's changes as a rule (numeric moves as deltas or as thresholds)."""
    atoms = []
    for it in sorted(items, key=lambda it: it.j):
        if it.sign == 0:
            atoms.append(_atom(space, it.j, "set", it.code))
        elif shift and space.numeric[it.j]:
            atoms.append(_atom(space, it.j, "shift", it.delta))
        else:
            atoms.append(_atom(space, it.j, "at_least" if it.sign > 0 else "at_most", it.reached))
    return Action(tuple(atoms))


def _generalised(space: ActionSpace, supporters: list[tuple[_Item, ...]]) -> list[Action]:
    """The rules of one itemset: thresholds at quantiles of the values its supporters
    reached, and the median move scaled (numeric features); categories as they are."""
    width = len(supporters[0])
    reached = np.array([[it.reached for it in combo] for combo in supporters])
    moves = np.array([[it.delta for it in combo] for combo in supporters])
    first = supporters[0]
    out: list[Action] = []
    for q in QUANTILES:
        atoms = []
        for k, it in enumerate(first):
            if it.sign == 0:
                atoms.append(_atom(space, it.j, "set", it.code))
                continue
            v = float(np.quantile(reached[:, k], q if it.sign > 0 else 1.0 - q))
            op = "at_least" if it.sign > 0 else "at_most"
            atoms.append(
                _atom(space, it.j, op, _readable(space, it.j, v, up=it.sign > 0, shift=False))
            )
        out.append(Action(tuple(atoms)))
    if any(space.numeric[it.j] and it.sign != 0 for it in first):
        median = np.median(moves, axis=0) if width else np.zeros(0)
        for scale in SCALES:
            atoms = []
            for k, it in enumerate(first):
                if it.sign == 0 or not space.numeric[it.j]:
                    atoms.append(
                        out[1].atoms[k]
                    )  # categories as they are; ordinal thresholds at the median
                    continue
                d = _readable(space, it.j, scale * float(median[k]), up=it.sign > 0, shift=True)
                atoms.append(_atom(space, it.j, "shift", d) if d != 0 else out[1].atoms[k])
            out.append(Action(tuple(atoms)))
    return out


def _atom(space: ActionSpace, j: int, op: str, coded: float) -> Atom:
    """An atom with its value in the feature's raw form (category, int or float)."""
    f = space.schema.features[j]
    if not f.is_numeric and op != "shift":
        return Atom(f.name, op, _py(space.categories[j][round(coded)]))  # type: ignore[index]
    if f.kind == "integer":
        return Atom(f.name, op, round(coded))
    return Atom(f.name, op, float(coded))


def _readable(space: ActionSpace, j: int, v: float, *, up: bool, shift: bool) -> float:
    """``v`` at two significant digits and on the feature's grid, rounded up (``up``) or
    down so that the rule gets stronger; thresholds stay in the domain, moves within its
    width; ordinal ranks are whole."""
    if not space.numeric[j]:
        return float(
            min(
                max(math.ceil(v - 1e-9) if up else math.floor(v + 1e-9), space.lower[j]),
                space.upper[j],
            )
        )
    if v != 0 and math.isfinite(v):
        unit = 10.0 ** (math.floor(math.log10(abs(v))) - 1)
        v = (math.ceil if up else math.floor)(round(v / unit, 9)) * unit
    step = space.step[j]
    if math.isfinite(step):
        v = (math.ceil if up else math.floor)(round(v / step, 9)) * step
    if shift:
        width = space.upper[j] - space.lower[j]
        return float(min(max(v, -width), width))
    return float(min(max(v, space.lower[j]), space.upper[j]))
