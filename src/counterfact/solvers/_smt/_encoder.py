"""The Z3 encoder: the compiled model's IR as Z3 formulas, chosen from a lookup table.

Used by MACE's default oracle (linear models and tree ensembles).  The raw
input vector ``z`` (the :class:`~counterfact.models._compile.InputSpace` layout)
is given as a list of Z3 terms: an arithmetic term (``Real``/``Int`` or a
constant) for each numeric value and ordinal rank, a ``Bool`` for each one-hot
indicator.  Every coefficient becomes an exact rational (``Fraction(float)``),
so a SAT answer is a true point of the encoded model and an UNSAT answer a
proof (``reference/solvers.md``).

Two tables from IR estimator node to encoder: :data:`ENCODERS` (the target
region, :func:`encode_model`) and :data:`OUTPUT_ENCODERS` (the outputs ``y`` as
terms, :func:`encode_outputs`).  IR node -> Z3:

* :class:`~counterfact.models._compile.Linear` (after the
  :class:`~counterfact.models._compile.AffineMap`): folded into one affine map
  of ``z`` (``W @ A``, ``W @ c + b``; indicators enter as ``If(b, 1, 0)``).
  Its region is generated as SMT-LIB text once per model and target
  (:func:`~._text.linear_text`) and parsed in each query's context.
* :class:`~counterfact.models._compile.MLP`: ``h = If(a > 0, a, 0)``; units that
  interval arithmetic over the query's box proves stable are replaced by ``a``
  or ``0``, and the bounds are asserted on unstable pre-activations.  (Z3 is
  slow on ReLU networks; MACE uses the MILP oracle for them by default.)
* :class:`~counterfact.models._compile.TreeEnsemble`: one ``Bool`` per distinct
  raw-unit cut of a numeric or ordinal feature, ``c => z <= raw_le`` and
  ``not c => z >= raw_ge`` (the IR's exact float32-safe cuts; the open gap
  between them is excluded), shared by every tree; categorical splits read
  the indicators.  Each tree's contribution to each output condition is a
  nested ``If`` over its nodes.  Ensembles are generated once per model as
  SMT-LIB text (:class:`~._text.ForestText`) and parsed in each query's
  context: building 30,000 ``If`` terms through the Python API took over a
  second per query, parsing takes milliseconds.  :func:`forest_in_box` gives
  the same region restricted to a box (splits the box decides are resolved,
  conditions the reachable leaves decide dropped); MACE's oracle asserts it
  per check with the box of that check's bound.  A single tree (no base
  score) is encoded as the disjunction of the paths to the leaves in the
  target region: the leaves the rule assigns to the target, with no margin
  (its leaf values are constants, so the class of each leaf is exact), whose
  values also meet the region's floors (``min_probability``, a forest's vote
  share) with the margin, as every other encoding asks them.  Its outputs have
  no entry in :data:`OUTPUT_ENCODERS`.
* :class:`~counterfact.models._compile.DecisionRule`:
  :meth:`~counterfact.models._compile.DecisionRule.region` conditions as
  ``coef @ y >= rhs + margin``; a disjunctive region (one-vs-one SVC) as an
  ``Or`` of conjunctions.

An IR node without an entry raises
:class:`~counterfact.exceptions.UnsupportedModelError` naming it, this encoder
and the alternative (MACE's MILP oracle, :mod:`counterfact.solvers._milp`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from ..._utils._deps import import_optional
from ...exceptions import UnsupportedModelError
from ...models._compile import MLP, Linear, TreeEnsemble
from .._dispatch import encoder_for
from ._text import ForestText, linear_text

__all__ = [
    "ENCODERS",
    "OUTPUT_ENCODERS",
    "encode_model",
    "encode_outputs",
    "forest_in_box",
    "is_forest",
    "rational",
    "z_box",
]

#: (compiled, z, box) -> (outputs y as Z3 terms, side constraints)
OutputEncoder = Callable[
    [Any, list[Any], tuple[np.ndarray, np.ndarray]], tuple[list[Any], list[Any]]
]
#: (compiled, z, target index, margin, box, cache) -> constraints "the model predicts the target"
RegionEncoder = Callable[
    [Any, list[Any], int, Fraction, tuple[np.ndarray, np.ndarray], dict[str, Any] | None], list[Any]
]

_ENCODER = "Z3 encoder (counterfact.solvers._smt)"
_ALTERNATIVE = (
    "Use MACE(solver='highs') (the MILP encoder, counterfact.solvers._milp) or a supported "
    "model kind."
)


def _z3() -> Any:
    return import_optional("z3", purpose="The Z3 encoder")


def rational(x: float, ctx: Any = None) -> Any:
    """``x`` as an exact Z3 rational (``Fraction(float)``) in context ``ctx``."""
    return _z3().RealVal(Fraction(float(x)), ctx)


def z_box(
    compiled: Any, lower: np.ndarray | None = None, upper: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-variable box of ``z`` (the query's bounds where given, else the domain)."""
    lo = compiled.inputs.lower() if lower is None else np.asarray(lower, dtype=float)
    hi = compiled.inputs.upper() if upper is None else np.asarray(upper, dtype=float)
    return lo, hi


