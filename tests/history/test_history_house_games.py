"""House-game rounds are recorded like hands, with their own fields: a real Casino Hold'em round from
libs/house_games, its settlement lines per box, the dealer's cards, and the same privacy rules
(another player's unshown box stays hidden; admins see everything)."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta

import grpc
import pytest

from house_games.casino_holdem import CasinoHoldemRound, HoldemDecision
from house_games.wagers import BoxWager
from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.history_records import house_game_record
from service_runtime.testing import auth_metadata, reason_of
from tests.history.engine_hands import START

SERVICE = auth_metadata("table", "service")


def casino_round(prefix: str) -> history_pb2.HandRecord:
    alice, bob = f"{prefix}-alice", f"{prefix}-bob"
    deck = list(range(52))
    random.Random(3).shuffle(deck)
    wagers = [BoxWager(1, alice, 20), BoxWager(2, alice, 20), BoxWager(3, bob, 50)]
    game = CasinoHoldemRound(deck, wagers)
    game.decide(1, HoldemDecision.CALL)
    game.decide(2, HoldemDecision.FOLD)
    game.decide(3, HoldemDecision.CALL)
    return house_game_record(
        game.settle(),
        variant=common_pb2.GAME_VARIANT_CASINO_HOLDEM,
        hand_id=f"{prefix}-round",
        table_id=f"{prefix}-casino",
        room_id="casino-holdem",
        pool=common_pb2.CHIP_POOL_GRAM,
        start_time=START,
        end_time=START + timedelta(seconds=50),
        table_size=5,
        seats={alice: 0, bob: 1},
        starting_stacks={alice: 1000, bob: 1000},
        box_cards={box: game.hole_cards(box) for box in (1, 2, 3)},
        dealer_cards=game.dealer_cards,
        board=game.board,
        shown_boxes=(1, 3),  # the called boxes are turned up against the dealer; the folded one is not
    )


async def test_a_casino_holdem_round_is_recorded_with_its_lines_and_redacted_per_reader(
    stub: history_pb2_grpc.HistoryServiceStub,
) -> None:
    prefix = f"cas{uuid.uuid4().hex[:6]}"
    record = casino_round(prefix)
    game = record.house_game
    assert sum(s.net_result for s in record.seats) + game.house_bank_change + game.jackpot_change == 0
    await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)

    full = (
        await stub.GetHand(
            history_pb2.GetHandRequest(hand_id=record.hand_id), metadata=auth_metadata("ops", *STAFF_ROLES)
        )
    ).hand
    assert full == record
    as_bob = (
        await stub.GetHand(
            history_pb2.GetHandRequest(hand_id=record.hand_id),
            metadata=auth_metadata(f"{prefix}-bob", "player"),
        )
    ).hand
    boxes = {box.box: box for box in as_bob.house_game.boxes}
    assert [c.hidden for c in boxes[2].cards] == [True, True]  # alice's folded box
    assert boxes[1].cards == record.house_game.boxes[0].cards  # alice's called box, shown
    assert as_bob.house_game.dealer_cards == record.house_game.dealer_cards
    mine = await stub.ListMyHands(
        history_pb2.ListMyHandsRequest(), metadata=auth_metadata(f"{prefix}-alice", "player")
    )
    assert [(h.hand_id, h.variant, h.net_result) for h in mine.hands] == [
        (record.hand_id, common_pb2.GAME_VARIANT_CASINO_HOLDEM, record.seats[0].net_result)
    ]


@pytest.mark.parametrize("field", ["player_change", "house_bank_change"])
async def test_a_house_game_round_that_does_not_add_up_is_refused(
    stub: history_pb2_grpc.HistoryServiceStub, field: str
) -> None:
    record = casino_round(f"bad{uuid.uuid4().hex[:6]}")
    if field == "player_change":
        record.house_game.boxes[0].lines[0].player_change += 1
    else:
        record.house_game.house_bank_change += 1
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
    assert (error.value.code(), reason_of(error.value)) == (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID")
