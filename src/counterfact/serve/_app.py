"""The FastAPI application: routes, the bearer token, request limits and clean errors.

Imported only when a server is built (FastAPI is an optional extra).
"""

import asyncio
import hmac
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from .._utils._version import __version__
from ..exceptions import CounterfactError
from ._models import (
    ErrorOut,
    ExampleOut,
    ExplainOut,
    ExplainRequest,
    HealthOut,
    MethodsOut,
    PredictOut,
    RowsRequest,
    SchemaOut,
)
from ._request import ExplainJob, ServerBusy
from ._service import Service

__all__ = ["create_app"]

logger = logging.getLogger("counterfact.serve")

STATIC = Path(__file__).parent / "static"

#: the page loads nothing from elsewhere
_PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "Missing or wrong bearer token."},
    413: {"model": ErrorOut, "description": "Request body too large."},
    422: {"model": ErrorOut, "description": "Invalid request (the library's message says what and how to fix it)."},
    429: {"model": ErrorOut, "description": "Too many explanations in flight; retry later."},
}


def _error(status: int, kind: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": kind, "detail": detail}, status_code=status, headers=headers)


class _BodyLimit:
    """Reject request bodies larger than ``max_bytes`` (413) before any parsing."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        too_large = _error(
            413,
            "Payload Too Large",
            f"The request body exceeds this server's limit of {self.max_bytes} bytes; send fewer rows per request.",
        )
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _error(400, "Bad Request", "Content-Length is not a number.")(scope, receive, send)
                return
            if declared > self.max_bytes:
                await too_large(scope, receive, send)
                return
        chunks, total = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            total += len(body)
            if total > self.max_bytes:
                await too_large(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        payload = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return payload
            return await receive()

        await self.app(scope, replay, send)


_UNION_TAGS = {"bool", "int", "float", "str", "none", "function-after"}


def _loc(loc: tuple[Any, ...]) -> str:
    """``("body", "rows", 0, "age", "int")`` -> ``"rows[0]['age']"``."""
    parts = [p for p in loc if not (isinstance(p, str) and p in _UNION_TAGS)]
    if parts and parts[0] == "body":
        parts = parts[1:]
    out = ""
    for k, p in enumerate(parts):
        if isinstance(p, int):
            out += f"[{p}]"
        elif k >= 2 and parts[k - 2] == "rows" and isinstance(parts[k - 1], int):
            out += f"['{p}']"  # a feature of a row
        else:
            out += f".{p}" if out else str(p)
    return out or "body"


def _validation_message(errors: list[dict[str, Any]]) -> str:
    """One readable line for pydantic's errors (grouped by location)."""
    for e in errors:
        if e.get("type") == "json_invalid":
            why = (e.get("ctx") or {}).get("error", "")
            return f"The request body is not valid JSON{': ' + str(why) if why else ''}. Send a JSON object."
    by_loc: dict[str, list[str]] = {}
    tags: dict[str, set[str]] = {}
    for e in errors:
        raw = tuple(e.get("loc", ()))
        loc = _loc(raw)
        msg = str(e.get("msg", "invalid"))
        if e.get("type") == "missing" and loc == "body":
            msg = "a JSON body is required"
        elif e.get("type") == "extra_forbidden":
            msg = "unknown field; see the request schema at /docs"
        by_loc.setdefault(loc, [])
        tags.setdefault(loc, set()).update(p for p in raw if isinstance(p, str) and p in _UNION_TAGS)
        if msg not in by_loc[loc]:
            by_loc[loc].append(msg)
    parts = []
    for loc, msgs in list(by_loc.items())[:5]:
        seen = tags[loc]
        if len(msgs) > 1 and seen and seen <= {"int", "float"}:
            text = "must be a finite JSON number"
        elif len(msgs) > 1 and {"bool", "str"} <= seen:
            text = "must be a finite JSON number, a string or a boolean"
        else:
            text = "; ".join(msgs)
        parts.append(f"{loc}: {text}")
    more = f" (and {len(by_loc) - 5} more)" if len(by_loc) > 5 else ""
    return "Invalid request: " + "; ".join(parts) + more + "."


def create_app(service: Service, *, token: str | None = None, title: str = "counterfact") -> FastAPI:
    """The HTTP application around a :class:`~counterfact.serve.Service`.

    Parameters
    ----------
    service : Service
        Fitted model and methods.
    token : str, optional
        When given, every ``/api/*`` request needs ``Authorization: Bearer <token>``.
    title : str
        Title of the OpenAPI document.
    """
    if not (STATIC / "index.html").is_file():
        raise CounterfactError(
            "The page's files (counterfact/serve/static) are missing from this install of counterfact; "
            "reinstall it (pip install --force-reinstall 'counterfact[serve]')."
        )
    limits = service.limits
    executor = ThreadPoolExecutor(max_workers=limits.max_pending + 4, thread_name_prefix="counterfact-explain")
    app = _new_app(service, executor, title)
    _add_error_handlers(app)
    _add_security_headers(app)
    _add_page(app, service)
    app.include_router(_api(service, executor, token))
    app.add_middleware(_BodyLimit, max_bytes=limits.max_body_bytes)
    return app


def _new_app(service: Service, executor: ThreadPoolExecutor, title: str) -> FastAPI:
    """The bare application; stopping it shuts the worker threads down."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title=title,
        summary="Counterfactual explanations: what could change the model's decision, under the user's own constraints.",
        version=__version__,
        lifespan=lifespan,
    )
    app.state.service = service
    app.state.executor = executor
    return app


def _add_error_handlers(app: FastAPI) -> None:
    """Every error is a JSON ``{"error", "detail"}``: 422 for invalid requests, 429 when busy, 500 for a crash."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, "RequestValidationError", _validation_message(list(exc.errors())))

    @app.exception_handler(CounterfactError)
    async def _library(request: Request, exc: CounterfactError) -> JSONResponse:
        if isinstance(exc, ServerBusy):
            return _error(429, "ServerBusy", str(exc), headers={"Retry-After": "2"})
        return _error(422, type(exc).__name__, str(exc))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        try:
            phrase = HTTPStatus(exc.status_code).phrase
        except ValueError:
            phrase = "HTTP error"
        return _error(exc.status_code, phrase, str(exc.detail), headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        logger.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, "InternalError", "The server failed to answer this request; the cause is in the server's log.")


def _add_security_headers(app: FastAPI) -> None:
    """``nosniff`` on every answer; the page and its files also get the content security policy."""

    @app.middleware("http")
    async def _headers(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        response = await call_next(request)
        response.headers["X-Content-Type-Options"] = "nosniff"
        path = request.url.path
        if path == "/" or path.startswith("/static/"):
            response.headers["Content-Security-Policy"] = _PAGE_CSP
            response.headers["Referrer-Policy"] = "no-referrer"
        return response


def _add_page(app: FastAPI, service: Service) -> None:
    """The recourse page, its static files and ``/health`` (no token needed)."""

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/health", response_model=HealthOut, tags=["server"])
    async def health() -> dict[str, Any]:
        """Liveness: answers at once, even while explanations run."""
        return {"status": "ok", "methods": service.method_names, "pending": service.pending}


def _token_check(token: str | None) -> Callable[..., None]:
    """The dependency that checks the bearer token of an ``/api/*`` request (none needed when ``token`` is None)."""
    bearer = HTTPBearer(auto_error=False, description="Required on /api/* when the server was started with a token.")

    def check_token(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:  # noqa: B008
        if token is None:
            return
        if credentials is None:
            raise HTTPException(
                401, "This server requires a bearer token: send 'Authorization: Bearer <token>'.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
            raise HTTPException(401, "Wrong bearer token.", headers={"WWW-Authenticate": "Bearer"})

    return check_token


def _api(service: Service, executor: ThreadPoolExecutor, token: str | None) -> APIRouter:
    """The ``/api/*`` routes, behind the bearer token."""
    api = APIRouter(prefix="/api", dependencies=[Depends(_token_check(token))], responses=_ERRORS)
    _add_describe_routes(api, service)
    _add_model_routes(api, service, executor)
    return api


def _add_describe_routes(api: APIRouter, service: Service) -> None:
    """What the server offers: the schema, the methods, example rows."""

    @api.get("/schema", response_model=SchemaOut, tags=["data"])
    async def schema() -> dict[str, Any]:
        """Features (kind, domain, default actionability, resolution), classes, limits."""
        return service.schema_info()

    @api.get("/methods", response_model=MethodsOut, tags=["methods"])
    async def methods() -> dict[str, Any]:
        """Loaded methods, their parameters and the constraint kinds each honours."""
        return {"methods": service.methods_info()}

    @api.get("/example", response_model=ExampleOut, tags=["data"])
    async def example(index: int = 0) -> dict[str, Any]:
        """An example row the model does not assign to the favourable class."""
        return service.example(index)


def _add_model_routes(api: APIRouter, service: Service, executor: ThreadPoolExecutor) -> None:
    """Predictions and explanations; their work runs in ``executor``, off the event loop."""

    async def in_worker(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    @api.post("/predict", response_model=PredictOut, tags=["model"])
    async def predict(body: RowsRequest) -> dict[str, Any]:
        """Decision and class probabilities for raw rows."""
        return await in_worker(service.predict, body.rows)  # type: ignore[no-any-return]

    @api.post("/explain", response_model=ExplainOut, tags=["methods"])
    async def explain(body: ExplainRequest) -> dict[str, Any]:
        """Counterfactuals for raw rows under the user's constraints.

        Per row: status and its reason, counterfactuals as raw rows and as
        change lists, the probability of the target before and after, and the
        method's certificate.
        """
        # validation is cheap but runs pandas: keep it off the event loop too
        job = await in_worker(
            partial(
                service.prepare_explain,
                rows=body.rows,
                method=body.method,
                n_counterfactuals=body.n_counterfactuals,
                target=body.target,
                constraints=None if body.constraints is None else body.constraints.model_dump(),
                time_limit=body.time_limit,
            )
        )
        return await _run_admitted(service, executor, job)


async def _run_admitted(service: Service, executor: ThreadPoolExecutor, job: ExplainJob) -> dict[str, Any]:
    """Run a validated explanation in ``executor`` once the service admits it (429 when it is full)."""
    service.acquire()

    def work() -> dict[str, Any]:
        try:
            return service.run_explain(job)
        finally:
            service.release()

    try:
        future = asyncio.get_running_loop().run_in_executor(executor, work)
    except RuntimeError as exc:  # the executor is shut down: the server is stopping
        service.release()
        raise HTTPException(503, "The server is shutting down.") from exc
    return await future
