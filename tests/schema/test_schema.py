from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.data._dataset import quantile_bins
from counterfact.exceptions import SchemaError, ValidationError


def test_infer_kinds_and_bounds(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    assert s.names == ["age", "income", "job", "edu"]
    assert [s[n].kind for n in s.names] == ["integer", "real", "categorical", "ordinal"]
    assert (s["age"].lower, s["age"].upper) == (25.0, 58.0)
    assert s["edu"].categories == ("lo", "mid", "hi")
    assert s.classes == (0, 1)
    np.testing.assert_allclose(s.ranges(), [33.0, 3.0, 1.0, 2.0])


def test_infer_overrides(toy_frame):
    s = cf.Schema.infer(
        toy_frame, target="y", kinds={"age": "real"}, immutable=["job"], increasing=["age"]
    )
    assert s["age"].kind == "real" and s["age"].actionability == "increasing"
    assert s.immutable == ["job"]
    with pytest.raises(SchemaError, match="unknown columns"):
        cf.Schema.infer(toy_frame, target="y", immutable=["nope"])


def test_feature_validation():
    with pytest.raises(SchemaError, match="kind"):
        cf.Feature("a", "float")  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="unordered"):
        cf.Feature("a", "categorical", categories=("x", "y", "z"), actionability="increasing")
    with pytest.raises(SchemaError, match="exactly 2"):
        cf.Feature("a", "binary", categories=("x", "y", "z"))
    f = cf.Feature("n", "integer", lower=0.5, upper=3.7)
    assert (f.lower, f.upper) == (1.0, 3.0)
    assert f.contains(2) and not f.contains(2.5) and not f.contains(4)


