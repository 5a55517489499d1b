"""An HTTP API and an interactive recourse page: ``counterfact serve``.

A person states what they can change (which features, within what ranges, how
many at most) and the server answers with counterfactuals from the library's
methods, each re-checked with the real model, with the method's guarantee in
plain words.

>>> import counterfact as cf
>>> service = cf.serve.build_service("german_credit", model="lr", methods=["mace", "nearest"])
>>> app = cf.serve.create_app(service, token=None)   # a FastAPI app; run it with uvicorn

The command ``counterfact serve`` does the same and serves the page on
``http://127.0.0.1:8000``.  FastAPI and uvicorn are an optional extra:
``pip install "counterfact[serve]"``.

Endpoints: ``GET /`` (the page), ``GET /health``, ``GET /api/schema``,
``GET /api/methods``, ``GET /api/example``, ``POST /api/predict``,
``POST /api/explain``; the OpenAPI document at ``/openapi.json``, and ``/docs`` when a
local Swagger UI is installed (never one from a CDN).
"""

from __future__ import annotations

import os
from typing import Any

from .._utils._deps import import_optional
from ..exceptions import ValidationError
from ._build import build_service
from ._quota import Quotas
from ._request import Limits, QuotaExceeded, ServerBusy
from ._requestlog import RequestLog
from ._service import Service

__all__ = [
    "Limits",
    "QuotaExceeded",
    "Quotas",
    "RequestLog",
    "ServerBusy",
    "Service",
    "build_service",
    "create_app",
]


def require_server_deps() -> None:
    """Raise :class:`~counterfact.MissingDependencyError` unless FastAPI and uvicorn are
    installed."""
    for name in ("fastapi", "uvicorn"):
        import_optional(name, purpose="counterfact serve")


def create_app(
    service: Service,
    *,
    token: str | None = None,
    title: str = "counterfact",
    request_log: RequestLog | str | os.PathLike[str] | None = None,
) -> Any:
    """The FastAPI application serving ``service`` (see :func:`counterfact.serve._app.create_app`).

    Parameters
    ----------
    service : Service
        Fitted model and methods (and, in ``service.limits``, the per-client quotas).
    token : str, optional
        When given, every ``/api/*`` request needs ``Authorization: Bearer <token>``.
    title : str
        Title of the OpenAPI document.
    request_log : RequestLog or path, optional
        Append one JSON line per ``/api/*`` request there: who asked what and
        what the answer revealed (see :mod:`counterfact.serve._requestlog`).
    """
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ValidationError(
            f"token must be a non-empty string, or None to serve without one. Got {token!r}."
        )
    require_server_deps()
    from ._app import create_app as _create  # lazy: _app imports FastAPI, an optional extra

    log = (
        request_log
        if request_log is None or isinstance(request_log, RequestLog)
        else RequestLog(request_log)
    )
    return _create(service, token=token, title=title, request_log=log)
