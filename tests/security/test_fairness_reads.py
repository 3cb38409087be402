"""Reads of other players' hands at the fairness service (issue 23, items 1 and 2), as an attacker
would try them: every read RPC, by every kind of caller, against hands dealt to random sets of
players (house-game rounds among them), with ids that are prefixes, extensions, case variants or
LIKE patterns of the participants' ids. The fairness service runs as its own process.

The property: the seed and the deck of an ended hand appear in no response (answer, error message
or error details) to anyone but its participants and admins; no listing shows anyone but them its
hand id; a participants-only hand does not exist for anyone else. Under version 3 (the default since
issue 24) no reveal carries the deck and the server's share tells nothing of the cards, so the
property is about openings: nobody but an admin gets an opening of a position they did not see (a
participant: the public positions and their own; anyone else: the public ones only).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.auth import STAFF_ROLES, ServiceName
from service_runtime.testing import auth_metadata, reason_of, service_metadata

from .service_processes import ServiceProcess, _start

TABLE = service_metadata(ServiceName.TABLE)
ADMIN = auth_metadata("ops", *STAFF_ROLES)
# Case variants, prefixes, extensions and LIKE patterns of one another (a first run found that SQLite
# LIKE matched "ann" against a hand dealt to "Ann").
NAMES = ("ann", "bob", "Ann", "an", "ann2", "b_b", "b%", "%", "_", "carl")


@pytest.fixture(scope="module")
def fairness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    data_dir: Path = tmp_path_factory.mktemp("fairness-reads")
    service = _start("fairness", data_dir, {})
    try:
        assert service.listening.wait(60), "".join(service.lines[-20:])
        yield service
    finally:
        service.process.terminate()
        service.process.wait(timeout=30)


# Version 3 hands of the test: the board's five positions are public, each player saw two of their own.
PUBLIC_POSITIONS = (10, 11, 12, 13, 14)


@dataclass(frozen=True)
class Dealt:
    hand_id: str
    table_id: str
    players: frozenset[str]
    private: (
        bool  # a house-game round or a private room's hand: nobody but its players and admins knows of it
    )
    commitment: str
    seed: bytes
    deck_text: str
    version: int = 2
    # Version 3: the deal positions each player saw privately.
    own: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def may_open(self, who: str, *, admin: bool = False) -> set[int]:
        if admin:
            return set(range(52))
        own = dict(self.own).get(who, ()) if who in self.players else ()
        return {*PUBLIC_POSITIONS, *own}


async def deal_hand(
    stub: fairness_pb2_grpc.FairnessServiceStub,
    table_id: str,
    players: list[str],
    private: bool,
    version: int = 2,
    *,
    private_room: bool = False,
) -> Dealt:
    """`private`: a house-game round (its players named at the commitment); `private_room`: a private
    room's hand, its players named at the seal as a cash table names them."""
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(
            request_id=uuid.uuid4().hex,
            table_id=table_id,
            participant_ids=players if private else [],
            participants_only=private,
            private_room=private_room,
            shuffle_version=version,
        ),
        metadata=TABLE,
    )
    hand_id = committed.commitment.hand_id
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=[] if private else players),
        metadata=TABLE,
    )
    own = tuple((player, (2 * i, 2 * i + 1)) for i, player in enumerate(players)) if version == 3 else ()
    revealed = await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=hand_id,
            outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
            public_positions=PUBLIC_POSITIONS if version == 3 else (),
            seen=[fairness_pb2.SeenPositions(player_id=p, positions=list(at)) for p, at in own],
        ),
        metadata=TABLE,
    )
    deck_text = "".join(c.text for c in sealed.deck)
    return Dealt(
        hand_id,
        table_id,
        frozenset(players),
        private or private_room,
        committed.commitment.commitment,
        bytes(revealed.reveal.server_seed),
        deck_text,
        version,
        own,
    )


def _cards_in_order(text: str) -> str:
    """The card texts a response's text holds, in their order and joined ("QdQh..."): protobuf's text
    format writes each card apart (`text: "Qd"`), so the deck is looked for in this, not in the text."""
    return "".join(re.findall(r'text: \\?"([2-9TJQKA][cdhs])\\?"', text))


