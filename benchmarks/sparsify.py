"""Changed features per counterfactual before and after the base class's
sparsification pass, for each heuristic method (UFCE, MD-PSO, L2C) and the
`nearest` baseline's option, on German Credit and COMPAS (LR models).

"Before" is the same method with the pass switched off, in the same run (same
seeds); the figure is the ratio after/before of the mean number of changed
features per counterfactual, plus the share of answers that keep at least one
change that can be undone while the model still flips.

    python benchmarks/sparsify.py [--queries 8] [--answers 3]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from _common import timed, write_table

import counterfact as cf
from counterfact.constraints._bounds import changed
from counterfact.testing._fast import fast_method

METHODS = ("ufce", "mdpso", "l2c", "nearest")


def _counts(result: cf.CounterfactualResult, schema: cf.Schema, model) -> tuple[list[int], int]:
    """Changed features per counterfactual, and how many answers keep an undoable change."""
    n_changed, undoable = [], 0
    for (q, _), row in result.counterfactuals.iterrows():
        x = result.queries.loc[q]
        feats = [f for f in schema if changed(f, x[f.name], row[f.name])]
        n_changed.append(len(feats))
        backs = []
        for f in feats:
            b = row.copy()
            b[f.name] = x[f.name]
            backs.append(b)
        if backs:
            frame = schema.coerce(pd.DataFrame(backs, columns=schema.names))
            undoable += int((model.predict(frame) == result.target[q]).any())
    return n_changed, undoable


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=8, help="rejected rows per dataset")
    ap.add_argument("--answers", type=int, default=3, help="n_counterfactuals")
    ap.add_argument("--datasets", nargs="+", default=["german_credit", "compas"])
    args = ap.parse_args()
    rows = []
    for name in args.datasets:
        data = cf.datasets.load(name)
        train, test = data.split(test_size=0.3, random_state=0)
        model = cf.models.fit(train, "lr", random_state=0)
        fav = cf.datasets.favourable(name)
        X = test.X[model.predict(test.X) != fav].iloc[: args.queries]
        for method in METHODS:
            try:
                on = fast_method(method, sparsify=True).fit(model, train)
                off = fast_method(method, sparsify=False).fit(
                    model, train
                )  # the same method, the pass off
            except Exception as exc:  # an optional dependency missing: skip the row
                print(f"skip {method}: {exc}")
                continue
            r_off, s_off = timed(lambda m=off, X=X: m.explain(X, n_counterfactuals=args.answers))
            r_on, s_on = timed(lambda m=on, X=X: m.explain(X, n_counterfactuals=args.answers))
            c_off, u_off = _counts(r_off, train.schema, model)
            c_on, u_on = _counts(r_on, train.schema, model)
            before, after = (
                float(np.mean(c_off)) if c_off else np.nan,
                float(np.mean(c_on)) if c_on else np.nan,
            )
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    "queries": len(X),
                    "answers before": len(c_off),
                    "answers after": len(c_on),
                    "changed/cf before": before,
                    "changed/cf after": after,
                    "ratio after/before": after / before if before else np.nan,
                    "undoable before": f"{u_off}/{len(c_off)}",
                    "undoable after": f"{u_on}/{len(c_on)}",
                    "time ratio after/before": s_on / s_off if s_off else np.nan,
                }
            )
    notes = [
        f"LR models, 70/30 split (seed 0), the first {args.queries} test rows the model rejects, "
        f"n_counterfactuals={args.answers}; fast parameters of each method (tags.fast_params)",
        "before: sparsify=False on the same method (same seeds); after: sparsify=True (the "
        "base class's pass)",
        "undoable: answers keeping at least one change that can be reverted alone while the "
        "model still flips",
    ]
    write_table("sparsify", pd.DataFrame(rows), notes)


if __name__ == "__main__":
    main()
