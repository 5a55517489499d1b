"""Every claim checked: certified regions, "optimal" answers, margins and "infeasible" proofs.

For each dataset x model kind, ``--rows`` rejected test rows are explained by every
method under the same requirements (``min_probability``) and the same constraints
(the schema's actionability); the exact methods (MACE, CE-OCL) are run twice, without
and with certified regions.  Then every claim the results make is checked from the
outside, with the real model and nothing the methods computed:

* **region**: every certified region is sampled at its corners (all of them, or a
  seeded sample of ``--corners`` when there are more) and at ``--inside`` points
  drawn on the features' grids; each point must be predicted as the target with at
  least ``min_probability``, satisfy the constraints, and lie in the region
  (``Region.contains``).  A region is contradicted when one point fails.
* **optimal**: every ``optimal`` answer's proven lower bound is compared with every
  other answer under the same measure and constraints: the other methods' answers
  and every passing point of every region of the same row.  It is contradicted
  when one of them lies below the bound (the proof's own tolerance: the bound is
  what is proven; points off a grid the proof is stated over are not covered).
* **value**: the certificate's value is the answer's own measure, recomputed.
* **margin**: every answer of every method is predicted as the target with a
  probability at least ``min_probability`` and the reported probability is the
  real one.
* **infeasible**: an ``infeasible`` row is contradicted when another method found
  a valid answer for it.

Times are ratios against the explain call without regions, measured in the same run
(absolute seconds only as context).

    python benchmarks/claims.py             # German Credit, Adult, COMPAS, wine quality x 4 models
    python benchmarks/claims.py --quick     # German Credit x lr, rf; 3 rows
    python benchmarks/claims.py --datasets compas --max-changes 1 --min-probability 0.7
                                            # infeasible claims (out/claims_max_changes_1.md)
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import load_split, write_table

import counterfact as cf

#: model kinds and their sizes (small enough for 2 cores; the claims do not depend on size)
MODELS: dict[str, dict[str, Any]] = {
    "lr": {},
    "rf": {"n_estimators": 20, "max_depth": 5},
    "gbm": {"n_estimators": 30, "max_depth": 3},
    "mlp": {},
}
DATASETS = ("german_credit", "adult", "compas", "wine_quality_red")
#: the margin every answer of the run must reach
MIN_PROBABILITY = 0.6
#: slack of a numeric comparison (float rounding, not a tolerance of any claim)
SLACK = 1e-9
KINDS = ("region", "optimal", "value", "margin", "infeasible")


# ------------------------------------------------------------------ tallies
@dataclass
class Tally:
    """Claims of each kind checked and contradicted, with the first few contradictions."""

    checked: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    wrong: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    examples: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, ok: bool, what: str = "") -> None:
        """Count one claim of ``kind``; ``what`` describes it when it is contradicted."""
        self.checked[kind] += 1
        if not ok:
            self.wrong[kind] += 1
            if len(self.examples) < 20:
                self.examples.append(f"{kind}: {what}")

    def skip(self, why: str) -> None:
        """Count a comparison that could not be made (and why)."""
        self.skipped[why] = self.skipped.get(why, 0) + 1


# ------------------------------------------------------------- the real model
@dataclass(frozen=True)
class Truth:
    """The real model, the schema, the constraints and the margin: the only judges."""

    model: Any
    schema: Any
    dtypes: pd.Series
    p: float
    constraints: Any = None

    def reaches(self, rows: pd.DataFrame, target: Any) -> tuple[np.ndarray, np.ndarray]:
        """Per row: whether the real model predicts ``target`` with probability at least
        ``p``, and that probability."""
        if len(rows) == 0:
            return np.zeros(0, dtype=bool), np.zeros(0)
        X = rows.loc[:, self.schema.names]
        proba = np.asarray(self.model.predict_proba(X))
        col = list(self.model.classes_).index(target)
        pred = np.asarray(self.model.predict(X))
        return (pred == target) & (proba[:, col] >= self.p), proba[:, col]

    def admissible(self, query: pd.Series, rows: pd.DataFrame) -> np.ndarray:
        """Per row: no violation of the schema's domain or the constraints
        (``cf.violations``)."""
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        frame = rows.loc[:, self.schema.names].reset_index(drop=True)
        bad = cf.violations(query, frame, self.schema, self.constraints)
        ok = np.ones(len(frame), dtype=bool)
        ok[np.unique(bad["row"].to_numpy(dtype=int))] = False
        return ok

    def typed(self, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` in the schema's column order and the training data's dtypes."""
        return rows.loc[:, self.schema.names].astype(self.dtypes.to_dict())


