"""Operating the cluster: every process exports metrics, one hand is one trace, all over mutual TLS.

The cluster runs as processes on loopback (PostgreSQL, Redis, one table shard) with TLS between
every service (certificates made for the run), a Prometheus endpoint per process and spans exported
over OTLP to a collector this test runs. Bots play a few hands. Then every process is scraped (and
read with prometheus-client's parser): the counters moved and agree with what the bots did and with
each other (hands dealt, settled by the cashier, recorded by history, revealed by fairness; actions
accepted); the cashier's audit gauge says balanced. After the cluster stops (the processes flush
their spans), one hand's spans form one trace across the table, fairness, the cashier and history:
its phases, the table's outgoing calls and the servers' spans of those calls; and the cashier's log
line of that hand's settlement carries the same trace id.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from poker_bots.bot import Behaviour
from poker_bots.credentials import MintedCredentials
from poker_bots.run import RunPlan, run_bots
from service_runtime.testing import DEV_KEYS
from service_runtime.testing_pki import TestAuthority, tls_environment
from tests.deploy.monitoring import exposed_names, recording_rules, referenced_metric_names
from tests.deploy.scraped_series import ScrapedSeries, run_promtool, scrape_url
from tests.e2e.cluster import Cluster, running_cluster

pytestmark = [pytest.mark.cluster, pytest.mark.postgres, pytest.mark.redis]

SERVICES = ("lobby", "cashier", "fairness", "history", "table")
HANDS = 6


class TraceCollector(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP trace receiver (the collector's gRPC protocol) that keeps every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, Any]] = []  # (service.name, Span)
        self._lock = threading.Lock()

    def Export(  # noqa: N802 - the OTLP protocol's name
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self._lock:
            for resource_spans in request.resource_spans:
                attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append((attributes.get("service.name", ""), span))
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def collector() -> Iterator[tuple[TraceCollector, int]]:
    # Its own threads: the processes flush their last spans while the test waits for them to stop.
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    receiver = TraceCollector()
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(receiver, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield receiver, port
    server.stop(0)


def _families(port: int) -> list[Any]:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return list(text_string_to_metric_families(body))


def scrape(port: int) -> dict[str, list[Any]]:
    """name -> samples, as Prometheus reads the endpoint (prometheus-client's own parser)."""
    samples: dict[str, list[Any]] = defaultdict(list)
    for family in _families(port):
        for sample in family.samples:
            samples[sample.name].append(sample)
    return samples


def total(samples: dict[str, list[Any]], name: str, **labels: str) -> float:
    return sum(s.value for s in samples.get(name, []) if all(s.labels.get(k) == v for k, v in labels.items()))


def handled(samples: dict[str, list[Any]], method: str, code: str = "OK") -> float:
    return total(samples, "grpc_server_handled_total", grpc_method=method, grpc_code=code)


async def test_metrics_agree_with_the_bots_and_a_hand_is_one_trace_across_the_processes(
    postgres_server_url: str,
    redis_server_url: str,
    redis_prefix: str,
    tmp_path: Path,
    collector: tuple[TraceCollector, int],
) -> None:
    receiver, collector_port = collector
    authority = TestAuthority(tmp_path / "pki")
    service_tls = authority.issue("services")
    client_tls = authority.issue("bots")
    # Each process picks its own metrics port (0) and says which in its `listening` line: a port
    # chosen here first could be taken by a parallel test before the process binds it.
    extra = {
        **tls_environment(service_tls),
        **{f"POKER_{name.upper()}_METRICS_PORT": "0" for name in SERVICES},
        "POKER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector_port}",
        "POKER_CASHIER_AUDIT_INTERVAL_SECONDS": "0.5",
        # A successful call is counted, not logged, unless this is on: the check that a call's log
        # line carries its trace and span ids needs the line of a successful SettleHand.
        "POKER_LOG_CALLS": "1",
    }
    with running_cluster(
        postgres_server_url, redis_server_url, redis_prefix, tmp_path, shards=1, extra_env=extra
    ) as cluster:
        metrics_ports = {
            name: cluster.services["table-a" if name == "table" else name].metrics_port for name in SERVICES
        }
        assert all(metrics_ports.values()), metrics_ports
        plan = RunPlan(
            lobby=cluster.address("lobby"),
            cashier=cluster.address("cashier"),
            rooms=("nlhe-gram-classic",),
            bots=3,
            tables=1,
            hands=HANDS,
            player_prefix="obs",
            behaviour=Behaviour(timeout_rate=0.1, leave_rate=0.0),
            tls=client_tls,
        )
        run = await asyncio.wait_for(run_bots(plan, MintedCredentials(DEV_KEYS)), timeout=240)
        assert not run.stats.unexpected_errors(), run.stats.errors
        assert len(run.stats.hands) >= HANDS
        figures = await asyncio.to_thread(_settled_figures, metrics_ports)
        _check_metrics(figures, run.stats.actions, len(run.stats.hands))
        # Every metric the dashboards and alert rules read is exported by one of the processes.
        exported = exposed_names(
            (family.name, family.type) for port in metrics_ports.values() for family in _families(port)
        )
        # Not theirs: Prometheus's own `up`, the series the rules record, and the gateway's figures
        # (this cluster runs no gateway; tests/gateway/test_gateway_metrics.py scrapes one).
        recorded = {rule["record"] for rule in recording_rules()}
        missing = {
            name: sorted(where)
            for name, where in referenced_metric_names().items()
            if name not in exported | recorded | {"up"} and not name.startswith("poker_gateway_")
        }
        assert not missing, missing
        settled = total(figures["table"], "poker_hands_settled_total")
        await asyncio.to_thread(_check_a_stopped_cashier_pages, cluster, metrics_ports, tmp_path)
        # Stopped inside the block: each process exports what it buffered on SIGTERM.
        await asyncio.to_thread(_stop, cluster)
    _check_one_hand_is_one_trace(receiver, tmp_path, settled)


def _check_a_stopped_cashier_pages(cluster: Cluster, ports: dict[str, int], folder: Path) -> None:
    """The alert rules, evaluated by promtool on this cluster's own scrapes (one every 15 s of
    promtool's time): quiet while every process answers; `PokerServiceDown` for the cashier once it
    has been stopped for 2 minutes. The cluster runs no gateway, so the rule's absent() pages for it
    too (nothing of the gateway is up); that is the rule working, and expected."""
    series = ScrapedSeries()
    targets = {f"{name}-0": f"http://127.0.0.1:{port}/metrics" for name, port in ports.items()}
    for _ in range(4):
        series.record({pod: scrape_url(url) for pod, url in targets.items()})
    cluster.services["cashier"].stop()
    for _ in range(2):
        series.record({pod: scrape_url(url) for pod, url in targets.items()})
    assert series.value("up", pod="cashier-0")[-2:] == [0.0, 0.0]
    series.repeat_last(12)  # Prometheus goes on scraping: three more minutes of the same
    down = {
        "severity": "page",
        "app": "cashier",
    }
    absent_gateway = {"severity": "page", "app": "gateway"}
    failures = run_promtool(
        folder,
        series,
        [
            {"eval_time": "45s", "alertname": "PokerServiceDown", "exp_alerts": []},
            {"eval_time": "45s", "alertname": "PokerInternalError", "exp_alerts": []},
            {"eval_time": "45s", "alertname": "PokerAuditNotBalanced", "exp_alerts": []},
            {"eval_time": "45s", "alertname": "PokerHandsVoided", "exp_alerts": []},
            {
                "eval_time": "3m30s",
                "alertname": "PokerServiceDown",
                "exp_alerts": [
                    {"exp_labels": down, "exp_annotations": _down_annotations("cashier")},
                    {"exp_labels": absent_gateway, "exp_annotations": _down_annotations("gateway")},
                ],
            },
        ],
    )
    assert not failures, failures


def _down_annotations(app: str) -> dict[str, str]:
    return {
        "summary": f"No {app} replica is up",
        "description": f"Prometheus reaches no {app} pod: its calls fail (UNAVAILABLE) and its figures are gone.",
        "runbook": "docs/deploy.md#pokerservicedown",
    }


def _settled_figures(ports: dict[str, int], timeout: float = 60) -> dict[str, dict[str, list[Any]]]:
    """Every process's figures once the table is quiet: every hand dealt is settled, recorded,
    revealed, and no stream is open any more (the bots left)."""
    deadline = time.monotonic() + timeout
    while True:
        figures = {name: scrape(port) for name, port in ports.items()}
        table = figures["table"]
        started = total(table, "poker_hands_started_total")
        done = total(table, "poker_hands_settled_total") + total(table, "poker_hands_voided_total")
        queued = total(table, "poker_table_after_hand_queue_jobs")
        recorded = handled(figures["history"], "RecordHand")
        if started and done == started and not queued and recorded == done:
            return figures
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not quiet: started {started}, done {done}, queued {queued}, recorded {recorded}"
            )
        time.sleep(0.3)


