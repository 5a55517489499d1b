"""Tables of the report: numbers rounded to meaningful digits, direction arrows,
the best value per column highlighted (pandas Styler for HTML)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._glossary import KEY_METRICS, higher_is_better

__all__ = ["AMORTIZED_MARK", "full_table", "plain_table", "summary_table"]

AMORTIZED_MARK = "\u1d43"  # superscript a: amortized time
_BEST_CSS = "font-weight:bold;background-color:#dff0d8"
_DASH = "\u2013"


def _decimals(values: Sequence[float]) -> int:
    """Decimals giving three significant digits to the column's largest magnitude
    (so ``1.00`` stands beside ``0.67``, never ``1.0`` beside ``0.667``); 0 to 4."""
    v = np.abs(np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float))
    v = v[v > 0]
    if v.size == 0:
        return 2
    return int(min(4, max(0, 2 - math.floor(math.log10(float(v.max()))))))


def _fmt_column(values: pd.Series, *, significant: bool = False) -> list[str]:
    """Display text of a numeric column: fixed decimals per column (none for a
    column of whole numbers), or three significant digits per value (times,
    which span orders of magnitude)."""
    vals = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    if significant:
        return [_DASH if not np.isfinite(x) else _three_digits(x) for x in vals]
    finite = vals[np.isfinite(vals)]
    d = 0 if finite.size and np.all(finite == np.round(finite)) else _decimals(list(vals))
    return [_DASH if not np.isfinite(x) else f"{x:.{d}f}" for x in vals]


def _three_digits(x: float) -> str:
    """Three significant digits, trailing zeros kept (``0.0140`` beside ``0.0452``)."""
    return f"{x:#.3g}".rstrip(".") if x != 0 else "0"


def _as_shown(values: pd.Series, *, significant: bool = False) -> pd.Series:
    """The column's values rounded as displayed (so that "best" and "tied" are
    judged on what the reader sees)."""
    text = _fmt_column(values, significant=significant)
    return pd.Series(
        [np.nan if t == _DASH else float(t) for t in text], index=values.index, dtype=float
    )


def _best_mask(values: pd.DataFrame, directions: dict[str, bool | None]) -> pd.DataFrame:
    """True where a cell holds its column's best value (ties included); no
    highlight in a column where every method ties or the direction is unknown."""
    mask = pd.DataFrame(False, index=values.index, columns=values.columns)
    for c, hib in directions.items():
        if hib is None or c not in values:
            continue
        col = pd.to_numeric(values[c], errors="coerce")
        if col.notna().sum() < 2:
            continue
        best = col.max() if hib else col.min()
        if np.isclose(col.dropna(), best, rtol=1e-9, atol=1e-12).all():
            continue  # all tied: nothing to point at
        mask[c] = np.isclose(
            col.fillna(np.inf if not hib else -np.inf), best, rtol=1e-9, atol=1e-12
        )
    return mask


def _styled_html(
    display: pd.DataFrame, mask: pd.DataFrame, *, index_name: str, caption: str = ""
) -> str:
    """Render ``display`` (strings) with pandas Styler, highlighting ``mask``."""
    shown = display.copy()
    shown.insert(0, index_name, [str(i) for i in shown.index])
    shown.index = pd.RangeIndex(len(shown))
    css = mask.copy()
    css.insert(0, index_name, False)
    css.index = shown.index
    css = css.astype(object).where(~css.astype(bool), _BEST_CSS).where(css.astype(bool), "")
    styler = shown.style.apply(lambda _d: css, axis=None).hide(axis="index")
    styler = styler.set_table_attributes('class="tbl"')
    if caption:
        styler = styler.set_caption(caption)
    return str(styler.to_html())


def _markdown(
    display: pd.DataFrame, mask: pd.DataFrame | None = None, *, index_name: str = ""
) -> str:
    cols = [index_name, *map(str, display.columns)]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for i, (idx, row) in enumerate(display.iterrows()):
        cells = []
        for j, v in enumerate(row.to_numpy()):
            text = str(v).replace("|", "\\|").replace("\n", " ")
            if mask is not None and bool(mask.iat[i, j]):
                text = f"**{text}**"
            cells.append(text)
        lines.append("| " + " | ".join([str(idx), *cells]) + " |")
    return "\n".join(lines)


def summary_table(block: pd.DataFrame, fmt: str) -> str:
    """The key metrics of one dataset x model block, one row per method.

    ``block`` is the benchmark summary's rows for the block (``summarise``):
    the key metrics' means, ``time_median``, ``time_kind``, ``fit_seconds``
    and ``queries``.  Time per query is the median; amortized times carry
    :data:`AMORTIZED_MARK`.
    """
    b = block.set_index("method")
    values = pd.DataFrame(index=b.index)
    display = pd.DataFrame(index=b.index)
    directions: dict[str, bool | None] = {}
    for k in KEY_METRICS:
        src = "time_median" if k.column == "time" else k.column
        col = (
            pd.to_numeric(b[src], errors="coerce") if src in b else pd.Series(np.nan, index=b.index)
        )
        values[k.label] = _as_shown(col, significant=k.column == "time")
        directions[k.label] = k.higher
        display[k.label] = _with_interval(
            b, src, col, display_text=_fmt_column(col, significant=k.column == "time")
        )
    time_label = next(k.label for k in KEY_METRICS if k.column == "time")
    display[time_label] = [
        f"{t}{AMORTIZED_MARK}" if a and t != _DASH else t
        for t, a in zip(display[time_label], _amortized_rows(b), strict=True)
    ]
    fit = (
        pd.to_numeric(b["fit_seconds"], errors="coerce")
        if "fit_seconds" in b
        else pd.Series(np.nan, index=b.index)
    )
    values["fit (s)"], directions["fit (s)"] = fit, None
    display["fit (s)"] = _fmt_column(fit, significant=True)
    n = b["queries"] if "queries" in b else pd.Series(np.nan, index=b.index)
    values["queries"], directions["queries"] = n, None
    display["queries"] = [_DASH if pd.isna(v) else str(int(v)) for v in n]
    mask = _best_mask(values, directions)
    if fmt == "html":
        return _styled_html(display, mask, index_name="method")
    return _markdown(display, mask, index_name="method")


def _with_interval(
    b: pd.DataFrame, column: str, values: pd.Series, *, display_text: list[str]
) -> list[str]:
    """The displayed values with their 95 % interval where the summary has one:
    ``0.62 [0.55, 0.69]`` for coverage (Wilson), ``0.41 ± 0.03`` for a mean, at
    the column's decimals."""
    v = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    d = _decimals(list(v))

    def same_decimals(t: str, x: float) -> str:
        # a value with an interval has the interval's decimals ("1.00 [0.93, 1.00]",
        # never "1 [0.93, 1.00]" for a column that happens to hold whole numbers)
        return t if t == _DASH or not np.isfinite(x) else f"{x:.{d}f}"

    if column == "coverage" and "coverage_ci_low" in b:
        lo = pd.to_numeric(b["coverage_ci_low"], errors="coerce")
        hi = pd.to_numeric(b["coverage_ci_high"], errors="coerce")
        return [
            t
            if t == _DASH or not np.isfinite(a)
            else f"{same_decimals(t, x)} [{a:.{d}f}, {z:.{d}f}]"
            for t, x, a, z in zip(display_text, v, lo, hi, strict=True)
        ]
    ci = f"ci95_{column}"
    if ci in b:
        h = pd.to_numeric(b[ci], errors="coerce")
        return [
            t if t == _DASH or not np.isfinite(e) else f"{same_decimals(t, x)} \u00b1 {e:.{d}f}"
            for t, x, e in zip(display_text, v, h, strict=True)
        ]
    return display_text


