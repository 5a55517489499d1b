"""The assemble phase: one :class:`~counterfact.result.CounterfactualResult` for the call.

Everything the result holds is computed before it is built (the answers by the
select phase, the regions by the regions phase) and passed to its constructor;
the result is not changed afterwards.

What the phases before it mean for a certificate: the reported row of an
``optimal`` answer is the solver's optimum moved by less than one resolution
step per changed feature (snap).  The status stays ``optimal`` -- proven
nearest up to that rounding -- and ``diagnostics["snapped"]`` says whether the
first reported counterfactual moved, ``["snap_shift"]`` by how much (sum over
features of ``|moved| / range``, the units of the normalised distance, so the
certified distance grows by at most this).  A rounded row that fails
verification makes the status ``feasible``, as any rejected first row does; so
does sparsification that modified the first row.  Reverting a sub-step move
only brings a row closer to the query, so an ``optimal`` claim stands.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...result import CounterfactualResult
from ._pool import Pool
from ._protocol import PipelineMethod
from ._query import Candidates, Query
from ._regions import Regions
from ._select import Answers

__all__ = ["assemble"]


def assemble(
    method: PipelineMethod,
    pool: Pool,
    tasks: list[Query],
    outcomes: list[Candidates],
    answers: Answers,
    regions: Regions,
    constraints: Any,
    n_cf: int,
) -> CounterfactualResult:
    """The :class:`CounterfactualResult` of the selected rows, with each query's
    status, diagnostics, runtime, the method's words for its guarantee, the
    requirements and the regions.  ``constraints``: what the user passed (one
    Constraints, or a list with one per task)."""
    qids = [t.id for t in tasks]
    index = pd.Index(qids)
    chosen = answers.selections
    per_row = isinstance(constraints, list)
    conf = pool.conf[answers.rows] if answers.rows else np.zeros(0)
    runtimes = [c.runtime if c.runtime is not None else np.nan for c in outcomes]
    certificates = [method.certificate(s.status, s.diagnostics) for s in chosen]
    return CounterfactualResult(
        queries=pool.queries,
        counterfactuals=answers.frame,
        status=pd.Series([s.status for s in chosen], index=index, dtype=object),
        runtime=pd.Series(runtimes, index=index, dtype=float),
        diagnostics=pd.DataFrame([s.diagnostics for s in chosen], index=index),
        schema=pool.schema,
        target=pd.Series([t.target for t in tasks], index=index),
        method=method.name or type(method).__name__,
        params=method.get_params(),
        constraints=None if per_row else constraints,
        query_constraints=dict(zip(qids, constraints, strict=True)) if per_row else None,
        model=method.model_,
        n_counterfactuals=n_cf,
        confidence=pd.Series(conf, index=answers.frame.index, dtype=float),
        query_confidence=pd.Series([t.query_confidence for t in tasks], index=index, dtype=float),
        certificates=pd.Series(certificates, index=index, dtype=object),
        requirements=regions.requirements,
        regions=regions.computed,
        region_source=regions.source,
        costs=pool.costs,
    )
