"""Scripted hands through gRPC against a real cashier and fairness: sit, blinds, betting, showdown,
settlement, leaving, retries, and the fairness commitment before any card."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc
import pytest

from poker.cashier.v1 import cashier_pb2
from poker.fairness.v1 import fairness_pb2
from poker.history.v1 import history_pb2
from poker.lobby.v1 import shard_directory_pb2, shard_directory_pb2_grpc
from poker.table.v1 import table_pb2
from service_runtime.auth import STAFF_ROLES, Role
from service_runtime.testing import auth_metadata, reason_of
from services.table.cash.views import public_seat
from tests.table.conftest import TableWorld, nl_room, unique, wait_for
from tests.table.players import Player, face_up_cards_of_others

pytestmark = pytest.mark.postgres

A = table_pb2


async def seated_pair(world: TableWorld, buy_in: int = 500) -> tuple[str, Player, Player]:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    bob = Player(unique("bob"), world.table_channel, table_id)
    for p in (ann, bob):
        await world.fund(p.player_id, 1000)
        await p.watch()
    await ann.sit(buy_in, seat=1)
    await bob.sit(buy_in, seat=2)
    return table_id, ann, bob


def in_hand(view: table_pb2.TableView) -> bool:
    return view.phase == A.TABLE_PHASE_HAND_IN_PROGRESS and view.to_act_seat != 0


async def play_passively(players: list[Player], hand_id: str) -> None:
    """Check when allowed, else call, until the hand is over."""
    while True:
        snapshot = await players[0].snapshot()
        if snapshot.hand_id != hand_id or snapshot.to_act_seat == 0:
            return
        actor = next(p for p in players if p.seat == snapshot.to_act_seat)
        view = await actor.my_turn()
        if view.hand_id != hand_id:
            return
        kinds = list(view.legal_actions.actions)
        await actor.act(A.ACTION_KIND_CHECK if A.ACTION_KIND_CHECK in kinds else A.ACTION_KIND_CALL)


async def test_heads_up_hand_deals_after_commitment_plays_to_showdown_and_settles(world: TableWorld) -> None:
    _, ann, bob = await seated_pair(world)
    view = await ann.until(in_hand)
    hand_id = view.hand_id
    assert len(view.seed_commitment) == 64
    # Rules 2: heads-up the button posts the small blind; each has their own two cards face up.
    me = ann.seat_view(view, ann.seat)
    assert len(me.hole_cards) == 2
    assert not any(c.hidden for c in me.hole_cards)
    other = ann.seat_view(view, bob.seat)
    assert [c.hidden for c in other.hole_cards] == [True, True]
    assert sorted(s.bet_this_round for s in view.seats if s.player_id) == [5, 10]

    await play_passively([ann, bob], hand_id)
    await wait_for(lambda: hand_id in world.history.hands)
    record = world.history.hands[hand_id]
    assert len(record.board) == 5
    assert sum(s.net_result for s in record.seats) + record.rake == 0

    # The commitment was shown before any card: the first message with own cards carries it.
    first_cards = next(m for m in ann.messages if any(c.text for s in m.view.seats for c in s.hole_cards))
    assert first_cards.view.seed_commitment == view.seed_commitment
    # The deck dealt is the revealed deck: hole cards and board at their documented positions.
    reveal = await world.fairness.GetReveal(
        fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ann.metadata
    )
    # Version 3: ann gets openings of what she saw (her cards, the board, cards shown down); an admin
    # gets all 52, which give the whole deck in deal order.
    opened = {o.deal_position: o.card.index for o in reveal.reveal.openings}
    admin = await world.fairness.GetReveal(
        fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=auth_metadata("ops", *STAFF_ROLES)
    )
    deck = [o.card.index for o in sorted(admin.reveal.openings, key=lambda o: o.deal_position)]
    assert all(deck[p] == card for p, card in opened.items())
    saw = {c.index for c in record.board}
    saw |= {c.index for s in record.seats if s.shown or s.player_id == ann.player_id for c in s.hole_cards}
    assert set(opened.values()) == saw
    assert reveal.reveal.commitment.commitment == view.seed_commitment
    assert [c.index for c in record.board] == [deck[5], deck[6], deck[7], deck[9], deck[11]]
    dealt = {c.index for s in record.seats for c in s.hole_cards}
    assert dealt == set(deck[:4])

    for p in (ann, bob):
        assert not [
            leak for m in p.messages for leak in face_up_cards_of_others(p, m, {hand_id: set()})
        ] or any(s.shown for s in record.seats)
        await p.close()


async def test_leave_between_hands_cashes_out_at_once_and_conserves_chips(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    await world.fund(ann.player_id, 1000)
    reply = await ann.sit(600)
    assert reply.stack.amount == 600
    assert await world.wallet(ann.player_id) == 400
    left = await ann.leave()
    assert not left.folded_mid_hand
    assert left.cashed_out.amount == 600
    assert await world.wallet(ann.player_id) == 1000
    audit = await world.audit()
    assert all(pool.balanced for pool in audit.pools)


async def test_sit_down_is_idempotent_and_conflicts_change_nothing(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    await world.fund(ann.player_id, 1000)
    first = await ann.sit(500, seat=3, request_id="sit-1")
    again = await ann.sit(500, seat=3, request_id="sit-1")
    assert again == first
    assert await world.wallet(ann.player_id) == 500
    with pytest.raises(grpc.aio.AioRpcError) as conflict:
        await ann.sit(700, seat=3, request_id="sit-1")
    assert conflict.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert reason_of(conflict.value) == "IDEMPOTENCY_CONFLICT"
    with pytest.raises(grpc.aio.AioRpcError) as twice:
        await ann.sit(500, request_id="sit-2")
    assert reason_of(twice.value) == "ALREADY_SEATED"
    assert await world.wallet(ann.player_id) == 500


@pytest.mark.parametrize(
    ("buy_in", "funds", "code", "reason"),
    [
        (100, 1000, grpc.StatusCode.FAILED_PRECONDITION, "BUY_IN_OUT_OF_RANGE"),
        (500, 100, grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS"),
    ],
)
async def test_cashier_refusals_pass_through_and_take_no_seat(
    world: TableWorld, buy_in: int, funds: int, code: grpc.StatusCode, reason: str
) -> None:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    await world.fund(ann.player_id, funds)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.sit(buy_in, seat=1)
    assert (refused.value.code(), reason_of(refused.value)) == (code, reason)
    view = await ann.snapshot()
    assert not any(s.player_id for s in view.seats)
    assert await world.wallet(ann.player_id) == funds


async def test_a_player_on_hold_gets_the_cashiers_reason_and_no_seat(world: TableWorld) -> None:
    """Rules 17 (issue 29): an operator's hold reaches the player at SitDown as PLAYER_ON_HOLD."""
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    await world.fund(ann.player_id, 1000)
    await world.cashier.SetPlayerHold(
        cashier_pb2.SetPlayerHoldRequest(
            request_id=unique("hold"), player_id=ann.player_id, held=True, reason="review"
        ),
        metadata=auth_metadata("history", Role.SERVICE),
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.sit(500, seat=1)
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "PLAYER_ON_HOLD",
    )
    view = await ann.snapshot()
    assert not any(s.player_id for s in view.seats)
    assert await world.wallet(ann.player_id) == 1000


