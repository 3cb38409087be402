"""The stream contract (issue 28): one WatchTable message per command or timer step per watcher, with
every event the step caused in order, each as its recipient may see it, and the view after them."""

from __future__ import annotations

import pytest

from poker.table.v1 import table_pb2
from tests.table.conftest import TableWorld, wait_for
from tests.table.players import Player
from tests.table.test_table_hands import in_hand, seated_pair

pytestmark = pytest.mark.postgres

A = table_pb2


async def act_and_read(
    actor: Player, watchers: list[Player], kind: int
) -> list[table_pb2.WatchTableResponse]:
    """`actor` acts; returns what each watcher's stream delivered for it (once every stream has the
    Act's event)."""
    before = [len(p.sent) for p in watchers]
    reply = await actor.act(kind)
    target = reply.event.sequence

    def delivered(p: Player) -> bool:
        return any(e.sequence >= target for m in p.sent for e in m.events)

    await wait_for(lambda: all(delivered(p) for p in watchers))
    # A message of an earlier step may still have been on its way when `before` was read (a loaded
    # machine): only the messages carrying the Act's events or later ones are the Act's.
    new = [
        [m for m in p.sent[n:] if any(e.sequence >= target for e in m.events)]
        for p, n in zip(watchers, before, strict=True)
    ]
    assert [len(messages) for messages in new] == [1] * len(watchers), new
    return [messages[0] for messages in new]


async def test_an_act_reaches_each_watcher_as_one_message_with_all_its_events_and_the_view_after(
    world: TableWorld,
) -> None:
    _, ann, bob = await seated_pair(world)
    await ann.until(in_hand)
    # Heads-up the button (small blind) acts first before the flop: it calls, then the big blind checks.
    first = ann if ann.view is not None and ann.view.to_act_seat == ann.seat else bob
    second = bob if first is ann else ann
    await first.my_turn()
    for message in await act_and_read(first, [ann, bob], A.ACTION_KIND_CALL):
        assert [e.WhichOneof("kind") for e in message.events] == ["action"]
        assert message.view.to_act_seat == second.seat

    await second.my_turn()
    # The check closes the betting round: the action and the flop come in the same message.
    messages = await act_and_read(second, [ann, bob], A.ACTION_KIND_CHECK)
    for player, message in zip([ann, bob], messages, strict=True):
        kinds = [e.WhichOneof("kind") for e in message.events]
        assert kinds[0] == "action", kinds
        assert "cards" in kinds, kinds
        sequences = [e.sequence for e in message.events]
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
        flop = next(e for e in message.events if e.WhichOneof("kind") == "cards")
        assert len(flop.cards.cards) == 3
        assert message.view.street == A.STREET_FLOP
        assert len(message.view.board) == 3
        # Each event redacted for its recipient: the other's hole cards stay face down in the view.
        other = next(s for s in message.view.seats if s.seat != player.seat and s.player_id)
        assert all(c.hidden for c in other.hole_cards)
    # Both streams carry the same events (same sequence numbers), each as its own recipient sees it.
    assert [e.sequence for e in messages[0].events] == [e.sequence for e in messages[1].events]
    for p in (ann, bob):
        await p.close()


async def test_the_deal_reaches_each_player_in_one_message_with_only_their_own_cards_face_up(
    world: TableWorld,
) -> None:
    _, ann, bob = await seated_pair(world)
    await ann.until(in_hand)
    await bob.until(in_hand)
    for player in (ann, bob):
        deal = next(m for m in player.sent if any(e.notice.code == "HAND_STARTED" for e in m.events))
        # The start of the hand (blinds, the deal) is one message, not one per event.
        assert len(deal.events) > 1
        own = next(s for s in deal.view.seats if s.seat == player.seat)
        assert len(own.hole_cards) == 2
        assert not any(c.hidden for c in own.hole_cards)
        for event in deal.events:
            if event.WhichOneof("kind") == "cards" and event.seat and event.seat != player.seat:
                assert all(c.hidden for c in event.cards.cards)
    for p in (ann, bob):
        await p.close()
