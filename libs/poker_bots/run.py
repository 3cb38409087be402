"""A bot run: plan N bots over M tables of the chosen rooms, fund them, play until a hand count or a
time is reached (or `stop` is set), then leave every table and report."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc

from poker.lobby.v1 import lobby_pb2
from poker_bots.bot import Behaviour, Bot, Connections, Credentials, RoomTerms
from poker_bots.house_bot import HOUSE_VARIANTS, HouseBot, HouseTerms, RoundBudget
from poker_bots.stats import RunStats
from poker_bots.strategies import STRATEGIES
from service_runtime.clients import reason_of
from service_runtime.tls import TlsFiles


@dataclass(frozen=True)
class RunPlan:
    lobby: str
    cashier: str
    rooms: tuple[str, ...]
    bots: int
    tables: int
    strategies: tuple[str, ...] = ("random", "tag")
    hands: int = 0
    seconds: float = 0.0
    seed: int = 0
    player_prefix: str = ""
    # Given players (production tokens): bot i is player_ids[i]; else <prefix>-<i + 1>.
    player_ids: tuple[str, ...] = ()
    behaviour: Behaviour = field(default_factory=Behaviour)
    # House-game bots (players <prefix>-h1..): bot i plays at `<house_rooms[i mod R]>.1` until the run
    # has `house_rounds` rounds (0: until the run stops).
    house_rooms: tuple[str, ...] = ()
    house_bots: int = 0
    house_rounds: int = 0
    # Mutual TLS where the services require it (POKER_TLS_* settings); None: plaintext.
    tls: TlsFiles | None = None


class PlanError(Exception):
    """A plan that cannot run (bad numbers, an unknown room or strategy), one sentence."""


def table_of(rooms: Sequence[str], index: int) -> tuple[str, str]:
    """Table `index` of the run: rooms take turns, each room's tables count up from `.1`."""
    room = rooms[index % len(rooms)]
    return room, f"{room}.{index // len(rooms) + 1}"


def buy_in_of(room: lobby_pb2.Room) -> int:
    """The middle of the room's buy-in range (no-limit rooms have one entry, rules 6)."""
    return (room.min_buy_in + room.max_buy_in) // 2


@dataclass
class BotRun:
    plan: RunPlan
    bots: list[Bot]
    stats: RunStats
    tables: list[str]
    house_bots: list[HouseBot] = field(default_factory=list)


async def run_bots(
    plan: RunPlan,
    credentials: Credentials,
    stop: asyncio.Event | None = None,
    connections: Connections | None = None,
    stats: RunStats | None = None,
    leave_at_end: bool = True,
) -> BotRun:
    """Play `plan`; `stats` (if given) fills as the run goes. With `leave_at_end` false the bots stay
    seated (their tables play on without them) until the caller awaits `finish()` of each bot."""
    _check(plan)
    stop = stop or asyncio.Event()
    own_connections = connections is None
    conns = connections or Connections(plan.lobby, plan.cashier, tls=plan.tls)
    rng = random.Random(plan.seed)
    prefix = plan.player_prefix or f"bot-{uuid.uuid4().hex[:6]}"
    players = plan.player_ids or tuple(f"{prefix}-{i + 1}" for i in range(plan.bots))
    stats = stats if stats is not None else RunStats()
    try:
        bots = []
        if plan.bots:
            terms = await _room_terms(conns, credentials, players[0], plan.rooms)
            for i in range(plan.bots):
                room, table_id = table_of(plan.rooms, i % plan.tables)
                bots.append(
                    Bot(
                        player_id=players[i],
                        terms=terms[room],
                        table_id=table_id,
                        strategy=STRATEGIES[plan.strategies[i % len(plan.strategies)]],
                        connections=conns,
                        credentials=credentials,
                        stats=stats,
                        behaviour=plan.behaviour,
                        rng=random.Random(rng.random()),
                    )
                )
        house = await house_bots_of(plan, credentials, conns, stats, prefix) if plan.house_bots else []
        await asyncio.gather(*(bot.buy_chips() for bot in bots), *(bot.buy_chips() for bot in house))
        budget = RoundBudget(plan.house_rounds or 2**62)
        started = time.monotonic()
        tasks = [asyncio.create_task(bot.run(stop)) for bot in bots]
        house_tasks = [asyncio.create_task(bot.run(stop, budget)) for bot in house]
        try:
            while not stop.is_set():
                hands_done = not bots or (plan.hands and len(stats.hands) >= plan.hands)
                # House bots end by themselves: budget spent, broke, or too many failed rounds.
                rounds_done = all(t.done() for t in house_tasks)
                if hands_done and rounds_done:
                    break
                if plan.seconds and time.monotonic() - started >= plan.seconds:
                    break
                if bots and all(bot.broke for bot in bots) and rounds_done:
                    break
                crashed = [t for t in tasks + house_tasks if t.done() and t.exception() is not None]
                if crashed:
                    crashed[0].result()
                await _wait(stop, 0.2)
        finally:
            stats.seconds = time.monotonic() - started
            stop.set()
            await asyncio.gather(*tasks, *house_tasks, return_exceptions=True)
            if leave_at_end:
                await asyncio.gather(*(bot.finish() for bot in bots), return_exceptions=True)
        tables = sorted({bot.table_id for bot in bots})
        return BotRun(plan, bots, stats, tables, house)
    finally:
        if own_connections:
            await conns.close()


