"""Sitting out on fast clocks: a player sitting out keeps the seat, is dealt no hand and posts no
blind, and owes the missed big blind on return (the engine's dead-button rule); sitting out longer than
the limit removes and cashes out; three hands in a row lost to timeouts put a player in sit-out at the
next hand boundary."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from services.table.views import public_seat
from tests.table.conftest import ServiceProcess, TableWorld, nl_room, table_world, unique, wait_for
from tests.table.players import Player
from tests.table.presence_kit import autopilot, notices, running, seated, status_of

pytestmark = pytest.mark.postgres

A = table_pb2


@pytest.fixture
async def fast(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, action_seconds=0.3, time_bank_seconds=0.0, countdown_seconds=0.1, sit_out_seconds=1.5
    ) as built:
        yield built


async def _sit_out(player: Player) -> int:
    reply = await player.stub.SitOut(
        A.SitOutRequest(request_id=unique("out"), table_id=player.table_id), metadata=player.metadata
    )
    return int(reply.status)


async def _sit_in(player: Player, *, wait: bool = False) -> int:
    reply = await player.stub.SitIn(
        A.SitInRequest(request_id=unique("in"), table_id=player.table_id, wait_for_big_blind=wait),
        metadata=player.metadata,
    )
    return int(reply.status)


async def test_sitting_out_deals_no_hand_posts_no_blind_and_the_missed_big_blind_is_owed_on_return(
    backends: dict[str, ServiceProcess],
) -> None:
    async with table_world(
        backends, action_seconds=0.3, time_bank_seconds=0.0, countdown_seconds=0.1
    ) as world:
        ann, bob, cat = await seated(world, 3, "owe")
        assert await _sit_out(ann) == A.SEAT_STATUS_SITTING_OUT
        first = await bob.until(running)
        mark = len(bob.messages)
        async with autopilot(bob, fold=True), autopilot(cat, fold=True):
            seen: set[str] = set()
            # Three hands without her: the big blind passes her seat (bob and cat trade it).
            while len(seen) < 3:
                view = await bob.until(
                    lambda v: running(v) and v.hand_id not in seen | {first.hand_id}, within=30
                )
                seen.add(view.hand_id)
                assert not bob.seat_view(view, ann.seat).hole_cards
                assert status_of(bob, view, ann.seat) == A.SEAT_STATUS_SITTING_OUT
            assert not [e for e in notices(bob, "BLIND_POSTED", since=mark) if e.seat == ann.seat]
            assert ann.seat_view(await ann.snapshot(), ann.seat).player_id == ann.player_id
            # Back in, posting at once: her first hand back starts with a big blind of hers (live,
            # out of position, or the big blind itself when it reaches her): no skipped big blind.
            back = len(ann.messages)
            assert await _sit_in(ann) != A.SEAT_STATUS_SITTING_OUT
            async with autopilot(ann, fold=True):
                dealt = await ann.until(
                    lambda v: running(v) and bool(ann.seat_view(v, ann.seat).hole_cards), within=30
                )
                await wait_for(lambda: dealt.hand_id in world.history.hands, within=15)
                posts = [
                    m.event.notice.text
                    for m in ann.messages[back:]
                    if m.view.hand_id == dealt.hand_id
                    and m.HasField("event")
                    and m.event.HasField("notice")
                    and m.event.notice.code == "BLIND_POSTED"
                    and m.event.seat == ann.seat
                ]
                assert any("big blind 10" in text for text in posts), posts
        for p in (ann, bob, cat):
            await p.close()
        assert (await world.audit()).balanced


async def test_sitting_out_longer_than_the_limit_removes_and_cashes_out(fast: TableWorld) -> None:
    table_id = fast.add_room(nl_room(unique("limit")))
    ann = Player(unique("ann"), fast.table_channel, table_id)
    bob = Player(unique("bob"), fast.table_channel, table_id)
    for p in (ann, bob):
        await fast.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(500, seat=1)
    assert await _sit_out(ann) == A.SEAT_STATUS_SITTING_OUT
    await bob.sit(500, seat=2)
    await bob.until(lambda v: not any(s.player_id == ann.player_id for s in v.seats), within=15)
    assert notices(bob, "SIT_OUT_EXPIRED")[-1].seat == ann.seat
    # No hand was played: the whole buy-in is back in her wallet.
    await wait_for(lambda: _wallet_is(fast, ann.player_id, 1000), within=10)
    for p in (ann, bob):
        await p.close()
    assert (await fast.audit()).balanced


async def _wallet_is(world: TableWorld, player: str, amount: int) -> bool:
    return await world.wallet(player) == amount


async def test_three_hands_in_a_row_lost_to_timeouts_put_the_player_in_sit_out(fast: TableWorld) -> None:
    ann, bob = await seated(fast, 2, "sleepy")
    # Ann is connected (her stream is open) but never acts; bob plays every turn.
    async with autopilot(bob):
        out = await bob.until(lambda v: status_of(bob, v, ann.seat) == A.SEAT_STATUS_SITTING_OUT, within=60)
    assert out.seats
    sat_out = notices(bob, "PLAYER_SAT_OUT")
    assert sat_out[-1].seat == ann.seat
    assert "3 hands in a row" in sat_out[-1].notice.text
    hands = [m.view.hand_id for m in bob.messages if m.view.hand_id]
    played = list(dict.fromkeys(h for h in hands if h))
    await wait_for(lambda: all(h in fast.history.hands for h in played[:3]), within=10)
    for hand_id in played[:3]:
        record = fast.history.hands[hand_id]
        timed = {public_seat(a.seat) for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT}
        assert ann.seat in timed, hand_id
    # Her seat and stack are kept; only the two of them: no further hand starts.
    view = await ann.snapshot()
    assert ann.seat_view(view, ann.seat).player_id == ann.player_id
    assert view.phase == A.TABLE_PHASE_WAITING_FOR_PLAYERS
    for p in (ann, bob):
        await p.close()
    assert (await fast.audit()).balanced
