"""Limits a player sets on themself, as use cases: set them, read them, and what they stop.

The rules are `self_limits.py` (pure); this layer loads the player's rows, asks it, writes the result
and the history row in one transaction. Only the player changes their own limits (the adapter takes
the player from the verified token); every change is idempotent by the player's request id, which
binds every field. Purchase, OpenSeatSession and CreateTransfers (a house game's stakes) call the
`refuse_*` checks inside their own transactions, after the wallet is locked, so two purchases of one
player racing each other are counted one after the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.errors import AlreadyExists, InvalidArgument
from services.cashier import self_limit_storage as stored
from services.cashier import storage
from services.cashier.holds import STOPS_SEATS, refuse_if_held
from services.cashier.ledger import (
    Account,
    AccountKind,
    Pool,
    TransferKind,
    TransferRecord,
    TransferRequest,
    check_player_id,
    check_text,
    mint_account_id,
    wallet_account_id,
)
from services.cashier.self_limit_storage import SelfLimitChange
from services.cashier.self_limits import (
    LONGEST_WINDOW,
    BreakKind,
    BreakState,
    LimitKind,
    LimitState,
    Measure,
    change_limit,
    check_break_days,
    check_limit_amount,
    check_limits,
    check_reminder,
    refuse_during_break,
    remaining,
    running_break,
    start_break,
    usage,
)
from services.cashier.unit_of_work import UnitOfWork


@dataclass(frozen=True)
class LimitView:
    pool: Pool
    state: LimitState  # as it stands at the read
    used: int
    remaining: int


@dataclass(frozen=True)
class SelfLimitsView:
    player_id: str
    limits: list[LimitView]
    reminder_minutes: int
    brk: BreakState | None
    read_at: datetime


async def refuse_purchase_beyond_self_limits(
    conn: AsyncConnection, player_id: str, pool: Pool, source: str, chips: int, now: datetime
) -> None:
    """COOLING_OFF / SELF_EXCLUDED during a break; SELF_LIMIT_REACHED when `chips` more bought now
    would pass a purchase limit of the pool."""
    control = await stored.self_control_of(conn, player_id)
    refuse_during_break(control.brk, now, "no purchase until it ends")
    limits = (await stored.limits_of(conn, player_id, pool)).get(pool, [])
    if not any(s.at(now).amount and s.kind.measure is Measure.PURCHASE for s in limits):
        return
    # The purchase's own accounts, in the ledger's lock order: a second purchase of this player
    # waits here and then counts this one. The wallet is created first: a player's first purchases,
    # from two sources (two mints), had no common row to wait on and both passed the limit on
    # PostgreSQL (an outside reviewer's case).
    wallet = Account(wallet_account_id(pool, player_id), player_id, pool, AccountKind.PLAYER_WALLET)
    await storage.create_account_if_missing(conn, wallet, now)
    await storage.lock_accounts(conn, [mint_account_id(source, pool), wallet.account_id])
    bought = await stored.purchases_since(conn, player_id, pool, now - LONGEST_WINDOW)
    check_limits(limits, Measure.PURCHASE, bought, chips, now)


async def refuse_buy_in_beyond_self_limits(
    conn: AsyncConnection, player_id: str, pool: Pool, buy_in: int, now: datetime
) -> None:
    """COOLING_OFF / SELF_EXCLUDED during a break; SELF_LIMIT_REACHED when this buy-in would take the
    net loss of a window past a loss limit of the pool. The caller holds the wallet's lock."""
    control = await stored.self_control_of(conn, player_id)
    refuse_during_break(control.brk, now, "no new seat until it ends")
    await _refuse_past_loss_limits(conn, player_id, pool, buy_in, now)


async def _refuse_past_loss_limits(
    conn: AsyncConnection,
    player_id: str,
    pool: Pool,
    chips: int,
    now: datetime,
    uncommitted: Sequence[tuple[datetime, int]] = (),
) -> None:
    """SELF_LIMIT_REACHED when `chips` more lost now would take a window past a loss limit of the
    pool; a player with no loss limit pays one read."""
    limits = (await stored.limits_of(conn, player_id, pool)).get(pool, [])
    if not any(s.at(now).amount and s.kind.measure is Measure.LOSS for s in limits):
        return
    lost = await stored.losses_since(conn, player_id, pool, now - LONGEST_WINDOW)
    check_limits(limits, Measure.LOSS, [*lost, *uncommitted], chips, now)


