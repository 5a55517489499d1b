"""One measure of effort, checked from the outside: is a proven answer ever beaten on both counts?

For each dataset x model kind (``cf.models.fit`` with its defaults), ``--rows`` rejected test
rows (``cf.rows_to_explain``) are explained by every registered method (the DiCE peer too
when dice-ml is installed) with default settings -- no requirement beyond the model's
decision, the default measure of effort (``cf.Costs()``) -- asking for 3 options per row,
each method's ``time_limit`` (none by default) capped at ``--time-limit`` seconds per row
(1.5 by default, so that the whole run stays near 30 minutes on 2 cores: the exact
methods' 4 calls x 30 rows x 1.5 s bound each forest and MLP cell; a row that stops at the
cap is answered without a proof, and the "proven" column says how many were proven).
The exact methods (those that prove optimality: MACE, CE-OCL) explain the same rows a
second time under each one's own objective (``Requirements(costs="own")``: MACE's
eq. (3), CE-OCL's objective), the default before the measure of effort.

Every answer is judged here, not by the library: re-checked with the real model (it predicts
the target, with at least the stated ``min_probability``) and the schema's actionability
(``cf.violations``), then scored on two counts:

* **changes**: the number of features whose value differs from the query's;
* **move**: the sum over numeric and ordinal features of ``|delta| / MAD`` (ordinal features
  in ranks; the MAD of the training rows, ``counterfact.schema._spread.mad``, with its
  fallback where the MAD is 0) plus 1 per category change.

The default measure is exactly changes + move (a note gives the largest difference from
``cf.Costs().bind(...).evaluate`` over every answer of the run).  Reported per dataset x
model x method:

* **dominated, effort / own** (exact methods): rows whose first answer is dominated by a
  verified answer of another run for the same row -- the other's changes and move both at
  most the first answer's, one strictly smaller -- by more than the method's stated
  tolerance: the other answer is one the proof speaks about (where the certificate leaves
  out the answers within its margin tolerance of the decision threshold -- a MILP solver's
  tolerance, stated in the certificate -- an answer that close does not count), and its
  effort (changes + move) is below the first answer's by more than
  its certificate's relative gap times the first answer's effort (MACE: ``rel_gap`` of the
  measure; CE-OCL: its MIP gap) or its absolute floor.  Under the effort, the other runs
  are every other run of the cell (the heuristics, the other exact method under both
  measures, the same method under its own objective: any valid point refutes a proof);
  under "own" (today's default), the heuristics and the other exact method's own run.  The
  heuristics run once, under the default.  An unproven first answer may be beaten by any
  answer the model accepts, also one closer to the decision boundary than the small
  margin the exact methods keep (1e-4 in logit), which may beat it by a hair.
  "k / n (j proven)": k of the n rows with a first
  answer, j of them with status ``optimal`` (proven in the run's measure: under "own", its
  own objective, not the effort).  Target under the effort: 0 proven.  The dominated first
  answers are written out, with the answer that beats them, under the table.
* **proven, effort / own**: rows with status ``optimal`` in each run;
* **median changes / median move**: of the first verified answer per answered row (effort);
* **options per row**: answers returned per row (mean over the rows; 3 asked);
* **time effort / own**: explain seconds under the effort over those under the own
  objective, the same rows in the same run (exact methods; the two calls alternate which
  goes first from cell to cell).

    python benchmarks/effort.py            # German Credit, Adult, COMPAS x lr, rf, mlp; 30 rows
    python benchmarks/effort.py --quick    # German Credit x lr, rf; 3 rows (a few minutes)
    python benchmarks/effort.py --datasets compas --models rf --time-limit 20   # proofs

Writes benchmarks/out/effort[_quick].md and .csv (the finished cells so far while it runs).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_split, write_table

import counterfact as cf
from counterfact.schema._spread import mad

DATASETS = ("german_credit", "adult", "compas")
MODELS = ("lr", "rf", "mlp")
#: options asked per row
N_OPTIONS = 3
#: the two measures the exact methods are run under: the default, and each one's own
EFFORT, OWN = "effort", "own"
#: slack of a numeric comparison (float rounding, not a tolerance of any claim)
SLACK = 1e-9


# ------------------------------------------------------------------ the judge
@dataclass(frozen=True)
class Judge:
    """The real model, the schema and the training rows' MADs: the only judges."""

    model: Any
    schema: Any
    dtypes: pd.Series
    spread: np.ndarray

    @classmethod
    def of(cls, model: Any, train: cf.Dataset) -> Judge:
        return cls(model, train.schema, train.X.dtypes, mad(train.X, train.schema))

    def verified(self, result: cf.CounterfactualResult, q: Any) -> pd.DataFrame:
        """The answers of row ``q`` that the real model and the constraints accept
        (index: rank), typed like the training data."""
        cfs = result.for_query(q)
        if len(cfs) == 0:
            return cfs
        rows = cfs.loc[:, self.schema.names].astype(self.dtypes.to_dict())
        target, p = result.target[q], result.requirements.get("min_probability")
        col = list(self.model.classes_).index(target)
        ok = np.asarray(self.model.predict(rows)) == target
        if p is not None:
            ok &= np.asarray(self.model.predict_proba(rows))[:, col] >= p
        frame = rows.reset_index(drop=True)
        query = result.queries.loc[q]
        bad = cf.violations(query, frame, self.schema, result.constraints_for(q))
        ok[np.unique(bad["row"].to_numpy(dtype=int))] = False
        return rows[ok]

    def counts(self, query: pd.Series, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``rows``: (changed features, MAD-scaled move) against ``query``."""
        changes = np.zeros(len(rows))
        move = np.zeros(len(rows))
        for j, f in enumerate(self.schema):
            if f.is_numeric or f.kind == "ordinal":
                a, x = self._values(f, rows[f.name]), self._values(f, [query[f.name]])[0]
                delta = np.abs(a - x)
                changed = delta > SLACK * max(1.0, abs(x))
                move += np.where(changed, delta, 0.0) / self.spread[j]
            else:
                changed = np.array([v != query[f.name] for v in rows[f.name]], dtype=bool)
                move += changed
            changes += changed
        return changes, move

    @staticmethod
    def _values(f: Any, values: Any) -> np.ndarray:
        if f.is_numeric:
            return np.asarray(pd.to_numeric(pd.Series(list(values))), dtype=float)
        return np.array([f.rank(v) for v in values], dtype=float)


# ------------------------------------------------------------------- the runs
@dataclass
class Run:
    """One explain call: the method's display name, the measure, the result, seconds."""

    name: str
    measure: str
    exact: bool
    result: cf.CounterfactualResult
    seconds: float
    rel_gap: float = 0.0
    #: per query: the verified answers, their changes and moves (filled by ``score``)
    answers: dict[Any, tuple[pd.DataFrame, np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.name} ({self.measure})"


def make(name: str, time_limit: float, seed: int) -> Any:
    """The registered method ``name`` with its defaults, its time limit capped and seeded
    (where its constructor takes them)."""
    params = inspect.signature(cf.methods.get_class(name).__init__).parameters
    kwargs: dict[str, Any] = {}
    if "time_limit" in params:
        kwargs["time_limit"] = time_limit
    if "random_state" in params:
        kwargs["random_state"] = seed
    return cf.methods.get(name, **kwargs)


def explain(method: Any, X: pd.DataFrame, measure: str, exact: bool) -> Run:
    """One timed explain call with ``N_OPTIONS`` options per row, under the default
    requirements (``measure == OWN``: each method's own objective)."""
    req = cf.Requirements(costs=OWN) if measure == OWN else cf.Requirements()
    t0 = time.perf_counter()
    result = method.explain(X, n_counterfactuals=N_OPTIONS, requirements=req)
    seconds = time.perf_counter() - t0
    rel_gap = float(getattr(method, "rel_gap", 0.0) or 0.0)
    return Run(type(method).tags.display_name, measure, exact, result, seconds, rel_gap)


def run_all(model: Any, train: cf.Dataset, X: pd.DataFrame, args, flip: bool) -> list[Run]:
    """Every registered method on ``X`` under the effort; the exact ones also under their
    own objective (``flip``: the own call first)."""
    runs = []
    for name in cf.methods.names(peers=True):
        method = make(name, args.time_limit, args.seed).fit(model, train)
        exact = bool(type(method).tags.proves_optimality)
        measures = [EFFORT, OWN] if exact else [EFFORT]
        for measure in reversed(measures) if flip else measures:
            runs.append(explain(method, X, measure, exact))
            print(f"  {runs[-1].key}: {runs[-1].seconds:.1f} s", flush=True)
    return runs


def score(runs: list[Run], judge: Judge, library: Any) -> float:
    """Fill each run's verified answers and counts; returns the largest difference
    between changes + move and the library's default measure (``library``:
    ``cf.Costs()`` bound to the training rows) over every answer."""
    worst = 0.0
    for run in runs:
        for q in run.result.queries.index:
            query = run.result.queries.loc[q]
            rows = judge.verified(run.result, q)
            changes, move = judge.counts(query, rows)
            run.answers[q] = (rows, changes, move)
            if len(rows):
                lib = np.asarray(library.evaluate(query, rows), dtype=float)
                worst = max(worst, float(np.max(np.abs(lib - (changes + move)))))
    return worst


# --------------------------------------------------------------- domination
@dataclass(frozen=True)
class Beaten:
    """A first answer of an exact run beaten on both counts: the row, the runs, the
    two answers and their (changes, move)."""

    run: str
    other: str
    q: Any
    status: str
    first: tuple[pd.Series, float, float]
    better: tuple[pd.Series, float, float]

    def text(self, query: pd.Series) -> str:
        (a, ca, ma), (b, cb, mb) = self.first, self.better
        return (
            f"{self.run} row {self.q} ({self.status}): {changed(query, a)} "
            f"[{ca:g} changes, move {ma:.3g}] beaten by {self.other}: {changed(query, b)} "
            f"[{cb:g} changes, move {mb:.3g}]"
        )


def changed(query: pd.Series, row: pd.Series) -> str:
    """The changed features of ``row`` as ``name: old -> new``."""
    parts = [
        f"{k} {_shown(query[k])} -> {_shown(row[k])}" for k in query.index if row[k] != query[k]
    ]
    return "; ".join(parts) or "(no change)"


def _shown(value: Any) -> str:
    """A value as a reader writes it: categories quoted, numbers plain."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}" if isinstance(value, (float, np.floating)) else str(value)


def first_answer(run: Run, judge: Judge, q: Any) -> tuple[pd.Series, float, float] | None:
    """The run's first returned answer for row ``q`` (verified or not) and its counts."""
    cfs = run.result.for_query(q)
    if len(cfs) == 0:
        return None
    row = cfs.iloc[[0]].loc[:, judge.schema.names].astype(judge.dtypes.to_dict())
    c, m = judge.counts(run.result.queries.loc[q], row)
    return row.iloc[0], float(c[0]), float(m[0])


def tolerance(run: Run, q: Any, effort: float) -> float:
    """The exact method's stated tolerance at ``effort``: its certificate's relative gap
    (else the method's ``rel_gap``) times the effort, or its absolute floor where the
    certificate is stated in the effort."""
    rec = run.result.certificate_record(q)
    rel = rec.rel_gap if rec is not None and rec.rel_gap is not None else run.rel_gap
    floor = rec.abs_floor if rec is not None and rec.abs_floor and run.measure == EFFORT else 0.0
    return max(float(rel) * effort, float(floor or 0.0))


def covered(run: Run, q: Any, rows: pd.DataFrame, judge: Judge) -> np.ndarray:
    """Which of ``rows`` the proof of ``run``'s answer to ``q`` speaks about: where its
    certificate leaves out the answers nearest the decision (``margin_tolerance < 0`` on
    the logit: a MILP solver's tolerance), the rows past the threshold by more than that;
    every row otherwise."""
    rec = run.result.certificate_record(q)
    tol = None if rec is None else rec.margin_tolerance
    everyone = np.ones(len(rows), dtype=bool)
    classes = list(judge.model.classes_)
    if len(rows) == 0 or tol is None or tol >= 0 or len(classes) != 2:
        return everyone
    p = np.asarray(judge.model.predict_proba(rows))[:, classes.index(run.result.target[q])]
    p = np.clip(p, 1e-15, 1 - 1e-15)
    floor = run.result.requirements.get("min_probability") or 0.5
    logit = np.log(p / (1 - p)) - np.log(floor / (1 - floor))
    margin = {"logit": logit, "probability": p - floor}.get(rec.margin_scale)
    if margin is None and hasattr(judge.model, "decision_function"):  # CE-OCL's model output
        sign = 1.0 if classes.index(run.result.target[q]) == 1 else -1.0
        df = np.asarray(judge.model.decision_function(rows), dtype=float)
        margin = sign * df - np.log(floor / (1 - floor))
    return everyone if margin is None else margin > -float(tol)


def others_of(run: Run, runs: list[Run]) -> list[Run]:
    """The runs whose answers may beat ``run``'s (module docstring)."""
    if run.measure == EFFORT:
        return [r for r in runs if r is not run]
    return [r for r in runs if r.name != run.name and (not r.exact or r.measure == OWN)]


def beaten(run: Run, runs: list[Run], judge: Judge) -> tuple[int, list[Beaten]]:
    """(rows with a first answer, those whose first answer another run's verified answer
    dominates beyond the tolerance, each with the cheapest such answer)."""
    n, out = 0, []
    for q in run.result.queries.index:
        first = first_answer(run, judge, q)
        if first is None:
            continue
        n += 1
        _, c, m = first
        tol = tolerance(run, q, c + m)
        best: tuple[float, Run, int] | None = None
        for other in others_of(run, runs):
            rows, c2, m2 = other.answers[q]
            win = (c2 <= c) & (m2 <= m + SLACK) & ((c2 < c) | (m2 < m - SLACK))
            win &= (c + m) - (c2 + m2) > tol + SLACK
            win &= covered(run, q, rows, judge)
            for k in np.flatnonzero(win):
                if best is None or c2[k] + m2[k] < best[0]:
                    best = (float(c2[k] + m2[k]), other, int(k))
        if best is not None:
            _, other, k = best
            rows, c2, m2 = other.answers[q]
            status = str(run.result.status[q])
            out.append(Beaten(run.key, other.key, q, status, first, (rows.iloc[k], c2[k], m2[k])))
    return n, out


# ---------------------------------------------------------------- the table
def medians(run: Run) -> tuple[float, float, int]:
    """Median changes and move of the first verified answer per answered row, and the
    number of answered rows."""
    firsts = [(c[0], m[0]) for _, c, m in run.answers.values() if len(c)]
    if not firsts:
        return float("nan"), float("nan"), 0
    arr = np.array(firsts)
    return float(np.median(arr[:, 0])), float(np.median(arr[:, 1])), len(firsts)


def _proven(run: Run) -> int:
    return int((run.result.status == "optimal").sum())


def dominated_text(n: int, found: list[Beaten]) -> str:
    proven = sum(b.status == "optimal" for b in found)
    return f"{len(found)} / {n} ({proven} proven)"


def method_row(cell: dict[str, Any], runs: list[Run], judge: Judge, log: list) -> dict:
    """The table's row of one method in one cell (``runs``: its one or two runs, the
    effort first; ``cell["runs"]``: every run of the cell)."""
    effort = runs[0]
    med_c, med_m, answered = medians(effort)
    row: dict[str, Any] = {**cell["keys"], "method": effort.name}
    row["answered"] = f"{answered} / {len(effort.result.queries)}"
    row["options per row"] = float(effort.result.found.mean())
    row["median changes"], row["median move"] = (med_c, med_m) if answered else ("-", "-")
    for col in ("proven, effort / own", "dominated, effort", "dominated, own"):
        row[col] = "-"
    row["median changes (own)"] = row["median move (own)"] = row["time effort / own"] = "-"
    if len(runs) == 2:
        own = runs[1]
        for r, col in ((effort, "dominated, effort"), (own, "dominated, own")):
            n, found = beaten(r, cell["runs"], judge)
            row[col] = dominated_text(n, found)
            log += [
                (r.measure, f"{cell['name']}: {b.text(r.result.queries.loc[b.q])}") for b in found
            ]
        row["median changes (own)"], row["median move (own)"], _ = medians(own)
        row["proven, effort / own"] = f"{_proven(effort)} / {_proven(own)}"
        row["time effort / own"] = effort.seconds / own.seconds if own.seconds > 0 else "-"
    return row


def cell(dataset: str, kind: str, args, notes: list[str], index: int) -> list[dict] | None:
    """One dataset x model kind: every method run and judged (module docstring)."""
    split = load_split(dataset, cf.datasets.load, notes, max_train=args.max_train)
    if split is None:
        return None
    train, test = split
    model = cf.models.fit(train, kind, random_state=args.seed)
    X = cf.rows_to_explain(model, test).head(args.rows)
    print(f"{dataset} x {kind}: {len(X)} rows", flush=True)
    runs = run_all(model, train, X, args, flip=index % 2 == 1)
    judge = Judge.of(model, train)
    worst = score(runs, judge, cf.Costs().bind(train.schema, train.X))
    notes.append(
        f"{dataset} x {kind}: largest |changes + move - Costs().evaluate| over every answer "
        f"{worst:.2g}"
    )
    info = {"keys": {"dataset": dataset, "model": kind}, "runs": runs}
    info["name"] = f"{dataset} x {kind}"
    log: list[tuple[str, str]] = []
    by_name: dict[str, list[Run]] = {}
    for r in runs:
        by_name.setdefault(r.name, []).append(r)
    rows = [
        method_row(info, sorted(rs, key=lambda r: r.measure != EFFORT), judge, log)
        for rs in by_name.values()
    ]
    for _, line in log:
        print("  " + line)
    args.found += log
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--rows", type=int, default=30, help="rejected test rows per cell")
    p.add_argument("--time-limit", type=float, default=1.5, help="cap, seconds per row")
    p.add_argument("--max-train", type=int, default=4000, help="training rows (subsample)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="German Credit x lr, rf; 3 rows")
    p.add_argument("--examples", type=int, default=20, help="dominated answers written out")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.quick:
        args.datasets, args.models, args.rows = "german_credit", "lr,rf", 3
    args.found = []
    notes = [
        f"{args.rows} rejected test rows per cell (training rows at most {args.max_train}, "
        f"split 80/20 seed {args.seed}); every method with its defaults, its time limit "
        f"capped at {args.time_limit:g} s per row, {N_OPTIONS} options asked per row; "
        "models: cf.models.fit defaults (forest 100 trees depth 8, MLP (10, 10)).",
        "move = sum of |delta| / MAD over numeric and ordinal features (ranks; MAD of the "
        "training rows) + 1 per category change; effort = changes + move (cf.Costs()).",
        "dominated: by more than the method's stated tolerance (certificate's relative gap "
        "x effort, or its absolute floor); own: each exact method's own objective "
        '(Requirements(costs="own")), beside the heuristics run once under the default.',
        "time effort / own: near 1 where both calls stop at the cap on most rows.",
    ]
    name = "effort_quick" if args.quick else "effort"
    t0, table = time.perf_counter(), []
    cells = [(d, k) for d in args.datasets.split(",") for k in args.models.split(",")]
    for i, (d, k) in enumerate(cells):
        rows = cell(d, k, args, notes, i)
        table += rows or []
        write_table(name, pd.DataFrame(table), notes + _examples(args), quiet=True)
    notes.append(f"whole run: {time.perf_counter() - t0:.0f} s")
    write_table(name, pd.DataFrame(table), notes + _examples(args))
    return 0


def _examples(args) -> list[str]:
    """The dominated first answers, both answers written out: every one under the effort
    (the bugs), then those under the own objective up to ``--examples`` in all."""
    mine = [f"dominated under the effort: {t}" for m, t in args.found if m == EFFORT]
    own = [f"dominated under the own objective: {t}" for m, t in args.found if m == OWN]
    return mine + own[: max(args.examples - len(mine), 0)]


if __name__ == "__main__":
    raise SystemExit(main())