# ------------------------------------------------------------------- regions
def region_corners(region: cf.result.Region, cap: int, rng: np.random.Generator) -> list[dict]:
    """The region's corners (each numeric range's two ends, every value of each set):
    all of them, or ``cap`` drawn at random when there are more."""
    sides = [
        (name, sorted(b, key=str) if isinstance(b, frozenset) else sorted({b[0], b[1]}))
        for name, b in region.bounds.items()
    ]
    n = math.prod(len(values) for _, values in sides)
    if n <= cap:
        combos = itertools.product(*(values for _, values in sides))
    else:
        combos = (tuple(v[rng.integers(len(v))] for _, v in sides) for _ in range(cap))
    return [dict(zip([s[0] for s in sides], c, strict=True)) for c in combos]


def grid_draw(feature: Any, lo: float, hi: float, n: int, rng: np.random.Generator) -> list:
    """``n`` values a person can enter in ``[lo, hi]``: on the feature's grid (its
    resolution; integers for an integer feature), uniform without a grid."""
    step = feature.resolution or (1.0 if feature.kind == "integer" else None)
    if step is None:
        return rng.uniform(lo, hi, n).tolist()
    k_lo, k_hi = math.ceil(lo / step - SLACK), math.floor(hi / step + SLACK)
    if k_hi < k_lo:
        return [lo] * n
    ks = rng.integers(k_lo, k_hi + 1, n)
    if feature.kind == "integer":
        return [int(np.rint(k * step)) for k in ks]
    return [float(f"{k * step:.12g}") for k in ks]


def region_inside(
    region: cf.result.Region, schema: Any, n: int, rng: np.random.Generator
) -> list[dict]:
    """``n`` points drawn inside the region: set values uniform; numeric values on the
    feature's grid for every other point, uniform float64 values for the rest (a
    certified box covers every value ``Region.contains`` accepts; integers always
    integral)."""
    cols: dict[str, list] = {}
    for name, b in region.bounds.items():
        if isinstance(b, frozenset):
            values = sorted(b, key=str)
            cols[name] = [values[i] for i in rng.integers(len(values), size=n)]
            continue
        lo, hi, f = float(b[0]), float(b[1]), schema[name]
        on = grid_draw(f, lo, hi, n, rng)
        free = on if f.kind == "integer" else rng.uniform(lo, hi, n).tolist()
        cols[name] = [on[i] if i % 2 == 0 else free[i] for i in range(n)]
    return [{k: cols[k][i] for k in cols} for i in range(n)]


def region_rows(region: cf.result.Region, truth: Truth, points: list[dict]) -> pd.DataFrame:
    """The region's fixed values completed by each point's changed ones, typed."""
    frame = pd.DataFrame([{**dict(region.fixed), **p} for p in points])
    return truth.typed(frame)


@dataclass
class RegionCheck:
    """What sampling one region found: the points, and those that fail."""

    rows: pd.DataFrame
    passing: np.ndarray
    n_corners: int
    outside: int
    worst: float


