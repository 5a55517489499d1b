"""The FastAPI application: routes, the bearer token, request limits and clean errors.

Imported only when a server is built (FastAPI is an optional extra).
"""

import asyncio
import hmac
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from .._utils._version import __version__
from ..exceptions import CounterfactError
from ._docs import swagger_ui_assets
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
from ._pool import Cancelled
from ._quota import Quotas
from ._request import ExplainJob, ServerBusy
from ._requestlog import RequestLog, token_fingerprint
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
    422: {
        "model": ErrorOut,
        "description": "Invalid request (the library's message says what and how to fix it).",
    },
    429: {
        "model": ErrorOut,
        "description": "Too many explanations in flight, or a per-client quota used up; "
        "retry after the Retry-After seconds.",
    },
}

#: the status logged for a request whose client went away before its answer (nginx's convention)
CLIENT_GONE = 499

#: ``await in_worker(fn, *args)``: ``fn(*args)`` run in the server's worker threads
_InWorker = Callable[..., Awaitable[Any]]


def _error(
    status: int, kind: str, detail: str, headers: dict[str, str] | None = None
) -> JSONResponse:
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
            f"The request body exceeds this server's limit of {self.max_bytes} bytes; send fewer "
            "rows per request.",
        )
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _error(400, "Bad Request", "Content-Length is not a number.")(
                    scope, receive, send
                )
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


