"""Whatever a caller puts in a record, the pure checks either refuse it as bad input or accept it, and an
accepted record renders in every reader's view and both export formats: nothing on the RecordHand or
export path can turn a strange record into INTERNAL."""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from poker.history.v1 import history_pb2
from service_runtime.errors import InvalidArgument
from services.history.exports import open_hand_history, pokerstars
from services.history.records import Viewer, check_hand_record, view_for
from tests.history.engine_hands import varied_records
from tests.history.export_readers import read_ohh_stream

RECORDS = varied_records(21, seed=31, table_id="fuzz")
INTS = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-5, 60))
TEXTS = st.one_of(
    st.text(max_size=40), st.sampled_from(["FOLD", "RAISE", "DEAL_BOARD", "SHOW", "FLOP", "RIVER", ""])
)


@st.composite
def mutated_records(draw: st.DrawFn) -> history_pb2.HandRecord:
    record = history_pb2.HandRecord()
    record.CopyFrom(draw(st.sampled_from(RECORDS)))
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(["hand", "seat", "action", "pot", "card"]))
        if target == "hand":
            name = draw(
                st.sampled_from(
                    ["button_seat", "small_blind", "big_blind", "rake", "table_size", "variant", "pool"]
                )
            )
            value = draw(INTS)
            if name in ("variant", "pool", "button_seat", "table_size"):
                value = max(-(2**31), min(2**31 - 1, value))
            setattr(record, name, value)
        elif target == "seat":
            seat = record.seats[draw(st.integers(0, len(record.seats) - 1))]
            name = draw(
                st.sampled_from(
                    ["seat", "starting_stack", "final_stack", "net_result", "display_name", "shown", "mucked"]
                )
            )
            if name == "display_name":
                seat.display_name = draw(st.text(max_size=40))
            elif name in ("shown", "mucked"):
                setattr(seat, name, draw(st.booleans()))
            else:
                value = draw(INTS)
                setattr(seat, name, max(-(2**31), min(2**31 - 1, value)) if name == "seat" else value)
        elif target == "action" and record.actions:
            action = record.actions[draw(st.integers(0, len(record.actions) - 1))]
            name = draw(st.sampled_from(["street", "kind", "seat", "amount", "to"]))
            if name in ("street", "kind"):
                setattr(action, name, draw(TEXTS))
            else:
                value = draw(INTS)
                setattr(action, name, max(-(2**31), min(2**31 - 1, value)) if name == "seat" else value)
        elif target == "pot" and record.pots:
            pot = record.pots[draw(st.integers(0, len(record.pots) - 1))]
            if pot.winner_amounts and draw(st.booleans()):
                pot.winner_amounts[0] = draw(INTS)
            else:
                pot.amount = draw(INTS)
        elif target == "card":
            card = (
                record.seats[0].hole_cards[0] if draw(st.booleans()) or not record.board else record.board[0]
            )
            card.index = draw(st.integers(0, 60))
            card.text = draw(st.sampled_from(["", "As", "zz"]))
    return record


@settings(max_examples=300, deadline=None)
@given(mutated_records())
def test_a_strange_record_is_refused_as_bad_input_or_renders_everywhere(
    record: history_pb2.HandRecord,
) -> None:
    try:
        check_hand_record(record)
    except InvalidArgument:
        event("refused")
        return
    event("accepted")
    readers = [Viewer("ops", admin=True), *(Viewer(seat.player_id) for seat in record.seats)]
    for reader in readers:
        view = view_for(record, reader)
        assert view is not None
        hero = None if reader.admin else reader.subject
        assert pokerstars.render([(1, view)], hero)
        (document,) = read_ohh_stream(open_hand_history.render([(1, view)], hero))
        assert set(document) == {"ohh"}
