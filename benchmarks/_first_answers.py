"""What a new user sees in the answers themselves, before and after the alternatives rule and
the realistic bundled defaults, measured in one run (used by ``first_hour.py``).

For each case (German Credit, COMPAS, the README's own-data example) and each method, the
first rows the model rejects are explained with 3 answers twice, with the same model and
seeds:

* **before**: the previous behaviour, asked for explicitly -- ``alternatives="method"``
  (the method's own answers in its order, only exact duplicates removed, MACE's and
  CE-OCL's literal blocking clauses) and the previous actionability passed as the schema
  (``schema.with_actionability(credit_history="free", ...)``);
* **after**: the defaults.

Counted over the answers (definitions recomputed here, not with the library's helpers):
near-duplicate pairs (same meaningful changes, every feature within its step, step =
max(resolution, 0.1 x MAD)), queries whose answers are not nearest first (in the measure
of effort, the one the library ranks answers in by default), answers that change a record
or advise getting worse (German Credit: credit history changed, or checking / savings /
job / employment moved down; COMPAS: a prior or juvenile count lowered), and answers
showing a do-nothing move (a numeric change smaller than its step).
"""

from __future__ import annotations

import time
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

import counterfact as cf
from counterfact.testing._fast import fast_method

#: the previous actionability of the features the review changed (explicitly, for "before")
OLD_ACTIONABILITY = {
    "german_credit": {
        "credit_history": "free",
        "checking_status": "free",
        "savings": "free",
        "job": "free",
        "employment_since": "free",
        "residence_since": "free",
        "existing_credits": "free",
        "credit_amount": "free",
    },
    "compas": {
        "priors_count": "free",
        "juv_fel_count": "free",
        "juv_misd_count": "free",
        "juv_other_count": "free",
    },
    "own data": {},
}
#: features whose change is a record rewritten (any change) or a move to a worse level (rank down)
RECORDS = {"german_credit": ("credit_history",), "compas": (), "own data": ()}
LOWER_IS_REWRITE = {
    "compas": ("priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count")
}
WORSE_IF_DOWN = {"german_credit": ("checking_status", "savings", "job", "employment_since")}


