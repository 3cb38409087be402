"""A hand row damaged in the database never makes an RPC answer INTERNAL (docs/fairness.md, "Damaged
rows"). A call that needs the row's seed or deck to deal or end the hand (SealHand, RevealHand, a
CommitHand retry of a hand dealt at once) answers FAILED_PRECONDITION `HAND_RECORD_DAMAGED` and
changes nothing; reads of an ended hand answer as its values allow (a reveal without them, a
`MALFORMED` verdict). The damage is the independent tester's: ciphertexts swapped between two rows
(each then fails its hand-bound authentication), and an ended row whose stored seed is null. Through
the real gRPC server, on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
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

SERVICE = auth_metadata("table", "service")
ADMIN = auth_metadata("ops", *STAFF_ROLES)
ANN = auth_metadata("ann")
DAMAGED = (grpc.StatusCode.FAILED_PRECONDITION, "HAND_RECORD_DAMAGED")
Stub = fairness_pb2_grpc.FairnessServiceStub


@pytest.fixture
async def stub(application: FairnessApplication) -> AsyncIterator[Stub]:
    async with running_server([fairness_service(application)], ACCESS) as (_, channel):
        yield fairness_pb2_grpc.FairnessServiceStub(channel)


async def _refused(call: Awaitable[object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code(), reason_of(error.value)


def _commit_request(*, deal_now: bool = False) -> fairness_pb2.CommitHandRequest:
    return fairness_pb2.CommitHandRequest(
        request_id=uuid.uuid4().hex,
        table_id=f"damaged-{uuid.uuid4().hex[:8]}",
        deal_now=deal_now,
        participant_ids=["ann"] if deal_now else [],
    )


async def _committed(stub: Stub, *, seal: bool) -> str:
    """A version 3 hand (the default), sealed for ann when `seal`."""
    hand_id: str = (await stub.CommitHand(_commit_request(), metadata=SERVICE)).commitment.hand_id
    if seal:
        await stub.SealHand(
            fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["ann"]), metadata=SERVICE
        )
    return hand_id


async def _swap(database_url: str, column: str, first: str, second: str) -> None:
    """Swap one column's values between two hand rows."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            rows = dict(
                (
                    await connection.execute(
                        sa.select(hands.c.hand_id, hands.c[column]).where(
                            hands.c.hand_id.in_([first, second])
                        )
                    )
                ).all()
            )
            for mine, theirs in ((first, second), (second, first)):
                await connection.execute(
                    sa.update(hands).where(hands.c.hand_id == mine).values({column: rows[theirs]})
                )
    finally:
        await engine.dispose()


async def _record(stub: Stub, hand_id: str) -> bytes:
    reply = await stub.GetCommitment(fairness_pb2.GetCommitmentRequest(hand_id=hand_id), metadata=ADMIN)
    return bytes(reply.commitment.SerializeToString(deterministic=True))


@pytest.mark.parametrize("sealed", [False, True], ids=["committed", "sealed"])
@pytest.mark.parametrize("column", ["deck_secret_ciphertext", "seed_ciphertext"])
async def test_a_damaged_open_hand_is_not_dealt_and_answers_hand_record_damaged(
    stub: Stub, fairness_database_url: str, column: str, sealed: bool
) -> None:
    pair = [await _committed(stub, seal=sealed) for _ in range(2)]
    await _swap(fairness_database_url, column, *pair)
    for hand_id in pair:
        before = await _record(stub, hand_id)
        seal = fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["ann"] if sealed else [])
        assert await _refused(stub.SealHand(seal, metadata=SERVICE)) == DAMAGED
        if column == "seed_ciphertext":
            # Its end would publish a seed the row cannot give (a hand never dealt can only be voided).
            outcomes = [fairness_pb2.HAND_OUTCOME_VOIDED]
            if sealed:
                outcomes.append(fairness_pb2.HAND_OUTCOME_FINISHED)
            for outcome in outcomes:
                reveal = fairness_pb2.RevealHandRequest(hand_id=hand_id, outcome=outcome)
                assert await _refused(stub.RevealHand(reveal, metadata=SERVICE)) == DAMAGED
        assert await _record(stub, hand_id) == before


