"""Who may read an ended hand (issue 23, items 1, 2 and 8): the seed and deck of a version 1 or 2
hand give every folded hole card of it, so they go only to the hand's participants and admins;
listings of a table's chain show strangers no hand id of a hand they did not play; a house-game
round (participants only) does not exist for anyone but its player and admins; and a stored hand
whose values cannot give a deck is answered, not an INTERNAL error."""

from __future__ import annotations

import asyncio
import io
import uuid
from collections.abc import AsyncIterator, Awaitable

import grpc
import pytest
import sqlalchemy as sa

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.database import create_engine
from service_runtime.testing import auth_metadata, reason_of, running_server, token_for
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.tables import hands
from services.fairness.verify import main

SERVICE = auth_metadata("table", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
ANN, BOB, EVE = (auth_metadata(name) for name in ("ann", "bob", "eve"))


@pytest.fixture
async def served(
    application: FairnessApplication,
) -> AsyncIterator[tuple[fairness_pb2_grpc.FairnessServiceStub, int]]:
    async with running_server([fairness_service(application)], ACCESS) as (running, channel):
        yield fairness_pb2_grpc.FairnessServiceStub(channel), running.port


async def _finished_hand(
    stub: fairness_pb2_grpc.FairnessServiceStub,
    table_id: str,
    players: tuple[str, ...] = ("ann", "bob"),
    *,
    private: bool = False,
    private_room: bool = False,
    version: int = 2,  # the seed-and-deck reveal; version 3 is mostly tests/fairness/test_openings.py
) -> tuple[str, list[int]]:
    """A hand dealt to `players` and finished; (hand id, deck). `private`: a house-game round (its
    players named at the commitment); `private_room`: a private room's hand (named at the seal)."""
    committed = await stub.CommitHand(
        fairness_pb2.CommitHandRequest(
            request_id=uuid.uuid4().hex,
            table_id=table_id,
            participant_ids=list(players) if private else [],
            participants_only=private,
            private_room=private_room,
            shuffle_version=version,
        ),
        metadata=SERVICE,
    )
    hand_id = committed.commitment.hand_id
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=[] if private else list(players)),
        metadata=SERVICE,
    )
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=hand_id,
            outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
            public_positions=[0] if version == 3 else [],
        ),
        metadata=SERVICE,
    )
    return hand_id, [c.index for c in sealed.deck]


async def _refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code(), reason_of(error.value)


def _verify_by_id(hand_id: str, deck: list[int]) -> fairness_pb2.VerifyHandRequest:
    # A stranger who could check single cards would learn the deck one verdict at a time.
    return fairness_pb2.VerifyHandRequest(
        hand_id=hand_id, dealt_cards=[fairness_pb2.DealtCard(position=0, card_index=deck[0])]
    )


async def test_only_the_hands_participants_and_admins_get_its_seed_and_deck(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
) -> None:
    stub, _ = served
    hand_id, deck = await _finished_hand(stub, f"t-{uuid.uuid4().hex[:8]}")
    request = fairness_pb2.GetRevealRequest(hand_id=hand_id)
    for reader in (ANN, BOB, ADMIN):
        reveal = (await stub.GetReveal(request, metadata=reader)).reveal
        assert [c.index for c in reveal.deck] == deck
        assert len(reveal.server_seed) == 32
        verdict = await stub.VerifyHand(_verify_by_id(hand_id, deck), metadata=reader)
        assert verdict.verdict == fairness_pb2.VERDICT_PASS
    # A player who never sat at the table, and a service that only deals: no seed, no deck, no oracle.
    for stranger in (EVE, auth_metadata("history", "service")):
        expected = (
            (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_RESOURCE")
            if stranger is EVE
            else (grpc.StatusCode.PERMISSION_DENIED, "ROLE_REQUIRED")
        )
        assert await _refused(stub.GetReveal(request, metadata=stranger)) == expected
        assert await _refused(stub.VerifyHand(_verify_by_id(hand_id, deck), metadata=stranger)) == expected
    # The public record stays public (it is shown at the table before the deal).
    seen = await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=EVE)
    assert seen.commitment.hand_id == hand_id