def _check(plan: RunPlan) -> None:
    if plan.bots < 0 or plan.house_bots < 0 or plan.bots + plan.house_bots < 1:
        raise PlanError("need at least one bot")
    if plan.bots and (plan.tables < 1 or not plan.rooms):
        raise PlanError("need at least one table and one room")
    if plan.house_bots and not plan.house_rooms:
        raise PlanError("house bots need at least one house room")
    if plan.player_ids and len(plan.player_ids) < plan.bots + plan.house_bots:
        raise PlanError(f"{len(plan.player_ids)} players given for {plan.bots + plan.house_bots} bots")
    unknown = [s for s in plan.strategies if s not in STRATEGIES]
    if unknown or not plan.strategies:
        raise PlanError(f"unknown strategy {unknown}: choose from {', '.join(STRATEGIES)}")


async def house_bots_of(
    plan: RunPlan, credentials: Credentials, conns: Connections, stats: RunStats, prefix: str
) -> list[HouseBot]:
    """The plan's house bots (not yet funded): bot i at table `.1` of house room i mod R."""
    players = (
        plan.player_ids[plan.bots : plan.bots + plan.house_bots]
        if plan.player_ids
        else tuple(f"{prefix}-h{i + 1}" for i in range(plan.house_bots))
    )
    terms = await _house_terms(conns, credentials, players[0], plan.house_rooms)
    bots = []
    for i, player in enumerate(players):
        room = plan.house_rooms[i % len(plan.house_rooms)]
        bots.append(HouseBot(player, terms[room], f"{room}.1", conns, credentials, stats))
    return bots


async def _house_terms(
    conns: Connections, credentials: Credentials, reader: str, rooms: Sequence[str]
) -> dict[str, HouseTerms]:
    terms = {}
    for room_id in rooms:
        room = await _get_room(conns, credentials, reader, room_id)
        if room.variant not in HOUSE_VARIANTS or not room.antes.min_ante:
            raise PlanError(f"room {room_id!r} is not a house-game room")
        terms[room_id] = HouseTerms(room_id, room.pool, room.variant, room.antes.min_ante)
    return terms


async def _get_room(
    conns: Connections, credentials: Credentials, reader: str, room_id: str
) -> lobby_pb2.Room:
    try:
        reply: lobby_pb2.GetRoomResponse = await conns.lobby.GetRoom(
            lobby_pb2.GetRoomRequest(room_id=room_id),
            metadata=credentials.player(reader),
            timeout=conns.timeout,
        )
    except grpc.aio.AioRpcError as error:
        raise PlanError(
            f"room {room_id!r}: {error.code().name} {reason_of(error) or error.details()}"
        ) from error
    return reply.room


async def _room_terms(
    conns: Connections, credentials: Credentials, reader: str, rooms: Sequence[str]
) -> dict[str, RoomTerms]:
    terms = {}
    for room_id in rooms:
        room = await _get_room(conns, credentials, reader, room_id)
        if room.seats_per_table < 2 or not room.max_buy_in:
            raise PlanError(f"room {room_id!r} is not a poker cash room")
        terms[room_id] = RoomTerms(room_id, room.pool, buy_in_of(room))
    return terms


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    try:
        async with asyncio.timeout(seconds):
            await stop.wait()
    except TimeoutError:
        pass
