"""The words of an audit: each figure's definition.  Each method words its own
guarantee (``CounterfactualMethod.guarantee`` and ``certificate``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["GLOSSARY", "measure_words"]

GLOSSARY: dict[str, tuple[str, str]] = {
    "n": ("rows", "Rows of the audited population in the group (accepted and rejected)."),
    "n_rejected": (
        "rejected",
        "Rows the model does not assign to the target (favourable) class; only these are "
        "explained.",
    ),
    "rejection_rate": ("rejection rate", "rejected / rows of the group."),
    "recourse_rate": (
        "recourse rate",
        "Share of the group's rejected rows for which the method returned a counterfactual that "
        "the real model assigns to the target class and that satisfies every constraint of the "
        "audit. Interval: Wilson score interval at the stated confidence.",
    ),
    "holding_rate": (
        "recourse that holds",
        "Under robustness (the share of retrained models asked to still accept each answer): "
        "share of the group's rejected rows whose counterfactual is said to reach that share "
        "(the retrained copies that choose let it, and the held-out copies' estimate confirms "
        "it). A row short of it keeps its most robust answer and counts in the recourse rate "
        "only. Interval: Wilson score interval at the stated confidence.",
    ),
    "proven_none_rate": (
        "proven no recourse",
        "Share of the group's rejected rows for which an exact method (MACE, CE-OCL) proved that "
        "no counterfactual exists under the audit's constraints (status 'infeasible', a solver's "
        "refutation). Always 0 for heuristic methods: their 'none found' is not a proof and "
        "counts as unknown.",
    ),
    "unknown_rate": (
        "unknown",
        "Share of rejected rows with neither a counterfactual nor a proof: time limit, solver "
        "failure, a failed chunk, or a heuristic that found none (not a proof). The per-row "
        "table gives each reason.",
    ),
    "cost": (
        "cost",
        "Per row with recourse, what its (first) counterfactual asks of the person, in the "
        "audit's measure (meta['measure'], its unit in meta['cost_unit']). Default: the measure "
        "of effort, in changes + MAD-units: 1 per changed feature plus each numeric or ordinal "
        "move divided by the feature's MAD (median absolute deviation in the training data), a "
        "category change moving 1; the same scale for every method. 'l1': the range-normalised "
        "l1 distance (the mean over all features of |change| / range, rank change / (levels - "
        "1), 1 per category change; no unit); 'method': the method's own objective; "
        "'n_changed': changed features; 'costs': your cf.Costs, in their unit.",
    ),
    "cost_measure": (
        "cost measure",
        "What the cost figures count, and in which unit: the audit's measure in words.",
    ),
    "cost_median": (
        "median cost",
        "Median cost over the group's rejected rows with recourse; interval: seeded percentile "
        "bootstrap.",
    ),
    "cost_mean": (
        "mean cost",
        "Mean cost over the group's rejected rows with recourse; interval: seeded percentile "
        "bootstrap.",
    ),
    "burden": (
        "burden",
        "CERTIFAI's burden (Sharma, Henderson & Ghosh, AIES 2020): the mean normalised l1 "
        "distance between the group's rejected members and their counterfactuals, here over the "
        "rejected rows with recourse (a row without a counterfactual has no distance; it shows "
        "in the recourse rate instead). Equal to the mean cost when the cost is the normalised "
        "l1.",
    ),
    "burden_ratio": (
        "burden ratio",
        "burden / burden of the best-off group (lowest burden among the groups of the same "
        "grouping that are not flagged small); burden_gap is the difference (Gupta et al. 2019's "
        "recourse gap).",
    ),
    "recourse_gap": (
        "recourse gap",
        "Recourse rate of the best-off group (highest rate among groups not flagged small) minus "
        "the group's; recourse_ratio = group's rate / best rate.",
    ),
    "small": (
        "small group",
        "Fewer rejected rows than the audit's min_group_size: its estimates are unreliable and "
        "it is not the reference group (unless every group of its grouping is small).",
    ),
    "action_share": (
        "action frequency",
        "Share of the rejected rows with recourse whose counterfactual changes the feature.",
    ),
    "change_set": (
        "change set",
        "The exact set of features a counterfactual changes; the most common sets are listed "
        "with their share of rows with recourse.",
    ),
    "protected_changed_rate": (
        "changes the protected feature",
        "Share of the rows with recourse whose counterfactual changes the protected feature when "
        "it is allowed to (MACE, Karimi et al. 2020, Table 4).",
    ),
    "sensitivity": (
        "cost of freezing the protected feature",
        "Every row whose answer changed the protected feature is explained again with that "
        "feature immutable (all other constraints unchanged; a feature only time moves, such as "
        "age under a timeline, is frozen by allowing no waiting); the increase is paired per row: "
        "frozen cost - allowed cost, over the rows with recourse both times; the relative "
        "increase is MACE's E[d_frozen / d_allowed - 1]. Rows whose answer did not change the "
        "feature keep their answer (for an exact method its optimum is unchanged by the "
        "restriction; for a heuristic this is an assumption).",
    ),
}


#: the audit's measures (``audit(measure=...)``) in words, with their unit
_MEASURE_WORDS = {
    "effort": "effort, in changes + MAD-units (1 per changed feature plus each move in MADs)",
    "l1": "range-normalised l1 distance (no unit: 1 = every feature across its whole range)",
    "n_changed": "number of changed features",
}


def measure_words(meta: Mapping[str, Any]) -> str:
    """The measure an audit aggregated and its unit, in words (its report's cost label)."""
    measure = meta.get("measure", "l1")
    if measure == "method":
        return str(meta.get("cost_method_name") or "method's distance")
    if measure == "costs":  # costs in the requirements: in the costs' unit
        return f"cost in {meta.get('cost_unit') or 'cost units'}"
    return _MEASURE_WORDS.get(str(measure), str(measure))
