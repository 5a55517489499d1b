""":class:`GlobalRecourse`: the chosen actions, who each one helps, and every figure computed
from the per-person table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...result._json import index_key, jsonable, read_document
from ...schema import Schema
from .._actions import Action
from .._stats import Settings
from . import _report
from ._stats import action_table, summarize
from ._text import GLOBAL_GLOSSARY, findings

__all__ = ["GlobalRecourse"]

FORMAT = "counterfact.global_recourse"
VERSION = 1


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
    """

    def __init__(
        self,
        per_row: pd.DataFrame,
        actions: list[list[dict[str, Any]]],
        counterfactuals: pd.DataFrame,
        meta: dict[str, Any],
        curve: pd.DataFrame,
    ) -> None:
        self.per_row = per_row
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
        """The main figures in plain sentences."""
        return findings(self)

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
        }
        return json.dumps(payload)

    @classmethod
    def from_json(cls, text: str) -> GlobalRecourse:
        """Inverse of :meth:`to_json` (the aggregates are recomputed from the per-person table)."""
        d = read_document(text, FORMAT, VERSION, "a global-recourse")
        meta = d["meta"]
        schema = Schema.from_dict(meta["schema"])
        reached = _table_from_json(d["counterfactuals"])
        reached = (
            schema.coerce(reached[schema.names])
            if len(reached)
            else pd.DataFrame(columns=schema.names)
        )
        return cls(
            _table_from_json(d["per_row"]),
            d["actions"],
            reached,
            meta,
            _table_from_json(d["curve"]),
        )

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
        else:
            df[c] = pd.Series(vals, index=idx, dtype=object)
    return df
