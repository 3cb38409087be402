"""The cashier's money figures (issue 40) against the ledger's own sums.

A cashier assembled as its process assembles it (`assemble`), served by a real gRPC server on port 0,
on PostgreSQL and on SQLite, with its `/metrics` endpoint scraped over HTTP as Prometheus would:

- the money-flow counters move once per ledger operation applied, and by exactly what the ledger's
  journal holds (purchases, withdrawals, settled hands, rake, seat losses, house funding, house-game
  transfers), never on an idempotent retry, a conflict or a refusal;
- the house bank's free balance, its reservations and the jackpot are the ledger's own at every
  scrape: right after a funding, while a house round holds its reservation, after it settles;
- a caller cancelled while its purchase waits inside the transaction is not a purchase lost to the
  figures: the transaction commits on its own, and is counted there.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import sqlalchemy as sa
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.database import create_engine
from service_runtime.metrics import start_metrics_endpoint
from service_runtime.testing import reason_of, running_server
from services.cashier import money_metrics
from services.cashier.application import Cashier
from services.cashier.assembly import assemble, migrate
from services.cashier.payments import PaymentSource
from services.cashier.settings import CashierSettings
from services.cashier.tables import hand_settlements, transfers

from .conftest import FakeClock, FreshToken

GRAM, MPX = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
POOLS = {"GRAM": GRAM, "MPX": MPX}
TABLE = FreshToken("table", Role.SERVICE)
PAYMENTS = FreshToken("payments", Role.SERVICE)
HISTORY = FreshToken("history", Role.SERVICE)
ADMIN = FreshToken("operator", *STAFF_ROLES)
FINANCE_A = FreshToken("finance-a", Role.FINANCE)
FINANCE_B = FreshToken("finance-b", Role.FINANCE)
HOUSE_GAME = cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT

FLOW_COUNTERS = (
    "poker_cashier_purchases_total",
    "poker_cashier_purchased_chips_total",
    "poker_cashier_withdrawals_total",
    "poker_cashier_withdrawn_chips_total",
    "poker_cashier_hands_settled_total",
    "poker_cashier_rake_chips_total",
    "poker_cashier_hand_losses_chips_total",
)
KINDED_COUNTERS = {
    "poker_cashier_house_funding_chips_total": ("in", "out"),
    "poker_cashier_house_game_chips_total": ("from_players", "to_players"),
}
REFUSALS = "poker_cashier_withdrawal_refusals_total"
REFUSAL_REASONS = ("WITHDRAWAL_HELD_FOR_REVIEW", "FUNDS_LOCKED", "INSUFFICIENT_FUNDS", "OTHER")

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> Samples:
    """The endpoint's samples, read over HTTP in another thread than the event loop's, as Prometheus
    reads them."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        body = answer.read().decode()
    found: Samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    first, last = value(before, name, **labels), value(after, name, **labels)
    assert first is not None, (name, labels)
    assert last is not None, (name, labels)
    return last - first


@dataclass
class Served:
    """A cashier as its process assembles it, behind a gRPC server, with its metrics endpoint."""

    stub: cashier_pb2_grpc.CashierServiceAsyncStub
    url: str
    metrics_port: int
    scrapes: int = 0

    async def scrape(self) -> Samples:
        self.scrapes += 1
        return await asyncio.to_thread(scrape, self.metrics_port)

    async def refused(self, call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.aio.AioRpcError) as error:
            await call
        return error.value.code(), reason_of(error.value)


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres), "sqlite"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    url = request.getfixturevalue("postgres_url" if request.param == "postgres" else "sqlite_url")
    settings = CashierSettings(
        port=0, database_url=url, audit_interval_seconds=0, stars_purchases_enabled=True
    )
    assembly = await assemble(settings)
    endpoint = start_metrics_endpoint("127.0.0.1", 0, "cashier")
    try:
        async with running_server(assembly.services, assembly.access) as (_, channel):
            stub = cashier_pb2_grpc.CashierServiceStub(channel)
            yield Served(stub, url, endpoint.port)
    finally:
        endpoint.stop()
        await assembly.close()


