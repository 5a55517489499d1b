"""MACE (Karimi et al., AISTATS 2020): nearest counterfactuals by binary search over a
satisfiability oracle (Z3, or a MILP through HiGHS for ReLU networks).

The class lives in :mod:`._method`; the search in :mod:`._search` (a plain function
over an oracle); the query in solver units in :mod:`._problem`; the oracles in
:mod:`._z3_oracle` and :mod:`._mip_oracle`.
"""

from __future__ import annotations

from ._method import MACE

__all__ = ["MACE"]