def check_region(
    region: cf.result.Region,
    query: pd.Series,
    answer: pd.Series,
    target: Any,
    truth: Truth,
    args: argparse.Namespace,
    rng: np.random.Generator,
) -> RegionCheck:
    """The region's corners, ``args.inside`` inside points and its own answer, each
    judged by the real model, the constraints and ``Region.contains``."""
    corners = region_corners(region, args.corners, rng)
    inside = region_inside(region, truth.schema, args.inside, rng)
    rows = pd.concat(
        [region_rows(region, truth, corners + inside), truth.typed(answer.to_frame().T)],
        ignore_index=True,
    )
    reaches, proba = truth.reaches(rows, target)
    contained = np.asarray(region.contains(rows), dtype=bool)
    passing = reaches & truth.admissible(query, rows) & contained
    worst = float(np.min(proba - truth.p)) if len(proba) else float("nan")
    return RegionCheck(rows, passing, len(corners), int((~contained).sum()), worst)


def check_regions(run: MethodRun, truth: Truth, tally: Tally, args, rng) -> list[RegionCheck]:
    """Every certified region of ``run`` sampled (:func:`check_region`); returns the
    checks (their passing points are answers too, for the optimal claims)."""
    out = []
    result = run.result
    for (q, rank), region in result.regions.items():
        answer = result.counterfactuals.loc[(q, rank)]
        check = check_region(
            region, result.queries.loc[q], answer, result.target[q], truth, args, rng
        )
        check.rows["_query"] = q
        out.append(check)
        if not region.certified:
            tally.skip(f"{run.name}: region only checked on samples (not certified)")
            continue
        failed = int((~check.passing).sum())
        tally.add(
            "region",
            failed == 0,
            f"{run.name} row {q}: {failed} of {len(check.rows)} points fail "
            f"(least P - p = {check.worst:.3g}, {check.outside} outside by contains)",
        )
    return out


# ------------------------------------------------------------------ measures
def measure_for(method: Any, schema: Any) -> Callable[[pd.Series, pd.DataFrame], np.ndarray]:
    """The exact method's own measure of rows against a query: MACE's range-normalised
    distance under its norm; CE-OCL's l1 objective over range-scaled features (the
    same distance times the number of features; run with ``distance_scale="range"``)."""
    if isinstance(method, cf.MACE):
        norm = tuple(method.norm) if isinstance(method.norm, list) else method.norm

        def mace_measure(query: pd.Series, rows: pd.DataFrame) -> np.ndarray:
            return np.asarray(cf.metrics.distance(query, rows, schema, norm=norm), dtype=float)

        return mace_measure
    n = len(schema.names)

    def ceocl_measure(query: pd.Series, rows: pd.DataFrame) -> np.ndarray:
        return n * np.asarray(cf.metrics.distance(query, rows, schema, norm="l1"), dtype=float)

    return ceocl_measure


@dataclass(frozen=True)
class Claim:
    """An ``optimal`` claim: the stated value, the proven lower bound, the stated
    tolerance (relative gap, absolute floor; None when not stated) and the features
    whose grid the proof is over (name -> resolution)."""

    value: float
    lower: float
    grid: Mapping[str, float]
    rel_gap: float | None = None
    abs_floor: float | None = None

    def within_tolerance(self, value: float) -> bool:
        """Whether an answer at ``value`` (its own measure, recomputed) lies within the
        stated tolerance of the proven bound (True when none is stated: the bound is
        then the whole claim)."""
        if self.rel_gap is None and self.abs_floor is None:
            return True
        allowed = max((self.rel_gap or 0.0) * value, self.abs_floor or 0.0)
        return value - self.lower <= allowed + SLACK * max(1.0, abs(value))


def optimal_claim(result: cf.CounterfactualResult, q: Any) -> Claim | None:
    """The structured certificate of row ``q`` (``result.certificate_record``); where it
    carries no value and bound, what the diagnostics state: MACE's
    ``delta_min``/``delta_max``, CE-OCL's objective and its relative MIP gap."""
    record = getattr(result, "certificate_record", None)
    c = record(q) if record is not None else None
    if c is not None and c.value is not None and c.lower_bound is not None:
        return Claim(float(c.value), float(c.lower_bound), dict(c.grid), c.rel_gap, c.abs_floor)
    d = result.diagnostics.loc[q]
    if "delta_min" in d and pd.notna(d["delta_min"]):
        return Claim(float(d["delta_max"]), float(d["delta_min"]), {})
    if "objective" in d and pd.notna(d["objective"]):
        gap = max(float(d.get("gap", 0.0) or 0.0), 0.0)
        return Claim(float(d["objective"]), float(d["objective"]) * (1 - gap), {})
    return None


