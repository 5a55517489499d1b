"""Explaining the rows of a population analysis: what every explanation of one run shares
(:class:`Run`), and :func:`explain_rows`, which explains them through the batch layer
(:func:`counterfact.methods.explain_in_chunks`: chunked, parallel, resumable)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from ..constraints import Constraints, Costs, Requirements
from ..data import Dataset
from ..exceptions import ValidationError
from ..methods._pipeline._batch import BatchReport, explain_in_chunks
from ..models import rows_to_explain
from ..result._json import constraints_json, jsonable
from ._settings import Batch

__all__ = ["Run", "explain_rows", "population", "rejected"]

#: the file, in an ``out_dir`` folder, that says which run its chunks belong to
STAMP = "audit-run.json"


@dataclass(frozen=True)
class Run:
    """What every explanation of one audit shares: the method, the rules, the batching and
    the measure."""

    method: Any
    constraints: Constraints | None
    target: Any
    n_counterfactuals: int
    batch: Batch
    protected: str | None
    measure: str
    #: what every answer must also satisfy (``audit(requirements=...)``)
    requirements: Requirements = field(default_factory=Requirements)
    #: seconds spent earlier on the chunks this run resumed (read from the chunks' folder)
    clock: dict[str, float] = field(default_factory=dict)

    def folder(self, name: str) -> Path | None:
        """The subfolder ``name`` of the batch's ``out_dir`` (None without one)."""
        out = self.batch.out_dir
        return None if out is None else Path(out) / name

    def explain_options(self) -> dict[str, Any]:
        """The keywords of ``explain`` beyond the constraints, from the requirements."""
        if self.requirements.empty:
            return {}
        return {"requirements": self.requirements}

    def requirements_fingerprint(self) -> str:
        """What of the requirements decides the answers, for refusing to resume a run made
        under other requirements."""
        req = self.requirements
        facts: dict[str, Any] = {
            "costs": req.costs.to_dict() if isinstance(req.costs, Costs) else req.costs,
            "min_probability": req.min_probability,
            "robust_to": [joblib.hash(m) for m in req.robust_to],
        }
        if req.regions:
            facts["regions"] = True
        if req.robustness is not None:
            facts["robustness"] = [req.robustness, req.robustness_copies]
        if req.min_vote_share is not None:
            facts["min_vote_share"] = req.min_vote_share
        return json.dumps(facts, sort_keys=True, default=str)


def population(X: pd.DataFrame | Dataset, data: Any, method: Any) -> tuple[Any, Any]:
    """The audited rows, and where group columns and the favourable class are looked up:
    ``data``, else ``X`` when it is a Dataset (its feature columns are the population),
    else the method's training data."""
    if isinstance(X, Dataset):
        return X.X, X if data is None else data
    return X, data if data is not None else getattr(method, "data_", None)


def rejected(method: Any, X: pd.DataFrame, target: Any) -> np.ndarray:
    """Rows the model does not assign to ``target`` (:func:`counterfact.rows_to_explain`)."""
    chosen = rows_to_explain(method.model_.model, X, target=target, data=method.data_)
    return np.asarray(X.index.isin(chosen.index))


def _fingerprint(run: Run, X: pd.DataFrame, constraints: Constraints | None) -> str:
    """What decides the answers of these rows: refusing to resume chunks of another run."""
    method = run.method
    payload = {
        "method": method.name or type(method).__name__,
        "params": jsonable(method.get_params()),
        "constraints": constraints_json(constraints),
        "target": jsonable(run.target),
        "n_counterfactuals": run.n_counterfactuals,
        "chunk_size": run.batch.chunk_size,
        "rows": jsonable(list(X.index)),
        "values": hashlib.sha256(
            pd.util.hash_pandas_object(X, index=True).to_numpy().tobytes()
        ).hexdigest(),
    }
    fp = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    if not run.requirements.empty:  # rows explained under other requirements are not resumed
        fp = hashlib.sha256((fp + run.requirements_fingerprint()).encode()).hexdigest()
    return fp


