"""Helpers of the house-game table tests: rooms, house funding, a client that plays rounds, and the
check of a finished round against the library's settlement for the deck fairness revealed."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from house_games import (
    Account,
    BoxWager,
    CasinoHoldemRound,
    CasinoHoldemSettings,
    RoundSettlement,
    RussianPokerRound,
    RussianPokerSettings,
)
from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.lobby.v1 import lobby_pb2
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import Role
from service_runtime.testing import auth_metadata
from service_runtime.testing import fund_house as fund_house_by_two
from services.cashier.ledger import Pool, TransferKind, TransferRequest
from services.table.house.house_round import PlannedTransfer
from services.table.ports.dependencies import house_transfer
from tests.table.conftest import ADMIN, TableWorld

CALL = table_pb2.HOUSE_DECISION_KIND_CALL
FOLD = table_pb2.HOUSE_DECISION_KIND_FOLD
EXCHANGE = table_pb2.HOUSE_DECISION_KIND_EXCHANGE
SIXTH = table_pb2.HOUSE_DECISION_KIND_BUY_SIXTH_CARD
INSURE = table_pb2.HOUSE_DECISION_KIND_INSURE
BUY_GAME = table_pb2.HOUSE_DECISION_KIND_BUY_GAME
TAKE_ANTE = table_pb2.HOUSE_DECISION_KIND_TAKE_ANTE


def house_room(
    room_id: str,
    variant: int,
    *,
    boxes: int = 7,
    min_ante: int = 10,
    max_ante: int = 1000,
    max_payout: int = 50_000,
    pool: int = common_pb2.CHIP_POOL_GRAM,
) -> lobby_pb2.Room:
    return lobby_pb2.Room(
        room_id=room_id,
        display_name=room_id,
        variant=variant,  # type: ignore[arg-type]
        pool=pool,  # type: ignore[arg-type]
        seats_per_table=boxes,
        antes=lobby_pb2.AnteStakes(min_ante=min_ante, max_ante=max_ante, max_payout=max_payout),
    )


async def fund_house(
    world: TableWorld, amount: int, *, jackpot: bool = False, pool: int = common_pb2.CHIP_POOL_GRAM
) -> cashier_pb2.DecideHouseFundingResponse:
    """The operator's funding: asked by one member of finance, approved by another."""
    return await fund_house_by_two(
        world.cashier,
        request_id=uuid.uuid4().hex,
        pool=pool,  # type: ignore[arg-type]
        account=cashier_pb2.HOUSE_ACCOUNT_JACKPOT if jackpot else cashier_pb2.HOUSE_ACCOUNT_BANK,
        amount=amount,
    )


async def house_balances(world: TableWorld, pool: int = common_pb2.CHIP_POOL_GRAM) -> tuple[int, int]:
    reply = await world.cashier.GetHouseBalances(
        cashier_pb2.GetHouseBalancesRequest(pool=pool),  # type: ignore[arg-type]
        metadata=ADMIN,
    )
    return reply.bank_balance, reply.jackpot_balance


def ledger_requests(
    pool: Pool, player: str, planned: Sequence[PlannedTransfer], table_id: str
) -> list[TransferRequest]:
    """A round's planned transfers as the table sends them to the cashier (CreateTransfers)."""
    wire_pool = {Pool.GRAM: common_pb2.CHIP_POOL_GRAM, Pool.MPX: common_pb2.CHIP_POOL_MPX}[pool]
    out = []
    for p in planned:
        t = house_transfer(wire_pool, player, p)
        kind = TransferKind.HOUSE_GAME_RESULT
        out.append(
            TransferRequest(t.transfer_id, t.debit, t.credit, pool, t.amount, kind, t.reference, table_id)
        )
    return out


@dataclass
class Sent:
    """A decision as the client sent it, with the card codes an exchange discarded."""

    box: int
    kind: int
    cards: tuple[int, ...] = ()
    amount: int = 0