# The ledger's own sums --------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerSums:
    """What the journal of one pool holds, summed by the database, never by the code under test."""

    purchases: int
    purchased: int
    withdrawals: int
    withdrawn: int
    hands_settled: int
    rake: int
    hand_losses: int
    funded_in: int
    funded_out: int
    from_players: int
    to_players: int


async def ledger_sums(url: str, pool: str) -> LedgerSums:
    engine = create_engine(url)
    applied = sa.and_(transfers.c.pool == pool, transfers.c.failure_reason.is_(None))
    amount = sa.func.coalesce(sa.func.sum(transfers.c.amount), 0)
    count = sa.func.count()
    house = sa.or_(
        transfers.c.credit_account_id.in_([f"house:bank:{pool}", f"house:jackpot:{pool}"]),
        transfers.c.debit_account_id.in_([f"house:bank:{pool}", f"house:jackpot:{pool}"]),
    )

    def where(*conditions: Any) -> Any:
        return sa.select(count, amount).where(applied, *conditions)

    queries = {
        "purchase": where(transfers.c.kind == "purchase"),
        "withdrawal": where(transfers.c.kind == "withdrawal"),
        "rake": where(transfers.c.transfer_id.like("hand:%"), transfers.c.kind == "rake"),
        "losses": where(transfers.c.transfer_id.like("hand:%"), transfers.c.debit_account_id.like("seat:%")),
        "in": where(transfers.c.kind == "house_funding", transfers.c.debit_account_id.like("mint:%")),
        "out": where(transfers.c.kind == "house_funding", transfers.c.credit_account_id.like("mint:%")),
        "from_players": where(house, transfers.c.debit_account_id.like("wallet:%")),
        "to_players": where(house, transfers.c.credit_account_id.like("wallet:%")),
    }
    try:
        async with engine.connect() as conn:
            sums = {name: (await conn.execute(query)).one() for name, query in queries.items()}
            hands = (
                await conn.execute(
                    sa.select(sa.func.count()).where(
                        hand_settlements.c.pool == pool, hand_settlements.c.failure_reason.is_(None)
                    )
                )
            ).scalar_one()
    finally:
        await engine.dispose()
    return LedgerSums(
        purchases=sums["purchase"][0],
        purchased=sums["purchase"][1],
        withdrawals=sums["withdrawal"][0],
        withdrawn=sums["withdrawal"][1],
        hands_settled=hands,
        rake=sums["rake"][1],
        hand_losses=sums["losses"][1],
        funded_in=sums["in"][1],
        funded_out=sums["out"][1],
        from_players=sums["from_players"][1],
        to_players=sums["to_players"][1],
    )


# Requests ---------------------------------------------------------------------------------------


def purchase(reference: str, player: str, source: int, amount_minor: int) -> cashier_pb2.PurchaseRequest:
    return cashier_pb2.PurchaseRequest(**payment(reference, player, source, amount_minor))


def withdrawal(reference: str, player: str, source: int, amount_minor: int) -> cashier_pb2.WithdrawRequest:
    return cashier_pb2.WithdrawRequest(**payment(reference, player, source, amount_minor))


def payment(reference: str, player: str, source: int, amount_minor: int) -> dict[str, Any]:
    """The fields a purchase and a withdrawal share (source 1 GRAM, 2 MPX, 3 Telegram Stars)."""
    return {
        "payment_reference": reference,
        "player_id": player,
        "source": source,
        "amount_minor": amount_minor,
    }


def funding(request_id: str, pool: int, account: int, amount: int) -> cashier_pb2.RequestHouseFundingRequest:
    return cashier_pb2.RequestHouseFundingRequest(
        request_id=request_id,
        pool=pool,  # type: ignore[arg-type]
        account=account,  # type: ignore[arg-type]
        amount=amount,
        reason="figures test",
    )


