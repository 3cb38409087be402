"""The cases of `test_idempotency_binds_request.py` (issue 41), one per idempotent mutating RPC: what
to call once, each changed request to send under the same id, and the state those calls must leave
as the first one left it (balances, rooms, seats, holds, commitments, read through the services' own
RPCs); then every method the five services serve that has no case, with why (`KEY_ONLY`,
`NOT_KEYED`, `NOT_CHEAP`). The test module runs them against the services as real processes.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import STAFF_ROLES, Role, ServiceName
from service_runtime.testing import auth_metadata, reason_of, service_metadata
from tests.history.engine_hands import record_of
from tests.history.test_history_privacy import fold_muck_showdown_hand

from .service_processes import ServiceProcess

Caller = tuple[tuple[str, str], ...]
ADMIN: Caller = auth_metadata("ops", *STAFF_ROLES)
FINANCE_A: Caller = auth_metadata("finance-a", Role.FINANCE)
FINANCE_B: Caller = auth_metadata("finance-b", Role.FINANCE)
CONFLICT = "ALREADY_EXISTS IDEMPOTENCY_CONFLICT"
GRAM, MPX = common_pb2.CHIP_POOL_GRAM, common_pb2.CHIP_POOL_MPX
HOUSE_TABLE = "casino-holdem-gram.1"  # a standing table of the seeded catalogue
# Fields a table request carries besides its key: the table it is addressed to. A table's answers
# are kept by the table (docs/table.md "Idempotency and errors": by player and request id inside the
# table), so the same id at another table is another table's request, as a call to another service
# would be. (Binding it across tables would need a shard-wide, and across shards a shared, memory.)
TABLE_ADDRESS = "the table the request is addressed to: request ids are kept per table (docs/table.md)"
OUTPUT_ONLY = "output only: the server ignores it in a request"
SERVICES = ("cashier", "lobby", "table", "history", "fairness")


def fresh(prefix: str) -> str:
    """An id nobody used: each case works on its own players, rooms, tables and hands."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def player(name: str) -> Caller:
    return auth_metadata(name)


# Cases ---------------------------------------------------------------------------------------------


@dataclass
class Trial:
    """One idempotent call to make once, the same call with one field changed at a time, and a read
    of the state those calls must leave as the first one left it."""

    request: Message
    caller: Caller
    # Each entry is one changed request: the paths it changes, with their new values.
    variants: list[dict[str, Any]]
    state: Callable[[], Awaitable[object]]
    # The answer a call gives, as a label: "OK", or the code and reason of the error; CreateTransfers
    # answers each transfer's outcome in an OK reply, so it labels replies itself.
    label: Callable[[Message], str] = lambda reply: "OK"
    first: tuple[str, ...] = ("OK",)  # the first call's acceptable answers
    conflict: str = CONFLICT
    retried: str | None = None  # the first request again; None: the first call's answer
    cleanup: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True)
class Rpc:
    service: str
    method: str
    key: tuple[str, ...]  # the fields that make the id (never changed)
    trial: Callable[[Calls], Awaitable[Trial]]
    exempt: Mapping[str, str] = field(default_factory=dict)  # path -> why it is not changed
    # False: the variants are a sample (history and fairness, included where cheap).
    complete: bool = True
    # path -> the known gap: that field's variant is expected to be accepted (xfail, strict).
    gaps: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.service}.{self.method}"


class Calls:
    """Stubs of the running services, on channels of the current event loop."""

    STUBS: Mapping[str, Callable[[grpc.aio.Channel], Any]] = {
        "cashier": cashier_pb2_grpc.CashierServiceStub,
        "lobby": lobby_pb2_grpc.LobbyServiceStub,
        "table": table_pb2_grpc.TableServiceStub,
        "history": history_pb2_grpc.HistoryServiceStub,
        "fairness": fairness_pb2_grpc.FairnessServiceStub,
    }

    def __init__(self, channels: Mapping[str, grpc.aio.Channel]) -> None:
        self._stubs = {name: self.STUBS[name](channel) for name, channel in channels.items()}

    async def outcome(
        self, service: str, method: str, request: Message, caller: Caller, *, wait_unavailable: bool = False
    ) -> tuple[str, Message | None]:
        """The answer's label ("OK" or "CODE REASON") and the reply. `wait_unavailable`: a table shard
        answers UNAVAILABLE until it has read its tables' seat sessions; nothing is remembered then."""
        for attempt in range(100):
            try:
                reply = await getattr(self._stubs[service], method)(request, metadata=caller, timeout=10)
                return "OK", reply
            except grpc.aio.AioRpcError as error:
                if wait_unavailable and error.code() == grpc.StatusCode.UNAVAILABLE and attempt < 99:
                    await asyncio.sleep(0.1)
                    continue
                return f"{error.code().name} {reason_of(error)}", None
        raise AssertionError("unreachable")

    async def call(self, service: str, method: str, request: Message, caller: Caller) -> Any:
        """A call that must answer OK (set-up and reads)."""
        label, reply = await self.outcome(service, method, request, caller, wait_unavailable=True)
        assert label == "OK", (service, method, label, request)
        return reply


@asynccontextmanager
async def connected(services: Mapping[str, ServiceProcess]) -> AsyncIterator[Calls]:
    channels = {name: grpc.aio.insecure_channel(services[name].address) for name in SERVICES}
    try:
        yield Calls(channels)
    finally:
        for channel in channels.values():
            await channel.close()


# The cashier ---------------------------------------------------------------------------------------

PAYMENTS = service_metadata(ServiceName.PAYMENTS)
TABLE = service_metadata(ServiceName.TABLE)
HISTORY = service_metadata(ServiceName.HISTORY)


async def fund(c: Calls, *players: str) -> None:
    for name in players:
        for source in (cashier_pb2.PAYMENT_SOURCE_GRAM, cashier_pb2.PAYMENT_SOURCE_MPX):
            request = cashier_pb2.PurchaseRequest(
                payment_reference=fresh("fund"), player_id=name, source=source, amount_minor=10**10
            )
            await c.call("cashier", "Purchase", request, PAYMENTS)


async def money(c: Calls, *players: str) -> object:
    """The players' wallets and what each pool ever minted and burned, every pool conserved. Not the
    whole audit: a hand still settling at another case's table moves chips between seats meanwhile,
    but only purchases, withdrawals and house funding (these cases, one at a time) mint or burn."""
    wallets = []
    for name in players:
        reply = await c.call("cashier", "GetBalances", cashier_pb2.GetBalancesRequest(player_id=name), ADMIN)
        wallets.append([(w.pool, w.balance) for w in reply.wallets])
        wallets.append(reply.open_seat_session.session_id)
    audit = await c.call("cashier", "AuditConservation", cashier_pb2.AuditConservationRequest(), ADMIN)
    assert audit.balanced, audit
    return wallets, [(p.pool, p.minted, p.burned) for p in audit.pools]


