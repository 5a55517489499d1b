"""counterfact.datasets: names/info/load, row counts, schemas, options, splits, the
user-copy datasets and the reproducibility of the bundle."""

from __future__ import annotations

import functools
import importlib.util
import math
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import counterfact as cf
from counterfact.datasets import predefined_split

SHARED = Path(__file__).parents[2].parent / "shared" / "datasets"
BUILD_SCRIPT = Path(__file__).parents[2] / "scripts" / "build_datasets.py"

#: name -> (rows, features, positives) with the default options
#: (SOURCES.md counts after documented filters)
BUNDLED = {
    "german_credit": (1000, 20, 700),
    "adult": (45222, 12, 11208),
    "compas": (6172, 9, 2809),
    "default_credit_taiwan": (30000, 23, 6636),
    "student_performance": (649, 30, 348),
    "graduate_admission": (500, 7, 300),
    "wine_quality_red": (1599, 11, 855),
    "bupa_liver": (345, 6, 200),
    "hill_valley": (1212, 100, 606),
    "arrhythmia": (452, 262, 245),
    "lsvt": (126, 310, 42),
    "sba": (2102, 11, 686),
}
EXTERNAL = {
    "heloc": (9871, 23, 4735),
    "give_me_some_credit": (120269, 10, 8357),
    "bank_loan": (5000, 11, 480),
    "movie_oscar": (506, 18, 276),
}
IMMUTABLE = {
    "german_credit": {"personal_status_sex", "foreign_worker", "purpose", "people_liable"},
    "adult": {"sex", "race", "native_country", "marital_status", "relationship"},
    "compas": {"age", "sex", "race"},
    "default_credit_taiwan": {"SEX", "MARRIAGE", "AGE"},
    "student_performance": {"school", "sex", "age", "Medu", "Fedu", "famsup", "nursery"},
    "graduate_admission": {"university_rating"},
    "arrhythmia": {"age", "sex", "height"},
    "sba": {"UrbanRural", "New", "Recession"},
}


@functools.cache
def _load(name: str, **options) -> cf.Dataset:
    return cf.datasets.load(name, **options)


def load(name: str, **options) -> cf.Dataset:
    return _load(name, **options)


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not present (only beside the development checkout)")
    return SHARED


# ------------------------------------------------------------------ registry
def test_names_list_every_dataset():
    assert cf.datasets.names() == [*BUNDLED, *EXTERNAL]
    assert cf.datasets.names(bundled=True) == list(BUNDLED)
    assert cf.datasets.names(bundled=False) == list(EXTERNAL)


@pytest.mark.parametrize("name", [*BUNDLED, *EXTERNAL])
def test_info_and_describe(name):
    info = cf.datasets.info(name)
    keys = (
        "description", "citation", "licence", "source", "bundled", "n_rows", "n_features",
        "target", "positive_class", "favourable_class", "papers", "options", "files",
    )  # fmt: skip
    for key in keys:
        assert key in info, key
    assert info["bundled"] == (name in BUNDLED)
    rows, feats, _ = {**BUNDLED, **EXTERNAL}[name]
    assert (info["n_rows"], info["n_features"]) == (rows, feats)
    assert info["papers"] and info["citation"]
    if not info["bundled"]:
        assert info["env_var"].startswith("COUNTERFACT_") and info["obtain"]
        assert "path" in info["options"]
    text = cf.datasets.describe(name)
    assert name in text and "licence" in text


def test_aliases_and_unknown_names():
    assert load("german").name == "german_credit"
    assert cf.datasets.info("Credit-G")["name"] == "german_credit"
    with pytest.raises(cf.ValidationError, match="german_credit") as err:
        cf.datasets.load("germn")
    assert isinstance(err.value, ValueError)
    with pytest.raises(cf.ValidationError, match="Known datasets"):
        cf.datasets.info("nope")


def test_bad_options_are_clear_errors():
    with pytest.raises(cf.ValidationError, match=r"no option\(s\) \['prt'\].*'missing', 'part'"):
        cf.datasets.load("adult", prt="train")
    with pytest.raises(cf.ValidationError, match="must be one of"):
        cf.datasets.load("adult", part="validation")
    with pytest.raises(cf.ValidationError, match=r"0\.7 as in L2C"):
        cf.datasets.load("graduate_admission", threshold=70)
    with pytest.raises(cf.ValidationError, match=r"\[0, 20\]"):
        cf.datasets.load("student_performance", threshold=25)
    with pytest.raises(cf.ValidationError, match="no option"):
        cf.datasets.load("german_credit", path="x")