def _check_metrics(figures: dict[str, dict[str, list[Any]]], bot_actions: int, bot_hands: int) -> None:
    table, cashier, fairness, history = (figures[n] for n in ("table", "cashier", "fairness", "history"))
    for name, samples in figures.items():
        assert total(samples, "poker_service_info", service=name) == 1, name
        assert total(samples, "grpc_server_started_total") > 0, f"{name} served no call"
    started = total(table, "poker_hands_started_total", variant="NO_LIMIT")
    settled = total(table, "poker_hands_settled_total", variant="NO_LIMIT")
    # Every hand a bot was dealt was dealt by the table; the table dealt none the bots did not see
    # except, at most, ones it dealt while they were leaving.
    assert started >= bot_hands
    assert settled == started
    assert total(table, "poker_hands_voided_total") == 0
    # Actions: what the bots had accepted is what the table counted and what its server answered OK.
    assert total(table, "poker_actions_total") == bot_actions
    assert handled(table, "Act") == bot_actions
    assert 0 < total(table, "poker_time_to_act_seconds_count") <= bot_actions
    # The hand's calls, counted by the table as a client and by each server, agree with the hands.
    assert handled(cashier, "SettleHand") == settled
    assert total(table, "grpc_client_handled_total", grpc_method="SettleHand", grpc_code="OK") == settled
    assert total(table, "poker_settlement_seconds_count") == settled
    assert handled(history, "RecordHand") == settled
    assert handled(fairness, "SealHand") == started
    # Every settled hand is revealed; beside them, a commitment asked ahead that was never dealt (the
    # bots left) is revealed voided when its table voids it, off the clock's path: now or a moment
    # after the bots' run (a fresh-clone CI run counted 8 reveals for 7 hands).
    never_dealt = handled(fairness, "CommitHand") - handled(fairness, "SealHand")
    assert settled <= handled(fairness, "RevealHand") <= settled + never_dealt
    # The bots have left: no stream is open; the table held its lease throughout.
    assert total(table, "poker_table_streams") == 0
    assert total(table, "poker_table_shard_lease_held") == 1
    assert total(table, "poker_settlement_pending_seconds") == 0
    # Storage latency: PostgreSQL statements of the cashier, Redis commands of the table.
    assert total(cashier, "poker_sql_statement_seconds_count", backend="postgresql") > 0
    assert total(table, "poker_redis_command_seconds_count") > 0
    assert total(cashier, "poker_cashier_audit_balanced", pool="GRAM") == 1
    assert total(cashier, "poker_cashier_audit_runs_total", result="balanced") >= 1