# ----------------------------------------------------------------- helpers
def _ctx(z: list[Any]) -> Any:
    """The Z3 context of the input terms (oracles use one fresh context per query,
    so that results do not depend on what the process solved before)."""
    return z[0].ctx if z else None


def _arith(compiled: Any, z: list[Any]) -> list[Any]:
    """``z`` with indicator Bools as 0/1 arithmetic terms."""
    z3 = _z3()
    ctx = _ctx(z)
    one, zero = z3.IntVal(1, ctx), z3.IntVal(0, ctx)
    out = list(z)
    for blk in compiled.inputs.blocks:
        if blk.is_indicator:
            for k in range(blk.start, blk.start + blk.size):
                t = z[k]
                out[k] = z3.If(t, one, zero) if z3.is_bool(t) else t
    return out


def _lin(terms: list[Any], coefs: np.ndarray, const: float, ctx: Any) -> Any:
    z3 = _z3()
    nz = np.flatnonzero(coefs)
    parts = [rational(coefs[k], ctx) * terms[k] for k in nz]
    c = Fraction(float(const))
    if not parts:
        return z3.RealVal(c, ctx)
    return z3.Sum(parts) + z3.RealVal(c, ctx) if c != 0 else z3.Sum(parts)


def _affine_outputs(compiled: Any, z: list[Any], W: np.ndarray, b: np.ndarray) -> list[Any]:
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    M = W @ A
    k = W @ c + b
    za = _arith(compiled, z)
    return [_lin(za, M[r], k[r], _ctx(z)) for r in range(M.shape[0])]


