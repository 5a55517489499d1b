"""The words of global recourse: each figure's definition, and the findings in plain sentences."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = ["GLOBAL_GLOSSARY", "findings"]

GLOBAL_GLOSSARY: dict[str, tuple[str, str]] = {
    "action": (
        "action",
        "A change rule on one or a few features that anyone can read: set a category, move a "
        "number by a delta, or raise / lower it to at least / at most a value (a person already "
        "there keeps theirs). Applied to a person's own row, the result is snapped to the "
        "features' grids (a change never shrinks); a move that leaves the feature's domain does "
        "not apply.",
    ),
    "works": (
        "works for a person",
        "The action, applied to the person's own row, gives a row that satisfies the person's "
        "own constraints (the schema's actionability, immutables, directions, ranges, allowed "
        "values, change cap) and that the real model assigns to the target class. Checked person "
        "by person, in batched predictions.",
    ),
    "coverage": (
        "coverage",
        "Share of the group's rejected people for whom at least one chosen action works. "
        "Interval: Wilson score interval at the stated confidence.",
    ),
    "individual_rate": (
        "per-person recourse",
        "Share of the group's rejected people for whom the per-person method found a "
        "counterfactual (the audit's recourse rate). relative_coverage = coverage / this rate: "
        "the share of what one counterfactual per person achieves that the few common actions "
        "achieve (it can exceed 1 when an action helps people the method found nothing for).",
    ),
    "coverage_gap": (
        "coverage gap",
        "Coverage of the best-covered group (highest coverage among groups of the same grouping "
        "not flagged small) minus the group's. Interval: Newcombe's hybrid score interval for a "
        "difference of two proportions (from the two Wilson intervals); an interval that "
        "includes 0 is no evidence of a gap.",
    ),
    "cost": (
        "cost of the action",
        "For a covered person, the cost of the row their action reaches, in the run's measure "
        "(default: the measure of effort, as the audit). A person for whom several chosen "
        "actions work is assigned the cheapest.",
    ),
    "cost_ratio": (
        "cost ratio",
        "Mean cost of the assigned common action over the mean cost of the person's own "
        "counterfactual, over the group's covered people who have one (seeded paired bootstrap "
        "interval). With a method that proves its answers nearest (MACE) under the same "
        "distance, the per-person cost is the lowest possible up to its tolerance (1 % by "
        "default, among the points past the decision threshold by the proof's margin), so the "
        "ratio is at least 0.99 and says how much more the common actions cost than each "
        "person's best; with a heuristic it can be below 1. cost_ratio_median: the median of "
        "the per-person ratios.",
    ),
    "n_new": (
        "added",
        "People for whom the action works and none of the actions listed before it does (actions "
        "are listed in the order greedy would add them).",
    ),
    "bound": (
        "bound",
        "No set of that many of the verified candidate actions covers more people than this: the "
        "MILP's proof when solved to optimality (HiGHS), else the least of everyone coverable, "
        "the largest single coverages summed and greedy's 1 - (1 - 1/k)^k guarantee. Actions "
        "outside the candidates are not covered by the bound. Among the sets that cover the "
        "most, the cheapest is sought by local search (single swaps), without a proof.",
    ),
}


def _pct(v: Any) -> str:
    return (
        "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * float(v):.1f}%"
    )


def _x(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.2f}×"


def _class_words(meta: Any) -> str:
    """The target class in words: its name in the dataset, with its code."""
    target, label = meta.get("target"), meta.get("target_label")
    if label is not None and str(label) != str(target):
        return f"the class {label!r} ({target!r})"
    return f"the class {target!r}"


def findings(g: Any) -> list[str]:
    """The main figures of a :class:`GlobalRecourse` in plain sentences."""
    if g.n_rejected == 0:
        return ["No row is rejected by the model, so there is nothing to recourse."]
    s = g.summary()
    o = s.iloc[0]
    meta = g.meta
    conf = f"{100 * g._settings.confidence:g}%"
    k = len(g.rules)
    own = "individual best" if meta.get("individual_lower_bound") else "own counterfactual"
    out = [
        f"{k} action{'s' if k != 1 else ''}, each applied to a person's own row within their "
        f"constraints and checked with the real model, get {g.n_covered} of the {g.n_rejected} "
        f"rejected people ({_pct(o['coverage'])}, {conf} interval [{_pct(o['coverage_ci_low'])}, "
        f"{_pct(o['coverage_ci_high'])}]) to {_class_words(meta)}.",
        f"One counterfactual per person ({meta.get('display_name', meta.get('method'))}) reached "
        f"{int(o['n_individual'])} ({_pct(o['individual_rate'])}); the common actions cover "
        f"{_pct(o['relative_coverage'])} of that.",
        _choice_sentence(g),
    ]
    if o["n_paired"]:
        out.append(
            f"For the people they cover, the common actions cost {_x(o['cost_ratio'])} their {own} "
            f"({_ratio_interval(o, conf)}; "
            f"median per-person ratio {_x(o['cost_ratio_median'])})."
            + (
                " Each person's own cost is the proven minimum, so no action can cost them less."
                if meta.get("individual_lower_bound")
                else " The per-person counterfactuals are not proven nearest, so a common "
                "action can cost less."
            )
        )
    for grouping in g.groupings:
        out.extend(_group_sentences(s[s["grouping"] == grouping], grouping, conf, own))
    return out


def _choice_sentence(g: Any) -> str:
    last = g.curve.iloc[-1] if len(g.curve) else None
    n = g.meta.get("candidates", {}).get("verified", 0)
    if last is None or not n:
        return (
            "No candidate action was found: the per-person method gave no counterfactual to build "
            "one from (see the audit's reasons)."
        )
    cheaper = (
        " Among the sets that cover as many, a local search made it cheaper (no single swap "
        "of one action lowers the total cost)."
    )
    if bool(last["optimal"]):
        how = (
            "proven by the MILP on HiGHS"
            if last["solver"] == "milp"
            else "it reaches an upper bound on what any such set covers"
        )
        return (
            f"No set of {int(last['k'])} of the {n} verified candidate actions covers more people "
            f"({how})." + cheaper
        )
    return (
        f"Chosen by {'a time-limited MILP' if last['solver'] == 'milp' else 'greedy max-coverage'} "
        f"among the {n} verified candidates; no set of {int(last['k'])} of them covers more than "
        f"{int(last['bound'])} people." + cheaper
    )


def _group_sentences(rows: pd.DataFrame, grouping: str, conf: str, own: str) -> list[str]:
    """The widest coverage gap and cost ratios of a grouping, over its groups not flagged small
    (all of them, said so, when every group is small)."""
    rows = rows[rows["n_rejected"] > 0]
    small = bool(len(rows)) and bool(rows["small"].all())
    rows = rows if small else rows[~rows["small"]]
    if len(rows) < 2:
        return []
    grouping = f"{grouping} (every group small: indicative only)" if small else grouping
    best = rows[rows["best_off"]].iloc[0] if rows["best_off"].any() else rows.iloc[0]
    worst = rows.loc[rows["coverage_gap"].idxmax()] if rows["coverage_gap"].notna().any() else best
    if not worst["coverage_gap"] > 0:
        text = f"By {grouping}: every group has the same coverage, {_pct(best['coverage'])}"
    else:
        text = (
            f"By {grouping}: coverage goes from {_pct(worst['coverage'])} ({worst['group']}) to "
            f"{_pct(best['coverage'])} ({best['group']})"
        )
    if worst["coverage_gap"] > 0 and pd.notna(worst["coverage_gap_ci_low"]):
        lo, hi = worst["coverage_gap_ci_low"], worst["coverage_gap_ci_high"]
        text += (
            f", a gap of {100 * worst['coverage_gap']:.1f} points ({conf} interval "
            f"[{100 * lo:.1f}, {100 * hi:.1f}]"
            + ("; it includes 0: no evidence of a gap)" if lo <= 0 else ")")
        )
    out = [text + "."]
    ratios = rows.dropna(subset=["cost_ratio"])
    if len(ratios) >= 2:
        hi_r, lo_r = (
            ratios.loc[ratios["cost_ratio"].idxmax()],
            ratios.loc[ratios["cost_ratio"].idxmin()],
        )
        out.append(_ratio_sentence(hi_r, lo_r, conf, own))
    return out


def _ratio_interval(row: pd.Series, conf: str) -> str:
    """The cost ratio's bootstrap interval in words (none from a single pair)."""
    if not math.isfinite(row["cost_ratio_ci_low"]):
        return "one person, so no interval" if row["n_paired"] < 2 else "no interval"
    return f"{conf} interval [{_x(row['cost_ratio_ci_low'])}, {_x(row['cost_ratio_ci_high'])}]"


def _ratio_sentence(hi_r: pd.Series, lo_r: pd.Series, conf: str, own: str) -> str:
    """The groups whose common actions cost most and least against their own answers, or
    one sentence for all when every group's ratio reads the same."""
    if _x(hi_r["cost_ratio"]) == _x(lo_r["cost_ratio"]):
        return (
            f"The common actions cost every group {_x(hi_r['cost_ratio'])} what their {own} would."
        )
    return (
        f"The common actions cost {hi_r['group']} {_x(hi_r['cost_ratio'])} what their {own} "
        f"would ({_ratio_interval(hi_r, conf)}), against {_x(lo_r['cost_ratio'])} for "
        f"{lo_r['group']}."
    )
