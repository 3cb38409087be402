"""The fairness API through a real gRPC server on port 0: roles, status codes and ErrorInfo reasons,
the full hand flow, verification and the chain."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable

import grpc
import pytest
import sqlalchemy as sa

from poker.fairness.v1 import fairness_pb2, fairness_pb2_grpc
from service_runtime.auth import STAFF_ROLES
from service_runtime.database import create_engine
from service_runtime.testing import auth_metadata, reason_of, running_server
from services.fairness.application import FairnessApplication
from services.fairness.assembly import ACCESS, fairness_service
from services.fairness.shuffle import commitment_of
from services.fairness.tables import hands
from services.fairness.verification import ChainLink, MismatchKind, verify_chain

SERVICE = auth_metadata("table", "service")
PLAYER = auth_metadata("alice", "player")
ADMIN = auth_metadata("ops", *STAFF_ROLES)


@pytest.fixture
async def stub(application: FairnessApplication) -> AsyncIterator[fairness_pb2_grpc.FairnessServiceStub]:
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        yield fairness_pb2_grpc.FairnessServiceStub(channel)


async def _commit(
    stub: fairness_pb2_grpc.FairnessServiceStub, table_id: str = "", *, deal_now: bool = False
) -> fairness_pb2.CommitHandResponse:
    # A hand dealt at once is dealt to alice (PLAYER), who may then read and check it.
    request = fairness_pb2.CommitHandRequest(
        request_id=f"req-{uuid.uuid4().hex}",
        table_id=table_id or f"table-{uuid.uuid4().hex[:8]}",
        deal_now=deal_now,
        participant_ids=["alice"] if deal_now else [],
        shuffle_version=2,  # these tests check the version 2 reveal (seed and deck)
    )
    response: fairness_pb2.CommitHandResponse = await stub.CommitHand(request, metadata=SERVICE)
    return response


async def _expect_error(call: Awaitable[object], code: grpc.StatusCode, reason: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    assert (error.value.code(), reason_of(error.value)) == (code, reason)


async def test_a_hand_runs_commit_entropy_seal_reveal_and_verifies(
    stub: fairness_pb2_grpc.FairnessServiceStub,
) -> None:
    committed = (await _commit(stub)).commitment
    assert committed.state == fairness_pb2.HAND_STATE_COMMITTED
    seen_by_player = await stub.GetCommitment(
        fairness_pb2.GetCommitmentRequest(hand_id=committed.hand_id), metadata=PLAYER
    )
    assert seen_by_player.commitment.commitment == committed.commitment
    for seat, seed in ((2, b"bob"), (7, b"alice")):
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=committed.hand_id, seat=seat, player_id=f"p{seat}", client_seed=seed
            ),
            metadata=SERVICE,
        )
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=committed.hand_id, participant_ids=["alice", "bob"]),
        metadata=SERVICE,
    )
    deck = [card.index for card in sealed.deck]
    assert sorted(deck) == list(range(52))
    assert [s.seat for s in sealed.commitment.client_seeds] == [2, 7]

    revealed = await stub.RevealHand(
        fairness_pb2.RevealHandRequest(hand_id=committed.hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
        metadata=SERVICE,
    )
    assert commitment_of(revealed.reveal.server_seed) == committed.server_seed_hash
    assert revealed.reveal.commitment.commitment == committed.commitment
    public = await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=committed.hand_id), metadata=PLAYER)
    assert [c.index for c in public.reveal.deck] == deck

    by_id = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            hand_id=committed.hand_id, dealt_prefix=deck[:9], shown_commitment=committed.commitment
        ),
        metadata=PLAYER,
    )
    assert (by_id.verdict, by_id.dealt_cards_checked) == (fairness_pb2.VERDICT_PASS, 9)
    shown_another = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(hand_id=committed.hand_id, shown_commitment="ab" * 32), metadata=PLAYER
    )
    assert shown_another.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_SHOWN_BEFORE_DEAL
    record = public.reveal.commitment
    published = fairness_pb2.PublishedHand(
        server_seed=public.reveal.server_seed,
        client_seeds=record.client_seeds,
        nonce=record.nonce,
        commitment=record.commitment,
        shuffle_version=record.shuffle_version,
        table_id=record.table_id,
        hand_id=record.hand_id,
        sequence=record.sequence,
        previous_commitment=record.previous_commitment,
        server_seed_hash=record.server_seed_hash,
    )
    by_values = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(
            published=published, dealt_cards=[fairness_pb2.DealtCard(position=4, card_index=deck[4])]
        ),
        metadata=PLAYER,
    )
    assert by_values.verdict == fairness_pb2.VERDICT_PASS
    # Every value the commitment binds is checked: another table id fails.
    published.table_id = "another-table"
    moved = await stub.VerifyHand(fairness_pb2.VerifyHandRequest(published=published), metadata=PLAYER)
    assert moved.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_COMMITMENT


async def test_a_player_cannot_obtain_the_deck(stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
    hand_id = (await _commit(stub)).commitment.hand_id
    await _expect_error(
        stub.SealHand(fairness_pb2.SealHandRequest(hand_id=hand_id), metadata=PLAYER),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await _expect_error(
        stub.CommitHand(
            fairness_pb2.CommitHandRequest(request_id="r", table_id="t", deal_now=True), metadata=PLAYER
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )
    await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["alice"]), metadata=SERVICE
    )
    # Not before the end by any read path, whatever the role: reveal, or verification as an oracle.
    for metadata in (PLAYER, ADMIN):
        await _expect_error(
            stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=metadata),
            grpc.StatusCode.FAILED_PRECONDITION,
            "HAND_NOT_FINISHED",
        )
        await _expect_error(
            stub.VerifyHand(
                fairness_pb2.VerifyHandRequest(hand_id=hand_id, dealt_prefix=[0]), metadata=metadata
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "HAND_NOT_FINISHED",
        )
    # The table service deals; it reads nothing back.
    await _expect_error(
        stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=SERVICE),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )


async def test_reveal_before_the_hand_is_dealt_is_refused(
    stub: fairness_pb2_grpc.FairnessServiceStub,
) -> None:
    hand_id = (await _commit(stub)).commitment.hand_id
    await _expect_error(
        stub.RevealHand(
            fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
            metadata=SERVICE,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "HAND_NOT_DEALT",
    )
    await _expect_error(
        stub.RevealHand(fairness_pb2.RevealHandRequest(hand_id=hand_id), metadata=SERVICE),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_REQUIRED",
    )
    await _expect_error(
        stub.RevealHand(
            fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_VOIDED),
            metadata=PLAYER,
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "ROLE_REQUIRED",
    )


async def test_entropy_after_the_deal_is_refused(stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
    hand_id = (await _commit(stub, deal_now=True)).commitment.hand_id
    await _expect_error(
        stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(hand_id=hand_id, seat=1, player_id="p", client_seed=b"x"),
            metadata=SERVICE,
        ),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ENTROPY_CLOSED",
    )


async def test_errors_carry_their_reasons(stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
    await _expect_error(
        stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id="nope")),
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )
    await _expect_error(
        stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=str(uuid.uuid4())), metadata=PLAYER),
        grpc.StatusCode.NOT_FOUND,
        "HAND_NOT_FOUND",
    )
    await _expect_error(
        stub.VerifyHand(fairness_pb2.VerifyHandRequest(), metadata=PLAYER),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_REQUIRED",
    )
    request = fairness_pb2.CommitHandRequest(request_id=f"req-{uuid.uuid4().hex}", table_id="t-1")
    await stub.CommitHand(request, metadata=SERVICE)
    request.table_id = "t-2"
    await _expect_error(
        stub.CommitHand(request, metadata=SERVICE), grpc.StatusCode.ALREADY_EXISTS, "IDEMPOTENCY_CONFLICT"
    )


async def test_verify_reports_the_first_tampered_card(stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
    committed = await _commit(stub, deal_now=True)
    deck = [c.index for c in committed.deck]
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(
            hand_id=committed.commitment.hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED
        ),
        metadata=SERVICE,
    )
    tampered = [*deck[:3], deck[10], *deck[4:9]]
    result = await stub.VerifyHand(
        fairness_pb2.VerifyHandRequest(hand_id=committed.commitment.hand_id, dealt_prefix=tampered),
        metadata=PLAYER,
    )
    assert result.verdict == fairness_pb2.VERDICT_FAIL
    assert (result.first_mismatch.kind, result.first_mismatch.position) == (
        fairness_pb2.MISMATCH_KIND_DEALT_CARD,
        3,
    )
    assert result.dealt_cards_checked == 4


async def test_chain_listing_and_verify_detect_a_removed_hand(
    stub: fairness_pb2_grpc.FairnessServiceStub, fairness_database_url: str
) -> None:
    table = f"table-{uuid.uuid4().hex[:8]}"
    ids = [(await _commit(stub, table, deal_now=True)).commitment.hand_id for _ in range(3)]
    for hand_id in ids:
        await stub.RevealHand(
            fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
            metadata=SERVICE,
        )

    async def chain() -> list[ChainLink]:
        listed = await stub.ListTableCommitments(
            fairness_pb2.ListTableCommitmentsRequest(table_id=table), metadata=PLAYER
        )
        return [
            ChainLink(c.hand_id, c.sequence, c.commitment, c.previous_commitment) for c in listed.commitments
        ]

    assert verify_chain(await chain()) is None
    engine = create_engine(fairness_database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.delete(hands).where(hands.c.hand_id == ids[1]))
    finally:
        await engine.dispose()
    mismatch = verify_chain(await chain())
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.CHAIN_LINK
    result = await stub.VerifyHand(fairness_pb2.VerifyHandRequest(hand_id=ids[2]), metadata=PLAYER)
    assert result.verdict == fairness_pb2.VERDICT_FAIL
    assert result.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_CHAIN_LINK


async def test_a_reveal_names_only_the_callers_own_seat(stub: fairness_pb2_grpc.FairnessServiceStub) -> None:
    hand_id = (await _commit(stub)).commitment.hand_id
    for seat, player in ((1, "carol"), (6, "dave")):
        await stub.AddPlayerEntropy(
            fairness_pb2.AddPlayerEntropyRequest(
                hand_id=hand_id, seat=seat, player_id=player, client_seed=b"s"
            ),
            metadata=SERVICE,
        )
    await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["carol", "dave", "alice"]),
        metadata=SERVICE,
    )
    await stub.RevealHand(
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
        metadata=SERVICE,
    )
    request = fairness_pb2.GetRevealRequest(hand_id=hand_id)

    async def names(metadata: tuple[tuple[str, str], ...]) -> list[str]:
        reveal = (await stub.GetReveal(request, metadata=metadata)).reveal
        return [s.player_id for s in reveal.commitment.client_seeds]

    assert await names(auth_metadata("dave", "player")) == ["", "dave"]
    assert await names(PLAYER) == ["", ""]
    assert await names(ADMIN) == ["carol", "dave"]


def _seed(seat: int, value: bytes) -> fairness_pb2.ClientSeed:
    return fairness_pb2.ClientSeed(seat=seat, player_id=f"p{seat}", client_seed=value)


async def test_seal_may_carry_the_client_seeds_and_records_them_as_entropy_would(
    stub: fairness_pb2_grpc.FairnessServiceStub,
) -> None:
    hand_id = (await _commit(stub)).commitment.hand_id
    seeds = [_seed(7, b"alice"), _seed(2, b"bob")]
    sealed = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=seeds), metadata=SERVICE
    )
    assert [s.seat for s in sealed.commitment.client_seeds] == [2, 7]
    again = await stub.SealHand(
        fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=seeds), metadata=SERVICE
    )
    assert [c.index for c in again.deck] == [c.index for c in sealed.deck]
    await _expect_error(
        stub.SealHand(
            fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=[_seed(2, b"other")]), metadata=SERVICE
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    # SealHand is keyed by the hand id: a seal naming a seat it did not is that request changed.
    await _expect_error(
        stub.SealHand(
            fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=[*seeds, _seed(3, b"late")]),
            metadata=SERVICE,
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    revealed = await stub.RevealHand(
        fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=fairness_pb2.HAND_OUTCOME_FINISHED),
        metadata=SERVICE,
    )
    assert [c.index for c in revealed.reveal.deck] == [c.index for c in sealed.deck]
    assert [(s.seat, s.client_seed) for s in revealed.reveal.commitment.client_seeds] == [
        (2, b"bob"),
        (7, b"alice"),
    ]


async def test_a_refused_seal_with_seeds_records_nothing_and_seals_nothing(
    stub: fairness_pb2_grpc.FairnessServiceStub,
) -> None:
    hand_id = (await _commit(stub)).commitment.hand_id
    await stub.AddPlayerEntropy(
        fairness_pb2.AddPlayerEntropyRequest(hand_id=hand_id, seat=2, player_id="p2", client_seed=b"bob"),
        metadata=SERVICE,
    )
    await _expect_error(
        stub.SealHand(
            fairness_pb2.SealHandRequest(
                hand_id=hand_id, client_seeds=[_seed(5, b"new"), _seed(2, b"not bob")]
            ),
            metadata=SERVICE,
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "IDEMPOTENCY_CONFLICT",
    )
    await _expect_error(
        stub.SealHand(
            fairness_pb2.SealHandRequest(hand_id=hand_id, client_seeds=[_seed(5, b"a"), _seed(5, b"a")]),
            metadata=SERVICE,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "FIELD_INVALID",
    )
    record = (
        await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN)
    ).commitment
    assert record.state == fairness_pb2.HAND_STATE_COMMITTED
    assert [s.seat for s in record.client_seeds] == [2]


async def test_commit_hand_deals_under_version_3_or_2_and_refuses_any_other_version(
    stub: fairness_pb2_grpc.FairnessServiceStub,
) -> None:
    """fairness.proto, CommitHandRequest.shuffle_version: 0 or 3 deal version 3 (the default), 2 a
    room's full reveal; any other value (version 1, which no new hand is dealt under, included) is
    FIELD_INVALID and commits nothing."""
    for asked, dealt in ((0, 3), (3, 3), (2, 2)):
        committed = await stub.CommitHand(
            fairness_pb2.CommitHandRequest(
                request_id=uuid.uuid4().hex, table_id=f"table-{uuid.uuid4().hex[:8]}", shuffle_version=asked
            ),
            metadata=SERVICE,
        )
        assert committed.commitment.shuffle_version == dealt
    table = f"table-{uuid.uuid4().hex[:8]}"
    for invalid in (1, 4, 99, 2**32 - 1):
        await _expect_error(
            stub.CommitHand(
                fairness_pb2.CommitHandRequest(
                    request_id=uuid.uuid4().hex, table_id=table, shuffle_version=invalid
                ),
                metadata=SERVICE,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "FIELD_INVALID",
        )
    listed = await stub.ListTableCommitments(
        fairness_pb2.ListTableCommitmentsRequest(table_id=table), metadata=ADMIN
    )
    assert list(listed.commitments) == []
