"""House-game tables when things go wrong (issue 16): the decision clock, the house bank's cover and
threshold, the cashier down before, during and after a round, and a shard restart mid-round."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2
from poker.table.v1 import table_pb2
from service_runtime.errors import Unavailable
from services.table.ports.dependencies import FairnessClient
from tests.table.conftest import ADMIN, AS_TABLE, ServiceProcess, TableWorld, table_world, unique, wait_for
from tests.table.house_players import (
    CALL,
    FOLD,
    TAKE_ANTE,
    HouseClient,
    Sent,
    fund_house,
    house_balances,
    house_room,
)
from tests.table.test_house_rounds import box, expect, finish

HOLDEM = common_pb2.GAME_VARIANT_CASINO_HOLDEM
RUSSIAN = common_pb2.GAME_VARIANT_RUSSIAN_POKER


async def room_and_client(
    world: TableWorld, variant: int, funds: int = 100_000, **room: int
) -> tuple[Any, HouseClient]:
    """A new house room of `variant` at the shard, and a player funded with `funds` at its table."""
    added = house_room(unique("house"), variant, **room)
    client = HouseClient(unique("hp"), world.add_room(added), world.table, variant)
    await world.fund(client.player_id, funds)
    return added, client


async def client_at(world: TableWorld, variant: int, funds: int = 100_000, **room: int) -> HouseClient:
    return (await room_and_client(world, variant, funds, **room))[1]


async def test_a_decision_not_made_in_time_takes_the_default_and_says_so(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    # Long enough for the decisions the test makes on a loaded machine (0.3 s was not: box 2's CALL
    # came late and box 2 timed out too), short enough that box 1's clock runs out within the wait.
    async with table_world(backends, house_journal=str(tmp_path / "j"), house_decision_seconds=2.0) as world:
        await fund_house(world, 10_000_000)
        client = await client_at(world, HOLDEM)
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 10), box(2, 10))).round
        await client.decide(view, 2, CALL)

        async def settled() -> bool:
            return (await client.snapshot()).house.round.phase == "COMPLETE"

        await wait_for(settled, within=15)
        final = (await client.snapshot()).house.round
        assert "TIMEOUT box 1 FOLD" in final.notes
        from tests.table.house_players import Sent

        client.sent.append(Sent(1, FOLD))
        await finish(world, client, final, before)
        record = world.history.hands[final.round_id]
        assert [(d.box, d.decision, d.timed_out) for d in record.house_game.decisions] == [
            (2, "CALL", False),
            (1, "FOLD", True),
        ]
        # Russian Poker: a box that plays and then does not choose when the dealer has no game takes the ante.
        russian = await client_at(world, RUSSIAN)
        for _ in range(40):
            before = await world.wallet(russian.player_id)
            view = (await russian.bet(box(1, 10))).round
            view = await russian.decide(view, 1, CALL)
            if view.phase != "NO_GAME_CHOICES":
                await finish(world, russian, view, before)
                continue

            async def done() -> bool:
                return (await russian.snapshot()).house.round.phase == "COMPLETE"

            await wait_for(done, within=15)
            final = (await russian.snapshot()).house.round
            assert "TIMEOUT box 1 TAKE_ANTE" in final.notes
            russian.sent.append(Sent(1, TAKE_ANTE))
            await finish(world, russian, final, before)
            return
        raise AssertionError("the dealer always had a game")


async def test_house_bank_cover_and_threshold(backends: dict[str, ServiceProcess], tmp_path: Path) -> None:
    async with table_world(backends, house_journal=str(tmp_path / "j"), house_bank_minimum=1) as world:
        bank, _ = await house_balances(world)
        if bank:
            await fund_house(world, -bank)
        client = await client_at(world, HOLDEM, max_payout=1_000)
        before = await world.wallet(client.player_id)
        # An empty bank is below the threshold: paused, with the reason in the view.
        await expect("HOUSE_BANK_PAUSED", grpc.StatusCode.FAILED_PRECONDITION, lambda: client.bet(box(1, 10)))
        view = await client.snapshot()
        assert view.house.paused
        assert view.house.paused_reason == "HOUSE_BANK_PAUSED"
        assert view.phase == table_pb2.TABLE_PHASE_PAUSED
        # Funded, but not enough for two boxes' table maximum: refused; one box is covered.
        await fund_house(world, 1_500)
        await expect(
            "HOUSE_BANK_CANNOT_COVER",
            grpc.StatusCode.FAILED_PRECONDITION,
            lambda: client.bet(box(1, 10), box(2, 10)),
        )
        assert await world.wallet(client.player_id) == before
        view = (await client.bet(box(1, 10))).round
        # While that round is open its cover is reserved: another player's round is refused.
        other = HouseClient(unique("hp"), client.table_id, world.table, HOLDEM)
        await world.fund(other.player_id, 1_000)
        await expect(
            "HOUSE_BANK_CANNOT_COVER", grpc.StatusCode.FAILED_PRECONDITION, lambda: other.bet(box(1, 10))
        )
        await finish(world, client, await client.decide(view, 1, FOLD), before)
        await other.bet(box(1, 10))
        assert (await world.audit()).balanced
        # The admin takes the bank out again (defunding is FundHouseAccount with a negative amount).
        bank, _ = await house_balances(world)
        reply = await fund_house(world, -(bank - 1_000))
        assert reply.balance_after == 1_000


async def test_cashier_down_no_round_starts_and_a_paid_round_settles_later(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    async with table_world(backends, house_journal=str(tmp_path / "j")) as world:
        await fund_house(world, 10_000_000)
        client = await client_at(world, HOLDEM)
        before = await world.wallet(client.player_id)
        world.proxies["cashier"].take_down()
        await expect("UNAVAILABLE", grpc.StatusCode.UNAVAILABLE, lambda: client.bet(box(1, 10)))
        world.proxies["cashier"].bring_up()
        assert await world.wallet(client.player_id) == before
        for _ in range(30):
            before = await world.wallet(client.player_id)
            view = (await client.bet(box(1, 10), box(2, 10))).round
            view = await client.decide(view, 1, CALL)
            world.proxies["cashier"].take_down()
            view = await client.decide(view, 2, FOLD)  # costs nothing: taken; the settlement waits
            if view.phase == "SETTLING":
                break
            # A round that pays nothing back needs no settlement transfer at all.
            assert view.phase == "COMPLETE"
            assert view.paid_out == 0
            world.proxies["cashier"].bring_up()
            await finish(world, client, view, before)
        assert view.phase == "SETTLING"
        await asyncio.sleep(0.3)
        world.proxies["cashier"].bring_up()

        async def settled() -> bool:
            return (await client.snapshot()).house.round.phase == "COMPLETE"

        await wait_for(settled, within=10)
        await finish(world, client, (await client.snapshot()).house.round, before)


async def test_shard_restart_resumes_a_dealt_round_and_refunds_an_undealt_one(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        await fund_house(world, 10_000_000)
        room, client = await room_and_client(world, RUSSIAN, 100_000)
        table_id = client.table_id
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 10))).round
        first_cards = [c.index for c in view.boxes[0].cards]
        # A second player's stakes go in, then fairness is down at the seal: never dealt.
        late = HouseClient(unique("hp"), table_id, world.table, RUSSIAN)
        await world.fund(late.player_id, 100_000)
        late_before = await world.wallet(late.player_id)
        await world.table.SetPlayerSeed(
            table_pb2.SetPlayerSeedRequest(request_id="seed", table_id=table_id, client_seed="my seed"),
            metadata=late.metadata,
        )
        world.proxies["fairness"].take_down()
        await expect("UNAVAILABLE", grpc.StatusCode.UNAVAILABLE, lambda: late.bet(box(2, 10)))
        # A third round as a shard killed between its stake batch and its seal leaves it: stakes in
        # the house bank, the journal's `open`, no `dealt`.
        killed = HouseClient(unique("hp"), table_id, world.table, RUSSIAN)
        await world.fund(killed.player_id, 100_000)
        killed_before = await world.wallet(killed.player_id)
        world.proxies["fairness"].bring_up()
        committed = await world.fairness.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=unique("killed"), table_id=f"{table_id}~killed"),
            metadata=AS_TABLE,
        )
        killed_round = committed.commitment.hand_id
        stake = cashier_pb2.Transfer(
            transfer_id=f"hgr:{killed_round}:in:3", debit_account_id=f"wallet:GRAM:{killed.player_id}",
            credit_account_id="house:bank:GRAM", pool=common_pb2.CHIP_POOL_GRAM, amount=30,
            kind=cashier_pb2.TRANSFER_KIND_HOUSE_GAME_RESULT, reference=f"{killed_round}:box3", table_id=table_id,
        )  # fmt: skip
        await world.cashier.CreateTransfers(
            cashier_pb2.CreateTransfersRequest(transfers=[stake], linked=True), metadata=AS_TABLE
        )
        assert await world.wallet(killed.player_id) == killed_before - 30
    # The shard is gone with the round half played; the journal holds it.
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert {e["type"] for e in entries} >= {"open", "dealt"}
    with journal.open("a") as handle:
        handle.write(json.dumps({
            "type": "open", "round_id": killed_round, "table_id": table_id, "player": killed.player_id,
            "chain": f"{table_id}~killed", "commitment": committed.commitment.commitment, "jackpot_before": 0,
            "started_at": 1.0, "cover": 50_000, "wagers": [[3, 10, True, 0]],
        }) + "\n")  # fmt: skip
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        world.add_room(room)

        async def resumed() -> bool:
            try:
                snap = await client.snapshot()
            except grpc.aio.AioRpcError:
                return False
            return snap.house.round.round_id == view.round_id

        client.stub = world.table
        await wait_for(resumed, within=10)
        again = (await client.snapshot()).house.round
        assert [c.index for c in again.boxes[0].cards] == first_cards
        assert "RESUMED after a shard restart or takeover" in again.notes
        # The clock: what was left of it before the restart plus the handover grace (5 s).
        grace = world.settings.handover_grace_seconds
        assert (again.deadline.ToNanoseconds() - view.deadline.ToNanoseconds()) / 1e9 == pytest.approx(
            grace, abs=1.5
        )
        again = await client.decide(again, 1, FOLD)
        assert again.phase == "COMPLETE"
        await finish(world, client, again, before)
        # The undealt round: its stakes were given back (never dealt, never settled).
        await wait_for(lambda: world.wallet(late.player_id), within=5)

        async def refunded() -> bool:
            return await world.wallet(late.player_id) == late_before

        await wait_for(refunded, within=10)

        async def killed_refunded() -> bool:
            return await world.wallet(killed.player_id) == killed_before

        await wait_for(killed_refunded, within=10)

        # Refunded and voided, never dealt on: the hand is revealed VOIDED and nothing settled it.
        async def voided() -> bool:
            reply = await world.fairness.GetCommitment(
                fairness_pb2.GetCommitmentRequest(hand_id=killed_round), metadata=ADMIN
            )
            return reply.commitment.state == fairness_pb2.HAND_STATE_VOIDED

        await wait_for(voided, within=10)
        looked = await world.cashier.LookupTransfers(
            cashier_pb2.LookupTransfersRequest(
                transfer_ids=[f"hgr:{killed_round}:out:3", f"hgr:{killed_round}:void:3"]
            ),
            metadata=ADMIN,
        )
        assert [r.transfer_id for r in looked.results] == [f"hgr:{killed_round}:void:3"]
        assert (await world.audit()).balanced
        assert pytest is not None


async def test_maintenance_stops_new_rounds(backends: dict[str, ServiceProcess], tmp_path: Path) -> None:
    async with table_world(
        backends, house_journal=str(tmp_path / "j"), maintenance_poll_seconds=0.1
    ) as world:
        await fund_house(world, 10_000_000)
        client = await client_at(world, HOLDEM)
        world.lobby.no_new_hands.add(client.table_id.rsplit(".", 1)[0])

        async def paused() -> bool:
            return (await client.snapshot()).house.paused_reason == "MAINTENANCE_NO_NEW_HANDS"

        await wait_for(paused, within=5)
        before = await world.wallet(client.player_id)
        await expect(
            "MAINTENANCE_NO_NEW_HANDS", grpc.StatusCode.FAILED_PRECONDITION, lambda: client.bet(box(1, 10))
        )
        assert await world.wallet(client.player_id) == before


async def test_a_decision_whose_stake_the_cashier_did_not_answer_stays_in_flight_until_it_does(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """The cashier is away as a CALL's stake goes out: the decision stays in flight (no other
    decision on the round meanwhile: UNAVAILABLE), its same stake is sent again until the cashier
    answers, and then it takes effect; the round settles by exactly that CALL (docs/house-games.md,
    "The round core": a stake that may have moved is never dropped)."""
    async with table_world(backends, house_journal=str(tmp_path / "j")) as world:
        await fund_house(world, 10_000_000)
        client = await client_at(world, HOLDEM)
        before = await world.wallet(client.player_id)
        view = (await client.bet(box(1, 10))).round
        world.proxies["cashier"].take_down()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await client.decide(view, 1, CALL)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        client.sent = [Sent(1, CALL)]
        # Another decision on the box while the CALL's stake is unanswered: refused, nothing taken.
        await expect("UNAVAILABLE", grpc.StatusCode.UNAVAILABLE, lambda: client.decide(view, 1, FOLD))
        client.sent = [Sent(1, CALL)]
        world.proxies["cashier"].bring_up()

        async def settled() -> bool:
            return (await client.snapshot()).house.round.phase == "COMPLETE"

        await wait_for(settled, within=15)
        await finish(world, client, (await client.snapshot()).house.round, before)


async def test_a_bet_request_retried_after_a_restart_never_opens_its_finished_round_again(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """A PlaceHouseBets retried with the request id of a round that finished before the shard restarted
    (the journal keeps open rounds only; the answers' memory was the process's): it must not play that
    round again (its commitment is fairness's first answer to the request id, its deck revealed to the
    player, its stake transfers already applied), neither as a free round nor a refund."""
    journal = tmp_path / "journal.jsonl"
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        await fund_house(world, 10_000_000)
        room, client = await room_and_client(world, RUSSIAN, 100_000)
        view = (await client.bet(box(1, 10), request_id="the-bet")).round
        done = await client.decide(view, 1, FOLD)
        assert done.phase == "COMPLETE"
        await wait_for(lambda: view.round_id in world.history.hands)
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        world.add_room(room)
        client.stub = world.table
        after_first = await world.wallet(client.player_id)
        bank_before = await house_balances(world)
        # Fairness knows the request's hand was dealt and finished: the round is not opened again.
        await expect(
            "ROUND_ALREADY_PLAYED",
            grpc.StatusCode.FAILED_PRECONDITION,
            lambda: client.bet(box(1, 10), request_id="the-bet"),
        )
        await asyncio.sleep(1.0)  # any stake, seal or refund the retry set going has had its time
        assert await world.wallet(client.player_id) == after_first
        assert await house_balances(world) == bank_before
        assert (await world.audit()).balanced


async def test_a_bet_request_refused_before_a_restart_opens_its_next_attempt_after_it(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """The other side of the same lookup: a request whose round the cashier refused (nothing taken,
    the hand voided) may be retried after a top-up, also after a restart: a new round opens."""
    journal = tmp_path / "journal.jsonl"
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        await fund_house(world, 10_000_000)
        room, client = await room_and_client(world, RUSSIAN, 5)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await client.bet(box(1, 10), request_id="the-bet")
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        assert await the_retry_plays(world, room, client)
        assert (await world.audit()).balanced


async def the_retry_plays(world: TableWorld, room: Any, client: HouseClient) -> str:
    """At the restarted shard: the room again, the player topped up; the retry of "the-bet" opens a
    round that plays (folded: the ante of 10 lost, nothing else). Its round id."""
    world.add_room(room)
    client.stub = world.table
    await world.fund(client.player_id, 1_000)
    before = await world.wallet(client.player_id)
    view = (await client.bet(box(1, 10), request_id="the-bet")).round
    assert (await client.decide(view, 1, FOLD)).phase == "COMPLETE"
    assert await world.wallet(client.player_id) == before - 10
    return view.round_id


async def test_a_refused_round_whose_void_fairness_never_heard_still_lets_the_retry_play(
    backends: dict[str, ServiceProcess], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused round is closed only once fairness knows its hand is void: a table that died before
    telling fairness (here fairness refuses every void for the table's whole first life) leaves the
    round open in the journal, and its next opener voids it, so the request's retry commits a new
    hand and plays (the same hand again would meet the cashier's first answer: the refusal)."""
    journal = tmp_path / "journal.jsonl"
    real_reveal = FairnessClient.reveal

    async def void_never_arrives(self: FairnessClient, hand_id: str, **kwargs: Any) -> None:
        if kwargs.get("voided"):
            raise Unavailable("UNAVAILABLE", "fairness is away")
        await real_reveal(self, hand_id, **kwargs)

    monkeypatch.setattr(FairnessClient, "reveal", void_never_arrives)
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        await fund_house(world, 10_000_000)
        room, client = await room_and_client(world, RUSSIAN, 5)
        await expect(
            "INSUFFICIENT_FUNDS",
            grpc.StatusCode.FAILED_PRECONDITION,
            lambda: client.bet(box(1, 10), request_id="the-bet"),
        )
        refused_round = json.loads(journal.read_text().splitlines()[0])["round_id"]
        looked = await world.fairness.GetCommitment(
            fairness_pb2.GetCommitmentRequest(hand_id=refused_round), metadata=ADMIN
        )
        assert looked.commitment.state == fairness_pb2.HAND_STATE_COMMITTED  # fairness never heard
    monkeypatch.setattr(FairnessClient, "reveal", real_reveal)
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        assert await the_retry_plays(world, room, client) not in ("", refused_round)
        looked = await world.fairness.GetCommitment(
            fairness_pb2.GetCommitmentRequest(hand_id=refused_round), metadata=ADMIN
        )
        assert looked.commitment.state == fairness_pb2.HAND_STATE_VOIDED
        assert (await world.audit()).balanced