def approval(request_id: str) -> cashier_pb2.DecideHouseFundingRequest:
    return cashier_pb2.DecideHouseFundingRequest(
        decision_id=f"ok:{request_id}", request_id=request_id, approve=True, reason="approved"
    )


async def fund(stub: Any, request: cashier_pb2.RequestHouseFundingRequest) -> None:
    """A house funding as finance makes it (one asks, another approves), retried whole when called again."""
    await stub.RequestHouseFunding(request, metadata=FINANCE_A)
    await stub.DecideHouseFunding(approval(request.request_id), metadata=FINANCE_B)


def seat(session: str, player: str, table: str, index: int, pool: int, chips: int) -> Any:
    return cashier_pb2.OpenSeatSessionRequest(
        session_id=session,
        player_id=player,
        table_id=table,
        seat_index=index,
        pool=pool,  # type: ignore[arg-type]
        buy_in_amount=chips,
        min_buy_in=1,
        max_buy_in=10_000,
    )


def hand(hand_id: str, table: str, pool: int, rake: int, **nets: int) -> cashier_pb2.SettleHandRequest:
    return cashier_pb2.SettleHandRequest(
        hand_id=hand_id,
        table_id=table,
        pool=pool,  # type: ignore[arg-type]
        rake=rake,
        seat_results=[cashier_pb2.SeatResult(session_id=s, net_amount=n) for s, n in nets.items()],
    )


def house_batch(table: str, *moves: tuple[str, str, str, int]) -> cashier_pb2.CreateTransfersRequest:
    """A house-game round's linked batch, as a house table sends it (GRAM pool)."""
    return cashier_pb2.CreateTransfersRequest(
        linked=True,
        transfers=[
            cashier_pb2.Transfer(
                transfer_id=transfer_id,
                debit_account_id=debit,
                credit_account_id=credit,
                pool=GRAM,
                amount=amount,
                kind=HOUSE_GAME,
                reference=transfer_id,
                table_id=table,
            )
            for transfer_id, debit, credit, amount in moves
        ],
    )


BANK, COVER, JACKPOT = "house:bank:GRAM", "house:cover:GRAM", "house:jackpot:GRAM"
CAROL = "wallet:GRAM:carol"


async def house_figures(served: Served) -> dict[str, tuple[float | None, float | None, float | None]]:
    samples = await served.scrape()
    return {
        pool: (
            value(samples, "poker_cashier_house_bank_free_chips", pool=pool),
            value(samples, "poker_cashier_house_bank_reserved_chips", pool=pool),
            value(samples, "poker_cashier_house_jackpot_chips", pool=pool),
        )
        for pool in POOLS
    }


async def house_balances(served: Served) -> dict[str, tuple[float | None, float | None, float | None]]:
    """The same three figures as GetHouseBalances answers them."""
    answers: dict[str, tuple[float | None, float | None, float | None]] = {}
    for name, pool in POOLS.items():
        reply = await served.stub.GetHouseBalances(
            cashier_pb2.GetHouseBalancesRequest(pool=pool),
            metadata=ADMIN,
        )
        answers[name] = (
            float(reply.bank_balance),
            float(reply.reserved_balance),
            float(reply.jackpot_balance),
        )
    return answers


# The tests --------------------------------------------------------------------------------------


