"""One house-game bot: plays its own rounds of Casino Hold'em or Russian Poker at a house table with
the library's basic strategy (house_strategy.py), routed through the lobby's JoinTable like the cash
bots. Each finished round is kept (id, commitment, stakes, payout, the deck positions it showed) so a
run can be checked against fairness, history and the cashier afterwards.

Every call is retried with the same request id after UNAVAILABLE, a deadline or a lost route (the
table answers a repeated id with its first answer); a lost route sends the bot back to the lobby."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc

from poker.common.v1 import common_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker_bots.bot import ROUTE_LOST, Connections, Credentials, purchase
from poker_bots.house_strategy import (
    RussianDeal,
    holdem_calls,
    holdem_dealt,
    russian_buys_game,
    russian_exchange,
    russian_plays,
)
from poker_bots.stats import RunStats
from service_runtime.clients import reason_of

T = TypeVar("T")
CALL = table_pb2.HOUSE_DECISION_KIND_CALL
FOLD = table_pb2.HOUSE_DECISION_KIND_FOLD
EXCHANGE = table_pb2.HOUSE_DECISION_KIND_EXCHANGE
BUY_GAME = table_pb2.HOUSE_DECISION_KIND_BUY_GAME
TAKE_ANTE = table_pb2.HOUSE_DECISION_KIND_TAKE_ANTE
HOUSE_VARIANTS = frozenset({common_pb2.GAME_VARIANT_CASINO_HOLDEM, common_pb2.GAME_VARIANT_RUSSIAN_POKER})
RETRIES = 20


@dataclass(frozen=True)
class HouseTerms:
    room_id: str
    pool: common_pb2.ChipPool.ValueType
    variant: common_pb2.GameVariant.ValueType
    ante: int


@dataclass(frozen=True)
class HouseRound:
    """A settled round as the bot saw it."""

    round_id: str
    table_id: str
    commitment: str
    staked: int
    paid_out: int
    dealt: tuple[tuple[int, int], ...]  # (deck position, card index)


class RoundBudget:
    """The rounds a run still wants, shared by its house bots."""

    def __init__(self, rounds: int) -> None:
        self.left = rounds

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        return True

    def give_back(self) -> None:
        self.left += 1


class RoundFailed(Exception):
    """A round that could not be played to its settlement (counted by reason already)."""


@dataclass
class HouseBot:
    player_id: str
    terms: HouseTerms
    table_id: str
    connections: Connections
    credentials: Credentials
    stats: RunStats
    chips_per_purchase: int = 0
    max_purchases: int = 20
    rounds: list[HouseRound] = field(default_factory=list)
    purchases: int = 0
    broke: bool = False
    _stub: table_pb2_grpc.TableServiceStub | None = None

    async def buy_chips(self) -> bool:
        if self.purchases >= self.max_purchases:
            return False
        chips = self.chips_per_purchase or 100 * self.terms.ante
        if not await purchase(
            self.connections, self.credentials, self.stats, self.player_id, self.terms.pool, chips
        ):
            return False
        self.purchases += 1
        return True

    async def run(self, stop: asyncio.Event, budget: RoundBudget) -> None:
        """Play rounds while the budget lasts; give up after RETRIES failed rounds in a row."""
        failures = 0
        while not stop.is_set() and not self.broke and failures < RETRIES and budget.take():
            try:
                self.rounds.append(await self.play_round())
                failures = 0
            except RoundFailed:
                budget.give_back()
                failures += 1
                await asyncio.sleep(0.2)

    async def play_round(self) -> HouseRound:
        started = time.perf_counter()
        if self.terms.variant == common_pb2.GAME_VARIANT_CASINO_HOLDEM:
            played = await self._holdem()
        else:
            played = await self._russian()
        self.stats.latency("house-round", time.perf_counter() - started)
        self.stats.house_rounds += 1
        self.stats.house_staked += played.staked
        self.stats.house_paid_out += played.paid_out
        return played

    # ------------------------------------------------------------------ the games

    async def _holdem(self) -> HouseRound:
        view = await self._bet()
        hole = [c.index for c in view.boxes[0].cards]
        flop = [c.index for c in view.board]
        view = await self._decide(view, CALL if holdem_calls(hole, flop) else FOLD)
        view = await self._settled(view)
        dealt = holdem_dealt(hole, [c.index for c in view.dealer_cards], [c.index for c in view.board])
        return self._finished(view, dealt)

    async def _russian(self) -> HouseRound:
        view = await self._bet()
        first = tuple(c.index for c in view.boxes[0].cards)
        deal = RussianDeal(first, view.dealer_cards[0].index if view.dealer_cards else None)
        indexes = russian_exchange(first)
        if indexes:
            view = await self._decide(view, EXCHANGE, indexes)
            deal.exchanged(indexes, [c.index for c in view.boxes[0].cards])
        cards = [c.index for c in view.boxes[0].cards]
        view = await self._decide(view, CALL if russian_plays(cards) else FOLD)
        bought = False
        if view.phase == "NO_GAME_CHOICES":
            bought = russian_buys_game(cards)
            view = await self._decide(view, BUY_GAME if bought else TAKE_ANTE)
        view = await self._settled(view)
        return self._finished(view, deal.settled([c.index for c in view.dealer_cards], bought))

    def _finished(self, view: table_pb2.HouseRoundView, dealt: list[tuple[int, int]]) -> HouseRound:
        return HouseRound(
            view.round_id, self.table_id, view.seed_commitment, view.staked, view.paid_out, tuple(dealt)
        )

    async def _bet(self) -> table_pb2.HouseRoundView:
        for _ in range(3):
            try:
                reply: table_pb2.PlaceHouseBetsResponse = await self._call(
                    "house-bet",
                    lambda stub, rid: stub.PlaceHouseBets(
                        table_pb2.PlaceHouseBetsRequest(
                            request_id=rid,
                            table_id=self.table_id,
                            boxes=[table_pb2.HouseBox(box=1, ante=self.terms.ante)],
                        ),
                        metadata=self.credentials.player(self.player_id),
                        timeout=self.connections.timeout,
                    ),
                )
                return reply.round
            except RoundFailed as failed:
                if str(failed) == "ROUND_IN_PROGRESS":
                    # My last round lives on at the room's new owner (resumed from the shared
                    # journal after the room moved, its settlement taken again): let it end there,
                    # then bet again (with a new request id: the refusal is remembered under the old).
                    await self._round_over()
                    continue
                if str(failed) != "INSUFFICIENT_FUNDS":
                    raise
                if not await self.buy_chips():
                    self.broke = True
                    raise
        raise RoundFailed("INSUFFICIENT_FUNDS")

    async def _decide(
        self, view: table_pb2.HouseRoundView, kind: int, indexes: tuple[int, ...] = ()
    ) -> table_pb2.HouseRoundView:
        reply: table_pb2.MakeHouseDecisionResponse = await self._call(
            "house-decide",
            lambda stub, rid: stub.MakeHouseDecision(
                table_pb2.MakeHouseDecisionRequest(
                    request_id=rid,
                    table_id=self.table_id,
                    round_id=view.round_id,
                    box=1,
                    decision=kind,  # type: ignore[arg-type]
                    card_indexes=list(indexes),
                ),
                metadata=self.credentials.player(self.player_id),
                timeout=self.connections.timeout,
            ),
        )
        return reply.round

    async def _round_over(self, seconds: float = 60.0) -> None:
        """Wait until this player's round at the table has ended (its clock decides what it waits for)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            snapshot: table_pb2.GetTableSnapshotResponse = await self._call(
                "house-snapshot",
                lambda stub, _rid: stub.GetTableSnapshot(
                    table_pb2.GetTableSnapshotRequest(table_id=self.table_id),
                    metadata=self.credentials.player(self.player_id),
                    timeout=self.connections.timeout,
                ),
            )
            if snapshot.view.house.round.phase in ("", "COMPLETE", "VOIDED", "LEFT"):
                return
            await asyncio.sleep(0.2)

    async def _settled(self, view: table_pb2.HouseRoundView) -> table_pb2.HouseRoundView:
        """The round once the cashier took its settlement (SETTLING while the cashier is away)."""
        for _ in range(600):
            if view.phase != "SETTLING":
                break
            await asyncio.sleep(0.05)
            snapshot: table_pb2.GetTableSnapshotResponse = await self._call(
                "house-snapshot",
                lambda stub, _rid: stub.GetTableSnapshot(
                    table_pb2.GetTableSnapshotRequest(table_id=self.table_id),
                    metadata=self.credentials.player(self.player_id),
                    timeout=self.connections.timeout,
                ),
            )
            view = snapshot.view.house.round
        if view.phase != "COMPLETE":
            self.stats.error("house-round", "UNFINISHED", view.phase or "-")
            raise RoundFailed(view.phase)
        return view

    # ------------------------------------------------------------------ plumbing

    async def _call(
        self, method: str, send: Callable[[table_pb2_grpc.TableServiceStub, str], Awaitable[T]]
    ) -> T:
        """Send with one request id until answered; a refusal raises RoundFailed(reason)."""
        request_id = uuid.uuid4().hex
        for attempt in range(RETRIES):
            if self._stub is None:
                await self._route()
            assert self._stub is not None
            started = time.perf_counter()
            try:
                result = await send(self._stub, request_id)
            except grpc.aio.AioRpcError as error:
                reason = reason_of(error)
                self.stats.error(method, error.code().name, reason)
                lost = error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                if not (lost or reason in ROUTE_LOST):
                    raise RoundFailed(reason or error.code().name) from error
                self._stub = None
                await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
                continue
            self.stats.latency(method, time.perf_counter() - started)
            return result
        raise RoundFailed("GAVE_UP")

    async def _route(self) -> None:
        metadata = self.credentials.player(self.player_id)
        for attempt in range(RETRIES):
            started = time.perf_counter()
            # A table the shard has not opened yet is not listed: the room's JoinTable still names
            # the owner, which opens the table at the first call.
            request = lobby_pb2.JoinTableRequest(
                room_id=self.terms.room_id, table_id="" if attempt % 2 else self.table_id
            )
            try:
                joined = await self.connections.lobby.JoinTable(
                    request, metadata=metadata, timeout=self.connections.timeout
                )
            except grpc.aio.AioRpcError as error:
                self.stats.error("join", error.code().name, reason_of(error))
                await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
                continue
            self.stats.latency("join", time.perf_counter() - started)
            self._stub = self.connections.table(joined.address)
            return
        raise RoundFailed("NO_ROUTE")