def _interval(
    W: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    Wp, Wn = np.clip(W, 0, None), np.clip(W, None, 0)
    return Wp @ lo + Wn @ hi + b, Wp @ hi + Wn @ lo + b


# ----------------------------------------------------------------- outputs
def _linear_outputs(
    compiled: Any, z: list[Any], box: tuple[np.ndarray, np.ndarray]
) -> tuple[list[Any], list[Any]]:
    est = compiled.estimator
    return _affine_outputs(
        compiled, z, np.asarray(est.W, dtype=float), np.asarray(est.b, dtype=float)
    ), []


def _mlp_outputs(
    compiled: Any, z: list[Any], box: tuple[np.ndarray, np.ndarray]
) -> tuple[list[Any], list[Any]]:
    """ReLU layers over interval bounds from ``box``: stable units folded, unstable ones bounded."""
    z3 = _z3()
    ctx = _ctx(z)
    A = np.asarray(compiled.affine.A, dtype=float)
    c = np.asarray(compiled.affine.c, dtype=float)
    side: list[Any] = []
    h: list[Any] = []
    hlo, hhi = box
    for li, layer in enumerate(compiled.estimator.layers):
        W = np.asarray(layer.W, dtype=float)
        b = np.asarray(layer.b, dtype=float)
        if li == 0:
            pre = _affine_outputs(compiled, z, W, b)
            plo, phi = _interval(W @ A, W @ c + b, hlo, hhi)
        else:
            pre = [_lin(h, W[r], b[r], ctx) for r in range(W.shape[0])]
            plo, phi = _interval(W, b, hlo, hhi)
        if layer.activation == "relu":
            h = []
            for r, p in enumerate(pre):
                if plo[r] >= 0:
                    h.append(p)
                elif phi[r] <= 0:
                    h.append(z3.RealVal(0, ctx))
                else:
                    a = z3.Real(f"relu_{li}_{r}", ctx)
                    side.append(a == p)
                    side.append(a >= rational(plo[r], ctx))
                    side.append(a <= rational(phi[r], ctx))
                    h.append(z3.If(a > 0, a, z3.RealVal(0, ctx)))
            hlo, hhi = np.maximum(plo, 0), np.maximum(phi, 0)
        elif layer.activation == "identity":
            h = pre
            hlo, hhi = plo, phi
        else:
            raise UnsupportedModelError(
                f"The Z3 encoder cannot encode activation {layer.activation!r}; supported: "
                "relu, identity."
            )
    return h, side


# : IR estimator node -> its outputs ``y`` as Z3 terms (tree ensembles: only as a region,
# :data:`ENCODERS`)
OUTPUT_ENCODERS: dict[type, OutputEncoder] = {
    Linear: _linear_outputs,
    MLP: _mlp_outputs,
}


def encode_outputs(
    compiled: Any, z: list[Any], *, box: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[list[Any], list[Any]]:
    """The estimator's outputs ``y`` as Z3 terms over ``z``, and side constraints.

    ``box``: per-variable bounds of ``z`` (for the MLP's interval bounds).
    Tree ensembles have no entry in :data:`OUTPUT_ENCODERS` (see :func:`encode_model`).
    """
    encode = encoder_for(
        OUTPUT_ENCODERS,
        compiled.estimator,
        encoder="Z3 output encoder (counterfact.solvers._smt.encode_outputs)",
        alternative=(
            "For a tree ensemble use encode_model (its target region); otherwise use "
            "MACE(solver='highs') "
            "(the MILP encoder, counterfact.solvers._milp) or a supported model kind."
        ),
    )
    return encode(compiled, z, box if box is not None else z_box(compiled))


# ------------------------------------------------------------------- trees
class _Cuts:
    """Split conditions ("goes left") of a tree ensemble over ``z``, cut Bools shared."""

    def __init__(
        self, compiled: Any, z: list[Any], box: tuple[np.ndarray, np.ndarray], side: list[Any]
    ) -> None:
        self.compiled = compiled
        self.z = z
        self.lo, self.hi = box
        self.side = side
        self.cache: dict[int, Any] = {}
        self.cut_bools: dict[tuple[str, float], Any] = {}
        self.ctx = _ctx(z)

    def left(self, s_index: int) -> Any:
        if s_index not in self.cache:
            self.cache[s_index] = self._left(self.compiled.estimator.splits[s_index])
        return self.cache[s_index]

    def _left(self, s: Any) -> Any:
        z3 = _z3()
        ctx = self.ctx
        blk = self.compiled.inputs.block(s.feature)
        if blk.is_indicator:
            if s.left_categories is None:
                return self._x_cut(s)
            ind = [self.z[blk.start + k] for k in range(blk.size)]
            left = set(int(k) for k in s.left_categories)
            if len(left) <= blk.size - len(left):
                return z3.Or([ind[k] for k in sorted(left)]) if left else z3.BoolVal(False, ctx)
            right = [ind[k] for k in range(blk.size) if k not in left]
            return z3.Not(z3.Or(right)) if right else z3.BoolVal(True, ctx)
        x = self.z[blk.start]
        if s.raw_le is not None:
            return self._numeric_cut(s.feature, x, float(s.raw_le), float(s.raw_ge), blk.start)
        if s.left_categories is not None:  # non-prefix ordinal split
            return (
                z3.Or([x == int(k) for k in s.left_categories])
                if s.left_categories
                else z3.BoolVal(False, ctx)
            )
        return self._x_cut(s)

    def _numeric_cut(self, feature: str, x: Any, le: float, ge: float, col: int) -> Any:
        z3 = _z3()
        ctx = self.ctx
        if le == -np.inf:
            return z3.BoolVal(False, ctx)
        if ge == np.inf or le >= self.hi[col]:  # the whole box goes left
            return z3.BoolVal(True, ctx)
        if ge <= self.lo[col]:  # the whole box goes right
            return z3.BoolVal(False, ctx)
        key = (feature, le)
        if key not in self.cut_bools:
            if z3.is_int_value(x) or z3.is_rational_value(x):  # a fixed feature: a constant
                val = Fraction(x.as_long()) if z3.is_int_value(x) else x.as_fraction()
                self.cut_bools[key] = z3.BoolVal(val <= Fraction(le), ctx)
            else:
                c = z3.Bool(f"cut_{feature}_{len(self.cut_bools)}", ctx)
                if z3.is_int(x):
                    self.side.append(c == (x <= int(np.floor(le))))
                else:
                    self.side.append(z3.Implies(c, x <= rational(le, ctx)))
                    self.side.append(z3.Implies(z3.Not(c), x >= rational(ge, ctx)))
                self.cut_bools[key] = c
        return self.cut_bools[key]

    def _x_cut(self, s: Any) -> Any:
        """Fallback: the split on the estimator input column (safe float bounds)."""
        z3 = _z3()
        A = np.asarray(self.compiled.affine.A, dtype=float)[s.column]
        c = float(np.asarray(self.compiled.affine.c, dtype=float)[s.column])
        xcol = _lin(_arith(self.compiled, self.z), A, c, self.ctx)
        b = z3.Bool(f"xcut_{s.column}_{len(self.cache)}", self.ctx)
        self.side.append(z3.Implies(b, xcol <= rational(s.le, self.ctx)))
        self.side.append(z3.Implies(z3.Not(b), xcol >= rational(s.ge, self.ctx)))
        return b


def _target_leaves(compiled: Any, target_index: int, mg: Fraction) -> set[int]:
    """The leaves of a single tree inside the target region: the rule assigns them to
    ``target_index`` (exact, with its tie-breaking) and their outputs meet each of the
    rule's floors (probability, vote share) with the margin, ``coef @ y >= rhs + mg``,
    in exact rationals of the floats, as the forests' encoding states them."""
    est = compiled.estimator
    tree = est.trees[0]
    leaves = np.flatnonzero(tree.split < 0)
    values = np.asarray(tree.value, dtype=float)[leaves]
    y = values / est.divisor + est.base
    good = compiled.rule.predict(y) == target_index
    floors = compiled.rule.floors(int(target_index))
    if floors:
        div = Fraction(float(est.divisor))
        base = np.broadcast_to(np.asarray(est.base, dtype=float), (values.shape[1],))
        for k in np.flatnonzero(good):
            y_k = [
                Fraction(float(v)) / div + Fraction(float(b))
                for v, b in zip(values[k], base, strict=True)
            ]
            good[k] = all(_meets(cnd, y_k, mg) for cnd in floors)
    return set(leaves[good].tolist())


def _meets(cnd: Any, y: list[Fraction], mg: Fraction) -> bool:
    """``coef @ y >= rhs + mg`` in exact rationals (an output condition at constant outputs)."""
    lhs = sum((Fraction(float(c)) * v for c, v in zip(cnd.coef, y, strict=True) if c), Fraction(0))
    return lhs >= Fraction(float(cnd.rhs)) + mg


def _single_tree(compiled: Any, cuts: _Cuts, target_index: int, mg: Fraction) -> Any:
    """Disjunction of the paths to the leaves inside the target region
    (:func:`_target_leaves`)."""
    z3 = _z3()
    tree = compiled.estimator.trees[0]
    good = _target_leaves(compiled, target_index, mg)
    memo: dict[int, Any] = {}
    for n in tree.bottom_up():
        if tree.split[n] < 0:
            memo[n] = z3.BoolVal(n in good, cuts.ctx)
            continue
        lt, rt = memo[int(tree.left[n])], memo[int(tree.right[n])]
        if z3.is_false(lt) and z3.is_false(rt):
            memo[n] = z3.BoolVal(False, cuts.ctx)
            continue
        if z3.is_true(lt) and z3.is_true(rt):
            memo[n] = z3.BoolVal(True, cuts.ctx)
            continue
        cond = cuts.left(int(tree.split[n]))
        memo[n] = z3.simplify(z3.If(cond, lt, rt))
    return memo[0]


def _forest_text(compiled: Any, cache: dict[str, Any] | None) -> ForestText:
    """The ensemble's :class:`ForestText`, kept in ``cache`` across queries of one model."""
    ft = cache.get("forest_text") if cache is not None else None
    if (
        ft is not None
        and ft.compiled is not compiled
        and ft.compiled.estimator is compiled.estimator
    ):
        # the same trees under another decision rule (a probability margin): share the
        # trees' text, read the rule from this model
        view = copy.copy(ft)
        view.compiled = compiled
        return view
    if ft is None or ft.compiled is not compiled:
        ft = ForestText(compiled)
        if cache is not None:
            cache["forest_text"] = ft
    return ft


def is_forest(compiled: Any) -> bool:
    """Whether the compiled model is a tree ensemble encoded as a sum of trees (not one plain
    tree)."""
    est = compiled.estimator
    return isinstance(est, TreeEnsemble) and not (len(est.trees) == 1 and not np.any(est.base))


def forest_in_box(
    compiled: Any,
    z: list[Any],
    target_index: int,
    margin: float,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    cache: dict[str, Any] | None = None,
    prefix: str = "b",
) -> list[Any]:
    """The ensemble's target region for the points of the box ``[lo, hi]`` (over ``z``).

    Equivalent to :func:`encode_model` on the box, but every split that the
    whole box takes the same way is resolved first (:meth:`ForestText.region_in_box`);
    asserted inside a push/pop scope by an oracle whose box is the query's
    domain intersected with the caps of the current distance bound.
    """
    z3 = _z3()
    text = _forest_text(compiled, cache).region_in_box(
        int(target_index), Fraction(float(margin)), lo, hi, prefix=prefix
    )
    side, parsed = _parse_over_z(text, z)
    return [*side, z3.And(parsed)]


def _parse_over_z(text: str, z: list[Any]) -> tuple[list[Any], list[Any]]:
    """Parse ``text`` (over symbols ``z0 ..``) in the context of ``z``.

    Returns (side constraints binding a named variable to each constant of
    ``z``, the parsed assertions).
    """
    z3 = _z3()
    ctx = _ctx(z)
    decls: dict[str, Any] = {}
    side: list[Any] = []
    for k, t in enumerate(z):
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            decls[f"z{k}"] = t
            continue
        v = (
            z3.Bool(f"zfix{k}", ctx)
            if z3.is_bool(t)
            else (z3.Int(f"zfix{k}", ctx) if z3.is_int(t) else z3.Real(f"zfix{k}", ctx))
        )
        side.append(v == t)
        decls[f"z{k}"] = v
    return side, list(z3.parse_smt2_string(text, decls=decls, ctx=ctx))


# ----------------------------------------------------------------- regions
def _outputs_region(
    compiled: Any,
    z: list[Any],
    target_index: int,
    mg: Fraction,
    box: tuple[np.ndarray, np.ndarray],
    cache: dict[str, Any] | None,
) -> list[Any]:
    """The rule's region over the outputs of :func:`encode_outputs` (an ``Or`` of conjunctions)."""
    z3 = _z3()
    ctx = _ctx(z)
    outputs, side = encode_outputs(compiled, z, box=box)
    conj_formulas = []
    for conj in compiled.rule.region(int(target_index)):
        parts = [
            _lin(outputs, np.asarray(cnd.coef, dtype=float), 0.0, ctx)
            >= z3.RealVal(Fraction(float(cnd.rhs)) + mg, ctx)
            for cnd in conj
        ]
        conj_formulas.append(z3.And(parts))
    return [*side, conj_formulas[0] if len(conj_formulas) == 1 else z3.Or(conj_formulas)]


def _linear_region(
    compiled: Any,
    z: list[Any],
    target_index: int,
    mg: Fraction,
    box: tuple[np.ndarray, np.ndarray],
    cache: dict[str, Any] | None,
) -> list[Any]:
    """The region as one exact linear inequality of ``z`` per condition (SMT-LIB text, parsed)."""
    if not z:
        return _outputs_region(compiled, z, target_index, mg, box, cache)
    side, parsed = _parse_over_z(linear_text(compiled, target_index, mg, cache), z)
    return [*side, *parsed]


def _trees_region(
    compiled: Any,
    z: list[Any],
    target_index: int,
    mg: Fraction,
    box: tuple[np.ndarray, np.ndarray],
    cache: dict[str, Any] | None,
) -> list[Any]:
    """One plain tree: the paths to the target's leaves; a sum of trees: the parsed
    :class:`ForestText`."""
    if not is_forest(compiled):
        side: list[Any] = []
        formula = _single_tree(compiled, _Cuts(compiled, z, box, side), target_index, mg)
        return [*side, formula]
    z3 = _z3()
    side, parsed = _parse_over_z(_forest_text(compiled, cache).region(target_index, mg), z)
    # one conjunction: a single assert instead of thousands of Python-side calls
    return [*side, z3.And(parsed)]


#: IR estimator node -> the constraints "the model predicts the target class" over ``z``
ENCODERS: dict[type, RegionEncoder] = {
    Linear: _linear_region,
    MLP: _outputs_region,
    TreeEnsemble: _trees_region,
}


def encode_model(
    compiled: Any,
    z: list[Any],
    target_index: int,
    margin: float | None = None,
    *,
    box: tuple[np.ndarray, np.ndarray] | None = None,
    cache: dict[str, Any] | None = None,
) -> list[Any]:
    """Constraints forcing the compiled model to predict class ``target_index`` on ``z``.

    The :data:`ENCODERS` entry of the estimator's IR node builds them.

    Parameters
    ----------
    compiled : CompiledModel
    z : list
        Z3 terms in the InputSpace layout (Bools for indicators).
    target_index : int
        Position of the target class in ``compiled.classes``.
    margin : float, optional
        Decision margin (default ``compiled.rule.margin``).
    box : (lower, upper), optional
        Bounds of every ``z`` variable for this query (MLP interval bounds,
        pruning of tree cuts); the schema's domain by default.
    cache : dict, optional
        Reused across queries of one model (holds the ensemble's SMT-LIB text).
    """
    encode = encoder_for(ENCODERS, compiled.estimator, encoder=_ENCODER, alternative=_ALTERNATIVE)
    mg = Fraction(float(compiled.rule.margin if margin is None else margin))
    return encode(
        compiled, z, int(target_index), mg, box if box is not None else z_box(compiled), cache
    )
