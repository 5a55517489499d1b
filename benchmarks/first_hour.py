"""A new user's first hour, measured in one run: the README's first example against the
example it replaced, L2C's time to the first output through the command line, and what
the answers themselves look like before and after the alternatives rule and the realistic
bundled defaults (``_first_answers.py``).

    python benchmarks/first_hour.py            # about 20 minutes on 2 cores (old example: slow)
    python benchmarks/first_hour.py --quick    # leaves the old README example out
    python benchmarks/first_hour.py --answers-only   # only the answers' before/after table

Writes ``benchmarks/out/first_hour.md`` and ``benchmarks/out/first_hour_answers.md``.
Each timing case runs in a fresh interpreter (imports included, as a user would run it).
Ratios compare cases of the same run; absolute seconds are context only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_table
from _first_answers import run as run_answers

ROOT = Path(__file__).resolve().parents[1]

#: the README's Python example before it was rewritten (its feature name corrected so that it runs):
#: a random forest, MACE, the first ten test rows whatever the model predicts for them
OLD_EXAMPLE = """
import counterfact as cf

data = cf.datasets.load("german_credit")
train, test = data.split(test_size=0.2, random_state=0)
model = cf.models.fit(train, "rf", random_state=0)
mace = cf.MACE(norm="l1", time_limit=60).fit(model, train)
result = mace.explain(
    test.X.iloc[:10],
    n_counterfactuals=3,
    constraints=cf.Constraints(immutable=["age"], increasing=["duration_months"]),
)
print(result.describe())
"""


def readme_first_block() -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    return blocks[0]


def run_timed(argv: list[str], timeout: float) -> dict[str, float | int | str]:
    """Wall seconds to the first output line (either stream), to the first line matching
    a progress pattern, and to the end."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1, cwd=ROOT
    )
    first: list[float] = []
    progress: list[float] = []

    def watch(stream: object) -> None:
        buf = ""
        while True:
            ch = stream.read(1)  # type: ignore[attr-defined]
            if not ch:
                return
            if not first:
                first.append(time.perf_counter() - t0)
            buf += ch
            if ch in "\r\n":
                if not progress and re.search(r"epoch|\d+/\d+|it/s|query/s|s/query|s/it", buf):
                    progress.append(time.perf_counter() - t0)
                buf = ""

    threads = [
        threading.Thread(target=watch, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)
    ]
    for t in threads:
        t.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = -9
    for t in threads:
        t.join(timeout=5)
    total = time.perf_counter() - t0
    return {
        "exit": code,
        "first_output_s": first[0] if first else float("nan"),
        "first_progress_s": progress[0] if progress else float("nan"),
        "total_s": total,
    }


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--quick", action="store_true", help="leave out the old README example (about 5 minutes)"
    )
    ap.add_argument(
        "--answers-only", action="store_true", help="only the answers' before/after table"
    )
    ap.add_argument(
        "--queries",
        type=int,
        default=8,
        help="rejected rows per case in the answers' table (default 8)",
    )
    return ap.parse_args()


def main() -> None:
    args = _parse_args()
    answers(args.queries)
    if args.answers_only:
        return
    py = sys.executable
    rows = []
    new = run_timed([py, "-c", readme_first_block()], timeout=600)
    rows.append({"case": "README first example (MACE, LR, 5 rejected rows, verbose=1)", **new})
    if not args.quick:
        old = run_timed([py, "-c", OLD_EXAMPLE], timeout=1200)
        rows.append(
            {"case": "previous README example (MACE, RF, first 10 test rows, silent)", **old}
        )
    cli = [
        py,
        "-m",
        "counterfact.cli",
        "explain",
        "--method",
        "l2c",
        "--rows",
        "0:10",
        "--format",
        "json",
    ]
    rows.append(
        {
            ("case"): (
                "CLI: explain --method l2c --rows 0:10 (default rf), -q: no output until the result"
            ),
            **run_timed([*cli, "-q"], timeout=1200),
        }
    )
    rows.append(
        {
            "case": "CLI: the same with -v (status lines, L2C's epoch bar)",
            **run_timed([*cli, "-v"], timeout=1200),
        }
    )
    table = pd.DataFrame(rows)
    notes = ["fresh interpreter per case; seconds are wall time on this machine, context only"]
    if not args.quick:
        notes.append(
            f"README example wall time, new / previous: {new['total_s'] / old['total_s']:.3f}"
        )
    quiet, verbose = rows[-2], rows[-1]
    notes.append(
        "L2C through the CLI, time to the first output / time to the result: -q "
        f"{quiet['first_output_s'] / quiet['total_s']:.3f}, -v "
        f"{verbose['first_output_s'] / verbose['total_s']:.3f}; first progress line at "
        f"{verbose['first_progress_s'] / verbose['total_s']:.3f} of the run"
    )
    write_table("first_hour", table, notes)


def answers(n_queries: int) -> None:
    """The answers before (old behaviour asked for explicitly) and after, in one run."""
    table = run_answers(n_queries)
    cols = [
        "answers",
        "near-duplicate pairs",
        "unsorted queries",
        "record / worse advice",
        "do-nothing moves",
    ]
    totals = table.groupby("run")[cols].sum()
    notes = [
        f"{n_queries} rejected rows per case, 3 answers asked, logistic regression, each "
        "method's fast parameters; 'before': alternatives='method' and the previous "
        "actionability passed explicitly, same model and seeds",
        "totals before -> after: "
        + "; ".join(
            f"{c} {int(totals.loc['before', c])} -> {int(totals.loc['after', c])}" for c in cols
        ),
    ]
    write_table("first_hour_answers", table, notes)


if __name__ == "__main__":
    main()
