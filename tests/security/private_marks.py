"""Other players' private data, seeded into a running cluster for the fuzz of every method to look
for in what a player who took no part reads (issue 23, Done-when 1).

`seed_private_marks` deals, records and plays, as the services themselves would, data that belongs
to alice and her table mates and to nobody else: two finished hands of alice and bob (fairness
versions 2 and 3), a house-game round of alice's at the fairness service (participants only) and
one she plays at a real house table, a recorded hand of alice's four-handed table with a fold and two
mucks in history, and a player seated alone in a private room. Each yields marks, byte strings that
appear in an answer only when the answer carries that data: the hands' ids, the version 2 seed (it
gives the deck, every folded hole card), the salts of the version 3 positions nobody but their
player saw (an opening is worth nothing without its salt), the round's seed and commitment, the
private room's id and its player's id.

`Marks.targeted` holds the reads a nosy player would make for that data (GetReveal, GetCommitment,
VerifyHand and ListTableCommitments of each hand and chain; GetHand, ListTableHands and both exports
of the recorded hand; GetTableSnapshot, WatchTable and SpectateTable of the private room and of the
house table); the fuzz sends them as strangers and as the entitled callers (alice, an admin), so the
check cannot pass because the marks were never there to find: every mark must reach an entitled
caller at least once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from poker.cashier.v1 import cashier_pb2, cashier_pb2_grpc
from poker.common.v1 import common_pb2
from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from poker.history.v1 import history_pb2, history_pb2_grpc
from poker.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from service_runtime.auth import STAFF_ROLES, ServiceName
from service_runtime.testing import auth_metadata, fund_house, service_metadata
from services.table.house.house_round import fairness_chain
from tests.history.engine_hands import record_of
from tests.history.test_history_privacy import fold_muck_showdown_hand

from .service_processes import ServiceProcess
from .test_fairness_reads import PUBLIC_POSITIONS, deal_hand

ADMIN = auth_metadata("ops", *STAFF_ROLES)
TABLE = service_metadata(ServiceName.TABLE)
PAYMENTS = service_metadata(ServiceName.PAYMENTS)
# Dealt or seated with alice; none of them is a caller of the fuzz.
TABLE_MATES = ("bob", "carl", "dora")
HOUSE_TABLE = "casino-holdem-gram.1"
FAIRNESS = "/poker.fairness.v1.FairnessService"
HISTORY = "/poker.history.v1.HistoryService"
TABLE_SERVICE = "/poker.table.v1.TableService"


@dataclass
class Marks:
    """What strangers must never read, by what it is, and the reads that go looking for it."""

    secret: dict[bytes, str] = field(default_factory=dict)
    targeted: dict[str, list[bytes]] = field(default_factory=dict)
    # The marks an entitled caller (a participant, an admin) was given: each must be, or the check
    # would pass on marks that no read ever carries.
    reached: set[str] = field(default_factory=set)

    def add(self, what: str, *values: str | bytes) -> None:
        for value in values:
            mark = value.encode() if isinstance(value, str) else value
            assert len(mark) >= 12, (what, mark)  # long enough not to turn up by chance
            self.secret[mark] = what

    def ask(self, path: str, *requests: Message) -> None:
        self.targeted.setdefault(path, []).extend(r.SerializeToString() for r in requests)

    def found(self, request: bytes, answer: bytes) -> list[str]:
        """The marks in an answer that the request did not itself carry (an error may echo an id
        the caller sent: that tells them nothing)."""
        return sorted({what for mark, what in self.secret.items() if mark in answer and mark not in request})


async def seed_private_marks(services: Mapping[str, ServiceProcess]) -> Marks:
    marks = Marks()
    await _fairness_hands(services["fairness"], marks)
    await _recorded_hand(services["history"], marks)
    await _private_room(services, marks)
    await _house_round(services, marks)
    return marks


async def _fairness_hands(fairness: ServiceProcess, marks: Marks) -> None:
    players = ["alice", *TABLE_MATES[:1]]
    table_id = "t-1"  # a plausible id: the fuzz's random requests reach it too
    async with grpc.aio.insecure_channel(fairness.address) as channel:
        stub = fairness_pb2_grpc.FairnessServiceStub(channel)
        v2 = await deal_hand(stub, table_id, players, private=False, version=2)
        v3 = await deal_hand(stub, table_id, players, private=False, version=3)
        chain = fairness_chain("house-table-1", "alice")
        house = await deal_hand(stub, chain, ["alice"], private=True, version=2)
        whole = await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=v3.hand_id), metadata=ADMIN)
    marks.add("the hand id of a hand of alice and bob", v2.hand_id, v3.hand_id)
    marks.add("the seed of a version 2 hand of alice and bob (it gives the deck)", v2.seed, v2.seed.hex())
    hidden = [o.salt for o in whole.reveal.openings if o.deal_position not in PUBLIC_POSITIONS]
    assert len(hidden) == 52 - len(PUBLIC_POSITIONS)
    marks.add("the opening of a version 3 position a stranger did not see", *hidden)
    marks.add(
        "a house round of alice's (id, seed or commitment)", house.hand_id, house.seed, house.commitment
    )
    for hand_id in (v2.hand_id, v3.hand_id, house.hand_id):
        marks.ask(f"{FAIRNESS}/GetReveal", fairness_pb2.GetRevealRequest(hand_id=hand_id))
        marks.ask(f"{FAIRNESS}/GetCommitment", fairness_pb2.GetCommitmentRequest(hand_id=hand_id))
        marks.ask(
            f"{FAIRNESS}/VerifyHand",
            fairness_pb2.VerifyHandRequest(
                hand_id=hand_id, dealt_cards=[fairness_pb2.DealtCard(position=0, card_index=0)]
            ),
        )
    for listed in (table_id, chain):
        marks.ask(
            f"{FAIRNESS}/ListTableCommitments", fairness_pb2.ListTableCommitmentsRequest(table_id=listed)
        )


async def _recorded_hand(history: ServiceProcess, marks: Marks) -> None:
    hand = fold_muck_showdown_hand(["alice", *TABLE_MATES])
    table_id = "table-1"
    record = record_of(hand, table_id=table_id, hand_id=f"hand-{uuid.uuid4().hex}")
    async with grpc.aio.insecure_channel(history.address) as channel:
        await history_pb2_grpc.HistoryServiceStub(channel).RecordHand(
            history_pb2.RecordHandRequest(hand=record), metadata=TABLE, timeout=5
        )
    marks.add("the hand id of a recorded hand of alice's table", record.hand_id)
    marks.ask(f"{HISTORY}/GetHand", history_pb2.GetHandRequest(hand_id=record.hand_id))
    marks.ask(f"{HISTORY}/ListTableHands", history_pb2.ListTableHandsRequest(table_id=table_id))
    marks.ask(f"{HISTORY}/ListMyHands", history_pb2.ListMyHandsRequest())
    marks.ask(
        f"{HISTORY}/ExportHands",
        *(
            history_pb2.ExportHandsRequest(hand_ids=[record.hand_id], format=export_format)
            for export_format in (
                history_pb2.EXPORT_FORMAT_POKERSTARS_TEXT,
                history_pb2.EXPORT_FORMAT_OPEN_HAND_HISTORY_JSON,
            )
        ),
    )


async def _retry_unavailable(call: Callable[[], Any]) -> Any:
    """A shard answers UNAVAILABLE until it has read its tables' seat sessions."""
    for attempt in range(100):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or attempt == 99:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("unreachable")