async def purchase(c: Calls) -> Trial:
    ann, bea = fresh("ann"), fresh("bea")
    request = cashier_pb2.PurchaseRequest(
        payment_reference=f"gw-dev:{ann}:R", player_id=ann, source=cashier_pb2.PAYMENT_SOURCE_GRAM,
        amount_minor=100 * 10**6,
    )  # fmt: skip
    return Trial(
        request,
        PAYMENTS,
        [
            {"player_id": bea},
            {"source": cashier_pb2.PAYMENT_SOURCE_MPX, "amount_minor": 100 * 10**8},  # issue 41 exactly
            {"source": cashier_pb2.PAYMENT_SOURCE_MPX},
            {"amount_minor": 200 * 10**6},
        ],
        lambda: money(c, ann, bea),
    )


async def withdraw(c: Calls) -> Trial:
    cid, dan = fresh("cid"), fresh("dan")
    await fund(c, cid, dan)
    request = cashier_pb2.WithdrawRequest(
        payment_reference=fresh("out"),
        player_id=cid,
        source=cashier_pb2.PAYMENT_SOURCE_GRAM,
        amount_minor=10**8,
    )
    return Trial(
        request,
        PAYMENTS,
        [{"player_id": dan}, {"source": cashier_pb2.PAYMENT_SOURCE_MPX}, {"amount_minor": 2 * 10**8}],
        lambda: money(c, cid, dan),
    )


async def create_transfers(c: Calls) -> Trial:
    eve, fay, gus, hal = (fresh(name) for name in ("eve", "fay", "gus", "hal"))
    await fund(c, eve, fay, gus, hal)
    transfer = cashier_pb2.Transfer(
        transfer_id=fresh("adjust"), debit_account_id=f"wallet:GRAM:{eve}", credit_account_id=f"wallet:GRAM:{fay}",
        pool=GRAM, amount=7, kind=cashier_pb2.TRANSFER_KIND_ADJUSTMENT, reference="refund", table_id="t-1",
    )  # fmt: skip
    request = cashier_pb2.CreateTransfersRequest(transfers=[transfer])

    def status(reply: Message) -> str:
        assert isinstance(reply, cashier_pb2.CreateTransfersResponse)
        return cashier_pb2.TransferStatus.Name(reply.results[0].status)

    return Trial(
        request,
        TABLE,
        [
            {"transfers[0].debit_account_id": f"wallet:GRAM:{gus}"},
            {"transfers[0].credit_account_id": f"wallet:GRAM:{hal}"},
            {
                "transfers[0].pool": MPX,
                "transfers[0].debit_account_id": f"wallet:MPX:{eve}",
                "transfers[0].credit_account_id": f"wallet:MPX:{fay}",
            },
            {"transfers[0].amount": 8},
            {"transfers[0].kind": cashier_pb2.TRANSFER_KIND_HAND_RESULT},
            {"transfers[0].reference": "refund 2"},
            {"transfers[0].table_id": "t-2"},
        ],
        lambda: money(c, eve, fay, gus, hal),
        label=status,
        first=("TRANSFER_STATUS_CREATED",),
        conflict="TRANSFER_STATUS_EXISTS_WITH_DIFFERENT_FIELD",
        retried="TRANSFER_STATUS_EXISTS",
    )


async def seat_sessions(c: Calls, *tables: str) -> object:
    listed = []
    for table_id in tables:
        reply = await c.call(
            "cashier",
            "ListOpenSeatSessions",
            cashier_pb2.ListOpenSeatSessionsRequest(table_id=table_id),
            TABLE,
        )
        listed.append([(s.session_id, s.player_id, s.stack) for s in reply.seat_sessions])
    return listed


async def open_seat_session(c: Calls) -> Trial:
    ida, jon = fresh("ida"), fresh("jon")
    await fund(c, ida, jon)
    table, other = fresh("table"), fresh("table")
    request = cashier_pb2.OpenSeatSessionRequest(
        session_id=f"{table}/{fresh('sit')}", player_id=ida, table_id=table, seat_index=1, pool=GRAM,
        buy_in_amount=500, min_buy_in=100, max_buy_in=1000,
    )  # fmt: skip

    async def state() -> object:
        return await money(c, ida, jon), await seat_sessions(c, table, other)

    return Trial(
        request,
        TABLE,
        [
            {"player_id": jon},
            {"table_id": other},
            {"seat_index": 2},
            {"pool": MPX},
            {"buy_in_amount": 600},
            {"min_buy_in": 200},
            {"max_buy_in": 2000},
        ],
        state,
    )


async def settle_hand(c: Calls) -> Trial:
    table = fresh("table")
    players = [fresh(name) for name in ("kim", "lea", "max")]
    await fund(c, *players)
    sessions = []
    for index, name in enumerate(players):
        session_id = f"{table}/{name}"
        await c.call(
            "cashier",
            "OpenSeatSession",
            cashier_pb2.OpenSeatSessionRequest(
                session_id=session_id, player_id=name, table_id=table, seat_index=index, pool=GRAM,
                buy_in_amount=500, min_buy_in=100, max_buy_in=1000,
            ),
            TABLE,
        )  # fmt: skip
        sessions.append(session_id)
    first, second, third = sessions
    request = cashier_pb2.SettleHandRequest(
        hand_id=fresh("hand"),
        table_id=table,
        pool=GRAM,
        seat_results=[
            cashier_pb2.SeatResult(session_id=first, net_amount=-10),
            cashier_pb2.SeatResult(session_id=second, net_amount=8),
        ],
        rake=2,
    )

    async def state() -> object:
        return await money(c, *players), await seat_sessions(c, table)

    return Trial(
        request,
        TABLE,
        [
            {"table_id": fresh("table")},
            {"pool": MPX},
            {"seat_results[0].session_id": third},
            {"seat_results[0].net_amount": -9, "seat_results[1].net_amount": 7},
            # The results, rake and house bank change sum to zero: neither of the last two changes alone.
            {"rake": 3, "house_bank_amount": -1},
        ],
        state,
    )


async def house_and_money(c: Calls) -> object:
    houses = []
    for pool in (GRAM, MPX):
        reply = await c.call(
            "cashier", "GetHouseBalances", cashier_pb2.GetHouseBalancesRequest(pool=pool), ADMIN
        )
        houses.append((reply.bank_balance, reply.jackpot_balance))
    return houses, await money(c)


async def request_house_funding(c: Calls) -> Trial:
    request = cashier_pb2.RequestHouseFundingRequest(
        request_id=fresh("funding"), pool=GRAM, account=cashier_pb2.HOUSE_ACCOUNT_BANK, amount=1000,
        reason="float for the week",
    )  # fmt: skip

    async def state() -> object:
        listed = await c.call("cashier", "ListHouseFunding", cashier_pb2.ListHouseFundingRequest(), FINANCE_A)
        return [f.SerializeToString(deterministic=True) for f in listed.fundings], await house_and_money(c)

    return Trial(
        request,
        FINANCE_A,
        [
            {"pool": MPX},
            {"account": cashier_pb2.HOUSE_ACCOUNT_JACKPOT},
            {"amount": 2000},
            {"amount": -1000},
            {"reason": "float for the month"},
        ],
        state,
    )


