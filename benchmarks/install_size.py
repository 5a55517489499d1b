"""Installed size of the core and of each extra, in fresh virtual environments.

    python benchmarks/install_size.py                    # core, each extra, [all]: ~20 minutes
    python benchmarks/install_size.py core mace l2c      # only these

Each install goes into a new virtual environment in a temporary folder (downloads
from the package index); L2C and [all] get the CPU build of torch first, as the
README recommends.  Writes ``benchmarks/out/install_size.md``: the size of each
environment and its ratio to the core install of the same run.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_table

ROOT = Path(__file__).resolve().parents[1]
INSTALLS = ("core", "mace", "ceocl", "serve", "report", "dist", "l2c", "boost", "all")
CPU_TORCH = ["torch", "--index-url", "https://download.pytorch.org/whl/cpu"]


def size_mb(path: Path) -> float:
    """Disk usage of ``path`` in MB, as ``du -sk`` counts it."""
    out = subprocess.run(
        ["du", "-sk", str(path)], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[0]) / 1024


def measure(name: str, work: Path) -> dict[str, object]:
    env = work / f"venv_{name}"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "install", "-q"]
    if name in ("l2c", "all"):
        subprocess.run([*pip, *CPU_TORCH], check=False)
    spec = str(ROOT) if name == "core" else f"{ROOT}[{name}]"
    proc = subprocess.run([*pip, spec], capture_output=True, text=True)
    row = {
        "install": "pip install ." if name == "core" else f'".[{name}]"',
        "ok": proc.returncode == 0,
        "size_mb": size_mb(env),
    }
    shutil.rmtree(env, ignore_errors=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "installs", nargs="*", help=f"which installs (default all): {', '.join(INSTALLS)}"
    )
    args = ap.parse_args()
    names = args.installs or list(INSTALLS)
    unknown = sorted(set(names) - set(INSTALLS))
    if unknown:
        ap.error(f"unknown installs {unknown}; choose from {list(INSTALLS)}")
    if "core" not in names:
        names = ["core", *names]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        empty = work / "venv_empty"
        subprocess.run([sys.executable, "-m", "venv", str(empty)], check=True)
        rows = [{"install": "(empty environment)", "ok": True, "size_mb": size_mb(empty)}]
        rows += [measure(n, work) for n in names]
    table = pd.DataFrame(rows)
    core = float(table.loc[table["install"] == "pip install .", "size_mb"].iloc[0])
    table["ratio_to_core"] = table["size_mb"] / core
    write_table(
        "install_size",
        table,
        ["disk usage (du) of the whole virtual environment, MB; a fresh environment per install"],
    )


if __name__ == "__main__":
    main()
