"""Loading the user's own data files (a CSV of rows, a YAML or JSON document) with clean errors.

Shared by the command line and the server: every problem with a file the user
named becomes one :class:`~counterfact.exceptions.ValidationError` that says
which file, what is wrong with it and how to fix it, never a parser's
traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import CounterfactError, ValidationError
from ._dataset import Dataset

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["load_csv", "read_csv", "read_structured"]


def _existing_file(path: str | os.PathLike[str], what: str) -> Path:
    p = Path(path).expanduser()
    if not p.exists():
        raise ValidationError(f"{what} {str(p)!r}: no such file; check the path.")
    if p.is_dir():
        raise ValidationError(f"{what} {str(p)!r} is a folder; pass a file.")
    if not os.access(p, os.R_OK):
        raise ValidationError(f"{what} {str(p)!r} cannot be read (permission denied).")
    return p


def read_csv(path: str | os.PathLike[str], *, what: str = "--data") -> pd.DataFrame:
    """A CSV file with a header row as a DataFrame, or a clear error.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        How the file is named in error messages (the option that gave it).

    Raises
    ------
    ValidationError
        Missing, unreadable, empty, not a CSV file, or a header without rows.
    """
    import pandas as pd

    p = _existing_file(path, what)
    if p.stat().st_size == 0:
        raise ValidationError(
            f"{what} {str(p)!r} is empty; it needs a header row and at least one data row."
        )
    try:
        frame = pd.read_csv(p)
    except pd.errors.EmptyDataError:
        raise ValidationError(
            f"{what} {str(p)!r} has no columns; it needs a header row and at least one data row."
        ) from None
    except pd.errors.ParserError as exc:
        detail = " ".join(str(exc).split())
        raise ValidationError(
            f"{what} {str(p)!r} is not a well-formed CSV file ({detail}); every row needs as many "
            "comma-separated fields as the header."
        ) from None
    except UnicodeDecodeError:
        raise ValidationError(
            f"{what} {str(p)!r} is not a text CSV file (it is not valid UTF-8)."
        ) from None
    except OSError as exc:
        raise ValidationError(f"{what} {str(p)!r} cannot be read: {exc}.") from None
    if len(frame) == 0:
        raise ValidationError(f"{what} {str(p)!r} has a header but no data rows.")
    unnamed = [c for c in frame.columns if str(c).startswith("Unnamed: ")]
    if unnamed and len(unnamed) == len(frame.columns):
        raise ValidationError(
            f"{what} {str(p)!r} has no header row; its first line must name the columns."
        )
    return frame


def load_csv(path: str | os.PathLike[str], *, target: str | None, what: str = "--data") -> Dataset:
    """A CSV file of the user's own rows as a :class:`~counterfact.Dataset`.

    The schema is inferred (:meth:`counterfact.Dataset.from_frame`); the rows
    keep their position in the file as index (0, 1, ...).

    Parameters
    ----------
    path : path-like
        The CSV file (header row, one row per example, the target as a column).
    target : str
        The target column.
    what : str
        How the file is named in error messages.

    Raises
    ------
    ValidationError
        Any problem with the file (see :func:`read_csv`), no or an unknown
        target column, a target with missing values, or columns the schema
        inference rejects.
    """

    if not target:
        raise ValidationError(f"{what} needs --target naming the target column of the file.")
    frame = read_csv(path, what=what)
    if target not in frame.columns:
        raise ValidationError(
            f"{what} {str(path)!r} has no column {target!r} (the --target); its columns are "
            f"{list(map(str, frame.columns))}."
        )
    if frame.shape[1] < 2:
        raise ValidationError(
            f"{what} {str(path)!r} has only the target column; it needs feature columns too."
        )
    if frame[target].isna().any():
        n = int(frame[target].isna().sum())
        raise ValidationError(
            f"{what} {str(path)!r}: the target column {target!r} has {n} empty values; fill "
            "or drop those rows."
        )
    try:
        return Dataset.from_frame(frame, target=target, name=Path(path).stem)
    except CounterfactError as exc:
        raise ValidationError(f"{what} {str(path)!r}: {exc}") from None


def read_structured(path: Path, what: str, hint: str = "") -> Any:
    """The parsed content of a YAML or JSON file (JSON by the ``.json`` suffix),
    or a :class:`ValidationError` saying ``what`` could not be read or parsed,
    with the line and column of a syntax error and ``hint`` after it."""
    if path.is_dir():
        raise ValidationError(f"{what} {str(path)!r} is a folder; pass a YAML or JSON file.")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"{what} {str(path)!r} cannot be read: {exc}.") from None
    if path.suffix.lower() == ".json":
        import json

        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(
                f"{what} {str(path)!r} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                f"column {exc.colno}."
            ) from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ValidationError(
            f"{what} {str(path)!r} is not valid YAML: {problem}{where}.{hint}"
        ) from None
