"""Small helpers shared by the benchmark scripts (tables, timing)."""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

OUT = Path(__file__).resolve().parent / "out"


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` once and return (its value, wall seconds)."""
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def write_table(
    name: str,
    table: pd.DataFrame,
    notes: list[str] | None = None,
    quiet: bool = False,
    hidden: tuple[str, ...] = (),
) -> Path:
    """Write ``table`` as Markdown (with notes, without the columns ``hidden``: counts
    kept for later computations) and CSV (every column) under benchmarks/out/."""
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / f"{name}.csv", index=False)
    lines = [
        f"# {name}",
        "",
        f"machine: {platform.machine()}, python {platform.python_version()}",
        "",
    ]
    lines += [f"- {n}" for n in notes or []]
    lines += ["", _markdown(table.drop(columns=[c for c in hidden if c in table])), ""]
    path = OUT / f"{name}.md"
    path.write_text("\n".join(lines))
    if not quiet:
        print("\n".join(lines))
    return path


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson 95 % interval of the proportion ``k / n`` (scipy); NaNs for ``n = 0``."""
    from scipy import stats

    if n == 0:
        return (float("nan"), float("nan"))
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def mean_ci(x: Any) -> tuple[float, float]:
    """Mean of the finite values and the half-width of its normal 95 % interval
    (NaN half-width for a single value; NaNs for none)."""
    import numpy as np
    from scipy import stats

    v = np.asarray(x, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (float("nan"), float("nan"))
    if v.size == 1:
        return float(v[0]), float("nan")
    return float(v.mean()), float(stats.norm.ppf(0.975) * v.std(ddof=1) / np.sqrt(v.size))


def markdown(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table (floats to 4 significant digits)."""
    return _markdown(df)


def _markdown(df: pd.DataFrame) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "| " + " | ".join("---" for _ in df.columns) + " |"
    rows = ["| " + " | ".join(fmt(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, sep, *rows])


def load_split(
    name: str, load: Callable[[str], Any], notes: list[str], max_train: int | None = None
) -> tuple[Any, Any] | None:
    """``load(name)`` split 80/20 (seed 0), the training rows capped at ``max_train``
    (seeded subsample); ``None`` -- with a line in ``notes`` -- when the dataset is not
    available here (skipped, not fatal)."""
    try:
        data = load(name)
    except Exception as exc:
        print(f"skip {name}: {exc}")
        notes.append(f"{name}: skipped ({type(exc).__name__}: {exc})")
        return None
    train, test = data.split(test_size=0.2, random_state=0)
    if max_train and len(train) > max_train:
        train = train.subset(train.frame.sample(max_train, random_state=0).index)
    return train, test
