"""Loaders: German Credit, Default of credit card clients (Taiwan), SBA (bundled);
HELOC, Give Me Some Credit, Bank Personal Loan (user's own copy)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..data import Dataset
from ..exceptions import ValidationError
from ._common import YEARLY, Col, default_timeline, find_external, make_dataset, read_bundled
from ._registry import INFO

PathArg = str | os.PathLike[str] | None

# -------------------------------------------------------------- German Credit
#: the A-codes of german.data decoded with german.doc (UCI)
_GERMAN_CODES: dict[str, dict[str, str]] = {
    "checking_status": {
        "A11": "< 0 DM",
        "A12": "0 <= ... < 200 DM",
        "A13": ">= 200 DM / salary assigned",
        "A14": "no checking account",
    },
    "credit_history": {
        "A30": "no credits taken / all paid back duly",
        "A31": "all credits at this bank paid back duly",
        "A32": "existing credits paid back duly till now",
        "A33": "delay in paying off in the past",
        "A34": "critical account / other credits existing",
    },
    "purpose": {
        "A40": "car (new)",
        "A41": "car (used)",
        "A42": "furniture/equipment",
        "A43": "radio/television",
        "A44": "domestic appliances",
        "A45": "repairs",
        "A46": "education",
        "A47": "vacation",
        "A48": "retraining",
        "A49": "business",
        "A410": "others",
    },
    "savings": {
        "A61": "< 100 DM",
        "A62": "100 <= ... < 500 DM",
        "A63": "500 <= ... < 1000 DM",
        "A64": ">= 1000 DM",
        "A65": "unknown / no savings account",
    },
    "employment_since": {
        "A71": "unemployed",
        "A72": "< 1 year",
        "A73": "1 <= ... < 4 years",
        "A74": "4 <= ... < 7 years",
        "A75": ">= 7 years",
    },
    "personal_status_sex": {
        "A91": "male: divorced/separated",
        "A92": "female: divorced/separated/married",
        "A93": "male: single",
        "A94": "male: married/widowed",
        "A95": "female: single",
    },
    "other_debtors": {"A101": "none", "A102": "co-applicant", "A103": "guarantor"},
    "property": {
        "A121": "real estate",
        "A122": "building society savings / life insurance",
        "A123": "car or other",
        "A124": "unknown / no property",
    },
    "other_installment_plans": {"A141": "bank", "A142": "stores", "A143": "none"},
    "housing": {"A151": "rent", "A152": "own", "A153": "for free"},
    "job": {
        "A171": "unemployed / unskilled - non-resident",
        "A172": "unskilled - resident",
        "A173": "skilled employee / official",
        "A174": "management / self-employed / highly qualified",
    },
    "telephone": {"A191": "none", "A192": "yes"},
    "foreign_worker": {"A201": "yes", "A202": "no"},
}
#: checking and savings status by balance, the level that says nothing about it lowest
_CHECKING_ORDER = (
    "no checking account",
    "< 0 DM",
    "0 <= ... < 200 DM",
    ">= 200 DM / salary assigned",
)
_SAVINGS_ORDER = (
    "unknown / no savings account",
    "< 100 DM",
    "100 <= ... < 500 DM",
    "500 <= ... < 1000 DM",
    ">= 1000 DM",
)
#: the upper edge of each band of ``employment_since``, in years (unemployed: none yet)
_EMPLOYMENT_EDGES = (0.0, 1.0, 4.0, 7.0, float("inf"))
_GERMAN_COLUMNS = [
    "checking_status",
    "duration_months",
    "credit_history",
    "purpose",
    "credit_amount",
    "savings",
    "employment_since",
    "installment_rate",
    "personal_status_sex",
    "other_debtors",
    "residence_since",
    "property",
    "age",
    "other_installment_plans",
    "housing",
    "existing_credits",
    "job",
    "people_liable",
    "telephone",
    "foreign_worker",
    "credit_risk",
]


def load_german_credit() -> Dataset:
    """Statlog (German Credit Data), Hofmann 1994, UCI; CC BY 4.0.

    The raw ``german.data`` (1,000 rows, 20 attributes) with its A-codes decoded
    to the labels of ``german.doc``.  Target ``credit_risk``: 1 = good (700),
    0 = bad (300), as in L2C.  ``employment_since``, ``job``, ``checking_status``
    and ``savings`` are ordinal; ``installment_rate`` and ``residence_since``
    (coded 1-4) stay integers.  Checking and savings status are ordered by the
    balance, with the level that says nothing about it lowest:
    "no checking account" < "< 0 DM" < "0 <= ... < 200 DM" < ">= 200 DM /
    salary assigned", and "unknown / no savings account" < "< 100 DM" < ... <
    ">= 1000 DM".

    Actionability, as a lender would advise an applicant (the papers' choices
    first): ``personal_status_sex``, ``foreign_worker`` and ``purpose``
    immutable (CE-OCL Table 4 and L2C), ``people_liable`` immutable (L2C),
    ``age`` only moved by time (CE-OCL: ``x_age >= x̂_age``; see below).  And, so
    that no answer is advice a lender cannot give:

    * ``credit_history`` immutable: a credit record, not an action (no one can
      be advised to have had "critical account / other credits existing");
    * ``checking_status``, ``savings`` and ``job`` increasing: a balance or a
      job can be advised to improve, never to get worse (and no one is advised
      to close an account: "no account" / "unknown" is the lowest level);
    * ``existing_credits`` decreasing (a credit can be paid off; taking more
      is no advice) and ``credit_amount`` decreasing (a smaller loan is a
      counter-offer; a larger one is not advice).  How far a loan may shrink
      is the applicant's need, not the data's: it is left unbounded here --
      pass ``cf.Constraints(ranges={"credit_amount": (0.5 * x["credit_amount"],
      None)})`` per applicant to keep an answer to, say, half the amount asked.

    Only time moves ``age`` (one year per 12 months, past the oldest applicant in
    the data too), ``residence_since`` (read as years at the address: one more per
    12 months, top-coded: 4 means "4 years or more", so it stops at 4) and
    ``employment_since`` (a band with upper edges 0 = "unemployed", 1, 4, 7, inf
    years: after ``t`` months *at most* the band its lower edge plus ``t`` certainly
    reaches, so "< 1 year" becomes "1 <= ... < 4 years" after 12 months; an
    unemployed applicant reaches no band by waiting); without a timeline they are
    immutable.  Default timeline (``cf.datasets.timeline(data)``): 24 months, a month
    of waiting costing 1/24 (two years = one changed feature in the default measure),
    ``savings`` rising at most one level per 6 months and never falling.

    The papers' actionability: ``data.with_schema(data.schema.with_actionability(
    credit_history="free", checking_status="free", age="increasing", ...))``.
    """
    df = read_bundled("german.data.gz", sep=" ", header=None, names=_GERMAN_COLUMNS)
    for col, codes in _GERMAN_CODES.items():
        df[col] = df[col].map(codes)
    y = (df["credit_risk"] == 1).astype(int)
    return make_dataset(
        df,
        _german_features(),
        "credit_risk",
        y,
        INFO["german_credit"],
        {},
        target_labels={0: "bad", 1: "good"},
        timeline=default_timeline(savings=(1 / 6, 0.0)),
    )


def _german_levels(col: str) -> tuple[str, ...]:
    """The decoded levels of ``col`` in the order of ``german.doc``."""
    return tuple(_GERMAN_CODES[col].values())


def _german_features() -> dict[str, Col]:
    """The features: kind, description, levels and the actionability explained in
    :func:`load_german_credit`."""
    cats = _german_levels
    imm, inc, time = "immutable", "increasing", "time"
    return {
        "checking_status": Col(
            "ordinal", "Status of the existing checking account", inc, _CHECKING_ORDER
        ),
        "duration_months": Col("integer", "Duration of the credit in months", unit="months"),
        "credit_history": Col("categorical", "Credit history", imm, cats("credit_history")),
        "purpose": Col("categorical", "Purpose of the credit", imm, cats("purpose")),
        "credit_amount": Col("real", "Credit amount (DM)", "decreasing", unit="DM"),
        "savings": Col("ordinal", "Savings account / bonds", inc, _SAVINGS_ORDER),
        "employment_since": Col(
            "ordinal",
            "Present employment since",
            time,
            cats("employment_since"),
            per_month=YEARLY,
            edges=_EMPLOYMENT_EDGES,
        ),
        "installment_rate": Col(
            "integer", "Installment rate in % of disposable income (coded 1-4)"
        ),
        "personal_status_sex": Col(
            "categorical", "Personal status and sex", imm, cats("personal_status_sex")
        ),
        "other_debtors": Col(
            "categorical", "Other debtors / guarantors", categories=cats("other_debtors")
        ),
        "residence_since": Col(
            "integer",
            "Present residence since (coded 1-4)",
            time,
            per_month=YEARLY,
            top_coded=True,
        ),
        "property": Col("categorical", "Most valuable property", categories=cats("property")),
        "age": Col("integer", "Age in years", time, unit="years", per_month=YEARLY),
        "other_installment_plans": Col(
            "categorical", "Other installment plans", categories=cats("other_installment_plans")
        ),
        "housing": Col("categorical", "Housing", categories=cats("housing")),
        "existing_credits": Col("integer", "Number of existing credits at this bank", "decreasing"),
        "job": Col("ordinal", "Job (skill level)", inc, cats("job")),
        "people_liable": Col("integer", "Number of people liable to provide maintenance for", imm),
        "telephone": Col(
            "binary", "Telephone registered under the customer's name", categories=cats("telephone")
        ),
        "foreign_worker": Col("binary", "Foreign worker", imm, cats("foreign_worker")),
    }


# ------------------------------------------------- Default of credit card clients
_TW_EDUCATION = {
    1: "graduate school",
    2: "university",
    3: "high school",
    4: "others",
    5: "unknown",
    6: "unknown",
    0: "unknown",
}
_TW_MARRIAGE = {1: "married", 2: "single", 3: "others", 0: "unknown"}
_PAY_DOC = (
    "Repayment status {} (-2 no consumption, -1 paid in full, 0 revolving credit, k = k months "
    "late)"
)
_MONTHS = ("Sep 2005", "Aug 2005", "Jul 2005", "Jun 2005", "May 2005", "Apr 2005")


def load_default_credit_taiwan() -> Dataset:
    """Default of credit card clients (Yeh & Lien 2009), UCI; CC BY 4.0.

    30,000 rows, 23 attributes, original names (``PAY_0`` ... ``PAY_6`` keep
    UCI's numbering).  Target ``default``: 1 = default payment next month
    (6,636; the unfavourable outcome).  ``SEX`` (1 male, 2 female),
    ``EDUCATION`` (1 graduate school, 2 university, 3 high school, 4 others;
    the undocumented codes 0, 5, 6 become "unknown") and ``MARRIAGE`` (1
    married, 2 single, 3 others, 0 "unknown") are decoded and categorical.
    Amounts (NT dollars) are real; repayment statuses integers in [-2, 8].

    Immutable: ``SEX``, ``MARRIAGE``; ``AGE`` only moved by time (immutable
    without a timeline: MACE's plausibility constraints on "age, sex, and marital
    status", Table 5; one year per 12 months under one).  Default timeline
    (``cf.datasets.timeline(data)``): 24 months, a month of waiting costing 1/24.
    MACE's own version is a 14-feature aggregation by Ustun et al. (29,623 rows); this loader keeps
    the raw attributes.

    As a lender would advise a card holder: the six months of repayment
    status, bills and payments (``PAY_*``, ``BILL_AMT*``, ``PAY_AMT*``) are a
    record of the past, not actions -- immutable (no one can be advised to
    have paid on time last September).  What remains is ``LIMIT_BAL`` (a
    lower limit is a counter-offer: decreasing) and ``EDUCATION``.  MACE's
    setting (every attribute but age, sex and marital status free):
    ``data.with_schema(data.schema.with_actionability(PAY_0="free", ...))``,
    as ``benchmarks/papers/mace.yaml`` does.
    """
    info = INFO["default_credit_taiwan"]
    df = read_bundled("default_of_credit_card_clients.csv.gz")
    y = df[df.columns[-1]]
    df["SEX"] = df["SEX"].map({1: "male", 2: "female"})
    df["EDUCATION"] = df["EDUCATION"].map(_TW_EDUCATION)
    df["MARRIAGE"] = df["MARRIAGE"].map(_TW_MARRIAGE)
    imm = "immutable"
    cols: dict[str, Col] = {
        "LIMIT_BAL": Col(
            "real", "Amount of given credit (NT dollars)", "decreasing", unit="NT dollars"
        ),
        "SEX": Col("binary", "Sex", imm, ("female", "male")),
        "EDUCATION": Col(
            "categorical",
            "Education",
            categories=("graduate school", "university", "high school", "others", "unknown"),
        ),
        "MARRIAGE": Col(
            "categorical", "Marital status", imm, ("married", "single", "others", "unknown")
        ),
        "AGE": Col("integer", "Age in years", "time", unit="years", per_month=YEARLY),
    }
    for i, m in zip((0, 2, 3, 4, 5, 6), _MONTHS, strict=True):
        cols[f"PAY_{i}"] = Col("integer", _PAY_DOC.format(m), imm)
    for i, m in enumerate(_MONTHS, start=1):
        cols[f"BILL_AMT{i}"] = Col("real", f"Bill statement {m} (NT dollars)", imm)
    for i, m in enumerate(_MONTHS, start=1):
        cols[f"PAY_AMT{i}"] = Col("real", f"Amount paid {m} (NT dollars)", imm)
    return make_dataset(
        df, cols, "default", y, info, {}, target_labels={0: "no default", 1: "default next month"},
        timeline=default_timeline(),
    )  # fmt: skip


# ---------------------------------------------------------------------- SBA
_SBA_DEFAULT = (
    "Term",
    "NoEmp",
    "CreateJob",
    "RetainedJob",
    "UrbanRural",
    "GrAppv",
    "SBA_Appv",
    "New",
    "RealEstate",
    "Portion",
    "Recession",
)
#: the ``features`` choice that keeps the columns of the L2C paper's released data
_L2C_FEATURES = "l2c"
_SBA_L2C = (
    "Selected",
    "Term",
    "NoEmp",
    "CreateJob",
    "RetainedJob",
    "UrbanRural",
    "ChgOffPrinGr",
    "GrAppv",
    "SBA_Appv",
    "New",
    "RealEstate",
    "Portion",
    "Recession",
)


def load_sba(*, features: str) -> Dataset:
    """SBA loans, case-study subset of Li, Mickel & Taylor (2018, JSE): 2,102
    California real-estate-sector loans, 686 charged off.

    Target ``Default``: 1 = charged off (unfavourable).  ``UrbanRural`` decoded
    (1 urban, 2 rural, 0 "unknown"); ``New``, ``RealEstate``, ``Recession`` stay
    0/1 indicators.  Immutable (L2C): ``UrbanRural``, ``New``, ``Recession``.
    Note the derived columns: ``RealEstate`` = (``Term`` >= 240) and
    ``Portion`` = ``SBA_Appv`` / ``GrAppv``; add causal constraints if
    counterfactuals must keep them consistent.

    * ``features="default"``: L2C's features without ``ChgOffPrinGr`` (the
      amount charged off: positive for every defaulted loan, so it leaks the
      target) and ``Selected`` (a sampling flag, not a loan property): 11.
    * ``features="l2c"``: L2C's 13 columns as released, leak included, with
      L2C's actionability: ``ChgOffPrinGr`` and ``Selected`` are free as in the
      paper, so answers may change them; for advice to a borrower make them
      immutable (``data.schema.with_actionability``) or use ``"default"``.

    Splits in ``metadata["splits"]``: ``"selected"`` (the paper's
    ``Selected`` flag: 1 = train, 1,051 / 1,051) and ``"year"`` (L2C's
    released split, by approval year: train FY >= 2006, 943 rows; test FY <=
    2005, 1,159 rows; the L2C paper's text describes the reverse periods).
    """
    info = INFO["sba"]
    df = read_bundled("SBAcase.csv.gz")
    df["UrbanRural"] = df["UrbanRural"].map({0: "unknown", 1: "urban", 2: "rural"})
    imm = "immutable"
    spec = {
        "Selected": Col("binary", "Li et al.'s training-sample flag", categories=(0, 1)),
        "Term": Col("integer", "Loan term in months", unit="months"),
        "NoEmp": Col("integer", "Number of business employees"),
        "CreateJob": Col("integer", "Number of jobs created"),
        "RetainedJob": Col("integer", "Number of jobs retained"),
        "UrbanRural": Col(
            "categorical", "Urban or rural business", imm, ("urban", "rural", "unknown")
        ),
        "ChgOffPrinGr": Col("real", "Charged-off amount (USD; leaks the target)"),
        "GrAppv": Col("real", "Gross amount of loan approved by the bank (USD)"),
        "SBA_Appv": Col("real", "SBA's guaranteed amount (USD)"),
        "New": Col("binary", "New business (1) or existing (0)", imm, (0, 1)),
        "RealEstate": Col("binary", "Loan backed by real estate (Term >= 240)", categories=(0, 1)),
        "Portion": Col("real", "SBA_Appv / GrAppv"),
        "Recession": Col("binary", "Loan active during the Great Recession", imm, (0, 1)),
    }
    names = _SBA_L2C if features == _L2C_FEATURES else _SBA_DEFAULT
    return make_dataset(
        df, {n: spec[n] for n in names}, "Default", df["Default"], info, {"features": features},
        target_labels={0: "paid in full", 1: "charged off"},
        splits={
            "selected": np.where(df["Selected"].to_numpy() == 1, "train", "test"),
            "year": np.where(df["ApprovalFY"].to_numpy() >= 2006, "train", "test"),
        },
    )  # fmt: skip


# ------------------------------------------------------------------ HELOC
def load_heloc(*, path: PathArg, special: str) -> Dataset:
    """FICO HELOC (xML Challenge 2018); **not bundled** (FICO's data licence).

    Reads the user's ``heloc_dataset_v1.csv`` (10,459 rows).  The 588 rows
    whose every feature is -9 ("no bureau record") are dropped: 9,871 rows, as
    CARLA (used by CE-OCL).  Target ``RiskPerformance``: 1 = Good (4,735), as
    CARLA.  Remaining special values (-7 condition not met, -8 no usable
    trades, -9 no record): ``special="keep"`` (default) keeps the codes as
    numbers; ``special="median"`` replaces them by the column's median of
    valid values (CARLA imputes with the mean).  Immutable:
    ``ExternalRiskEstimate`` (the bureau's score, not an action; CARLA).
    """
    info = INFO["heloc"]
    file = find_external(info, path, ("heloc_dataset_v1.csv", "heloc.csv"))
    df = pd.read_csv(file)
    if "RiskPerformance" not in df.columns:
        raise ValidationError(
            f"{file} does not look like FICO's HELOC file: no 'RiskPerformance' column."
        )
    feats = [c for c in df.columns if c not in ("RiskPerformance", "Probabilities")]
    df = df[~(df[feats] == -9).all(axis=1)].copy()
    if special == "median":
        for c in feats:
            bad = df[c] < 0
            if bad.any():
                df.loc[bad, c] = float(np.median(df.loc[~bad, c])) if (~bad).any() else 0.0
    y = (df["RiskPerformance"].astype(str).str.strip() == "Good").astype(int)
    cols = {c: Col("integer" if special == "keep" else "real", c) for c in feats}
    cols["ExternalRiskEstimate"] = Col(
        cols["ExternalRiskEstimate"].kind, "Consolidated bureau risk score", "immutable"
    )
    return make_dataset(
        df, cols, "RiskPerformance", y, info, {"path": str(file), "special": special},
        target_labels={0: "Bad", 1: "Good"},
    )  # fmt: skip


# ------------------------------------------------------ Give Me Some Credit
def load_give_me_some_credit(*, path: PathArg) -> Dataset:
    """Give Me Some Credit (Kaggle 2011); **not bundled** (competition rules).

    Reads the user's ``cs-training.csv`` (or ``cs-training.csv.zip``),
    150,000 rows; the unnamed id column dropped; rows with a missing
    ``MonthlyIncome`` or ``NumberOfDependents`` dropped (120,269 rows), as
    CARLA.  Target ``SeriousDlqin2yrs`` as Kaggle defines it: 1 = serious
    delinquency within two years (unfavourable; CARLA flips it).  Immutable:
    ``NumberOfDependents`` (CARLA); ``age`` only moved by time (immutable without
    a timeline, as CARLA; one year per 12 months under one; default timeline:
    24 months, a month of waiting costing 1/24).  CARLA also removes rows with a
    |z-score| >= 3; this loader keeps them (raw values, e.g. the 96/98 codes in
    the late-payment counts).
    """
    info = INFO["give_me_some_credit"]
    file = find_external(info, path, ("cs-training.csv", "cs-training.csv.zip"))
    df = pd.read_csv(file)
    df = df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed") or c == ""])
    if "SeriousDlqin2yrs" not in df.columns:
        raise ValidationError(
            f"{file} does not look like Kaggle's cs-training.csv: no 'SeriousDlqin2yrs' column."
        )
    df = df.dropna()
    real = ("RevolvingUtilizationOfUnsecuredLines", "DebtRatio", "MonthlyIncome")
    imm = ("NumberOfDependents",)
    cols = {
        c: Col("real" if c in real else "integer", c, "immutable" if c in imm else "free")
        for c in df.columns if c != "SeriousDlqin2yrs"
    }  # fmt: skip
    cols["age"] = Col("integer", "age", "time", unit="years", per_month=YEARLY)
    return make_dataset(
        df, cols, "SeriousDlqin2yrs", df["SeriousDlqin2yrs"], info, {"path": str(file)},
        target_labels={0: "no serious delinquency", 1: "serious delinquency within 2 years"},
        timeline=default_timeline(),
    )  # fmt: skip


# ------------------------------------------------------- Bank Personal Loan
def load_bank_loan(*, path: PathArg) -> Dataset:
    """Bank Personal Loan Modelling ("Thera Bank", Kaggle), used by UFCE; **not bundled**.

    No licence is stated for the data.

    Reads the user's raw ``Bank_Personal_Loan_Modelling.csv`` (5,000 rows);
    ``ID`` and ``ZIP Code`` dropped, as UFCE.  UFCE then oversamples the
    positives to 7,636 rows; this loader does not (resample in your own
    pipeline if you need to).  Target ``Personal Loan``: 1 = accepted the loan
    offer (480).  ``Education`` decoded (1 undergraduate, 2 graduate, 3
    advanced/professional; ordinal); the account/card columns are 0/1.
    ``Age`` and ``Experience`` (years of professional experience) are only moved
    by time: immutable without a timeline, one year per 12 months under one
    (default timeline: 24 months, a month of waiting costing 1/24).
    """
    info = INFO["bank_loan"]
    file = find_external(info, path, ("Bank_Personal_Loan_Modelling.csv",))
    df = pd.read_csv(file)
    df.columns = [str(c).strip() for c in df.columns]
    if "Personal Loan" not in df.columns:
        raise ValidationError(
            f"{file} does not look like the Bank Personal Loan file: no 'Personal Loan' column."
        )
    df = df.drop(columns=[c for c in ("ID", "ZIP Code") if c in df.columns])
    edu = ("undergraduate", "graduate", "advanced/professional")
    df["Education"] = df["Education"].map(dict(enumerate(edu, start=1)))
    yn = (0, 1)
    cols = {
        "Age": Col("integer", "Age in years", "time", unit="years", per_month=YEARLY),
        "Experience": Col(
            "integer", "Years of professional experience", "time", unit="years", per_month=YEARLY
        ),
        "Income": Col("real", "Annual income (thousand USD)", unit="thousand USD"),
        "Family": Col("integer", "Family size"),
        "CCAvg": Col(
            "real", "Average monthly credit card spending (thousand USD)", unit="thousand USD"
        ),
        "Education": Col("ordinal", "Education level", categories=edu),
        "Mortgage": Col("real", "Value of house mortgage (thousand USD)", unit="thousand USD"),
        "Securities Account": Col("binary", "Has a securities account", categories=yn),
        "CD Account": Col("binary", "Has a certificate of deposit account", categories=yn),
        "Online": Col("binary", "Uses internet banking", categories=yn),
        "CreditCard": Col("binary", "Uses a credit card issued by the bank", categories=yn),
    }
    return make_dataset(
        df,
        cols,
        "Personal Loan",
        df["Personal Loan"],
        info,
        {"path": str(file)},
        target_labels={0: "declined the loan", 1: "accepted the loan"},
        timeline=default_timeline(),
    )
