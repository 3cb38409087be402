"""House-game rounds through gRPC (issue 16): the cashier on PostgreSQL and fairness as processes, the
table on port 0. Every finished round is checked against the library's settlement for the deck
fairness revealed, the wallet change against the settlement, and the cashier audit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.common.v1 import common_pb2
from poker.table.v1 import table_pb2
from service_runtime.testing import reason_of
from tests.table.conftest import ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_helpers import (
    BUY_GAME,
    CALL,
    EXCHANGE,
    FOLD,
    INSURE,
    SIXTH,
    TAKE_ANTE,
    HouseClient,
    fund_house,
    house_balances,
    house_room,
    library_settlement,
    lines_of,
    revealed_deck,
    view_lines,
)

HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM
RUSSIAN = common_pb2.GAME_VARIANT_RUSSIAN_POKER
FUNDS = 1_000_000


@pytest.fixture
async def house_world(backends: dict[str, ServiceProcess], tmp_path: Path) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, house_journal=str(tmp_path / "journal.jsonl"), house_decision_seconds=30.0
    ) as built:
        yield built


async def player_at(world: TableWorld, variant: int, funds: int = FUNDS, **room: Any) -> HouseClient:
    table_id = world.add_room(house_room(unique("house"), variant, **room))
    player = HouseClient(unique("hp"), table_id, world.table, variant)
    if funds:
        await world.fund(player.player_id, funds)
    return player


async def finish(
    world: TableWorld, client: HouseClient, round_view: table_pb2.HouseRoundView, before: int
) -> None:
    """The round settled: lines as the library settles the revealed deck, the wallet moved by exactly
    the settlement, the record in history, the pool balanced."""
    assert round_view.phase == "COMPLETE", round_view
    deck = await revealed_deck_when_ready(world, round_view.round_id)
    settlement = library_settlement(client.variant, deck, client.player_id, client.boxes, client.sent)
    assert view_lines(round_view) == lines_of(settlement)
    after = await world.wallet(client.player_id)
    assert after - before == settlement.player_deltas()[client.player_id]
    assert round_view.paid_out - round_view.staked == after - before
    await wait_for(lambda: round_view.round_id in world.history.hands)
    record = world.history.hands[round_view.round_id]
    assert record.seats[0].net_result == after - before
    assert record.seed_reveal_reference == round_view.round_id
    assert sum(len(b.lines) for b in record.house_game.boxes) == sum(len(b.lines) for b in settlement.boxes)
    audit = await world.audit()
    assert audit.balanced


async def revealed_deck_when_ready(world: TableWorld, round_id: str) -> list[int]:
    for _ in range(200):
        try:
            return await revealed_deck(world, round_id)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.02)
    raise AssertionError("round never revealed")


def box(number: int, ante: int, *, dark: bool = False, bonus: int = 0) -> table_pb2.HouseBox:
    return table_pb2.HouseBox(box=number, ante=ante, dark=dark, bonus_bet=bonus)


async def expect(reason: str, code: grpc.StatusCode, call: Callable[[], Awaitable[Any]]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call()
    assert caught.value.code() == code, caught.value
    assert reason_of(caught.value) == reason, caught.value


async def test_casino_holdem_call_and_fold_settle_as_the_library_says(house_world: TableWorld) -> None:
    world = house_world
    await fund_house(world, 10_000_000)
    client = await player_at(world, HOLDEM)
    before = await world.wallet(client.player_id)
    placed = await client.bet(box(1, 10), box(3, 25))
    assert placed.staked.amount == 35
    view = placed.round
    assert len(view.board) == 3 and not view.dealer_cards
    assert {b.box: len(b.cards) for b in view.boxes} == {1: 2, 3: 2}
    options = {b.box: {(o.decision, o.cost) for o in b.options} for b in view.boxes}
    assert options == {1: {(CALL, 20), (FOLD, 0)}, 3: {(CALL, 50), (FOLD, 0)}}
    assert view.HasField("deadline")
    assert await world.wallet(client.player_id) == before - 35
    view = await client.decide(view, 3, CALL)
    assert await world.wallet(client.player_id) == before - 85
    view = await client.decide(view, 1, FOLD)
    assert len(view.board) == 5 and len(view.dealer_cards) == 2
    await finish(world, client, view, before)