def house_stakes(
    requests: Iterable[TransferRequest],
    accounts: Mapping[str, Account],
    existing: Mapping[str, TransferRecord],
) -> dict[tuple[str, Pool], int]:
    """The chips a CreateTransfers batch would newly stake at house games, by (player, pool): what its
    new house-game transfers take out of a player's wallet less what they pay into it, where that is
    above 0. A settlement (the bank pays a box back, a quarter of a lost bonus goes on to the
    jackpot) pays on net and stakes nothing; a retry of an applied batch stakes nothing new."""
    net: dict[tuple[str, Pool], int] = {}
    for request in requests:
        if request.kind is not TransferKind.HOUSE_GAME_RESULT or request.transfer_id in existing:
            continue
        for account_id, sign in ((request.debit_account_id, 1), (request.credit_account_id, -1)):
            wallet = accounts.get(account_id)
            if wallet is not None and wallet.kind is AccountKind.PLAYER_WALLET:
                key = (wallet.owner_id, wallet.pool)
                net[key] = net.get(key, 0) + sign * request.amount
    return {key: chips for key, chips in net.items() if chips > 0}


def house_game_events(records: Iterable[TransferRecord], wallet_id: str) -> list[tuple[datetime, int]]:
    """The wallet's applied house-game transfers among `records`, as loss events (time, chips): a
    stake lost (+), a payment back won (-)."""
    events = []
    for record in records:
        request = record.request
        if not record.applied or request.kind is not TransferKind.HOUSE_GAME_RESULT:
            continue
        if request.debit_account_id == wallet_id:
            events.append((record.created_at, request.amount))
        elif request.credit_account_id == wallet_id:
            events.append((record.created_at, -request.amount))
    return events


async def refuse_house_stakes_beyond_self_control(
    conn: AsyncConnection,
    player_id: str,
    pool: Pool,
    chips: int,
    now: datetime,
    *,
    round_in_play: bool,
    uncommitted: Sequence[tuple[datetime, int]] = (),
) -> None:
    """A house game's new stakes: a new round's are refused for a player on a full hold
    (PLAYER_ON_HOLD) or on a break (COOLING_OFF / SELF_EXCLUDED), as a new seat is; a round already in
    play finishes. Every stake, a new round's or a decision's, is SELF_LIMIT_REACHED when it would
    take the net loss of a window past a loss limit of the pool (the player can still fold or stand).
    The caller holds the wallet's lock; `uncommitted`: the wallet's house-game events its
    transaction recorded before (other batches coalesced into it, not committed yet)."""
    if not round_in_play:
        await refuse_if_held(
            conn, player_id, "PLAYER_ON_HOLD", "no new round until the review ends", STOPS_SEATS
        )
        control = await stored.self_control_of(conn, player_id)
        refuse_during_break(control.brk, now, "no new round until it ends")
    await _refuse_past_loss_limits(conn, player_id, pool, chips, now, uncommitted)


def _same_request(earlier: SelfLimitChange, action: str, requested_field: str, **wanted: object) -> None:
    """IDEMPOTENCY_CONFLICT naming the first field in which a retry differs from the recorded change
    (`requested_field` is what the request calls the number it asks for)."""
    if earlier.action != action:
        raise AlreadyExists(
            "IDEMPOTENCY_CONFLICT", "the request id was used for another change", {"field": "request_id"}
        )
    for field, value in wanted.items():
        if getattr(earlier, field) != value:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the request id was used with different fields",
                {"field": requested_field if field == "requested" else field},
            )


