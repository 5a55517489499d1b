""":class:`AuditResult`: the per-row table of an audit and every aggregate computed from it."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._utils._deps import import_optional
from .._utils._values import share_percent
from ..exceptions import ValidationError
from ..methods import CounterfactualMethod, get_class
from ..methods._base import plain_guarantee
from ..result._integrity import Integrity
from ..result._json import (
    HASH_KEY,
    constraints_json,
    content_hash,
    hash_matches,
    index_key,
    jsonable,
    read_document,
)
from ..result._robustness import robustness_words
from . import _stats
from ._report import render
from ._text import GLOSSARY, measure_words

__all__ = ["AuditResult"]

FORMAT = "counterfact.audit"
VERSION = 2
#: per older format, every top-level key a document of it can have
FORMAT_KEYS = {
    1: frozenset(
        (
            "format",
            "version",
            "meta",
            "per_row",
            "sensitivity_rows",
            "summary",
            "actions",
            "change_sets",
            "sensitivity",
            "guarantee",
        )
    )
}


def _plain(meta: dict[str, Any]) -> dict[str, Any]:
    out = dict(meta)
    c = out.get("constraints")
    out["constraints"] = constraints_json(c) if c is not None and not isinstance(c, dict) else c
    s = out.get("settings")
    out["settings"] = asdict(s) if is_dataclass(s) and not isinstance(s, type) else s
    return jsonable(out)  # type: ignore[no-any-return]


class AuditResult:
    """Outcome of :func:`counterfact.audit`.

    Attributes
    ----------
    per_row : DataFrame
        One row per row of the audited population (its index): the group
        labels (``group:<name>``), the model's prediction, ``rejected``, then
        for rejected rows ``status``, ``outcome`` (``recourse`` /
        ``proven_none`` / ``unknown``; ``accepted`` for the others),
        ``reason``, ``certificate`` (the answer's guarantee), ``cost_effort``
        (the measure of effort, in changes + MAD-units), ``cost_l1``
        (the range-normalised l1 distance), ``cost_method`` (the method's own
        distance), ``cost_user`` (with costs in the requirements: the cost in
        the costs' unit), ``n_changed``, ``changed`` (tuple of features),
        ``changes`` (text), ``cost`` (the ``measure`` aggregated) and
        ``protected_changed``.  Every
        aggregate below is a function of this table and :attr:`meta`.
    sensitivity_rows : DataFrame or None
        The rows re-explained with the protected feature frozen (their own
        constraints: never mixed into ``per_row``): allowed and frozen cost,
        the frozen answer's outcome and the paired increase.
    meta : dict
        Method, parameters, constraints, target, measure, groups (level order,
        bin edges), statistical settings, wall seconds.
    result : CounterfactualResult or None
        The explained rows' result (not serialised).
    integrity : Integrity
        What vouches for the content (see :class:`~counterfact.result.Integrity`): computed
        here, or a file's matching content hash; an audit read from a format-1 file (no
        hash) or from an edited one is unverified.
    """

    def __init__(
        self,
        per_row: pd.DataFrame,
        meta: dict[str, Any],
        *,
        sensitivity_rows: pd.DataFrame | None = None,
        result: Any = None,
        integrity: Integrity | None = None,
    ) -> None:
        self.per_row = per_row
        self.integrity = integrity if integrity is not None else Integrity()
        self.meta = meta
        self.sensitivity_rows = sensitivity_rows
        self.result = result
        s = meta.get("settings")
        self._settings = _stats.Settings(
            asdict(s) if is_dataclass(s) and not isinstance(s, type) else dict(s or {})
        )  # type: ignore[arg-type]
        order = {g: list(v["order"]) for g, v in (meta.get("groups") or {}).items()}
        self._summary = _stats.summarize(per_row, order, self._settings)
        self._summary["cost_measure"] = measure_words(meta)  # what the cost columns count
        self._actions = _stats.actions(per_row, meta.get("features", []))
        self._change_sets = _stats.change_sets(per_row, self._settings.top_change_sets)
        self._sensitivity = (
            _stats.sensitivity_summary(per_row, sensitivity_rows, self._settings, meta["protected"])
            | {"by_time": bool(meta.get("protected_by_time", False))}
            if sensitivity_rows is not None and meta.get("protected")
            else None
        )

    # ------------------------------------------------------------ accessors
    @property
    def method(self) -> str:
        """Name of the audited method."""
        return str(self.meta.get("method", ""))

    @property
    def groupings(self) -> list[str]:
        """Names of the grouping columns."""
        return list((self.meta.get("groups") or {}).keys())

    @property
    def guarantee(self) -> dict[str, str]:
        """What the method's answers mean (``recourse`` and ``none``), as the method's
        class words it (``CounterfactualMethod.guarantee``)."""
        said = self.meta.get("guarantee")
        if isinstance(said, dict) and said:
            words = {str(k): str(v) for k, v in said.items()}
        else:
            cls = _method_class(self.method)
            words = (
                plain_guarantee(self.method or "method")
                if cls is None
                else cls.guarantee(self.meta.get("params") or {})
            )
        return {**words, "recourse": (words.get("recourse", "") + self._holds_words()).strip()}

    def _holds_words(self) -> str:
        """The margin and the further models every answer was asked to hold for, in words (""
        if none)."""
        p, n = self.meta.get("min_probability"), int(self.meta.get("robust_to") or 0)
        parts = (
            [f"reaches a probability of at least {share_percent(p)} for the favourable class"]
            if p is not None
            else []
        ) + (
            [f"is valid for {n} retrained cop{'y' if n == 1 else 'ies'} of the model as well"]
            if n
            else []
        )
        votes = self.meta.get("min_vote_share")
        if votes is not None:
            parts.append(f"gets at least {share_percent(votes)} of the trees' votes")
        held = robustness_words(self.meta.get("robustness"))
        return (
            (" Every answer " + " and ".join(parts) + ", checked with the real models.")
            if parts
            else ""
        ) + (
            f" Asked for {held} (each answer's share estimated on retrained copies never "
            "shown to the search; a row short of it keeps its most robust answer). Each row's "
            "answer was searched under the margin, retrained copies or share of votes chosen "
            "for it, and what is said of its cost holds among the answers under that setting."
            f"{self._short_words()}"
            if held
            else ""
        )

    def _short_words(self) -> str:
        """Under robustness: how many rows with recourse are said to reach the share, and
        that the others count as recourse too ("" for an audit saved without the column)."""
        said = self.per_row.get("robustness_reached")
        if said is None:
            return ""
        rec = self.per_row["outcome"] == "recourse"
        n, k = int(rec.sum()), int(said[rec].fillna(False).astype(bool).sum())
        if n == 0:
            return ""
        rows = "the 1 row" if n == 1 else f"the {n} rows"
        where = " (per row: robustness_reached, robustness_estimate)."
        if k == n:
            said_all = "it is" if n == 1 else f"all {n} are"
            return f" Of {rows} with recourse, {said_all} said to reach it{where}"
        rest = (
            "the other one keeps its most robust answer, short of it, and still counts"
            if n - k == 1
            else f"the other {n - k} keep their most robust answer, short of it, and still count"
        )
        verb = "is" if k == 1 else "are"
        return f" Of {rows} with recourse, {k} {verb} said to reach it; {rest} as recourse{where}"

    @property
    def proves_infeasibility(self) -> bool:
        """Whether the method's ``infeasible`` is a proof (rows counted as ``proven_none``)."""
        if "proves_infeasibility" in self.meta:
            return bool(self.meta["proves_infeasibility"])
        cls = _method_class(self.method)
        return bool(cls is not None and cls.tags.proves_infeasibility)

    def summary(self) -> pd.DataFrame:
        """Overall (grouping ``""``, group ``"all"``) and per-group figures; each figure is
        defined in :meth:`glossary`."""
        return self._summary.copy()

    def actions(self, by: str | None = None) -> pd.DataFrame:
        """How often each feature is changed (over the rows with recourse); ``by`` a grouping
        name."""
        if by is None:
            return self._actions.copy()
        if by not in self.groupings:
            raise ValidationError(f"by={by!r} is not a grouping of this audit ({self.groupings}).")
        return _stats.actions(self.per_row, self.meta.get("features", []), by=by)

    def change_sets(self, top: int | None = None) -> pd.DataFrame:
        """The ``top`` most common sets of changed features (default 10), with their share of
        the rows with recourse."""
        if top is None:
            return self._change_sets.copy()
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise ValidationError(f"change_sets(top=...) must be an int >= 1. Got {top!r}.")
        return _stats.change_sets(self.per_row, top)

    def sensitivity(self) -> dict[str, Any] | None:
        """The protected-feature sensitivity (None without ``protected=``)."""
        return None if self._sensitivity is None else dict(self._sensitivity)

    def glossary(self) -> pd.DataFrame:
        """Every figure's name and definition."""
        return pd.DataFrame(
            [{"figure": k, "name": n, "definition": d} for k, (n, d) in GLOSSARY.items()]
        )

    def __repr__(self) -> str:
        o = self._summary.iloc[0]
        return (
            f"AuditResult(method={self.method!r}, rows={int(o['n'])}, "
            f"rejected={int(o['n_rejected'])}, recourse={int(o['n_recourse'])}, "
            f"proven_none={int(o['n_proven_none'])}, unknown={int(o['n_unknown'])})"
        )

    # ---------------------------------------------------------------- export
    def to_json(self) -> str:
        """Versioned JSON: the per-row table, the settings and (for readers without Python) the
        aggregates."""

        def table(df: pd.DataFrame | None) -> Any:
            if df is None:
                return None
            cols = {}
            for c in df.columns:
                vals = df[c].tolist()
                cols[str(c)] = [list(v) if isinstance(v, tuple) else jsonable(v) for v in vals]
            return {
                "index": jsonable(list(df.index)),
                "columns": cols,
                "dtypes": {str(c): str(df[c].dtype) for c in df.columns},
            }

        payload = {
            "format": FORMAT,
            "version": VERSION,
            "meta": _plain(self.meta),
            "per_row": table(self.per_row),
            "sensitivity_rows": table(self.sensitivity_rows),
            "summary": table(self._summary),
            "actions": table(self._actions),
            "change_sets": table(self._change_sets),
            "sensitivity": jsonable(self._sensitivity),
            "guarantee": self.guarantee,
            "integrity": self.integrity.to_dict(),
        }
        payload[HASH_KEY] = content_hash(payload)
        return json.dumps(payload)

    @classmethod
    def from_json(cls, text: str, *, verify: bool = True) -> AuditResult:
        """Inverse of :meth:`to_json` (the aggregates are recomputed from the per-row table).

        The content must match the SHA-256 that :meth:`to_json` wrote; a document that
        declares format 1 (no hash) but carries a later key is refused, a genuine one
        loads as unverified (:attr:`integrity`).  ``verify=False`` loads an edited
        document (its hash no longer matches), marked unverified."""
        d = read_document(text, FORMAT, VERSION, "an audit", keys=FORMAT_KEYS)
        integrity = _written_integrity(d, verify)

        def table(t: Any) -> pd.DataFrame | None:
            if t is None:
                return None
            idx = pd.Index([index_key(v) for v in t["index"]], tupleize_cols=False)
            df = pd.DataFrame(index=idx)
            for c, vals in t["columns"].items():
                dtype = t["dtypes"].get(c, "object")
                if c == "changed":
                    df[c] = pd.Series(
                        [tuple(v) if isinstance(v, list) else () for v in vals],
                        index=idx,
                        dtype=object,
                    )
                elif dtype.startswith(("float", "int")):
                    df[c] = pd.Series([np.nan if v is None else v for v in vals], index=idx).astype(
                        dtype
                    )
                elif dtype == "bool":
                    df[c] = pd.Series(vals, index=idx, dtype=bool)
                elif dtype in ("str", "string"):  # pandas' text dtype, kept as written
                    df[c] = pd.Series(vals, index=idx, dtype=dtype)
                else:
                    df[c] = pd.Series(vals, index=idx, dtype=object)
            return df

        per_row = table(d["per_row"])
        if per_row is None:
            raise ValidationError("Audit document has no per-row table.")
        return cls(
            per_row,
            d["meta"],
            sensitivity_rows=table(d.get("sensitivity_rows")),
            integrity=integrity,
        )

    def to_html(self, path: str | Path | None = None, *, global_recourse: Any = None) -> str:
        """A self-contained HTML report (plots embedded); written to ``path`` when given.
        With ``global_recourse`` (a :class:`GlobalRecourse` of the same rows), the report
        has its section too.

        Needs the ``report`` extra (jinja2, matplotlib).
        """
        text = render(self, global_recourse)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def save(
        self, out_dir: str | Path, *, html: bool = True, global_recourse: Any = None
    ) -> dict[str, Path]:
        """Write ``summary.csv``, ``per_row.csv``, ``actions.csv``, ``audit.json`` (and
        ``audit.html``); with ``global_recourse``, also its ``global_*.csv`` and
        ``global.json`` (see :meth:`GlobalRecourse.save`) and its section in ``audit.html``.

        All files or none: they are written to a temporary folder inside
        ``out_dir`` and moved into place only when every one was written (a
        missing optional package for the HTML report, ``counterfact[report]``,
        leaves ``out_dir`` as it was)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out, prefix=".saving-") as tmp:
            staged = self._write(Path(tmp), html=html, global_recourse=global_recourse)
            for p in staged.values():
                os.replace(p, out / p.name)
        return {k: out / p.name for k, p in staged.items()}

    def _write(self, out: Path, *, html: bool, global_recourse: Any) -> dict[str, Path]:
        """Every file of :meth:`save`, written into ``out``."""
        if html:  # before any file: a missing extra fails first
            import_optional("jinja2", purpose="the audit's HTML report (or save(..., html=False))")
            import_optional(
                "matplotlib", purpose="the audit's HTML report (or save(..., html=False))"
            )
        paths = {
            "summary": out / "summary.csv",
            "per_row": out / "per_row.csv",
            "actions": out / "actions.csv",
            "json": out / "audit.json",
        }
        self._summary.to_csv(paths["summary"], index=False)
        pr = self.per_row.copy()
        pr["changed"] = pr["changed"].map(lambda t: ";".join(t))
        pr.to_csv(paths["per_row"], index_label="row")
        self._actions.to_csv(paths["actions"], index=False)
        paths["json"].write_text(self.to_json(), encoding="utf-8")
        if self.sensitivity_rows is not None:
            paths["sensitivity"] = out / "sensitivity_rows.csv"
            self.sensitivity_rows.to_csv(paths["sensitivity"], index_label="row")
        if global_recourse is not None:
            written = global_recourse.save(out, html=False)
            paths.update({f"global_{k}": v for k, v in written.items()})
        if html:
            paths["html"] = out / "audit.html"
            self.to_html(paths["html"], global_recourse=global_recourse)
        return paths


def _method_class(name: str) -> type[CounterfactualMethod] | None:
    """The registered class of a method name (an audit saved before its facts were kept)."""
    try:
        return get_class(name)
    except ValidationError:
        return None


def _written_integrity(d: dict[str, Any], verify: bool) -> Integrity:
    """What vouches for an audit document as read: its hash (refused when it does not
    match, unless ``verify`` is False) and what the writer said vouched for it."""
    if not isinstance(verify, bool):
        raise ValidationError(f"from_json: verify must be True or False. Got {verify!r}.")
    version = int(d["version"])
    if version < 2:  # format 1 has no hash
        return Integrity((), version)
    if not hash_matches(d):
        if verify:
            raise ValidationError(
                "Audit document: its content does not match its sha256, so it was damaged or "
                "edited after to_json wrote it. Write it again with to_json, or load it on "
                "purpose with AuditResult.from_json(text, verify=False) (marked unverified)."
            )
        return Integrity(
            (),
            version,
            ("Its content does not match its sha256: it was edited after it was written.",),
        )
    return Integrity.from_dict(d.get("integrity"), version)
