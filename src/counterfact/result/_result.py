"""One result type for every method: :class:`CounterfactualResult`."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import metrics
from .._utils._deps import import_optional
from ..constraints import Constraints
from ..constraints._costs import MEASURES, BoundCosts, Costs
from ..exceptions import ValidationError
from ..schema import Schema
from . import _time
from ._certificate import Certificate
from ._integrity import Integrity
from ._json import constraints_json, dump, load
from ._notice import notice, reasons
from ._region import Region
from ._robustness import held_words, robustness_note, robustness_table, scope_words
from ._status import DEFAULT_REASONS, STATUSES, SUCCESS
from ._text import (
    Change,
    MeasureWords,
    certificate_text,
    describe_changes,
    measure_words,
    plain_certificate,
    timed_changes,
)
from ._text import changes as _changes

__all__ = ["CounterfactualResult"]


#: ``robustness()``'s columns in :meth:`CounterfactualResult.to_frame`
_ROBUSTNESS_COLUMNS = {
    "estimate": "_robustness",
    "low": "_robustness_low",
    "high": "_robustness_high",
    "reached": "_reached",
    "setting": "_setting",
}


def _with_reasons(diagnostics: pd.DataFrame, status: pd.Series) -> pd.DataFrame:
    """A copy of ``diagnostics`` whose ``reason`` column names the cause of every
    non-success status (the method's own reason, else :data:`DEFAULT_REASONS`)."""
    diag = diagnostics.copy()
    if diag.index.equals(status.index):
        st = status
    elif len(diag) == 0:
        diag = pd.DataFrame(index=status.index)
        st = status
    else:
        st = status.reindex(diag.index)
    old = (
        diag["reason"]
        if "reason" in diag.columns
        else pd.Series(None, index=diag.index, dtype=object)
    )
    reasons = []
    for s, r in zip(st.to_numpy(), old.to_numpy(), strict=True):
        missing = r is None or (isinstance(r, float) and np.isnan(r)) or r == ""
        if s in SUCCESS:
            reasons.append(None if missing else r)
        else:
            reasons.append(DEFAULT_REASONS.get(str(s), "no counterfactual") if missing else str(r))
    diag["reason"] = pd.Series(reasons, index=diag.index, dtype=object)
    return diag


def _cost_attrs(bound: Any) -> dict[str, Any]:
    """What a Series of costs in ``bound`` is in: its unit, unit_scale and measure."""
    scale = float(bound.costs.unit_scale or 1.0) if bound.unit else None
    return {"unit": bound.unit, "unit_scale": scale, "measure": str(measure_words(bound.costs))}


def _sentences(first: str, then: str) -> str:
    """``first`` followed by the sentence ``then`` (``first`` closed with a full stop)."""
    if not then:
        return first
    stop = "" if not first or first.rstrip().endswith((".", "!", "?")) else "."
    return f"{first}{stop} {then}".strip()


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
        Per query: ``optimal | feasible | infeasible | timeout | failed | invalid``.
    runtime : Series
        Seconds per query.
    diagnostics : DataFrame
        Per query, method facts (MACE's bounds, MIP gap, rejected candidates...);
        its ``reason`` column names the cause of every non-success status (see
        :attr:`reason`).
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
    certificates : Series
        Per query, the guarantee behind its answer in plain words, worded by
        the method's class when it explained the query (:meth:`certificate`).
    certificate_records : Series
        Per query, the certificate's fields (a :class:`Certificate`: measure,
        the answer's value, the proven bound, the tolerances, the grid; None
        where the method gave none); :meth:`certificate_record`.
    requirements : dict
        What every counterfactual was asked to satisfy beyond the model's
        decision: ``min_probability`` (the least probability of the target) and
        ``robust_to`` (how many other models it also holds for).
    costs : BoundCosts or None
        The costs the call was explained under (``Requirements(costs=...)``), with
        their unit; :meth:`cost` gives each answer's cost.
    regions : dict
        ``(query, rank) -> Region`` for the counterfactuals whose certified region
        was computed (``Requirements(regions=True)`` or :meth:`region`).
    integrity : Integrity
        What vouches for the content: computed by ``explain``, a file's matching
        content hash, a re-check with the model when read; a file of a format
        without a hash read without a model is unverified (:meth:`describe` says so).
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
        certificates: pd.Series | None = None,
        certificate_records: pd.Series | None = None,
        requirements: Mapping[str, Any] | None = None,
        regions: Mapping[tuple[Any, int], Region] | None = None,
        costs: BoundCosts | None = None,
        region_source: Callable[..., Region] | None = None,
        integrity: Integrity | None = None,
    ) -> None:
        bad = sorted(set(status) - set(STATUSES))
        if bad:
            raise ValidationError(f"Unknown statuses {bad}; expected {list(STATUSES)}.")
        self.queries = queries
        self.counterfactuals = counterfactuals
        self.status = status
        self.runtime = runtime
        self.diagnostics = _with_reasons(diagnostics, status)
        self.schema = schema
        self.target = target
        self.method = method
        self.params = dict(params or {})
        self.constraints = constraints
        self.query_constraints = dict(query_constraints) if query_constraints is not None else None
        self.model = model
        self.n_counterfactuals = int(n_counterfactuals)
        self._fill(confidence, query_confidence, certificates)
        self.certificate_records = (
            certificate_records
            if certificate_records is not None
            else pd.Series(None, index=queries.index, dtype=object)
        )
        self.requirements: dict[str, Any] = {"min_probability": None, "robust_to": 0}
        self.requirements.update(requirements or {})
        #: computed regions; :meth:`region` adds the ones it computes on demand
        self.regions: dict[tuple[Any, int], Region] = dict(regions or {})
        self.costs = costs
        #: computes a region on demand (from the pipeline; not saved with the result)
        self.region_source = region_source
        self.integrity = integrity if integrity is not None else Integrity()
        #: horizon (months) -> the result of one explain call under that horizon
        #: (``explain_by_horizon``; read by :meth:`plans`, not saved with the result)
        self.horizon_results: dict[int, CounterfactualResult] = {}

    def _fill(
        self,
        confidence: pd.Series | None,
        query_confidence: pd.Series | None,
        certificates: pd.Series | None,
    ) -> None:
        """The per-row series, NaN (or no text) where not given."""
        idx, qidx = self.counterfactuals.index, self.queries.index
        self.confidence = (
            confidence if confidence is not None else pd.Series(np.nan, index=idx, dtype=float)
        )
        self.query_confidence = (
            query_confidence
            if query_confidence is not None
            else pd.Series(np.nan, index=qidx, dtype=float)
        )
        self.certificates = (
            certificates if certificates is not None else pd.Series(None, index=qidx, dtype=object)
        )

    def with_model(self, model: Any) -> CounterfactualResult:
        """A copy of the result that holds ``model`` (the explained model, e.g. after the
        result was read from JSON or joined from chunks, which do not keep it); this
        result is not changed."""
        return type(self)(**{**self.parts(), "model": model})

    def parts(self) -> dict[str, Any]:
        """The constructor's keywords that rebuild this result (a copy of it:
        ``type(r)(**r.parts())``)."""
        return {
            "queries": self.queries,
            "counterfactuals": self.counterfactuals,
            "status": self.status,
            "runtime": self.runtime,
            "diagnostics": self.diagnostics,
            "schema": self.schema,
            "target": self.target,
            "method": self.method,
            "params": self.params,
            "constraints": self.constraints,
            "query_constraints": self.query_constraints,
            "model": self.model,
            "n_counterfactuals": self.n_counterfactuals,
            "confidence": self.confidence,
            "query_confidence": self.query_confidence,
            "certificates": self.certificates,
            "certificate_records": self.certificate_records,
            "requirements": self.requirements,
            "regions": self.regions,
            "costs": self.costs,
            "region_source": self.region_source,
            "integrity": self.integrity,
        }

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
        if len(
            self.counterfactuals
        ) == 0 or query not in self.counterfactuals.index.get_level_values(0):
            # the same empty frame whichever way the result was built: an integer rank index
            empty = self.counterfactuals.iloc[0:0].reset_index(drop=True)
            empty.index = pd.Index([], dtype="int64", name="rank")
            return empty
        return self.counterfactuals.xs(query, level=0)

    def __repr__(self) -> str:
        counts = self.status.value_counts().to_dict()
        return (
            f"CounterfactualResult(method={self.method!r}, queries={len(self)}, "
            f"counterfactuals={len(self.counterfactuals)}, status={counts})"
        )

    @property
    def reason(self) -> pd.Series:
        """Per query, why it has no counterfactual, or fewer than asked ("2 of 3: no
        other option within the method's limits that is not dominated by these or a
        copy of one; ..."); empty text when it got all it asked for: the method's
        own reason, else a default per status (``failed``: "no counterfactual
        found", ``timeout``: "time limit reached before a counterfactual was
        found", ...)."""
        r = self.diagnostics["reason"].reindex(self.queries.index)
        return r.where(r.notna(), "").astype(object)

    def summary(self) -> pd.DataFrame:
        """Per query: status, number found, runtime, target, reason."""
        return pd.DataFrame(
            {
                "status": self.status,
                "found": self.found,
                "runtime": self.runtime,
                "target": self.target,
                "reason": self.reason,
            }
        )

    def certificate(self, query: Any, *, numbers: bool = True) -> str:
        """The guarantee behind ``query``'s answer in plain words, as the method
        worded it (``CounterfactualMethod.certificate``); for a result without
        one (written by an older version) the text that holds for any method.

        ``numbers=False``: the same guarantee for a lay reader, with the measure named
        in words and no raw values or bounds (``"MACE: proven: no answer with fewer
        changes or smaller moves (to within 1 %)"``; :meth:`measure_words` says how the
        measure counts); the numbers stay in :meth:`certificate_record`. Both end with
        what the answers were held to beyond the constraints: a margin, a share of the
        trees' votes or other models asked for ("; required: a probability of at least 0.6
        for the target"), or under ``Requirements(robustness=p)`` the setting the row kept (",
        under the setting chosen for robustness 90 % (margin 0.8)"); the proof holds
        among those answers."""
        text = self.certificates.get(query) if query in self.certificates.index else None
        if not (isinstance(text, str) and text):
            d = self.diagnostics.loc[query].to_dict() if query in self.diagnostics.index else {}
            text = certificate_text(self.method, str(self.status.get(query, "")), d)
        scope = scope_words(self, query)
        if numbers:
            return _sentences(text + scope, robustness_note(self, query))
        plain = plain_certificate(
            text.partition(": ")[0],
            str(self.status.get(query, "")),
            self.measure_words(),
            self.certificate_record(query),
            text,
            str(self.reason.get(query, "")) or None,
        )
        return plain + scope

    def certificate_record(self, query: Any) -> Certificate | None:
        """The fields behind ``query``'s certificate (:class:`Certificate`: the measure,
        the answer's value, the proven lower bound, the relative gap and absolute
        floor, the margin tolerance, the grids the proof is over, the status they
        support, the sentence); None when the method gave none."""
        if query not in self.certificate_records.index:
            return None
        rec = self.certificate_records.get(query)
        return rec if isinstance(rec, Certificate) else None

    def region(self, query: Any, rank: int = 0) -> Region:
        """The certified region around counterfactual ``rank`` of ``query``: a box of
        counterfactuals (see :class:`~counterfact.result.Region`), computed at
        ``explain`` (``Requirements(regions=True)``) or now, while the result still holds the
        models it came from."""
        key = (query, int(rank))
        if key in self.regions:
            return self.regions[key]
        cfs = self.for_query(query) if query in self.queries.index else None
        if cfs is None or rank not in cfs.index:
            raise ValidationError(f"Query {query!r} has no counterfactual of rank {rank!r}.")
        if self.region_source is None:
            raise ValidationError(
                "This result has no region for that counterfactual and no longer holds the models "
                "to compute one (it was loaded from JSON or joined from chunks): explain with "
                "requirements=cf.Requirements(regions=True)."
            )
        self.regions[key] = self.region_source(query, int(rank), cfs.loc[rank])
        return self.regions[key]

    def robustness(self) -> pd.DataFrame:
        """Each answer's estimated robustness (``Requirements(robustness=p)``), index
        ``(query, rank)``: the retrained copies never shown to the search nor used to
        choose that still accept it (``accepted`` of ``copies``), their share
        (``estimate``), its exact 95 % Clopper-Pearson interval (``low``, ``high``), the
        share asked for, the ``shortfall`` of the estimate (0 when it reaches it),
        whether the row is said to reach it (``reached``: the copies that choose let it
        and the estimate confirms it) and the ``setting`` the answer came from. The
        answers of one call share their held-out copies, so their estimates err together
        (docs/robust.md, "How true the estimate is")."""
        return robustness_table(self)

    def reasons(self, query: Any, rank: int = 0, max_reasons: int = 4) -> pd.DataFrame:
        """The principal reasons behind ``query``'s decision, from counterfactual ``rank``:
        each changed feature, its current value, what would have been needed, how much
        of the gap it closes alone, and a sentence; at most four, the largest first
        (see :mod:`counterfact.result._notice`)."""
        return reasons(self, query, rank, max_reasons)

    def notice(
        self,
        query: Any,
        rank: int = 0,
        *,
        max_reasons: int = 4,
        as_html: bool = False,
        target_label: str | None = None,
    ) -> str:
        """The reasons as a plain-language text (or HTML) to adapt into an adverse-action
        notice, stating how the answer was established and any margin asked for;
        ``target_label`` names the target class in the text ("approved"; default: its raw
        label)."""
        return notice(
            self, query, rank, max_reasons=max_reasons, as_html=as_html, target_label=target_label
        )

    # -------------------------------------------------------------- metrics
    def evaluate(self, train: Any = None, **kwargs: Any) -> pd.DataFrame:
        """Every applicable metric, one row per query (see :mod:`counterfact.metrics`)."""
        return metrics.evaluate(self, train, **kwargs)

    def elapsed(self) -> pd.Series:
        """Each answer's elapsed months under its timeline (index ``(query, rank)``;
        :func:`~counterfact.result._time.elapsed`)."""
        return _time.elapsed(self)

    def plans(self, query: Any, horizons: Sequence[int] | None = None) -> pd.DataFrame:
        """The cheapest answer of ``query`` for each horizon in months (default 0, 3, 6,
        12, 24), proven where the method proves (:func:`~counterfact.result._time.plans`)."""
        return _time.plans(self, query, horizons)

    def cost(
        self,
        query: Any = None,
        *,
        per_feature: bool = False,
        costs: Costs | BoundCosts | str | None = None,
        train: Any = None,
    ) -> pd.Series | pd.DataFrame:
        """Each answer's cost: its value in the measure of effort the call searched,
        ranked and proved in (``Requirements(costs=...)``; not given: the default
        measure, 1 per changed feature plus each move in MADs).  Under a timeline the
        features time advances cost nothing and the waiting, ``wait_cost`` per elapsed
        month, is added: the value the exact methods minimise.  Index ``(query,
        rank)``; the Series' ``attrs`` hold the ``unit`` (None when the measure has
        none, as the default), its ``unit_scale`` and the ``measure`` in words
        (:meth:`measure_words`).  The values are in units of cost, the weights' own:
        times ``unit_scale`` they are in the unit, as :meth:`describe`, the
        certificates and the audit's ``cost_user`` give them.

        Parameters
        ----------
        query : optional
            Only this query's answers.
        per_feature : bool
            One column per feature (the terms of the sum) instead of the total; for a
            result explained under a timeline, one more, ``"(waiting)"``.
        costs : Costs, BoundCosts or str, optional
            Measure the answers in these costs instead (a named measure such as
            ``"effort"``, a :class:`~counterfact.Costs` bound to ``train``, or costs
            already bound), for example to put answers of several results on one scale.
        train : DataFrame or Dataset, optional
            The training rows a measure is scaled by (MADs): needed with ``costs``, and
            for a result explained without costs (``costs="own"`` or a method that
            takes none), which is then measured in the default measure.
        """
        bound = self._measure(costs, train)
        cfs = self.counterfactuals
        if query is not None:
            if query not in self.queries.index:
                raise ValidationError(
                    f"Unknown query {query!r}. Queries: {list(self.queries.index)[:10]}."
                )
            cfs = cfs[cfs.index.get_level_values(0) == query] if len(cfs) else cfs
        cols = self.schema.names
        out, wait = np.full((len(cfs), len(cols)), np.nan), np.zeros(len(cfs))
        for q, rows in cfs.groupby(level=0, sort=False) if len(cfs) else []:
            pos = cfs.index.get_indexer(rows.index)
            measure = _time.time_free(self, q, bound)  # under a timeline: waiting, not moves
            out[pos] = measure.evaluate(self.queries.loc[q], rows, per_feature=True)
            wait[pos] = _time.waiting(self, q, rows)
        timed = any(_time._timeline(self, q) is not None for q in self.queries.index)
        value = (
            pd.DataFrame(out, index=cfs.index, columns=cols)
            if per_feature
            else pd.Series(out.sum(axis=1) + wait, index=cfs.index, name="cost", dtype=float)
        )
        if per_feature and timed:
            value[_time.WAITING] = wait
        value.attrs.update(_cost_attrs(bound))
        return value

    def _measure(self, costs: Any, train: Any) -> BoundCosts:
        """The bound measure :meth:`cost` evaluates in (its docstring)."""
        if isinstance(costs, BoundCosts):
            return costs
        if costs is None and self.costs is not None:
            if train is not None:
                raise ValidationError(
                    "train= scales a measure this result does not hold: its answers are "
                    "measured in the call's own costs. Pass costs=cf.Costs(...) with train= to "
                    "measure them in other costs, or leave train out."
                )
            return self.costs
        if train is None:
            raise ValidationError(
                "This result was explained without costs (costs='own': each method's own "
                "objective, or a method that takes no costs), and the default measure of "
                "effort counts moves in MADs of the training data, which a result does not "
                "keep. Pass the training rows: result.cost(train=train)."
                if costs is None
                else "costs= needs the training rows its moves are scaled by: pass train=."
            )
        X = getattr(train, "X", train)
        if not isinstance(X, pd.DataFrame):
            raise ValidationError(
                f"train must be a DataFrame or a counterfact Dataset. Got {type(train).__name__}."
            )
        c = Costs.preset(costs) if isinstance(costs, str) else costs or Costs()
        if not isinstance(c, Costs):
            raise ValidationError(
                "costs must be a cf.Costs, a bound costs object or a named measure "
                f"({sorted(MEASURES)}). Got {type(costs).__name__}."
            )
        return c.bind(self.schema, X)

    def cost_text(self, query: Any, rank: int = 0) -> str:
        """Answer ``rank`` of ``query``'s cost in plain words (``"cost about 3 months of
        saving"``; without a unit ``"cost 2.5"``), in the call's measure."""
        value = float(self.cost(query).loc[(query, rank)])
        return f"cost {self.costs.describe(value)}"  # type: ignore[union-attr]

    def measure_words(self) -> MeasureWords:
        """What "smaller" meant for these answers, in words (``str()`` of it: ``"fewer
        changes or smaller moves, counting 1 per changed feature plus each move in MADs
        (...)"``): the call's costs, else the method's own objective."""
        if self.costs is not None:
            return measure_words(self.costs.costs)
        own = ""
        for rec in self.certificate_records:
            if isinstance(rec, Certificate) and rec.measure:
                own = rec.measure
                break
        return measure_words(None, own)

    # ---------------------------------------------------------------- diffs
    def changes(self, query: Any, rank: int = 0) -> list[Change]:
        """The features counterfactual ``rank`` of ``query`` changes, with both
        values raw and formatted at the feature's resolution
        (see :func:`counterfact.result.changes`)."""
        if query not in self.queries.index:
            raise ValidationError(
                f"Unknown query {query!r}. Queries: {list(self.queries.index)[:10]}."
            )
        cfs = self.for_query(query)
        if rank not in cfs.index:
            raise ValidationError(
                f"Query {query!r} has no counterfactual of rank {rank!r} "
                f"({len(cfs)} found; status {self.status.get(query)})."
            )
        return _changes(self.schema, self.queries.loc[query], cfs.loc[rank])

    def diffs(self) -> pd.DataFrame:
        """Long table of changes, only features whose value changed: query,
        rank, feature, from, to (raw values), from_text, to_text (formatted at
        the feature's resolution)."""
        cols = ["query", "rank", "feature", "from", "to", "from_text", "to_text"]
        rows = []
        for (q, r), cf in self.counterfactuals.iterrows():
            for c in _changes(self.schema, self.queries.loc[q], cf):
                rows.append(
                    {
                        "query": q,
                        "rank": r,
                        "feature": c.feature,
                        "from": c.before,
                        "to": c.after,
                        "from_text": c.before_text,
                        "to_text": c.after_text,
                    }
                )
        return pd.DataFrame(rows, columns=cols)

    def describe(self, query: Any = None) -> str:
        """Readable changes, one line per counterfactual, with the model's probability
        of the target before and after and the answer's cost:
        ``query 3, #0: duration_months 24 -> 12; purpose 'car' -> 'radio' (P(1) 31.0 % ->
        66.0 %); cost 3.2`` (in the user's unit when the costs have one: ``cost about 3
        months of saving``), the certified region under it when one was computed, then
        the query's certificate in words, naming what "smaller" means; the first line
        says how the cost is counted (``Smaller means fewer changes or smaller moves,
        counting 1 per changed feature plus each move in MADs ...``).  A query without
        an answer gets its status and reason
        (``query 5: no counterfactual (failed: query already predicted as target)``).
        A result read from a file that nothing vouches for (an old format without a
        hash, read without a model) starts with a line saying it is unverified, and one
        with claims that were not re-checked says which (:attr:`integrity`)."""
        shown = not self.integrity.verified or self.integrity.notes
        lines = [self.integrity.describe()] if shown else []
        queries = [query] if query is not None else list(self.queries.index)
        groups = (
            {k: g.droplevel(0) for k, g in self.counterfactuals.groupby(level=0, sort=False)}
            if len(self.counterfactuals)
            else {}
        )
        measure = self.measure_words()
        if any(q in groups for q in queries):
            lines.append(f"Smaller means {measure}{_time.wait_words(self, queries)}.")
        costs = self.cost() if self.costs is not None and len(self.counterfactuals) else None
        held = self._held()
        for q in queries:
            if q not in groups:
                st, reason = self.status.get(q, "?"), self.reason.get(q, "")
                tail = f"{st}: {reason}" if reason else f"{st}"
                if st != "invalid":  # what the search was held to, too
                    tail += scope_words(self, q)
                lines.append(f"query {q}: no counterfactual ({tail})")
                continue
            lines += self._answer_lines(q, groups[q], costs, held)
            lines.append("  " + self.certificate(q, numbers=False))
        return "\n".join(lines)

    def _held(self) -> pd.DataFrame | None:
        """Under ``Requirements(robustness=p)``: each answer's estimated robustness (None
        otherwise, or with no answer)."""
        if self.requirements.get("robustness") is None or not len(self.counterfactuals):
            return None
        table = robustness_table(self)
        return table if len(table) else None

    def _answer_lines(
        self, q: Any, cfs: pd.DataFrame, costs: pd.Series | None, held: pd.DataFrame | None
    ) -> list[str]:
        """One line per answer of query ``q`` (:meth:`describe`), with its region and,
        under robustness, how many retrained models kept out of the search accept it."""
        lines = []
        x = self.queries.loc[q]
        for r, cf in cfs.sort_index().iterrows():
            cost = (
                f"; cost {self.costs.describe(float(costs.loc[(q, r)]))}"
                if self.costs is not None and costs is not None
                else ""
            )
            change = self._change_text(q, x, cf)
            lines.append(f"query {q}, #{r}: {change}{self._probability_text(q, r)}{cost}")
            region = self.regions.get((q, int(r)))
            if region is not None:
                lines.append(f"  any of: {region.describe(self.schema)}")
            if held is not None and (q, r) in held.index:
                lines.append("  " + held_words(held.loc[(q, r)]))
        return lines

    def change_text(self, query: Any, rank: int = 0) -> str:
        """Answer ``rank`` of ``query``'s changes in plain words (``"duration_months 24 ->
        12; purpose 'car' -> 'radio'"``); under a timeline with the time it takes and what
        time moves meanwhile (``"in 12 months, if savings ... (then age 26 -> 27
        years)"``)."""
        if (query, rank) not in self.counterfactuals.index:
            raise ValidationError(
                f"No answer {rank} for query {query!r}: {int(self.found.get(query, 0))} found."
            )
        return self._change_text(
            query, self.queries.loc[query], self.counterfactuals.loc[(query, rank)]
        )

    def _change_text(self, q: Any, x: pd.Series, cf: pd.Series) -> str:
        """An answer's changes; under a timeline with when: "in 8 months, if ..."."""
        items = _changes(self.schema, x, cf)
        timeline = _time._timeline(self, q)
        if timeline is None:
            return describe_changes(items)
        moved = timeline.moved_by_time(self.schema)
        return timed_changes(items, moved, timeline.elapsed(self.schema, x, cf))

    def _probability_text(self, query: Any, rank: Any) -> str:
        """`` (P(target) 49.8 % -> 50.2 %)``: the model's probability of the target before
        and after, with one decimal so that a move across the boundary never reads
        ``0.50 -> 0.50``."""
        before, after = self.query_confidence.get(query), self.confidence.get((query, rank))
        if before is None or after is None or pd.isna(before) or pd.isna(after):
            return ""
        target = self.target.get(query)
        return f" (P({target}) {100 * float(before):.1f} % -> {100 * float(after):.1f} %)"

    # -------------------------------------------------------------- display
    def _repr_html_(self) -> str:
        def esc(v: Any) -> str:
            return html.escape(str(v))

        def prob(v: Any) -> str:
            return "?" if v is None or pd.isna(v) else f"{float(v):.3f}"

        parts = [
            f"<div><b>CounterfactualResult</b> ({esc(self.method)}): {len(self)} queries, "
            f"{len(self.counterfactuals)} counterfactuals</div>"
        ]
        for q in self.queries.index[:20]:
            st = self.status.get(q)
            parts.append(
                f"<h4>query {esc(q)} &mdash; {esc(st)} (target {esc(self.target.get(q))}, "
                f"P(target) now {prob(self.query_confidence.get(q))})</h4>"
            )
            cfs = self.for_query(q)
            if len(cfs) == 0:
                reason = str(self.diagnostics["reason"].get(q) or "")
                parts.append(f"<p>no counterfactual: {esc(reason or st)}</p>")
            else:
                x = self.queries.loc[q]
                items = []
                for r, cf in cfs.sort_index().iterrows():
                    ch = "; ".join(
                        f"<b>{esc(c.feature)}</b> {esc(c.before_text)} &rarr; {esc(c.after_text)}"
                        for c in _changes(self.schema, x, cf)
                    )
                    conf = prob(self.confidence.get((q, r)))
                    items.append(
                        f"<li>#{esc(r)}: {ch} <i>(P(target) {prob(self.query_confidence.get(q))} "
                        f"&rarr; {conf})</i></li>"
                    )
                parts.append("<ul>" + "".join(items) + "</ul>")
            parts.append(f"<p><i>{esc(self.certificate(q))}</i></p>")
        if len(self.queries) > 20:
            parts.append(f"<p>... {len(self.queries) - 20} more queries</p>")
        return "\n".join(parts)

    # ---------------------------------------------------------------- export
    def to_frame(self) -> pd.DataFrame:
        """Counterfactuals with extra columns: the query's status, the answer's probability
        of the target (``_confidence``), its cost in the call's measure (``_cost``, when the
        result keeps that measure) and, under ``Requirements(robustness=p)``, its estimated
        robustness (``_robustness`` with ``_robustness_low`` and ``_robustness_high``, the
        95 % interval), ``_reached`` and the ``_setting`` it came from.  Under a timeline,
        ``_months``: the months each answer waits (its row is the person's state then)."""
        cf = self.counterfactuals.copy()
        q = cf.index.get_level_values(0)
        cf["_status"] = self.status.reindex(q).to_numpy(dtype=object)
        cf["_confidence"] = self.confidence.reindex(cf.index).to_numpy(dtype=float)
        if self.costs is not None:
            cf["_cost"] = self.cost().reindex(cf.index).to_numpy(dtype=float)
        if any(_time._timeline(self, k) is not None for k in self.queries.index):
            cf["_months"] = self.elapsed().reindex(cf.index).to_numpy()
        if self.requirements.get("robustness") is not None:
            rob = self.robustness().reindex(cf.index)
            for col, name in _ROBUSTNESS_COLUMNS.items():
                cf[name] = rob[col].to_numpy()
        return cf

    def to_csv(self, path: str | Path) -> None:
        """Counterfactuals (with status) as CSV."""
        self.to_frame().to_csv(path)

    def to_parquet(self, path: str | Path) -> None:
        """Counterfactuals (with status) as Parquet (needs pyarrow)."""
        import_optional("pyarrow", purpose="Parquet export")
        frame = self.to_frame().reset_index()
        for c in frame.columns:
            if frame[c].dtype == object:
                frame[c] = frame[c].astype(str)
        frame.to_parquet(path)

    def to_json(self) -> str:
        """Versioned JSON (the model is not serialised)."""
        return dump(self)

    @classmethod
    def from_json(
        cls,
        text: str | bytes,
        *,
        verify: bool = True,
        model: Any = None,
        robust_to: Sequence[Any] | None = None,
    ) -> CounterfactualResult:
        """Inverse of :meth:`to_json`.

        Every row is checked against the document's schema (all features
        present, numbers where the feature is numeric, whole numbers for
        integer features, known categories, changed values inside the
        domain), the counterfactuals against their queries and statuses, the
        constraints against the schema, and the content against the SHA-256
        that :meth:`to_json` wrote.  A document that declares an older format
        but carries a key that format never had is refused; one of formats 1
        and 2 (no hash) loads as unverified (:attr:`integrity`) unless it is
        re-checked with ``model``.

        Parameters
        ----------
        text : str or bytes
            The JSON document written by :meth:`to_json`.
        verify : bool, default True
            Check the content hash.  ``False`` loads a document edited on
            purpose (its hash no longer matches); it then needs ``model``.
        model : classifier, optional
            Re-check every claim with this fitted model: every counterfactual
            must be predicted as its query's target, with the margin
            (``requirements["min_probability"]``), and satisfy the query's
            constraints; every region is checked at its corners and at 200
            seeded points inside (a certified region in a file whose hash does
            not vouch for it is kept as checked, not certified).  The
            confidences are recomputed with it and it becomes the result's
            ``model``.  Required with ``verify=False``.
        robust_to : list of classifiers, optional
            The other models the answers were asked to hold for
            (``requirements["robust_to"]`` of them): each is re-checked too.
            Without them, in a file whose hash does not vouch for it, that claim
            is "not re-checked" and :attr:`integrity` says so.

        Raises
        ------
        ValidationError
            Naming what is wrong: not JSON (e.g. a truncated file), not a
            result document, a newer format version, a missing key or a value
            of the wrong type, a row that does not fit the schema, a content
            hash that does not match (a damaged or edited file), an older
            format declared by a newer document, or a counterfactual or region
            that fails the re-check with ``model`` (or a ``robust_to`` model).

        Examples
        --------
        >>> back = CounterfactualResult.from_json(text)  # doctest: +SKIP
        >>> edited = CounterfactualResult.from_json(  # doctest: +SKIP
        ...     text, verify=False, model=model
        ... )
        """
        return load(cls, text, verify=verify, model=model, robust_to=robust_to)

    # ----------------------------------------------------------------- join
    @classmethod
    def concat(
        cls, results: Sequence[CounterfactualResult], *, model: Any = None
    ) -> CounterfactualResult:
        """Join results of the same method over disjoint query sets (chunked runs).
        ``model``: the explained model the joined result holds (default: the first
        result's)."""
        if not results:
            raise ValidationError("concat needs at least one result.")
        first = results[0]
        common: Constraints | None = first.constraints
        per_query: dict[Any, Constraints] | None = None
        same = all(r.query_constraints is None for r in results) and all(
            constraints_json(r.constraints) == constraints_json(first.constraints) for r in results
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
            model=first.model if model is None else model,
            n_counterfactuals=first.n_counterfactuals,
            confidence=pd.concat([r.confidence for r in results]),
            query_confidence=pd.concat([r.query_confidence for r in results]),
            certificates=pd.concat([r.certificates.reindex(r.queries.index) for r in results]),
            certificate_records=pd.concat(
                [r.certificate_records.reindex(r.queries.index) for r in results]
            ),
            requirements=first.requirements,
            regions={k: v for r in results for k, v in r.regions.items()},
            costs=first.costs,
            integrity=Integrity.join(r.integrity for r in results),
        )
