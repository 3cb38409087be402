"""Automatic holds of strong chip-dumping cases (issue 43, rules 17) end to end against a real cashier
server and a real history server: RecordHand makes a strong dumping case, the history service holds
the withdrawals of its suspect and its beneficiary at the cashier in the background (not their
seats), audits it, and an operator's ResolveCase releases or confirms it. The cashier away when the
case opens, and a history restart, only delay the hold; a weak case, or another kind, holds
nothing."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.clients import create_channel
from service_runtime.database import create_engine, create_session_factory
from service_runtime.server import create_server
from service_runtime.service_tokens import ServiceTokenSource
from service_runtime.testing import DEV_KEYS, auth_metadata, running_server
from services.cashier.application import Cashier
from services.cashier.assembly import ACCESS as CASHIER_ACCESS
from services.cashier.assembly import cashier_service
from services.cashier.assembly import migrate as migrate_cashier
from services.history.application import HistoryApplication
from services.history.assembly import ACCESS, history_service
from services.history.cashier_holds import CashierHolds
from services.history.page_tokens import PageTokens
from services.history.settings import HistorySettings
from tests.history.conftest import NoCashier
from tests.history.fair_play_players import Player, Session, bet_fold_dumper, shover
from tests.history.test_history_balance_changes import expect_error
from tests.history.test_history_holds import balanced, seat_request, withdrawal
from tests.ports import free_port

TABLE = auth_metadata("table", "service")
PAYMENTS = auth_metadata("payments", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
CHIP = 10**6  # nanoGRAM per GRAM-pool chip
HELD = history_pb2.CASE_HOLD_STATE_HELD
DUE = history_pb2.CASE_HOLD_STATE_DUE
RELEASED = history_pb2.CASE_HOLD_STATE_RELEASED


@dataclass
class Pair:
    dumper: str
    receiver: str
    honest: str
    records: list[history_pb2.HandRecord]


def dumping_pair(hands: int = 80) -> Pair:
    """A bet-fold dumper and its receiver at a table with two honest bots: a strong dumping case."""
    name = f"ah{uuid.uuid4().hex[:6]}-"
    dumper, receiver = f"{name}A", f"{name}B"
    players = [
        Player(dumper, script=bet_fold_dumper(receiver)),
        Player(receiver, script=shover(dumper)),
        Player(f"{name}x", "random"),
        Player(f"{name}y", "tag"),
    ]
    return Pair(dumper, receiver, f"{name}x", list(Session(players, f"{name}table", seed=21).hands(hands)))


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 45.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


@asynccontextmanager
async def history_server(
    history_url: str, cashier_target: str, *, min_score: float, start: bool = True
) -> AsyncIterator[history_pb2_grpc.HistoryServiceStub]:
    """A history server whose application holds through the cashier at `cashier_target`."""
    engine = create_engine(history_url, pool_size=5)
    to_cashier = create_channel(
        cashier_target, timeout_seconds=2, token=ServiceTokenSource(DEV_KEYS, "history")
    )
    application = HistoryApplication(
        create_session_factory(engine),
        PageTokens(b"k" * 32),
        NoCashier(),
        holds=CashierHolds(to_cashier),
        auto_hold_min_score=min_score,
        auto_hold_retry_seconds=(0.05, 0.5),
    )
    if start:
        application.start()
    try:
        async with running_server([history_service(application)], ACCESS) as (_, channel):
            yield history_pb2_grpc.HistoryServiceStub(channel)
    finally:
        await application.stop()
        await to_cashier.close()
        await engine.dispose()


@asynccontextmanager
async def cashier_server(
    tmp_path: Path, port: int = 0
) -> AsyncIterator[tuple[str, cashier_pb2_grpc.CashierServiceStub]]:
    """A cashier on SQLite in `tmp_path` listening on `port` (0: any); its address and a stub."""
    url = f"sqlite+aiosqlite:///{(tmp_path / 'cashier.db').as_posix()}"
    await asyncio.to_thread(migrate_cashier, url)
    engine = create_engine(url)
    running, bound = await create_server(
        f"127.0.0.1:{port}",
        services=[cashier_service(Cashier(engine))],
        access=CASHIER_ACCESS,
        token_keys=DEV_KEYS,
    )
    await running.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{bound}") as channel:
            yield f"127.0.0.1:{bound}", cashier_pb2_grpc.CashierServiceStub(channel)
    finally:
        await running.stop(grace_seconds=0.5)
        await engine.dispose()


async def fund(cashier: cashier_pb2_grpc.CashierServiceStub, *players: str) -> None:
    for player in players:
        await cashier.Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"pay-{player}",
                player_id=player,
                source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=5_000 * CHIP,
            ),
            metadata=PAYMENTS,
        )


async def record(history: history_pb2_grpc.HistoryServiceStub, records: list[history_pb2.HandRecord]) -> None:
    for hand in records:
        await history.RecordHand(history_pb2.RecordHandRequest(hand=hand), metadata=TABLE)


async def dumping_case(history: history_pb2_grpc.HistoryServiceStub, pair: Pair) -> history_pb2.FairPlayCase:
    listed = await history.ListCases(
        history_pb2.ListCasesRequest(kind=history_pb2.CASE_KIND_CHIP_DUMPING, page={"page_size": 500}),
        metadata=ADMIN,
    )
    (case,) = [c for c in listed.cases if {p.player_id for p in c.players} == {pair.dumper, pair.receiver}]
    return case


async def get_case(history: history_pb2_grpc.HistoryServiceStub, case_id: str) -> history_pb2.FairPlayCase:
    return (await history.GetCase(history_pb2.GetCaseRequest(case_id=case_id), metadata=ADMIN)).case


def hold_states(case: history_pb2.FairPlayCase) -> dict[str, tuple[int, int]]:
    return {h.player_id: (h.role, h.state) for h in case.holds}


async def audit(history: history_pb2_grpc.HistoryServiceStub, kind: str) -> list[history_pb2.AuditEvent]:
    events = await history.ListAuditEvents(
        history_pb2.ListAuditEventsRequest(kind=kind, page={"page_size": 500}), metadata=ADMIN
    )
    return list(events.events)


def resolve(
    request_id: str, case_id: str, resolution: int, reason: str = "reviewed"
) -> history_pb2.ResolveCaseRequest:
    return history_pb2.ResolveCaseRequest(
        request_id=request_id,
        case_id=case_id,
        resolution=resolution,  # type: ignore[arg-type]
        reason=reason,
    )


async def test_a_strong_case_holds_the_withdrawals_of_its_players_not_their_seats_until_released(
    history_database_url: str, tmp_path: Path
) -> None:
    pair = dumping_pair()
    async with AsyncExitStack() as stack:
        target, cashier = await stack.enter_async_context(cashier_server(tmp_path))
        await fund(cashier, pair.dumper, pair.receiver, pair.honest)
        # The default strength (50 big blinds of net blatant gifts).
        min_score = HistorySettings.auto_hold_min_score
        history = await stack.enter_async_context(
            history_server(history_database_url, target, min_score=min_score)
        )
        await record(history, pair.records)
        case = await dumping_case(history, pair)
        assert case.score >= min_score

        async def both_held() -> bool:
            found = await get_case(history, case.case_id)
            return [h.state for h in found.holds] == [HELD, HELD]

        # Within well under the background task's poll (30 s): the commit woke it.
        await eventually(both_held, seconds=20)
        case = await get_case(history, case.case_id)
        # The suspect and the beneficiary are both held; the roles stay what the evidence says.
        assert hold_states(case) == {
            pair.dumper: (history_pb2.CASE_ROLE_SUSPECT, HELD),
            pair.receiver: (history_pb2.CASE_ROLE_BENEFICIARY, HELD),
        }
        assert case.resolution == history_pb2.CASE_RESOLUTION_UNSPECIFIED
        assert all(h.HasField("hold_time") for h in case.holds)

        # Withdrawals wait; seats go on; a player of no case is not affected.
        for player in (pair.dumper, pair.receiver):
            await expect_error(
                cashier.Withdraw(withdrawal(f"w-{player}", player, 1000), metadata=PAYMENTS),
                grpc.StatusCode.FAILED_PRECONDITION,
                "WITHDRAWAL_HELD_FOR_REVIEW",
            )
        for seat, player in enumerate((pair.dumper, pair.receiver)):
            opened = await cashier.OpenSeatSession(
                seat_request(f"t/{player}", player, "auto-hold-table", seat), metadata=TABLE
            )
            assert opened.seat_session.buy_in_amount == 1000
        await cashier.Withdraw(withdrawal(f"w-{pair.honest}", pair.honest, 1000), metadata=PAYMENTS)

        # Audited once per player, by the detectors, saying what and why.
        held = [e for e in await audit(history, "PLAYER_HELD") if case.case_id in e.event_id]
        assert sorted((e.event_id, e.actor, e.subject) for e in held) == sorted(
            (f"auto-hold:{case.case_id}:{p}", "history-detectors", p) for p in (pair.dumper, pair.receiver)
        )
        for event in held:
            assert "automatic" in event.details
            assert "WITHDRAWALS" in event.details
            assert case.case_id in event.details
            assert event.player_ids == [event.subject]

        # More evidence holds nobody twice.
        await record(history, dumping_pair_more(pair, 5))
        assert [e.event_id for e in await audit(history, "PLAYER_HELD") if case.case_id in e.event_id] == [
            e.event_id for e in held
        ]

        # Only admins resolve; bad requests change nothing.
        request = resolve("r1", case.case_id, history_pb2.CASE_RESOLUTION_RELEASE, "false alarm, cleared")
        for metadata in (auth_metadata(pair.dumper, "player"), TABLE):
            await expect_error(
                history.ResolveCase(request, metadata=metadata),
                grpc.StatusCode.PERMISSION_DENIED,
                "ROLE_REQUIRED",
            )
        await expect_error(
            history.ResolveCase(resolve("r0", case.case_id, 0), metadata=ADMIN),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_REQUIRED",
        )
        await expect_error(
            history.ResolveCase(resolve("r0", case.case_id, 99), metadata=ADMIN),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
        await expect_error(
            history.ResolveCase(resolve("r0", "no-such-case", 1), metadata=ADMIN),
            grpc.StatusCode.NOT_FOUND,
            "CASE_NOT_FOUND",
        )

        asked = await history.ResolveCase(request, metadata=ADMIN)
        assert asked.existing is False
        assert (asked.case.resolution, asked.case.resolved_by, asked.case.resolution_reason) == (
            history_pb2.CASE_RESOLUTION_RELEASE,
            "ops",
            "false alarm, cleared",
        )
        # Four-eyes (issue 38): nothing is released until another member of finance approves.
        assert asked.release.state == history_pb2.RELEASE_REQUEST_STATE_PENDING
        assert asked.release.case_release
        assert [h.state for h in asked.case.holds] == [HELD, HELD]
        await expect_error(
            cashier.Withdraw(withdrawal(f"w-{pair.dumper}", pair.dumper, 1000), metadata=PAYMENTS),
            grpc.StatusCode.FAILED_PRECONDITION,
            "WITHDRAWAL_HELD_FOR_REVIEW",
        )
        await approve(history, "r1", by=ADMIN, refused="FOUR_EYES_REQUIRED")
        await approve(history, "r1")
        released = await history.ResolveCase(request, metadata=ADMIN)
        assert [h.state for h in released.case.holds] == [RELEASED, RELEASED]
        assert released.existing
        assert released.release.state == history_pb2.RELEASE_REQUEST_STATE_APPROVED
        await expect_error(
            history.ResolveCase(resolve("r1", case.case_id, 1, "other words"), metadata=ADMIN),
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )
        await expect_error(
            history.ResolveCase(
                resolve("r2", case.case_id, history_pb2.CASE_RESOLUTION_CONFIRM), metadata=ADMIN
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "CASE_NOT_RESOLVABLE",
        )

        # The same payouts go through now; a released case holds nobody again.
        for player in (pair.dumper, pair.receiver):
            paid = await cashier.Withdraw(withdrawal(f"w-{player}", player, 1000), metadata=PAYMENTS)
            assert paid.transfer.amount == 1000
        # Holds are made due in RecordHand's own transaction: the answer says all there is.
        await record(history, dumping_pair_more(pair, 5))
        assert [h.state for h in (await get_case(history, case.case_id)).holds] == [RELEASED, RELEASED]
        assert await balanced(cashier)

        releases = [e for e in await audit(history, "PLAYER_RELEASED") if case.case_id in e.event_id]
        assert sorted((e.event_id, e.actor, e.subject) for e in releases) == sorted(
            (f"auto-release:{case.case_id}:{p}", "ops", p) for p in (pair.dumper, pair.receiver)
        )
        (resolved,) = [
            e for e in await audit(history, "FAIR_PLAY_CASE_RESOLVED") if e.subject == case.case_id
        ]
        assert resolved.actor == "ops"
        assert "RELEASE" in resolved.details


def dumping_pair_more(pair: Pair, hands: int) -> list[history_pb2.HandRecord]:
    """More hands of the same pair (new hand ids, same table and players)."""
    more = []
    for index, hand in enumerate(pair.records[:hands]):
        again = history_pb2.HandRecord()
        again.CopyFrom(hand)
        again.hand_id = f"{hand.hand_id}-again-{uuid.uuid4().hex[:6]}-{index}"
        more.append(again)
    return more


async def test_a_case_that_opens_while_the_cashier_is_away_is_held_once_it_is_back_even_after_a_restart(
    history_database_url: str, tmp_path: Path
) -> None:
    pair = dumping_pair()
    port = free_port()
    target = f"127.0.0.1:{port}"
    # The cashier is away: RecordHand is not held up, and the holds wait, due.
    async with history_server(history_database_url, target, min_score=50) as history:
        await record(history, pair.records)  # answered: it never waits for the cashier
        case = await dumping_case(history, pair)
        await asyncio.sleep(0.5)  # the background task tries, and backs off
        assert [h.state for h in (await get_case(history, case.case_id)).holds] == [DUE, DUE]
    # A history restart, the cashier still away: the new process finds the holds still due.
    async with history_server(history_database_url, target, min_score=50) as history:
        await asyncio.sleep(0.3)
        assert [h.state for h in (await get_case(history, case.case_id)).holds] == [DUE, DUE]
        async with cashier_server(tmp_path, port) as (_, cashier):
            await fund(cashier, pair.dumper, pair.receiver)

            async def both_held() -> bool:
                return [h.state for h in (await get_case(history, case.case_id)).holds] == [HELD, HELD]

            await eventually(both_held)
            for player in (pair.dumper, pair.receiver):
                await expect_error(
                    cashier.Withdraw(withdrawal(f"w-{player}", player, 1000), metadata=PAYMENTS),
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "WITHDRAWAL_HELD_FOR_REVIEW",
                )
            held = [e for e in await audit(history, "PLAYER_HELD") if case.case_id in e.event_id]
            assert sorted(e.subject for e in held) == sorted((pair.dumper, pair.receiver))

            # The operators confirm: the holds stay; confirming again under another id is refused.
            confirmed = await history.ResolveCase(
                resolve("c1", case.case_id, history_pb2.CASE_RESOLUTION_CONFIRM, "dumping confirmed"),
                metadata=ADMIN,
            )
            assert confirmed.case.resolution == history_pb2.CASE_RESOLUTION_CONFIRM
            assert [h.state for h in confirmed.case.holds] == [HELD, HELD]
            await expect_error(
                history.ResolveCase(
                    resolve("c2", case.case_id, history_pb2.CASE_RESOLUTION_CONFIRM), metadata=ADMIN
                ),
                grpc.StatusCode.FAILED_PRECONDITION,
                "CASE_NOT_RESOLVABLE",
            )
            await expect_error(
                cashier.Withdraw(withdrawal(f"w-{pair.dumper}", pair.dumper, 1000), metadata=PAYMENTS),
                grpc.StatusCode.FAILED_PRECONDITION,
                "WITHDRAWAL_HELD_FOR_REVIEW",
            )
            # An appeal upheld: a confirmed case may still be released; then it is final.
            appeal = resolve("c3", case.case_id, history_pb2.CASE_RESOLUTION_RELEASE, "appeal upheld")
            asked = await history.ResolveCase(appeal, metadata=ADMIN)
            assert asked.case.resolution == history_pb2.CASE_RESOLUTION_RELEASE
            assert [h.state for h in asked.case.holds] == [HELD, HELD]
            # Rejected by finance: nothing is released and the case may be decided again.
            await approve(history, "c3", approve_it=False)
            assert [h.state for h in (await get_case(history, case.case_id)).holds] == [HELD, HELD]
            await cashier_refuses(cashier, pair.dumper)
            appeal = resolve("c5", case.case_id, history_pb2.CASE_RESOLUTION_RELEASE, "appeal upheld")
            await history.ResolveCase(appeal, metadata=ADMIN)
            await approve(history, "c5")
            released = await history.ResolveCase(appeal, metadata=ADMIN)
            assert released.case.resolution == history_pb2.CASE_RESOLUTION_RELEASE
            assert [h.state for h in released.case.holds] == [RELEASED, RELEASED]
            await expect_error(
                history.ResolveCase(
                    resolve("c4", case.case_id, history_pb2.CASE_RESOLUTION_CONFIRM), metadata=ADMIN
                ),
                grpc.StatusCode.FAILED_PRECONDITION,
                "CASE_NOT_RESOLVABLE",
            )
            await cashier.Withdraw(withdrawal(f"w2-{pair.dumper}", pair.dumper, 1000), metadata=PAYMENTS)
            resolved = sorted(
                (e.details.split(" ")[0], e.actor)
                for e in await audit(history, "FAIR_PLAY_CASE_RESOLVED")
                if e.subject == case.case_id
            )
            assert resolved == [("CONFIRM", "ops"), ("RELEASE", "ops")]


async def approve(
    history: history_pb2_grpc.HistoryServiceStub,
    request_id: str,
    *,
    by: tuple[tuple[str, str], ...] = auth_metadata("fiona", "finance"),
    approve_it: bool = True,
    refused: str = "",
) -> None:
    """Finance decides a pending release (four-eyes, issue 38)."""
    decision = history_pb2.DecideReleaseRequest(
        decision_id=f"d-{request_id}-{approve_it}",
        request_id=request_id,
        approve=approve_it,
        reason="reviewed",
    )
    if refused:
        await expect_error(
            history.DecideRelease(decision, metadata=by), grpc.StatusCode.PERMISSION_DENIED, refused
        )
        return
    decided = await history.DecideRelease(decision, metadata=by)
    want = (
        history_pb2.RELEASE_REQUEST_STATE_APPROVED
        if approve_it
        else history_pb2.RELEASE_REQUEST_STATE_REJECTED
    )
    assert decided.release.state == want


async def cashier_refuses(cashier: cashier_pb2_grpc.CashierServiceStub, player: str) -> None:
    await expect_error(
        cashier.Withdraw(withdrawal(f"w-held-{player}", player, 1000), metadata=PAYMENTS),
        grpc.StatusCode.FAILED_PRECONDITION,
        "WITHDRAWAL_HELD_FOR_REVIEW",
    )


@pytest.mark.parametrize("min_score", [0.0, 1e7])
async def test_a_weak_case_and_other_kinds_hold_nothing(
    history_database_url: str, tmp_path: Path, min_score: float
) -> None:
    pair = dumping_pair(60)
    async with AsyncExitStack() as stack:
        target, cashier = await stack.enter_async_context(cashier_server(tmp_path))
        await fund(cashier, pair.dumper, pair.receiver)
        history = await stack.enter_async_context(
            history_server(history_database_url, target, min_score=min_score)
        )
        await record(history, pair.records)
        case = await dumping_case(history, pair)
        assert case.score < min_score or min_score == 0
        # A shared device opens a case at once, whatever its score: other kinds only queue.
        twins = [
            Player(f"{pair.dumper}-t1", "tag", device="dev-w"),
            Player(f"{pair.dumper}-t2", "tag", device="dev-w"),
        ]
        (hand,) = Session(twins, f"{pair.dumper}-devices", seed=24).hands(1)
        await record(history, [hand])
        assert list((await get_case(history, case.case_id)).holds) == []
        listed = await history.ListCases(
            history_pb2.ListCasesRequest(page={"page_size": 500}), metadata=ADMIN
        )
        assert all(not c.holds for c in listed.cases if c.players[0].player_id.startswith(pair.dumper))
        for player in (pair.dumper, pair.receiver):
            await cashier.Withdraw(withdrawal(f"w-{player}", player, 1000), metadata=PAYMENTS)
        await expect_error(
            history.ResolveCase(
                resolve("n1", case.case_id, history_pb2.CASE_RESOLUTION_RELEASE), metadata=ADMIN
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "CASE_NOT_RESOLVABLE",
        )