def _stop(cluster: Cluster) -> None:
    for service in reversed(list(cluster.services.values())):
        service.stop()


def _hex(raw: bytes) -> str:
    return raw.hex()


def _check_one_hand_is_one_trace(receiver: TraceCollector, folder: Path, settled: float) -> None:
    spans = list(receiver.spans)
    roots = [
        (service, span)
        for service, span in spans
        if span.name == "hand" and any(a.key == "poker.hand_id" for a in span.attributes)
    ]
    assert len(roots) >= settled, f"{len(roots)} hand spans for {settled} settled hands"
    _, root = roots[0]
    hand_id = next(a.value.string_value for a in root.attributes if a.key == "poker.hand_id")
    trace = [(service, span) for service, span in spans if span.trace_id == root.trace_id]
    by_id = {span.span_id: span for _, span in trace}
    # One tree: every span but the root has its parent in the same trace.
    assert not root.parent_span_id
    for service, span in trace:
        if span is not root:
            assert span.parent_span_id in by_id, f"{service} {span.name}: parent outside the trace"
    names = {(service, span.name) for service, span in trace}
    for phase in ("hand.commit", "hand.deal", "hand.play", "hand.settle", "hand.reveal", "hand.record"):
        assert ("table", phase) in names, phase
    for service, method in (
        ("fairness", "poker.fairness.v1.FairnessService/CommitHand"),
        ("fairness", "poker.fairness.v1.FairnessService/SealHand"),
        ("cashier", "poker.cashier.v1.CashierService/SettleHand"),
        ("fairness", "poker.fairness.v1.FairnessService/RevealHand"),
        ("history", "poker.history.v1.HistoryService/RecordHand"),
    ):
        assert ("table", method) in names, f"the table's client span of {method}"
        assert (service, method) in names, f"{service}'s server span of {method}"
    # The settlement's server span is the child of the table's client span, under the settle phase.
    server = next(s for svc, s in trace if svc == "cashier" and s.name.endswith("/SettleHand"))
    client = by_id[server.parent_span_id]
    assert client.name.endswith("/SettleHand")
    assert by_id[client.parent_span_id].name == "hand.settle"
    # The cashier's summary line of that call carries the trace and the server span's ids.
    trace_id, span_id = _hex(root.trace_id), _hex(server.span_id)
    lines = [
        json.loads(line) for line in (folder / "cashier.log").read_text().splitlines() if line.startswith("{")
    ]
    settle_lines = [line for line in lines if line.get("method", "").endswith("/SettleHand")]
    assert any(
        line.get("trace_id") == trace_id and line.get("span_id") == span_id for line in settle_lines
    ), hand_id
    assert all("trace_id" in line for line in settle_lines)
