"""In-memory stand-ins for what a table calls (cashier, fairness, lobby rooms, the hand log), for tests
that drive one table in-process and decide exactly when a call fails."""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from poker.common.v1 import common_pb2
from poker_engine.config import RakeRule, Variant
from service_runtime.errors import FailedPrecondition, Unavailable
from services.table.cash.hand_record import SeenPositions
from services.table.log.event_log import LocalEventLog
from services.table.ports.dependencies import Commitment, SeatSession
from services.table.ports.rooms import Room, SeatGrant

ROOM = Room(
    room_id="r",
    variant=Variant.NO_LIMIT,
    pool=common_pb2.CHIP_POOL_GRAM,
    seats=6,
    small_blind=5,
    big_blind=10,
    step=5,
    min_buy_in=100,
    max_buy_in=1000,
    rake=RakeRule(0, 0),
)


def down(dependency: str) -> Unavailable:
    return Unavailable("UNAVAILABLE", f"the {dependency} service is unavailable", {"dependency": dependency})


@dataclass
class FakeCashier:
    """Seat sessions and settlements in memory; `down` makes every call UNAVAILABLE."""

    sessions: dict[str, SeatSession] = field(default_factory=dict)
    settled: dict[str, tuple[list[tuple[str, int]], int]] = field(default_factory=dict)
    cashed_out: dict[str, int] = field(default_factory=dict)
    down: bool = False

    def seat(self, table_id: str, player_id: str, seat: int, stack: int) -> SeatSession:
        session = SeatSession(f"{table_id}:{player_id}", player_id, seat, stack)
        self.sessions[session.session_id] = session
        return session

    def _check(self) -> None:
        if self.down:
            raise down("cashier")

    async def open_sessions(self, table_id: str) -> list[SeatSession]:
        self._check()
        return [s for s in self.sessions.values() if s.session_id.startswith(f"{table_id}:")]

    async def open_seat_session(self, **fields: Any) -> SeatSession:
        self._check()
        session = SeatSession(fields["session_id"], fields["player_id"], fields["seat"], fields["buy_in"])
        return self.sessions.setdefault(session.session_id, session)

    async def settle_hand(
        self, *, hand_id: str, table_id: str, pool: int, nets: list[tuple[str, int]], rake: int
    ) -> None:
        self._check()
        first = self.settled.get(hand_id)
        if first is not None:
            if first != (nets, rake):
                raise FailedPrecondition("IDEMPOTENCY_CONFLICT", "the hand was settled with other figures")
            return  # a retry: applied once
        self.settled[hand_id] = (nets, rake)
        for session_id, net in nets:
            session = self.sessions[session_id]
            self.sessions[session_id] = SeatSession(
                session.session_id, session.player_id, session.seat, session.stack + net
            )

    async def cash_out(self, session_id: str) -> int:
        self._check()
        session = self.sessions.pop(session_id, None)
        if session is not None:
            self.cashed_out[session_id] = session.stack
        return self.cashed_out.get(session_id, 0)

    async def hand_settled(self, hand_id: str) -> bool:
        self._check()
        return hand_id in self.settled


@dataclass
class FakeFairness:
    """Commitments and decks in memory: a request id always names the same hand, a sealed hand gives
    the same deck, a revealed one can be sealed no more."""

    hands: dict[str, str] = field(default_factory=dict)  # request id -> hand id
    decks: dict[str, tuple[int, ...]] = field(default_factory=dict)
    revealed: dict[str, bool] = field(default_factory=dict)  # hand id -> voided
    entropy: dict[str, list[bytes]] = field(default_factory=dict)
    seen: dict[str, SeenPositions] = field(default_factory=dict)  # hand id -> who saw what
    down: bool = False

    def _check(self) -> None:
        if self.down:
            raise down("fairness")

    async def commit(
        self,
        request_id: str,
        table_id: str,
        *,
        private_to: str = "",
        private_room: bool = False,
        shuffle_version: int = 0,
    ) -> Commitment:
        self._check()
        hand_id = self.hands.setdefault(request_id, str(uuid.uuid4()))
        return Commitment(hand_id, hashlib.sha256(hand_id.encode()).hexdigest())

    async def add_entropy(
        self, hand_id: str, seat: int, player_id: str, seed: bytes = b"", *, seed_hash: str = ""
    ) -> None:
        self._check()
        self.entropy.setdefault(hand_id, []).append(seed or seed_hash.encode())

    async def seal(self, hand_id: str, participants: Sequence[str] = ()) -> tuple[int, ...]:
        self._check()
        if hand_id in self.revealed:
            raise FailedPrecondition("HAND_ALREADY_REVEALED", "the hand already ended")
        if hand_id not in self.decks:
            deck = list(range(52))
            random.Random(hand_id).shuffle(deck)
            self.decks[hand_id] = tuple(deck)
        return self.decks[hand_id]

    async def reveal(self, hand_id: str, *, voided: bool = False, seen: SeenPositions | None = None) -> None:
        self._check()
        self.revealed.setdefault(hand_id, voided)
        if seen is not None:
            self.seen.setdefault(hand_id, seen)


@dataclass
class FakeRooms:
    rooms: dict[str, Room] = field(default_factory=lambda: {ROOM.room_id: ROOM})

    async def get_room(self, room_id: str) -> Room:
        return self.rooms[room_id]

    async def list_rooms(self) -> list[Room]:
        return list(self.rooms.values())

    async def authorize_seat(self, player_id: str, room_id: str, suggested_name: str = "") -> SeatGrant:
        # A test player's id is its name, as the lobby makes it for a development id.
        return SeatGrant(0, suggested_name or player_id)


class FlakyLog(LocalEventLog):
    """The local hand log, whose next `fail` appends raise UNAVAILABLE (Redis away for a moment)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = 0
        self.refused: list[list[dict[str, Any]]] = []

    async def append(self, room_id: str, hand_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        if self.fail:
            self.fail -= 1
            self.refused.append([dict(e) for e in entries])
            raise Unavailable("UNAVAILABLE", "the hand log is unavailable", {"dependency": "redis"})
        await super().append(room_id, hand_id, entries)