def _retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def _client(scope: Any) -> str:
    """The client's address as the server sees it (behind a trusted proxy: the forwarded one)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class _Guard:
    """Per-client request quota and the request log, for every ``/api/*`` request.

    Counts the request against the client's per-minute quota (``429`` with
    ``Retry-After`` when over, before the body is read), gives the handlers a
    record to fill (``scope["counterfact.request_log"]``: the validated request and
    what the answer revealed) and appends it to the request log with the status
    once the answer has been sent.
    """

    def __init__(self, app: Any, quotas: Quotas, request_log: RequestLog | None) -> None:
        self.app = app
        self.quotas = quotas
        self.request_log = request_log

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith("/api/"):
            await self.app(scope, receive, send)
            return
        record: dict[str, Any] = {}
        scope["counterfact.request_log"] = record
        status: list[int | None] = [None]
        t0 = time.perf_counter()

        async def watched_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            self.quotas.admit_request(_client(scope))
        except ServerBusy as exc:
            record["error"] = type(exc).__name__
            await _error(429, type(exc).__name__, str(exc), headers=_retry_after(exc.retry_after))(
                scope, receive, watched_send
            )
        else:
            try:
                await self.app(scope, receive, watched_send)
            except Exception:  # answered 500 by the server's outermost handler
                status[0] = status[0] or 500
                raise
            finally:
                if status[0] is None:
                    status[0] = CLIENT_GONE
                if self.request_log is not None:
                    self.request_log.write(
                        self._line(scope, record, status[0], time.perf_counter() - t0)
                    )
            return
        if self.request_log is not None:
            self.request_log.write(self._line(scope, record, status[0], time.perf_counter() - t0))

    @staticmethod
    def _line(
        scope: Any, record: dict[str, Any], status: int | None, seconds: float
    ) -> dict[str, Any]:
        auth = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        return {
            "client": _client(scope),
            "token": token_fingerprint(token),
            "method": scope.get("method"),
            "path": scope.get("path"),
            "query": scope.get("query_string", b"").decode("latin-1") or None,
            "status": status,
            "seconds": round(seconds, 4),
            **record,
        }


class _SecurityHeaders:
    """``nosniff`` on every answer; the page and its files also get the content security policy."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        page = path == "/" or path.startswith("/static/")

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v)
                    for k, v in message.get("headers", [])
                    if k.lower() != b"x-content-type-options"
                ]
                headers.append((b"x-content-type-options", b"nosniff"))
                if page:
                    headers += [
                        (b"content-security-policy", _PAGE_CSP.encode()),
                        (b"referrer-policy", b"no-referrer"),
                    ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


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
            because = f": {why}" if why else ""
            return f"The request body is not valid JSON{because}. Send a JSON object."
    by_loc: dict[str, list[str]] = {}
    tags: dict[str, set[str]] = {}
    for e in errors:
        raw = tuple(e.get("loc", ()))
        loc = _loc(raw)
        msg = str(e.get("msg", "invalid"))
        if e.get("type") == "missing" and loc == "body":
            msg = "a JSON body is required"
        elif e.get("type") == "extra_forbidden":
            msg = "unknown field; see the request schema at /openapi.json"
        by_loc.setdefault(loc, [])
        tags.setdefault(loc, set()).update(
            p for p in raw if isinstance(p, str) and p in _UNION_TAGS
        )
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


def create_app(
    service: Service,
    *,
    token: str | None = None,
    title: str = "counterfact",
    request_log: RequestLog | None = None,
) -> FastAPI:
    """The HTTP application around a :class:`~counterfact.serve.Service`.

    Parameters
    ----------
    service : Service
        Fitted model and methods.
    token : str, optional
        When given, every ``/api/*`` request needs ``Authorization: Bearer <token>``.
    title : str
        Title of the OpenAPI document.
    request_log : RequestLog, optional
        Where one JSON line per ``/api/*`` request goes (closed when the app stops).
    """
    if not (STATIC / "index.html").is_file():
        raise CounterfactError(
            "The page's files (counterfact/serve/static) are missing from this install of "
            "counterfact; "
            "reinstall it (pip install --force-reinstall 'counterfact[serve]')."
        )
    limits = service.limits
    # cancelled explanations give their place among max_pending back at once, but their
    # threads end at the solvers' next check: room for both
    executor = ThreadPoolExecutor(
        max_workers=2 * limits.max_pending + 4, thread_name_prefix="counterfact-explain"
    )
    app = _new_app(service, executor, title, request_log)
    docs = swagger_ui_assets()
    _add_error_handlers(app, docs=docs is not None)
    _add_page(app, service)
    _add_docs(app, title, docs)
    app.include_router(_api(service, executor, token, docs=docs is not None))
    app.add_middleware(_BodyLimit, max_bytes=limits.max_body_bytes)
    app.add_middleware(_Guard, quotas=service.quotas, request_log=request_log)
    app.add_middleware(_SecurityHeaders)
    return app


def _new_app(
    service: Service, executor: ThreadPoolExecutor, title: str, request_log: RequestLog | None
) -> FastAPI:
    """The bare application; stopping it shuts the worker threads down and closes the
    request log."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        executor.shutdown(wait=False, cancel_futures=True)
        if request_log is not None:
            request_log.close()

    app = FastAPI(
        title=title,
        summary="Counterfactual explanations: what could change the model's decision, under the "
        "user's own constraints.",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # FastAPI's own pages load Swagger UI and ReDoc from a CDN: see _add_docs
        redoc_url=None,
    )
    app.state.service = service
    app.state.executor = executor
    return app


def _endpoints(request: Request, docs: bool) -> str:
    """The server's endpoints in one sentence (the answer to an unknown path), read from the
    app's own API description so that the list never drifts from its routes."""
    api = [
        f"{method.upper()} {path}" + ("?index=k" if path == "/api/example" else "")
        for path, methods in request.app.openapi()["paths"].items()
        for method in methods
    ]
    where = "/docs and /openapi.json" if docs else "/openapi.json"
    listed = ", ".join(api[:-1]) + f" and {api[-1]}" if len(api) > 1 else "".join(api)
    return f"The endpoints are {listed}; the page is at / and the API's documentation at {where}."


#: the shape of a POST body, for the errors that say what to send
_ROWS_BODY = '{"rows": [{"feature": value, ...}]}'


def _http_detail(request: Request, exc: HTTPException, phrase: str, docs: bool) -> str:
    """What was wrong and what to send instead, for the errors Starlette and FastAPI raise
    with a bare phrase (unknown path, wrong verb, a body that cannot be parsed)."""
    detail = str(exc.detail)
    path = request.url.path
    path = path if len(path) <= 100 else path[:100] + "..."
    if exc.status_code == 404 and detail == phrase:
        return f"There is nothing at {path}. {_endpoints(request, docs)}"
    if exc.status_code == 405 and detail == phrase:
        allowed = [
            m.strip()
            for m in (getattr(exc, "headers", None) or {}).get("Allow", "").split(",")
            if m.strip() and m.strip() != "HEAD"
        ]
        use = " or ".join(allowed) or "another method"
        body = f", with a JSON object such as {_ROWS_BODY}" if allowed == ["POST"] else ""
        return f"{request.method} is not allowed on {path}: use {use}{body}."
    if exc.status_code == 400 and detail == "There was an error parsing the body":
        cause = exc.__cause__
        if isinstance(cause, UnicodeDecodeError):
            what = "is not UTF-8 text"
        elif isinstance(cause, RecursionError):
            what = "is nested too deeply to be read"
        else:
            what = "could not be read"
        return (
            f"The request body {what}. Send a UTF-8 encoded JSON object, nested no deeper than "
            f"the request schema (/openapi.json), such as {_ROWS_BODY}."
        )
    return detail


def _add_error_handlers(app: FastAPI, *, docs: bool) -> None:
    """Every error is a JSON ``{"error", "detail"}``: 422 for invalid requests, 429 when busy,
    500 for a crash (``docs``: whether ``/docs`` is served, for the list of endpoints)."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        _note(request, error="RequestValidationError")
        return _error(422, "RequestValidationError", _validation_message(list(exc.errors())))

    @app.exception_handler(CounterfactError)
    async def _library(request: Request, exc: CounterfactError) -> JSONResponse:
        _note(request, error=type(exc).__name__)
        if isinstance(exc, ServerBusy):
            return _error(429, type(exc).__name__, str(exc), headers=_retry_after(exc.retry_after))
        if isinstance(exc, Cancelled):
            return _error(CLIENT_GONE, "Cancelled", str(exc))
        return _error(422, type(exc).__name__, str(exc))

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        _note(request, error=str(exc.status_code))
        try:
            phrase = HTTPStatus(exc.status_code).phrase
        except ValueError:
            phrase = "Client Closed Request" if exc.status_code == CLIENT_GONE else "HTTP error"
        detail = _http_detail(request, exc, phrase, docs)
        return _error(exc.status_code, phrase, detail, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        logger.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(
            500,
            "InternalError",
            "The server failed to answer this request; the cause is in the server's log.",
        )


def _note(req: Request, /, **fields: Any) -> None:
    """Add ``fields`` to the request's log record (see :class:`_Guard`)."""
    record = req.scope.get("counterfact.request_log")
    if record is not None:
        record.update(fields)


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


def _add_docs(app: FastAPI, title: str, assets: Path | None) -> None:
    """``/docs``: Swagger UI from the local files ``assets`` (nothing from a CDN); with
    none, no ``/docs`` at all, and ``/openapi.json`` is the documentation."""
    if assets is None:
        return
    app.mount("/docs-assets", StaticFiles(directory=assets), name="docs-assets")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title=f"{title}: API",
            swagger_js_url="/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/docs-assets/swagger-ui.css",
            swagger_favicon_url="/docs-assets/favicon-32x32.png",
        )


def _token_check(token: str | None) -> Callable[..., None]:
    """The dependency that checks the bearer token of an ``/api/*`` request (none needed
    when ``token`` is None)."""
    bearer = HTTPBearer(
        auto_error=False, description="Required on /api/* when the server was started with a token."
    )

    def check_token(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer),  # noqa: B008
    ) -> None:
        if token is None:
            return
        if credentials is None:
            raise HTTPException(
                401,
                "This server requires a bearer token: send 'Authorization: Bearer <token>'.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
            raise HTTPException(401, "Wrong bearer token.", headers={"WWW-Authenticate": "Bearer"})

    return check_token


def _api(
    service: Service, executor: ThreadPoolExecutor, token: str | None, *, docs: bool
) -> APIRouter:
    """The ``/api/*`` routes, behind the bearer token (``docs``: whether ``/docs`` is served)."""
    api = APIRouter(prefix="/api", dependencies=[Depends(_token_check(token))], responses=_ERRORS)
    _add_describe_routes(api, service, docs)
    _add_model_routes(api, service, executor)
    return api


#: what ``GET /api/schema`` answers (its description in the OpenAPI document)
_SCHEMA_ROUTE = (
    "Features (kind, domain, default actionability, resolution, description), classes and their\n"
    "names, limits, the retrained models available, where the API's documentation is."
)


def _add_describe_routes(api: APIRouter, service: Service, docs: bool) -> None:
    """What the server offers: the schema, the methods, example rows."""

    @api.get("/schema", response_model=SchemaOut, tags=["data"], description=_SCHEMA_ROUTE)
    async def schema() -> dict[str, Any]:
        return {**service.schema_info(), "api_docs": "/docs" if docs else "/openapi.json"}

    @api.get("/methods", response_model=MethodsOut, tags=["methods"])
    async def methods() -> dict[str, Any]:
        """Loaded methods, their parameters and the constraint kinds each honours."""
        return {"methods": service.methods_info()}

    @api.get("/example", response_model=ExampleOut, tags=["data"])
    async def example(index: int = 0) -> dict[str, Any]:
        """Example ``index`` (0 to ``total`` - 1): a row the model does not assign to the
        favourable class.  Another index is a 422 naming the range."""
        return service.example(index)


def _add_model_routes(api: APIRouter, service: Service, executor: ThreadPoolExecutor) -> None:
    """Predictions and explanations; their work runs in ``executor``, off the event loop."""

    async def in_worker(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    _add_predict_route(api, service, in_worker)
    _add_explain_route(api, service, executor, in_worker)


def _add_predict_route(api: APIRouter, service: Service, in_worker: _InWorker) -> None:
    """``POST /api/predict``: the model's decisions."""

    @api.post("/predict", response_model=PredictOut, tags=["model"])
    async def predict(body: RowsRequest, request: Request) -> dict[str, Any]:
        """Decision and class probabilities for raw rows."""
        _note(request, request={"rows": body.rows})
        out: dict[str, Any] = await in_worker(service.predict, body.rows)
        _note(request, revealed={"predictions": _revealed_predictions(out)})
        return out


def _revealed_predictions(out: dict[str, Any]) -> list[dict[str, Any]]:
    """What a prediction's answer disclosed about the model (for the request log)."""
    return [
        {"row": p["row"], "prediction": p["prediction"], "probabilities": p["probabilities"]}
        for p in out["predictions"]
    ]


def _add_explain_route(
    api: APIRouter, service: Service, executor: ThreadPoolExecutor, in_worker: _InWorker
) -> None:
    """``POST /api/explain``: counterfactuals, within the client's quota."""

    @api.post("/explain", response_model=ExplainOut, tags=["methods"])
    async def explain(body: ExplainRequest, request: Request) -> dict[str, Any]:
        """Counterfactuals for raw rows under the user's constraints.

        Per row: status and its reason, counterfactuals as raw rows and as
        change lists, the probability of the target before and after, and the
        method's certificate.  The work stops when the client disconnects or
        the request's deadline passes.
        """
        _note(request, request=body.model_dump(exclude_none=True))
        # validation is cheap but runs pandas: keep it off the event loop too
        job = await in_worker(partial(service.prepare_explain, **_explain_request(body)))
        reservation = service.quotas.reserve(
            _client(request.scope), len(job.frame) * job.n_counterfactuals
        )
        answered = 0
        try:
            out = await _run_admitted(service, executor, job, request.receive)
            answered = sum(len(r["counterfactuals"]) for r in out["results"])
        finally:
            service.quotas.settle(reservation, answered)
        _note(request, revealed=_revealed(out))
        return out


def _explain_request(body: ExplainRequest) -> dict[str, Any]:
    """The keyword arguments of :meth:`Service.prepare_explain` for a validated body."""
    return {
        "rows": body.rows,
        "method": body.method,
        "n_counterfactuals": body.n_counterfactuals,
        "target": body.target,
        "constraints": None if body.constraints is None else body.constraints.model_dump(),
        "time_limit": body.time_limit,
        "min_probability": body.min_probability,
        "min_vote_share": body.min_vote_share,
        "robustness": body.robustness,
        "measure": body.measure,
        "regions": body.regions,
        "robust": body.robust,
        "reasons": body.reasons,
        "horizon": body.horizon,
    }


def _revealed(out: dict[str, Any]) -> dict[str, Any]:
    """What an explanation's answer disclosed about the model (for the request log)."""
    rows = [
        {
            "row": r["row"],
            "status": r["status"],
            "probability_before": r["probability_before"],
            "counterfactuals": [c["row"] for c in r["counterfactuals"]],
            "probabilities": [c["probability_after"] for c in r["counterfactuals"]],
            **(
                {
                    "regions": [
                        c["region"]["bounds"] if c.get("region") else None
                        for c in r["counterfactuals"]
                    ]
                }
                if any(c.get("region") for c in r["counterfactuals"])
                else {}
            ),
        }
        for r in out["results"]
    ]
    return {"counterfactuals": sum(len(r["counterfactuals"]) for r in rows), "rows": rows}


async def _until_disconnect(receive: Callable[[], Any]) -> None:
    """Return when the client closes the connection (the request body has been read already)."""
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


async def _run_admitted(
    service: Service, executor: ThreadPoolExecutor, job: ExplainJob, receive: Callable[[], Any]
) -> dict[str, Any]:
    """Run a validated explanation in ``executor`` once the service admits it (429 when it is full).

    The job's token is cancelled when the client disconnects; a cancelled job
    gives its place among ``max_pending`` back at once (its method's slot too,
    in :meth:`Service.run_explain`).
    """
    service.acquire()
    lock = threading.Lock()
    admitted = [True]

    def release() -> None:
        with lock:
            if admitted[0]:
                admitted[0] = False
                service.release()

    forget = job.cancel.on_cancel(release)

    def work() -> dict[str, Any]:
        try:
            return service.run_explain(job)
        finally:
            release()

    try:
        future = asyncio.get_running_loop().run_in_executor(executor, work)
    except RuntimeError as exc:  # the executor is shut down: the server is stopping
        forget()
        release()
        raise HTTPException(503, "The server is shutting down.") from exc
    gone: asyncio.Future[Any] = asyncio.ensure_future(_until_disconnect(receive))
    try:
        await asyncio.wait({future, gone}, return_when=asyncio.FIRST_COMPLETED)
        if not future.done():
            job.cancel.cancel()  # nobody is waiting for the answer any more
            future.add_done_callback(
                lambda f: f.exception()
            )  # its outcome is not wanted (nor logged)
            raise HTTPException(
                CLIENT_GONE, "The client closed the connection; its explanation was stopped."
            )
        return future.result()  # type: ignore[no-any-return]
    except asyncio.CancelledError:
        job.cancel.cancel()
        raise
    finally:
        gone.cancel()
        forget()
