"""A user's own messy frame: duplicate column names are refused in words, numbers written
as text and a real column too narrow for its resolution are warned about, an identifier
column's refusal says how to drop or convert it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import counterfact as cf
from counterfact.exceptions import SchemaError, ValidationError


def _frame(n: int = 200) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": rng.integers(1000, 9000, n),
            "debt": rng.integers(0, 50, n),
            "region": rng.choice(["east", "west"], n),
        }
    )
    frame["approved"] = (frame["income"] / 1000 - frame["debt"] / 10 > 2).astype(int)
    return frame


def test_duplicate_column_names_are_refused_in_words():
    frame = _frame()
    doubled = pd.concat([frame, frame[["income"]]], axis=1)
    with pytest.raises(ValidationError, match=r"more than one column named \['income'\]"):
        cf.Dataset.from_frame(doubled, target="approved")
    data = cf.Dataset.from_frame(frame, target="approved")
    model = cf.models.fit(data, "lr", random_state=0)
    method = cf.NearestObservable().fit(model, data)
    rows = data.X.head(2)
    with pytest.raises(ValidationError, match=r"X has more than one column named \['income'\]"):
        method.explain(pd.concat([rows, rows[["income"]]], axis=1), target=1)


def test_numbers_written_as_text_are_warned_about():
    frame = _frame()
    frame["score"] = (frame["debt"] % 5 + 1).astype(str)
    with pytest.warns(UserWarning, match=r"Column 'score' holds numbers written as text"):
        data = cf.Dataset.from_frame(frame, target="approved")
    assert data.schema["score"].kind == "categorical"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = cf.Dataset.from_frame(frame, target="approved", kinds={"score": "categorical"})
    assert kept.schema["score"].kind == "categorical"


def test_a_real_column_narrower_than_its_resolution_is_warned_about():
    frame = _frame()
    frame["rate"] = np.random.default_rng(1).uniform(1e-6, 5e-6, len(frame))
    with pytest.warns(UserWarning, match=r"Column 'rate' spans only \d+ steps"):
        data = cf.Dataset.from_frame(frame, target="approved")
    assert data.schema["rate"].resolution == pytest.approx(1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf.Dataset.from_frame(frame, target="approved", resolution={"rate": 1e-9})


def test_an_identifier_column_says_how_to_drop_or_convert_it():
    frame = _frame()
    frame["customer"] = [f"C{k:05d}" for k in range(len(frame))]
    with pytest.raises(SchemaError, match="remove it from the CSV") as err:
        cf.Dataset.from_frame(frame, target="approved")
    assert "pd.to_numeric" in str(err.value)


def test_numbers_with_thousands_separators_name_the_fix():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "income": [f"{v:,}" for v in rng.integers(1000, 99999, 200)],
            "age": rng.integers(20, 60, 200),
            "y": rng.integers(0, 2, 200),
        }
    )
    with pytest.raises(cf.exceptions.SchemaError, match="thousands separators") as err:
        cf.Dataset.from_frame(frame, target="y")
    assert "read_csv(..., thousands=',')" in str(err.value)
    frame["income"] = frame["income"].str.replace(",", "").astype(int)
    assert cf.Dataset.from_frame(frame, target="y").schema["income"].kind == "integer"


def test_an_integer_identifier_column_is_warned_about():
    rng = np.random.default_rng(0)
    frame = _frame()
    frame.insert(0, "customer_id", rng.permutation(np.arange(5000, 5000 + len(frame))))
    with pytest.warns(UserWarning, match="'customer_id' looks like an identifier") as got:
        data = cf.Dataset.from_frame(frame, target="approved")
    assert "frame.drop(columns=['customer_id'])" in str(got[0].message)
    assert data.schema["customer_id"].kind == "integer"  # still read, as before
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cf.Dataset.from_frame(frame, target="approved", kinds={"customer_id": "integer"})
        cf.Dataset.from_frame(frame.drop(columns="customer_id"), target="approved")
        paid = frame.rename(columns={"customer_id": "paid"})  # not a name like an ID
        cf.Dataset.from_frame(paid, target="approved")