def _claim(out_dir: Path, fp: str) -> dict[str, float]:
    """Claim ``out_dir`` for the run ``fp`` (refused when it holds another run's chunks);
    the wall seconds of each chunk written there earlier."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = out_dir / STAMP
    if stamp.exists() and json.loads(stamp.read_text()).get("fingerprint") != fp:
        raise ValidationError(
            f"out_dir {str(out_dir)!r} holds chunks of a different run (other method, "
            "parameters, constraints, target or rows); resuming would mix rows explained "
            "under different settings. Use a fresh out_dir, or delete that one."
        )
    earlier = _chunk_seconds(stamp)
    stamp.write_text(json.dumps({"fingerprint": fp, "chunk_seconds": earlier}))
    return earlier


def _chunk_seconds(stamp: Path) -> dict[str, float]:
    """The wall seconds of each chunk written by earlier runs into the same folder."""
    if not stamp.exists():
        return {}
    try:
        got = json.loads(stamp.read_text()).get("chunk_seconds") or {}
        return {str(k): float(v) for k, v in got.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def _record(run: Run, out_dir: Path, fp: str, earlier: dict[str, float], report: Any) -> None:
    """Keep each chunk's seconds in the folder; a resumed run reports the seconds of the
    chunks it did not redo too."""
    done = {**earlier, **{str(i): float(t) for i, t in report.chunk_seconds.items()}}
    (out_dir / STAMP).write_text(json.dumps({"fingerprint": fp, "chunk_seconds": done}))
    run.clock["resumed"] = run.clock.get("resumed", 0.0) + sum(
        earlier.get(str(i), 0.0) for i in report.skipped
    )


def explain_rows(
    run: Run, X: pd.DataFrame, constraints: Constraints | None, out_dir: Path | None
) -> tuple[Any, dict[Any, str]]:
    """Explain ``X`` through :func:`~counterfact.methods.explain_in_chunks`: the result, and
    the rows of failed chunks -> the reason."""
    if len(X) == 0:
        return None, {}
    fp, earlier = "", {}
    if out_dir is not None:
        fp = _fingerprint(run, X, constraints)
        earlier = _claim(out_dir, fp)
    report = _explain_in_chunks(run, X, constraints, out_dir)
    if out_dir is not None:
        _record(run, out_dir, fp, earlier, report)
    res = report.result
    if res is not None and res.query_constraints is not None:
        raise ValidationError(
            "The chunks of this audit were explained under different constraints (a stale "
            "out_dir?). An audit never mixes them: re-run with a fresh out_dir."
        )
    return res, _failed_rows(report.failed, X.index, run.batch.chunk_size)


def _explain_in_chunks(
    run: Run, X: pd.DataFrame, constraints: Constraints | None, out_dir: Path | None
) -> BatchReport:
    return explain_in_chunks(
        run.method,
        X,
        chunk_size=run.batch.chunk_size,
        out_dir=out_dir,
        n_jobs=run.batch.n_jobs,
        parallel=run.batch.parallel,
        address=run.batch.address,
        warn_partial=False,  # the audit keeps a failed chunk's rows, as unknown
        n_counterfactuals=run.n_counterfactuals,
        constraints=constraints,
        target=run.target,
        **run.explain_options(),
    )


def _failed_rows(failed: Mapping[int, Any], index: pd.Index, size: int) -> dict[Any, str]:
    """Each row of a failed chunk -> ``"chunk i failed: <last line of the error>"``."""
    out: dict[Any, str] = {}
    for i, err in failed.items():
        last = [ln for ln in str(err).strip().splitlines() if ln.strip()][-1:] or ["error"]
        for qid in index[i * size : (i + 1) * size]:
            out[qid] = f"chunk {i} failed: {last[0]}"
    return out
