"""What a benchmark run left behind: the cells that errored."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ._runner import _cell_id, _cells
from ._spec import Spec

__all__ = ["failed_cells"]

_COLUMNS = ["cell", "dataset", "model", "method", "seed", "fold", "reason"]


def _spec_cells(spec: Spec) -> set[str]:
    return {_cell_id(ds.id, mo.id, me.id, seed, fold) for ds, mo, me, seed, fold in _cells(spec)}


def failed_cells(out: str | Path, spec: Spec | None = None) -> pd.DataFrame:
    """The cells of a results folder whose status is ``error``.

    Parameters
    ----------
    out : path
        The results folder of :func:`counterfact.benchmark.run`.
    spec : Spec, optional
        Only the cells of this spec (a folder may hold cells of earlier runs).

    Returns
    -------
    DataFrame
        One row per errored cell: ``cell``, ``dataset``, ``model``, ``method``,
        ``seed``, ``fold`` (``None`` without folds), ``reason`` (skipped cells -- a missing
        optional dependency, an unsupported model -- are not failures).
    """
    folder = Path(out) / "cells"
    wanted = _spec_cells(spec) if spec is not None else None
    rows = []
    for meta_path in sorted(folder.glob("*.json")):
        if meta_path.name.endswith(".result.json"):
            continue
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if meta.get("status") != "error" or (wanted is not None and meta.get("cell") not in wanted):
            continue
        rows.append({k: meta.get(k) for k in _COLUMNS})
    return pd.DataFrame(rows, columns=_COLUMNS)
