"""Every metric the five papers report: :func:`evaluate` and plain functions.

Each function takes explicit arguments -- a query row (Series), its
counterfactuals (DataFrame of raw rows), the schema and whatever else it needs
(model and target, training data, MAD) -- or a
:class:`~counterfact.result.CounterfactualResult` as its first argument, in
which case it returns one value per query (a Series indexed by query id) or,
for per-counterfactual quantities, one value per counterfactual (indexed like
``result.counterfactuals``).  :func:`evaluate` puts them all in one table.

===========================  ==========================================  =========================
metric                       function                                    source
===========================  ==========================================  =========================
validity, coverage           :func:`validity`, :func:`coverage`          L2C, MACE, MD-PSO,
                                                                         DiCE/CE-OCL
range-normalised l0/l1/linf  :func:`distance`                            MACE
Gower                        :func:`gower`                               MD-PSO eqs. (5)-(6)
proximity (DiCE)             :func:`continuous_proximity`,               DiCE, CE-OCL,
                             :func:`categorical_proximity`               MD-PSO (8)-(11)
prox-Euc, prox-Jac           :func:`evaluate` (``prox_euc``,             UFCE eqs. (6), (5)
                             ``prox_jac``)
Prox Num / Prox Cat          :func:`evaluate` (``l2c_distance_*``)       L2C
sparsity                     :func:`dice_sparsity`, :func:`evaluate`     L2C, UFCE,
                             (``sparsity``, ``changes``)                 MD-PSO (12)-(13);
                                                                         DiCE/CE-OCL
diversity (DiCE)             :func:`continuous_diversity`,               DiCE, CE-OCL, MD-PSO (14)
                             :func:`categorical_diversity`,
                             :func:`count_diversity`
L2C diversity and score      :func:`evaluate` (``diversity_l2c``,        L2C Sec. 4.1, 5
                             ``l2c_harmonic``)
normalised diversity         :func:`evaluate` (``diversity_normalized``) MD-PSO eq. (15)
plausibility (LOF)           :func:`evaluate` (``plausibility``,         UFCE Sec. 3.3
                             ``lof``; :class:`LOFPlausibility`)
actionability, feasibility   :func:`evaluate` (``actionability``,        UFCE Sec. 3.3, eq. (9)
                             ``feasibility``)
constraint violations        :func:`violation_counts`                    all (via
                                                                         constraints.violations)
time                         :func:`evaluate` (``time``,                 all
                             ``time_per_counterfactual``)
===========================  ==========================================  =========================
"""

from ._distances import distance, gower
from ._diversity import categorical_diversity, continuous_diversity, count_diversity
from ._evaluate import evaluate
from ._plausibility import LOFPlausibility
from ._proximity import categorical_proximity, continuous_proximity, dice_sparsity
from ._validity import coverage, validity
from ._violations import violation_counts

__all__ = [
    "LOFPlausibility",
    "categorical_diversity",
    "categorical_proximity",
    "continuous_diversity",
    "continuous_proximity",
    "count_diversity",
    "coverage",
    "dice_sparsity",
    "distance",
    "evaluate",
    "gower",
    "validity",
    "violation_counts",
]
