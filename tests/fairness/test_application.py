"""The fairness use cases against real databases (SQLite and PostgreSQL): commitment chain, player
entropy, sealing, reveal rules, idempotency and seeds encrypted at rest."""

from __future__ import annotations

import asyncio
import hashlib
import uuid

import pytest
import sqlalchemy as sa

from service_runtime.database import create_engine
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition, InvalidArgument, NotFound
from services.fairness.application import FairnessApplication
from services.fairness.hands import ADMIN_READER, HandOutcome, HandState
from services.fairness.seed_vault import SeedVault, SeedVaultError
from services.fairness.shuffle import (
    GENESIS_COMMITMENT,
    SHUFFLE_VERSION,
    HandBinding,
    SeatSeed,
    commitment_v2,
    shuffle_deck,
)
from services.fairness.tables import hands
from services.fairness.verification import MismatchKind, dealt_from_prefix, verify_chain


def _table() -> str:
    return f"table-{uuid.uuid4().hex[:8]}"


def _request() -> str:
    return f"req-{uuid.uuid4().hex}"


def _reason(error: pytest.ExceptionInfo[DomainError]) -> str:
    return error.value.reason


async def test_commitment_binds_the_seed_hash_version_table_hand_chain_and_nonce_published_before_the_deal(
    application: FairnessApplication,
) -> None:
    table = _table()
    first = (await application.commit_hand(_request(), table, deal_now=True, shuffle_version=2)).hand
    committed = await application.commit_hand(_request(), table, shuffle_version=2)
    hand = committed.hand
    assert committed.deck is None
    assert hand.state is HandState.COMMITTED
    assert hand.shuffle_version == 2
    assert SHUFFLE_VERSION == 3  # the default; a room may keep version 2
    await application.seal_hand(hand.hand_id)
    revealed = await application.reveal_hand(hand.hand_id, HandOutcome.FINISHED)
    assert hashlib.sha256(revealed.server_seed).hexdigest() == hand.server_seed_hash
    binding = HandBinding(table, hand.hand_id, 2, first.commitment, hand.nonce)
    assert commitment_v2(hand.server_seed_hash, binding) == hand.commitment
    assert hand.previous_commitment == first.commitment
    assert revealed.hand.state is HandState.FINISHED


async def test_hands_of_a_table_form_a_chain_from_genesis(application: FairnessApplication) -> None:
    table = _table()
    first = (await application.commit_hand(_request(), table)).hand
    second = (await application.commit_hand(_request(), table)).hand
    other_table = (await application.commit_hand(_request(), _table())).hand
    assert (first.sequence, first.previous_commitment) == (1, GENESIS_COMMITMENT)
    assert (second.sequence, second.previous_commitment) == (2, first.commitment)
    assert (other_table.sequence, other_table.previous_commitment) == (1, GENESIS_COMMITMENT)


async def test_commit_is_idempotent_by_request_id(application: FairnessApplication) -> None:
    table, request_id = _table(), _request()
    first = await application.commit_hand(request_id, table, deal_now=True)
    again = await application.commit_hand(request_id, table, deal_now=True)
    assert again.hand.hand_id == first.hand.hand_id
    assert again.deck == first.deck
    listed, _ = await application.list_table_commitments(table, reader=ADMIN_READER)
    assert len(listed) == 1


async def test_reused_request_id_with_other_fields_is_a_conflict(application: FairnessApplication) -> None:
    request_id = _request()
    await application.commit_hand(request_id, _table())
    with pytest.raises(AlreadyExists) as error:
        await application.commit_hand(request_id, _table())
    assert _reason(error) == "IDEMPOTENCY_CONFLICT"


async def test_concurrent_commits_of_one_table_get_distinct_chained_positions(
    application: FairnessApplication,
) -> None:
    table = _table()
    await asyncio.gather(*(application.commit_hand(_request(), table) for _ in range(6)))
    chain, _ = await application.list_table_commitments(table, reader=ADMIN_READER)
    assert [h.sequence for h in chain] == [1, 2, 3, 4, 5, 6]
    assert verify_chain([h.chain_link() for h in chain]) is None


async def test_deck_depends_on_client_seeds_added_after_the_commitment(
    application: FairnessApplication,
) -> None:
    committed = (await application.commit_hand(_request(), _table(), shuffle_version=2)).hand
    hand_id = committed.hand_id
    await application.add_player_entropy(hand_id, 3, "player-c", b"carol's seed")
    await application.add_player_entropy(hand_id, 1, "player-a", b"alice")
    dealt = await application.seal_hand(hand_id)
    assert [s.seat for s in dealt.hand.client_seeds] == [1, 3]
    revealed = await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    seeds = [SeatSeed(1, b"alice"), SeatSeed(3, b"carol's seed")]
    assert dealt.deck == shuffle_deck(revealed.server_seed, seeds, committed.nonce, 2, committed.commitment)
    assert dealt.deck != shuffle_deck(revealed.server_seed, (), committed.nonce, 2, committed.commitment)
    assert revealed.deck == dealt.deck