def test_every_money_figure_is_a_series_at_zero_for_both_pools_before_any_operation() -> None:
    """In a fresh interpreter (other tests of this process may have moved them): a counter born at 1
    has no increase Prometheus can see."""
    program = (
        "import json\n"
        "from prometheus_client import REGISTRY\n"
        "import services.cashier.money_metrics\n"
        "print(json.dumps([[s.name, s.labels, s.value] for f in REGISTRY.collect() for s in f.samples"
        " if s.name.startswith('poker_cashier_')]))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", program], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    samples = {(name, tuple(sorted(labels.items()))): number for name, labels, number in json.loads(output)}
    for pool in POOLS:
        for name in FLOW_COUNTERS:
            assert value(samples, name, pool=pool) == 0, (name, pool)
        for name, kinds in KINDED_COUNTERS.items():
            for kind in kinds:
                assert value(samples, name, pool=pool, kind=kind) == 0, (name, pool, kind)
        for reason in REFUSAL_REASONS:
            assert value(samples, REFUSALS, pool=pool, reason=reason) == 0, (pool, reason)
    for result in ("ok", "failed"):
        assert value(samples, "poker_cashier_house_balance_reads_total", result=result) == 0
    # No cashier in that process: no house figure rather than an invented 0.
    assert not [key for key in samples if key[0] == "poker_cashier_house_bank_free_chips"]