def on_grid(rows: pd.DataFrame, query: pd.Series, grid: Mapping[str, float]) -> np.ndarray:
    """Per row: every feature of ``grid`` at a multiple of its resolution or at the
    query's own value (the points the proof covers)."""
    ok = np.ones(len(rows), dtype=bool)
    for name, step in grid.items():
        v = rows[name].to_numpy(dtype=float)
        k = v / step
        ok &= (np.abs(k - np.round(k)) <= 1e-6) | (v == float(query[name]))
    return ok


# -------------------------------------------------------------------- a run
@dataclass
class MethodRun:
    """One method's explain call: the method, its result and its wall seconds."""

    name: str
    method: Any
    result: cf.CounterfactualResult
    seconds: float
    exact: bool = False


def valid_answers(run: MethodRun, truth: Truth, tally: Tally) -> pd.DataFrame:
    """Every answer of ``run`` re-checked with the real model, the margin and the
    constraints (one margin claim each: a failure is a contradiction); the answers
    that pass, with their query in ``_query``."""
    result, kept = run.result, []
    for q in result.queries.index:
        cfs = result.for_query(q)
        if len(cfs) == 0:
            continue
        rows = truth.typed(cfs)
        reaches, proba = truth.reaches(rows, result.target[q])
        admissible = truth.admissible(result.queries.loc[q], rows)
        stated = result.confidence.loc[q].reindex(cfs.index).to_numpy(dtype=float)
        for k in range(len(rows)):
            same = abs(stated[k] - proba[k]) <= 1e-9 or not np.isfinite(stated[k])
            tally.add(
                "margin",
                bool(reaches[k] and admissible[k] and same),
                f"{run.name} row {q}: P = {proba[k]:.6f} (stated {stated[k]:.6f}), "
                f"p = {truth.p}, constraints {'met' if admissible[k] else 'violated'}",
            )
        good = rows[reaches & admissible].copy()
        good["_query"] = q
        kept.append(good)
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()


def check_optimal(run: MethodRun, pool: pd.DataFrame, schema: Any, tally: Tally) -> None:
    """Every ``optimal`` row of ``run``: its certificate's value against the answer's
    own measure, recomputed; its proven gap against its stated tolerance; its lower
    bound against every other valid point of the same row (``pool``), under the run's
    own measure."""
    result, measure = run.result, measure_for(run.method, schema)
    if result.costs is not None:  # the call's measure (the effort by default), not the norm
        measure = result.costs.evaluate
    for q in result.status.index[result.status == "optimal"]:
        claim = optimal_claim(result, q)
        if claim is None:
            tally.skip(f"{run.name}: optimal without a value and a bound")
            continue
        query, answer = result.queries.loc[q], result.for_query(q).iloc[[0]]
        own = float(measure(query, answer)[0])
        tally.add(
            "value",
            abs(own - claim.value) <= 1e-6 * max(1.0, abs(own)),
            f"{run.name} row {q}: certificate value {claim.value:.6g}, answer's {own:.6g}",
        )
        least = _least(measure, query, pool, claim, run.name, tally, q)
        tally.add(
            "optimal",
            least >= claim.lower - SLACK * max(1.0, abs(claim.lower))
            and claim.within_tolerance(own),
            f"{run.name} row {q}: least valid point {least:.6g}, proven bound "
            f"{claim.lower:.6g}, the answer at {own:.6g} (certificate value "
            f"{claim.value:.6g}), stated tolerance {claim.rel_gap} relative / "
            f"{claim.abs_floor} absolute",
        )


