""":class:`GlobalRecourse`: the chosen actions, who each one helps, and every figure computed
from the per-person table."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...result._integrity import Integrity
from ...result._json import HASH_KEY, content_hash, hash_matches, index_key, jsonable, read_document
from ...schema import Schema
from .._actions import Action
from .._stats import Settings
from . import _report
from ._stats import action_table, summarize
from ._text import GLOBAL_GLOSSARY, findings
from ._verify import consistency_problems, model_problems, refuse

__all__ = ["GlobalRecourse"]

FORMAT = "counterfact.global_recourse"
VERSION = 2
#: per older format, every top-level key a document of it can have
FORMAT_KEYS = {
    1: frozenset(
        (
            "format",
            "version",
            "meta",
            "actions",
            "per_row",
            "counterfactuals",
            "curve",
            "summary",
            "action_table",
        )
    )
}


class GlobalRecourse:
    """Outcome of :func:`counterfact.global_recourse`.

    Attributes
    ----------
    per_row : DataFrame
        One row per row of ``X`` (its index): the group labels (``group:<name>``),
        ``rejected``; for rejected people their per-person answer (``individual``:
        ``recourse`` / ``proven_none`` / ``unknown``, ``individual_status``,
        ``individual_proven``, ``individual_cost``), ``covered``, ``action`` (the
        cheapest chosen action that works for them), ``cost`` (its cost for them),
        ``cost_ratio`` (over their individual cost), ``n_working``, ``reason`` (why
        not covered), ``changes`` (text), and per chosen action ``works:<A>`` and
        ``cost:<A>``.  Every figure below is a function of this table and :attr:`meta`.
    rules : list of Action
        The chosen actions, in the order greedy would add them (``A1`` first).
    curve : DataFrame
        Per number of actions ``k`` from 1 to ``max_actions``: the people the best set
        of ``k`` found covers, an upper bound on the best possible among the candidates,
        whether it is proven optimal, the solver and its status.
    meta : dict
        Method, its guarantee, cost, constraints, target, groups, settings, the candidate
        counts and the seconds of each step.
    integrity : Integrity
        What vouches for the content (see :class:`~counterfact.result.Integrity`): computed
        here, a file's matching content hash, a re-check with the model when read.
    """

    def __init__(
        self,
        per_row: pd.DataFrame,
        actions: list[list[dict[str, Any]]],
        counterfactuals: pd.DataFrame,
        meta: dict[str, Any],
        curve: pd.DataFrame,
        integrity: Integrity | None = None,
    ) -> None:
        self.per_row = per_row
        self.integrity = integrity if integrity is not None else Integrity()
        self.meta = meta
        self.curve = curve
        self.schema = Schema.from_dict(meta["schema"])
        self.rules = [Action.from_dict(a) for a in actions]
        self.names = [f"A{k + 1}" for k in range(len(self.rules))]
        self._settings = Settings(meta.get("settings") or {})
        self._order = {
            g: [str(v) for v in info["order"]] for g, info in (meta.get("groups") or {}).items()
        }
        self._reached = counterfactuals
        self._summary = summarize(per_row, self._order, self._settings)
        self._actions = action_table(
            per_row,
            self.names,
            [a.describe(self.schema) for a in self.rules],
            self._order,
            self._settings,
        )

    # ------------------------------------------------------------ accessors
    @property
    def actions(self) -> pd.DataFrame:
        """One row per chosen action (index ``A1``, ``A2``, ...): description, the people
        it works for (``n_works``, ``coverage`` with its interval), whom it adds to the
        actions before it (``n_new``, ``cumulative_coverage``), to whom it is assigned
        (``n_assigned``), its median cost over the people it works for, and its coverage
        in every group (``coverage:<grouping>=<group>``)."""
        return self._actions.copy()

    @property
    def counterfactuals(self) -> pd.DataFrame:
        """Indexed like ``X``: the row each person reaches with their action (missing
        values where no action works, and for the accepted)."""
        return self._reached.reindex(self.per_row.index)

    @property
    def action_of(self) -> pd.Series:
        """Indexed like ``X``: the name of each person's action (``A1``, ...; None where
        no action works); ``g.actions.loc[name, "description"]`` says what it is."""
        return self.per_row["action"].replace("", None).rename("action")

    @property
    def n_rejected(self) -> int:
        """Rejected people (the denominator of every coverage)."""
        return int(self.per_row["rejected"].sum())

    @property
    def n_covered(self) -> int:
        """Rejected people for whom a chosen action works."""
        return int((self.per_row["rejected"] & self.per_row["covered"]).sum())

    @property
    def coverage(self) -> float:
        """Share of the rejected people for whom a chosen action works (NaN when none is
        rejected)."""
        return self.n_covered / self.n_rejected if self.n_rejected else float("nan")

    @property
    def groupings(self) -> list[str]:
        """Names of the grouping columns."""
        return list(self._order)

    def summary(self) -> pd.DataFrame:
        """Everyone (grouping ``""``) and every group: coverage with its interval, the
        individual recourse rate, the coverage gap to the best-covered group with its
        interval, costs and the cost ratio to each person's own counterfactual."""
        return self._summary.copy()

    def findings(self) -> list[str]:
        """The main figures in plain sentences; first, for a global recourse read from a
        file that nothing vouches for, that it is unverified (:attr:`integrity`)."""
        shown = not self.integrity.verified or self.integrity.notes
        return ([self.integrity.describe("global recourse")] if shown else []) + findings(self)

    def glossary(self) -> pd.DataFrame:
        """Every figure's name and definition."""
        return pd.DataFrame(
            [{"figure": k, "name": n, "definition": d} for k, (n, d) in GLOBAL_GLOSSARY.items()]
        )

    def __repr__(self) -> str:
        return (
            f"GlobalRecourse(method={self.meta.get('method')!r}, actions={len(self.rules)}, "
            f"rejected={self.n_rejected}, covered={self.n_covered}, coverage={self.coverage:.3f})"
        )

    # ---------------------------------------------------------------- export
    def to_json(self) -> str:
        """Versioned JSON: the per-person table, the actions, the rows reached, the curve,
        the settings and (for readers without Python) the aggregates."""
        payload = {
            "format": FORMAT,
            "version": VERSION,
            "meta": jsonable(self.meta),
            "actions": [a.to_dict() for a in self.rules],
            "per_row": _table_json(self.per_row),
            "counterfactuals": _table_json(self._reached),
            "curve": _table_json(self.curve),
            "summary": _table_json(self._summary),
            "action_table": _table_json(self._actions.reset_index()),
            "integrity": self.integrity.to_dict(),
        }
        payload[HASH_KEY] = content_hash(payload)
        return json.dumps(payload)

    @classmethod
    def from_json(
        cls, text: str, *, verify: bool = True, model: Any = None, data: Any = None
    ) -> GlobalRecourse:
        """Inverse of :meth:`to_json` (the aggregates are recomputed from the per-person table).

        The per-person table must agree with itself (who is covered, by which action), and
        the content with the SHA-256 that :meth:`to_json` wrote; a document that declares
        format 1 (no hash) but carries a later key is refused, a genuine one loads as
        unverified (:attr:`integrity`).

        Parameters
        ----------
        text : str
            The JSON document written by :meth:`to_json`.
        verify : bool, default True
            Check the content hash.  ``False`` loads an edited document (its hash no longer
            matches); it then needs ``model`` and ``data``.
        model : classifier, optional
            Re-check with this fitted model: every covered person's reached row must be
            predicted as the target.
        data : DataFrame or Dataset, optional
            With ``model``, the population the global recourse was computed for: each
            person's rejection and every cell that says an action works for them are
            re-derived (the action applied to their row, checked with the model).

        Raises
        ------
        ValidationError
            Naming what is wrong: not a global-recourse document, a newer or a lowered
            format version, a hash that does not match, a table that contradicts itself, or
            a claim that the model contradicts.
        """
        _check_arguments(verify, model, data)
        d = read_document(text, FORMAT, VERSION, "a global-recourse", keys=FORMAT_KEYS)
        integrity = _written_integrity(d, verify)
        g = _build(cls, d, integrity)
        refuse(consistency_problems(g.per_row, g.names), "rows contradict the table itself")
        if model is None:
            return g
        refuse(model_problems(g, model, data), "claims fail the re-check with the given model")
        g.integrity = replace(
            integrity,
            verified_by=(*integrity.verified_by, *(("model",) if data is not None else ())),
            notes=(*integrity.notes, *_unchecked(integrity, data)),
        )
        return g

    def to_html(self, path: str | Path | None = None) -> str:
        """A self-contained HTML page of the global recourse (plot embedded); written to
        ``path`` when given.  Needs the ``report`` extra (jinja2, matplotlib)."""
        text = _report.page(self)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    def save(
        self, out_dir: str | Path, *, html: bool = True, prefix: str = "global"
    ) -> dict[str, Path]:
        """Write ``<prefix>_actions.csv``, ``_summary.csv``, ``_per_row.csv``,
        ``_counterfactuals.csv``, ``<prefix>.json`` (and ``<prefix>.html``)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            k: out / f"{prefix}_{k}.csv"
            for k in ("actions", "summary", "per_row", "counterfactuals")
        }
        self._actions.to_csv(paths["actions"], index_label="action")
        self._summary.to_csv(paths["summary"], index=False)
        self.per_row.to_csv(paths["per_row"], index_label="row")
        self._reached.to_csv(paths["counterfactuals"], index_label="row")
        paths["json"] = out / f"{prefix}.json"
        paths["json"].write_text(self.to_json(), encoding="utf-8")
        if html:
            paths["html"] = out / f"{prefix}.html"
            self.to_html(paths["html"])
        return paths


def _table_json(df: pd.DataFrame) -> dict[str, Any]:
    cols = {str(c): [jsonable(v) for v in df[c].tolist()] for c in df.columns}
    return {
        "index": jsonable(list(df.index)),
        "columns": cols,
        "dtypes": {str(c): str(df[c].dtype) for c in df.columns},
    }


def _table_from_json(t: dict[str, Any]) -> pd.DataFrame:
    idx = pd.Index([index_key(v) for v in t["index"]], tupleize_cols=False)
    df = pd.DataFrame(index=idx)
    for c, vals in t["columns"].items():
        dtype = t["dtypes"].get(c, "object")
        if dtype.startswith(("float", "int")):
            df[c] = pd.Series([np.nan if v is None else v for v in vals], index=idx, dtype=float)
            if dtype.startswith("int") and not df[c].isna().any():
                df[c] = df[c].astype(dtype)
        elif dtype == "bool":
            df[c] = pd.Series(vals, index=idx, dtype=bool)
        elif dtype in ("str", "string"):  # pandas' text dtype, kept as written
            df[c] = pd.Series(vals, index=idx, dtype=dtype)
        else:
            df[c] = pd.Series(vals, index=idx, dtype=object)
    return df


def _check_arguments(verify: Any, model: Any, data: Any) -> None:
    if not isinstance(verify, bool):
        raise ValidationError(f"from_json: verify must be True or False. Got {verify!r}.")
    if not verify and (model is None or data is None):
        raise ValidationError(
            "GlobalRecourse.from_json(verify=False) loads a document whose content hash does "
            "not match (an edited file) only with the model and the population to re-check "
            "it: pass model=<the fitted model> and data=<the rows it was computed for>."
        )
    if data is not None and model is None:
        raise ValidationError("GlobalRecourse.from_json: data= needs model=<the fitted model>.")


def _unchecked(integrity: Integrity, data: Any) -> tuple[str, ...]:
    """What a re-check with the model left unchecked, in words: without ``data``, who is
    rejected and which actions work; without a hash that vouches for them, the costs."""
    notes = []
    if data is None:
        notes.append(
            "The rows the covered people reach were re-checked with the model; who is "
            "rejected and which actions work for whom were not (pass data=<the population> "
            "with model=)."
        )
    if "sha256" not in integrity.verified_by:
        notes.append(
            "Its costs (each person's own and each action's) and their ratios were not "
            "re-checked: a model cannot price an action, and the file's hash does not "
            "vouch for them."
        )
    return tuple(notes)


def _written_integrity(d: dict[str, Any], verify: bool) -> Integrity:
    """What vouches for the document as read: its hash (refused when it does not match,
    unless ``verify`` is False) and what the writer said vouched for it."""
    version = int(d["version"])
    if version < 2:  # format 1 has no hash
        return Integrity((), version)
    if not hash_matches(d):
        if verify:
            raise ValidationError(
                "Global-recourse document: its content does not match its sha256, so it was "
                "damaged or edited after to_json wrote it. Write it again with to_json; to load "
                "an edited file on purpose, use GlobalRecourse.from_json(text, verify=False, "
                "model=<the fitted model>, data=<the population>), which re-checks it."
            )
        return Integrity((), version)
    return Integrity.from_dict(d.get("integrity"), version)


def _build(cls: Any, d: dict[str, Any], integrity: Integrity) -> GlobalRecourse:
    """The object of a parsed document (ValidationError when a part is damaged)."""
    try:
        meta = d["meta"]
        schema = Schema.from_dict(meta["schema"])
        reached = _table_from_json(d["counterfactuals"])
        reached = (
            schema.coerce(reached[schema.names])
            if len(reached)
            else pd.DataFrame(columns=schema.names)
        )
        return cls(  # type: ignore[no-any-return]
            _table_from_json(d["per_row"]),
            d["actions"],
            reached,
            meta,
            _table_from_json(d["curve"]),
            integrity,
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ValidationError(
            f"Global-recourse document is damaged: {type(exc).__name__}: {exc}. Write it again "
            "with to_json."
        ) from None