async def _private_room(services: Mapping[str, ServiceProcess], marks: Marks) -> None:
    """A player alone (no hand, so no state changes under the fuzz) in a private room."""
    room_id = f"private-{uuid.uuid4().hex[:8]}"
    priya = f"priya-{uuid.uuid4().hex[:8]}"
    async with grpc.aio.insecure_channel(services["lobby"].address) as channel:
        lobby = lobby_pb2_grpc.LobbyServiceStub(channel)
        await lobby.CreateRoom(
            lobby_pb2.CreateRoomRequest(
                request_id=room_id,
                room=lobby_pb2.Room(
                    room_id=room_id, display_name="private", variant=common_pb2.GAME_VARIANT_NO_LIMIT_HOLDEM,
                    pool=common_pb2.CHIP_POOL_GRAM, seats_per_table=6, private=True,
                    blinds=lobby_pb2.BlindStakes(small_blind=5, big_blind=10, step=5),
                    min_buy_in=200, max_buy_in=2000,
                ),
                table_count=1,
            ),
            metadata=ADMIN, timeout=5,
        )  # fmt: skip
        await lobby.UpdateAllowList(
            lobby_pb2.UpdateAllowListRequest(request_id=priya, room_id=room_id, add_player_ids=[priya]),
            metadata=ADMIN,
            timeout=5,
        )
    async with grpc.aio.insecure_channel(services["cashier"].address) as channel:
        await cashier_pb2_grpc.CashierServiceStub(channel).Purchase(
            cashier_pb2.PurchaseRequest(
                payment_reference=f"seed-{priya}", player_id=priya, source=cashier_pb2.PAYMENT_SOURCE_GRAM,
                amount_minor=10**10,
            ),
            metadata=PAYMENTS, timeout=5,
        )  # fmt: skip
    table_id = f"{room_id}.1"
    async with grpc.aio.insecure_channel(services["table"].address) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        sit = table_pb2.SitDownRequest(request_id=f"seed-sit-{priya}", table_id=table_id, buy_in=1000)
        await _retry_unavailable(lambda: stub.SitDown(sit, metadata=auth_metadata(priya), timeout=5))
    marks.add("a private room, or its seated player", room_id, priya)
    marks.ask(f"{TABLE_SERVICE}/GetTableSnapshot", table_pb2.GetTableSnapshotRequest(table_id=table_id))
    marks.ask(f"{TABLE_SERVICE}/WatchTable", table_pb2.WatchTableRequest(table_id=table_id))
    marks.ask(f"{TABLE_SERVICE}/SpectateTable", table_pb2.SpectateTableRequest(table_id=table_id))
    marks.ask("/poker.lobby.v1.LobbyService/ListRooms", lobby_pb2.ListRoomsRequest())


