"""Every metric the five papers report, as plain functions.

Each function takes explicit arguments -- a query row (Series), its
counterfactuals (DataFrame of raw rows), the schema and whatever else it needs
(model and target, training data, MAD) -- or a
:class:`~counterfact.result.CounterfactualResult` as its first argument, in
which case it returns one value per query (a Series indexed by query id) or,
for per-counterfactual quantities, one value per counterfactual (indexed like
``result.counterfactuals``).  :func:`evaluate` puts them all in one table.

=========================  ===============================================  ==============================
metric                     function                                         source
=========================  ===============================================  ==============================
validity, coverage         :func:`validity`, :func:`coverage`               L2C, MACE, MD-PSO, DiCE/CE-OCL
normalised l0/l1/linf      :func:`distance`, :func:`feature_deltas`,        MACE eq. (3)
                           :class:`DistanceEncoder`
Gower                      :func:`gower`                                    MD-PSO eqs. (5)-(6)
proximity (DiCE)           :func:`continuous_proximity`,                    DiCE, CE-OCL, MD-PSO (8)-(11)
                           :func:`categorical_proximity`
prox-Euc, prox-Jac         :func:`prox_euc`, :func:`prox_jac`               UFCE eqs. (6), (5)
Prox Num / Prox Cat        :func:`l2c_proximity_num`,                       L2C
                           :func:`l2c_proximity_cat`
sparsity                   :func:`sparsity`, :func:`n_changes`,             L2C, UFCE, MD-PSO (12)-(13);
                           :func:`dice_sparsity`                            DiCE/CE-OCL
diversity (DiCE)           :func:`continuous_diversity`,                    DiCE, CE-OCL, MD-PSO (14)
                           :func:`categorical_diversity`,
                           :func:`count_diversity`
L2C diversity and score    :func:`l2c_diversity`, :func:`l2c_score`,        L2C Sec. 4.1, 5
                           :func:`harmonic_mean`
normalised diversity       :func:`normalized_diversity`                     MD-PSO eq. (15)
plausibility (LOF)         :func:`plausibility`, :func:`lof_score`,         UFCE Sec. 3.3
                           :class:`LOFPlausibility`
actionability, feasibility :func:`actionability`, :func:`feasibility`       UFCE Sec. 3.3, eq. (9)
constraint violations      :func:`violation_counts`                         all (via constraints.violations)
time                       :func:`time_stats`,                              all
                           :func:`time_per_counterfactual`
=========================  ===============================================  ==============================
"""

from ._actionability import actionability, actionable_share, feasibility, user_features
from ._distances import (
    NORMS,
    DistanceEncoder,
    distance,
    feature_deltas,
    gower,
    n_changes,
    norm_weights,
)
from ._diversity import (
    categorical_diversity,
    continuous_diversity,
    count_diversity,
    harmonic_mean,
    l2c_bins,
    l2c_diversity,
    l2c_score,
    normalized_diversity,
)
from ._evaluate import METRIC_COLUMNS, evaluate
from ._plausibility import LOFPlausibility, lof_score, plausibility
from ._proximity import (
    categorical_proximity,
    continuous_proximity,
    dice_sparsity,
    l2c_proximity_cat,
    l2c_proximity_num,
    prox_euc,
    prox_jac,
    sparsity,
)
from ._validity import coverage, is_valid, validity
from ._violations import VIOLATION_KINDS, time_per_counterfactual, time_stats, violation_counts

__all__ = [
    "METRIC_COLUMNS",
    "NORMS",
    "VIOLATION_KINDS",
    "DistanceEncoder",
    "LOFPlausibility",
    "actionability",
    "actionable_share",
    "categorical_diversity",
    "categorical_proximity",
    "continuous_diversity",
    "continuous_proximity",
    "count_diversity",
    "coverage",
    "dice_sparsity",
    "distance",
    "evaluate",
    "feasibility",
    "feature_deltas",
    "gower",
    "harmonic_mean",
    "is_valid",
    "l2c_bins",
    "l2c_diversity",
    "l2c_proximity_cat",
    "l2c_proximity_num",
    "l2c_score",
    "lof_score",
    "n_changes",
    "norm_weights",
    "normalized_diversity",
    "plausibility",
    "prox_euc",
    "prox_jac",
    "sparsity",
    "time_per_counterfactual",
    "time_stats",
    "user_features",
    "validity",
    "violation_counts",
]
