"""``counterfact serve``: the HTTP API and the recourse page from the command line.

Imports only the standard library and counterfact at module level; FastAPI
and uvicorn load when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import socket
import sys
from typing import Any

from .. import datasets
from ..data._loading import load_csv
from ..exceptions import ValidationError
from ..models._fit import KINDS
from ..models._loading import load_model_file
from . import create_app, require_server_deps
from ._build import build_service
from ._docs import swagger_ui_assets
from ._request import Limits
from ._requestlog import RequestLog

__all__ = ["add_parser", "app_from_env", "cmd_serve"]

#: environment variable holding the bearer token (when --token is not given)
TOKEN_ENV = "COUNTERFACT_TOKEN"
#: environment variable passing the configuration to worker processes
_CONFIG_ENV = "COUNTERFACT_SERVE_CONFIG"
#: seconds a stopping server (Ctrl+C, SIGTERM) lets running explanations finish before it
#: cancels them: each then stops at its solver's next check, and its client gets no answer
SHUTDOWN_GRACE = 5

_EPILOG = f"""\
With no arguments: German Credit, a logistic regression fitted on 80% of it, every installed
method fitted once at start-up, served on http://127.0.0.1:8000 (the page at /, the API at
/api/*, its OpenAPI document at /openapi.json, and /docs when Swagger UI is installed locally).

Safety: the server binds to 127.0.0.1 unless --host says otherwise; on any other address it
needs --token (or {TOKEN_ENV}) to require 'Authorization: Bearer <token>' on /api/*, or
--allow-public to serve openly on purpose. Open the page as http://HOST:PORT/#token=<token>.
Each client (address) may send --requests-per-minute requests and be answered
--counterfactuals-per-hour counterfactuals (0: no quota); --request-log FILE appends one JSON
line per request: who asked what, and what was revealed. No model or pickle is ever accepted
over HTTP: the model is the one given here. An ONNX --model-file (model.onnx) is data and runs
nothing from the file: the safe way to deploy a model. Loading a joblib/pickle --model-file runs
code from the file, so it requires --allow-unsafe-model-load.
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``serve`` subcommand on the ``counterfact`` parser's subparsers."""
    p = subparsers.add_parser(
        "serve",
        parents=[_output_options()],
        help="serve an HTTP API and an interactive recourse page",
        description="Serve counterfactual explanations over HTTP: a JSON API and a page where a "
        "person states what they can change.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_model_options(p)
    _add_network_options(p)
    _add_quota_options(p)
    _add_answer_options(p)
    _add_limit_options(p)
    p.set_defaults(func=cmd_serve)
    return p  # type: ignore[no-any-return]


def _output_options() -> argparse.ArgumentParser:
    """The command's -v/-q/--debug, accepted after 'serve' too (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the methods' progress while they are fitted",
    )
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="log only warnings and errors",
    )
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the full traceback of an error",
    )
    return common


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """What is served: the data, the model and the methods."""
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--dataset", default="german_credit", help="bundled dataset name (default german_credit)"
    )
    src.add_argument("--data", metavar="CSV", help="a CSV file of your own (needs --target)")
    p.add_argument("--target", help="target column of --data")
    p.add_argument(
        "--model",
        default="lr",
        help="model kind fitted when no --model-file is given (default lr): " + ", ".join(KINDS),
    )
    p.add_argument(
        "--model-file",
        metavar="FILE",
        help="a fitted model: an .onnx file (loads safely), or a joblib/pickle file "
        "(see --allow-unsafe-model-load)",
    )
    p.add_argument(
        "--allow-unsafe-model-load",
        action="store_true",
        help="acknowledge that loading a joblib/pickle --model-file runs code from the file",
    )
    p.add_argument(
        "--methods",
        metavar="NAMES",
        help="comma-separated methods to load, e.g. mace,ufce,nearest "
        "(default: every installed method that supports the model)",
    )


def _add_network_options(p: argparse.ArgumentParser) -> None:
    """Where and for whom it is served: address, processes, token, request log."""
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes (default 1); each fits its own copy of the methods",
    )
    p.add_argument(
        "--token", help=f"require this bearer token on /api/* (default: ${TOKEN_ENV}, else none)"
    )
    p.add_argument(
        "--allow-public",
        action="store_true",
        help="serve on a non-loopback --host without a token (anyone who can reach it may use "
        "the API)",
    )
    p.add_argument(
        "--request-log",
        metavar="FILE",
        help="append one JSON line per API request to FILE: client, request, status, what was "
        "revealed",
    )


def _add_quota_options(p: argparse.ArgumentParser) -> None:
    """How much one client may ask, and how many explanations of a method run at once."""
    p.add_argument(
        "--requests-per-minute",
        type=int,
        default=120,
        metavar="N",
        help="API requests per client in any minute; more get 429 (default 120; 0: no quota)",
    )
    p.add_argument(
        "--counterfactuals-per-hour",
        type=int,
        default=1000,
        metavar="N",
        help="counterfactuals answered per client in any hour; more get 429 (default 1000; "
        "0: no quota)",
    )
    p.add_argument(
        "--method-concurrency",
        type=int,
        default=2,
        metavar="N",
        help="explanations of one method running at once, each on its own copy (default 2)",
    )


def _add_answer_options(p: argparse.ArgumentParser) -> None:
    """How answers read and what they may be asked to hold for: class names, retrained
    models, the seed."""
    p.add_argument(
        "--class-names",
        metavar="NAMES",
        help="readable class names, one per class in the model's order (bad,good) or class=name "
        "pairs (0=bad,1=good); default: the dataset's names, else the classes as written",
    )
    p.add_argument(
        "--robust-to",
        type=int,
        default=0,
        metavar="N",
        help="retrain N copies of the model on bootstrap resamples at start-up, so that requests "
        "may ask for answers that hold for all of them (default 0: none)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the split, the model and the methods (default 0)",
    )


def _add_limit_options(p: argparse.ArgumentParser) -> None:
    """The limits of one request: rows, counterfactuals, time, pending work, body size."""
    p.add_argument("--max-rows", type=int, default=20, help="rows per request (default 20)")
    p.add_argument(
        "--max-counterfactuals", type=int, default=5, help="n_counterfactuals per row (default 5)"
    )
    p.add_argument(
        "--max-time-limit",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="largest time_limit a request may ask for, seconds per row (default 30)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="time_limit of requests that give none (default 5)",
    )
    p.add_argument(
        "--max-pending",
        type=int,
        default=32,
        help="explanations running or queued at once; more get 429 (default 32)",
    )
    p.add_argument(
        "--max-body-bytes", type=int, default=64 * 1024, help="request body size (default 65536)"
    )


def _config(args: argparse.Namespace) -> dict[str, Any]:
    if args.data and not args.target:
        raise ValidationError("--data needs --target naming the target column of the file.")
    if not 0 <= args.port <= 65535:
        raise ValidationError(f"--port must be in 0..65535. Got {args.port}.")
    if args.workers < 1:
        raise ValidationError(f"--workers must be >= 1. Got {args.workers}.")
    methods = None
    if args.methods is not None:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        if not methods:
            raise ValidationError(
                "--methods is empty: name at least one method, e.g. --methods mace,nearest."
            )
    if args.robust_to < 0:
        raise ValidationError(
            "--robust-to must be >= 0 (retrained copies of the model; 0: none). Got "
            f"{args.robust_to}."
        )
    if args.class_names is not None and not args.class_names.strip():
        raise ValidationError(
            "--class-names is empty: name every class, e.g. --class-names bad,good."
        )
    for flag in ("requests_per_minute", "counterfactuals_per_hour"):
        if getattr(args, flag) < 0:
            raise ValidationError(
                f"--{flag.replace('_', '-')} must be >= 0 (0: no quota). Got {getattr(args, flag)}."
            )
    limits = {
        "max_rows": args.max_rows,
        "max_counterfactuals": args.max_counterfactuals,
        "max_time_limit": args.max_time_limit,
        "default_time_limit": args.time_limit,
        "max_pending": args.max_pending,
        "max_body_bytes": args.max_body_bytes,
        "method_concurrency": args.method_concurrency,
        "requests_per_minute": args.requests_per_minute or None,
        "counterfactuals_per_hour": args.counterfactuals_per_hour or None,
    }
    try:
        Limits(**limits)  # invalid limits fail before anything is loaded
    except ValidationError as exc:  # "Limits.max_rows must ..." -> "--max-rows: max_rows must ..."
        text = str(exc)
        raise ValidationError(f"--{_flag(text)}: {text.removeprefix('Limits.')}") from None
    return {
        "verbose": bool(getattr(args, "verbose", False)),
        "dataset": args.dataset,
        "data": args.data,
        "target": args.target,
        "model": args.model,
        "model_file": args.model_file,
        "allow_unsafe_model_load": bool(args.allow_unsafe_model_load),
        "methods": methods,
        "seed": args.seed,
        "limits": limits,
        "request_log": args.request_log,
        "class_names": args.class_names,
        "robust_to": args.robust_to,
    }


def _flag(message: str) -> str:
    """``Limits.max_rows must ...`` -> ``max-rows`` (the option behind a Limits field)."""
    name = message.split(" ", 1)[0].removeprefix("Limits.")
    return {"default_time_limit": "time-limit"}.get(name, name.replace("_", "-"))


def _say(message: str) -> None:
    print(f"counterfact serve: {message}", file=sys.stderr, flush=True)


def _load(config: dict[str, Any]) -> tuple[Any, Any]:
    """The dataset and the model (a fitted object, or a kind to fit)."""
    data = (
        load_csv(config["data"], target=config["target"])
        if config["data"]
        else datasets.load(config["dataset"])
    )
    if config["model_file"]:
        model: Any = load_model_file(
            config["model_file"], allow_unsafe=config["allow_unsafe_model_load"], data=data
        )
    elif config["model"] not in KINDS:
        raise ValidationError(
            f"--model {config['model']!r} is not a model kind; choose one of {list(KINDS)}."
        )
    else:
        model = config["model"]
    return data, model


def _service(config: dict[str, Any], data: Any = None, model: Any = None) -> Any:
    # the methods' own progress bars while fitting only with -v
    logging.getLogger("counterfact.serve").setLevel(
        logging.DEBUG if config.get("verbose") else logging.INFO
    )
    limits = Limits(**config["limits"])
    if data is None:
        data, model = _load(config)
    return build_service(
        data,
        model=model,
        methods=config["methods"],
        random_state=config["seed"],
        limits=limits,
        log=_say,
        class_names=config.get("class_names"),
        robust_to=config.get("robust_to", 0),
    )


def app_from_env() -> Any:
    """Application factory for worker processes (``--workers`` > 1)."""
    config = json.loads(os.environ[_CONFIG_ENV])
    request_log = RequestLog(config["request_log"]) if config.get("request_log") else None
    return create_app(
        _service(config), token=os.environ.get(TOKEN_ENV) or None, request_log=request_log
    )


def _check_port(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise ValidationError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port or "
                "--host."
            ) from None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token from --token, else the environment; a blank one is an error, never
    "no token"."""
    if args.token is not None:
        if not args.token.strip():
            raise ValidationError(
                "--token is empty (an unset shell variable?); pass a non-empty token, or leave "
                "--token out "
                f"(and {TOKEN_ENV} unset) to serve without one."
            )
        return str(args.token)
    env = os.environ.get(TOKEN_ENV)
    if env is not None and not env.strip():
        raise ValidationError(
            f"{TOKEN_ENV} is set but blank; set it to a non-empty token, or unset it to serve "
            "without one."
        )
    return env or None


def _check_public(host: str, token: str | None, allow_public: bool) -> None:
    """Refuse a non-loopback address without a token unless --allow-public says it is meant."""
    if token is None and not allow_public and not _is_loopback(host):
        raise ValidationError(
            f"refusing to serve on {host} without a token: anyone who can reach it could use the "
            "API. Pass "
            f"--token T (or set {TOKEN_ENV}) to require 'Authorization: Bearer T', or "
            "--allow-public to serve it "
            "openly on purpose."
        )


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the server until interrupted."""
    require_server_deps()
    config = _config(args)
    token = _token(args)
    _check_public(args.host, token, bool(args.allow_public))  # before anything is loaded or fitted
    _check_port(args.host, args.port)
    request_log = (
        RequestLog(args.request_log) if args.request_log else None
    )  # an unwritable file fails now, too
    if not _is_loopback(args.host):
        _say(
            f"serving on {args.host}"
            + (" with a bearer token" if token else " WITHOUT a token (--allow-public)")
            + ("" if request_log else "; no --request-log: requests are not recorded")
        )
    import uvicorn

    data, model = _load(config)  # file errors surface before anything is fitted
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown_host}:{args.port}/" + ("#token=<your token>" if token else "")
    log_level = "warning" if getattr(args, "quiet", False) else "info"
    if args.workers == 1:
        app = create_app(_service(config, data, model), token=token, request_log=request_log)
        _say(
            f"serving on {url} (API documentation at "
            f"{'/docs' if swagger_ui_assets() else '/openapi.json'}); "
            "press Ctrl+C to stop"
        )
        uvicorn.run(
            app,
            host=args.host,
            port=args.port,
            log_level=log_level,
            timeout_graceful_shutdown=SHUTDOWN_GRACE,
        )
        return 0
    if request_log is not None:
        request_log.close()  # each worker process opens it for appending
    os.environ[_CONFIG_ENV] = json.dumps(config)
    if token:
        os.environ[TOKEN_ENV] = token
    _say(f"starting {args.workers} worker processes; each fits its methods, then serves on {url}")
    uvicorn.run(
        "counterfact.serve._cli:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=log_level,
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )
    return 0
