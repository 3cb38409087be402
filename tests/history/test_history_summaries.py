"""A player's lists (ListMyHands, ListTableHands) answer each hand's summary from the stored columns,
without reading a record (issue 45): every summary must be what the record itself says of the hand
for that player (`records.summary_of`), page after page, on both backends."""

from __future__ import annotations

import uuid

from poker.common.v1 import common_pb2
from poker.history.v1 import history_pb2, history_pb2_grpc
from service_runtime.testing import auth_metadata
from services.history.records import Viewer, summary_of
from tests.history.engine_hands import varied_records

SERVICE = auth_metadata("table", "service")


async def test_listed_summaries_are_what_each_record_says_for_its_player(
    stub: history_pb2_grpc.HistoryServiceStub,
) -> None:
    prefix = f"sum{uuid.uuid4().hex[:6]}"
    table_id = f"{prefix}-table"
    records = varied_records(23, seed=11, table_id=table_id, prefix=prefix)
    for record in records:
        await stub.RecordHand(history_pb2.RecordHandRequest(hand=record), metadata=SERVICE)
    by_id = {r.hand_id: r for r in records}
    players = sorted({s.player_id for r in records for s in r.seats})
    for player in players:
        metadata = auth_metadata(player, "player")
        listed: list[history_pb2.HandSummary] = []
        token = ""
        while True:
            page = await stub.ListMyHands(
                history_pb2.ListMyHandsRequest(page=common_pb2.PageRequest(page_size=4, page_token=token)),
                metadata=metadata,
            )
            listed.extend(page.hands)
            token = page.page.next_page_token
            if not token:
                break
        at_table = await stub.ListTableHands(
            history_pb2.ListTableHandsRequest(table_id=table_id, page=common_pb2.PageRequest(page_size=100)),
            metadata=metadata,
        )
        played = [r for r in records if any(s.player_id == player for s in r.seats)]
        assert sorted(s.hand_id for s in listed) == sorted(r.hand_id for r in played)
        assert list(at_table.hands) == listed
        for summary in listed:
            assert summary == summary_of(by_id[summary.hand_id], Viewer(player)), (player, summary.hand_id)