class SelfLimitUseCases(UnitOfWork):
    async def set_self_limit(
        self, *, player_id: str, request_id: str, pool: Pool | None, kind: LimitKind | None, amount: int
    ) -> tuple[SelfLimitChange, bool]:
        """Set one of the player's limits; (the change, whether this request id was applied before)."""
        check_text(request_id, "request_id")
        check_player_id(player_id)
        if pool is None:
            raise InvalidArgument("POOL_INVALID", "pool is required", {"field": "pool"})
        if kind is None:
            raise InvalidArgument("FIELD_REQUIRED", "kind is required", {"field": "kind"})
        check_limit_amount(amount)

        async def work(conn: AsyncConnection) -> tuple[SelfLimitChange, bool]:
            now = self._clock()
            control = await stored.self_control_of(conn, player_id, lock=True)
            earlier = await stored.self_limit_change(conn, player_id, request_id)
            if earlier is not None:
                _same_request(earlier, "LIMIT", "amount", pool=pool.value, kind=kind.value, requested=amount)
                return earlier, True
            limits = (await stored.limits_of(conn, player_id, pool)).get(pool, [])
            current = next((s for s in limits if s.kind is kind), None)
            change = change_limit(current, kind, amount, now, control.brk)
            await stored.save_limit(conn, player_id, pool, change.state)
            row = SelfLimitChange(
                request_id=request_id,
                player_id=player_id,
                action="LIMIT",
                pool=pool.value,
                kind=kind.value,
                requested=amount,
                old_value=str(change.previous),
                new_value=str(amount),
                effective_at=change.effective_at,
                ends_at=None,
                changed_at=now,
            )
            await stored.record_self_limit_change(conn, row)
            return row, False

        return await self._transaction(work)

    async def set_session_reminder(
        self, *, player_id: str, request_id: str, minutes: int
    ) -> tuple[SelfLimitChange, bool]:
        check_text(request_id, "request_id")
        check_player_id(player_id)
        check_reminder(minutes)

        async def work(conn: AsyncConnection) -> tuple[SelfLimitChange, bool]:
            now = self._clock()
            control = await stored.self_control_of(conn, player_id, lock=True)
            earlier = await stored.self_limit_change(conn, player_id, request_id)
            if earlier is not None:
                _same_request(earlier, "REMINDER", "minutes", requested=minutes)
                return earlier, True
            await stored.save_self_control(conn, stored.SelfControl(player_id, minutes, control.brk))
            row = SelfLimitChange(
                request_id=request_id,
                player_id=player_id,
                action="REMINDER",
                pool="",
                kind="",
                requested=minutes,
                old_value=str(control.reminder_minutes),
                new_value=str(minutes),
                effective_at=now,
                ends_at=None,
                changed_at=now,
            )
            await stored.record_self_limit_change(conn, row)
            return row, False

        return await self._transaction(work)

    async def start_break(
        self, *, player_id: str, request_id: str, kind: BreakKind | None, days: int
    ) -> tuple[SelfLimitChange, bool]:
        check_text(request_id, "request_id")
        check_player_id(player_id)
        if kind is None:
            raise InvalidArgument("FIELD_REQUIRED", "kind is required", {"field": "kind"})
        check_break_days(kind, days)

        async def work(conn: AsyncConnection) -> tuple[SelfLimitChange, bool]:
            now = self._clock()
            control = await stored.self_control_of(conn, player_id, lock=True)
            earlier = await stored.self_limit_change(conn, player_id, request_id)
            if earlier is not None:
                _same_request(earlier, "BREAK", "days", kind=kind.value, requested=days)
                return earlier, True
            before = running_break(control.brk, now)
            brk = start_break(control.brk, kind, days, now)
            await stored.save_self_control(conn, stored.SelfControl(player_id, control.reminder_minutes, brk))
            row = SelfLimitChange(
                request_id=request_id,
                player_id=player_id,
                action="BREAK",
                pool="",
                kind=kind.value,
                requested=days,
                old_value="" if before is None else f"{before.kind.value} {before.until:%Y-%m-%dT%H:%MZ}",
                new_value=f"{brk.kind.value} {brk.until:%Y-%m-%dT%H:%MZ}",
                effective_at=now,
                ends_at=brk.until,
                changed_at=now,
            )
            await stored.record_self_limit_change(conn, row)
            return row, False

        return await self._transaction(work)

    async def self_limits(self, player_id: str) -> SelfLimitsView:
        """The player's limits as they stand now, with their windows' figures, reminder and break."""
        check_player_id(player_id)

        async def work(conn: AsyncConnection) -> SelfLimitsView:
            now = self._clock()
            control = await stored.self_control_of(conn, player_id)
            views: list[LimitView] = []
            for pool, limits in (await stored.limits_of(conn, player_id)).items():
                since = now - LONGEST_WINDOW
                events = {
                    Measure.PURCHASE: await stored.purchases_since(conn, player_id, pool, since),
                    Measure.LOSS: await stored.losses_since(conn, player_id, pool, since),
                }
                for state, used in usage(limits, events, now):
                    if state.amount == 0 and state.pending_at is None:
                        continue  # removed, nothing pending: nothing to show
                    views.append(LimitView(pool, state, used, remaining(state.amount, used)))
            return SelfLimitsView(
                player_id, views, control.reminder_minutes, running_break(control.brk, now), now
            )

        return await self._snapshot(work)

    async def self_limit_history(self, player_id: str) -> list[SelfLimitChange]:
        """The player's own changes, oldest first (the audit trail; read by tests and operators' tools)."""
        check_player_id(player_id)
        return await self._snapshot(lambda conn: stored.self_limit_history(conn, player_id))