async def test_sealing_again_returns_the_same_deck(application: FairnessApplication) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.add_player_entropy(hand_id, 0, "p", b"x")
    first = await application.seal_hand(hand_id)
    again = await application.seal_hand(hand_id)
    assert first.deck == again.deck
    assert again.hand.sealed_at == first.hand.sealed_at


async def test_entropy_is_closed_once_the_hand_is_dealt(application: FairnessApplication) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.add_player_entropy(hand_id, 2, "p2", b"early")
    await application.seal_hand(hand_id)
    with pytest.raises(FailedPrecondition) as error:
        await application.add_player_entropy(hand_id, 4, "p4", b"late")
    assert _reason(error) == "ENTROPY_CLOSED"
    # A retry of a seed that made it in is still answered, not refused.
    assert [
        s.seat for s in (await application.add_player_entropy(hand_id, 2, "p2", b"early")).client_seeds
    ] == [2]


async def test_a_seat_cannot_replace_its_client_seed(application: FairnessApplication) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.add_player_entropy(hand_id, 5, "p5", b"first")
    with pytest.raises(AlreadyExists) as error:
        await application.add_player_entropy(hand_id, 5, "p5", b"second")
    assert _reason(error) == "IDEMPOTENCY_CONFLICT"


async def test_deal_now_seals_without_entropy(application: FairnessApplication) -> None:
    committed = await application.commit_hand(_request(), _table(), deal_now=True, shuffle_version=2)
    assert committed.hand.state is HandState.SEALED
    assert committed.deck is not None
    with pytest.raises(FailedPrecondition) as error:
        await application.add_player_entropy(committed.hand.hand_id, 1, "p", b"x")
    assert _reason(error) == "ENTROPY_CLOSED"
    revealed = await application.reveal_hand(committed.hand.hand_id, HandOutcome.FINISHED)
    assert revealed.deck == committed.deck


async def test_nobody_gets_the_seed_or_a_verdict_before_the_hand_ends(
    application: FairnessApplication,
) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    for _ in range(2):
        with pytest.raises(FailedPrecondition) as error:
            await application.get_reveal(hand_id, reader=ADMIN_READER)
        assert _reason(error) == "HAND_NOT_FINISHED"
        with pytest.raises(FailedPrecondition) as error:
            await application.verify_stored_hand(hand_id, (), reader=ADMIN_READER)
        assert _reason(error) == "HAND_NOT_FINISHED"
        await application.seal_hand(hand_id)
    await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    assert (await application.get_reveal(hand_id, reader=ADMIN_READER)).hand.state is HandState.FINISHED


async def test_an_undealt_hand_can_be_voided_but_not_finished(application: FairnessApplication) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    with pytest.raises(FailedPrecondition) as error:
        await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    assert _reason(error) == "HAND_NOT_DEALT"
    revealed = await application.reveal_hand(hand_id, HandOutcome.VOIDED)
    assert revealed.hand.state is HandState.VOIDED


async def test_reveal_is_idempotent_and_an_ended_hand_stays_ended(application: FairnessApplication) -> None:
    hand_id = (await application.commit_hand(_request(), _table(), deal_now=True)).hand.hand_id
    first = await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    again = await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    assert (again.server_seed, again.hand.revealed_at) == (first.server_seed, first.hand.revealed_at)
    with pytest.raises(AlreadyExists) as conflict:  # RevealHand by the hand id, another outcome
        await application.reveal_hand(hand_id, HandOutcome.VOIDED)
    assert _reason(conflict) == "IDEMPOTENCY_CONFLICT"
    with pytest.raises(FailedPrecondition) as error:
        await application.seal_hand(hand_id)
    assert _reason(error) == "HAND_ALREADY_REVEALED"


async def test_unknown_hand_is_not_found(application: FairnessApplication) -> None:
    with pytest.raises(NotFound) as error:
        await application.get_commitment(str(uuid.uuid4()), reader=ADMIN_READER)
    assert _reason(error) == "HAND_NOT_FOUND"


@pytest.mark.parametrize(
    ("seat", "player_id", "client_seed", "reason", "field"),
    [
        (1024, "p", b"x", "FIELD_INVALID", "seat"),
        (1, "", b"x", "FIELD_REQUIRED", "player_id"),
        (1, "p", b"", "FIELD_REQUIRED", "client_seed"),
        (1, "p", bytes(65), "FIELD_INVALID", "client_seed"),
    ],
)
async def test_malformed_entropy_is_rejected_with_the_field_named(
    application: FairnessApplication, seat: int, player_id: str, client_seed: bytes, reason: str, field: str
) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    with pytest.raises(InvalidArgument) as error:
        await application.add_player_entropy(hand_id, seat, player_id, client_seed)
    assert (error.value.reason, error.value.metadata["field"]) == (reason, field)


