"""L2C on CPU and CUDA, same machine, same script: fit seconds per epoch and explain seconds
per row.

    python benchmarks/l2c_device.py [--quick]

For German Credit (1,000 rows) and Adult (36k training rows) with an MLP, and
Adult with a random forest (score-function gradient: the model is asked on the
host every step), L2C is trained for a fixed number of epochs (early stopping
off) on each device and batch size, then explains 200 rejected test rows with
100 counterfactuals each.  Also records the device ``device="auto"`` picks.
Figures are ratios CUDA / CPU measured in the same run (the CPU at
``torch_threads=1``, L2C's default, and at 8 threads); absolute seconds are
context only.  Cells that need CUDA are skipped where none is available.

Writes benchmarks/out/l2c_device.md and .csv.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_table

import counterfact as cf

#: (dataset, model kind, model params, epochs, batch sizes)
CELLS = [
    ("german_credit", "mlp", {}, 10, [64, 1024]),
    ("adult", "mlp", {}, 3, [64, 1024]),
    ("adult", "rf", {"n_estimators": 50, "max_depth": 8}, 2, [1024]),
]


def _cell(l2c_kw: dict, model, train, X) -> dict[str, float | str]:
    t0 = time.perf_counter()
    m = cf.L2C(random_state=0, **l2c_kw).fit(model, train)
    fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = m.explain(X, n_counterfactuals=100)
    explain = time.perf_counter() - t0
    return {
        "device": m.device_,
        "batch": m.batch_size_,
        "epochs": m.n_epochs_,
        "fit_s": fit,
        "s_per_epoch": fit / max(m.n_epochs_, 1),
        "explain_s_per_row": explain / max(len(X), 1),
        "coverage": float((r.found > 0).mean()),
    }


def _epoch_ratio_to_one_cpu_thread(table: pd.DataFrame) -> list[float]:
    """Each row's seconds per epoch over the same cell's on the CPU with one thread."""
    key = ["dataset", "model", "batch"]
    base = table[(table["device"] == "cpu") & (table["threads"] == 1)].set_index(key)["s_per_epoch"]
    return [
        r["s_per_epoch"] / base.get(tuple(r[k] for k in key), float("nan"))
        for _, r in table.iterrows()
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="German Credit only, 2 epochs")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch

    cuda = torch.cuda.is_available()
    rows = []
    for ds, kind, params, epochs, batches in CELLS[:1] if args.quick else CELLS:
        epochs = 2 if args.quick else epochs
        data = cf.datasets.load(ds)
        train, test = data.split(test_size=0.2, random_state=0)
        model = cf.models.fit(train, kind, random_state=0, **params)
        X = cf.rows_to_explain(model, test).head(200)
        auto = cf.L2C(random_state=0, training={"max_epochs": 1}).fit(model, train)
        for batch in batches:
            for device, threads in (("cpu", 1), ("cpu", 8), ("cuda", 1)):
                if device == "cuda" and not cuda:
                    continue
                out = _cell(
                    {
                        "training": {"max_epochs": epochs, "batch_size": batch, "patience": 1000},
                        "device": device,
                        "torch_threads": threads,
                    },
                    model,
                    train,
                    X,
                )
                rows.append(
                    {
                        "dataset": ds,
                        "model": kind,
                        "threads": threads,
                        "auto picks": auto.device_,
                        "auto batch": auto.batch_size_,
                        **out,
                    }
                )
                print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    if len(table):
        table["epoch / cpu 1 thread"] = _epoch_ratio_to_one_cpu_thread(table)
    notes = [
        f"torch {torch.__version__}; CUDA: "
        f"{torch.cuda.get_device_name(0) if cuda else 'not available'}",
        "fit: fixed epochs (early stopping off); explain: 200 rejected test rows, 100 "
        "counterfactuals each",
    ]
    write_table("l2c_device", table, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
