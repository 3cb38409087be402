"""The conservation audit, run by the cashier itself every so often, as gauges an alert can watch.

`AuditConservation` answers an operator who asks; this runs the same audit (one consistent
snapshot, services/cashier/application.py) every `POKER_CASHIER_AUDIT_INTERVAL_SECONDS` and
publishes, per pool, whether it balanced and the totals it compared, so "audit not balanced" pages
someone within one interval instead of waiting for somebody to look. An audit that cannot run (the
database is away) counts as failed and leaves the last figures in place; its timestamp says how old
they are.
"""

from __future__ import annotations

import asyncio
import time

from prometheus_client import Counter, Gauge

from service_runtime.structured_logging import get_logger
from service_runtime.tasks import cancel_and_wait
from services.cashier.application import Cashier, audit_balanced

log = get_logger("cashier.audit")

audit_balanced_gauge = Gauge(
    "poker_cashier_audit_balanced",
    "1 when the last conservation audit of the pool balanced (accounts = minted - burned, journal = "
    "debits = credits, no negative account), else 0.",
    ("pool",),
)
audit_accounts_total = Gauge(
    "poker_cashier_pool_accounts_total_chips",
    "Sum of all account balances of the pool at the last audit.",
    ("pool",),
)
audit_minted_net = Gauge(
    "poker_cashier_pool_minted_net_chips",
    "Chips minted minus burned in the pool at the last audit.",
    ("pool",),
)
audit_runs = Counter(
    "poker_cashier_audit_runs_total", "Conservation audits run by the cashier, by result.", ("result",)
)
audit_last_run = Gauge(
    "poker_cashier_audit_last_run_timestamp_seconds", "When the last audit that completed ran (Unix time)."
)


async def audit_once(cashier: Cashier) -> bool:
    """Run the audit and publish it; True when every pool balanced."""
    figures, _ = await cashier.audit()
    balanced = True
    for pool in figures:
        ok = audit_balanced(pool)
        balanced = balanced and ok
        name = str(pool.pool)
        audit_balanced_gauge.labels(name).set(1 if ok else 0)
        audit_accounts_total.labels(name).set(pool.accounts_total)
        audit_minted_net.labels(name).set(pool.minted - pool.burned)
        if not ok:
            log.error("conservation audit not balanced", pool=name)
    audit_runs.labels("balanced" if balanced else "not_balanced").inc()
    audit_last_run.set(time.time())
    return balanced


class AuditWatch:
    """The background task that runs `audit_once` every `interval` seconds."""

    def __init__(self, cashier: Cashier, interval: float) -> None:
        self._cashier = cashier
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="conservation-audit")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await audit_once(self._cashier)
            except Exception as error:
                audit_runs.labels("failed").inc()
                log.warning("conservation audit did not run", error=type(error).__name__)
            await asyncio.sleep(self._interval)
