"""A method for the page tests that declares it cannot honour ``max_changes``."""

from __future__ import annotations

import dataclasses

from counterfact.methods import NearestObservable


class NearestWithoutCap(NearestObservable):
    """A method that declares it cannot honour ``max_changes`` (the page must say so)."""

    tags = dataclasses.replace(
        NearestObservable.tags, constraints=NearestObservable.tags.constraints - {"max_changes"}
    )
