"""CE-OCL's causal constraints, Maragno et al. 2022, Appendix A eq. (7).

For an endogenous feature ``i`` with parents ``p_i`` (abduction-action-
prediction, Karimi et al. 2021):

``x_i = xhat_i + c_i(p_i) - c_i(phat_i)``

``xhat_i`` and ``c_i(phat_i)`` are constants of the query.  ``c_i`` is either a
known linear structural equation (:class:`~counterfact.constraints.Causal`
with ``coef``) or a fitted regressor of the child on its parents
(``Causal(model=...)``), embedded with
:func:`~counterfact.solvers._milp.encode_regressor` -- the paper's
"learned causality" (an MLP of credit amount from duration in Section 3).

The equation is encoded with a tolerance of half the checker's (``0.5 * tol *
range(child)``) so that an integer child can satisfy it and the re-check by
:meth:`Causal.residual` passes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...exceptions import UnsupportedConstraintError
from ...solvers._milp import Expr, Model, RawInputs, encode_regressor, quicksum

__all__ = ["encode_causal"]


def encode_causal(m: Model, inputs: RawInputs, relations: Any, x: pd.Series, schema: Any) -> int:
    """Add eq. (7) for every relation; returns how many were encoded."""
    by = {f.name: f for f in inputs.features}
    n = 0
    for c in relations:
        child = by[c.child]
        parents = [by[p] for p in c.parents]
        if child.value is None or any(
            p.value is None for p in parents
        ):  # pragma: no cover - resolve() checks
            raise UnsupportedConstraintError(
                "CE-OCL causal relations need numeric child and parents."
            )
        slack = 0.5 * float(c.tol) * schema[c.child].range
        dchild = child.value - child.query
        if c.kind == "linear":
            rhs: Expr = quicksum(
                float(w) * (by[k].value - by[k].query)  # type: ignore[operator]
                for k, w in (c.coef or {}).items()
            )
        elif c.kind == "model":
            names = list(getattr(c.model, "feature_names_in_", c.parents))
            if sorted(names) != sorted(c.parents):
                raise UnsupportedConstraintError(
                    f"The causal model for '{c.child}' was fitted on columns {names}, not on "
                    "its parents "
                    f"{list(c.parents)}. Fit it on exactly the parent columns."
                )
            base = float(c.evaluate(x.to_frame().T)[0])
            values = [by[p].value for p in names]
            rhs = encode_regressor(m, c.model, values) - base  # type: ignore[arg-type]
        else:
            raise UnsupportedConstraintError(
                f"CE-OCL cannot encode the causal relation for '{c.child}' given as a Python "
                "function; "
                "give it as coef= (linear structural equation) or model= (a fitted "
                "LinearRegression / "
                "MLPRegressor(relu) of the child on its parents)."
            )
        m.add_range(dchild - rhs, -slack, slack)
        n += 1
    return n