def _least(measure, query, pool, claim: Claim, name: str, tally: Tally, q: Any) -> float:
    """The least measure of the valid points of row ``q`` the proof covers (infinity
    when there are none)."""
    others = pool[pool["_query"] == q] if len(pool) else pool
    if len(others) == 0:
        return math.inf
    covered = on_grid(others, query, claim.grid)
    if not covered.all():
        tally.skip(f"{name}: points off the proof's grid, not compared")
    values = measure(query, others.loc[covered, query.index])
    return float(values.min()) if len(values) else math.inf


def check_infeasible(run: MethodRun, pool: pd.DataFrame, tally: Tally) -> None:
    """Every ``infeasible`` row of ``run`` against the valid answers of the others."""
    result = run.result
    for q in result.status.index[result.status == "infeasible"]:
        n = int((pool["_query"] == q).sum()) if len(pool) else 0
        tally.add("infeasible", n == 0, f"{run.name} row {q}: {n} valid answers elsewhere")


# ------------------------------------------------------------------- a cell
def methods(time_limit: float, seed: int) -> dict[str, Any]:
    """The methods compared, each with a time limit per row (CE-OCL on the l1 objective
    over range-scaled features, so that its measure is MACE's distance times the number
    of features)."""
    return {
        "MACE": cf.MACE(time_limit=time_limit, random_state=seed),
        "CE-OCL": cf.CEOCL(
            norm="l1", distance_scale="range", time_limit=time_limit, random_state=seed
        ),
        "UFCE": cf.UFCE(time_limit=time_limit, random_state=seed),
        "MD-PSO": cf.MDPSO(time_limit=time_limit, random_state=seed),
        "nearest observed": cf.methods.get("nearest", random_state=seed),
    }


def explain(
    name: str, method: Any, X: pd.DataFrame, req: cf.Requirements, constraints: Any = None
) -> MethodRun:
    """One timed explain call."""
    t0 = time.perf_counter()
    result = method.explain(X, constraints=constraints, requirements=req)
    return MethodRun(name, method, result, time.perf_counter() - t0)


def run_all(
    model: Any, train: Any, X: pd.DataFrame, p: float, args: argparse.Namespace
) -> tuple[list[MethodRun], dict[str, float]]:
    """Every method on ``X``; the exact ones also with regions.  Returns the runs (the
    exact ones: the call with regions) and, per exact method, explain seconds without
    regions."""
    runs, plain_seconds = [], {}
    constraints = constraints_of(args)
    for name, method in methods(args.time_limit, args.seed).items():
        method.fit(model, train)
        exact = bool(type(method).tags.proves_optimality)
        run = explain(name, method, X, cf.Requirements(min_probability=p), constraints)
        if exact:
            plain_seconds[name] = run.seconds
            req = cf.Requirements(min_probability=p, regions=True)
            run = explain(name, method, X, req, constraints)
            run.exact = True
        runs.append(run)
    return runs, plain_seconds


def constraints_of(args: argparse.Namespace) -> cf.Constraints | None:
    """The constraints of the run besides the schema's actionability (``--max-changes``)."""
    return None if args.max_changes is None else cf.Constraints(max_changes=args.max_changes)


def cell(dataset: str, kind: str, args: argparse.Namespace, notes: list[str]) -> dict | None:
    """One dataset x model kind: every method run, every claim checked (module docstring)."""
    split = load_split(dataset, cf.datasets.load, notes, max_train=args.max_train)
    if split is None:
        return None
    train, test = split
    model = cf.models.fit(train, kind, random_state=args.seed, **MODELS[kind])
    X = cf.rows_to_explain(model, test).head(args.rows)
    truth = Truth(model, train.schema, train.X.dtypes, args.min_probability, constraints_of(args))
    runs, plain = run_all(model, train, X, args.min_probability, args)
    tally, rng = Tally(), np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    samples = [c for r in runs if r.exact for c in check_regions(r, truth, tally, args, rng)]
    t_check = time.perf_counter() - t0
    answers = {r.name: valid_answers(r, truth, tally) for r in runs}
    region_points = [c.rows[c.passing] for c in samples]
    pool = pd.concat([*answers.values(), *region_points], ignore_index=True)
    for r in runs:
        others = pd.concat([a for n, a in answers.items() if n != r.name], ignore_index=True)
        if r.exact:
            check_optimal(r, pool, train.schema, tally)
            check_infeasible(r, others, tally)
    for line in tally.examples:
        print(f"  {dataset} {kind}: {line}")
    for why, n in tally.skipped.items():
        notes.append(f"{dataset} {kind}: {why} ({n})")
    return row_of(dataset, kind, len(X), runs, plain, t_check, tally)


