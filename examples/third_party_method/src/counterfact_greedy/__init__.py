"""A greedy one-feature-at-a-time counterfactual search, as a counterfact plug-in.

Installed, it is the method ``"greedy"`` of ``counterfact``: listed by
``counterfact methods``, usable as ``counterfact explain --method greedy`` and as
``counterfact.methods.get("greedy")``, through the entry point declared in this
package's ``pyproject.toml``.
"""

from ._method import GreedySearch

__all__ = ["GreedySearch"]
