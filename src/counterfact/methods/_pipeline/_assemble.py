"""The assemble phase: one :class:`~counterfact.result.CounterfactualResult` for the call.

Everything the result holds is computed before it is built (the answers by the
select phase, the regions by the regions phase) and passed to its constructor;
the result is not changed afterwards.

What the phases before it mean for a certificate: the reported row of an
``optimal`` answer is the solver's optimum moved by less than one resolution
step per changed feature (snap), and possibly sparsified.  The certificate is
about the row that is returned: its value under the method's measure
(``method.answer_value``) is written into ``diagnostics["answer_value"]``
before the method words its certificate record, and an ``optimal`` whose
returned answer lies farther above the proven bound than the stated
tolerance (``Certificate.within_tolerance``) is reported ``feasible``, with
the gap in its certificate.  ``diagnostics["snapped"]`` says whether the first
reported counterfactual moved, ``["snap_shift"]`` by how much (sum over
features of ``|moved| / range``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...result import SUCCESS, Certificate, CounterfactualResult
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
    firsts = _first_rows(answers, tasks)
    records = [
        _record(method, t, s.status, s.diagnostics, row)
        for t, s, row in zip(tasks, chosen, firsts, strict=True)
    ]
    certificates = [r.sentence for r in records]
    return CounterfactualResult(
        queries=pool.queries,
        counterfactuals=answers.frame,
        status=pd.Series([r.status for r in records], index=index, dtype=object),
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
        certificate_records=pd.Series(records, index=index, dtype=object),
        requirements=regions.requirements,
        regions=regions.computed,
        region_source=regions.source,
        costs=pool.costs,
    )


def _first_rows(answers: Answers, tasks: list[Query]) -> list[pd.Series | None]:
    """Each query's first reported row (None when it has none)."""
    out: list[pd.Series | None] = []
    k = 0
    for s in answers.selections:
        out.append(answers.frame.iloc[k] if s.chosen else None)
        k += len(s.chosen)
    return out


def _record(
    method: PipelineMethod,
    task: Query,
    status: str,
    diagnostics: dict[str, Any],
    first: pd.Series | None,
) -> Certificate:
    """The method's certificate fields for one query, about the returned answer: its
    value under the method's measure goes into the diagnostics first; an ``optimal``
    outside the stated tolerance of the proven bound becomes ``feasible``."""
    if first is not None and status in SUCCESS:
        value = method.answer_value(task, first)
        if value is not None:
            diagnostics["answer_value"] = float(value)
    record = method.certificate_record(status, diagnostics)
    if record.status == "optimal" and not record.within_tolerance():
        record = method.certificate_record("feasible", diagnostics)
    return record