# ------------------------------------------------------------------ bundled
@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_counts_and_schema(name):
    data = load(name)
    rows, feats, pos = BUNDLED[name]
    assert isinstance(data, cf.Dataset) and data.name == name
    assert (len(data), len(data.schema), int(data.y.sum())) == (rows, feats, pos)
    assert data.classes == (0, 1) and data.y.dtype == np.int64
    assert data.frame.index.equals(data.frame.index.sort_values()) and data.frame.index[0] == 0
    md = data.metadata
    assert set(md["target_labels"]) == {0, 1} and md["citation"] and md["licence"]
    assert md["favourable_class"] in (0, 1, None)
    # every feature typed, domain tight around the data, discrete levels all used
    for f in data.schema:
        col = data.frame[f.name]
        if f.is_numeric:
            assert (col.min(), col.max()) == (f.lower, f.upper), f.name
        else:
            assert set(col) == set(f.categories), f.name
    assert data.schema.validate_frame(data.X).shape == data.X.shape


#: immutable beyond the papers' choices, as a lender or a school would advise
#: (records, family facts)
RECORDS = {
    "german_credit": {"credit_history"},
    "default_credit_taiwan": {f"PAY_{i}" for i in (0, 2, 3, 4, 5, 6)}
    | {f"BILL_AMT{i}" for i in range(1, 7)}
    | {f"PAY_AMT{i}" for i in range(1, 7)},
    "student_performance": {"famsize", "Pstatus", "Mjob", "Fjob", "reason", "guardian"},
}


#: features only time changes (actionability "time": immutable without a timeline)
TIME = {
    "german_credit": {"age", "residence_since", "employment_since"},
    "adult": {"age"},
    "compas": {"age"},
    "default_credit_taiwan": {"AGE"},
    "student_performance": {"age"},
}


@pytest.mark.parametrize("name", list(IMMUTABLE))
def test_papers_immutables(name):
    """The papers' immutables hold without a timeline: fixed facts, records and the
    features only time changes."""
    data = load(name)
    fixed = set(cf.Constraints().resolve(data.schema).immutable)
    assert fixed == IMMUTABLE[name] | RECORDS.get(name, set()) | TIME.get(name, set())
    assert {f.name for f in data.schema if f.actionability == "time"} == TIME.get(name, set())


@pytest.mark.parametrize("name", list(TIME))
def test_time_features_and_default_timeline(name):
    """Each dataset with features only time changes carries a default timeline under
    which those features advance (and only with time): 24 months, waiting priced."""
    data = load(name)
    timeline = cf.datasets.timeline(data)
    assert timeline is not None and timeline.horizon == 24 and timeline.wait_cost > 0
    assert cf.datasets.timeline(data, horizon=12).horizon == 12
    resolved = cf.Constraints(timeline=timeline).resolve(data.schema)
    assert not (TIME[name] & set(resolved.immutable))
    x = data.X.iloc[0]
    older = timeline.advance(data.schema, x, 12)
    for f in data.schema:
        if f.actionability == "time" and f.is_numeric:
            # one year per 12 months; a top-coded one ("4 or more") stops at its upper bound
            top = max(x[f.name], f.upper) if f.top_coded else math.inf
            assert older[f.name] == min(x[f.name] + 1, top), f.name
    assert timeline.elapsed(data.schema, x, older) == 12


def test_no_default_timeline_without_time_features():
    assert cf.datasets.timeline("wine_quality_red") is None
    assert cf.datasets.timeline(load("compas", variant="mace")) is None


def test_realistic_defaults():
    """No bundled default lets an answer rewrite a record or advise getting worse."""
    s = load("german_credit").schema
    assert s["credit_history"].actionability == "immutable"
    for name in ("checking_status", "savings", "job"):
        assert (s[name].kind, s[name].actionability) == ("ordinal", "increasing"), name
    assert s["employment_since"].edges == (0.0, 1.0, 4.0, 7.0, math.inf)  # a band of years
    # "no account" / "unknown" is the lowest level: nobody is advised to close an account
    assert s["checking_status"].categories[0] == "no checking account"
    assert s["checking_status"].categories[-1] == ">= 200 DM / salary assigned"
    assert (
        s["savings"].categories[0] == "unknown / no savings account"
        and s["savings"].categories[-1] == ">= 1000 DM"
    )
    assert s["job"].categories[0].startswith("unemployed") and s["job"].categories[-1].startswith(
        "management"
    )
    assert (
        s["credit_amount"].actionability == "decreasing"
        and s["existing_credits"].actionability == "decreasing"
    )
    compas = load("compas").schema
    assert all(
        compas[n].actionability == "increasing"
        for n in ("priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count")
    )
    assert (
        load("compas", variant="mace").schema["priors_count"].actionability == "free"
    )  # MACE's own table
    assert "lender" in cf.datasets.info("german_credit")["description"]


