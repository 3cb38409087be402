"""structlog set-up: JSON lines off a terminal, pretty lines on one, context bound per RPC.

Every line carries the service name; the RPC interceptor binds method, request id and caller as
context variables, so anything logged while serving a call says which call it was.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog


def configure_logging(service: str, *, log_format: str = "auto", level: str = "info") -> None:
    """Configure structlog (and the stdlib root logger it feeds) once per process."""
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
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(service=service)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format=f"{service} %(levelname)s %(name)s %(message)s"
    )


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