async def test_a_commit_retry_of_a_damaged_hand_dealt_at_once_answers_hand_record_damaged(
    stub: Stub, fairness_database_url: str
) -> None:
    requests = [_commit_request(deal_now=True) for _ in range(2)]
    hand_ids = [(await stub.CommitHand(r, metadata=SERVICE)).commitment.hand_id for r in requests]
    await _swap(fairness_database_url, "seed_ciphertext", *hand_ids)
    for request, hand_id in zip(requests, hand_ids, strict=True):
        before = await _record(stub, hand_id)
        assert await _refused(stub.CommitHand(request, metadata=SERVICE)) == DAMAGED
        assert await _record(stub, hand_id) == before


async def _forget_the_seed(database_url: str, hand_id: str) -> None:
    """Null the stored seed of an ended hand, past the check that forbids it (the damage itself)."""
    if database_url.startswith("sqlite"):
        database = sqlite3.connect(database_url.partition(":///")[2])
        try:
            database.execute("PRAGMA ignore_check_constraints = ON")
            database.execute("UPDATE fairness_hands SET revealed_seed = NULL WHERE hand_id = ?", (hand_id,))
            database.commit()
        finally:
            database.close()
        return
    check = "ck_fairness_hands_seed_revealed_only_when_ended"
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.text(f"ALTER TABLE fairness_hands DROP CONSTRAINT {check}"))
            await connection.execute(
                sa.update(hands).where(hands.c.hand_id == hand_id).values(revealed_seed=None)
            )
            # Back for every other row (NOT VALID: this one stays as damaged as it is).
            await connection.execute(
                sa.text(
                    f"ALTER TABLE fairness_hands ADD CONSTRAINT {check} CHECK"
                    " ((revealed_seed IS NULL) = (state IN ('committed', 'sealed'))) NOT VALID"
                )
            )
    finally:
        await engine.dispose()


@pytest.mark.parametrize("ciphertext", ["intact", "swapped"])
async def test_an_ended_hand_whose_stored_seed_is_null_answers_every_call_without_an_internal_error(
    stub: Stub, fairness_database_url: str, ciphertext: str
) -> None:
    hand_id, other = [await _committed(stub, seal=False) for _ in range(2)]
    seal = fairness_pb2.SealHandRequest(hand_id=hand_id, participant_ids=["ann"])
    deck = [c.index for c in (await stub.SealHand(seal, metadata=SERVICE)).deck]
    reveal = fairness_pb2.RevealHandRequest(
        hand_id=hand_id,
        outcome=fairness_pb2.HAND_OUTCOME_FINISHED,
        public_positions=[4, 5, 6],
        seen=[fairness_pb2.SeenPositions(player_id="ann", positions=[0, 1])],
    )
    seed = (await stub.RevealHand(reveal, metadata=SERVICE)).reveal.server_seed
    if ciphertext == "swapped":
        await _swap(fairness_database_url, "seed_ciphertext", hand_id, other)
    await _forget_the_seed(fairness_database_url, hand_id)
    assert await _refused(stub.SealHand(seal, metadata=SERVICE)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "HAND_ALREADY_REVEALED",
    )
    # The first report again is answered with the reveal as the row gives it.
    again = (await stub.RevealHand(reveal, metadata=SERVICE)).reveal
    assert again.server_seed == (seed if ciphertext == "intact" else b"")
    dealt = [fairness_pb2.DealtCard(position=p, card_index=deck[p]) for p in (0, 1)]
    for metadata in (ANN, ADMIN):
        shown = (
            await stub.GetReveal(fairness_pb2.GetRevealRequest(hand_id=hand_id), metadata=metadata)
        ).reveal
        verdict = await stub.VerifyHand(
            fairness_pb2.VerifyHandRequest(hand_id=hand_id, dealt_cards=dealt), metadata=metadata
        )
        if ciphertext == "intact":
            # The row still gives its seed (checked against the hash published before the deal).
            assert shown.server_seed == seed
            assert commitment_of(seed) == shown.commitment.server_seed_hash
            assert verdict.verdict == fairness_pb2.VERDICT_PASS, verdict.first_mismatch
        else:
            # No seed to publish: the reveal without it, and no card opened or checked.
            assert (shown.server_seed, list(shown.deck), list(shown.openings)) == (b"", [], [])
            assert verdict.verdict == fairness_pb2.VERDICT_FAIL
            assert verdict.first_mismatch.kind == fairness_pb2.MISMATCH_KIND_MALFORMED
            assert verdict.first_mismatch.description.startswith("server_seed:")