def test_german_credit_decoded():
    data = load("german_credit")
    text = data.X.select_dtypes(object)
    assert not text.apply(lambda c: c.astype(str).str.fullmatch(r"A\d{2,3}").any()).any()
    row = data.frame.iloc[0]  # first line of german.data: A11 6 A34 A43 1169 A65 A75 4 A93 ...
    assert row["checking_status"] == "< 0 DM" and row["duration_months"] == 6
    assert row["credit_history"] == "critical account / other credits existing"
    assert row["purpose"] == "radio/television" and row["credit_amount"] == 1169.0
    assert (
        row["savings"] == "unknown / no savings account" and row["employment_since"] == ">= 7 years"
    )
    assert (
        row["personal_status_sex"] == "male: single"
        and row["age"] == 67
        and row["credit_risk"] == 1
    )
    s = data.schema
    assert (
        s["employment_since"].kind == "ordinal"
        and s["employment_since"].categories[0] == "unemployed"
    )
    assert s["age"].actionability == "time" and s["age"].per_month == pytest.approx(1 / 12)
    assert "duration_months" in s and "credit_amount" in s  # used by other tests and the docs


def test_adult_options_and_types():
    data = load("adult")
    s = data.schema
    assert s["education"].kind == "ordinal"
    assert (
        s["education"].categories[0] == "Preschool" and s["education"].categories[-1] == "Doctorate"
    )
    assert s["age"].actionability == "time" and s["sex"].kind == "binary"
    assert "fnlwgt" not in s and "education_num" not in s
    assert not (data.X == "?").any().any()
    train, test = predefined_split(data)
    assert (len(train), len(test)) == (30162, 15060)
    assert len(load("adult", part="test")) == 15060
    full = load("adult", missing="category")
    assert len(full) == 48842 and int(full.y.sum()) == 7841 + 3846  # SOURCES.md: raw train + test
    assert "Unknown" in full.schema["occupation"].categories
    assert [len(x) for x in predefined_split(full)] == [32561, 16281]
    assert len(load("adult", part="train", missing="category")) == 32561


def test_compas_variants():
    d = load("compas")
    assert d.metadata["favourable_class"] == 0
    assert set(d.schema["c_charge_degree"].categories) == {"Felony", "Misdemeanor"}
    assert d.frame["length_of_stay"].min() >= 0
    m = load("compas", variant="mace")
    assert len(m) == 5278 and m.schema.names == [
        "age_cat",
        "race",
        "sex",
        "priors_count",
        "c_charge_degree",
    ]
    assert m.schema["age_cat"].kind == "ordinal" and set(m.frame["race"]) == {
        "African-American",
        "Caucasian",
    }


def test_default_credit_decoded():
    d = load("default_credit_taiwan")
    assert set(d.frame["SEX"]) == {"female", "male"}
    assert set(d.frame["EDUCATION"]) == {
        "graduate school",
        "university",
        "high school",
        "others",
        "unknown",
    }
    assert set(d.frame["MARRIAGE"]) == {"married", "single", "others", "unknown"}
    assert d.schema["PAY_0"].kind == "integer" and d.schema["BILL_AMT1"].kind == "real"


def test_student_performance_options():
    d = load("student_performance")
    assert "school" in d.schema and "G1" not in d.schema and "G2" not in d.schema
    assert d.schema["Medu"].kind == "ordinal" and d.schema["Medu"].categories[0] == "none"
    tr, te = predefined_split(d)
    assert (len(tr), len(te)) == (423, 226) and set(tr.frame["school"]) == {"GP"}
    l2c = load("student_performance", features="l2c")
    assert l2c.schema.names[-2:] == ["G1", "G2"] and len(l2c.schema) == 14
    assert {"Medu", "Fedu", "famsup", "G1"} <= set(l2c.schema.immutable)
    assert [len(x) for x in predefined_split(l2c)] == [423, 226]
    assert len(load("student_performance", grades=True).schema) == 32
    mat = load("student_performance", subject="mat", threshold=10)
    assert len(mat) == 395 and int(mat.y.sum()) == 265  # G3 >= 10 in student-mat.csv


def test_graduate_admission_thresholds():
    assert int(load("graduate_admission").y.sum()) == 300  # L2C, 0.7
    assert int(load("graduate_admission", threshold=0.6).y.sum()) == 405  # UFCE, 0.6
    d = load("graduate_admission")
    assert d.schema["university_rating"].categories == (1, 2, 3, 4, 5)


def test_hill_valley_and_arrhythmia_options():
    assert [len(load("hill_valley", part=p)) for p in ("train", "test")] == [606, 606]
    tr, te = predefined_split(load("hill_valley"))
    assert (len(tr), len(te)) == (606, 606)
    drop = load("arrhythmia", missing="drop")
    assert len(drop.schema) == 257 and "j_angle" not in drop.schema
    full = load("arrhythmia")
    assert "j_angle" in full.schema and full.schema["sex"].categories == ("male", "female")
    assert full.schema["DI_ragged_r"].kind == "binary"


