"""SMT-LIB text of tree ensembles and linear models, parsed per query by the Z3 encoder
(:mod:`._encoder`)."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError

__all__ = ["ForestText", "linear_text"]


# -------------------------------------------------------- forests as text
def _smt_num(x: Fraction | float) -> str:
    """An exact SMT-LIB real literal."""
    f = x if isinstance(x, Fraction) else Fraction(float(x))
    body = (
        f"(/ {abs(f.numerator)}.0 {f.denominator}.0)"
        if f.denominator != 1
        else f"{abs(f.numerator)}.0"
    )
    return f"(- {body})" if f < 0 else body


def _smt_int(k: int) -> str:
    return f"(- {-k})" if k < 0 else str(k)


def _join(op: str, texts: list[str], *, empty: str) -> str:
    """``texts`` joined by ``op`` (``"and"``, ``"or"``): ``empty`` when there are none, the
    text itself when there is one."""
    if not texts:
        return empty
    return texts[0] if len(texts) == 1 else f"({op} {' '.join(texts)})"


class ForestText:
    """A tree ensemble as SMT-LIB text over symbols ``z0 .. z{n-1}`` (the raw vector).

    Building tens of thousands of nested ``If`` terms through the Python API
    costs seconds per query; the text is built once per model and target
    (:meth:`region`) and parsed by Z3 in milliseconds in each query's context.
    """

    def __init__(self, compiled: Any) -> None:
        self.compiled = compiled
        self.space = compiled.inputs
        self.est = compiled.estimator
        self._left: dict[int, str] = {}
        self._decls: list[str] = []
        self._asserts: list[str] = []
        self._cuts: dict[tuple[str, float], str] = {}
        self._sums: dict[tuple[float, ...], str] = {}
        self._prefix = "cut"

    def _cut(self, s_index: int) -> str:
        if s_index in self._left:
            return self._left[s_index]
        s = self.est.splits[s_index]
        blk = self.space.block(s.feature)
        if blk.is_indicator:
            if s.left_categories is None:
                raise UnsupportedModelError(
                    f"The Z3 encoder needs the category sets of split {s_index} on '{s.feature}'; "
                    "use MACE(solver='highs')."
                )
            left = sorted(int(k) for k in s.left_categories)
            names = [f"z{blk.start + k}" for k in left]
            out = (
                "false" if not names else names[0] if len(names) == 1 else f"(or {' '.join(names)})"
            )
        elif s.raw_le is not None:
            le, ge = float(s.raw_le), float(s.raw_ge)
            if le == -np.inf:
                out = "false"
            elif ge == np.inf:
                out = "true"
            else:
                key = (s.feature, le)
                if key not in self._cuts:
                    name = f"{self._prefix}{len(self._cuts)}"
                    zname = f"z{blk.start}"
                    self._decls.append(f"(declare-const {name} Bool)")
                    if blk.integral:
                        self._asserts.append(
                            f"(= {name} (<= {zname} {_smt_int(int(np.floor(le)))}))"
                        )
                    else:
                        self._asserts.append(f"(=> {name} (<= {zname} {_smt_num(le)}))")
                        self._asserts.append(f"(=> (not {name}) (>= {zname} {_smt_num(ge)}))")
                    self._cuts[key] = name
                out = self._cuts[key]
        elif s.left_categories is not None:  # non-prefix ordinal split
            terms = [f"(= z{blk.start} {int(k)})" for k in s.left_categories]
            out = (
                "false" if not terms else terms[0] if len(terms) == 1 else f"(or {' '.join(terms)})"
            )
        else:
            raise UnsupportedModelError(
                f"The Z3 encoder has no raw-unit form of split {s_index} on '{s.feature}'; "
                "use MACE(solver='highs')."
            )
        self._left[s_index] = out
        return out

    def _tree(self, tree: Any, leaf_value: np.ndarray) -> str:
        text: dict[int, str] = {}
        for n in tree.bottom_up():
            if tree.split[n] < 0:
                text[n] = _smt_num(float(leaf_value[n]))
                continue
            lt, rt = text.pop(int(tree.left[n])), text.pop(int(tree.right[n]))
            text[n] = lt if lt == rt else f"(ite {self._cut(int(tree.split[n]))} {lt} {rt})"
        return text[0]

    def total(self, coef: np.ndarray) -> str:
        """``sum_t coef @ tree_t(x)`` as text (cached per ``coef``)."""
        key = tuple(float(c) for c in coef)
        if key not in self._sums:
            parts = [self._tree(t, np.asarray(t.value, dtype=float) @ coef) for t in self.est.trees]
            self._sums[key] = parts[0] if len(parts) == 1 else f"(+ {' '.join(parts)})"
        return self._sums[key]

    def region(self, target_index: int, margin: Fraction) -> str:
        """The whole ensemble formula for the target region, with the margin."""
        conj_texts = []
        for conj in self.compiled.rule.region(int(target_index)):
            parts = []
            for cnd in conj:
                coef, const = self._threshold(cnd, margin)
                parts.append(f"(>= {self.total(coef)} {_smt_num(const)})")
            conj_texts.append(parts[0] if len(parts) == 1 else f"(and {' '.join(parts)})")
        main = conj_texts[0] if len(conj_texts) == 1 else f"(or {' '.join(conj_texts)})"
        return self._text(main)

    def _threshold(self, cnd: Any, margin: Fraction) -> tuple[np.ndarray, Fraction]:
        """A condition on the outputs as ``sum_t coef @ tree_t(x) >= const``: (coef, const),
        exact, with the margin and the ensemble's base and divisor folded into ``const``."""
        est = self.est
        coef = np.asarray(cnd.coef, dtype=float)
        const = Fraction(float(est.divisor)) * (
            Fraction(float(cnd.rhs))
            + margin
            - Fraction(float(np.asarray(est.base, dtype=float) @ coef))
        )
        return coef, const

    def _text(self, main: str) -> str:
        """The declarations, the cut definitions and ordering, and ``main`` asserted."""
        return "\n".join(
            [
                *self._decls,
                *(f"(assert {a})" for a in self._asserts),
                *self._order(),
                f"(assert {main})",
            ]
        )

    # ------------------------------------------------- pruned to a box
    def _decide(self, s_index: int, lo: np.ndarray, hi: np.ndarray) -> bool | None:
        """Whether every point of the box ``[lo, hi]`` (over ``z``) goes left (True),
        right (False), or either (None) at split ``s_index``."""
        s = self.est.splits[s_index]
        blk = self.space.block(s.feature)
        if blk.is_indicator:
            if s.left_categories is None:
                return None
            left = {int(k) for k in s.left_categories}
            sl = slice(blk.start, blk.start + blk.size)
            on = np.flatnonzero(lo[sl] >= 1)
            if on.size:
                return int(on[0]) in left
            possible = np.flatnonzero(hi[sl] >= 1)
            if all(int(k) in left for k in possible):
                return True
            if not any(int(k) in left for k in possible):
                return False
            return None
        a, b = float(lo[blk.start]), float(hi[blk.start])
        if s.raw_le is not None:
            le, ge = float(s.raw_le), float(s.raw_ge)
            if blk.integral:
                fl = np.floor(le)
                return True if b <= fl else False if a >= fl + 1 else None
            return True if b <= le else False if a >= ge else None
        if s.left_categories is not None and a == b:
            return int(a) in {int(k) for k in s.left_categories}
        return None

    def _tree_in_box(
        self, tree: Any, leaf_value: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> tuple[str, float, float]:
        """One tree restricted to the box: (text, least and greatest reachable leaf value)."""

        def walk(n: int) -> tuple[str, float, float]:
            while tree.split[n] >= 0:
                d = self._decide(int(tree.split[n]), lo, hi)
                if d is None:
                    lt, la, lb = walk(int(tree.left[n]))
                    rt, ra, rb = walk(int(tree.right[n]))
                    text = lt if lt == rt else f"(ite {self._cut(int(tree.split[n]))} {lt} {rt})"
                    return text, min(la, ra), max(lb, rb)
                n = int(tree.left[n]) if d else int(tree.right[n])
            v = float(leaf_value[n])
            return _smt_num(v), v, v

        return walk(0)

    def region_in_box(
        self, target_index: int, margin: Fraction, lo: np.ndarray, hi: np.ndarray, prefix: str = "b"
    ) -> str:
        """:meth:`region` for points of the box ``[lo, hi]`` only (per-check pruning).

        Splits that every point of the box takes the same way are resolved, so a
        tree becomes the sub-tree reachable in the box; the bounds on each
        tree's reachable leaves decide a condition outright where they can.
        The box is the query's domain intersected with the caps implied by the
        distance bound, so tight bounds give small formulas.  Exact: the same
        formula as :meth:`region` on the box.  ``prefix`` names this text's cut
        variables (distinct per check, so that nothing learned about one check's
        cuts can refer to another's).
        """
        saved = (self._decls, self._asserts, self._cuts, self._left, self._prefix)
        self._decls, self._asserts, self._cuts, self._left = [], [], {}, {}
        self._prefix = prefix
        try:
            conj_texts = []
            for conj in self.compiled.rule.region(int(target_index)):
                text = self._conjunction_in_box(conj, margin, lo, hi)
                if text is not None:
                    conj_texts.append(text)
            return self._text(_join("or", conj_texts, empty="false"))
        finally:
            self._decls, self._asserts, self._cuts, self._left, self._prefix = saved

    def _conjunction_in_box(
        self, conj: Any, margin: Fraction, lo: np.ndarray, hi: np.ndarray
    ) -> str | None:
        """One conjunction of the rule's conditions in the box; None when it never holds
        there (conditions that always hold are left out)."""
        parts = []
        for cnd in conj:
            part = self._condition_in_box(cnd, margin, lo, hi)
            if part is False:
                return None
            if part is not True:
                parts.append(part)
        return _join("and", parts, empty="true")

    def _condition_in_box(
        self, cnd: Any, margin: Fraction, lo: np.ndarray, hi: np.ndarray
    ) -> str | bool:
        """One condition on the outputs in the box: its text, or True (False) when the
        trees' reachable leaves make it hold (fail) everywhere in the box."""
        coef, const = self._threshold(cnd, margin)
        texts, low, high = [], Fraction(0), Fraction(0)
        for t in self.est.trees:
            txt, a, b = self._tree_in_box(t, np.asarray(t.value, dtype=float) @ coef, lo, hi)
            texts.append(txt)
            low += Fraction(a)
            high += Fraction(b)
        if low >= const:
            return True
        if high < const:
            return False
        body = texts[0] if len(texts) == 1 else f"(+ {' '.join(texts)})"
        return f"(>= {body} {_smt_num(const)})"

    def _order(self) -> list[str]:
        """Mišić's ordering of the cuts of one feature (``z <= t_k  =>  z <= t_{k+1}``) as
        clauses: implied by the arithmetic, but stated they let the SAT core propagate."""
        by: dict[str, list[tuple[float, str]]] = {}
        for (feat, le), name in self._cuts.items():
            by.setdefault(feat, []).append((le, name))
        out = []
        for cuts in by.values():
            cuts.sort()
            out += [f"(assert (=> {a} {b}))" for (_, a), (_, b) in pairwise(cuts)]
        return out


def linear_text(
    compiled: Any, target_index: int, mg: Fraction, cache: dict[str, Any] | None
) -> str:
    """The decision region of a linear model as SMT-LIB text over ``z0 .. z{n-1}``.

    The rule's conditions on the outputs are folded into one linear inequality
    of ``z`` per condition, with exact rational coefficients
    (``sum_r coef_r * (M z + k)_r``, each factor ``Fraction(float)``); built once
    per model, target and margin and parsed per query.
    """
    key = f"linear_text:{int(target_index)}:{mg}"
    if cache is not None and key in cache and cache[key][0] is compiled:
        return str(cache[key][1])
    est = compiled.estimator
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    W = np.asarray(est.W, dtype=float)
    M = W @ A
    k = W @ c + np.asarray(est.b, dtype=float)
    Mq = [[Fraction(float(v)) for v in row] for row in M]
    kq = [Fraction(float(v)) for v in k]
    indicator = np.zeros(M.shape[1], dtype=bool)
    for blk in compiled.inputs.blocks:
        if blk.is_indicator:
            indicator[blk.start : blk.start + blk.size] = True
    conj_texts = []
    for conj in compiled.rule.region(int(target_index)):
        parts = []
        for cnd in conj:
            coef = [Fraction(float(v)) for v in np.asarray(cnd.coef, dtype=float)]
            lhs = []
            const = Fraction(0)
            for r, cr in enumerate(coef):
                if cr == 0:
                    continue
                const += cr * kq[r]
            for j in range(M.shape[1]):
                v = sum((cr * Mq[r][j] for r, cr in enumerate(coef) if cr != 0), Fraction(0))
                if v == 0:
                    continue
                term = f"(ite z{j} 1.0 0.0)" if indicator[j] else f"z{j}"
                lhs.append(f"(* {_smt_num(v)} {term})")
            rhs = Fraction(float(cnd.rhs)) + mg - const
            body = "0.0" if not lhs else lhs[0] if len(lhs) == 1 else f"(+ {' '.join(lhs)})"
            parts.append(f"(>= {body} {_smt_num(rhs)})")
        conj_texts.append(parts[0] if len(parts) == 1 else f"(and {' '.join(parts)})")
    main = conj_texts[0] if len(conj_texts) == 1 else f"(or {' '.join(conj_texts)})"
    text = f"(assert {main})"
    if cache is not None:
        cache[key] = (compiled, text)
    return text
