"""structlog set-up: JSON lines off a terminal, pretty lines on one, context bound per RPC.

Every line carries the service name; the RPC interceptor binds method, request id and caller as
context variables, so anything logged while serving a call says which call it was; and every line
logged inside a span (a call, a hand's phase) carries its `trace_id` and `span_id`, so a line leads
to the trace and the lines of one trace can be found in every process.

In JSON mode every line a service writes is one JSON record: the records of library loggers (grpc,
asyncio, uvicorn, OpenTelemetry, SQLAlchemy, Alembic, redis), warnings and exceptions nothing caught
go through the same renderer, and gRPC core, which writes its own plain lines, is kept to errors.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import MutableMapping
from types import TracebackType
from typing import Any

import structlog

from service_runtime.tracing import add_trace_ids

# No value in a log line is longer than this; a line stays far below any reader's line limit.
MAX_LOGGED_VALUE = 512


def bounded_text(value: str, limit: int = MAX_LOGGED_VALUE) -> str:
    """`value` cut to `limit` characters with control characters escaped: safe to log whatever it is."""
    cut = value[:limit]
    if not cut.isprintable():
        cut = cut.encode("unicode_escape").decode("ascii")[:limit]
    return cut if len(value) <= limit else f"{cut}...[{len(value) - limit} more]"


def _bound_values(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Every string value of a log event bounded, whoever logged it (tracebacks excepted)."""
    for key, value in event.items():
        if isinstance(value, str) and key != "exception" and len(value) > MAX_LOGGED_VALUE:
            event[key] = bounded_text(value)
        elif not isinstance(value, str | int | float | bool | type(None)) and key != "exc_info":
            text = repr(value)
            if len(text) > MAX_LOGGED_VALUE:
                event[key] = bounded_text(text)
    return event


class _CallLines:
    """How the interceptor logs calls, set by `configure_logging`: `enabled`, a successful unary call
    gets its `rpc` line at info too (`POKER_LOG_CALLS`); `debug`, debug lines are written (else the
    interceptor skips the line of a successful call altogether, without building it). Until logging
    is configured (a unit test), structlog writes every level, so debug lines are built."""

    enabled = False
    debug = True


CALL_LINES = _CallLines()


def quiet_grpc_core() -> None:
    """Keep gRPC core to its errors, unless the operator set GRPC_VERBOSITY (DEBUG, INFO, ERROR, NONE).

    gRPC core, the C library under grpcio, writes to stderr itself, in its own plain format and at
    info by default: a `Handshake failed` line for every plaintext attempt at a TLS port, a `Got
    goaway` line when a peer ends a connection with an error code. Nothing routes those lines through
    Python logging; core reads GRPC_VERBOSITY once, as grpc is first imported (grpcio 1.85: setting it
    any later changes nothing), so an entry point calls this before anything imports grpc."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def configure_logging(
    service: str, *, log_format: str = "auto", level: str = "info", log_calls: bool = False
) -> None:
    """Configure structlog (and the stdlib root logger it feeds) once per process. `log_calls`: an
    info line for every successful call too (otherwise those are debug lines: counted, not written)."""
    CALL_LINES.enabled = log_calls
    CALL_LINES.debug = level.lower() == "debug"
    renderer: Any
    if log_format == "console" or (log_format == "auto" and sys.stderr.isatty()):
        # Plain tracebacks: a rich traceback would print local variables, which may hold seeds or cards.
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
    else:
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_trace_ids,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            _bound_values,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(service=service)
    _route_stdlib_logging(service, renderer)


_STDLIB_HANDLER = "poker-structlog"


def _route_stdlib_logging(service: str, renderer: Any) -> None:
    """Records of stdlib loggers (gRPC's own, asyncio's, ...) rendered like structlog's: one JSON line
    each in JSON mode, the traceback inside it, never a multi-line plain-text block."""

    def add_service(_logger: Any, _name: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        event.setdefault("service", service)
        return event

    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.contextvars.merge_contextvars,
            add_service,
            structlog.stdlib.add_logger_name,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _bound_values,
            renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_STDLIB_HANDLER)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _STDLIB_HANDLER]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    # warnings.warn writes two plain lines to stderr by default; as records of `py.warnings`, one JSON line.
    logging.captureWarnings(True)


def log_uncaught_exceptions() -> None:
    """Exceptions nothing caught, logged as one error record each instead of a plain traceback: one
    that ends the program, one that ends a thread, one raised where Python can only ignore it (a
    destructor, a callback at exit). For a service process (the hooks are the process's own)."""
    log = get_logger("process")

    def uncaught(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        log.critical("uncaught exception", exc_info=(kind, error, trace))

    def in_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        error = args.exc_value or args.exc_type()
        log.error(
            "exception in thread",
            thread=args.thread.name if args.thread else None,
            exc_info=(args.exc_type, error, args.exc_traceback),
        )

    def ignored(args: Any) -> None:  # sys.UnraisableHookArgs
        error = args.exc_value or args.exc_type()
        log.error(
            "exception ignored",
            where=args.err_msg or "Exception ignored in",
            object=repr(args.object),
            exc_info=(args.exc_type, error, args.exc_traceback),
        )

    sys.excepthook = uncaught
    threading.excepthook = in_thread
    sys.unraisablehook = ignored


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