async def test_a_table_listing_shows_strangers_no_hand_id_of_a_hand_they_did_not_play(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
) -> None:
    stub, _ = served
    table = f"t-{uuid.uuid4().hex[:8]}"
    first, _ = await _finished_hand(stub, table, ("ann", "bob"))
    second, _ = await _finished_hand(stub, table, ("bob", "eve"))
    request = fairness_pb2.ListTableCommitmentsRequest(table_id=table)

    async def listed(reader: tuple[tuple[str, str], ...]) -> list[tuple[int, str]]:
        page = await stub.ListTableCommitments(request, metadata=reader)
        return [(c.sequence, c.hand_id) for c in page.commitments]

    assert await listed(ANN) == [(1, first), (2, "")]
    assert await listed(EVE) == [(1, ""), (2, second)]
    assert await listed(BOB) == [(1, first), (2, second)]
    assert await listed(ADMIN) == [(1, first), (2, second)]
    assert await listed(auth_metadata("carl")) == [(1, ""), (2, "")]
    # The chain itself stays checkable by anyone: every link is there.
    links = (await stub.ListTableCommitments(request, metadata=auth_metadata("carl"))).commitments
    assert links[1].previous_commitment == links[0].commitment


async def test_a_participants_only_round_does_not_exist_for_anyone_but_its_player_and_admins(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
) -> None:
    stub, _ = served
    chain = f"house-{uuid.uuid4().hex[:8]}~0123456789abcdef"
    round_id, deck = await _finished_hand(stub, chain, ("ann",), private=True)
    for reader in (ANN, ADMIN):
        listed = await stub.ListTableCommitments(
            fairness_pb2.ListTableCommitmentsRequest(table_id=chain), metadata=reader
        )
        assert [c.hand_id for c in listed.commitments] == [round_id]
        reveal = await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=round_id), metadata=reader)
        assert [c.index for c in reveal.reveal.deck] == deck
    listed = await stub.ListTableCommitments(
        fairness_pb2.ListTableCommitmentsRequest(table_id=chain), metadata=EVE
    )
    assert list(listed.commitments) == []
    not_found = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    assert (
        await _refused(stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=round_id), metadata=EVE))
        == not_found
    )
    assert (
        await _refused(stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=round_id), metadata=EVE))
        == not_found
    )
    assert await _refused(stub.VerifyHand(_verify_by_id(round_id, deck), metadata=EVE)) == not_found


@pytest.mark.parametrize("version", [2, 3])
async def test_a_private_rooms_hand_does_not_exist_for_anyone_but_its_players_and_admins(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int], fairness_database_url: str, version: int
) -> None:
    """Issue 23, item 4: the table says at the commitment that the hand is a private room's (its
    players are named only at the seal); a stranger then neither lists nor reads it, under either
    version, while its players and admins read it as any hand. A public hand of the same chain
    (the room before it turned private) stays as public as it was."""
    stub, _ = served
    table = f"t-{uuid.uuid4().hex[:8]}"
    public, _ = await _finished_hand(stub, table, ("ann", "bob"), version=version)
    hidden, deck = await _finished_hand(stub, table, ("ann", "bob"), private_room=True, version=version)
    engine = create_engine(fairness_database_url)
    try:
        async with engine.connect() as connection:
            stored = (
                await connection.execute(
                    sa.select(hands.c.hand_id, hands.c.private_room, hands.c.participants_only).where(
                        hands.c.table_id == table
                    )
                )
            ).all()
    finally:
        await engine.dispose()
    assert sorted((row.hand_id, row.private_room, row.participants_only) for row in stored) == sorted(
        [(public, False, False), (hidden, True, False)]
    )
    listing = fairness_pb2.ListTableCommitmentsRequest(table_id=table)

    async def listed(reader: tuple[tuple[str, str], ...]) -> list[tuple[int, str]]:
        page = await stub.ListTableCommitments(listing, metadata=reader)
        return [(c.sequence, c.hand_id) for c in page.commitments]

    for reader in (ANN, BOB, ADMIN):
        assert await listed(reader) == [(1, public), (2, hidden)]
        got = await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hidden), metadata=reader)
        assert got.commitment.hand_id == hidden
        reveal = (await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hidden), metadata=reader)).reveal
        assert reveal.commitment.hand_id == hidden
        verdict = await stub.VerifyHand(_verify_by_id(hidden, deck), metadata=reader)
        assert verdict.verdict == fairness_pb2.VERDICT_PASS
    not_found = (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    for stranger in (EVE, auth_metadata("an"), auth_metadata("Ann")):
        assert await listed(stranger) == [(1, "")]
        assert (
            await _refused(
                stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hidden), metadata=stranger)
            )
            == not_found
        )
        assert (
            await _refused(stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hidden), metadata=stranger))
            == not_found
        )
        assert await _refused(stub.VerifyHand(_verify_by_id(hidden, deck), metadata=stranger)) == not_found
        seen = await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=public), metadata=stranger)
        assert seen.commitment.hand_id == public


