"""Rules 14, spectators on a short delay: any authenticated caller may spectate; the public view only
(a seated player spectating learns nothing more); every message at least the delay late, the join
snapshot included; every event, in order; a limit per table with its own reason."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import pytest

from poker.table.v1 import table_pb2
from service_runtime.auth import Role
from service_runtime.testing import reason_of
from tests.table.conftest import ServiceProcess, TableWorld, table_world, unique
from tests.table.presence_kit import Spectator, autopilot, public_leaks, running, seated

pytestmark = pytest.mark.postgres

A = table_pb2
DELAY = 1.0


@pytest.fixture
async def delayed(backends: dict[str, ServiceProcess]) -> AsyncIterator[TableWorld]:
    async with table_world(
        backends, countdown_seconds=0.1, spectator_delay_seconds=DELAY, max_spectators=3
    ) as built:
        yield built


def _seconds(stamp: object) -> float:
    return stamp.ToNanoseconds() / 1e9  # type: ignore[attr-defined, no-any-return]


async def test_no_spectator_message_is_younger_than_the_delay_every_event_arrives_in_order_and_no_hidden_card(
    delayed: TableWorld,
) -> None:
    ann, bob = await seated(delayed, 2, "watch")
    stranger = Spectator(unique("carl"), delayed.table_channel, ann.table_id)
    own_table = Spectator(ann.player_id, delayed.table_channel, ann.table_id)  # seated, as a spectator
    operator = Spectator("operator", delayed.table_channel, ann.table_id, role=Role.ADMIN)
    spectators = (stranger, own_table, operator)
    for s in spectators:
        await s.start()
    async with autopilot(ann), autopilot(bob):
        # Three hands to the showdown (both check or call), so shown cards are in the public view.
        await bob.until(
            lambda v: len({m.view.hand_id for m in bob.messages if m.view.hand_id}) >= 4, within=60
        )
    last_seen = max(m.event.sequence for m in bob.messages if m.HasField("event"))
    for s in spectators:
        await s.until(lambda m: m.HasField("event") and m.event.sequence >= last_seen, within=DELAY + 10)
    for s in spectators:
        await s.close()
    for spectator in spectators:
        messages = [m for _, m in spectator.received]
        assert messages, spectator.player_id
        for received_at, message in spectator.received:
            # Measured: nothing describes the table as it was less than the delay ago.
            assert received_at - _seconds(message.view.as_of) >= DELAY
            if message.HasField("event"):
                assert received_at - _seconds(message.event.time) >= DELAY
        sequences = [m.event.sequence for m in messages if m.HasField("event")]
        # Every event, in order, none left out.
        assert sequences == list(range(sequences[0], sequences[-1] + 1))
        assert set(range(sequences[0], last_seen + 1)) <= set(sequences)
        assert public_leaks(messages) == [], spectator.player_id
        assert any(m.event.cards.shown_by_player for m in messages if m.HasField("event"))
    # The seated player's spectator stream is the stranger's, message for message.
    assert [m.event for _, m in own_table.received if m.HasField("event")][:50] == [
        m.event for _, m in stranger.received if m.HasField("event")
    ][:50]
    for p in (ann, bob):
        await p.close()


async def test_a_spectator_joining_late_starts_from_a_snapshot_that_is_itself_delayed(
    delayed: TableWorld,
) -> None:
    ann, bob = await seated(delayed, 2, "late")
    async with autopilot(ann), autopilot(bob):
        await bob.until(
            lambda v: len({m.view.hand_id for m in bob.messages if m.view.hand_id}) >= 2, within=60
        )
        await asyncio.sleep(DELAY)
        joined_at = time.time()
        late = Spectator(unique("dora"), delayed.table_channel, ann.table_id)
        await late.start()
        await late.until(lambda m: True, within=5)
    await late.close()
    received_at, first = late.received[0]
    assert not first.HasField("event")
    assert first.view.table_id == ann.table_id
    # At least the delay old when it reaches the spectator (the server may take the join a while after
    # `joined_at` on a loaded machine: it releases what is due then, so `joined_at` is no bound), and a
    # view of the table as it was, not a fresh one: older than the moment it was asked for.
    assert received_at - _seconds(first.view.as_of) >= DELAY
    assert _seconds(first.view.as_of) < joined_at
    assert public_leaks([m for _, m in late.received]) == []
    for p in (ann, bob):
        await p.close()


async def test_spectators_beyond_the_table_limit_are_refused_with_their_own_reason(
    delayed: TableWorld,
) -> None:
    ann, bob = await seated(delayed, 2, "full")
    await ann.until(running)
    crowd = [Spectator(unique("fan"), delayed.table_channel, ann.table_id) for _ in range(3)]
    for s in crowd:
        await s.start()
    await asyncio.sleep(0.3)
    extra = Spectator(unique("fan"), delayed.table_channel, ann.table_id)
    await extra.start()
    error = await extra.first_error()
    assert error is not None
    assert (error.code(), reason_of(error)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "SPECTATORS_FULL")
    # One leaves: a place is free again.
    await crowd[0].close()
    await asyncio.sleep(0.3)
    again = Spectator(unique("fan"), delayed.table_channel, ann.table_id)
    await again.start()
    assert await again.first_error(within=DELAY + 1) is None
    for s in (*crowd, again):
        await s.close()
    for p in (ann, bob):
        await p.close()
