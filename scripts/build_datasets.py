"""Build the datasets bundled inside ``counterfact`` from the raw copies in ``../shared/datasets``.

Usage::

    python scripts/build_datasets.py                 # write src/counterfact/datasets/data/*.gz
    python scripts/build_datasets.py --check         # rebuild in memory, compare with the bundle
    python scripts/build_datasets.py --source DIR --out DIR

Every bundled file is either a raw source file gzipped byte for byte, or (COMPAS
and SBA) a subset of the raw file's *columns* with the cell text unchanged: the
columns the loaders need, without people's names, dates of birth or business
names.  All decoding, filtering and labelling happens in the loaders
(``counterfact.datasets``), so the bundle stays a faithful copy of the sources
listed in ``../shared/datasets/SOURCES.md``.

The gzip streams are written with ``mtime=0`` and no file name, so the same
inputs always give the same bytes (``--check`` relies on that).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = ROOT.parent / "shared" / "datasets"
DEFAULT_OUT = ROOT / "src" / "counterfact" / "datasets" / "data"

#: COMPAS columns kept (ProPublica's compas-scores-two-years.csv); names, dates of
#: birth, case numbers and COMPAS scores are left out.
COMPAS_COLUMNS = (
    "id", "sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count", "juv_other_count",
    "priors_count", "days_b_screening_arrest", "c_jail_in", "c_jail_out", "c_charge_degree",
    "is_recid", "score_text", "two_year_recid",
)  # fmt: skip

#: SBA case-study columns kept (Li, Mickel & Taylor 2018, SBAcase.11.13.17.csv); business
#: names, cities, zip codes, banks and loan numbers are left out.
SBA_COLUMNS = (
    "Selected", "ApprovalFY", "Term", "NoEmp", "NewExist", "CreateJob", "RetainedJob",
    "UrbanRural", "DisbursementGross", "ChgOffPrinGr", "GrAppv", "SBA_Appv", "New",
    "RealEstate", "Portion", "Recession", "Default",
)  # fmt: skip


def _raw(path: Path) -> bytes:
    return path.read_bytes()


def _columns(path: Path, keep: tuple[str, ...], *, encoding: str = "utf-8-sig") -> bytes:
    """The CSV at ``path`` restricted to the columns ``keep`` (cell text unchanged)."""
    with path.open(newline="", encoding=encoding) as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    missing = [c for c in keep if c not in header]
    if missing:
        raise SystemExit(f"{path}: columns {missing} not found; header is {header}")
    idx = [header.index(c) for c in keep]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([row[i] for i in idx])
    return out.getvalue().encode("utf-8")


#: bundle file -> (source path relative to the source folder, how to derive it)
FILES: dict[str, tuple[str, Callable[[Path], bytes]]] = {
    "german.data.gz": ("german_credit/german.data", _raw),
    "adult.data.gz": ("adult/adult.data", _raw),
    "adult.test.gz": ("adult/adult.test", _raw),
    "compas-scores-two-years.csv.gz": (
        "compas/compas-scores-two-years.csv",
        lambda p: _columns(p, COMPAS_COLUMNS),
    ),
    "default_of_credit_card_clients.csv.gz": (
        "default_credit_taiwan/default_of_credit_card_clients.csv",
        _raw,
    ),
    "student-por.csv.gz": ("student_performance/student-por.csv", _raw),
    "student-mat.csv.gz": ("student_performance/student-mat.csv", _raw),
    "winequality-red.csv.gz": ("wine_quality_red/winequality-red.csv", _raw),
    "bupa.data.gz": ("bupa_liver/bupa.data", _raw),
    "Admission_Predict_Ver1.1.csv.gz": ("graduate_admission/Admission_Predict_Ver1.1.csv", _raw),
    "Hill_Valley_with_noise_Training.data.gz": (
        "hill_valley/Hill_Valley_with_noise_Training.data",
        _raw,
    ),
    "Hill_Valley_with_noise_Testing.data.gz": (
        "hill_valley/Hill_Valley_with_noise_Testing.data",
        _raw,
    ),
    "arrhythmia.data.gz": ("arrhythmia/arrhythmia.data", _raw),
    "lsvt_voice_rehabilitation.csv.gz": ("lsvt/lsvt_voice_rehabilitation_flat.csv", _raw),
    "SBAcase.csv.gz": ("sba/SBAcase.11.13.17.csv", lambda p: _columns(p, SBA_COLUMNS)),
}


def gzip_bytes(payload: bytes) -> bytes:
    """Deterministic gzip (no file name, mtime 0, level 9)."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buf, mtime=0) as gz:
        gz.write(payload)
    return buf.getvalue()


def build(source: Path) -> dict[str, bytes]:
    """Every bundle file's gzip bytes, built from the raw files under ``source``."""
    if not source.is_dir():
        raise SystemExit(
            f"source folder {source} not found (expected ../shared/datasets beside the repo)"
        )
    out = {}
    for name, (rel, derive) in FILES.items():
        path = source / rel
        if not path.is_file():
            raise SystemExit(f"missing source file {path}")
        out[name] = gzip_bytes(derive(path))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="folder laid out like ../shared/datasets",
    )
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the .gz files go")
    ap.add_argument(
        "--check", action="store_true", help="compare with the files in --out instead of writing"
    )
    args = ap.parse_args(argv)
    files = build(args.source)
    total = 0
    bad = []
    for name, data in files.items():
        total += len(data)
        target = args.out / name
        digest = hashlib.sha256(data).hexdigest()[:16]
        if args.check:
            same = target.is_file() and target.read_bytes() == data
            if not same:
                bad.append(name)
            print(f"{'ok ' if same else 'DIFF'} {name:45s} {len(data):>9,d} B  sha256 {digest}")
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            print(f"wrote {name:45s} {len(data):>9,d} B  sha256 {digest}")
    if not args.check:
        stale = sorted(p.name for p in args.out.glob("*.gz") if p.name not in files)
        for name in stale:
            print(f"note: {name} in {args.out} is not produced by this script")
    print(f"total {total:,d} B ({total / 2**20:.2f} MiB) in {len(files)} files")
    if bad:
        print(f"{len(bad)} file(s) differ from the bundle: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