async def test_a_commit_retried_with_another_private_room_flag_is_an_idempotency_conflict(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
) -> None:
    stub, _ = served
    for first in (False, True):
        request = fairness_pb2.CommitHandRequest(
            request_id=uuid.uuid4().hex, table_id=f"t-{uuid.uuid4().hex[:8]}", private_room=first
        )
        hand_id = (await stub.CommitHand(request, metadata=SERVICE)).commitment.hand_id
        assert (await stub.CommitHand(request, metadata=SERVICE)).commitment.hand_id == hand_id
        request.private_room = not first
        assert await _refused(stub.CommitHand(request, metadata=SERVICE)) == (
            grpc.StatusCode.ALREADY_EXISTS,
            "IDEMPOTENCY_CONFLICT",
        )


async def test_participant_ids_are_checked_like_every_other_id(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
) -> None:
    stub, _ = served
    bad = (grpc.StatusCode.INVALID_ARGUMENT, "FIELD_INVALID")
    for ids in (["a\nb"], ["x" * 129], [f"p{i}" for i in range(65)], [""]):
        assert (
            await _refused(
                stub.CommitHand(
                    fairness_pb2.CommitHandRequest(
                        request_id=uuid.uuid4().hex, table_id="t", participant_ids=ids, participants_only=True
                    ),
                    metadata=SERVICE,
                )
            )
            == bad
        )
    assert (
        await _refused(
            stub.CommitHand(
                fairness_pb2.CommitHandRequest(
                    request_id=uuid.uuid4().hex, table_id="t", participants_only=True
                ),
                metadata=SERVICE,
            )
        )
        == bad
    )
    hand_id = (
        await stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id=uuid.uuid4().hex, table_id="t"), metadata=SERVICE
        )
    ).commitment.hand_id
    assert (
        await _refused(
            stub.SealHand(
                fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["a\x00"]), metadata=SERVICE
            )
        )
        == bad
    )
    # Nothing was sealed by the refused call.
    state = await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN)
    assert state.commitment.state == fairness_pb2.HAND_STATE_COMMITTED


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out), out.getvalue()


@pytest.mark.parametrize(
    ("column", "value", "field"),
    [("shuffle_version", 9, "shuffle_version"), ("nonce", b"\x00" * 8, "nonce")],
)
async def test_a_stored_hand_that_cannot_give_a_deck_is_a_malformed_verdict_not_an_internal_error(
    served: tuple[fairness_pb2_grpc.FairnessServiceStub, int],
    fairness_database_url: str,
    column: str,
    value: object,
    field: str,
) -> None:
    stub, port = served
    hand_id, _ = await _finished_hand(stub, f"t-{uuid.uuid4().hex[:8]}", ("ann",))
    engine = create_engine(fairness_database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                sa.update(hands).where(hands.c.hand_id == hand_id).values({column: value})
            )
    finally:
        await engine.dispose()
    reveal = (await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=ANN)).reveal
    assert (reveal.commitment.hand_id, list(reveal.deck)) == (hand_id, [])
    verdict = await stub.VerifyHand(fairness_pb2.VerifyHandRequest(hand_id=hand_id), metadata=ANN)
    assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED
    assert verdict.first_mismatch.description.startswith(f"{field}:")
    target = ["--hand-id", hand_id, "--target", f"127.0.0.1:{port}", "--token", token_for("ann")]
    status, text = await asyncio.to_thread(_run, *target)
    assert status == 1
    assert f"first mismatch: MALFORMED: {field}:" in text