async def test_a_table_that_forgot_a_players_round_shows_them_none_and_plays_on(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """A table keeping 2 finished rounds: the first player's round is forgotten as others play; their
    view shows no round (not an error), a retry of its request id plays nothing, a new bet plays."""
    async with table_world(
        backends, house_journal=str(tmp_path / "j"), house_decision_seconds=30.0, house_keep_finished_rounds=2
    ) as world:
        await fund_house(world, 10_000_000)
        room = house_room(unique("house"), RUSSIAN)
        table_id = world.add_room(room)
        first = HouseClient(unique("hp"), table_id, world.table, RUSSIAN)
        other = HouseClient(unique("hp"), table_id, world.table, RUSSIAN)
        for client in (first, other):
            await world.fund(client.player_id, 100_000)
        view = (await first.bet(box(1, 10), request_id="first-bet")).round
        assert (await first.decide(view, 1, FOLD)).phase == "COMPLETE"
        for _ in range(3):
            played = (await other.bet(box(1, 10))).round
            assert (await other.decide(played, 1, FOLD)).phase == "COMPLETE"
        assert (await first.snapshot()).house.round.round_id == ""
        before = await world.wallet(first.player_id)
        # The retry within the table's answers' memory (5 minutes) gets its first answer; past it,
        # fairness's (ROUND_ALREADY_PLAYED: the restart test above). Never a second round.
        retried = (await first.bet(box(1, 10), request_id="first-bet")).round
        assert retried.round_id == view.round_id
        assert await world.wallet(first.player_id) == before
        again = (await first.bet(box(1, 10))).round
        assert (await first.decide(again, 1, FOLD)).phase == "COMPLETE"
        assert await world.wallet(first.player_id) == before - 10
        assert (await world.audit()).balanced


async def test_after_a_restart_a_player_sees_how_their_last_round_ended(
    backends: dict[str, ServiceProcess], tmp_path: Path
) -> None:
    """The file journal keeps each player's last round view (its compaction too): the restarted shard
    shows it to that player alone."""
    journal = tmp_path / "journal.jsonl"
    async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
        await fund_house(world, 10_000_000)
        room, client = await room_and_client(world, RUSSIAN, 100_000)
        table_id = client.table_id
        view = (await client.bet(box(1, 10))).round
        ended = await client.decide(view, 1, FOLD)
        assert ended.phase == "COMPLETE"
    for _ in range(2):  # each start compacts the file
        async with table_world(backends, house_journal=str(journal), house_decision_seconds=30.0) as world:
            world.add_room(room)
            client.stub = world.table
            assert (await client.snapshot()).house.round == ended
            stranger = HouseClient(unique("hp"), table_id, world.table, RUSSIAN)
            assert (await stranger.snapshot()).house.round.round_id == ""