def test_validate_frame_errors(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    X = toy_frame.drop(columns="y")
    with pytest.raises(ValidationError, match="lacks the columns"):
        s.validate_frame(X.drop(columns="job"))
    with pytest.raises(ValidationError, match="not among its categories") as info:
        s.validate_frame(X.assign(job="zzz"))
    assert "has values 'zzz' that" in str(info.value)  # the value as written, not a list of reprs
    with pytest.raises(ValidationError, match="NaN"):
        s.validate_frame(X.assign(income=np.nan))
    with pytest.raises(ValidationError, match="fractional"):
        s.validate_frame(X.assign(age=30.5))
    before = X.copy()
    out = s.validate_frame(X)
    pd.testing.assert_frame_equal(before, X)  # not mutated
    assert out["age"].dtype == np.int64


def test_round_trip_dict(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    assert cf.Schema.from_dict(s.to_dict()) == s


def test_dataset_split_and_mad(toy_frame):
    d = cf.Dataset.from_frame(toy_frame, target="y")
    tr, te = d.split(test_size=0.5, random_state=0, stratify=False)
    assert len(tr) + len(te) == 6
    m = d.mad()
    # age: median 36.5, |dev| = 11.5,3.5,3.5,21.5,10.5,6.5 -> median 8.5
    assert m[0] == pytest.approx(8.5)
    # income: median 2.55, |dev| = 1.05,.45,.35,1.55,.35,1.45 -> median 0.75
    assert m[1] == pytest.approx(0.75)
    assert m[2] == 1.0  # categorical
    # edu ranks 0,1,2,1,0,2: median 1, |dev| 1,0,1,0,1,1 -> median 1
    assert m[3] == pytest.approx(1.0)


def test_mad_fallback():
    frame = pd.DataFrame({"g": [0, 0, 0, 0, 10], "c": [3, 3, 3, 3, 3], "y": [0, 1, 0, 1, 0]})
    d = cf.Dataset.from_frame(frame, target="y", kinds={"g": "integer", "c": "integer"})
    m = d.mad()
    assert m[0] == pytest.approx(2.0)  # MAD 0 -> mean absolute deviation 10/5
    assert m[1] == 1.0  # constant -> 1


def test_quantile_bins():
    edges = quantile_bins(np.arange(100), n_bins=4)
    assert len(edges) == 5
    edges = quantile_bins([0, 0, 0, 0, 0, 0, 1], n_bins=4)
    assert edges[0] == 0 and edges[-1] == 1


# ------------------------------------------------------------------ resolution
def test_infer_resolution_rules():
    from counterfact.schema import infer_resolution

    assert infer_resolution([1330, 2.5, 0.25]) == 0.01
    assert infer_resolution([1.0, 2.0, 7.0]) == 1.0
    assert infer_resolution([100.0, 2000.0]) == 1.0  # never coarser than 1 for a real feature
    assert infer_resolution([0.1, 0.7, 1.3]) == 0.1
    assert infer_resolution([1 / 3, 2.5]) == 1e-6  # never finer than 1e-6
    assert infer_resolution(np.float32([0.1, 0.2])) == 0.1  # float32 noise is not a decimal


def test_resolution_in_schema_and_dataset(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    assert s["age"].resolution == 1.0 and s["income"].resolution == 0.1
    assert s["job"].resolution is None and s["edu"].resolution is None
    s2 = cf.Schema.infer(toy_frame, target="y", resolution={"income": 0.01})
    assert s2["income"].resolution == 0.01
    with pytest.raises(SchemaError, match="unknown columns"):
        cf.Schema.infer(toy_frame, target="y", resolution={"nope": 1})
    # a hand-made schema without resolutions gets them from the Dataset's frame
    bare = cf.Schema(tuple(f.with_(resolution=None) if f.kind == "real" else f for f in s), "y")
    assert bare["income"].resolution is None
    d = cf.Dataset(toy_frame, bare)
    assert d.schema["income"].resolution == 0.1
    assert cf.Dataset.from_frame(toy_frame, "y").schema["income"].resolution == 0.1
    # explicit resolutions are kept
    kept = cf.Dataset(toy_frame, bare.with_resolution(income=0.5))
    assert kept.schema["income"].resolution == 0.5


def test_bundled_datasets_have_resolutions():
    for name in ("german_credit", "bupa_liver", "graduate_admission"):
        data = cf.datasets.load(name)
        for f in data.schema:
            if f.is_numeric:
                assert f.resolution is not None and f.resolution > 0, (name, f.name)
                vals = data.frame[f.name].to_numpy(dtype=float) / f.resolution
                assert np.allclose(vals, np.round(vals), atol=1e-6), (name, f.name)


def test_resolution_serialisation_backwards_compatible(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y", resolution={"income": 0.05})
    d = s.to_dict()
    assert d["features"][1]["resolution"] == 0.05
    assert cf.Schema.from_dict(d) == s
    for f in d["features"]:
        f.pop("resolution", None)  # a document written before resolutions existed
    old = cf.Schema.from_dict(d)
    assert old["income"].resolution is None and old["age"].resolution == 1.0


def test_resolution_validation():
    with pytest.raises(SchemaError, match="positive finite"):
        cf.Feature("a", "real", lower=0, upper=1, resolution=0)
    with pytest.raises(SchemaError, match="positive finite"):
        cf.Feature("a", "real", lower=0, upper=1, resolution=float("inf"))
    with pytest.raises(SchemaError, match="whole number"):
        cf.Feature("a", "integer", lower=0, upper=10, resolution=0.5)
    with pytest.raises(SchemaError, match="only real and integer"):
        cf.Feature("a", "categorical", categories=("x", "y"), resolution=1)
    f = cf.Feature("a", "integer", lower=0, upper=10)
    assert f.with_(kind="ordinal", categories=(1, 2)).resolution is None  # kind change drops it


def test_feature_snap():
    money = cf.Feature("m", "real", lower=250, upper=20000, resolution=1)
    assert money.snap(1031.000061) == 1031.0
    assert money.snap(100) == 250.0  # inside the domain
    assert money.snap(1e9) == 20000.0
    cents = cf.Feature("c", "real", lower=0, upper=10, resolution=0.01)
    assert cents.snap(0.5714850416607664) == 0.57
    assert cents.snap(0.1 + 0.2) == 0.3  # exact decimal, not 0.30000000000000004
    # toward a reference: the change never grows; away: it never shrinks
    assert cents.snap(0.576, toward=0.5) == 0.57
    assert cents.snap(0.576, toward=0.5, away=True) == 0.58
    assert cents.snap(0.424, toward=0.5) == 0.43
    assert cents.snap(0.424, toward=0.5, away=True) == 0.42
    n = cf.Feature("n", "integer", lower=0, upper=100)
    assert n.snap(41.6) == 42 and isinstance(n.snap(41.6), int)
    hundreds = cf.Feature("h", "integer", lower=0, upper=10000, resolution=100)
    assert hundreds.snap(1249) == 1200 and hundreds.snap(1251) == 1300
    free = cf.Feature("r", "real", lower=0, upper=1)
    assert free.snap(0.123456789) == 0.123456789 and free.snap(2) == 1.0
    cat = cf.Feature("k", "categorical", categories=("x", "y"))
    assert cat.snap("x") == "x"
    with pytest.raises(ValidationError):
        cat.snap("z")


def test_schema_snap_vectorised(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    X = toy_frame.drop(columns="y").iloc[:3].copy()
    moved = X.assign(income=[1.54, 2.96, 9.0], age=[25.4, 40.6, 20.0])
    before = moved.copy()
    out = s.snap(moved)
    pd.testing.assert_frame_equal(moved, before)  # input not mutated
    assert out["income"].tolist() == [1.5, 3.0, 4.1]
    assert out["age"].tolist() == [25, 41, 25] and out["age"].dtype == np.int64
    assert out["job"].tolist() == X["job"].tolist()
    away = s.snap(X.assign(income=[1.54, 2.96, 2.24]), toward=X, away=True)
    assert away["income"].tolist() == [1.6, 2.9, 2.3]
    for f in s:
        if f.is_numeric:
            for v in out[f.name]:
                assert f.contains(v) and abs(v / f.resolution - round(v / f.resolution)) < 1e-9


# ------------------------------------------------------------ strict typing
def test_numeric_strings_are_an_error(toy_frame):
    s = cf.Schema.infer(toy_frame, target="y")
    X = toy_frame.drop(columns="y")
    bad = X.astype({"age": object})
    bad.loc[bad.index[0], "age"] = "12"
    with pytest.raises(
        ValidationError, match=r"'age' is integer but holds text values such as '12'.*pd.to_numeric"
    ):
        s.validate_frame(bad)
    with pytest.raises(ValidationError, match="'income' is real but holds text"):
        s.validate_frame(X.assign(income=X["income"].astype(str)))
    # numbers in an object column are still fine
    ok = s.validate_frame(X.astype({"age": object}))
    assert ok["age"].dtype == np.int64


def test_describe_prints_domains_at_resolution_and_short():
    s = cf.Schema(
        (
            cf.Feature("amount", "real", lower=341.15, upper=35000.27, resolution=0.01),
            cf.Feature(
                "purpose", "categorical", categories=tuple(f"purpose number {i}" for i in range(10))
            ),
            cf.Feature("size", "ordinal", categories=("S", "M", "L")),
        ),
        target="y",
        classes=(0, 1),
    )
    d = s.describe()
    assert d.loc["amount", "domain"] == "[341.15, 35000.27]"  # not 35000.3
    assert (
        d.loc["purpose", "domain"].endswith("... (10 levels)")
        and len(d.loc["purpose", "domain"]) < 70
    )
    assert d.loc["size", "domain"] == "S, M, L"


def test_describe_prints_whole_in_a_narrow_terminal():
    """print(schema.describe()) shows every column (pandas would cut the middle ones to
    '...' in an 80-column terminal); the table is still a DataFrame."""
    import pandas as pd

    schema = cf.datasets.load("german_credit").schema
    d = schema.describe()
    with pd.option_context("display.width", 80, "display.max_columns", 4):
        text = str(d)
        assert repr(d) == text
    lines = text.splitlines()
    for col in ("kind", "domain", "resolution", "actionability", "unit"):
        assert col in lines[0]
    assert "..." not in lines[0] and len(lines) == len(schema) + 2
    assert "months" in text and "DM" in text  # the unit column is shown
    assert isinstance(d, pd.DataFrame) and list(d.index) == schema.names
    assert type(d[["kind"]]) is pd.DataFrame  # a slice is a plain DataFrame


def _coerce_reference(schema, X):
    """Column-by-column statement of what ``Schema.coerce`` returns."""
    cols = {}
    for f in schema.features:
        col = X[f.name]
        if f.kind in ("integer", "real"):
            num = pd.to_numeric(col).to_numpy(dtype=float)
            cols[f.name] = np.round(num).astype(np.int64) if f.kind == "integer" else num
        else:
            cols[f.name] = pd.Series(
                [v.item() if isinstance(v, np.generic) else v for v in col.tolist()],
                index=X.index,
                dtype=object,
            )
    return pd.DataFrame(cols, index=X.index)


@pytest.mark.parametrize("name", ["german_credit", "arrhythmia"])
def test_block_wise_validate_and_coerce_match_column_by_column(name):
    """Typed frames take the block-wise path, all-object ones the column-by-column
    path (validate_frame) or the parsing path (coerce): same results."""
    data = cf.datasets.load(name)
    schema = data.schema
    X = data.X.iloc[:40]
    typed = schema.validate_frame(X)
    pd.testing.assert_frame_equal(typed, schema.validate_frame(X.astype(object)))
    for frame in (typed, X.astype(object), typed.astype(object)):
        pd.testing.assert_frame_equal(schema.coerce(frame), _coerce_reference(schema, frame))
    texty = typed.astype(object)
    num = next(f.name for f in schema.features if f.kind == "real" or f.kind == "integer")
    texty[num] = texty[num].astype(str)  # text digits: parsed by pandas.to_numeric
    pd.testing.assert_frame_equal(schema.coerce(texty), _coerce_reference(schema, texty))


def test_validate_frame_reports_first_bad_column_after_fast_path_declines():
    data = cf.datasets.load("german_credit")
    X = data.X.iloc[:5].copy()
    ints = [f.name for f in data.schema.features if f.kind == "integer"]
    X[ints[1]] = X[ints[1]].astype(float)
    X.loc[X.index[2], ints[1]] = 1.5
    with pytest.raises(ValidationError, match=f"'{ints[1]}' is integer but has fractional"):
        data.schema.validate_frame(X)
    X = data.X.iloc[:5].copy()
    X[ints[0]] = X[ints[0]].astype(float)
    X.loc[X.index[1], ints[0]] = np.nan
    with pytest.raises(
        ValidationError,
        match=rf"missing values \(NaN\) in column '{ints[0]}' at rows \[{X.index[1]}\]",
    ):
        data.schema.validate_frame(X)