async def test_the_money_flow_counters_match_the_ledgers_own_sums(served: Served) -> None:
    stub = served.stub
    before = await served.scrape()
    truth_before = {pool: await ledger_sums(served.url, pool) for pool in POOLS}
    audit_before = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)

    # Purchases: one retried with its reference, one refused as a conflict, eight racing with one
    # reference, and Telegram Stars into the GRAM pool.
    await stub.Purchase(purchase("buy-alice", "alice", 1, 2_000 * 10**6), metadata=PAYMENTS)
    again = await stub.Purchase(purchase("buy-alice", "alice", 1, 2_000 * 10**6), metadata=PAYMENTS)
    assert again.existing
    assert await served.refused(
        stub.Purchase(purchase("buy-alice", "alice", 1, 3_000 * 10**6), metadata=PAYMENTS)
    ) == (grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT")
    await stub.Purchase(purchase("buy-bob", "bob", 1, 1_000 * 10**6), metadata=PAYMENTS)
    await stub.Purchase(purchase("buy-bob-mpx", "bob", 2, 500 * 10**8), metadata=PAYMENTS)
    await stub.Purchase(purchase("buy-dave-mpx", "dave", 2, 300 * 10**8), metadata=PAYMENTS)
    await stub.Purchase(purchase("buy-carol", "carol", 3, 60), metadata=PAYMENTS)  # 600 chips
    raced = await asyncio.gather(
        *(stub.Purchase(purchase("buy-race", "erin", 1, 100 * 10**6), metadata=PAYMENTS) for _ in range(8))
    )
    assert sorted(r.existing for r in raced) == [False] + [True] * 7

    # The operator funds the house: retried, taken out again, and a refused take-out (recorded, so its
    # retry is refused the same way).
    for request in (
        funding("fund-bank", GRAM, cashier_pb2.HOUSE_ACCOUNT_BANK, 100_000),
        funding("fund-bank", GRAM, cashier_pb2.HOUSE_ACCOUNT_BANK, 100_000),
        funding("fund-jackpot", GRAM, cashier_pb2.HOUSE_ACCOUNT_JACKPOT, 5_000),
        funding("fund-mpx", MPX, cashier_pb2.HOUSE_ACCOUNT_BANK, 50_000),
        funding("defund-bank", GRAM, cashier_pb2.HOUSE_ACCOUNT_BANK, -1_000),
    ):
        await fund(stub, request)
    await stub.RequestHouseFunding(
        funding("defund-mpx", MPX, cashier_pb2.HOUSE_ACCOUNT_BANK, -(10**9)), metadata=FINANCE_A
    )
    for _ in range(2):
        assert await served.refused(stub.DecideHouseFunding(approval("defund-mpx"), metadata=FINANCE_B)) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "INSUFFICIENT_FUNDS",
        )

    # A cash table in each pool: hands retried, and one refused for good (retried too).
    await stub.OpenSeatSession(seat("t1/alice", "alice", "t1", 0, GRAM, 400), metadata=TABLE)
    await stub.OpenSeatSession(seat("t1/bob", "bob", "t1", 1, GRAM, 300), metadata=TABLE)
    for settle in (
        hand("t1:1", "t1", GRAM, 5, **{"t1/alice": -100, "t1/bob": 95}),
        hand("t1:1", "t1", GRAM, 5, **{"t1/alice": -100, "t1/bob": 95}),
        hand("t1:2", "t1", GRAM, 2, **{"t1/alice": 50, "t1/bob": -52}),
        hand("t1:3", "t1", GRAM, 0, **{"t1/alice": 0, "t1/bob": 0}),
    ):
        await stub.SettleHand(settle, metadata=TABLE)
    for _ in range(2):
        assert await served.refused(
            stub.SettleHand(
                hand("t1:4", "t1", GRAM, 0, **{"t1/alice": -9_000, "t1/bob": 9_000}), metadata=TABLE
            )
        ) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    for session in ("t1/alice", "t1/bob"):
        await stub.CashOutSeatSession(
            cashier_pb2.CashOutSeatSessionRequest(session_id=session), metadata=TABLE
        )
    await stub.OpenSeatSession(seat("t2/bob", "bob", "t2", 0, MPX, 100), metadata=TABLE)
    await stub.OpenSeatSession(seat("t2/dave", "dave", "t2", 1, MPX, 100), metadata=TABLE)
    await stub.SettleHand(hand("t2:1", "t2", MPX, 3, **{"t2/bob": -40, "t2/dave": 37}), metadata=TABLE)

    # A house round of carol's (GRAM): stake and reservation, retried; a stake her wallet cannot pay
    # (refused, linked: nothing of it applied); the settlement with a win and a jackpot payout.
    opening = house_batch("h1", ("hgr:r1:in:1", CAROL, BANK, 100), ("hgr:r1:cover", BANK, COVER, 2_100))
    for _ in range(2):
        answer = await stub.CreateTransfers(opening, metadata=TABLE)
        assert {r.status for r in answer.results} <= {
            cashier_pb2.TRANSFER_STATUS_CREATED,
            cashier_pb2.TRANSFER_STATUS_EXISTS,
        }
    refused = await stub.CreateTransfers(
        house_batch("h1", ("hgr:r2:in:1", CAROL, BANK, 10**6), ("hgr:r2:cover", BANK, COVER, 10)),
        metadata=TABLE,
    )
    assert {r.status for r in refused.results} == {cashier_pb2.TRANSFER_STATUS_FAILED}
    settlement = house_batch(
        "h1",
        ("hgr:r1:free", COVER, BANK, 2_100),
        ("hgr:r1:out:1", BANK, CAROL, 250),
        ("hgr:r1:jp:1", JACKPOT, CAROL, 40),
        ("hgr:r1:jc:1", CAROL, JACKPOT, 10),
    )
    for _ in range(2):
        await stub.CreateTransfers(settlement, metadata=TABLE)

    # Withdrawals: one retried; one the wallet cannot cover (recorded, refused again on its retry);
    # one held for review; one of chips bought with Stars, still locked.
    await stub.Withdraw(withdrawal("out-alice", "alice", 1, 700 * 10**6), metadata=PAYMENTS)
    again_out = await stub.Withdraw(withdrawal("out-alice", "alice", 1, 700 * 10**6), metadata=PAYMENTS)
    assert again_out.existing
    await stub.Withdraw(withdrawal("out-bob-mpx", "bob", 2, 200 * 10**8), metadata=PAYMENTS)
    for _ in range(2):
        assert await served.refused(
            stub.Withdraw(withdrawal("out-alice-big", "alice", 1, 10**6 * 10**6), metadata=PAYMENTS)
        ) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    await stub.SetPlayerHold(
        cashier_pb2.SetPlayerHoldRequest(
            request_id="hold-bob", player_id="bob", held=True, reason="review",
            scope=cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
        ),
        metadata=HISTORY,
    )  # fmt: skip
    assert await served.refused(
        stub.Withdraw(withdrawal("out-bob", "bob", 1, 100 * 10**6), metadata=PAYMENTS)
    ) == (grpc.StatusCode.FAILED_PRECONDITION, "WITHDRAWAL_HELD_FOR_REVIEW")
    assert await served.refused(
        stub.Withdraw(withdrawal("out-carol", "carol", 1, 300 * 10**6), metadata=PAYMENTS)
    ) == (grpc.StatusCode.FAILED_PRECONDITION, "FUNDS_LOCKED")

    after = await served.scrape()
    for pool in POOLS:
        was, now = truth_before[pool], await ledger_sums(served.url, pool)
        expected = {
            "poker_cashier_purchases_total": now.purchases - was.purchases,
            "poker_cashier_purchased_chips_total": now.purchased - was.purchased,
            "poker_cashier_withdrawals_total": now.withdrawals - was.withdrawals,
            "poker_cashier_withdrawn_chips_total": now.withdrawn - was.withdrawn,
            "poker_cashier_hands_settled_total": now.hands_settled - was.hands_settled,
            "poker_cashier_rake_chips_total": now.rake - was.rake,
            "poker_cashier_hand_losses_chips_total": now.hand_losses - was.hand_losses,
        }
        counted = {name: delta(before, after, name, pool=pool) for name in expected}
        assert counted == expected, pool
        house = {
            ("in", now.funded_in - was.funded_in),
            ("out", now.funded_out - was.funded_out),
        }
        assert {
            (kind, delta(before, after, "poker_cashier_house_funding_chips_total", pool=pool, kind=kind))
            for kind in ("in", "out")
        } == house, pool
        games = {
            ("from_players", now.from_players - was.from_players),
            ("to_players", now.to_players - was.to_players),
        }
        assert {
            (kind, delta(before, after, "poker_cashier_house_game_chips_total", pool=pool, kind=kind))
            for kind in ("from_players", "to_players")
        } == games, pool

    # ...and the ledger holds what the operations above meant (so the comparison is not 0 == 0).
    gram, mpx = ({name: delta(before, after, name, pool=pool) for name in FLOW_COUNTERS} for pool in POOLS)
    assert gram == {
        "poker_cashier_purchases_total": 4,
        "poker_cashier_purchased_chips_total": 2_000 + 1_000 + 600 + 100,
        "poker_cashier_withdrawals_total": 1,
        "poker_cashier_withdrawn_chips_total": 700,
        "poker_cashier_hands_settled_total": 3,
        "poker_cashier_rake_chips_total": 7,
        "poker_cashier_hand_losses_chips_total": 152,
    }
    assert mpx == {
        "poker_cashier_purchases_total": 2,
        "poker_cashier_purchased_chips_total": 800,
        "poker_cashier_withdrawals_total": 1,
        "poker_cashier_withdrawn_chips_total": 200,
        "poker_cashier_hands_settled_total": 1,
        "poker_cashier_rake_chips_total": 3,
        "poker_cashier_hand_losses_chips_total": 40,
    }
    assert delta(before, after, "poker_cashier_house_funding_chips_total", pool="GRAM", kind="in") == 105_000
    assert delta(before, after, "poker_cashier_house_funding_chips_total", pool="GRAM", kind="out") == 1_000
    assert (
        delta(before, after, "poker_cashier_house_game_chips_total", pool="GRAM", kind="from_players") == 110
    )
    assert delta(before, after, "poker_cashier_house_game_chips_total", pool="GRAM", kind="to_players") == 290
    # Refused Withdraw calls, by reason: every call answered so (a recorded refusal's retry too).
    refusals = {
        reason: delta(before, after, REFUSALS, pool="GRAM", reason=reason) for reason in REFUSAL_REASONS
    }
    assert refusals == {
        "WITHDRAWAL_HELD_FOR_REVIEW": 1,
        "FUNDS_LOCKED": 1,
        "INSUFFICIENT_FUNDS": 2,
        "OTHER": 0,
    }
    assert all(delta(before, after, REFUSALS, pool="MPX", reason=reason) == 0 for reason in REFUSAL_REASONS)

    # What was minted and burned is purchases and fundings in, withdrawals and fundings out.
    audit = await stub.AuditConservation(cashier_pb2.AuditConservationRequest(), metadata=ADMIN)
    assert audit.balanced
    for was, now in zip(audit_before.pools, audit.pools, strict=True):
        name = common_pb2.ChipPool.Name(now.pool).removeprefix("CHIP_POOL_")
        minted = delta(before, after, "poker_cashier_purchased_chips_total", pool=name) + delta(
            before, after, "poker_cashier_house_funding_chips_total", pool=name, kind="in"
        )
        burned = delta(before, after, "poker_cashier_withdrawn_chips_total", pool=name) + delta(
            before, after, "poker_cashier_house_funding_chips_total", pool=name, kind="out"
        )
        assert (now.minted - was.minted, now.burned - was.burned) == (minted, burned), name