def _leaks(blob: bytes, text: str, hand: Dealt) -> bool:
    """Whether a response carries the hand's seed (as bytes or hex) or its deck's first ten cards in
    order (versions 1, 2: the seed gives the deck)."""
    deck = hand.deck_text[:20] in _cards_in_order(text)
    if hand.version == 3:
        return deck
    return hand.seed in blob or hand.seed.hex() in text or deck


def _opened(method: str, outcome: str, blob: bytes) -> set[int]:
    """The deal positions a version 3 answer opens."""
    if outcome != "OK" or method != "GetReveal":
        return set()
    reveal = fairness_pb2.GetRevealResponse.FromString(blob).reveal
    return {o.deal_position for o in reveal.openings}


async def _reads(
    stub: fairness_pb2_grpc.FairnessServiceStub, hand: Dealt, metadata: tuple[tuple[str, str], ...]
) -> dict[str, tuple[str, bytes, str]]:
    """Every read RPC about the hand: method -> (outcome, serialized answer, text of everything)."""
    calls = {
        "GetCommitment": lambda: stub.GetCommitment(
            fairness_pb2.GetCommitmentRequest(hand_id=hand.hand_id), metadata=metadata
        ),
        "GetReveal": lambda: stub.GetReveal(
            fairness_pb2.GetRevealRequest(hand_id=hand.hand_id), metadata=metadata
        ),
        "VerifyHand": lambda: stub.VerifyHand(
            fairness_pb2.VerifyHandRequest(
                hand_id=hand.hand_id, dealt_cards=[fairness_pb2.DealtCard(position=0, card_index=0)]
            ),
            metadata=metadata,
        ),
        "ListTableCommitments": lambda: stub.ListTableCommitments(
            fairness_pb2.ListTableCommitmentsRequest(table_id=hand.table_id), metadata=metadata
        ),
    }
    found = {}
    for method, call in calls.items():
        try:
            answer = await call()
        except grpc.aio.AioRpcError as error:
            details = f"{error.details()} {error.trailing_metadata()} {error.debug_error_string()}"
            found[method] = (f"{error.code().name} {reason_of(error)}", details.encode(), details)
        else:
            found[method] = ("OK", answer.SerializeToString(), str(answer))
    return found


def _check(hand: Dealt, who: str, reads: dict[str, tuple[str, bytes, str]], *, admin: bool = False) -> None:
    played = admin or who in hand.players
    for method, (outcome, blob, text) in reads.items():
        assert not outcome.startswith(("INTERNAL", "UNKNOWN")), (method, outcome)
        if not played or hand.version == 3:
            assert not (not admin and _leaks(blob, text, hand)), (who, method, outcome)
        if hand.version == 3:
            opened = _opened(method, outcome, blob)
            assert opened <= hand.may_open(who, admin=admin), (who, method, opened - hand.may_open(who))
    if hand.version == 3:
        _check_v3_outcomes(hand, who, reads, played=played, admin=admin)
    elif played:
        assert reads["GetReveal"][0] == "OK", (who, reads["GetReveal"][0])
        assert _leaks(*reads["GetReveal"][1:], hand)
        assert hand.deck_text in _cards_in_order(reads["GetReveal"][2]), (
            "a participant's reveal holds the deck"
        )
    elif who.startswith("service:"):
        for method, (outcome, _, _) in reads.items():
            assert outcome == "PERMISSION_DENIED ROLE_REQUIRED", (who, method, outcome)
    elif hand.private:
        for method in ("GetCommitment", "GetReveal", "VerifyHand"):
            assert reads[method][0] == "NOT_FOUND HAND_NOT_FOUND", (who, method, reads[method][0])
    else:
        assert reads["GetCommitment"][0] == "OK"
        for method in ("GetReveal", "VerifyHand"):
            assert reads[method][0] == "PERMISSION_DENIED NOT_YOUR_RESOURCE", (who, method, reads[method][0])
    _check_listing(hand, who, reads, played=played)


