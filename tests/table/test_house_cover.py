"""The house bank's cover on real servers (issue 44): rounds opened at the same moment at several
house tables of one pool, of both games, against a bank that covers only some of them; and a round
beside an open one, whose stake is never counted as the house's money."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from service_runtime.clients import error_metadata_of, reason_of
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, table_world, unique
from tests.table.house_players import FOLD, HouseClient, fund_house, house_room
from tests.table.test_house_rounds import box

HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM
RUSSIAN = common_pb2.GAME_VARIANT_RUSSIAN_POKER
MPX = common_pb2.CHIP_POOL_MPX
COVER = 50_000  # each round's largest payout: one box at a table maximum of 50,000


async def bank_of(world: TableWorld) -> cashier_pb2.GetHouseBalancesResponse:
    return await world.cashier.GetHouseBalances(cashier_pb2.GetHouseBalancesRequest(pool=MPX), metadata=ADMIN)


async def free_bank_at(world: TableWorld, chips: int) -> None:
    """The MPX bank's own money set to `chips` by an audited funding or defunding."""
    free = (await bank_of(world)).bank_balance
    if free != chips:
        await fund_house(world, chips - free, pool=MPX)
    assert (await bank_of(world)).bank_balance == chips


async def players_at(world: TableWorld, tables: list[tuple[str, int]], each: int) -> list[HouseClient]:
    clients = []
    for table_id, variant in tables:
        for _ in range(each):
            client = HouseClient(unique("hp"), table_id, world.table, variant)
            await world.fund(client.player_id, 10_000, pool=MPX)
            clients.append(client)
    return clients


async def test_rounds_opened_at_once_at_four_tables_are_accepted_only_as_far_as_the_bank_covers(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    async with table_world(backends, house_journal=str(tmp_path / "j")) as world:
        tables = []
        for variant in (HOLDEM, HOLDEM, RUSSIAN, RUSSIAN):
            room = house_room(unique("cover"), variant, pool=MPX, max_payout=COVER)
            tables.append((world.add_room(room), variant))
        clients = await players_at(world, tables, each=2)
        before = {c.player_id: await world.wallet(c.player_id, MPX) for c in clients}
        await free_bank_at(world, 3 * COVER + 5_000)

        async def bet(client: HouseClient) -> tuple[str, dict[str, str]]:
            try:
                await client.bet(box(1, 100))
                return "OK", {}
            except grpc.aio.AioRpcError as error:
                return reason_of(error), error_metadata_of(error)

        answers = await asyncio.gather(*(bet(c) for c in clients))
        accepted = [c for c, (reason, _) in zip(clients, answers, strict=True) if reason == "OK"]
        assert len(accepted) == 3, answers
        for reason, figures in answers:
            if reason != "OK":
                assert reason == "HOUSE_BANK_CANNOT_COVER"
                assert figures["needed"] == str(COVER)
                assert int(figures["available"]) < COVER
        # The bank's own money covers exactly what the three promised; their stakes and largest
        # payouts are reserved in the ledger, not in a shard's memory.
        bank = await bank_of(world)
        assert (bank.bank_balance, bank.reserved_balance) == (5_000, 3 * (100 + COVER))
        for client in clients:
            if client not in accepted:
                assert await world.wallet(client.player_id, MPX) == before[client.player_id]
        for client in accepted:
            view = (await client.snapshot()).house.round
            await client.decide(view, 1, FOLD)
        # Folded: each round's reservation went back to the bank's own money, and its ante with it.
        bank = await bank_of(world)
        assert (bank.bank_balance, bank.reserved_balance) == (3 * COVER + 5_000 + 3 * 100, 0)
        assert (await world.audit()).balanced


async def test_an_open_rounds_stake_is_never_cover_for_the_next_round(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """The issue's case: the house's own money 99,500 and an open round of cover 50,000 whose 1,000
    stake sits in the bank; a second round of cover 50,000 is refused, and the refusal names the
    bank's own money left (49,500), not 50,500 with the open round's stake counted."""
    async with table_world(backends, house_journal=str(tmp_path / "j")) as world:
        room = house_room(unique("cover"), HOLDEM, pool=MPX, max_payout=COVER)
        table_id = world.add_room(room)
        first, second = await players_at(world, [(table_id, HOLDEM)], each=2)
        await free_bank_at(world, 99_500)
        view = (await first.bet(box(1, 1_000))).round
        bank = await bank_of(world)
        assert (bank.bank_balance, bank.reserved_balance) == (49_500, 1_000 + COVER)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await second.bet(box(1, 10))
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert reason_of(refused.value) == "HOUSE_BANK_CANNOT_COVER"
        metadata = error_metadata_of(refused.value)
        assert (metadata["needed"], metadata["available"]) == ("50000", "49500")
        await first.decide(view, 1, FOLD)
        await second.bet(box(1, 10))
        assert (await world.audit()).balanced
