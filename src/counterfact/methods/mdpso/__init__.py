"""MD-PSO counterfactuals (Shekhar et al. 2023): see :class:`MDPSO`.

Layout: ``_iv`` (information value, eq. 16), ``_problem`` (a query's box and
the fast raw decoder), ``_search`` (the swarm as a plain ask/tell loop over
arrays), ``_select`` (k-means / top-k / personal-best selection),
``_arrays`` (the array library: numpy, or torch on a device), ``_job`` (a query's
state across attempts), ``_options`` (:class:`SwarmOptions`)
and ``_method`` (the method class).
"""

from __future__ import annotations

from ._method import MDPSO
from ._options import SwarmOptions

__all__ = ["MDPSO", "SwarmOptions"]
