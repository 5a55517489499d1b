"""One result type for every method: :class:`CounterfactualResult`."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .constraints import Constraints, changed
from .exceptions import ValidationError
from .schema import Schema, _py

__all__ = ["STATUSES", "CounterfactualResult"]

#: Status of a query: the nearest/optimal answer was proven (exact methods),
#: some valid counterfactual was found, none exists under the constraints,
#: the time limit ran out before any was found, or the search found none.
STATUSES: tuple[str, ...] = ("optimal", "feasible", "infeasible", "timeout", "failed")
FORMAT_VERSION = 1


def _jsonable(v: Any) -> Any:
    v = _py(v)
    if isinstance(v, float) and not np.isfinite(v):
        return None
    if isinstance(v, (np.ndarray, list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _index_key(v: Any) -> Any:
    """A query id read back from JSON (lists were tuples)."""
    return tuple(_index_key(x) for x in v) if isinstance(v, list) else v


class CounterfactualResult:
    """Counterfactuals for a batch of queries.

    Attributes
    ----------
    queries : DataFrame
        The raw query rows (index: query id).
    counterfactuals : DataFrame
        Raw counterfactual rows, MultiIndex ``(query, rank)``, the schema's
        columns and dtypes.  Every row was re-checked with the real model and
        the constraints before being reported.
    status : Series
        Per query: ``optimal | feasible | infeasible | timeout | failed``.
    runtime : Series
        Seconds per query.
    diagnostics : DataFrame
        Per query, method facts (MACE's bounds, MIP gap, rejected candidates...).
    target : Series
        The desired class per query.
    confidence : Series
        Model probability of the target class for each counterfactual.
    query_confidence : Series
        Model probability of the target class for each query.
    constraints : Constraints or None
        The constraints every query was explained under.
    query_constraints : dict or None
        Per query id, its own constraints (``explain`` with one Constraints
        per row; ``constraints`` is then None).  Use :meth:`constraints_for`.
    """

    def __init__(
        self,
        *,
        queries: pd.DataFrame,
        counterfactuals: pd.DataFrame,
        status: pd.Series,
        runtime: pd.Series,
        diagnostics: pd.DataFrame,
        schema: Schema,
        target: pd.Series,
        method: str = "",
        params: dict[str, Any] | None = None,
        constraints: Constraints | None = None,
        query_constraints: Mapping[Any, Constraints] | None = None,
        model: Any = None,
        n_counterfactuals: int = 1,
        confidence: pd.Series | None = None,
        query_confidence: pd.Series | None = None,
    ) -> None:
        bad = sorted(set(status) - set(STATUSES))
        if bad:
            raise ValidationError(f"Unknown statuses {bad}; expected {list(STATUSES)}.")
        self.queries = queries
        self.counterfactuals = counterfactuals
        self.status = status
        self.runtime = runtime
        self.diagnostics = diagnostics
        self.schema = schema
        self.target = target
        self.method = method
        self.params = dict(params or {})
        self.constraints = constraints
        self.query_constraints = dict(query_constraints) if query_constraints is not None else None
        self.model = model
        self.n_counterfactuals = int(n_counterfactuals)
        idx = counterfactuals.index
        self.confidence = confidence if confidence is not None else pd.Series(np.nan, index=idx, dtype=float)
        self.query_confidence = (
            query_confidence if query_confidence is not None else pd.Series(np.nan, index=queries.index, dtype=float)
        )

    # --------------------------------------------------------------- basics
    def constraints_for(self, query: Any) -> Constraints | None:
        """The constraints query ``query`` was explained under: its own when
        ``explain`` got one Constraints per row (``query_constraints``), else
        the result's common ``constraints``."""
        if self.query_constraints is not None and query in self.query_constraints:
            return self.query_constraints[query]
        return self.constraints

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def found(self) -> pd.Series:
        """Number of counterfactuals per query."""
        if len(self.counterfactuals) == 0:
            return pd.Series(0, index=self.queries.index, dtype=int)
        counts = self.counterfactuals.groupby(level=0).size()
        return counts.reindex(self.queries.index, fill_value=0).astype(int)

    def for_query(self, query: Any) -> pd.DataFrame:
        """Counterfactuals of one query (index: rank)."""
        if len(self.counterfactuals) == 0 or query not in self.counterfactuals.index.get_level_values(0):
            return self.counterfactuals.iloc[0:0].droplevel(0) if len(self.counterfactuals.index.names) == 2 else self.counterfactuals.iloc[0:0]
        return self.counterfactuals.xs(query, level=0)

    def __repr__(self) -> str:
        counts = self.status.value_counts().to_dict()
        return (
            f"CounterfactualResult(method={self.method!r}, queries={len(self)}, "
            f"counterfactuals={len(self.counterfactuals)}, status={counts})"
        )

    def summary(self) -> pd.DataFrame:
        """Per query: status, number found, runtime, target."""
        return pd.DataFrame(
            {"status": self.status, "found": self.found, "runtime": self.runtime, "target": self.target}
        )

    # -------------------------------------------------------------- metrics
    def evaluate(self, train: Any = None, **kwargs: Any) -> pd.DataFrame:
        """Every applicable metric, one row per query (see :mod:`counterfact.metrics`)."""
        from . import metrics

        return metrics.evaluate(self, train, **kwargs)

    # ---------------------------------------------------------------- diffs
    def diffs(self) -> pd.DataFrame:
        """Long table of changes: query, rank, feature, from, to."""
        rows = []
        for (q, r), cf in self.counterfactuals.iterrows():
            x = self.queries.loc[q]
            for f in self.schema:
                if changed(f, x[f.name], cf[f.name]):
                    rows.append({"query": q, "rank": r, "feature": f.name, "from": _py(x[f.name]), "to": _py(cf[f.name])})
        return pd.DataFrame(rows, columns=["query", "rank", "feature", "from", "to"])

    def describe(self, query: Any = None) -> str:
        """Readable changes: ``query 3, #0: duration 24 -> 12; purpose car -> radio``."""
        d = self.diffs()
        lines = []
        queries = [query] if query is not None else list(self.queries.index)
        for q in queries:
            sub = d[d["query"] == q]
            if sub.empty:
                lines.append(f"query {q}: no counterfactual ({self.status.get(q, '?')})")
                continue
            for r, g in sub.groupby("rank", sort=True):
                changes = "; ".join(f"{f} {_fmt(a)} -> {_fmt(b)}" for f, a, b in zip(g["feature"], g["from"], g["to"], strict=True))
                lines.append(f"query {q}, #{r}: {changes}")
        return "\n".join(lines)

    # -------------------------------------------------------------- display
    def _repr_html_(self) -> str:
        parts = [f"<div><b>CounterfactualResult</b> ({html.escape(self.method)}): {len(self)} queries, "
                 f"{len(self.counterfactuals)} counterfactuals</div>"]
        d = self.diffs()
        for q in self.queries.index[:20]:
            parts.append(f"<h4>query {html.escape(str(q))} &mdash; {html.escape(str(self.status.get(q)))}</h4>")
            sub = d[d["query"] == q]
            if sub.empty:
                parts.append("<p>no counterfactual</p>")
            else:
                parts.append(sub.drop(columns="query").to_html(index=False, escape=True))
        if len(self.queries) > 20:
            parts.append(f"<p>... {len(self.queries) - 20} more queries</p>")
        return "\n".join(parts)

    # ---------------------------------------------------------------- export
    def to_frame(self) -> pd.DataFrame:
        """Counterfactuals with the per-query status and runtime as extra columns."""
        cf = self.counterfactuals.copy()
        if len(cf):
            q = cf.index.get_level_values(0)
            cf["_status"] = self.status.reindex(q).to_numpy()
            cf["_confidence"] = self.confidence.reindex(cf.index).to_numpy()
        return cf

    def to_csv(self, path: str | Path) -> None:
        """Counterfactuals (with status) as CSV."""
        self.to_frame().to_csv(path)

    def to_parquet(self, path: str | Path) -> None:
        """Counterfactuals (with status) as Parquet (needs pyarrow)."""
        from ._deps import import_optional

        import_optional("pyarrow", purpose="Parquet export")
        frame = self.to_frame().reset_index()
        for c in frame.columns:
            if frame[c].dtype == object:
                frame[c] = frame[c].astype(str)
        frame.to_parquet(path)

    def to_json(self) -> str:
        """Versioned JSON (the model is not serialised)."""
        def rows(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: _jsonable(v) for k, v in r.items()} for r in df.to_dict(orient="records")]

        cf = self.counterfactuals
        payload = {
            "format": "counterfact.result",
            "version": FORMAT_VERSION,
            "method": self.method,
            "params": _jsonable(self.params),
            "schema": self.schema.to_dict(),
            "constraints": _safe_constraints(self.constraints),
            "query_constraints": (
                [[_jsonable(q), _safe_constraints(c)] for q, c in self.query_constraints.items()]
                if self.query_constraints is not None
                else None
            ),
            "n_counterfactuals": self.n_counterfactuals,
            "queries": {"index": _jsonable(list(self.queries.index)), "rows": rows(self.queries)},
            "counterfactuals": {
                "index": _jsonable([list(t) for t in cf.index]) if len(cf) else [],
                "rows": rows(cf),
            },
            "status": _jsonable(list(self.status.reindex(self.queries.index))),
            "runtime": _jsonable(list(self.runtime.reindex(self.queries.index))),
            "target": _jsonable(list(self.target.reindex(self.queries.index))),
            "confidence": _jsonable(list(self.confidence.reindex(cf.index))) if len(cf) else [],
            "query_confidence": _jsonable(list(self.query_confidence.reindex(self.queries.index))),
            "diagnostics": {
                "columns": list(map(str, self.diagnostics.columns)),
                "rows": rows(self.diagnostics.reindex(self.queries.index)),
            },
        }
        return json.dumps(payload)

    @classmethod
    def from_json(cls, text: str) -> CounterfactualResult:
        """Inverse of :meth:`to_json`."""
        d = json.loads(text)
        if d.get("format") != "counterfact.result":
            raise ValidationError("Not a counterfact result document (missing format tag).")
        if d.get("version", 0) > FORMAT_VERSION:
            raise ValidationError(
                f"Result format version {d['version']} is newer than this counterfact "
                f"understands ({FORMAT_VERSION}); upgrade counterfact."
            )
        schema = Schema.from_dict(d["schema"])
        qidx = pd.Index(d["queries"]["index"])
        queries = schema.coerce(pd.DataFrame(d["queries"]["rows"], columns=schema.names).set_axis(qidx))
        cidx = pd.MultiIndex.from_tuples([tuple(t) for t in d["counterfactuals"]["index"]], names=["query", "rank"]) if d["counterfactuals"]["index"] else pd.MultiIndex.from_tuples([], names=["query", "rank"])
        cfs = pd.DataFrame(d["counterfactuals"]["rows"], columns=schema.names)
        cfs = schema.coerce(cfs) if len(cfs) else cfs
        cfs.index = cidx
        diag = pd.DataFrame(d["diagnostics"]["rows"], columns=d["diagnostics"]["columns"])
        diag.index = qidx
        return cls(
            queries=queries,
            counterfactuals=cfs,
            status=pd.Series(d["status"], index=qidx, dtype=object),
            runtime=pd.Series(d["runtime"], index=qidx, dtype=float),
            diagnostics=diag,
            schema=schema,
            target=pd.Series(d["target"], index=qidx),
            method=d["method"],
            params=d["params"],
            constraints=Constraints.from_dict(d["constraints"]) if d.get("constraints") else None,
            query_constraints=(
                {_index_key(q): Constraints.from_dict(c) if c else Constraints() for q, c in d["query_constraints"]}
                if d.get("query_constraints") is not None
                else None
            ),
            n_counterfactuals=d["n_counterfactuals"],
            confidence=pd.Series(d["confidence"], index=cidx, dtype=float),
            query_confidence=pd.Series(d["query_confidence"], index=qidx, dtype=float),
        )

    # ----------------------------------------------------------------- join
    @classmethod
    def concat(cls, results: Sequence[CounterfactualResult]) -> CounterfactualResult:
        """Join results of the same method over disjoint query sets (chunked runs)."""
        if not results:
            raise ValidationError("concat needs at least one result.")
        first = results[0]
        common: Constraints | None = first.constraints
        per_query: dict[Any, Constraints] | None = None
        same = all(r.query_constraints is None for r in results) and all(
            _safe_constraints(r.constraints) == _safe_constraints(first.constraints) for r in results
        )
        if not same:  # different constraints per part: keep each query's own
            common = None
            per_query = {}
            for r in results:
                for q in r.queries.index:
                    c = r.constraints_for(q)
                    per_query[q] = c if c is not None else Constraints()
        return cls(
            queries=pd.concat([r.queries for r in results]),
            counterfactuals=pd.concat([r.counterfactuals for r in results]),
            status=pd.concat([r.status for r in results]),
            runtime=pd.concat([r.runtime for r in results]),
            diagnostics=pd.concat([r.diagnostics for r in results]),
            schema=first.schema,
            target=pd.concat([r.target for r in results]),
            method=first.method,
            params=first.params,
            constraints=common,
            query_constraints=per_query,
            model=first.model,
            n_counterfactuals=first.n_counterfactuals,
            confidence=pd.concat([r.confidence for r in results]),
            query_confidence=pd.concat([r.query_confidence for r in results]),
        )


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _safe_constraints(c: Constraints | None) -> Any:
    if c is None:
        return None
    try:
        return _jsonable(c.to_dict())
    except Exception:  # non-serialisable causal functions: keep the rest
        return _jsonable({k: v for k, v in Constraints(
            immutable=c.immutable, increasing=c.increasing, decreasing=c.decreasing, ranges=c.ranges,
            allowed_values=c.allowed_values, features_to_vary=c.features_to_vary, max_changes=c.max_changes,
        ).to_dict().items()})