async def _house_round(services: Mapping[str, ServiceProcess], marks: Marks) -> None:
    """Alice plays one Casino Hold'em round to its end; the fuzz starts once its every effect (the
    settlement, the reveal, the record) is in, so the fuzz's checks of state see no change."""
    async with grpc.aio.insecure_channel(services["cashier"].address) as channel:
        await fund_house(
            cashier_pb2_grpc.CashierServiceStub(channel), request_id="seed-house-bank",
            pool=common_pb2.CHIP_POOL_GRAM, amount=10_000_000, reason="fuzz seed", rpc_deadline=5,
        )  # fmt: skip
    alice = auth_metadata("alice")
    async with grpc.aio.insecure_channel(services["table"].address) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        bet = table_pb2.PlaceHouseBetsRequest(
            request_id="seed-house-round", table_id=HOUSE_TABLE, boxes=[table_pb2.HouseBox(box=1, ante=10)]
        )
        view = (await _retry_unavailable(lambda: stub.PlaceHouseBets(bet, metadata=alice, timeout=10))).round
        while view.phase != "COMPLETE":
            decision = table_pb2.MakeHouseDecisionRequest(
                request_id=uuid.uuid4().hex,
                table_id=HOUSE_TABLE,
                round_id=view.round_id,
                box=view.box_to_act or 1,
                decision=table_pb2.HOUSE_DECISION_KIND_FOLD,
            )
            view = (await stub.MakeHouseDecision(decision, metadata=alice, timeout=10)).round
    round_id = view.round_id
    await _settled(services, round_id)
    marks.add("a house round alice played at the table", round_id)
    marks.ask(f"{TABLE_SERVICE}/GetTableSnapshot", table_pb2.GetTableSnapshotRequest(table_id=HOUSE_TABLE))
    marks.ask(f"{TABLE_SERVICE}/WatchTable", table_pb2.WatchTableRequest(table_id=HOUSE_TABLE))
    marks.ask(f"{FAIRNESS}/GetReveal", fairness_pb2.GetRevealRequest(hand_id=round_id))
    marks.ask(
        f"{FAIRNESS}/ListTableCommitments",
        fairness_pb2.ListTableCommitmentsRequest(table_id=fairness_chain(HOUSE_TABLE, "alice")),
    )
    marks.ask(f"{HISTORY}/GetHand", history_pb2.GetHandRequest(hand_id=round_id))
    marks.ask(f"{HISTORY}/ListTableHands", history_pb2.ListTableHandsRequest(table_id=HOUSE_TABLE))


async def _settled(services: Mapping[str, ServiceProcess], round_id: str) -> None:
    """The round's reveal is at fairness and its record in history (the table sends both after the
    settlement, which the answer to the last decision already followed)."""
    async with (
        grpc.aio.insecure_channel(services["fairness"].address) as fairness_channel,
        grpc.aio.insecure_channel(services["history"].address) as history_channel,
    ):
        fairness = fairness_pb2_grpc.FairnessServiceStub(fairness_channel)
        history = history_pb2_grpc.HistoryServiceStub(history_channel)
        for _ in range(600):
            try:
                await fairness.GetReveal(fairness_pb2.GetRevealRequest(hand_id=round_id), metadata=ADMIN)
                await history.GetHand(history_pb2.GetHandRequest(hand_id=round_id), metadata=ADMIN)
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION):
                    raise
                await asyncio.sleep(0.05)
    raise AssertionError(f"house round {round_id} never reached fairness and history")
