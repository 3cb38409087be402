"""Sitting out on fast clocks: a player sitting out keeps the seat, is dealt no hand and posts no
blind, and owes the missed big blind on return (the engine's dead-button rule); sitting out longer than
the limit removes and cashes out; three hands in a row lost to timeouts put a player in sit-out at the
next hand boundary."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.history.v1 import history_pb2
from poker.table.v1 import table_pb2
from services.table.cash.views import public_seat
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
    await bob.until(lambda v: not any(s.display_name == ann.player_id for s in v.seats), within=15)
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
    # The hands dealt (a countdown's view names the next hand, which may never be dealt).
    played = list(
        dict.fromkeys(m.view.hand_id for m in bob.messages if m.view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS)
    )
    await wait_for(lambda: all(h in fast.history.hands for h in played), within=10)

    def timed_out(hand_id: str) -> set[int]:
        record = fast.history.hands[hand_id]
        return {public_seat(a.seat) for a in record.actions if a.cause == history_pb2.ACTION_CAUSE_TIMEOUT}

    # She never acts, so her streak only grows: the sit-out came with the third hand she timed out
    # in. A hand where she had no turn leaves the streak as it is: on a loaded machine bob's own
    # 0.3 s clock can run out first (he folds by the clock and her turn never comes), so those are
    # not counted (the test counted the first three hands, and failed so once in CI).
    assert len([h for h in played if ann.seat in timed_out(h)]) == 3, [timed_out(h) for h in played]
    # Her seat and stack are kept; only the two of them: no further hand starts.
    view = await ann.snapshot()
    assert ann.seat_view(view, ann.seat).player_id == ann.player_id
    assert view.phase == A.TABLE_PHASE_WAITING_FOR_PLAYERS
    for p in (ann, bob):
        await p.close()
    assert (await fast.audit()).balanced


async def test_a_hand_where_the_player_timed_out_and_then_acted_is_not_counted_toward_sit_out(
    backends: dict[str, ServiceProcess],
) -> None:
    # Issue 25 item 2, at a real table: in every hand Ann lets her clock run out at her first chance to
    # check (the table checks for her), then decides her later turns herself. More than three such
    # hands in a row never put her in sit-out: a hand she decided in resets the count. (Clocks of 3 s,
    # so that a decision made at once is never late on a loaded machine.)
    async with table_world(
        backends, action_seconds=3.0, time_bank_seconds=0.0, countdown_seconds=0.1
    ) as world:
        ann, bob = await seated(world, 2, "wakes")
        slept: set[str] = set()

        async def ann_plays() -> None:
            seen: set[tuple[str, int, int, int]] = set()
            while True:
                view = await ann.until(
                    lambda v: (
                        running(v)
                        and v.to_act_seat == ann.seat
                        and len(v.legal_actions.actions) > 0
                        and (v.hand_id, v.street, len(v.board), v.pots[0].amount if v.pots else 0) not in seen
                    ),
                    within=3600,
                )
                seen.add(
                    (view.hand_id, view.street, len(view.board), view.pots[0].amount if view.pots else 0)
                )
                legal = set(view.legal_actions.actions)
                if A.ACTION_KIND_CHECK in legal and view.hand_id not in slept:
                    slept.add(view.hand_id)  # the clock runs out: the table checks for her
                    continue
                kind = A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in legal else A.ACTION_KIND_CALL
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await ann.act(kind, hand_id=view.hand_id)

        task = asyncio.create_task(ann_plays())
        try:
            async with autopilot(bob):
                # Four hands finished, then a fifth dealt (a sit-out would start at that boundary).
                hands: list[str] = []
                while len(hands) < 5:
                    view = await bob.until(
                        lambda v: (
                            (running(v) and v.hand_id not in hands)
                            or status_of(bob, v, ann.seat) == A.SEAT_STATUS_SITTING_OUT
                        ),
                        within=90,
                    )
                    assert status_of(bob, view, ann.seat) != A.SEAT_STATUS_SITTING_OUT, (
                        f"sat out after hands {hands}: {[e.notice.text for e in notices(bob, 'PLAYER_SAT_OUT')]}"
                    )
                    hands.append(view.hand_id)
                fifth = await ann.until(
                    lambda v: v.hand_id == hands[4] and bool(ann.seat_view(v, ann.seat).hole_cards), within=30
                )
                assert status_of(ann, fifth, ann.seat) != A.SEAT_STATUS_SITTING_OUT
                await wait_for(lambda: all(h in world.history.hands for h in hands[:4]), within=30)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, AssertionError):
                await task
        # Each of the four hands had a timeout of hers and then a decision of her own.
        for hand_id in hands[:4]:
            causes = [
                a.cause
                for a in world.history.hands[hand_id].actions
                if public_seat(a.seat) == ann.seat and a.cause != history_pb2.ACTION_CAUSE_UNSPECIFIED
            ]
            assert history_pb2.ACTION_CAUSE_TIMEOUT in causes, (hand_id, causes)
            timeout = causes.index(history_pb2.ACTION_CAUSE_TIMEOUT)
            assert history_pb2.ACTION_CAUSE_PLAYER in causes[timeout + 1 :], (hand_id, causes)
        assert not [e for e in notices(bob, "PLAYER_SAT_OUT") if e.seat == ann.seat]
        assert all(
            status_of(bob, m.view, ann.seat) != A.SEAT_STATUS_SITTING_OUT
            for m in bob.messages
            if m.view.seats
        )
        for p in (ann, bob):
            await p.close()
        assert (await world.audit()).balanced