def row_of(dataset, kind, rows, runs, plain, t_check, tally: Tally) -> dict[str, Any]:
    """The table's row of one cell: counts per claim kind, then the time ratios."""
    exact = [r for r in runs if r.exact]
    t_plain = sum(plain.values())
    t_regions = sum(r.seconds for r in exact)
    n_regions = sum(len(r.result.regions) for r in exact)
    row: dict[str, Any] = {"dataset": dataset, "model": kind, "rows": rows}
    row["optimal answers"] = sum(int((r.result.status == "optimal").sum()) for r in exact)
    row["certified regions"] = sum(
        sum(g.certified for g in r.result.regions.values()) for r in exact
    )
    for k in KINDS:
        row[f"{k} checked / contradicted"] = f"{tally.checked[k]} / {tally.wrong[k]}"
    row["explain with regions / without"] = _ratio(t_regions, t_plain)
    own = sum(
        getattr(g, "check_seconds", 0.0) or 0.0 for r in exact for g in r.result.regions.values()
    )
    row["library's corner check / explain"] = _ratio(own, t_plain)
    row["this script's sampling / explain"] = _ratio(t_check, t_plain)
    row["regions"] = n_regions
    row["explain s per row (exact, no regions)"] = t_plain / max(rows * len(exact), 1)
    return row


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b > 0 else "-"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--rows", type=int, default=4, help="rejected test rows per cell")
    p.add_argument("--time-limit", type=float, default=5.0, help="seconds per row per method")
    p.add_argument("--min-probability", type=float, default=MIN_PROBABILITY)
    p.add_argument("--corners", type=int, default=1024, help="most corners per region")
    p.add_argument("--inside", type=int, default=2000, help="inside points per region")
    p.add_argument("--max-train", type=int, default=4000, help="training rows (subsample)")
    p.add_argument("--max-changes", type=int, default=None, help="at most this many changes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="German Credit x lr, rf; 3 rows")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    if args.quick:
        args.datasets, args.models, args.rows = "german_credit", "lr,rf", 3
    notes = [
        f"{args.rows} rejected test rows per cell (training rows at most {args.max_train}, "
        f"split 80/20 seed {args.seed}); every method at {args.time_limit:g} s per row, "
        f"min_probability {args.min_probability}, constraints: the schema's actionability"
        + ("" if args.max_changes is None else f", at most {args.max_changes} changes")
        + ".",
        f"Regions: all corners (at most {args.corners}, else a seeded sample) and "
        f"{args.inside} inside points (half on the features' grids, half uniform), plus "
        "the answer, per region.",
        "Times: the exact methods' explain calls with regions (the method's proof and its "
        "own corner check) and this script's sampling, over the same calls without regions.",
    ]
    t0, rows = time.perf_counter(), []
    name = ("claims_quick" if args.quick else "claims") + (
        "" if args.max_changes is None else f"_max_changes_{args.max_changes}"
    )
    for d in args.datasets.split(","):
        for k in args.models.split(","):
            row = cell(d, k, args, notes)
            if row is not None:
                rows.append(row)
                # the table so far (an interrupted run keeps its finished cells)
                write_table(name, pd.DataFrame(rows), notes, quiet=True)
    notes.append(f"whole run: {time.perf_counter() - t0:.0f} s")
    write_table(name, pd.DataFrame(rows), notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