async def test_lobby_refusal_passes_through_and_takes_no_seat(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)
    await world.fund(ann.player_id, 1000)
    world.lobby.not_allowed.add(ann.player_id)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await ann.sit(500)
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_ON_ALLOW_LIST",
    )
    assert await world.wallet(ann.player_id) == 1000


async def test_one_open_seat_per_player_across_tables(world: TableWorld) -> None:
    first = world.add_room(nl_room(unique("nl")))
    second = world.add_room(nl_room(unique("nl")))
    player = unique("ann")
    await world.fund(player, 2000)
    await Player(player, world.table_channel, first).sit(500)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await Player(player, world.table_channel, second).sit(500)
    assert reason_of(refused.value) == "SEAT_SESSION_ALREADY_OPEN"


async def test_bad_input_gets_its_code_and_reason(world: TableWorld) -> None:
    table_id = world.add_room(nl_room(unique("nl")))
    ann = Player(unique("ann"), world.table_channel, table_id)

    async def table_open() -> bool:
        return (await ann.snapshot()).phase == A.TABLE_PHASE_WAITING_FOR_PLAYERS

    # Until it has read its seat sessions from the cashier a table answers UNAVAILABLE; wait.
    await wait_for(table_open)
    cases = [
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="", table_id=table_id, buy_in=500), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="x\x00", table_id=table_id, buy_in=500), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="r", table_id=table_id, buy_in=-5), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "AMOUNT_INVALID"),
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="r", table_id=table_id, seat=99, buy_in=500), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="r", table_id="nope.1", buy_in=500), metadata=ann.metadata),
         grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
        (lambda: ann.stub.SitDown(A.SitDownRequest(request_id="r", table_id="x" * 500, buy_in=500), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
        (lambda: ann.stub.Act(A.ActRequest(request_id="r", table_id=table_id, hand_id="h", action=A.ACTION_KIND_FOLD), metadata=ann.metadata),
         grpc.StatusCode.FAILED_PRECONDITION, "NOT_SEATED"),
        (lambda: ann.stub.Act(A.ActRequest(request_id="r2", table_id=table_id, hand_id="h"), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_REQUIRED"),
        (lambda: ann.stub.LeaveTable(A.LeaveTableRequest(request_id="r", table_id=table_id), metadata=ann.metadata),
         grpc.StatusCode.FAILED_PRECONDITION, "NOT_SEATED"),
        (lambda: ann.stub.GetTableSnapshot(A.GetTableSnapshotRequest(table_id="nope.1"), metadata=ann.metadata),
         grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND"),
        (lambda: ann.stub.SetPlayerSeed(A.SetPlayerSeedRequest(request_id="r", table_id=table_id, client_seed="é"), metadata=ann.metadata),
         grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID"),
    ]  # fmt: skip
    for call, code, reason in cases:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call()
        assert (refused.value.code(), reason_of(refused.value)) == (code, reason)


async def test_engine_refusals_pass_through_and_act_retries_return_the_first_answer(
    world: TableWorld,
) -> None:
    _, ann, bob = await seated_pair(world)
    view = await ann.until(in_hand)
    actor, waiter = (ann, bob) if view.to_act_seat == ann.seat else (bob, ann)
    await actor.my_turn()
    await waiter.until(lambda v: v.hand_id == view.hand_id)
    with pytest.raises(grpc.aio.AioRpcError) as not_turn:
        await waiter.act(A.ACTION_KIND_CHECK)
    assert (not_turn.value.code(), reason_of(not_turn.value)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    with pytest.raises(grpc.aio.AioRpcError) as off_step:
        await actor.act(A.ACTION_KIND_RAISE, 33)
    assert reason_of(off_step.value) == "AMOUNT_NOT_ON_STEP"
    with pytest.raises(grpc.aio.AioRpcError) as small:
        await actor.act(A.ACTION_KIND_RAISE, 15)
    assert reason_of(small.value) == "RAISE_TOO_SMALL"
    with pytest.raises(grpc.aio.AioRpcError) as old_hand:
        await actor.act(A.ACTION_KIND_CALL, hand_id="another-hand")
    assert reason_of(old_hand.value) == "HAND_IS_OVER"
    first = await actor.act(A.ACTION_KIND_RAISE, 30, request_id="raise-1")
    assert first.event.action.action == A.ACTION_KIND_RAISE
    assert first.event.action.amount > 0
    again = await actor.act(A.ACTION_KIND_RAISE, 30, request_id="raise-1")
    assert again == first
    with pytest.raises(grpc.aio.AioRpcError) as conflict:
        await actor.act(A.ACTION_KIND_RAISE, 40, request_id="raise-1")
    assert reason_of(conflict.value) == "IDEMPOTENCY_CONFLICT"
    # The retry changed nothing: it is the other player's turn, facing one raise to 30.
    now = await waiter.my_turn()
    assert max(s.bet_this_round for s in now.seats) == 30
    await ann.close()
    await bob.close()


async def test_leave_mid_hand_folds_at_once_and_cashes_out_after_settlement(world: TableWorld) -> None:
    _, ann, bob = await seated_pair(world)
    view = await ann.until(in_hand)
    hand_id = view.hand_id
    leaver, stayer = (ann, bob) if view.to_act_seat != ann.seat else (bob, ann)
    posted = leaver.seat_view(view, leaver.seat).bet_this_round
    left = await leaver.leave(request_id="bye")
    assert left.folded_mid_hand
    assert left.cashed_out.amount == 0
    assert await leaver.leave(request_id="bye") == left
    await wait_for(lambda: hand_id in world.history.hands)
    # The blind stays in the pot (rules 12); the rest of the stack is back in the wallet.
    await wait_for(_wallet_is(world, leaver.player_id, 1000 - posted))
    record = world.history.hands[hand_id]
    fold = [a for a in record.actions if a.kind == "FOLD"]
    assert fold
    assert public_seat(fold[0].seat) == leaver.seat  # history counts seats from 0
    assert fold[0].cause == history_pb2.ACTION_CAUSE_LEFT_TABLE
    snapshot = await stayer.snapshot()
    assert not any(s.display_name == leaver.player_id for s in snapshot.seats)
    await ann.close()
    await bob.close()


def _wallet_is(world: TableWorld, player: str, amount: int) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        return await world.wallet(player) == amount

    return check


async def test_conservation_holds_after_hands(world: TableWorld) -> None:
    _, ann, bob = await seated_pair(world)
    for _ in range(3):
        view = await ann.until(in_hand)
        await play_passively([ann, bob], view.hand_id)
        await wait_for(lambda v=view: v.hand_id in world.history.hands)
    for p in (ann, bob):
        await p.leave()
        await p.close()
    # A leave while a hand runs (the next one is dealt at once) folds and is cashed out once that
    # hand is settled, after its answer: the wallets are whole once both cash-outs are in.
    settled_hands: list[str] = []

    async def whole() -> bool:
        total = await world.wallet(ann.player_id) + await world.wallet(bob.player_id)
        settled_hands[:] = list(world.history.hands)
        return total + sum(world.history.hands[h].rake for h in settled_hands) == 2000

    await wait_for(whole, within=20)
    audit = await world.audit()
    assert all(pool.balanced for pool in audit.pools)


async def test_the_lobby_reads_the_shards_table_figures_and_nobody_else(world: TableWorld) -> None:
    table_id, ann, bob = await seated_pair(world)
    view = await ann.until(in_hand)
    await play_passively([ann, bob], view.hand_id)
    await wait_for(lambda: view.hand_id in world.history.hands)
    directory = shard_directory_pb2_grpc.ShardDirectoryServiceStub(world.table_channel)
    reply = await directory.ListShardTables(
        shard_directory_pb2.ListShardTablesRequest(room_id=table_id.rsplit(".", 1)[0]),
        metadata=auth_metadata("lobby", Role.SERVICE),
    )
    (summary,) = reply.tables
    assert (summary.table_id, summary.seated_players, summary.seats) == (table_id, 2, 6)
    assert sorted(s.display_name for s in summary.taken_seats) == sorted([ann.player_id, bob.player_id])
    assert sum(s.stack for s in summary.taken_seats) + world.history.hands[view.hand_id].rake == 1000
    assert summary.hands_per_hour >= 1
    # Who sits there, for the lobby's routing alone, beside the summary (never inside it).
    (players,) = reply.players
    assert (players.table_id, sorted(players.player_ids)) == (
        table_id,
        sorted([ann.player_id, bob.player_id]),
    )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await directory.ListShardTables(shard_directory_pb2.ListShardTablesRequest(), metadata=ann.metadata)
    assert (refused.value.code(), reason_of(refused.value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    for p in (ann, bob):
        await p.close()