async def decide_house_funding(c: Calls) -> Trial:
    asked, other = fresh("funding"), fresh("funding")
    for request_id in (asked, other):
        await c.call(
            "cashier",
            "RequestHouseFunding",
            cashier_pb2.RequestHouseFundingRequest(
                request_id=request_id, pool=GRAM, account=cashier_pb2.HOUSE_ACCOUNT_BANK, amount=1000,
                reason="float for the week",
            ),
            FINANCE_A,
        )  # fmt: skip
    request = cashier_pb2.DecideHouseFundingRequest(
        decision_id=fresh("decision"), request_id=asked, approve=True, reason="checked against the plan"
    )
    return Trial(
        request,
        FINANCE_B,
        [{"request_id": other}, {"approve": False}, {"reason": "checked twice"}],
        lambda: house_and_money(c),
    )


async def holds(c: Calls, *players: str) -> object:
    """What each player's holds stop, read by calls refused either way: a buy-in beyond the wallet
    (PLAYER_ON_HOLD under a full hold, else INSUFFICIENT_FUNDS, nothing recorded) and a payout beyond
    it (WITHDRAWAL_HELD_FOR_REVIEW under either hold, else a recorded refusal that moves no chip)."""
    found = []
    for name in players:
        seat = cashier_pb2.OpenSeatSessionRequest(
            session_id=fresh("probe"), player_id=name, table_id=fresh("probe"), seat_index=0, pool=GRAM,
            buy_in_amount=10**17, min_buy_in=1, max_buy_in=10**17,
        )  # fmt: skip
        payout = cashier_pb2.WithdrawRequest(
            payment_reference=fresh("probe"), player_id=name, source=cashier_pb2.PAYMENT_SOURCE_GRAM,
            amount_minor=10**18,
        )  # fmt: skip
        seats_stopped, _ = await c.outcome("cashier", "OpenSeatSession", seat, TABLE)
        payouts_stopped, _ = await c.outcome("cashier", "Withdraw", payout, PAYMENTS)
        found.append((name, seats_stopped, payouts_stopped))
    return found


async def set_player_hold(c: Calls) -> Trial:
    nia, oto = fresh("nia"), fresh("oto")
    # A withdrawals hold first, so a full hold applied by mistake would show (it stops seats too).
    request = cashier_pb2.SetPlayerHoldRequest(
        request_id=fresh("hold"), player_id=nia, held=True, reason="chip dumping review",
        scope=cashier_pb2.HOLD_SCOPE_WITHDRAWALS,
    )  # fmt: skip
    return Trial(
        request,
        HISTORY,
        [
            {"player_id": oto},
            {"held": False},
            {"reason": "collusion review"},
            {"scope": cashier_pb2.HOLD_SCOPE_UNSPECIFIED},
        ],
        lambda: holds(c, nia, oto),
    )


async def self_limits_of(c: Calls, *names: str) -> object:
    """What each player set on themself: limits (with pending loosenings), reminder, break."""
    found = []
    for name in names:
        reply = await c.call("cashier", "GetSelfLimits", cashier_pb2.GetSelfLimitsRequest(), player(name))
        found.append(
            (
                [(x.pool, x.kind, x.amount, x.pending_amount, x.pending_time.seconds) for x in reply.limits],
                reply.session_reminder_minutes,
                (reply.active_break.kind, reply.active_break.end_time.seconds),
            )
        )
    return found


async def set_self_limit(c: Calls) -> Trial:
    pia = fresh("pia")
    request = cashier_pb2.SetSelfLimitRequest(
        request_id=fresh("limit"), pool=GRAM, kind=cashier_pb2.SELF_LIMIT_KIND_PURCHASE_DAILY, amount=500
    )
    return Trial(
        request,
        player(pia),
        [{"pool": MPX}, {"kind": cashier_pb2.SELF_LIMIT_KIND_LOSS_DAILY}, {"amount": 400}],
        lambda: self_limits_of(c, pia),
    )


async def set_session_reminder(c: Calls) -> Trial:
    quy = fresh("quy")
    request = cashier_pb2.SetSessionReminderRequest(request_id=fresh("reminder"), minutes=60)
    return Trial(request, player(quy), [{"minutes": 90}], lambda: self_limits_of(c, quy))


async def start_break(c: Calls) -> Trial:
    rae = fresh("rae")
    request = cashier_pb2.StartBreakRequest(
        request_id=fresh("break"), kind=cashier_pb2.BREAK_KIND_COOLING_OFF, days=2
    )
    return Trial(
        request,
        player(rae),
        # Each would extend the break if the id did not bind it.
        [{"days": 3}, {"kind": cashier_pb2.BREAK_KIND_SELF_EXCLUSION, "days": 200}],
        lambda: self_limits_of(c, rae),
    )


# The lobby -----------------------------------------------------------------------------------------


def cash_room(room_id: str, seats: int = 6) -> lobby_pb2.Room:
    return lobby_pb2.Room(
        room_id=room_id, display_name="idempotency", variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM, pool=GRAM,
        seats_per_table=seats, blinds=lobby_pb2.BlindStakes(small_blind=5, big_blind=10, step=5),
        min_buy_in=200, max_buy_in=2000, rake_basis_points=250, rake_cap=10,
    )  # fmt: skip


async def new_room(c: Calls, seats: int = 6) -> str:
    room_id = fresh("idem")
    request = lobby_pb2.CreateRoomRequest(
        request_id=fresh("create"), room=cash_room(room_id, seats), table_count=1
    )
    await c.call("lobby", "CreateRoom", request, ADMIN)
    return room_id


async def rooms(c: Calls, *room_ids: str) -> object:
    found: list[object] = []
    for room_id in room_ids:
        label, reply = await c.outcome("lobby", "GetRoom", lobby_pb2.GetRoomRequest(room_id=room_id), ADMIN)
        if isinstance(reply, lobby_pb2.GetRoomResponse):
            reply.room.ClearField("occupancy")  # live figures of the shards
            found.append(reply.room.SerializeToString(deterministic=True))
        else:
            found.append(label)
    return found


def room_variants(other_room_id: str) -> list[dict[str, Any]]:
    """A valid room differing from `cash_room` in each field in turn (the stakes with the variant)."""
    house = {"room.min_buy_in": 0, "room.max_buy_in": 0, "room.rake_basis_points": 0, "room.rake_cap": 0}
    return [
        {"room.room_id": other_room_id},
        {"room.display_name": "idempotency 2"},
        {
            "room.variant": common_pb2.GAME_VARIANT_FIXED_LIMIT_HOLDEM,
            "room.limits": lobby_pb2.LimitStakes(small_bet=10, big_bet=20),
        },
        {
            "room.variant": common_pb2.GAME_VARIANT_CASINO_HOLDEM,
            "room.antes": lobby_pb2.AnteStakes(min_ante=10, max_ante=100, max_payout=50_000),
            **house,
        },
        {"room.pool": MPX},
        {"room.seats_per_table": 9},
        {"room.blinds.small_blind": 4},
        {"room.blinds.big_blind": 20},
        {"room.blinds.step": 25},
        {"room.min_buy_in": 300},
        {"room.max_buy_in": 3000},
        {"room.private": True},
        {"room.rake_basis_points": 100},
        {"room.rake_cap": 20},
        {"room.rake_no_flop_no_drop": True},
        {"room.table_count": 3},
    ]