async def test_the_house_figures_are_the_ledgers_at_every_scrape(served: Served) -> None:
    stub = served.stub
    assert await house_figures(served) == {"GRAM": (0, 0, 0), "MPX": (0, 0, 0)}
    first = await served.scrape()
    scrapes = served.scrapes

    # Right after a funding (no audit loop runs here: audit_interval_seconds=0).
    await fund(stub, funding("bank", GRAM, cashier_pb2.HOUSE_ACCOUNT_BANK, 10_000))
    await fund(stub, funding("jackpot", GRAM, cashier_pb2.HOUSE_ACCOUNT_JACKPOT, 700))
    await fund(stub, funding("mpx", MPX, cashier_pb2.HOUSE_ACCOUNT_BANK, 3_000))
    assert (
        await house_figures(served)
        == await house_balances(served)
        == {
            "GRAM": (10_000, 0, 700),
            "MPX": (3_000, 0, 0),
        }
    )

    # A round opened: its stake is in the bank and its largest payout reserved, so the free bank is
    # what the bank still has to promise.
    await stub.Purchase(purchase("buy-carol", "carol", 1, 500 * 10**6), metadata=PAYMENTS)
    await stub.CreateTransfers(
        house_batch("h1", ("hgr:r1:in:1", CAROL, BANK, 200), ("hgr:r1:cover", BANK, COVER, 4_200)),
        metadata=TABLE,
    )
    assert await house_figures(served) == await house_balances(served)
    assert (await house_figures(served))["GRAM"] == (10_000 + 200 - 4_200, 4_200, 700)

    # Settled: the reservation back, then a win paid from the bank and a jackpot payout.
    await stub.CreateTransfers(
        house_batch(
            "h1",
            ("hgr:r1:free", COVER, BANK, 4_200),
            ("hgr:r1:out:1", BANK, CAROL, 600),
            ("hgr:r1:jp:1", JACKPOT, CAROL, 100),
        ),
        metadata=TABLE,
    )
    assert await house_figures(served) == await house_balances(served)
    assert (await house_figures(served))["GRAM"] == (10_000 + 200 - 600, 0, 600)

    # Every scrape read the ledger once, and every read was answered.
    last = await served.scrape()
    reads = served.scrapes - scrapes
    assert delta(first, last, "poker_cashier_house_balance_reads_total", result="ok") == reads
    assert delta(first, last, "poker_cashier_house_balance_reads_total", result="failed") == 0


