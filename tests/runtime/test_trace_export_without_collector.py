"""Tracing on and no collector: a counter and one warning a minute, and a stop within a second or so
(issue 40 item 7).

The OTLP endpoint is a loopback port nobody listens on (the connection is refused) or one that
accepts connections and never answers (a collector behind a firewall that drops packets, the
slowest case). Spans are exported with `force_flush`, so no test waits for the batch timer; the
once-a-minute warning reads an injected clock.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import structlog

from service_runtime import tracing
from service_runtime.metrics import metric_names, sample_value
from service_runtime.structured_logging import configure_logging
from tests.ports import free_port

FAILURES = "poker_trace_export_failures_total"


@dataclass
class ManualClock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


Records = Callable[[], list[dict[str, object]]]


@pytest.fixture
def json_logs(capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[[], Records]]:
    """Call it in the test (where capsys captures): logs JSON, and gives what reads the records this
    process logged since the last read (structlog's and the stdlib loggers')."""

    def start() -> Records:
        configure_logging("probe", log_format="json")
        capsys.readouterr()
        return lambda: [json.loads(line) for line in capsys.readouterr().err.splitlines()]

    yield start
    tracing.shutdown_tracing()
    structlog.reset_defaults()
    root = logging.getLogger()
    for handler in [h for h in root.handlers if h.get_name() == "poker-structlog"]:
        root.removeHandler(handler)
    logging.captureWarnings(False)


def _spans(count: int) -> None:
    for _ in range(count):
        tracing.start_span("hand", root=True).end()


def test_the_failure_counter_is_exported_at_zero_before_any_failure() -> None:
    assert FAILURES in set(metric_names())


def test_without_a_collector_each_failed_export_is_counted_and_warned_about_once_a_minute(
    json_logs: Callable[[], Records],
) -> None:
    logged = json_logs()
    clock = ManualClock()
    nowhere = f"http://127.0.0.1:{free_port()}"
    provider = tracing.configure_tracing("probe", otlp_endpoint=nowhere, clock=clock)
    before = sample_value(FAILURES)
    for _ in range(3):
        _spans(2)
        assert provider.force_flush()
    assert sample_value(FAILURES) == before + 3
    clock.now += 59
    _spans(1)
    provider.force_flush()
    assert sample_value(FAILURES) == before + 4
    # One line for the first failure; the OpenTelemetry exporter's own lines (a warning per retry,
    # an error per batch) are not written.
    (first,) = logged()
    assert first["level"] == "warning"
    assert first["event"] == "trace export failing"
    assert first["failures"] == 1
    assert first["endpoint"] == nowhere
    assert "UNAVAILABLE" in str(first["error"])
    clock.now += 2  # a minute and a second after the first line
    _spans(1)
    provider.force_flush()
    (second,) = logged()
    assert second["event"] == "trace export failing"
    assert second["failures"] == 4  # the failures since the first line, this one included
    assert sample_value(FAILURES) == before + 5


@pytest.mark.parametrize("collector", ["refusing", "silent"])
def test_shutdown_with_the_collector_away_takes_about_a_second_at_most(
    collector: str, json_logs: Callable[[], Records]
) -> None:
    logged = json_logs()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        if collector == "silent":
            listener.listen(64)  # connections complete in the kernel; nobody ever answers them
        else:
            listener.close()
        tracing.configure_tracing("probe", otlp_endpoint=f"http://127.0.0.1:{port}")
        before = sample_value(FAILURES)
        _spans(1500)  # three batches waiting, the first already on its way
        started = time.monotonic()
        tracing.shutdown_tracing()
        took = time.monotonic() - started
    assert took < 2.0, f"shutdown_tracing took {took:.1f} s"
    assert sample_value(FAILURES) >= before + 1
    (warning,) = logged()
    assert warning["event"] == "trace export failing"
    # Why this collector failed (not an earlier one's text).
    assert f"127.0.0.1:{port}" in str(warning["error"])
