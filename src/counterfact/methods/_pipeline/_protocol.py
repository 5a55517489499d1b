"""What the explain pipeline may read or call on a method: :class:`PipelineMethod`.

The pipeline never looks a method up by name and never reads an attribute that
only some methods have.  Everything it needs is declared here, and
:class:`~counterfact.methods.CounterfactualMethod` provides all of it: the
fitted state that ``fit`` stores, the common parameters (with class-level
defaults for a method that does not take them), the tags, and the hooks a
method overrides (each with a base-class default).  :data:`PIPELINE_READS`
lists the same names; a test scans the pipeline's modules and fails on any
``method.<name>`` not in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ...data import Dataset
    from ...models import ModelAdapter
    from ...result import Certificate
    from ...schema import Schema
    from .._tags import MethodTags
    from ._query import Candidates, Query

__all__ = ["PIPELINE_READS", "PipelineMethod"]

#: every attribute of a method the pipeline reads or calls (see :class:`PipelineMethod`)
PIPELINE_READS: frozenset[str] = frozenset(
    {
        # what the class declares (``__name__``: its class's, in messages)
        "__name__",
        "name",
        "tags",
        "supported_constraints",
        "get_params",
        # fitted state (set by ``fit``)
        "model_",
        "data_",
        "schema_",
        "diversity_steps_",
        "effort_",
        "_check_fitted",
        # common parameters (class-level defaults on the base class)
        "random_state",
        "time_limit",
        "verbose",
        # hooks, each with a base-class default
        "_explain_one",
        "_explain_batch",
        "_batch_size",
        "_before_search",
        "_own_test",
        "_sparsifies",
        "_own_region",
        "_distance_norm",
        "_encodes_margin",
        "certificate",
        "certificate_record",
        "answer_value",
        "verify",
    }
)


class PipelineMethod(Protocol):
    """A fitted method as the pipeline sees it.

    Attributes
    ----------
    name : str
        The registry name (written into the result).
    tags : MethodTags
        What the method declares about itself (``batch``, ``costs``, ...).
    supported_constraints : frozenset of str
        The constraint kinds it honours.
    model_, data_, schema_ : fitted state
        The wrapped model, the training data and its schema.
    diversity_steps_ : ndarray
        Per feature, by how much two answers of one query must differ.
    effort_ : BoundCosts
        The default measure of effort bound to the training data.
    random_state, time_limit, verbose :
        The common parameters (None, None and 0 for a method without them).
    """

    name: str
    tags: MethodTags
    model_: ModelAdapter
    data_: Dataset
    schema_: Schema
    diversity_steps_: np.ndarray
    effort_: Any
    random_state: int | None
    time_limit: float | None
    verbose: int

    @property
    def supported_constraints(self) -> frozenset[str]:
        """The constraint kinds the method honours."""

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters (written into the result)."""

    def _check_fitted(self) -> None:
        """Raise when the method is not fitted."""

    def _explain_one(self, query: Query) -> Candidates:
        """Search one query (per-query methods)."""

    def _explain_batch(self, queries: list[Query]) -> list[Candidates]:
        """Search a sub-batch of queries (``tags.batch``)."""

    def _batch_size(self, n: int) -> int:
        """Queries per call of ``_explain_batch``."""

    def _before_search(self, queries: list[Query], parallel: bool) -> None:
        """Work to do once before the queries are searched."""

    def _own_test(self, rows: pd.DataFrame, target_index: Sequence[int]) -> np.ndarray | None:
        """The method's own test of answers beyond the constraints and the judge (None:
        none)."""

    def _sparsifies(self) -> bool:
        """Whether every change the model does not need is reverted after the search."""

    def _own_region(self) -> bool:
        """Whether the method searches inside a region of its own, whose moves the
        pipeline must not revert."""

    def _distance_norm(self) -> Any:
        """The norm the method measures distance with (None: the pipeline's l1)."""

    def _encodes_margin(self) -> bool:
        """Whether a margin (``min_probability``) may be asked of the fitted method for
        its model."""

    def certificate(self, status: str, diagnostics: Mapping[str, Any] | None = None) -> str:
        """The guarantee behind one query's answer, in plain words."""

    def certificate_record(
        self, status: str, diagnostics: Mapping[str, Any] | None = None
    ) -> Certificate:
        """The fields behind one query's certificate (measure, bounds, tolerances)."""

    def answer_value(self, query: Query, row: pd.Series) -> float | None:
        """The reported answer's value under the certificate's measure (None: no measure)."""

    def verify(
        self, query: Query, frame: pd.DataFrame
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check raw rows of one query with the real model and the constraints."""
