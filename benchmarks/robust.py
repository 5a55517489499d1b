"""Recourse that holds after a retrain: a validity-versus-cost curve, ours beside the peers.

For each dataset x model kind, ``--rows`` rejected test rows are explained under several
settings, each judged by 5 copies of the model retrained on bootstrap resamples
(``cf.models.retrained``) that no method ever sees:

* ours (MACE, proven-nearest answers): plain; ``min_probability`` 0.6 / 0.7; ``robust_to``
  4 other retrained copies, alone and with ``min_probability=0.6``; and
  ``Requirements(robustness=p)`` for p = 0.6 / 0.7 / 0.8 / 0.9 / 0.95 / 0.99;
* Forel, Parmentier & Vidal's vote threshold on forests: at least
  ``cf.vote_share_for(T, alpha)`` of the T trees vote for the target
  (``Requirements(min_vote_share=...)``, searched by MACE), alpha = 0.2 / 0.05 / 0.01;
* ElliCE 0.1.4 on LR and MLP (``pip install ellice==0.1.4``; its ``robustness_epsilon``
  swept over 0.01 / 0.05 / 0.1; benchmarks/_ellice_peer.py).

Every setting may change only the numeric features (the schema's directions and bounds
kept), as ElliCE does.  Validity: the share of (answered row, judge) pairs whose judge
accepts the row's first answer (Wilson 95 % interval over the pairs); coverage: answered
rows over rows; cost: the first answer's cost in the default measure of effort
(``cf.Costs()``: one per changed feature plus each move in MADs), median over the answered
rows.  A second table checks the issue's target: for every peer point, the cheapest of
our settings at least as valid and covering at least as many rows (``<name>_target``,
every answered row of ours counted, those short of p too); a third (``<name>_vouched``)
counts, for ``robustness=p``, only the rows the library says reach p, as a peer counts
only the rows it answers; a fourth (``<name>_finer``) measures validity on the 20 more
copies instead of the 5 judges; a fifth (``<name>_estimate``) checks each answer's
estimated robustness (``result.robustness()``) against the copies it never saw.

    python benchmarks/robust.py                    # German, COMPAS, Adult x lr, rf, mlp; 50 rows
    python benchmarks/robust.py --quick            # 10 rows, German Credit only
    python benchmarks/robust.py --models lr --name robust_lr   # one part of a split run
    python benchmarks/robust.py --merge robust_lr,robust_rf,robust_mlp   # join the parts
    python benchmarks/robust.py --models rf --seed 1 --name rf_seed1   # another seed
    python benchmarks/robust.py --merge rf_seed0,rf_seed1 --pool      # pool the seeds' rows
    python benchmarks/robust.py --rejudge rf_seed0,rf_seed1   # their verdicts again, nothing solved
    python benchmarks/robust.py --guards           # the earlier guard table (one held-out copy)
    python benchmarks/robust.py --sweep --time-limit 15   # German forest: 4 / 8 copies x margins
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT, wilson, write_table

import counterfact as cf

#: model kinds and their sizes (forests kept small enough for five of them in one solver)
MODELS = {"lr": {}, "rf": {"n_estimators": 30, "max_depth": 6}, "mlp": {}}


def _survives(result: cf.CounterfactualResult, judge_model, schema) -> tuple[int, int]:
    """(first answers the held-out model also accepts, answers)."""
    cfs = result.counterfactuals
    if len(cfs) == 0:
        return 0, 0
    first = cfs[cfs.index.get_level_values(1) == 0]
    targets = result.target.loc[first.index.get_level_values(0)].to_numpy()
    ok = judge_model.predict(first.loc[:, schema.names]) == targets
    return int(ok.sum()), len(ok)


def _cost(result: cf.CounterfactualResult) -> pd.Series:
    return pd.to_numeric(result.diagnostics["delta_max"], errors="coerce").where(result.found > 0)


def _widths(result: cf.CounterfactualResult, schema) -> list[float]:
    out = []
    for region in result.regions.values():
        for name, b in region.bounds.items():
            if not isinstance(b, frozenset):
                out.append((b[1] - b[0]) / float(schema[name].range))
    return out


def _guard_runs(mace, X, robust_to) -> dict[str, tuple[cf.CounterfactualResult, float]]:
    """The four guard settings' results and wall seconds."""
    runs: dict[str, tuple[cf.CounterfactualResult, float]] = {}
    for name, kw in (
        ("plain", {}),
        ("robust", {"robust_to": robust_to}),
        ("margin", {"min_probability": 0.6}),
        ("both", {"robust_to": robust_to, "min_probability": 0.55}),
    ):
        t0 = time.perf_counter()
        result = mace.explain(X, requirements=cf.Requirements(**kw))
        runs[name] = (result, time.perf_counter() - t0)
    return runs


