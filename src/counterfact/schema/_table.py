"""A table that prints whole: every column, however wide the terminal."""

from __future__ import annotations

from typing import Any

import pandas as pd

__all__ = ["WholeTable"]


class WholeTable(pd.DataFrame):
    """A :class:`pandas.DataFrame` whose text form is :meth:`~pandas.DataFrame.to_string`:
    ``print(schema.describe())`` shows every row and column instead of cutting the middle
    columns to ``...`` when the terminal is narrower than the table.  Everything else is a
    DataFrame's (a slice or a computation gives a plain DataFrame)."""

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame

    def __repr__(self) -> str:
        return self.to_string()

    def __str__(self) -> str:
        return self.to_string()
