"""Loaders: Adult, COMPAS, Student Performance, Graduate Admission (all bundled)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd

from ..data import Dataset
from ..exceptions import ValidationError
from ._common import YEARLY, Col, default_timeline, make_dataset, read_bundled
from ._registry import INFO

# --------------------------------------------------------------------- Adult
_ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week",
    "native_country", "income",
]  # fmt: skip
#: education levels in the order of UCI's education-num (1 = Preschool ... 16 = Doctorate)
_ADULT_EDUCATION = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
)  # fmt: skip


def load_adult(*, part: str, missing: str) -> Dataset:
    """UCI Adult (Census Income), Becker & Kohavi 1996; CC BY 4.0.

    Raw ``adult.data`` (32,561 rows) and ``adult.test`` (16,281 rows; its first
    line and the trailing "." of its labels removed); whitespace after the
    commas stripped.  Target ``income``: 1 = ``>50K``.

    Choices (documented in :func:`counterfact.datasets.info`):

    * ``missing="drop"`` (default) drops rows with a ``?`` (workclass,
      occupation, native-country), as MACE does ("all samples with missing data
      were dropped"): 45,222 rows for ``part="all"`` (MACE's n), 30,162 train,
      15,060 test.  ``missing="category"`` keeps them with the level
      ``"Unknown"`` (48,842 / 32,561 / 16,281 rows).
    * Features: MACE's twelve minus ``education_num`` plus ``race``:
      ``education_num`` is a 1:1 code of ``education`` (kept as an ordinal
      feature, so a counterfactual cannot change one without the other) and
      ``fnlwgt`` is the census sampling weight, not a property of the person.
    * Actionability: ``sex``, ``race``, ``native_country``, ``marital_status``
      and ``relationship`` (which encodes sex and marital status: Husband/Wife)
      immutable; ``education`` increasing (a degree cannot be lost); ``age``
      only moved by time: immutable without a timeline, one year per 12 months
      under one.  MACE's Appendix B ("non-decreasing age"):
      ``data.with_schema(data.schema.with_actionability(age="increasing"))``.
    * Default timeline (``cf.datasets.timeline(data)``, ``metadata["timeline"]``):
      24 months, a month of waiting costing 1/24 (two years cost as much as one
      changed feature in the default measure of effort), and ``education``
      rising at most one level per 12 months (a degree takes time).
    """
    df = _adult_missing(_read_adult(part), missing)
    return make_dataset(
        df,
        _ADULT_FEATURES,
        "income",
        df["income"].astype(str).str.rstrip(".") == ">50K",
        INFO["adult"],
        {"part": part, "missing": missing},
        target_labels={0: "<=50K", 1: ">50K"},
        splits={"part": df["_part"].to_numpy()},
        timeline=default_timeline(education=(YEARLY, 0.0)),
    )


#: the features kept, with their actionability (see :func:`load_adult`)
_ADULT_FEATURES = {
    "age": Col("integer", "Age in years", "time", unit="years", per_month=YEARLY),
    "workclass": Col("categorical", "Employer type"),
    "education": Col("ordinal", "Highest education level", "increasing", _ADULT_EDUCATION),
    "marital_status": Col("categorical", "Marital status", "immutable"),
    "occupation": Col("categorical", "Occupation"),
    "relationship": Col("categorical", "Relationship within the household", "immutable"),
    "race": Col("categorical", "Race", "immutable"),
    "sex": Col("binary", "Sex", "immutable", ("Female", "Male")),
    "capital_gain": Col("real", "Capital gains (USD)", unit="USD"),
    "capital_loss": Col("real", "Capital losses (USD)", unit="USD"),
    "hours_per_week": Col("integer", "Working hours per week", unit="hours per week"),
    "native_country": Col("categorical", "Country of origin", "immutable"),
}
#: the columns where the raw files write a missing value as "?"
_ADULT_MISSING = ["workclass", "occupation", "native_country"]


def _read_adult(part: str) -> pd.DataFrame:
    """The raw file(s) of ``part``, with a ``_part`` column naming the file of each row."""
    files = {
        "train": ("adult.data.gz", 0),
        "test": ("adult.test.gz", 1),
    }  # adult.test: skip "|1x3 Cross validator"
    parts = ["train", "test"] if part == "all" else [part]
    frames = [
        read_bundled(
            files[p][0],
            header=None,
            names=_ADULT_COLUMNS,
            skipinitialspace=True,
            skiprows=files[p][1],
        ).assign(_part=p)
        for p in parts
    ]
    return pd.concat(frames, ignore_index=True).dropna(subset=["income"])


def _adult_missing(df: pd.DataFrame, missing: str) -> pd.DataFrame:
    """Rows with a ``?`` dropped (``"drop"``) or the ``?`` read as the level ``"Unknown"``."""
    if missing == "drop":
        return df[~(df[_ADULT_MISSING] == "?").any(axis=1)]
    for c in _ADULT_MISSING:
        df[c] = df[c].astype(object).where(df[c] != "?", "Unknown")
    return df


# -------------------------------------------------------------------- COMPAS
_CHARGE = {"F": "Felony", "M": "Misdemeanor"}
_AGE_CAT = ("Less than 25", "25 - 45", "Greater than 45")
#: the ``variant`` that reproduces the table of the MACE paper
_MACE_VARIANT = "mace"


def load_compas(*, variant: str) -> Dataset:
    """ProPublica COMPAS two-year recidivism (Larson et al. 2016).

    Bundled columns of ``compas-scores-two-years.csv`` (7,214 rows; names and
    dates of birth left out).  Filters of ProPublica's analysis, used by MACE
    (through Zafar et al.'s loader) and CARLA: ``days_b_screening_arrest``
    within [-30, 30], ``is_recid != -1``, ``c_charge_degree != "O"``,
    ``score_text != "N/A"``: 6,172 rows, 2,809 recidivists.

    * ``variant="default"``: those 6,172 rows; features ``age``, ``sex``,
      ``race``, ``priors_count``, ``c_charge_degree``, the three juvenile counts
      and ``length_of_stay`` (days between ``c_jail_in`` and ``c_jail_out``,
      one negative value clipped to 0, as CARLA's version).
    * ``variant="mace"``: MACE's table (n = 5,278, d = 5): also keeps only
      African-American and Caucasian defendants (Zafar et al.'s filter);
      features ``age_cat`` (ordinal), ``race``, ``sex``, ``priors_count``,
      ``c_charge_degree``.

    Target ``two_year_recid``: 1 = reoffended within two years (the
    unfavourable outcome; ``metadata["favourable_class"] == 0``).  Immutable:
    ``age_cat``, ``sex``, ``race`` (MACE, CARLA); ``age`` only moved by time
    (immutable without a timeline, as MACE and CARLA; one year per 12 months under
    one).  Default timeline of ``variant="default"`` (``cf.datasets.timeline(data)``):
    24 months, a month of waiting costing 1/24; ``variant="mace"`` has none.

    Prior and juvenile counts are a record: they can only grow, so they are
    ``increasing`` (MACE made them mutable, which lets an answer erase a
    conviction: ``priors_count 4 -> 0``); ``variant="mace"`` keeps MACE's
    setting, to reproduce its table.  The current charge's degree and the
    days held stay free: they are the facts of the case a review or an appeal
    examines, which is what a counterfactual here can inform (a defendant has
    no recourse to advise).  MACE's setting:
    ``data.with_schema(data.schema.with_actionability(priors_count="free", ...))``.
    """
    df = _compas_rows(variant)
    if variant != _MACE_VARIANT:
        df = _with_length_of_stay(df)
    return make_dataset(
        df,
        _compas_features(variant),
        "two_year_recid",
        df["two_year_recid"],
        INFO["compas"],
        {"variant": variant},
        target_labels={0: "no recidivism within two years", 1: "recidivism within two years"},
        timeline=None if variant == _MACE_VARIANT else default_timeline(),
    )


def _compas_rows(variant: str) -> pd.DataFrame:
    """The rows kept by ProPublica's filters (and, for MACE's table, Zafar et al.'s race
    filter), the charge degree decoded."""
    df = read_bundled("compas-scores-two-years.csv.gz")
    df = df[
        df["days_b_screening_arrest"].between(-30, 30)
        & (df["is_recid"] != -1)
        & (df["c_charge_degree"] != "O")
        & (df["score_text"].notna())
        & (df["score_text"] != "N/A")
    ]
    if variant == _MACE_VARIANT:
        df = df[df["race"].isin(["African-American", "Caucasian"])]
    return df.assign(c_charge_degree=df["c_charge_degree"].map(_CHARGE))


def _with_length_of_stay(df: pd.DataFrame) -> pd.DataFrame:
    """``length_of_stay``: days between jail in and out, the one negative value clipped to 0."""
    stay = pd.to_datetime(df["c_jail_out"]) - pd.to_datetime(df["c_jail_in"])
    return df.assign(length_of_stay=stay.dt.days.clip(lower=0))


def _compas_features(variant: str) -> dict[str, Col]:
    """The features of ``variant`` with their actionability (see :func:`load_compas`)."""
    imm = "immutable"
    common = {
        "race": Col("categorical", "Race", imm),
        "sex": Col("binary", "Sex", imm, ("Female", "Male")),
        # a record only grows; MACE's own table keeps its setting (mutable)
        "priors_count": Col(
            "integer",
            "Number of prior offences",
            "free" if variant == _MACE_VARIANT else "increasing",
        ),
        "c_charge_degree": Col(
            "binary", "Degree of the current charge", categories=("Felony", "Misdemeanor")
        ),
    }
    if variant == _MACE_VARIANT:
        return {"age_cat": Col("ordinal", "Age group", imm, _AGE_CAT), **common}
    return {
        "age": Col("integer", "Age in years", "time", unit="years", per_month=YEARLY),
        **common,
        "juv_fel_count": Col("integer", "Juvenile felonies", "increasing"),
        "juv_misd_count": Col("integer", "Juvenile misdemeanours", "increasing"),
        "juv_other_count": Col("integer", "Other juvenile offences", "increasing"),
        "length_of_stay": Col("integer", "Days in jail for the current charge", unit="days"),
    }


# ------------------------------------------------------- Student performance
_EDU = ("none", "primary (4th grade)", "5th to 9th grade", "secondary", "higher")
_TRAVEL = ("< 15 min", "15-30 min", "30-60 min", "> 1 hour")
_STUDY = ("< 2 hours", "2-5 hours", "5-10 hours", "> 10 hours")
#: the ``features`` choice that keeps the columns of the L2C paper's released data
_L2C_FEATURES = "l2c"
_L2C_STUDENT = (
    "age", "Medu", "Fedu", "studytime", "famsup", "higher", "internet", "romantic", "freetime",
    "goout", "health", "absences", "G1", "G2",
)  # fmt: skip


def _student_cols() -> dict[str, Col]:
    imm = "immutable"
    yn = ("no", "yes")
    likert = "1 = very low/bad ... 5 = very high/good"
    return {
        "school": Col(
            "binary", "School: GP = Gabriel Pereira, MS = Mousinho da Silveira", imm, ("GP", "MS")
        ),
        "sex": Col("binary", "Sex", imm, ("F", "M")),
        "age": Col("integer", "Age in years", "time", unit="years", per_month=YEARLY),
        "address": Col("binary", "Home address: U = urban, R = rural", categories=("U", "R")),
        "famsize": Col(
            "binary", "Family size: LE3 = at most 3, GT3 = more than 3", imm, ("LE3", "GT3")
        ),
        "Pstatus": Col("binary", "Parents' cohabitation: T = together, A = apart", imm, ("T", "A")),
        "Medu": Col("ordinal", "Mother's education", imm, _EDU),
        "Fedu": Col("ordinal", "Father's education", imm, _EDU),
        "Mjob": Col("categorical", "Mother's job", imm),
        "Fjob": Col("categorical", "Father's job", imm),
        "reason": Col("categorical", "Reason to choose this school", imm),
        "guardian": Col("categorical", "Guardian", imm),
        "traveltime": Col("ordinal", "Home to school travel time", categories=_TRAVEL),
        "studytime": Col("ordinal", "Weekly study time", categories=_STUDY),
        "failures": Col("integer", "Past class failures (3 = three or more)", "increasing"),
        "schoolsup": Col("binary", "Extra educational support", categories=yn),
        "famsup": Col("binary", "Family educational support", imm, yn),
        "paid": Col("binary", "Extra paid classes in the subject", categories=yn),
        "activities": Col("binary", "Extra-curricular activities", categories=yn),
        "nursery": Col("binary", "Attended nursery school", imm, yn),
        "higher": Col("binary", "Wants to take higher education", categories=yn),
        "internet": Col("binary", "Internet access at home", categories=yn),
        "romantic": Col("binary", "In a romantic relationship", categories=yn),
        "famrel": Col("integer", f"Quality of family relationships ({likert})"),
        "freetime": Col("integer", f"Free time after school ({likert})"),
        "goout": Col("integer", f"Going out with friends ({likert})"),
        "Dalc": Col("integer", f"Workday alcohol consumption ({likert})", "decreasing"),
        "Walc": Col("integer", f"Weekend alcohol consumption ({likert})", "decreasing"),
        "health": Col("integer", f"Current health status ({likert})"),
        "absences": Col("integer", "Number of school absences", unit="absences"),
        "G1": Col("integer", "First period grade (0-20)", imm),
        "G2": Col("integer", "Second period grade (0-20)", imm),
    }


def load_student_performance(
    *, subject: str, threshold: int, features: str, grades: Any
) -> Dataset:
    """UCI Student Performance (Cortez & Silva 2008); CC BY 4.0.

    ``subject="por"`` (Portuguese, 649 rows, default, as L2C) or ``"mat"``
    (Mathematics, 395 rows).  Target ``high_grade`` = 1 if the final grade
    ``G3 >= threshold`` (default 12, L2C's "above average": 348 of 649).

    * ``features="all"``: the 30 attributes of ``student.txt`` (``school``
      kept, immutable, so a study can split by school); ``grades`` defaults to
      False (G1 and G2, the first and second period grades, are left out: G2
      alone nearly determines G3 and makes recourse trivial).
    * ``features="l2c"``: L2C's 14 columns (age, Medu, Fedu, studytime,
      famsup, higher, internet, romantic, freetime, goout, health, absences,
      G1, G2); ``grades`` defaults to True there, as L2C's released data do.

    Coded levels are decoded (Medu/Fedu "none" ... "higher", travel and
    study time ranges); 1-5 scales stay integers.  Immutable: L2C's Medu, Fedu,
    famsup and G1, plus school, sex, nursery (past or fixed facts) and G2;
    ``age`` only moved by time (immutable without a timeline, one year per 12
    months under one; default timeline: 24 months, a month of waiting costing 1/24).
    As a school would advise a student, also immutable: the family's
    circumstances (``famsize``, ``Pstatus``, ``Mjob``, ``Fjob``, ``guardian``)
    and the past choice of school (``reason``); ``failures`` increasing (a
    record only grows); ``Dalc`` and ``Walc`` decreasing (no one is advised
    to drink more).
    ``metadata["splits"]["school"]`` is "train" for Gabriel Pereira and "test"
    for Mousinho da Silveira, L2C's (Bui et al.'s) split: 423 / 226 rows for
    Portuguese.
    """
    grades = _student_grades_option(features, grades)
    _check_student_threshold(threshold)
    df = _decode_student(read_bundled(f"student-{subject}.csv.gz", sep=";"))
    return make_dataset(
        df,
        _student_features(features, grades),
        "high_grade",
        df["G3"] >= threshold,
        INFO["student_performance"],
        {"subject": subject, "threshold": threshold, "features": features, "grades": grades},
        target_labels={0: f"G3 < {threshold}", 1: f"G3 >= {threshold}"},
        splits={"school": np.where(df["school"].to_numpy() == "GP", "train", "test")},
        timeline=default_timeline(),
    )


def _student_grades_option(features: str, grades: Any) -> bool:
    """``grades`` resolved: ``None`` means True for L2C's columns, False otherwise."""
    if grades is None:
        grades = features == _L2C_FEATURES
    if not isinstance(grades, bool):
        raise ValidationError(
            "Option grades of dataset 'student_performance' must be True, False or None. "
            f"Got {grades!r}."
        )
    return grades


def _check_student_threshold(threshold: int) -> None:
    if (
        not isinstance(threshold, numbers.Real)
        or isinstance(threshold, bool)
        or not 0 <= threshold <= 20
    ):
        raise ValidationError(
            "Option threshold of dataset 'student_performance' must be a grade in [0, 20]. "
            f"Got {threshold!r}."
        )


def _decode_student(df: pd.DataFrame) -> pd.DataFrame:
    """The coded levels of the parents' education, travel and study time as labels."""
    for c, labels in (
        ("Medu", _EDU),
        ("Fedu", _EDU),
        ("traveltime", ("", *_TRAVEL)),
        ("studytime", ("", *_STUDY)),
    ):
        df[c] = df[c].map(dict(enumerate(labels)))
    return df


def _student_features(features: str, grades: bool) -> dict[str, Col]:
    """All columns or L2C's, with or without the period grades G1 and G2."""
    spec = _student_cols()
    names = list(_L2C_STUDENT) if features == _L2C_FEATURES else list(spec)
    if not grades:
        names = [n for n in names if n not in ("G1", "G2")]
    return {n: spec[n] for n in names}


# -------------------------------------------------------- Graduate admission
def load_graduate_admission(*, threshold: float) -> Dataset:
    """Graduate Admission 2 (Acharya, Armaan & Antony 2019), Kaggle v1.1, 500 rows.

    Target ``admit`` = 1 if "Chance of Admit" >= ``threshold``: 0.7 by default
    (L2C: 300 of 500), 0.6 in UFCE (405 of 500).  ``Serial No.`` dropped.
    ``university_rating`` (1-5) is ordinal and immutable (L2C); SOP and LOR
    strengths (1-5 in steps of 0.5) and CGPA are real; ``research`` is 0/1.
    As an admissions office would advise an applicant: test scores, the
    statement, the letters and the GPA are increasing (a test can be retaken
    and a statement rewritten; no one is advised to do worse).
    """
    if (
        not isinstance(threshold, numbers.Real)
        or isinstance(threshold, bool)
        or not 0 < threshold < 1
    ):
        raise ValidationError(
            f"Option threshold of dataset 'graduate_admission' must be a probability in (0, 1) "
            f"(0.7 as in L2C, 0.6 as in UFCE). Got {threshold!r}."
        )
    info = INFO["graduate_admission"]
    df = read_bundled("Admission_Predict_Ver1.1.csv.gz")
    df.columns = [c.strip() for c in df.columns]
    df = df.rename(
        columns={
            "GRE Score": "gre_score",
            "TOEFL Score": "toefl_score",
            "University Rating": "university_rating",
            "SOP": "sop",
            "LOR": "lor",
            "CGPA": "cgpa",
            "Research": "research",
        }
    )
    cols = {
        "gre_score": Col("integer", "GRE score (out of 340)", "increasing"),
        "toefl_score": Col("integer", "TOEFL score (out of 120)", "increasing"),
        "university_rating": Col(
            "ordinal", "Rating of the undergraduate university (1-5)", "immutable", (1, 2, 3, 4, 5)
        ),
        "sop": Col("real", "Statement of purpose strength (1-5)", "increasing"),
        "lor": Col("real", "Letter of recommendation strength (1-5)", "increasing"),
        "cgpa": Col("real", "Undergraduate GPA (out of 10)", "increasing"),
        "research": Col("binary", "Research experience (0/1)", categories=(0, 1)),
    }
    return make_dataset(
        df,
        cols,
        "admit",
        df["Chance of Admit"] >= threshold,
        info,
        {"threshold": threshold},
        target_labels={0: f"chance of admit < {threshold}", 1: f"chance of admit >= {threshold}"},
    )