def _check_v3_outcomes(
    hand: Dealt, who: str, reads: dict[str, tuple[str, bytes, str]], *, played: bool, admin: bool
) -> None:
    if who.startswith("service:"):
        for method in ("GetCommitment", "GetReveal", "VerifyHand", "ListTableCommitments"):
            assert reads[method][0] == "PERMISSION_DENIED ROLE_REQUIRED", (who, method, reads[method][0])
    elif hand.private and not played:
        for method in ("GetCommitment", "GetReveal", "VerifyHand"):
            assert reads[method][0] == "NOT_FOUND HAND_NOT_FOUND", (who, method, reads[method][0])
    else:
        # Everyone else who may see the hand gets exactly the openings of what they saw.
        outcome, blob, _ = reads["GetReveal"]
        assert outcome == "OK", (who, outcome)
        expected = set(range(52)) if admin else hand.may_open(who)
        if hand.private:
            expected = set(range(52)) if admin else {*dict(hand.own).get(who, ()), *PUBLIC_POSITIONS}
        assert _opened("GetReveal", outcome, blob) == expected, (who, hand.private)


def _check_listing(hand: Dealt, who: str, reads: dict[str, tuple[str, bytes, str]], *, played: bool) -> None:
    listing_outcome, listing_blob, _ = reads["ListTableCommitments"]
    if who.startswith("service:"):
        return
    assert listing_outcome == "OK"
    listing = fairness_pb2.ListTableCommitmentsResponse.FromString(listing_blob)
    ids = [c.hand_id for c in listing.commitments]
    commitments = [c.commitment for c in listing.commitments]
    if played:
        assert hand.hand_id in ids
    else:
        assert hand.hand_id not in ids
        # A stranger sees a public hand's link (to check the chain), and nothing of a private one.
        assert (hand.commitment in commitments) is not hand.private, (who, hand.private)


def _only_own_ids(hands: list[Dealt], who: str, shown: set[str]) -> None:
    played = {h.hand_id for h in hands if who in h.players}
    assert shown - {""} <= played, (who, shown - {""} - played)


# A public hand, a house-game round (participants only) and a private room's hand (issue 23, item 4).
KINDS = ("public", "round", "room")
hands_strategy = st.lists(
    st.tuples(
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True),
        st.sampled_from(KINDS),
        st.sampled_from([2, 3]),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(dealt=[(["bob", "Ann"], "round", 2)], readers=["ann"])
@example(dealt=[(["b_b", "%"], "round", 2), (["ann2"], "public", 2)], readers=["bob", "b%", "_", "an"])
@example(
    dealt=[(["bob", "Ann"], "round", 3), (["ann2", "carl"], "public", 3)], readers=["ann", "carl", "bob"]
)
@example(dealt=[(["ann", "bob"], "public", 3), (["bob", "Ann"], "room", 3)], readers=["ann", "carl", "bob"])
@example(dealt=[(["b_b", "%"], "room", 2), (["ann2"], "public", 2)], readers=["bob", "b%", "_", "an"])
@given(dealt=hands_strategy, readers=st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
def test_no_read_gives_a_stranger_the_seed_the_deck_or_the_hand_id_of_a_hand_they_did_not_play(
    fairness: ServiceProcess, dealt: list[tuple[list[str], str, int]], readers: list[str]
) -> None:
    async def run() -> None:
        async with grpc.aio.insecure_channel(fairness.address) as channel:
            stub = fairness_pb2_grpc.FairnessServiceStub(channel)
            table = f"t-{uuid.uuid4().hex[:8]}"
            hands = []
            for players, kind, version in dealt:
                # A private round has its own chain (one player's house-game rounds), as the table does;
                # a private room's hands share the table's chain with those dealt while it was public.
                chain = f"{table}~{uuid.uuid4().hex[:16]}" if kind == "round" else table
                hands.append(
                    await deal_hand(
                        stub, chain, players, kind == "round", version, private_room=kind == "room"
                    )
                )
            for hand in hands:
                for who in readers:
                    reads = await _reads(stub, hand, auth_metadata(who))
                    _check(hand, who, reads)
                    listing = fairness_pb2.ListTableCommitmentsResponse.FromString(
                        reads["ListTableCommitments"][1]
                    )
                    _only_own_ids(hands, who, {c.hand_id for c in listing.commitments})
                _check(hand, "admin", await _reads(stub, hand, ADMIN), admin=True)
                for service in (ServiceName.TABLE, ServiceName.HISTORY, ServiceName.LOBBY):
                    reads = await _reads(stub, hand, service_metadata(service))
                    _check(hand, f"service:{service.value}", reads)

    asyncio.run(run())