def own_data() -> tuple[Any, Any, Any, Any]:
    """The README's own-data example: data, model, rejected rows, constraints."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame(
        {
            "age": rng.integers(21, 70, n),
            "income": rng.normal(42_000, 12_000, n).round(-2).clip(8_000, None),
            "debt": rng.gamma(2.0, 4_000, n).round(),
            "years_employed": rng.integers(0, 30, n),
            "housing": rng.choice(["rent", "own", "mortgage"], n),
        }
    )
    score = (
        frame["income"] / 10_000
        - frame["debt"] / 4_000
        + frame["years_employed"] / 8
        + (frame["housing"] != "rent")
    )
    frame["approved"] = (score + rng.normal(0, 1, n) > 4).astype(int)
    model = Pipeline(
        [
            (
                "prep",
                ColumnTransformer(
                    [
                        ("num", StandardScaler(), ["age", "income", "debt", "years_employed"]),
                        ("cat", OneHotEncoder(handle_unknown="ignore"), ["housing"]),
                    ]
                ),
            ),
            ("clf", LogisticRegression(max_iter=1000)),
        ]
    ).fit(frame.drop(columns="approved"), frame["approved"])
    data = cf.Dataset.from_frame(frame, target="approved")
    rejected = cf.rows_to_explain(model, data, target=1)
    constraints = cf.Constraints(
        immutable=["age"], decreasing=["debt"], ranges={"income": (None, 80_000)}
    )
    return data, model, rejected, constraints


def bundled(name: str) -> tuple[Any, Any, Any, Any]:
    data = cf.datasets.load(name)
    train, test = data.split(test_size=0.2, random_state=0)
    model = cf.models.fit(train, "lr", random_state=0)
    return train, model, cf.rows_to_explain(model, test), None


def steps_of(train: Any) -> dict[str, float]:
    out = {}
    for f in train.schema:
        if f.is_numeric:
            v = pd.to_numeric(train.X[f.name]).to_numpy(dtype=float)
            dev = np.abs(v - np.median(v))
            m = float(np.median(dev)) or float(np.mean(dev)) or 1.0
            out[f.name] = max(f.resolution or 1.0, 0.1 * m)
    return out


def _moves(
    schema: Any, steps: dict[str, float], x: pd.Series, row: pd.Series
) -> tuple[frozenset[str], bool]:
    """(meaningfully changed features, whether some numeric change is smaller than its step)."""
    changed, small = set(), False
    for f in schema:
        if f.is_numeric:
            d = abs(float(row[f.name]) - float(x[f.name]))
            if d >= steps[f.name] * (1 - 1e-9):
                changed.add(f.name)
            elif d > 1e-9:
                small = True
        elif row[f.name] != x[f.name]:
            changed.add(f.name)
    return frozenset(changed), small


def _near(schema: Any, steps: dict[str, float], x: pd.Series, a: pd.Series, b: pd.Series) -> bool:
    if _moves(schema, steps, x, a)[0] != _moves(schema, steps, x, b)[0]:
        return False
    for f in schema:
        if f.is_numeric:
            if abs(float(a[f.name]) - float(b[f.name])) > steps[f.name] * (1 + 1e-9):
                return False
        elif a[f.name] != b[f.name]:
            return False
    return True


def _unrealistic(case: str, schema: Any, x: pd.Series, row: pd.Series) -> bool:
    if any(row[n] != x[n] for n in RECORDS.get(case, ())):
        return True
    if any(float(row[n]) < float(x[n]) for n in LOWER_IS_REWRITE.get(case, ())):
        return True
    for n in WORSE_IF_DOWN.get(case, ()):
        cats = list(schema[n].categories)
        if cats.index(row[n]) < cats.index(x[n]):
            return True
    return False


def count(case: str, result: Any, train: Any, X: pd.DataFrame) -> dict[str, int]:
    schema, steps = train.schema, steps_of(train)
    dist = result.cost()  # the call's measure: effort by default, what the library ranks in
    out = {
        "answers": 0,
        "near-duplicate pairs": 0,
        "unsorted queries": 0,
        "record / worse advice": 0,
        "do-nothing moves": 0,
    }
    for q in X.index:
        cfs, x = result.for_query(q), X.loc[q]
        out["answers"] += len(cfs)
        out["do-nothing moves"] += sum(
            _moves(schema, steps, x, row)[1] for _, row in cfs.iterrows()
        )
        out["record / worse advice"] += sum(
            _unrealistic(case, schema, x, row) for _, row in cfs.iterrows()
        )
        out["near-duplicate pairs"] += sum(
            _near(schema, steps, x, a, b) for (_, a), (_, b) in combinations(cfs.iterrows(), 2)
        )
        if len(cfs) > 1:
            d = dist.xs(q, level=0).to_numpy(dtype=float)
            out["unsorted queries"] += bool(np.any(np.diff(d) < -1e-9))
    return out


def run(n_queries: int = 8, names: list[str] | None = None) -> pd.DataFrame:
    """One row per (case, method, before/after)."""
    rows = []
    cases = {
        "German Credit": ("german_credit", bundled("german_credit")),
        "COMPAS": ("compas", bundled("compas")),
        "README own data": ("own data", own_data()),
    }
    for label, (case, (train, model, rejected, constraints)) in cases.items():
        X = rejected.iloc[:n_queries]
        old = train.with_schema(train.schema.with_actionability(**OLD_ACTIONABILITY[case]))
        for name in names or cf.methods.names():
            for when, data, mode in (("before", old, "method"), ("after", train, "distinct")):
                t0 = time.perf_counter()
                try:
                    method = fast_method(name).fit(model, data)
                    res = method.explain(
                        X, n_counterfactuals=3, constraints=constraints, alternatives=mode
                    )
                except cf.MissingDependencyError as exc:
                    print(f"  skipped {name}: {exc}", flush=True)
                    break
                found = count(case, res, train, X)
                rows.append(
                    {
                        "case": label,
                        "method": name,
                        "run": when,
                        "queries": len(X),
                        **found,
                        "seconds": round(time.perf_counter() - t0, 1),
                    }
                )
                print(f"  {label} {name} {when}: {found}", flush=True)
    return pd.DataFrame(rows)