async def test_commit_requires_request_and_table_ids(application: FairnessApplication) -> None:
    with pytest.raises(InvalidArgument) as error:
        await application.commit_hand("", _table())
    assert (error.value.reason, error.value.metadata["field"]) == ("FIELD_REQUIRED", "request_id")
    with pytest.raises(InvalidArgument) as error:
        await application.commit_hand(_request(), "x" * 129)
    assert (error.value.reason, error.value.metadata["field"]) == ("FIELD_INVALID", "table_id")


async def test_seeds_of_unrevealed_hands_are_encrypted_at_rest(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    first = await application.commit_hand(_request(), _table(), deal_now=True)
    second = await application.commit_hand(_request(), _table(), deal_now=True)
    engine = create_engine(fairness_database_url)
    try:
        # Each transaction here ends before the application is called: on SQLite a transaction holds
        # the write lock from its start, as it must.
        async with engine.begin() as connection:
            rows = {
                row.hand_id: row
                for row in await connection.execute(
                    sa.select(hands).where(hands.c.hand_id.in_([first.hand.hand_id, second.hand.hand_id]))
                )
            }
        row = rows[first.hand.hand_id]
        assert row.revealed_seed is None
        seed = (await application.reveal_hand(first.hand.hand_id, HandOutcome.FINISHED)).server_seed
        assert seed not in bytes(row.seed_ciphertext)
        # Another key cannot read it, and a ciphertext moved to another hand's row does not open.
        with pytest.raises(SeedVaultError):
            SeedVault({"other": bytes(32)}, "other").decrypt(row.hand_id, "other", bytes(row.seed_ciphertext))
        async with engine.begin() as connection:
            await connection.execute(
                sa.update(hands)
                .where(hands.c.hand_id == second.hand.hand_id)
                .values(seed_ciphertext=bytes(row.seed_ciphertext))
            )
    finally:
        await engine.dispose()
    # The moved ciphertext does not open under the second hand's id: a damaged row, refused with
    # its reason (never INTERNAL), and nothing about the hand changes.
    with pytest.raises(FailedPrecondition) as error:
        await application.seal_hand(second.hand.hand_id)
    assert _reason(error) == "HAND_RECORD_DAMAGED"
    assert (await application.get_commitment(second.hand.hand_id, reader=ADMIN_READER)) == second.hand


async def test_list_pages_through_the_chain_oldest_first(application: FairnessApplication) -> None:
    table = _table()
    for _ in range(5):
        await application.commit_hand(_request(), table)
    first_page, token = await application.list_table_commitments(table, reader=ADMIN_READER, page_size=2)
    second_page, token = await application.list_table_commitments(
        table, reader=ADMIN_READER, page_size=2, page_token=token
    )
    last_page, token = await application.list_table_commitments(
        table, reader=ADMIN_READER, page_size=2, page_token=token
    )
    assert [h.sequence for h in (*first_page, *second_page, *last_page)] == [1, 2, 3, 4, 5]
    assert token == ""
    with pytest.raises(InvalidArgument) as error:
        await application.list_table_commitments(table, reader=ADMIN_READER, page_token="bogus")
    assert _reason(error) == "PAGE_TOKEN_INVALID"


async def test_chain_detects_a_removed_hand(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    table = _table()
    committed = [(await application.commit_hand(_request(), table, deal_now=True)) for _ in range(4)]
    for hand in committed:
        await application.reveal_hand(hand.hand.hand_id, HandOutcome.FINISHED)
    chain, _ = await application.list_table_commitments(table, reader=ADMIN_READER)
    assert verify_chain([h.chain_link() for h in chain]) is None
    assert (await application.verify_stored_hand(committed[2].hand.hand_id, (), reader=ADMIN_READER)).passed

    engine = create_engine(fairness_database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.delete(hands).where(hands.c.hand_id == committed[1].hand.hand_id))
    finally:
        await engine.dispose()

    chain, _ = await application.list_table_commitments(table, reader=ADMIN_READER)
    mismatch = verify_chain([h.chain_link() for h in chain])
    assert mismatch is not None
    assert mismatch.kind is MismatchKind.CHAIN_LINK
    result = await application.verify_stored_hand(committed[2].hand.hand_id, (), reader=ADMIN_READER)
    assert result.first_mismatch is not None
    assert result.first_mismatch.kind is MismatchKind.CHAIN_LINK


async def test_stored_hand_verification_checks_the_dealt_cards(application: FairnessApplication) -> None:
    committed = await application.commit_hand(_request(), _table(), deal_now=True)
    assert committed.deck is not None
    await application.reveal_hand(committed.hand.hand_id, HandOutcome.FINISHED)
    good = await application.verify_stored_hand(
        committed.hand.hand_id, dealt_from_prefix(committed.deck[:9]), reader=ADMIN_READER
    )
    assert good.passed
    assert good.dealt_cards_checked == 9
    tampered = [committed.deck[1], committed.deck[0], *committed.deck[2:9]]
    bad = await application.verify_stored_hand(
        committed.hand.hand_id, dealt_from_prefix(tampered), reader=ADMIN_READER
    )
    assert bad.first_mismatch is not None
    assert (bad.first_mismatch.kind, bad.first_mismatch.position) == (MismatchKind.DEALT_CARD, 0)