@dataclass
class HouseClient:
    player_id: str
    table_id: str
    stub: table_pb2_grpc.TableServiceStub
    variant: int = common_pb2.GAME_VARIANT_CASINO_HOLDEM
    metadata: Any = None
    sent: list[Sent] = field(default_factory=list)
    boxes: tuple[table_pb2.HouseBox, ...] = ()
    last_view: table_pb2.HouseRoundView = field(default_factory=table_pb2.HouseRoundView)

    def __post_init__(self) -> None:
        self.metadata = auth_metadata(self.player_id, Role.PLAYER)

    async def bet(
        self, *boxes: table_pb2.HouseBox, request_id: str | None = None
    ) -> table_pb2.PlaceHouseBetsResponse:
        self.sent = []
        reply = await self.stub.PlaceHouseBets(
            table_pb2.PlaceHouseBetsRequest(
                request_id=request_id or uuid.uuid4().hex, table_id=self.table_id, boxes=list(boxes)
            ),
            metadata=self.metadata,
        )
        self.boxes = tuple(boxes)
        return reply

    async def decide(
        self,
        round_view: table_pb2.HouseRoundView,
        box: int,
        kind: int,
        *,
        indexes: tuple[int, ...] = (),
        amount: int = 0,
        request_id: str | None = None,
    ) -> table_pb2.HouseRoundView:
        held = next((b for b in round_view.boxes if b.box == box), None)
        cards = tuple(held.cards[i].index for i in indexes) if held is not None else ()
        reply = await self.stub.MakeHouseDecision(
            table_pb2.MakeHouseDecisionRequest(
                request_id=request_id or uuid.uuid4().hex,
                table_id=self.table_id,
                round_id=round_view.round_id,
                box=box,
                decision=kind,  # type: ignore[arg-type]
                card_indexes=list(indexes),
                amount=amount,
            ),
            metadata=self.metadata,
        )
        self.sent.append(Sent(box, kind, cards, amount))
        return reply.round

    async def snapshot(self) -> table_pb2.TableView:
        # A deadline: `wait_for` polls through this call and can end only between calls, so a call
        # that never answered hung a CI run for 20 minutes (issue 39 note: the old owner's answer right
        # after it released a room).
        reply = await self.stub.GetTableSnapshot(
            table_pb2.GetTableSnapshotRequest(table_id=self.table_id), metadata=self.metadata, timeout=10
        )
        return reply.view


async def revealed_deck(world: TableWorld, round_id: str) -> list[int]:
    """The round's whole deck in deal order, as an admin reads it: version 2 reveals it, version 3
    opens all 52 positions to admins (and to the player only the cards of the round)."""
    reply = await world.fairness.GetReveal(fairness_pb2.GetRevealRequest(hand_id=round_id), metadata=ADMIN)
    if reply.reveal.deck:
        return [card.index for card in reply.reveal.deck]
    return [o.card.index for o in sorted(reply.reveal.openings, key=lambda o: o.deal_position)]


def library_settlement(
    variant: int,
    deck: list[int],
    player: str,
    boxes: tuple[table_pb2.HouseBox, ...],
    decisions: list[Sent],
    *,
    max_payout: int = 50_000,
    room_boxes: int = 7,
    jackpot: int = 0,
) -> RoundSettlement:
    """The library's settlement of the round from the revealed deck and the decisions taken."""
    wagers = [BoxWager(b.box, player, b.ante, dark=b.dark, bonus=b.bonus_bet) for b in boxes]
    if variant == common_pb2.GAME_VARIANT_CASINO_HOLDEM:
        holdem = CasinoHoldemRound(
            deck, wagers, CasinoHoldemSettings(table_maximum=max_payout, max_boxes=room_boxes)
        )
        for d in decisions:
            if d.kind == CALL:
                holdem.call(d.box)
            else:
                holdem.fold(d.box)
        return holdem.settle()
    russian = RussianPokerRound(
        deck, wagers, RussianPokerSettings(table_maximum=max_payout, max_boxes=room_boxes), jackpot=jackpot
    )
    for d in decisions:
        if d.kind == CALL:
            russian.play(d.box)
        elif d.kind == INSURE:
            russian.play(d.box, insurance=d.amount)
        elif d.kind == FOLD:
            russian.fold(d.box)
        elif d.kind == EXCHANGE:
            russian.exchange(d.box, d.cards)
        elif d.kind == SIXTH:
            russian.buy_sixth_card(d.box)
        elif d.kind == BUY_GAME:
            russian.buy_game(d.box)
        else:
            russian.take_ante(d.box)
    return russian.settle()


def lines_of(settlement: RoundSettlement) -> dict[int, list[tuple[str, int, str, int, str, int]]]:
    return {
        box.box: [
            (ln.item.value, ln.stake, ln.outcome.value, ln.delta(Account.PLAYER), ln.reason, ln.withheld)
            for ln in box.lines
        ]
        for box in settlement.boxes
    }


def view_lines(round_view: table_pb2.HouseRoundView) -> dict[int, list[tuple[str, int, str, int, str, int]]]:
    return {
        box.box: [(ln.item, ln.stake, ln.outcome, ln.amount, ln.reason, ln.withheld) for ln in box.settlement]
        for box in round_view.boxes
    }
