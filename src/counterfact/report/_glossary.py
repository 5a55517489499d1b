"""The report's key metrics and glossary: what each number means, its direction
and the paper it comes from."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOSSARY", "KEY_METRICS", "KeyMetric", "higher_is_better"]


@dataclass(frozen=True)
class KeyMetric:
    """A metric of the report's summary tables.

    Attributes
    ----------
    name : str
        Display name (``"proximity"``).
    column : str
        Column of the benchmark's per-query table (``"distance_l1"``).
    higher : bool
        Whether a higher value is better.
    formula : str
        Definition in plain text.
    source : str
        The paper(s) defining it.
    """

    name: str
    column: str
    higher: bool
    formula: str
    source: str

    @property
    def arrow(self) -> str:
        """``↑`` when higher is better, else ``↓``."""
        return "\u2191" if self.higher else "\u2193"

    @property
    def label(self) -> str:
        """Column header: name and direction arrow."""
        return f"{self.name} {self.arrow}"


KEY_METRICS: tuple[KeyMetric, ...] = (
    KeyMetric(
        "coverage",
        "coverage",
        True,
        "share of queries with at least one valid counterfactual: (1/|Q|) \u03a3_q 1[q has "
        "a valid c]",
        "Karimi et al. 2020 (MACE), Sec. 5; Vo et al. 2023 (L2C)",
    ),
    KeyMetric(
        "validity",
        "validity",
        True,
        "share of a query's returned counterfactuals that the model assigns the target class: "
        "(1/k) \u03a3_i 1[f(c_i) = t]; every reported counterfactual is re-checked with the model, "
        "so it is 1 wherever something was found",
        "Mothilal et al. 2020 (DiCE), Sec. 3.1",
    ),
    KeyMetric(
        "proximity",
        "distance_l1",
        False,
        "range-normalised l1 distance to the query, mean over the counterfactuals: (1/d) \u03a3_j "
        "|c_j - x_j| / range_j (ordinal: rank difference / (levels - 1); categorical: 1[c_j "
        "\u2260 x_j])",
        "Karimi et al. 2020 (MACE), Sec. 4.2",
    ),
    KeyMetric(
        "sparsity",
        "sparsity",
        False,
        "fraction of the features a counterfactual changes, mean over the counterfactuals: "
        "(1/d) \u03a3_j 1[c_j \u2260 x_j]",
        "Vo et al. 2023 (L2C); Suffian et al. 2024 (UFCE); Shekhar et al. 2023 (MD-PSO), "
        "eqs. (12)-(13)",
    ),
    KeyMetric(
        "diversity",
        "diversity_count",
        True,
        "mean over pairs of a query's counterfactuals of the fraction of features on which "
        "they differ: (1/(C(k,2) d)) \u03a3_{i<l} \u03a3_j 1[c_ij \u2260 c_lj]; needs two "
        "counterfactuals per query",
        "Mothilal et al. 2020 (DiCE), count diversity",
    ),
    KeyMetric(
        "plausibility",
        "plausibility",
        True,
        "share of counterfactuals that the Local Outlier Factor (20 neighbours, training "
        "rows of the target class) calls inliers",
        "Suffian et al. 2024 (UFCE), Sec. 3.3; Breunig et al. 2000 (LOF)",
    ),
    KeyMetric(
        "time per query (s)",
        "time",
        False,
        "wall-clock seconds per query, measured per query; for methods that explain queries "
        "in batches only the batch time exists and is shown amortized (batch time / n, "
        "marked \u1d43); the method's training (fit) time is reported separately",
        "all five papers",
    ),
)

#: Other metric families of the full tables: (columns, direction, definition, source).
GLOSSARY: tuple[tuple[str, str, str, str], ...] = (
    (
        "distance_l0 / l1 / linf, nearest_*",
        "\u2193",
        "range-normalised distances (mean over the counterfactuals; nearest_*: the smallest)",
        "Karimi et al. 2020 (MACE), Sec. 4.2",
    ),
    (
        "gower",
        "\u2193",
        "Gower distance with the training data's observed ranges",
        "Shekhar et al. 2023 (MD-PSO), eqs. (5)-(6)",
    ),
    (
        "proximity_cont, proximity_cat",
        "\u2191",
        "DiCE proximity: minus the MAD-weighted l1 distance of the continuous features; 1 - "
        "share of changed categories",
        "Mothilal et al. 2020 (DiCE); Maragno et al. (CE-OCL), Tables 2-3",
    ),
    (
        "prox_euc, prox_jac",
        "\u2193",
        "UFCE's Euclidean and Jaccard proximities",
        "Suffian et al. 2024 (UFCE), eqs. (5)-(6)",
    ),
    (
        "l2c_distance_num / cat, diversity_l2c, l2c_harmonic",
        "\u2193 / \u2193 / \u2191 / \u2191",
        "L2C's standardised numeric distance, changed-category count, bucket diversity and "
        "their harmonic mean",
        "Vo et al. 2023, Sec. 4.1, 5",
    ),
    ("changes", "\u2193", "number of features changed (mean over the counterfactuals)", "all"),
    (
        "diversity_cont / cat / normalized",
        "\u2191",
        "DiCE's MAD-weighted and categorical diversities; MD-PSO's normalised diversity",
        "Mothilal et al. 2020 (DiCE); Shekhar et al. 2023 (MD-PSO), eq. (15)",
    ),
    (
        "lof",
        "\u2193",
        "the Local Outlier Factor value (about 1 inside a cluster)",
        "Breunig et al. 2000",
    ),
    (
        "actionability, feasibility",
        "\u2191",
        "share of changes on user-actionable features; share of counterfactuals above "
        "UFCE's threshold",
        "Suffian et al. 2024 (UFCE), Sec. 3.3, eq. (9)",
    ),
    (
        "violations*",
        "\u2193",
        "constraint violations per kind (0 for every verified counterfactual)",
        "all",
    ),
    ("found", "\u2191", "number of counterfactuals per query", "all"),
)

_HIGHER = (
    "validity",
    "coverage",
    "diversity",
    "plausib",
    "feasib",
    "actionab",
    "harmonic",
    "score",
    "proximity_c",
    "found",
)
_LOWER = (
    "distance",
    "sparsity",
    "l0",
    "l1",
    "linf",
    "gower",
    "time",
    "violation",
    "changes",
    "jac",
    "euc",
    "lof",
    "seconds",
)


def higher_is_better(metric: str) -> bool | None:
    """Direction of a metric judged from its name (None when unknown)."""
    for k in KEY_METRICS:
        if metric in (k.column, k.name):
            return k.higher
    m = metric.lower()
    if any(s in m for s in _HIGHER):
        return True
    if any(s in m for s in _LOWER):
        return False
    return None