ROOM_OUTPUT = {
    f"room.{name}": OUTPUT_ONLY
    for name in ("create_time", "update_time", "revision", "occupancy", "disabled")
}


async def create_room(c: Calls) -> Trial:
    room_id, other = fresh("idem"), fresh("idem")
    request = lobby_pb2.CreateRoomRequest(request_id=fresh("create"), room=cash_room(room_id), table_count=1)
    return Trial(
        request, ADMIN, [*room_variants(other), {"table_count": 2}], lambda: rooms(c, room_id, other)
    )


async def update_room(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    renamed = cash_room(room_id)
    renamed.display_name = "renamed"
    request = lobby_pb2.UpdateRoomRequest(request_id=fresh("update"), room=renamed)
    variants = room_variants(other)
    variants[1] = {"room.display_name": "renamed again"}
    return Trial(request, ADMIN, variants, lambda: rooms(c, room_id, other))


async def disable_room(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    request = lobby_pb2.DisableRoomRequest(request_id=fresh("disable"), room_id=room_id)
    return Trial(request, ADMIN, [{"room_id": other}], lambda: rooms(c, room_id, other))


async def enable_room(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    for disabled in (room_id, other):
        await c.call(
            "lobby",
            "DisableRoom",
            lobby_pb2.DisableRoomRequest(request_id=fresh("off"), room_id=disabled),
            ADMIN,
        )
    request = lobby_pb2.EnableRoomRequest(request_id=fresh("enable"), room_id=room_id)
    return Trial(request, ADMIN, [{"room_id": other}], lambda: rooms(c, room_id, other))


async def set_maintenance(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    request = lobby_pb2.SetMaintenanceRequest(
        request_id=fresh("maintenance"), room_id=room_id,
        maintenance=lobby_pb2.Maintenance(no_new_seats=True, message="deploy at noon"),
    )  # fmt: skip

    async def state() -> object:
        switches = []
        for scope in (room_id, other):
            reply = await c.call(
                "lobby", "GetMaintenance", lobby_pb2.GetMaintenanceRequest(room_id=scope), ADMIN
            )
            switches.append(reply.room.SerializeToString(deterministic=True))
        return switches

    return Trial(
        request,
        ADMIN,
        [
            {"room_id": other},
            {"maintenance.no_new_seats": False},
            {"maintenance.no_new_hands": True},
            {"maintenance.message": "deploy at one"},
            # A window (the first request has none): a start, an end, each binds the id.
            {"maintenance.start_time": Timestamp(seconds=int(time.time()) + 3_600)},
            {"maintenance.end_time": Timestamp(seconds=int(time.time()) + 7_200)},
        ],
        state,
    )


async def allow_lists(c: Calls, *room_ids: str) -> object:
    lists = []
    for room_id in room_ids:
        reply = await c.call("lobby", "ListAllowList", lobby_pb2.ListAllowListRequest(room_id=room_id), ADMIN)
        lists.append(list(reply.player_ids))
    return lists


async def update_allow_list(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    pia, quinn = fresh("pia"), fresh("quinn")
    request = lobby_pb2.UpdateAllowListRequest(
        request_id=fresh("allow"), room_id=room_id, add_player_ids=[pia]
    )
    return Trial(
        request,
        ADMIN,
        [{"room_id": other}, {"add_player_ids": [quinn]}, {"remove_player_ids": [pia]}],
        lambda: allow_lists(c, room_id, other),
    )


async def create_invite_code(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    request = lobby_pb2.CreateInviteCodeRequest(request_id=fresh("invite"), room_id=room_id, max_uses=5)
    later = Timestamp(seconds=int(time.time()) + 86_400)

    async def state() -> object:
        # Codes are not listed; the first request sent again answers the same code (checked by the
        # runner), and a second code for either room would open it to whoever held one.
        return await allow_lists(c, room_id, other)

    return Trial(request, ADMIN, [{"room_id": other}, {"max_uses": 6}, {"expire_time": later}], state)


async def redeem_invite_code(c: Calls) -> Trial:
    room_id, other = await new_room(c), await new_room(c)
    codes = []
    for scope in (room_id, other):
        reply = await c.call(
            "lobby",
            "CreateInviteCode",
            lobby_pb2.CreateInviteCodeRequest(request_id=fresh("invite"), room_id=scope, max_uses=5),
            ADMIN,
        )
        codes.append(reply.code)
    rex = fresh("rex")
    request = lobby_pb2.RedeemInviteCodeRequest(request_id=fresh("redeem"), code=codes[0])
    return Trial(request, player(rex), [{"code": codes[1]}], lambda: allow_lists(c, room_id, other))


async def set_display_name(c: Calls) -> Trial:
    sue = player(fresh("sue"))
    request = lobby_pb2.SetDisplayNameRequest(request_id=fresh("name"), display_name=fresh("Sue"))

    async def state() -> object:
        reply = await c.call("lobby", "GetMyProfile", lobby_pb2.GetMyProfileRequest(), sue)
        return reply.profile.display_name, reply.profile.update_time.ToJsonString()

    return Trial(request, sue, [{"display_name": fresh("Sue")}], state)


async def _avatar_state(c: Calls, who: Caller) -> object:
    reply = await c.call("lobby", "GetMyProfile", lobby_pb2.GetMyProfileRequest(), who)
    profile = reply.profile
    return profile.avatar_url, profile.show_avatar, profile.update_time.ToJsonString()


async def set_show_avatar(c: Calls) -> Trial:
    tia = player(fresh("tia"))
    request = lobby_pb2.SetShowAvatarRequest(request_id=fresh("avatar"), show_avatar=False)
    return Trial(request, tia, [{"show_avatar": True}], lambda: _avatar_state(c, tia))


async def record_sign_in_photo(c: Calls) -> Trial:
    uma = player(fresh("uma"))
    photo = "https://t.me/i/userpic/320/0HsMKYOWlgnBA2Httlfb3NBMp50KmdI4fD8tsNZu2js.jpg"
    request = lobby_pb2.RecordSignInPhotoRequest(request_id=fresh("sign-in"), photo_url=photo)
    other = "https://t.me/i/userpic/320/cm409T17pD0hEWX5m_tmMBGNTbHnhP0b6tZG6o887b0.svg"
    return Trial(request, uma, [{"photo_url": other}], lambda: _avatar_state(c, uma))


# The table -----------------------------------------------------------------------------------------


async def seated(c: Calls, table_id: str, *players: str) -> None:
    await fund(c, *players)
    for name in players:
        request = table_pb2.SitDownRequest(request_id=fresh("sit"), table_id=table_id, buy_in=500)
        await c.call("table", "SitDown", request, player(name))


async def leave(c: Calls, table_id: str, *players: str) -> None:
    for name in players:
        request = table_pb2.LeaveTableRequest(request_id=fresh("leave"), table_id=table_id)
        await c.outcome("table", "LeaveTable", request, player(name))


async def seats(c: Calls, table_id: str, viewer: str) -> object:
    """The table as `viewer` sees it, without the clocks (deadlines, the view's time, time banks)."""
    view = (
        await c.call(
            "table", "GetTableSnapshot", table_pb2.GetTableSnapshotRequest(table_id=table_id), player(viewer)
        )
    ).view
    for name in ("as_of", "to_act_deadline", "seed_phase_deadline"):
        view.ClearField(name)
    view.legal_actions.ClearField("deadline")
    for seat in view.seats:
        seat.ClearField("time_bank_seconds")
    if view.house.HasField("round"):
        view.house.round.ClearField("deadline")
    # A house table commits the player's next round ahead, on its own time.
    view.house.ClearField("next_round_id")
    view.house.ClearField("next_seed_commitment")
    return view.SerializeToString(deterministic=True)


async def sit_down(c: Calls) -> Trial:
    table_id = f"{await new_room(c)}.1"
    sam = fresh("sam")
    await fund(c, sam)
    request = table_pb2.SitDownRequest(request_id=fresh("sit"), table_id=table_id, seat=1, buy_in=500)

    async def state() -> object:
        return await money(c, sam), await seats(c, table_id, sam)

    return Trial(
        request,
        player(sam),
        [{"seat": 2}, {"buy_in": 600}, {"wait_for_big_blind": True}],
        state,
        cleanup=lambda: leave(c, table_id, sam),
    )


async def sit_in(c: Calls) -> Trial:
    table_id = f"{await new_room(c)}.1"
    tia = fresh("tia")
    await seated(c, table_id, tia)
    await c.call(
        "table", "SitOut", table_pb2.SitOutRequest(request_id=fresh("out"), table_id=table_id), player(tia)
    )
    request = table_pb2.SitInRequest(request_id=fresh("in"), table_id=table_id)
    return Trial(
        request,
        player(tia),
        [{"wait_for_big_blind": True}],
        lambda: seats(c, table_id, tia),
        cleanup=lambda: leave(c, table_id, tia),
    )


async def send_chat(c: Calls) -> Trial:
    table_id = f"{await new_room(c)}.1"
    uma = fresh("uma")
    await seated(c, table_id, uma)
    request = table_pb2.SendChatRequest(request_id=fresh("chat"), table_id=table_id, text="good luck")
    return Trial(
        request,
        player(uma),
        [{"text": "good luck all"}, {"sticker_id": "thumbs-up"}],
        lambda: seats(c, table_id, uma),
        cleanup=lambda: leave(c, table_id, uma),
    )


async def to_act(c: Calls, table_id: str, players: tuple[str, ...]) -> tuple[str, str, set[int]]:
    """The player to act once a hand runs, the hand, and the actions open to them."""
    for _ in range(400):
        for name in players:
            request = table_pb2.GetTableSnapshotRequest(table_id=table_id)
            view = (await c.call("table", "GetTableSnapshot", request, player(name))).view
            if view.hand_id and view.legal_actions.actions:
                return name, view.hand_id, set(view.legal_actions.actions)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no hand started at {table_id}")


async def act(c: Calls) -> Trial:
    """A real hand heads-up: the player to act calls; the same id for another hand, action or
    amount is refused and the hand is where the call left it."""
    table_id = f"{await new_room(c, seats=2)}.1"
    pair = fresh("vic"), fresh("wes")
    await seated(c, table_id, *pair)
    actor, hand_id, legal = await to_act(c, table_id, pair)
    action = (
        table_pb2.ACTION_KIND_CALL if table_pb2.ACTION_KIND_CALL in legal else table_pb2.ACTION_KIND_CHECK
    )
    request = table_pb2.ActRequest(request_id=fresh("act"), table_id=table_id, hand_id=hand_id, action=action)
    return Trial(
        request,
        player(actor),
        [{"hand_id": f"{hand_id}-other"}, {"action": table_pb2.ACTION_KIND_FOLD}, {"amount": 40}],
        lambda: seats(c, table_id, actor),
        cleanup=lambda: leave(c, table_id, *pair),
    )


async def set_player_seed(c: Calls) -> Trial:
    """A player alone at a table: no hand is open for seeds, and the refusal is the first answer the
    table keeps (docs/table.md: a refusal included); another seed or a hash under its id conflicts."""
    table_id = f"{await new_room(c)}.1"
    yan = fresh("yan")
    await seated(c, table_id, yan)
    request = table_pb2.SetPlayerSeedRequest(
        request_id=fresh("seed"), table_id=table_id, client_seed="lucky seven"
    )
    return Trial(
        request,
        player(yan),
        [{"client_seed": "lucky eight"}, {"client_seed": "", "client_seed_hash": "ab" * 32}],
        lambda: seats(c, table_id, yan),
        first=("OK", "FAILED_PRECONDITION ENTROPY_CLOSED"),
        cleanup=lambda: leave(c, table_id, yan),
    )


async def fund_house_bank(c: Calls) -> None:
    """The bank the house games of this test pay from: asked by one member of finance, approved by another."""
    request = cashier_pb2.RequestHouseFundingRequest(
        request_id="idempotency-house-bank", pool=GRAM, account=cashier_pb2.HOUSE_ACCOUNT_BANK,
        amount=10_000_000, reason="house games of the idempotency test",
    )  # fmt: skip
    await c.call("cashier", "RequestHouseFunding", request, FINANCE_A)
    decision = cashier_pb2.DecideHouseFundingRequest(
        decision_id="idempotency-house-bank-ok",
        request_id=request.request_id,
        approve=True,
        reason="approved",
    )
    await c.call("cashier", "DecideHouseFunding", decision, FINANCE_B)


async def house_state(c: Calls, name: str) -> object:
    house = await c.call("cashier", "GetHouseBalances", cashier_pb2.GetHouseBalancesRequest(pool=GRAM), ADMIN)
    return (
        await money(c, name),
        house.SerializeToString(deterministic=True),
        await seats(c, HOUSE_TABLE, name),
    )


async def fold_round(c: Calls, name: str) -> None:
    """Finish the player's open round, if any (its settlement is in before the answer)."""
    snapshot = table_pb2.GetTableSnapshotRequest(table_id=HOUSE_TABLE)
    view = (await c.call("table", "GetTableSnapshot", snapshot, player(name))).view.house.round
    while view.round_id and view.phase != "COMPLETE":
        decision = table_pb2.MakeHouseDecisionRequest(
            request_id=fresh("fold"), table_id=HOUSE_TABLE, round_id=view.round_id, box=view.box_to_act or 1,
            decision=table_pb2.HOUSE_DECISION_KIND_FOLD,
        )  # fmt: skip
        view = (await c.call("table", "MakeHouseDecision", decision, player(name))).round


async def place_house_bets(c: Calls) -> Trial:
    await fund_house_bank(c)
    zoe = fresh("zoe")
    await fund(c, zoe)
    request = table_pb2.PlaceHouseBetsRequest(
        request_id=fresh("bets"), table_id=HOUSE_TABLE, boxes=[table_pb2.HouseBox(box=1, ante=10)]
    )
    return Trial(
        request,
        player(zoe),
        [{"boxes[0].box": 2}, {"boxes[0].ante": 20}, {"boxes[0].dark": True}, {"boxes[0].bonus_bet": 5}],
        lambda: house_state(c, zoe),
        cleanup=lambda: fold_round(c, zoe),
    )


async def make_house_decision(c: Calls) -> Trial:
    await fund_house_bank(c)
    abe = fresh("abe")
    await fund(c, abe)
    bets = table_pb2.PlaceHouseBetsRequest(
        request_id=fresh("bets"), table_id=HOUSE_TABLE, boxes=[table_pb2.HouseBox(box=1, ante=10)]
    )
    view = (await c.call("table", "PlaceHouseBets", bets, player(abe))).round
    request = table_pb2.MakeHouseDecisionRequest(
        request_id=fresh("decide"), table_id=HOUSE_TABLE, round_id=view.round_id, box=view.box_to_act or 1,
        decision=table_pb2.HOUSE_DECISION_KIND_FOLD,
    )  # fmt: skip
    return Trial(
        request,
        player(abe),
        [
            {"round_id": f"{view.round_id}-other"},
            {"box": (view.box_to_act or 1) + 1},
            {"decision": table_pb2.HOUSE_DECISION_KIND_CALL},
            {"card_indexes": [0]},
            {"amount": 5},
        ],
        lambda: house_state(c, abe),
        cleanup=lambda: fold_round(c, abe),
    )


async def mute_player(c: Calls) -> Trial:
    table_id = f"{await new_room(c)}.1"
    bo, cy = fresh("bo"), fresh("cy")
    await seated(c, table_id, bo, cy)

    async def state() -> object:
        # A mute shows as the chat's refusal; a message that goes through is only a message.
        said = []
        for name in (bo, cy):
            chat = table_pb2.SendChatRequest(request_id=fresh("hello"), table_id=table_id, text="hello")
            said.append((await c.outcome("table", "SendChat", chat, player(name)))[0])
        return said

    request = table_pb2.MutePlayerRequest(request_id=fresh("mute"), player_id=bo, duration_seconds=600)
    return Trial(
        request,
        ADMIN,
        [{"player_id": cy}, {"table_id": table_id}, {"duration_seconds": 1200}],
        state,
        cleanup=lambda: leave(c, table_id, bo, cy),
    )


async def close_table(c: Calls) -> Trial:
    table_id, other = f"{await new_room(c)}.1", f"{await new_room(c)}.1"
    dee = fresh("dee")
    await seated(c, other, dee)  # one player, no hand: the other table as it stays

    async def state() -> object:
        return await seats(c, other, dee)

    request = table_pb2.CloseTableRequest(request_id=fresh("close"), table_id=table_id)
    return Trial(request, ADMIN, [{"table_id": other}], state, cleanup=lambda: leave(c, other, dee))


# History and fairness (where cheap) ----------------------------------------------------------------


async def hold_player(c: Calls) -> Trial:
    dee, eli = fresh("dee"), fresh("eli")
    request = history_pb2.HoldPlayerRequest(
        request_id=fresh("hold"), player_id=dee, reason="chip dumping review"
    )
    return Trial(
        request, ADMIN, [{"player_id": eli}, {"reason": "collusion review"}], lambda: holds(c, dee, eli)
    )


async def release_player(c: Calls) -> Trial:
    fox, gil = fresh("fox"), fresh("gil")
    for name in (fox, gil):
        hold = history_pb2.HoldPlayerRequest(request_id=fresh("hold"), player_id=name, reason="review")
        await c.call("history", "HoldPlayer", hold, ADMIN)
    request = history_pb2.ReleasePlayerRequest(request_id=fresh("release"), player_id=fox, reason="cleared")
    return Trial(
        request,
        ADMIN,
        [{"player_id": gil}, {"reason": "cleared on appeal"}],
        lambda: holds_and_releases(c, fox, gil),
    )


async def releases_of(c: Calls, *players: str) -> object:
    """The release requests (four-eyes, issue 38) naming these players, as the queue lists them."""
    reply = await c.call(
        "history",
        "ListReleaseRequests",
        history_pb2.ListReleaseRequestsRequest(page=common_pb2.PageRequest(page_size=500)),
        FINANCE_A,
    )
    return sorted(r.SerializeToString(deterministic=True) for r in reply.releases if r.player_id in players)


async def holds_and_releases(c: Calls, *players: str) -> object:
    return (await holds(c, *players), await releases_of(c, *players))


async def decide_release(c: Calls) -> Trial:
    hal, ivy = fresh("hal"), fresh("ivy")
    asked = {}
    for name in (hal, ivy):
        await c.call(
            "history",
            "HoldPlayer",
            history_pb2.HoldPlayerRequest(request_id=fresh("hold"), player_id=name, reason="review"),
            ADMIN,
        )
        asked[name] = fresh("release")
        await c.call(
            "history",
            "ReleasePlayer",
            history_pb2.ReleasePlayerRequest(request_id=asked[name], player_id=name, reason="cleared"),
            ADMIN,
        )
    request = history_pb2.DecideReleaseRequest(
        decision_id=fresh("decision"), request_id=asked[hal], approve=True, reason="checked"
    )
    return Trial(
        request,
        FINANCE_B,
        [{"request_id": asked[ivy]}, {"approve": False}, {"reason": "checked twice"}],
        lambda: holds_and_releases(c, hal, ivy),
    )


async def set_staff_member(c: Calls) -> Trial:
    # The staff directory (docs/backoffice.md "Adding a staff member"): an administrator adds a person.
    tag = uuid.uuid4().hex[:8]
    telegram_id = int(tag, 16) + 1
    request = history_pb2.SetStaffMemberRequest(
        request_id=fresh("staff"),
        telegram_id=telegram_id,
        name=f"staff-{tag}",
        roles=["support"],
        active=True,
    )

    async def state() -> object:
        reply = await c.call(
            "history", "ListStaff", history_pb2.ListStaffRequest(include_inactive=True), ADMIN
        )
        return sorted(
            (m.telegram_id, m.name, tuple(m.roles), m.active)
            for m in reply.members
            if m.telegram_id in (telegram_id, telegram_id + 1)
        )

    return Trial(
        request,
        ADMIN,
        [
            {"telegram_id": telegram_id + 1},
            {"name": f"staff-{tag}-2"},
            {"roles": ["risk"]},
            {"active": False},
        ],
        state,
    )


async def record_audit_event(c: Calls) -> Trial:
    # An admin records kinds of its own prefix, as itself (docs/history.md "Audit trail").
    kind = f"OPERATOR_IDEMPOTENCY_{uuid.uuid4().hex[:8].upper()}"
    event = history_pb2.AuditEvent(
        event_id=fresh("event"), kind=kind, subject="room-1", details="changed the room",
        player_ids=["hal"], table_id="table-1", hand_ids=["hand-1"],
    )  # fmt: skip
    request = history_pb2.RecordAuditEventRequest(event=event)

    async def state() -> object:
        reply = await c.call(
            "history", "ListAuditEvents", history_pb2.ListAuditEventsRequest(kind=kind), ADMIN
        )
        return [e.SerializeToString(deterministic=True) for e in reply.events]

    return Trial(
        request,
        ADMIN,
        [
            {"event.kind": f"{kind}_2"},
            {"event.subject": "room-2"},
            {"event.details": "changed the room again"},
            {"event.player_ids": ["ivy"]},
            {"event.table_id": "table-2"},
            {"event.hand_ids": ["hand-2"]},
        ],
        state,
    )


async def record_hand(c: Calls) -> Trial:
    record = record_of(
        fold_muck_showdown_hand([fresh(name) for name in ("ada", "ben", "cal", "dot")]),
        table_id=fresh("table"),
        hand_id=fresh("hand"),
    )
    request = history_pb2.RecordHandRequest(hand=record)

    async def state() -> object:
        reply = await c.call("history", "GetHand", history_pb2.GetHandRequest(hand_id=record.hand_id), ADMIN)
        return reply.SerializeToString(deterministic=True)

    return Trial(
        request,
        TABLE,
        [
            {"hand.table_id": fresh("table")},
            {"hand.room_id": "another-room"},
            {"hand.end_time": Timestamp(seconds=record.end_time.seconds + 5)},
        ],
        state,
    )


async def commitments(c: Calls, *tables: str) -> object:
    chains = []
    for table_id in tables:
        request = fairness_pb2.ListTableCommitmentsRequest(table_id=table_id)
        reply = await c.call("fairness", "ListTableCommitments", request, ADMIN)
        chains.append(reply.SerializeToString(deterministic=True))
    return chains


async def commit(c: Calls, version: int, *, private_room: bool = False) -> tuple[str, str]:
    table_id = fresh("chain")
    request = fairness_pb2.CommitHandRequest(
        request_id=fresh("commit"), table_id=table_id, shuffle_version=version, private_room=private_room
    )
    return table_id, (await c.call("fairness", "CommitHand", request, TABLE)).commitment.hand_id


async def hand_record(c: Calls, hand_id: str) -> object:
    reply = await c.call(
        "fairness", "GetCommitment", fairness_pb2.GetCommitmentRequest(hand_id=hand_id), ADMIN
    )
    return reply.SerializeToString(deterministic=True)


async def commit_hand(c: Calls) -> Trial:
    table_id, other = fresh("chain"), fresh("chain")
    request = fairness_pb2.CommitHandRequest(
        request_id=fresh("commit"), table_id=table_id, shuffle_version=3, participant_ids=["ann", "bob"]
    )
    return Trial(
        request,
        TABLE,
        [
            {"table_id": other},
            {"deal_now": True},
            {"participant_ids": ["ann", "bob", "carl"]},
            {"participant_ids": ["ann"]},
            {"participants_only": True},
            {"shuffle_version": 2},
            {"private_room": True},
        ],
        lambda: commitments(c, table_id, other),
    )


async def add_player_entropy(c: Calls) -> Trial:
    _, hand_id = await commit(c, 2)
    request = fairness_pb2.AddPlayerEntropyRequest(
        hand_id=hand_id, seat=1, player_id="ann", client_seed=b"lucky"
    )
    return Trial(
        request,
        TABLE,
        [{"player_id": "bob"}, {"client_seed": b"lucky 2"}],
        lambda: hand_record(c, hand_id),
    )


async def seal_hand(c: Calls) -> Trial:
    # A private room's hand exists only for the players dealt in (and admins), so who may read it
    # shows in what each player's GetCommitment answers: a seal that added carl would let him in.
    _, hand_id = await commit(c, 2, private_room=True)
    request = fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["ann", "bob"])
    late = fairness_pb2.ClientSeed(seat=1, player_id="ann", client_seed=b"late seed")

    async def state() -> object:
        readers = []
        for name in ("ann", "bob", "carl"):
            lookup = fairness_pb2.GetCommitmentRequest(hand_id=hand_id)
            readers.append((await c.outcome("fairness", "GetCommitment", lookup, player(name)))[0])
        return await hand_record(c, hand_id), readers

    return Trial(
        request,
        TABLE,
        [
            {"client_seeds": [late]},
            {"participant_ids": ["ann", "bob", "carl"]},
            {"participant_ids": ["ann"]},
        ],
        state,
    )


async def reveal_hand(c: Calls) -> Trial:
    _, hand_id = await commit(c, 3)
    seal = fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["ann", "bob"])
    await c.call("fairness", "SealHand", seal, TABLE)
    request = fairness_pb2.RevealHandRequest(
        hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED, public_positions=[10, 11, 12, 13, 14],
        seen=[fairness_pb2.SeenPositions(player_id="ann", positions=[0, 1]),
              fairness_pb2.SeenPositions(player_id="bob", positions=[2, 3])],
    )  # fmt: skip

    async def state() -> object:
        reveal = await c.call("fairness", "GetReveal", fairness_pb2.GetRevealRequest(hand_id=hand_id), ADMIN)
        return await hand_record(c, hand_id), reveal.SerializeToString(deterministic=True)

    return Trial(
        request,
        TABLE,
        [
            {"outcome": fairness_pb2.HAND_OUTCOME_VOIDED},
            {"public_positions": [10, 11, 12, 13, 14, 15]},
            {"seen[1].positions": [2, 4]},
        ],
        state,
    )


# The classification --------------------------------------------------------------------------------

RPCS = (
    Rpc("cashier", "Purchase", ("payment_reference",), purchase),
    Rpc("cashier", "Withdraw", ("payment_reference",), withdraw),
    Rpc(
        "cashier",
        "CreateTransfers",
        ("transfers.transfer_id",),
        create_transfers,
        exempt={
            "transfers.create_time": OUTPUT_ONLY,
            "linked": "an option of the batch, not a field of a transfer: each transfer's id binds that "
            "transfer, and a recorded transfer is answered as recorded whatever batch it comes in",
            "round_in_play": "an option of the batch, as `linked`: it only decides whether new house "
            "stakes answer to a hold or a break; a recorded transfer is answered as recorded whatever "
            "batch it comes in",
        },
    ),
    Rpc("cashier", "OpenSeatSession", ("session_id",), open_seat_session),
    Rpc("cashier", "SettleHand", ("hand_id",), settle_hand),
    Rpc("cashier", "RequestHouseFunding", ("request_id",), request_house_funding),
    Rpc("cashier", "DecideHouseFunding", ("decision_id",), decide_house_funding),
    Rpc("cashier", "SetPlayerHold", ("request_id",), set_player_hold),
    Rpc("cashier", "SetSelfLimit", ("request_id",), set_self_limit),
    Rpc("cashier", "SetSessionReminder", ("request_id",), set_session_reminder),
    Rpc("cashier", "StartBreak", ("request_id",), start_break),
    Rpc("lobby", "CreateRoom", ("request_id",), create_room, exempt=ROOM_OUTPUT),
    Rpc("lobby", "UpdateRoom", ("request_id",), update_room, exempt=ROOM_OUTPUT),
    Rpc("lobby", "DisableRoom", ("request_id",), disable_room),
    Rpc("lobby", "EnableRoom", ("request_id",), enable_room),
    Rpc(
        "lobby",
        "SetMaintenance",
        ("request_id",),
        set_maintenance,
        exempt={
            "maintenance.set_by": OUTPUT_ONLY,
            "maintenance.update_time": OUTPUT_ONLY,
            "maintenance.in_force": OUTPUT_ONLY,
        },
    ),
    Rpc("lobby", "UpdateAllowList", ("request_id",), update_allow_list),
    Rpc("lobby", "CreateInviteCode", ("request_id",), create_invite_code),
    Rpc("lobby", "RedeemInviteCode", ("request_id",), redeem_invite_code),
    Rpc("lobby", "SetDisplayName", ("request_id",), set_display_name),
    Rpc("lobby", "SetShowAvatar", ("request_id",), set_show_avatar),
    Rpc("lobby", "RecordSignInPhoto", ("request_id",), record_sign_in_photo),
    Rpc("table", "SitDown", ("request_id",), sit_down, exempt={"table_id": TABLE_ADDRESS}),
    Rpc("table", "SitIn", ("request_id",), sit_in, exempt={"table_id": TABLE_ADDRESS}),
    Rpc("table", "SendChat", ("request_id",), send_chat, exempt={"table_id": TABLE_ADDRESS}),
    Rpc("table", "Act", ("request_id",), act, exempt={"table_id": TABLE_ADDRESS}),
    Rpc("table", "SetPlayerSeed", ("request_id",), set_player_seed, exempt={"table_id": TABLE_ADDRESS}),
    Rpc("table", "PlaceHouseBets", ("request_id",), place_house_bets, exempt={"table_id": TABLE_ADDRESS}),
    Rpc(
        "table", "MakeHouseDecision", ("request_id",), make_house_decision, exempt={"table_id": TABLE_ADDRESS}
    ),
    # An admin's mute is kept by the shard, not a table: its table id (empty: every table) is bound.
    Rpc("table", "MutePlayer", ("request_id",), mute_player),
    Rpc("table", "CloseTable", ("request_id",), close_table),
    Rpc(
        "history",
        "HoldPlayer",
        ("request_id",),
        hold_player,
        exempt={"case_id": "only the detectors open a case; an unknown one is NOT_FOUND and changes nothing"},
        complete=False,
    ),
    Rpc(
        "history",
        "ReleasePlayer",
        ("request_id",),
        release_player,
        exempt={"case_id": "only the detectors open a case; an unknown one is NOT_FOUND and changes nothing"},
        complete=False,
    ),
    Rpc("history", "DecideRelease", ("decision_id",), decide_release),
    Rpc("history", "SetStaffMember", ("request_id",), set_staff_member),
    Rpc(
        "history",
        "RecordAuditEvent",
        ("event.event_id",),
        record_audit_event,
        exempt={
            "event.actor": "the caller's verified identity: any other actor is refused first",
            "event.time": "a staff member's record is dated by the server: a time is refused first",
        },
        complete=False,
    ),
    Rpc("history", "RecordHand", ("hand.hand_id",), record_hand, complete=False),
    Rpc(
        "fairness",
        "CommitHand",
        ("request_id",),
        commit_hand,
        complete=False,
    ),
    Rpc(
        "fairness",
        "AddPlayerEntropy",
        ("hand_id", "seat"),
        add_player_entropy,
        exempt={"client_seed_hash": "version 3 only; this hand is version 2"},
        complete=False,
    ),
    Rpc(
        "fairness",
        "SealHand",
        ("hand_id",),
        seal_hand,
        complete=False,
    ),
    Rpc(
        "fairness",
        "RevealHand",
        ("hand_id",),
        reveal_hand,
        complete=False,
    ),
)

# Requests whose only fields are the key and the table they are addressed to: nothing to change.
KEY_ONLY: Mapping[str, tuple[tuple[str, ...], str]] = {
    "cashier.CashOutSeatSession": (("session_id",), "the session id is the whole request"),
    "table.LeaveTable": (("request_id", "table_id"), TABLE_ADDRESS),
    "table.SitOut": (("request_id", "table_id"), TABLE_ADDRESS),
}

# Methods no caller's id makes idempotent: reads, and routing that opens a table at most once.
NOT_KEYED: Mapping[str, str] = {
    **{
        f"cashier.{name}": "a read"
        for name in (
            "GetBalances",
            "LookupTransfers",
            "GetSeatSession",
            "ListOpenSeatSessions",
            "GetStatement",
            "AuditConservation",
            "GetHouseBalances",
            "ListHouseFunding",
            "GetPlayFigures",
            "ListWithdrawals",
            "GetSelfLimits",
        )
    },
    **{
        f"lobby.{name}": "a read"
        for name in ("ListRooms", "GetRoom", "ListTables", "AuthorizeSeat", "AuthorizeView", "GetMaintenance")
    },
    "lobby.ListAllowList": "a read",
    "lobby.FindPlayers": "a read",
    "lobby.GetMyProfile": "a read; the profile it makes the first time is the caller's one profile",
    "lobby.JoinTable": "routing: takes no seat; opens a room's next table at most once, by its table id",
    **{f"table.{name}": "a read" for name in ("WatchTable", "SpectateTable", "GetTableSnapshot")},
    "table.ShardDirectoryService.ListShardTables": "a read (the lobby's)",
    "table.ShardDirectoryService.OpenTable": "opens the table the lobby routes to, idempotent by its table id",
    **{
        f"history.{name}": "a read"
        for name in (
            "ListMyHands",
            "GetHand",
            "ListTableHands",
            "ExportHands",
            "ListBalanceChanges",
            "ListAuditEvents",
            "ListCases",
            "GetCase",
            "ListReleaseRequests",
            "ListStaff",
            "FindStaffMember",
        )
    },
    **{
        f"fairness.{name}": "a read"
        for name in ("GetCommitment", "ListTableCommitments", "GetReveal", "VerifyHand")
    },
}


# Keyed RPCs of history and fairness left out here (the brief: those two where cheap), with why.
NOT_CHEAP: Mapping[str, str] = {
    "history.ResolveCase": "only the detectors open a case to resolve (a played chip-dumping pattern, "
    "tests/history/test_history_auto_holds.py)",
}