async def test_a_house_figure_the_ledger_cannot_answer_is_absent_and_counted_as_a_failed_read(
    clock: FakeClock,
) -> None:
    """A cashier whose database is away: its scrape shows no house figure (never a stale one as if
    current, so an alert on it sees no data instead of an old balance) and counts the failed read."""
    away = Cashier(create_engine("postgresql://postgres@127.0.0.1:1/nothing"), clock=clock)
    forget = money_metrics.watch_house_balances(away, asyncio.get_running_loop())
    endpoint = start_metrics_endpoint("127.0.0.1", 0, "cashier")
    try:
        first = await asyncio.to_thread(scrape, endpoint.port)
        second = await asyncio.to_thread(scrape, endpoint.port)
    finally:
        endpoint.stop()
        forget()
        await away.engine.dispose()
    assert not [
        key
        for key in second
        if key[0].startswith(("poker_cashier_house_bank", "poker_cashier_house_jackpot"))
    ]
    assert delta(first, second, "poker_cashier_house_balance_reads_total", result="failed") == 1
    assert delta(first, second, "poker_cashier_house_balance_reads_total", result="ok") == 0


async def until(check: Callable[[], Awaitable[bool]], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


@pytest.mark.postgres
async def test_a_purchase_whose_caller_went_away_inside_the_transaction_is_counted_once(
    postgres_url: str, clock: FakeClock
) -> None:
    """The caller's cancellation does not cut a transaction (`unit_of_work.run_to_end`): the purchase
    commits after its caller has gone, and its retry finds it. It is counted where it commits, so
    the figure has it once, not never."""
    await asyncio.to_thread(migrate, postgres_url)
    cashier = Cashier(create_engine(postgres_url), clock=clock, flows=money_metrics.MONEY_FLOWS)
    blocker = create_engine(postgres_url)
    try:
        async with blocker.connect() as conn, conn.begin():
            # The mint's row is locked here, so the purchase waits inside its transaction.
            await conn.execute(
                sa.text("SELECT 1 FROM accounts WHERE account_id = 'mint:GRAM:GRAM' FOR UPDATE")
            )
            before = REGISTRY.get_sample_value("poker_cashier_purchases_total", {"pool": "GRAM"})
            caller = asyncio.ensure_future(
                cashier.purchase(
                    payment_reference="gone", player_id="frank", source=PaymentSource.GRAM,
                    amount_minor=100 * 10**6,
                )
            )  # fmt: skip

            async def waiting_on_the_lock() -> bool:
                # From a transaction of its own: one keeps its first view of pg_stat_activity.
                async with blocker.connect() as looking:
                    found = await looking.execute(
                        sa.text(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                            " AND wait_event_type = 'Lock'"
                        )
                    )
                    return bool(found.scalar_one())

            await until(waiting_on_the_lock)
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
        # The lock is gone: the purchase commits on its own; its retry waits for it and finds it.
        retried = await cashier.purchase(
            payment_reference="gone", player_id="frank", source=PaymentSource.GRAM,
            amount_minor=100 * 10**6,
        )  # fmt: skip
        assert retried.existing
        after = REGISTRY.get_sample_value("poker_cashier_purchases_total", {"pool": "GRAM"})
        assert before is not None
        assert after == before + 1
    finally:
        await blocker.dispose()
        await cashier.engine.dispose()


class BrokenFigures(money_metrics.MoneyFlowMetrics):
    """An observer that fails: a figure must never fail an operation the ledger has committed."""

    def applied(self, flows: Any) -> None:
        raise ValueError("a figure that cannot be counted")


async def test_a_figure_that_fails_never_fails_the_operation_it_counts(
    sqlite_url: str, clock: FakeClock
) -> None:
    await asyncio.to_thread(migrate, sqlite_url)
    cashier = Cashier(create_engine(sqlite_url), clock=clock, flows=BrokenFigures())
    try:
        first = await cashier.purchase(
            payment_reference="broken-figure-1",
            player_id="figures-ann",
            source=PaymentSource.GRAM,
            amount_minor=10**9,
        )
        again = await cashier.purchase(
            payment_reference="broken-figure-1",
            player_id="figures-ann",
            source=PaymentSource.GRAM,
            amount_minor=10**9,
        )
        wallets, _ = await cashier.balances("figures-ann")
    finally:
        await cashier.engine.dispose()
    # Applied once and answered OK; its retry finds it recorded.
    assert (first.existing, again.existing) == (False, True)
    assert again.record == first.record
    assert sum(w.balance for w in wallets) == 1_000