def cell(dataset: str, kind: str, rows: int, time_limit: float, seed: int) -> dict[str, object]:
    data = cf.datasets.load(dataset)
    train, test = data.split(test_size=0.2, random_state=seed)
    model = cf.models.fit(train, kind, random_state=seed, **MODELS[kind])
    copies = cf.models.retrained(model, train, n=5, random_state=seed + 1)
    held_out, robust_to = copies[0], copies[1:]
    X = cf.rows_to_explain(model, test).head(rows)
    mace = cf.MACE(time_limit=time_limit, random_state=seed).fit(model, train)
    runs = _guard_runs(mace, X, robust_to)
    plain, t_plain = runs["plain"]
    robust, t_robust = runs["robust"]
    margin, _ = runs["margin"]
    both_run, t_both = runs["both"]
    regions = plain  # each plain answer's region, computed and timed on its own
    t0 = time.perf_counter()
    for q, rank in plain.counterfactuals.index:
        plain.region(q, int(rank))
    t_regions = time.perf_counter() - t0
    (k_p, n_p), (k_r, n_r) = (
        _survives(plain, held_out, train.schema),
        _survives(robust, held_out, train.schema),
    )
    (k_m, n_m), (k_b, n_b) = (
        _survives(margin, held_out, train.schema),
        _survives(both_run, held_out, train.schema),
    )
    c_plain = _cost(plain)
    both_b = c_plain.notna() & _cost(both_run).notna() & (c_plain > 0)
    both = c_plain.notna() & _cost(robust).notna() & (c_plain > 0)
    both_m = c_plain.notna() & _cost(margin).notna() & (c_plain > 0)
    widths = _widths(regions, train.schema)
    n_regions = len(regions.regions)
    return {
        "dataset": dataset,
        "model": kind,
        "rows": len(X),
        "plain valid under retrain": _share(k_p, n_p),
        "robust valid under retrain": _share(k_r, n_r),
        "robust coverage": f"{(robust.found > 0).mean():.2f}",
        "cost robust / plain (median)": _ratio(_cost(robust)[both] / c_plain[both]),
        "time robust / plain": f"{t_robust / t_plain:.2f}",
        "margin 0.6 reached": _share(
            int((margin.confidence.groupby(level=0).first() >= 0.6).sum()),
            int((plain.found > 0).sum()),
        ),
        "margin valid under retrain": _share(k_m, n_m),
        "cost margin / plain (median)": _ratio(_cost(margin)[both_m] / c_plain[both_m]),
        "robust + margin 0.55 valid under retrain": _share(k_b, n_b),
        "cost robust + margin / plain (median)": _ratio(_cost(both_run)[both_b] / c_plain[both_b]),
        "time robust + margin / plain": f"{t_both / t_plain:.2f}",
        "regions certified": _share(sum(r.certified for r in regions.regions.values()), n_regions),
        "region width / range (median)": f"{np.median(widths):.3f}" if widths else "-",
        ("time per region / explain"): (
            f"{t_regions / max(n_regions, 1) / (t_plain / max(len(X), 1)):.2f}"
        ),
        "plain seconds per row": f"{t_plain / max(len(X), 1):.2f}",
    }


