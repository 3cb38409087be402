"""A house table's drain never leaves a round it could finish to be refunded (the rolling-restart
run saw `hgr:<round>:void` for a Casino Hold'em round under load, stop 48).

A round is the table's from its stakes to its settlement: a drain (SIGTERM, a handover between
shards) waits for every open round, dealt or not yet, and a caller that gives up on its PlaceHouseBets
(its deadline, a dropped connection) does not stop the round half way: the stakes taken are dealt on
and the round plays to its end (the decision clock decides for a player who is gone), as a retry of
the same request would have seen it. Only a round still open at the drain's bound is left to the next
owner (refunded there if never dealt)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from tests.table.conftest import ADMIN, ServiceProcess, TableWorld, table_world, wait_for
from tests.table.house_players import HouseClient, fund_house
from tests.table.test_house_failures import HOLDEM, room_and_client
from tests.table.test_house_rounds import box


def _round_entries(journal: Path) -> dict[str, list[str]]:
    """Each round's journal entry types, in order (the file journal: one JSON entry a line)."""
    rounds: dict[str, list[str]] = {}
    for line in journal.read_text().splitlines():
        entry = json.loads(line)
        if "round_id" in entry:
            rounds.setdefault(entry["round_id"], []).append(entry["type"])
    return rounds


async def funded_bettor(world: TableWorld) -> tuple[HouseClient, int]:
    """A player at a new Casino Hold'em room whose next round is committed (SetPlayerSeed), so a bet
    reaches fairness only for the seal; then fairness is held (slow). Their wallet before."""
    await fund_house(world, 10_000_000)
    _, client = await room_and_client(world, HOLDEM)
    before = await world.wallet(client.player_id)
    await world.table.SetPlayerSeed(
        table_pb2.SetPlayerSeedRequest(request_id="seed", table_id=client.table_id, client_seed="s"),
        metadata=client.metadata,
    )
    world.proxies["fairness"].hold()
    return client, before


async def drain_held_by_the_round(world: TableWorld) -> None:
    """The drain holds while the round is open (before the fix it ended at once, the round left in
    the journal for the next owner to refund); fairness answers again and the drain ends."""
    draining = asyncio.create_task(world.terminate())
    await asyncio.sleep(0.3)
    assert not draining.done()
    world.proxies["fairness"].release()
    await asyncio.wait_for(draining, timeout=30)


async def test_a_drain_plays_out_a_round_whose_bettor_gave_up_while_fairness_was_slow(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    async with table_world(
        backends, house_journal=str(journal), house_decision_seconds=1.0, drain_seconds=30.0
    ) as world:
        client, before = await funded_bettor(world)
        # The stakes are taken and the deck is on its way but unanswered when the player's deadline
        # ends their call.
        with pytest.raises(grpc.aio.AioRpcError) as gave_up:
            await world.table.PlaceHouseBets(
                table_pb2.PlaceHouseBetsRequest(
                    request_id="bet-1", table_id=client.table_id, boxes=[box(1, 10)]
                ),
                metadata=client.metadata,
                timeout=0.5,
            )
        assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        (round_id,) = _round_entries(journal)
        await drain_held_by_the_round(world)
        assert _round_entries(journal)[round_id][0] == "open"
        assert {"dealt", "closed"} <= set(_round_entries(journal)[round_id])

        # Dealt, decided by the clock (Casino Hold'em: fold), settled; never refunded nor voided.
        looked = await world.cashier.LookupTransfers(
            cashier_pb2.LookupTransfersRequest(
                transfer_ids=[f"hgr:{round_id}:in:1", f"hgr:{round_id}:void:1"]
            ),
            metadata=ADMIN,
        )
        assert [r.transfer_id for r in looked.results] == [f"hgr:{round_id}:in:1"]
        assert await world.wallet(client.player_id) == before - 10

        async def revealed() -> bool:
            reply = await world.fairness.GetCommitment(
                fairness_pb2.GetCommitmentRequest(hand_id=round_id), metadata=ADMIN
            )
            return reply.commitment.state == fairness_pb2.HAND_STATE_FINISHED

        await wait_for(revealed, within=10)
        assert (await world.audit()).balanced


async def test_a_drain_waits_for_the_refund_of_a_round_whose_seal_failed(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """The table's own call (the seal) gives up at its deadline: the player is answered UNAVAILABLE
    and the round, never dealt, is refunded (docs/house-games.md). The drain waits for that refund
    here rather than leave it to the next owner, whenever that opens the table."""
    journal = tmp_path / "journal.jsonl"
    async with table_world(
        backends,
        house_journal=str(journal),
        house_decision_seconds=1.0,
        drain_seconds=30.0,
        request_timeout_seconds=1.0,
    ) as world:
        client, before = await funded_bettor(world)
        with pytest.raises(grpc.aio.AioRpcError) as unanswered:
            await client.bet(box(1, 10), request_id="bet-1")
        assert unanswered.value.code() == grpc.StatusCode.UNAVAILABLE
        (round_id,) = _round_entries(journal)
        await drain_held_by_the_round(world)
        assert "dealt" not in _round_entries(journal)[round_id]
        assert _round_entries(journal)[round_id][-1] == "closed"
        looked = await world.cashier.LookupTransfers(
            cashier_pb2.LookupTransfersRequest(transfer_ids=[f"hgr:{round_id}:void:1"]), metadata=ADMIN
        )
        assert [r.transfer_id for r in looked.results] == [f"hgr:{round_id}:void:1"]
        assert await world.wallet(client.player_id) == before
        assert (await world.audit()).balanced