def _is_interval(column: str) -> bool:
    return column.startswith("ci95_") or column.startswith("coverage_ci_")


def full_table(block: pd.DataFrame, fmt: str, skip: Sequence[str] = ()) -> str:
    """Every numeric column of the block, transposed (one row per metric, one
    column per method) so that it grows down the page, not across it."""
    b = block.set_index("method")
    cols = [
        c
        for c in b.columns
        if c not in skip
        and not _is_interval(c)
        and pd.api.types.is_numeric_dtype(b[c])
        and b[c].notna().any()
    ]
    values = b[cols]
    shown = pd.DataFrame(
        {c: _as_shown(values[c], significant=_is_time(c)) for c in cols}, index=values.index
    )
    mask = _best_mask(shown, {c: higher_is_better(c) for c in cols}).T
    display = pd.DataFrame(
        {str(m): [None] * len(cols) for m in values.index},
        index=[_with_arrow(c) for c in cols],
        dtype=object,
    )
    amortized = _amortized_rows(b)
    for i, c in enumerate(cols):
        text = _fmt_column(values[c], significant=_is_time(c))
        if _is_time(c) and c != "fit_seconds":
            text = [
                f"{t}{AMORTIZED_MARK}" if a and t != _DASH else t
                for t, a in zip(text, amortized, strict=True)
            ]
        display.iloc[i] = text
    mask.index, mask.columns = display.index, display.columns
    if fmt == "html":
        return _styled_html(display, mask, index_name="metric")
    return _markdown(display, mask, index_name="metric")


def _amortized_rows(b: pd.DataFrame) -> list[bool]:
    """Per method (row of ``b``): whether its times are batch averages."""
    if "time_kind" not in b:
        return [False] * len(b)
    return list((b["time_kind"] == "amortized").to_numpy())


def _is_time(column: str) -> bool:
    return column.startswith("time") or column.endswith("seconds")


def _with_arrow(metric: str) -> str:
    hib = higher_is_better(metric)
    return metric if hib is None else f"{metric} {chr(0x2191) if hib else chr(0x2193)}"


def plain_table(df: pd.DataFrame, fmt: str, *, css_class: str = "tbl") -> str:
    """A table without highlighting (skipped cells, statistics), numbers rounded;
    ``css_class`` styles the HTML table (``"tbl reasons"`` wraps long text)."""
    display = df.copy()
    for c in display.columns:
        if pd.api.types.is_float_dtype(display[c]):
            display[c] = _fmt_column(display[c], significant=True)
    display = display.astype(object).where(display.notna(), "")
    display.index = pd.RangeIndex(1, len(display) + 1)
    if fmt == "html":
        styler = display.style.hide(axis="index").set_table_attributes(f'class="{css_class}"')
        return str(styler.to_html())
    cols = list(map(str, display.columns))
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    lines += [
        "| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in row) + " |"
        for row in display.itertuples(index=False)
    ]
    return "\n".join(lines)