#: our margins, the robustness levels asked for, Forel's levels, ElliCE's epsilons
MARGINS = (0.6, 0.7)
ROBUSTNESS = [0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
#: --only-levels: run robustness=p alone (a part of a split run that adds levels)
ONLY_LEVELS = False
ALPHAS = (0.2, 0.05, 0.01)
EPSILONS = (0.01, 0.05, 0.1)
#: actionability that no setting may change (time moves only with a cf.Timeline)
FIXED = ("immutable", "time")
#: retrained copies that judge every answer (never given to a method)
N_JUDGES = 5
#: more such copies, from a seed stream of their own: a finer measure than 5 judges
#: (a judge that leans one way rejects many rows at once); --reference sets it
REFERENCE = 20
#: the peers' names in the tables
FOREL, ELLICE = "Forel vote threshold", "ElliCE"
#: robustness=p restricted to the rows the library says reach p (what it vouches for, as
#: a peer vouches for the rows it answers): the second verdict's view
SAID = "ours, rows said to reach"


@dataclass
class Setup:
    """One cell of the curve: the model, its judges, the rows, what may change."""

    dataset: str
    kind: str
    train: cf.Dataset
    model: object
    judges: list
    pool: list
    X: pd.DataFrame
    vary: list[str]
    effort: object
    mace: cf.MACE
    reference: list = field(default_factory=list)


def setup(dataset: str, kind: str, rows: int, time_limit: float, seed: int) -> Setup:
    data = cf.datasets.load(dataset)
    train, test = data.split(test_size=0.2, random_state=seed)
    model = cf.models.fit(train, kind, random_state=seed, **MODELS[kind])
    copies = cf.models.retrained(model, train, n=N_JUDGES + 4, random_state=seed + 1)
    X = cf.rows_to_explain(model, test).head(rows)
    vary = [f.name for f in train.schema if f.is_numeric and f.actionability not in FIXED]
    mace = cf.MACE(time_limit=time_limit, random_state=seed).fit(model, train)
    effort = cf.Costs().bind(train.schema, train.X)
    judges, pool = copies[:N_JUDGES], copies[N_JUDGES:]
    reference = cf.models.retrained(model, train, n=REFERENCE, random_state=seed + 2)
    return Setup(dataset, kind, train, model, judges, pool, X, vary, effort, mace, reference)


def our_settings(s: Setup) -> list[tuple[str, str, cf.Requirements]]:
    """(who, setting, requirements) of every MACE run of the cell."""
    levels = [("ours", f"robustness {p}", cf.Requirements(robustness=p)) for p in ROBUSTNESS]
    if ONLY_LEVELS:
        return levels
    out = [("ours", "plain", cf.Requirements())]
    out += [("ours", f"margin {p}", cf.Requirements(min_probability=p)) for p in MARGINS]
    out.append(("ours", "4 copies", cf.Requirements(robust_to=s.pool)))
    out.append(
        ("ours", "4 copies + margin 0.6", cf.Requirements(robust_to=s.pool, min_probability=0.6))
    )
    out += levels
    if s.kind == "rf":
        n_trees = int(MODELS["rf"]["n_estimators"])
        for a in ALPHAS:
            share = cf.vote_share_for(n_trees, a)
            label = f"alpha {a} (share {share:.3f})"
            out.append((FOREL, label, cf.Requirements(min_vote_share=share)))
    return out


def _mace_first(s: Setup, req: cf.Requirements) -> tuple[pd.DataFrame, pd.Series, float, list, Any]:
    """(first answer per answered row, every row's target, seconds, the rows the library
    says reach the robustness asked for, and their estimates (``result.robustness()`` at
    rank 0): both None without that requirement)."""
    t0 = time.perf_counter()
    r = s.mace.explain(s.X, constraints=cf.Constraints(features_to_vary=s.vary), requirements=req)
    seconds = time.perf_counter() - t0
    cfs = r.counterfactuals
    first = cfs[cfs.index.get_level_values(1) == 0].loc[:, s.train.schema.names]
    reached = r.diagnostics.get("robustness_reached")
    said = None if reached is None else [q for q in first.index.get_level_values(0) if reached[q]]
    held = None if req.robustness is None else r.robustness().xs(0, level=1)
    return first.droplevel(1), r.target, seconds, said, held


#: per first answer under robustness=p: the library's estimate beside the share of the
#: judges and of the more copies that accept it (written as ``<name>_estimates.csv``)
ESTIMATES: list[pd.DataFrame] = []


def estimates(
    s: Setup, label: str, table: pd.DataFrame, first: pd.DataFrame, judges, more
) -> pd.DataFrame:
    """One row per first answer: the held-out copies that accept it (``accepted`` of
    ``copies``), the estimate's 95 % interval, and the share of the judges and of the
    more copies that accept it (``judges``, ``more``: :func:`_accepts` of each; both
    never seen by the library)."""
    table = table.loc[first.index]
    return pd.DataFrame(
        {
            "dataset": s.dataset,
            "model": s.kind,
            "setting": label,
            "query": first.index,
            "accepted": table["accepted"].to_numpy(),
            "copies": table["copies"].to_numpy(),
            "low": table["low"].to_numpy(),
            "high": table["high"].to_numpy(),
            "reached": table["reached"].to_numpy(),
            "judges": judges.mean(axis=0) if len(judges) else np.nan,
            "more copies": more.mean(axis=0) if len(more) else np.nan,
            "more copies n": len(more),
        }
    )


def _accepts(first: pd.DataFrame, targets, models: list) -> np.ndarray:
    """Whether each of ``models`` (rows) predicts each answer's target (columns)."""
    if len(first) == 0 or not models:
        return np.zeros((len(models), len(first)), dtype=bool)
    tgt = targets.loc[first.index].to_numpy()
    return np.array([m.predict(first) == tgt for m in models], dtype=bool)


def _pairs_share(g: pd.DataFrame) -> str:
    """The Wilson interval over the (answer, more copy) pairs of ``g``."""
    n = g["more copies n"].to_numpy(dtype=int)
    k = int(np.round(g["more copies"].to_numpy(dtype=float) * n).sum())
    return _share(k, int(n.sum()))


def calibration(est: pd.DataFrame) -> pd.DataFrame:
    """The estimate checked against unseen copies, per model kind and number of held-out
    copies accepting, then over all of a kind's answers: answers, the estimate and its 95 %
    Clopper-Pearson interval, the share of the more copies accepting them (mean, and the
    Wilson interval over the pooled (answer, copy) pairs), the share of answers whose
    interval holds their own more-copies share (that share is a sample too: 20 of 20 lies
    above the interval of 7 of 8, [0.47, 0.997]) and the share whose two sets of copies
    disagree (:func:`_disagree`)."""
    out = []
    for kind, by_kind in est.groupby("model", sort=True):
        for (n, k), g in by_kind.groupby(["copies", "accepted"], sort=True):
            interval = f"[{g['low'].iloc[0]:.2f}, {g['high'].iloc[0]:.2f}]"
            out.append(_checked(g, kind, f"{int(k)} of {int(n)}", k / n, interval))
        mean = float((by_kind["accepted"] / by_kind["copies"]).mean())
        out.append(_checked(by_kind, kind, "all", mean, "-"))
    return pd.DataFrame(out)


def _checked(g: pd.DataFrame, kind: str, label: str, estimate: float, interval: str) -> dict:
    """One line of :func:`calibration`: the answers of ``g`` beside the unseen copies."""
    more = g["more copies"].to_numpy(dtype=float)
    held = (g["low"] <= more + 1e-9) & (more <= g["high"] + 1e-9)
    return {
        "model": kind,
        "held-out copies accepting": label,
        "answers": len(g),
        "estimate": round(estimate, 3),
        "estimate 95 % interval": interval,
        "more copies accepting (mean)": round(float(more.mean()), 3),
        "more copies 95 % CI": _pairs_share(g),
        "judges accepting (mean)": round(float(g["judges"].mean()), 3),
        "answers whose interval holds their more-copies share": round(float(held.mean()), 2),
        "answers whose two sets of copies disagree (Fisher, 5 %)": round(
            float(np.mean(_disagree(g))), 3
        ),
    }


def _disagree(g: pd.DataFrame) -> np.ndarray:
    """Per answer: whether its held-out copies and the more copies disagree, by a two-sided
    Fisher exact test at 5 % (both are samples of the same retrained models, so an honest
    estimate disagrees for at most 5 % of answers, the test being conservative)."""
    from scipy.stats import fisher_exact

    more = np.round(g["more copies"] * g["more copies n"]).astype(int)
    return np.array(
        [
            fisher_exact([[k, n - k], [a, m - a]])[1] < 0.05
            for k, n, a, m in zip(g["accepted"], g["copies"], more, g["more copies n"], strict=True)
        ],
        dtype=bool,
    )


def _judged(accepts: np.ndarray) -> tuple[int, int]:
    """(accepted (answer, model) pairs, pairs) of an :func:`_accepts` table."""
    return int(accepts.sum()), int(accepts.size)


#: the key of a point: one setting of one cell
POINT = ["dataset", "model", "who", "setting"]

#: what ends the name of a CSV column of pair counts (kept out of the Markdown)
ACCEPTED, JUDGED = ": accepted pairs", ": pairs"


def pair_columns(valid: str) -> tuple[str, str]:
    """The CSV columns of the pairs accepted and judged behind validity column ``valid``."""
    return f"{valid}{ACCEPTED}", f"{valid}{JUDGED}"


def count_columns(table: pd.DataFrame) -> tuple[str, ...]:
    """The pair-count columns of ``table``."""
    return tuple(c for c in table.columns if c.endswith((ACCEPTED, JUDGED)))


def _counted(columns: Any) -> list[str]:
    """The validity columns that have pair counts: the judges' and the more copies'."""
    return [c for c in columns if re.fullmatch(r"valid \((judges|\d+ more copies)\)", c)]


def _models_per_row(valid: str) -> int:
    """How many models judge each answered row for a validity column (5 judges, or the
    N of "valid (N more copies)")."""
    return N_JUDGES if valid == "valid (judges)" else int(valid.split("(")[1].split()[0])


def pair_counts(row: pd.Series, valid: str) -> tuple[int, int]:
    """(accepted pairs, pairs) behind a point's validity ``valid``: its count columns, else
    (a table written before they were kept) recovered from the 3-decimal share and the
    rows answered, exact up to 1,000 pairs (a run of 50 rows judged by 20 copies)."""
    k, n = (row.get(c) for c in pair_columns(valid))
    if k is not None and n is not None and pd.notna(k) and pd.notna(n):
        return int(k), int(n)
    share = pd.to_numeric(pd.Series([row.get(valid)]), errors="coerce").iloc[0]
    pairs = int(row["answered"]) * _models_per_row(valid)
    return (0, 0) if pd.isna(share) or pairs == 0 else (int(np.rint(share * pairs)), pairs)


def exact_valid(row: pd.Series, valid: str) -> float:
    """A point's validity as the exact share of its pairs (NaN without pairs)."""
    k, n = pair_counts(row, valid)
    return k / n if n else float("nan")


#: per (dataset, model, who, setting): each answered row's cost, for the paired verdict
COSTS: dict[tuple[str, str, str, str], pd.Series] = {}
#: every setting's first answers (written beside the table, to judge again later)
ANSWERS: list[pd.DataFrame] = []


def point(
    s: Setup, who: str, label: str, first: pd.DataFrame, targets, seconds, said=None, held=None
) -> dict:
    """One point of the curve: coverage, validity over the judges, median effort, and
    for ``robustness`` the rows the library says reach it with their own validity (and,
    given their estimates ``held``, each answer's estimate joins :data:`ESTIMATES`)."""
    names = s.train.schema.names
    judges, more = _accepts(first, targets, s.judges), _accepts(first, targets, s.reference)
    where = first.index.isin(said or [])
    k, n = _judged(judges)
    costs = [float(s.effort.evaluate(s.X.loc[q], first.loc[[q], names])[0]) for q in first.index]
    COSTS[(s.dataset, s.kind, who, label)] = pd.Series(costs, index=first.index, dtype=float)
    k_said, n_said = (0, 0) if said is None else _judged(judges[:, where])
    k_ref, n_ref = _judged(more)
    ref_said = (0, 0) if said is None else _judged(more[:, where])
    if held is not None and len(first):
        ESTIMATES.append(estimates(s, label, held, first, judges, more))
    ANSWERS.append(first.assign(_dataset=s.dataset, _model=s.kind, _who=who, _setting=label))
    return {
        "dataset": s.dataset,
        "model": s.kind,
        "who": who,
        "setting": label,
        "rows": len(s.X),
        "answered": len(first),
        "coverage": round(len(first) / max(len(s.X), 1), 2),
        "valid (judges)": round(k / n, 3) if n else float("nan"),
        "valid 95 % CI": _share(k, n),
        "median cost": round(float(np.median(costs)), 2) if costs else float("nan"),
        f"valid ({len(s.reference)} more copies)": round(k_ref / n_ref, 3) if n_ref else "-",
        "said to reach": "-" if said is None else len(said),
        "valid where said": round(k_said / n_said, 3) if n_said else "-",
        "valid where said 95 % CI": _share(k_said, n_said) if said is not None else "-",
        f"valid where said ({len(s.reference)} more copies)": (
            round(ref_said[0] / ref_said[1], 3) if ref_said[1] else "-"
        ),
        "seconds per row": round(seconds / max(len(s.X), 1), 2),
        **_count_columns(k, n, k_ref, n_ref, len(s.reference)),
    }


def _count_columns(k: int, n: int, k_ref: int, n_ref: int, more: int) -> dict[str, int]:
    """The (answer, model) pairs accepted and judged behind the two validities, kept in the
    CSV so that a verdict compares exact shares (:func:`exact_valid`), not rounded ones."""
    judges, finer = pair_columns("valid (judges)"), pair_columns(f"valid ({more} more copies)")
    return dict(zip((*judges, *finer), (k, n, k_ref, n_ref), strict=True))


def curve(dataset: str, kind: str, rows: int, time_limit: float, seed: int) -> list[dict]:
    """Every setting's point for one dataset x model."""
    s = setup(dataset, kind, rows, time_limit, seed)
    out, targets = [], None
    for who, label, req in our_settings(s):
        try:
            first, tgt, seconds, said, held = _mace_first(s, req)
        except Exception as exc:  # a setting the installed library refuses: say so
            print(f"{dataset} {kind} {label}: {type(exc).__name__}: {exc}")
            continue
        targets = tgt if targets is None else targets
        out.append(point(s, who, label, first, tgt, seconds, said, held))
        if said is not None:
            out.append(point(s, SAID, label, first.loc[said], tgt, seconds))
        print(out[-1])
    if kind in ("lr", "mlp") and targets is not None and not ONLY_LEVELS:
        out += _ellice_points(s, targets)
    return out


def _ellice_points(s: Setup, targets: pd.Series) -> list[dict]:
    from _ellice_peer import ElliCEPeer, available

    why = available()
    if why is not None:
        print(f"ElliCE skipped: {why}")
        return []
    out = []
    for eps in EPSILONS:
        t0 = time.perf_counter()
        first = ElliCEPeer(s.model, s.train, s.vary, eps).explain(s.X, targets)
        seconds = time.perf_counter() - t0
        out.append(point(s, ELLICE, f"epsilon {eps}", first, targets, seconds))
        print(out[-1])
    return out


def costs_frame() -> pd.DataFrame:
    """Every answered row's cost per setting (from :data:`COSTS`), one row per answer."""
    parts = [
        pd.DataFrame(
            {
                "dataset": d,
                "model": m,
                "who": w,
                "setting": st,
                "query": c.index,
                "cost": c.to_numpy(),
            }
        )
        for (d, m, w, st), c in COSTS.items()
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _paired(costs: pd.DataFrame, cell: tuple[str, str], a: tuple[str, str], b: tuple[str, str]):
    """(median cost of ``a``, of ``b``) over the rows both answered, their number, and a
    95 % interval of the difference of those medians (``a`` minus ``b``)."""
    here = costs[(costs["dataset"] == cell[0]) & (costs["model"] == cell[1])]

    def of(who_setting: tuple[str, str]) -> pd.Series:
        pick = here[(here["who"] == who_setting[0]) & (here["setting"] == who_setting[1])]
        return pick.set_index(pick["query"].astype(str))["cost"]

    ca, cb = of(a), of(b)
    both = ca.index.intersection(cb.index)
    if len(both) == 0:
        return float("nan"), float("nan"), 0, (float("nan"), float("nan"))
    xa, xb = ca[both].to_numpy(float), cb[both].to_numpy(float)
    return float(np.median(xa)), float(np.median(xb)), len(both), difference_interval(xa, xb)


def difference_interval(a: np.ndarray, b: np.ndarray, draws: int = 2000) -> tuple[float, float]:
    """A 95 % paired bootstrap interval of ``median(a) - median(b)``: the rows are drawn
    with replacement, each row's two costs together (seeded, so a table is reproduced)."""
    picks = np.random.default_rng(0).integers(0, len(a), size=(draws, len(a)))
    spread = np.median(a[picks], axis=1) - np.median(b[picks], axis=1)
    low, high = np.percentile(spread, [2.5, 97.5])
    return float(low), float(high)


def _nothing_to_beat(d: str, m: str, peer: pd.Series) -> dict:
    return {
        "dataset": d,
        "model": m,
        "peer": f"{peer['who']} {peer['setting']}",
        "peer valid": "-",
        "peer answered": 0,
        "ours at least as valid and covering": "(the peer answers no row)",
        "rows both answer": 0,
        "target met": True,
    }


def verdict(
    table: pd.DataFrame, costs: pd.DataFrame, ours_are=("ours",), valid="valid (judges)"
) -> pd.DataFrame:
    """Per peer point: among our settings (the rows of ``ours_are``) at least as valid
    (column ``valid``: the judges by default) and answering at least as many rows (the
    issue's target), the one cheapest on the rows both answer (paired medians), and
    whether it costs no more there."""
    out = []
    for (d, m), cell_rows in table.groupby(["dataset", "model"], sort=False):
        ours = cell_rows[cell_rows["who"].isin(ours_are)]
        for _, peer in cell_rows[cell_rows["who"].isin((FOREL, ELLICE))].iterrows():
            if peer["answered"] == 0:  # no validity level reached: nothing to beat
                out.append(_nothing_to_beat(d, m, peer))
                continue
            # exact shares: 0.67076 of ours is not "at least" Forel's 0.67115, though both
            # print as 0.671
            level = exact_valid(peer, valid)
            as_valid = [exact_valid(o, valid) >= level - 1e-12 for _, o in ours.iterrows()]
            ok = ours[np.array(as_valid, dtype=bool) & (ours["answered"] >= peer["answered"])]
            pairs = [
                (
                    *_paired(
                        costs, (d, m), (o["who"], o["setting"]), (peer["who"], peer["setting"])
                    ),
                    o,
                )
                for _, o in ok.iterrows()
            ]
            pairs = [x for x in pairs if x[2] > 0]
            best = min(pairs, key=lambda x: x[0] - x[1]) if pairs else None
            gap = "-" if best is None else _interval(best[3], best[2])
            out.append(
                {
                    "dataset": d,
                    "model": m,
                    "peer": f"{peer['who']} {peer['setting']}",
                    "peer valid": peer[valid],
                    "peer answered": peer["answered"],
                    "ours at least as valid and covering": "-" if best is None else _named(best[4]),
                    "our valid": "-" if best is None else best[4][valid],
                    "our answered": "-" if best is None else best[4]["answered"],
                    "rows both answer": 0 if best is None else best[2],
                    "our cost (paired)": "-" if best is None else round(best[0], 2),
                    "peer cost (paired)": "-" if best is None else round(best[1], 2),
                    "cost difference 95 % CI": gap,
                    "target met": best is not None and best[0] <= best[1] + 1e-9,
                }
            )
    return pd.DataFrame(out)


#: fewer rows both answer than this: no interval (a resample of 1-4 rows is no measure)
MIN_ROWS_FOR_INTERVAL = 5


def _interval(ci: tuple[float, float], rows: int) -> str:
    if rows < MIN_ROWS_FOR_INTERVAL:
        return f"too few rows ({rows})"
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def _named(row: pd.Series) -> str:
    """A setting's name in the verdict, marked when only its rows said to reach count."""
    return row["setting"] + (" (rows said to reach)" if row["who"] == SAID else "")


#: the sweep's settings: (label, number of copies given to the method, min_probability)
SWEEP = [
    ("plain", 0, None),
    ("robust_to 4 copies", 4, None),
    ("robust_to 8 copies", 8, None),
    ("4 copies + margin 0.55", 4, 0.55),
    ("8 copies + margin 0.55", 8, 0.55),
    ("8 copies + margin 0.6", 8, 0.6),
]


def sweep(rows: int, time_limit: float, seed: int) -> pd.DataFrame:
    """How far the guard goes on German Credit's forest: more copies and a margin, the
    first answer judged by 5 held-out retrained copies (validity averaged over them)."""
    data = cf.datasets.load("german_credit")
    train, test = data.split(test_size=0.3, random_state=seed)
    model = cf.models.fit(train, "rf", random_state=seed, **MODELS["rf"])
    copies = cf.models.retrained(model, train, n=13, random_state=seed + 1)
    judges, pool = copies[:5], copies[5:]
    X = cf.rows_to_explain(model, test).head(rows)
    mace = cf.MACE(time_limit=time_limit, random_state=seed).fit(model, train)
    out, base_cost, base_time = [], None, None
    for label, n, p in SWEEP:
        kw = {"robust_to": pool[:n]} if n else {}
        t0 = time.perf_counter()
        r = mace.explain(X, requirements=cf.Requirements(min_probability=p, **kw))
        seconds = time.perf_counter() - t0
        cfs = r.counterfactuals
        first = cfs[cfs.index.get_level_values(1) == 0].loc[:, train.schema.names]
        targets = r.target.loc[first.index.get_level_values(0)].to_numpy()
        valid = (
            float(np.mean([(j.predict(first) == targets).mean() for j in judges]))
            if len(first)
            else float("nan")
        )
        cost = _cost(r)
        base_cost = cost if base_cost is None else base_cost
        base_time = seconds if base_time is None else base_time
        both = cost.notna() & base_cost.notna() & (base_cost > 0)
        out.append(
            {
                "setting": label,
                "rows": len(X),
                "answers": len(first),
                "valid under retrain": f"{valid:.2f}",
                "median cost / plain": _ratio(cost[both] / base_cost[both]),
                "time / plain": f"{seconds / base_time:.1f}",
            }
        )
    return pd.DataFrame(out)


def _share(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = wilson(k, n)
    return f"{k / n:.2f} [{lo:.2f}, {hi:.2f}]"


def _ratio(r: pd.Series) -> str:
    r = r[np.isfinite(r)]
    return f"{float(r.median()):.2f}" if len(r) else "-"


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--datasets", default="german_credit,compas,adult")
    p.add_argument("--models", default="lr,rf,mlp")
    p.add_argument("--rows", type=int, default=50)
    p.add_argument("--time-limit", type=float, default=30.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reference", type=int, default=REFERENCE, help="more copies that judge")
    p.add_argument("--levels", default=",".join(map(str, ROBUSTNESS)), help="robustness=p levels")
    p.add_argument("--only-levels", action="store_true", help="run robustness=p alone")
    p.add_argument("--quick", action="store_true", help="10 rows of German Credit")
    p.add_argument("--name", default=None, help="the tables' name (to split a run in parts)")
    p.add_argument("--merge", default=None, help="comma-separated --name parts to join")
    p.add_argument(
        "--pool", action="store_true", help="with --merge: the parts are other seeds, pool rows"
    )
    p.add_argument(
        "--rejudge", default=None, help="comma-separated --name runs: write their verdicts again"
    )
    p.add_argument("--guards", action="store_true", help="the earlier guard table")
    p.add_argument(
        "--sweep",
        action="store_true",
        help="German Credit forest: more copies and margins (30 rows)",
    )
    return p.parse_args(argv)


def _guards(args: argparse.Namespace, datasets: list[str], rows: int) -> None:
    table = pd.DataFrame(
        [
            cell(d, k, rows, args.time_limit, args.seed)
            for d in datasets
            for k in args.models.split(",")
        ]
    )
    notes = [
        f"MACE (time limit {args.time_limit:g} s per row), {rows} rejected test rows per cell, "
        f"seed {args.seed}.",
        "robust: robust_to = 4 retrained copies (bootstrap resamples, other seeds); 'valid "
        "under retrain': the first answer accepted by a 5th copy never given to the method "
        "(Wilson 95 % interval).",
        "Costs: MACE's delta_max, paired per row (median of the per-row ratio); "
        "times: the whole explain call.",
        "regions: share certified by interval bounds + MILP; width of each changed numeric "
        "feature over its range; time per region over the plain explain time per row.",
    ]
    write_table("robust_guards", table, notes)


def _curve_notes(rows: int | None, args: argparse.Namespace) -> list[str]:
    """The notes of a curve's table; ``rows`` None for pooled runs (each part's rows, seed
    and time limit are its own, written in its table)."""
    run = (
        "the parts' own rows, seeds and time limits (see each part's table)"
        if rows is None
        else f"{rows} rejected test rows per cell, seed {args.seed}; MACE with a time limit "
        f"of {args.time_limit:g} s per row (per setting of the robustness ladder)"
    )
    return [
        f"{run}; only the numeric features may change (their schema directions and bounds "
        "kept), for every setting.",
        f"valid (judges): accepted (answered row, judge) pairs over all such pairs, {N_JUDGES} "
        "retrained copies (bootstrap resamples, other seeds) never given to any method; "
        "Wilson 95 % interval over the pairs.",
        f"valid ({REFERENCE} more copies): the same pairs over {REFERENCE} more retrained copies "
        "from a seed stream of their own, a finer measure than 5 judges (a judge that leans "
        "one way rejects many rows at once).",
        "said to reach / valid where said: for robustness=p, the rows whose answer the "
        "library says reaches p (robustness_reached) and the judges' validity on them; the "
        "other rows get the most robust answer found, with its shortfall.",
        "median cost: the first answer in the default measure of effort (cf.Costs(): 1 per "
        "changed feature plus each move in MADs), median over the answered rows.",
        f"forests: {MODELS['rf']}; {FOREL}: cf.vote_share_for(n_trees, alpha) as "
        "Requirements(min_vote_share=...), searched by MACE.",
        f"{ELLICE} 0.1.4: robustness_epsilon swept, in the pipeline's encoded space, decoded "
        "back (integers rounded); an answer counts when the explained model accepts it.",
    ]


def _write_curve(name: str, table: pd.DataFrame, costs: pd.DataFrame, notes: list[str]) -> None:
    write_table(name, table, notes, hidden=count_columns(table))
    costs.to_csv(OUT / f"{name}_costs.csv", index=False)
    _write_verdicts(name, table, costs)


def _rejudge(args: argparse.Namespace) -> None:
    """The verdicts of stored runs written again from their tables and costs (after a change
    to how a verdict is reached; nothing is solved again)."""
    for name in args.rejudge.split(","):
        table = pd.read_csv(OUT / f"{name}.csv")
        _write_verdicts(name, table, pd.read_csv(OUT / f"{name}_costs.csv"))


def _write_verdicts(name: str, table: pd.DataFrame, costs: pd.DataFrame) -> None:
    """The curve's verdicts: every answered row (``_target``), the rows said to reach p
    (``_vouched``) and the finer measure (``_finer``)."""
    said = (
        "Rows said to reach: robustness=p counted only on the rows whose answer the library "
        "says reaches p, as a peer counts only the rows it answers; the rows it answers "
        "short of p, with their shortfall, are left out of this view."
    )
    finer = f"valid ({REFERENCE} more copies)"
    for suffix, ours_are, valid, why in (
        (
            "target",
            ("ours",),
            "valid (judges)",
            "validity is on the judges, every answered row of ours counted",
        ),
        ("vouched", ("ours", SAID), "valid (judges)", said),
        (
            "finer",
            ("ours",),
            finer,
            f"validity is measured on the {REFERENCE} more copies instead of the "
            f"{N_JUDGES} judges (four times the pairs), every answered row of ours counted",
        ),
    ):
        if valid not in table.columns:
            continue
        target = verdict(table, costs, ours_are, valid)
        if len(target):
            write_table(
                f"{name}_{suffix}",
                target,
                [
                    "For each peer point: among our settings whose validity is at least the "
                    "peer's and that answer at least as many rows, the one "
                    "cheapest on the rows both answer (paired medians in the default measure "
                    "of effort); 'target met' when it costs no more there.",
                    "cost difference 95 % CI: ours minus the peer's paired median, a paired "
                    "bootstrap over the rows both answer (2,000 draws; none under "
                    f"{MIN_ROWS_FOR_INTERVAL} rows); an interval that holds 0 does not tell the "
                    "two apart on these rows.",
                    f"Here {why}.",
                ],
            )


def _curve(args: argparse.Namespace, datasets: list[str], rows: int) -> None:
    """Every cell's points, the tables rewritten after each cell (a long run that stops
    keeps what it measured)."""
    name = args.name or ("robust_quick" if args.quick else "robust")
    points: list[dict] = []
    for d in datasets:
        for k in args.models.split(","):
            points += curve(d, k, rows, args.time_limit, args.seed)
            _write_curve(name, pd.DataFrame(points), costs_frame(), _curve_notes(rows, args))
            pd.concat(ANSWERS).to_csv(OUT / f"{name}_answers.csv")
            if ESTIMATES:
                _write_estimates(name, pd.concat(ESTIMATES, ignore_index=True))


def _write_estimates(name: str, est: pd.DataFrame) -> None:
    """Every estimate beside the unseen copies (``<name>_estimates.csv``) and the check
    by number of held-out copies accepting (``<name>_estimate``)."""
    est.to_csv(OUT / f"{name}_estimates.csv", index=False)
    n, held = int(est["more copies n"].max()), int(est["copies"].max())
    notes = [
        "For every first answer under robustness=p (every level, every row answered, those "
        f"short of p too): the library's estimate, the share of its {held} held-out copies that "
        "accept the answer, with its exact 95 % Clopper-Pearson interval "
        "(result.robustness()), beside the share of copies it never saw that accept it.",
        f"more copies: {n} retrained copies from a seed stream of their own (bootstrap "
        "resamples, other seeds), as the library's copies are made; judges: the 5 judges of "
        "the curve. Both are samples too, so an interval that holds the true share may miss "
        f"a {n}-copy share now and then.",
        "An answer is counted once per robustness level that kept it.",
        "interval holds: the more copies' share lies in the estimate's interval; a sample "
        f"itself, it may fall outside (a {n}-copy share of 1 lies above the interval of 7 of "
        "8, [0.47, 0.997]). disagree: a two-sided Fisher exact test at 5 % between the "
        "held-out copies' and the more copies' counts; an honest estimate disagrees for at "
        f"most 5 % of answers, but all answers of one fitted model share its {held} copies, so "
        "their misses come together.",
    ]
    write_table(f"{name}_estimate", calibration(est), notes)


def _parts(names: list[str], suffix: str, key: list[str]) -> pd.DataFrame:
    """The parts' tables joined; a setting measured in several parts keeps the last
    part's rows (a rerun replaces what it reran)."""
    frames = [pd.read_csv(OUT / f"{n}{suffix}.csv").assign(_part=i) for i, n in enumerate(names)]
    joined = pd.concat(frames, ignore_index=True)
    last = joined.groupby(key)["_part"].transform("max")
    return joined[joined["_part"] == last].drop(columns="_part").reset_index(drop=True)


def _merge(args: argparse.Namespace) -> None:
    """One table (and its verdict) from the parts of runs split by --name; with --pool the
    parts are runs on other seeds, whose rows are pooled."""
    parts = args.merge.split(",")
    if args.pool:
        _write_pooled(args, parts)
        return
    table = _parts(parts, "", POINT)
    costs = _parts(parts, "_costs", POINT)
    _write_curve(args.name or "robust", table, costs, _curve_notes(args.rows, args))
    _merge_estimates(args.name or "robust", parts, pool=False)


def _merge_estimates(name: str, parts: list[str], pool: bool) -> None:
    """The parts' estimates joined (queries prefixed with their run when pooled); parts
    run before the estimates were kept have none."""
    frames = []
    for run in parts:
        path = OUT / f"{run}_estimates.csv"
        if path.exists():
            est = pd.read_csv(path)
            frames.append(_of_run(est, run) if pool else est)
    if frames:
        _write_estimates(name, pd.concat(frames, ignore_index=True))


def _write_pooled(args: argparse.Namespace, parts: list[str]) -> None:
    """The curve and its verdicts over the parts' rows pooled (:func:`pooled`)."""
    tables = [pd.read_csv(OUT / f"{n}.csv") for n in parts]
    costs = [pd.read_csv(OUT / f"{n}_costs.csv") for n in parts]
    table, cost = pooled(tables, costs, parts)
    notes = [
        f"Pooled over the runs {', '.join(parts)} (one seed each: another split, model, "
        "judges and copies); each row's costs are paired within its run."
    ]
    _write_curve(args.name or "robust_pooled", table, cost, notes + _curve_notes(None, args))
    _merge_estimates(args.name or "robust_pooled", parts, pool=True)


def pooled(
    tables: list[pd.DataFrame], costs: list[pd.DataFrame], runs: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs of the same cells on other seeds as one: rows, answers and the rows said to
    reach are summed, each validity is the mean of the runs' weighted by the rows it is
    measured on (every run has as many judges and as many more copies), the Wilson
    interval is recomputed over the pooled pairs and the median cost is taken over the
    pooled rows.  A row's query is prefixed with its run, so that costs are paired only
    within the run that produced them.  A setting missing from a run is pooled over the
    runs that have it."""
    cost = pd.concat([_of_run(c, r) for c, r in zip(costs, runs, strict=True)], ignore_index=True)
    joined = pd.concat(tables, ignore_index=True)
    by_point = {k: g["cost"] for k, g in cost.groupby(POINT, sort=False)}
    out = [
        _pool_point(g, by_point.get(k, pd.Series(dtype=float)), k)
        for k, g in joined.groupby(POINT, sort=False)
    ]
    frame = pd.DataFrame(out)
    columns = [*joined.columns, *(c for c in count_columns(frame) if c not in joined.columns)]
    return frame[columns], cost


def _of_run(frame: pd.DataFrame, run: str) -> pd.DataFrame:
    """``frame`` with each query prefixed by its run (``"run:query"``)."""
    return frame.assign(query=f"{run}:" + frame["query"].astype(str))


def _pool_point(g: pd.DataFrame, costs: pd.Series, key: tuple) -> dict:
    """One point pooled over the runs in ``g``; ``costs``: its pooled rows' costs."""
    row = dict(zip(POINT, key, strict=True))
    num = {c: pd.to_numeric(g[c], errors="coerce").fillna(0) for c in g.columns if c not in POINT}
    row["rows"], row["answered"] = int(num["rows"].sum()), int(num["answered"].sum())
    row["coverage"] = round(row["answered"] / max(row["rows"], 1), 2)
    said = pd.to_numeric(g["said to reach"], errors="coerce")
    row["said to reach"] = "-" if said.isna().all() else int(said.sum())
    for col in g.columns:
        if col.startswith("valid") and "95 % CI" not in col and col not in count_columns(g):
            row[col] = _weighted(
                g[col], num["said to reach" if "where said" in col else "answered"]
            )
    for valid in _counted(g.columns):
        counts = [pair_counts(r, valid) for _, r in g.iterrows()]
        accepted, judged = pair_columns(valid)
        row[accepted], row[judged] = sum(k for k, _ in counts), sum(n for _, n in counts)
    row["valid 95 % CI"] = _pooled_share(g["valid (judges)"], num["answered"])
    row["valid where said 95 % CI"] = _pooled_share(g["valid where said"], num["said to reach"])
    row["median cost"] = round(float(np.median(costs)), 2) if len(costs) else float("nan")
    total = float((num["seconds per row"] * num["rows"]).sum())
    row["seconds per row"] = round(total / max(row["rows"], 1), 2)
    return row


def _weighted(values: pd.Series, weights: pd.Series) -> float | str:
    """The mean of a column's numbers weighted by the rows each is measured on ("-" when
    no run has one)."""
    v = pd.to_numeric(values, errors="coerce")
    ok = v.notna() & (weights > 0)
    return round(float((v[ok] * weights[ok]).sum() / weights[ok].sum()), 3) if ok.any() else "-"


def _pooled_share(valid: pd.Series, rows: pd.Series) -> str:
    """The Wilson interval over the pooled (row, judge) pairs: each run's accepted pairs
    recovered from its validity (kept to 3 decimals, exact up to 1,000 pairs) and summed."""
    v = pd.to_numeric(valid, errors="coerce")
    ok = v.notna() & (rows > 0)
    pairs = rows[ok] * N_JUDGES
    return _share(int((v[ok] * pairs).round().sum()), int(pairs.sum())) if ok.any() else "-"


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    global REFERENCE, ROBUSTNESS, ONLY_LEVELS
    REFERENCE, ONLY_LEVELS = args.reference, args.only_levels
    ROBUSTNESS = [float(v) for v in args.levels.split(",")]
    warnings.filterwarnings("ignore")
    if args.sweep:
        notes = [
            f"German Credit forest {MODELS['rf']}, MACE ({args.time_limit:g} s per row), seed "
            f"{args.seed}; validity: the first answer accepted by 5 retrained copies never "
            "given to the method (mean over them)."
        ]
        write_table("robust_sweep", sweep(30, args.time_limit, args.seed), notes)
        return 0
    if args.merge:
        _merge(args)
        return 0
    if args.rejudge:
        _rejudge(args)
        return 0
    datasets = ["german_credit"] if args.quick else args.datasets.split(",")
    rows = 10 if args.quick else args.rows
    (_guards if args.guards else _curve)(args, datasets, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
