"""Whoever has no seat is a spectator (rules 14): WatchTable and GetTableSnapshot without a seat show
the table (who sits where, stacks of the last settled hand, the phase) but nothing of a hand's play,
which such a caller sees only through SpectateTable, the delay late. Sitting down turns the same
stream into the player's live view."""

from __future__ import annotations

import itertools

import pytest

from poker.table.v1 import table_pb2
from tests.table.conftest import TableWorld, unique, wait_for
from tests.table.players import Player
from tests.table.test_table_hands import in_hand, play_passively, seated_pair

pytestmark = pytest.mark.postgres

A = table_pb2


def shows_play(view: table_pb2.TableView) -> bool:
    return bool(
        view.board
        or view.pots
        or view.to_act_seat
        # The turn's deadline moves with every action and says how much time bank the seat to act
        # spends: live play, which a spectator sees only the delay late.
        or view.HasField("to_act_deadline")
        or view.awards
        or view.legal_actions.actions
        or any(s.bet_this_round or s.hole_cards or s.folded or s.time_bank_seconds for s in view.seats)
    )


def timeless(view: table_pb2.TableView) -> bytes:
    copy = table_pb2.TableView()
    copy.CopyFrom(view)
    copy.ClearField("as_of")
    return copy.SerializeToString(deterministic=True)


async def test_a_watcher_without_a_seat_sees_no_play_until_it_sits_down(world: TableWorld) -> None:
    table_id, ann, bob = await seated_pair(world)
    view = await ann.until(in_hand)
    cat = Player(unique("cat"), world.table_channel, table_id)
    await world.fund(cat.player_id, 1000)
    await cat.watch()
    await ann.stub.SendChat(
        A.SendChatRequest(request_id=unique("chat"), table_id=table_id, text="hello"), metadata=ann.metadata
    )
    await play_passively([ann, bob], view.hand_id)
    await wait_for(lambda: view.hand_id in world.history.hands)
    snapshot = await cat.snapshot()
    assert not shows_play(snapshot)
    # Named, never by id (the handles are the players' own at every seat).
    assert sorted(s.display_name for s in snapshot.seats if s.player_id) == sorted(
        [ann.player_id, bob.player_id]
    )
    # Stacks as settled: what the two hold together is what they bought in, less the rake.
    assert sum(s.stack for s in snapshot.seats) == 1000 - world.history.hands[view.hand_id].rake
    assert cat.messages, "the stream opened with a view"
    for message in cat.messages:
        assert not message.HasField("event"), message
        assert not shows_play(message.view), message
    # A new message only when the waiting view changes: one per action would tell, live, when each
    # player acted (the cadence of the hand) although the message shows nothing of it.
    views = [timeless(m.view) for m in cat.sent]
    assert all(a != b for a, b in itertools.pairwise(views)), "a message that changed nothing"
    # Seated, the same stream is the player's live view.
    await cat.sit(500, seat=3)
    live = await cat.until(lambda v: in_hand(v) and any(s.seat == cat.seat and s.hole_cards for s in v.seats))
    assert live.to_act_seat != 0
    for p in (ann, bob, cat):
        await p.close()


async def test_one_player_holds_at_most_a_few_streams_at_a_table(world: TableWorld) -> None:
    import grpc

    from service_runtime.testing import reason_of

    table_id, ann, bob = await seated_pair(world)
    extra = [Player(ann.player_id, world.table_channel, table_id) for _ in range(3)]
    for p in extra:  # ann's own stream is the first of four
        await p.watch()
    refused = ann.stub.WatchTable(A.WatchTableRequest(table_id=table_id), metadata=ann.metadata)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await refused.read()
    assert (error.value.code(), reason_of(error.value)) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "WATCH_STREAMS_EXCEEDED",
    )
    # Closing one makes room again; the other player was never limited by ann's streams.
    await extra[0].close()
    again = Player(ann.player_id, world.table_channel, table_id)
    await wait_for(lambda: _opens(again))
    for p in (ann, bob, again, *extra[1:]):
        await p.close()


async def _opens(player: Player) -> bool:
    import grpc

    try:
        await player.watch()
    except grpc.aio.AioRpcError:
        return False
    return True
