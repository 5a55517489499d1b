"""Loaders: red wine, BUPA, Hill-Valley, Arrhythmia, LSVT (bundled); Movie/Oscar (user's copy)."""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd

from ..data import Dataset
from ..exceptions import ValidationError
from ._common import Col, find_external, make_dataset, read_bundled
from ._registry import INFO


def _snake(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", name.strip()).strip("_")


# ------------------------------------------------------------------- Wine
def load_wine_quality_red() -> Dataset:
    """Wine Quality, red (Cortez et al. 2009), UCI; CC BY 4.0.

    1,599 rows (240 duplicates kept, as in the source and UFCE), 11
    physico-chemical features, all real and free (names with spaces in
    snake_case).  Target ``good_quality`` = 1 if ``quality >= 6`` (855), as
    UFCE ("good quality wine").
    """
    info = INFO["wine_quality_red"]
    df = read_bundled("winequality-red.csv.gz", sep=";")
    df.columns = [_snake(c) for c in df.columns]
    cols = {c: Col("real", c.replace("_", " ")) for c in df.columns if c != "quality"}
    return make_dataset(
        df,
        cols,
        "good_quality",
        df["quality"] >= 6,
        info,
        {},
        target_labels={0: "quality <= 5", 1: "quality >= 6"},
    )


# ------------------------------------------------------------------- BUPA
def load_bupa_liver() -> Dataset:
    """BUPA Liver Disorders (BUPA Medical Research Ltd., UCI); CC BY 4.0.

    345 rows: five blood tests (integers) and ``drinks`` (half-pint
    equivalents of alcohol per day, real).  Target ``selector`` = 1 where
    UCI's selector field is 2 (200 of 345), UFCE's positive class ("no
    alcoholism", 57%).  Caution: UCI documents this field as the
    train/test selector the donors used, not a diagnosis (McDermott &
    Forsyth 2016); it is kept because UFCE uses it.  All features free.
    """
    info = INFO["bupa_liver"]
    names = ["mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks", "selector"]
    df = read_bundled("bupa.data.gz", header=None, names=names)
    cols = {
        "mcv": Col("integer", "Mean corpuscular volume"),
        "alkphos": Col("integer", "Alkaline phosphatase"),
        "sgpt": Col("integer", "Alanine aminotransferase"),
        "sgot": Col("integer", "Aspartate aminotransferase"),
        "gammagt": Col("integer", "Gamma-glutamyl transpeptidase"),
        "drinks": Col("real", "Half-pint equivalents of alcoholic beverages drunk per day"),
    }
    return make_dataset(
        df,
        cols,
        "selector",
        df["selector"] == 2,
        info,
        {},
        target_labels={0: "selector 1", 1: "selector 2"},
    )


# -------------------------------------------------------------- Hill-Valley
def load_hill_valley(*, part: str) -> Dataset:
    """Hill-Valley with noise (Graham & Oppacher 2008), UCI; CC BY 4.0.

    Each row is 100 points of a noisy curve (``X1`` ... ``X100``, real, free);
    target ``class``: 1 = hill, 0 = valley.  ``part="all"`` (default, MD-PSO's
    1,212 rows), ``"train"`` (606) or ``"test"`` (606);
    ``metadata["splits"]["part"]`` records the file of each row.  Only the
    noisy pair of files is bundled.
    """
    info = INFO["hill_valley"]
    files = {
        "train": "Hill_Valley_with_noise_Training.data.gz",
        "test": "Hill_Valley_with_noise_Testing.data.gz",
    }
    parts = ["train", "test"] if part == "all" else [part]
    frames = [read_bundled(files[p]) for p in parts]
    labels = np.concatenate([np.full(len(f), p) for f, p in zip(frames, parts, strict=True)])
    df = pd.concat(frames, ignore_index=True)
    cols = {f"X{i}": Col("real", f"Point {i} of the curve") for i in range(1, 101)}
    return make_dataset(
        df, cols, "class", df["class"], info, {"part": part},
        target_labels={0: "valley", 1: "hill"}, splits={"part": labels},
    )  # fmt: skip


# --------------------------------------------------------------- Arrhythmia
_CHANNELS = ("DI", "DII", "DIII", "AVR", "AVL", "AVF", "V1", "V2", "V3", "V4", "V5", "V6")
_WIDTHS = (
    "q_width",
    "r_width",
    "s_width",
    "r2_width",
    "s2_width",
    "n_deflections",
    "ragged_r",
    "diphasic_r",
    "ragged_p",
    "diphasic_p",
    "ragged_t",
    "diphasic_t",
)
_AMPS = ("jj_amp", "q_amp", "r_amp", "s_amp", "r2_amp", "s2_amp", "p_amp", "t_amp", "qrsa", "qrsta")
_FLAGS = {"ragged_r", "diphasic_r", "ragged_p", "diphasic_p", "ragged_t", "diphasic_t"}


def _arrhythmia_names() -> list[str]:
    head = [
        "age",
        "sex",
        "height",
        "weight",
        "qrs_duration",
        "pr_interval",
        "qt_interval",
        "t_interval",
        "p_interval",
        "qrs_angle",
        "t_angle",
        "p_angle",
        "qrst_angle",
        "j_angle",
        "heart_rate",
    ]
    names = head + [f"{ch}_{w}" for ch in _CHANNELS for w in _WIDTHS]
    names += [f"{ch}_{a}" for ch in _CHANNELS for a in _AMPS]
    return names


def load_arrhythmia(*, missing: str) -> Dataset:
    """Cardiac Arrhythmia (Guvenir et al. 1997), UCI; CC BY 4.0.

    452 rows, 279 attributes named after ``arrhythmia.names`` (``age``,
    ``sex``, ..., ``<channel>_<wave>_width``, ``<channel>_<wave>_amp``).
    Target ``normal``: 1 = class 1 "normal" (245), 0 = any of the 15
    arrhythmia classes (207), as MD-PSO binarises it.

    The 17 attributes that are constant in the data are dropped (no
    information, zero-width domain); what remains is MD-PSO's 262 features.
    Five attributes have missing values ("?": T, P, QRST and J angles and heart
    rate; J is 83% missing).  ``missing="impute"`` (default) fills them with
    the column median (rounded: all five are integers), which keeps MD-PSO's
    262 features; ``missing="drop"`` drops those columns (257 features).
    ``sex`` is decoded (0 male, 1 female); the 0/1 "existence of ragged /
    diphasic wave" flags are binary; integral attributes are integers, the
    rest real.  Immutable: ``age``, ``sex``, ``height``.
    """
    info = INFO["arrhythmia"]
    names = [*_arrhythmia_names(), "class"]
    df = read_bundled("arrhythmia.data.gz", header=None, names=names, na_values="?")
    feats = names[:-1]
    const = [c for c in feats if df[c].nunique(dropna=True) <= 1]
    feats = [c for c in feats if c not in const]
    with_na = [c for c in feats if df[c].isna().any()]
    if missing == "drop":
        feats = [c for c in feats if c not in with_na]
    else:
        for c in with_na:
            df[c] = df[c].fillna(float(np.round(df[c].median())))
    df["sex"] = df["sex"].map({0: "male", 1: "female"})
    cols: dict[str, Col] = {}
    for c in feats:
        act = "immutable" if c in ("age", "sex", "height") else "free"
        if c == "sex":
            cols[c] = Col("binary", "Sex", act, ("male", "female"))
        elif c.split("_", 1)[-1] in _FLAGS:
            cols[c] = Col(
                "binary",
                f"Existence of {c.split('_', 1)[1].replace('_', ' ')} wave ({c.split('_')[0]})",
                act,
                (0, 1),
            )
        else:
            v = df[c].to_numpy(dtype=float)
            kind = "integer" if np.allclose(v, np.round(v)) else "real"
            cols[c] = Col(kind, c.replace("_", " "), act)
    return make_dataset(
        df, cols, "normal", df["class"] == 1, info, {"missing": missing},
        target_labels={0: "arrhythmia (classes 2-16)", 1: "normal (class 1)"},
        notes=[f"dropped constant columns: {const}", f"columns with missing values: {with_na}"],
    )  # fmt: skip


# --------------------------------------------------------------------- LSVT
def load_lsvt() -> Dataset:
    """LSVT Voice Rehabilitation (Tsanas et al. 2014), UCI; CC BY 4.0.

    126 rows, 310 dysphonia measures from the workbook's Data sheet (names
    kept, "->" and spaces replaced by "_"); all real except ``Data_length``
    (integer); all free.  Target ``acceptable``: 1 = phonation rated
    acceptable after rehabilitation (class 1, 42), 0 = unacceptable (84),
    as in MD-PSO.  The workbook's demographics sheet is not included.
    """
    info = INFO["lsvt"]
    df = read_bundled("lsvt_voice_rehabilitation.csv.gz")
    df.columns = [c if c == "class" else _snake(c.replace("->", "_")) for c in df.columns]
    cols = {
        c: Col("integer" if c == "Data_length" else "real", c)
        for c in df.columns if c != "class"
    }  # fmt: skip
    return make_dataset(
        df,
        cols,
        "acceptable",
        df["class"] == 1,
        info,
        {},
        target_labels={0: "unacceptable", 1: "acceptable"},
    )


# ------------------------------------------------------------- Movie / Oscar
#: original Kaggle names (with spaces) -> names used here
_MOVIE_RENAME = {
    "Marketing expense": "Marketing_expense", "Production expense": "Production_expense",
    "Multiplex coverage": "Multiplex_coverage", "Lead_ Actor_Rating": "Lead_Actor_rating",
}  # fmt: skip


def load_movie_oscar(*, path: str | os.PathLike[str] | None, missing: str) -> Dataset:
    """Movie classification (Start-Tech Academy / Kaggle), used by UFCE; **not bundled**.

    No licence is stated for the data.

    Reads the user's CSV (506 rows; either the original column names with
    spaces or the underscored ones).  Target ``Start_Tech_Oscar``: 1 =
    nominated (276).  ``Genre`` is categorical, ``3D_available`` binary
    (YES/NO), the rest numeric.  ``Time_taken`` has 14 missing values:
    ``missing="median"`` (default) fills them with the median (UFCE keeps all
    506 rows), ``missing="drop"`` drops those rows (492).  No feature is
    immutable.
    """
    info = INFO["movie_oscar"]
    file = find_external(
        info, path, ("Movie_classification.csv", "Movie_classification_renamed_cols.csv")
    )
    df = pd.read_csv(file)
    df = df.drop(columns=[c for c in df.columns if str(c).startswith("Unnamed")])
    df.columns = [str(c).strip() for c in df.columns]
    df = df.rename(columns=_MOVIE_RENAME)
    if "Start_Tech_Oscar" not in df.columns:
        raise ValidationError(
            f"{file} does not look like the Movie classification file: no 'Start_Tech_Oscar' "
            "column."
        )
    if missing == "drop":
        df = df.dropna()
    else:
        df["Time_taken"] = df["Time_taken"].fillna(df["Time_taken"].median())
    df["3D_available"] = df["3D_available"].astype(str).str.upper()
    integers = {"Trailer_views", "Avg_age_actors", "Num_multiplex", "Collection"}
    cols: dict[str, Col] = {}
    for c in df.columns:
        if c == "Start_Tech_Oscar":
            continue
        if c == "Genre":
            cols[c] = Col("categorical", "Genre")
        elif c == "3D_available":
            cols[c] = Col("binary", "Released in 3D", categories=("NO", "YES"))
        else:
            cols[c] = Col("integer" if c in integers else "real", c.replace("_", " "))
    return make_dataset(
        df,
        cols,
        "Start_Tech_Oscar",
        df["Start_Tech_Oscar"],
        info,
        {"path": str(file), "missing": missing},
        target_labels={0: "not nominated", 1: "nominated for an Oscar"},
    )