def test_sba_features_and_splits():
    d = load("sba")
    assert "ChgOffPrinGr" not in d.schema and "Selected" not in d.schema
    assert set(d.frame["UrbanRural"]) == {"urban", "rural", "unknown"}
    with pytest.raises(cf.ValidationError, match="several splits"):
        predefined_split(d)
    assert [len(x) for x in predefined_split(d, "selected")] == [1051, 1051]
    tr, te = predefined_split(d, "year")  # L2C's released files: 943 train, 1,159 test
    assert (len(tr), len(te)) == (943, 1159)
    l2c = load("sba", features="l2c")
    assert len(l2c.schema) == 13 and "ChgOffPrinGr" in l2c.schema


def test_predefined_split_errors_and_subsets():
    with pytest.raises(cf.ValidationError, match="no predefined split"):
        predefined_split(load("german_credit"))
    d = load("adult")
    sub = d.subset(d.frame.index[::50])
    tr, te = predefined_split(sub, "part")
    assert len(tr) + len(te) == len(sub)
    with pytest.raises(cf.ValidationError, match="no split"):
        predefined_split(d, "school")
    with pytest.raises(cf.ValidationError, match="empty"):
        predefined_split(load("adult", part="train"))


def test_loading_twice_gives_equal_frames():
    a, b = cf.datasets.load("compas"), cf.datasets.load("compas")
    assert a.frame.equals(b.frame) and a.schema == b.schema


def test_bundle_small_and_complete():
    data_dir = resources.files("counterfact.datasets").joinpath("data")
    gz = {p.name: p for p in data_dir.iterdir() if p.name.endswith(".gz")}
    assert sum(len(p.read_bytes()) for p in gz.values()) < 4 * 2**20
    spec = importlib.util.spec_from_file_location("build_datasets", BUILD_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert set(gz) == set(mod.FILES)


def test_bundle_is_reproducible(shared):
    spec = importlib.util.spec_from_file_location("build_datasets", BUILD_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build(shared)
    data_dir = resources.files("counterfact.datasets").joinpath("data")
    for name, payload in built.items():
        assert data_dir.joinpath(name).read_bytes() == payload, name


def test_import_is_light():
    code = (
        "import sys, counterfact.datasets as d; d.names(); d.info('adult');assert not [m "
        "for m in sys.modules if m.startswith('counterfact.datasets._') and "
        "m.split('.')[-1] in ('_social', '_credit', '_science')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------- not bundled
@pytest.mark.parametrize("name", list(EXTERNAL))
def test_external_without_a_copy_says_where_to_get_it(name, monkeypatch):
    info = cf.datasets.info(name)
    monkeypatch.delenv(info["env_var"], raising=False)
    monkeypatch.delenv("COUNTERFACT_DATA_DIR", raising=False)
    with pytest.raises(cf.DatasetNotFoundError) as err:
        cf.datasets.load(name)
    msg = str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    assert (
        "not bundled" in msg
        and "path=" in msg
        and info["env_var"] in msg
        and "COUNTERFACT_DATA_DIR" in msg
    )
    with pytest.raises(cf.DatasetNotFoundError, match="no file at"):
        cf.datasets.load(name, path="/nonexistent/folder")


@pytest.mark.parametrize("name", list(EXTERNAL))
def test_external_from_shared_copy(name, shared):
    data = load(name, path=str(shared))
    rows, feats, pos = EXTERNAL[name]
    assert (len(data), len(data.schema), int(data.y.sum())) == (rows, feats, pos)
    assert data.classes == (0, 1)


def test_external_options_and_environment(shared, monkeypatch):
    monkeypatch.delenv("COUNTERFACT_HELOC", raising=False)
    monkeypatch.setenv("COUNTERFACT_DATA_DIR", str(shared))
    d = cf.datasets.load("heloc")
    assert len(d) == 9871 and d.schema["ExternalRiskEstimate"].actionability == "immutable"
    assert d.frame[d.schema.names].min().min() < 0  # special values kept
    med = cf.datasets.load("heloc", special="median")
    assert med.frame[med.schema.names].min().min() >= 0
    monkeypatch.delenv("COUNTERFACT_DATA_DIR")
    monkeypatch.setenv(
        "COUNTERFACT_BANK_LOAN", str(shared / "bank_loan" / "Bank_Personal_Loan_Modelling.csv")
    )
    bank = cf.datasets.load("bank_loan")
    assert "ID" not in bank.schema and "ZIP Code" not in bank.schema
    assert bank.schema["Education"].kind == "ordinal"
    movie = cf.datasets.load("movie_oscar", path=shared / "movie_oscar", missing="drop")
    assert len(movie) == 492 and movie.schema["Genre"].kind == "categorical"
