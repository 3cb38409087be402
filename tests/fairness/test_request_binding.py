"""A mutating request's key binds the whole request (CONTRIBUTING; docs/fairness.md, "Retries"):
CommitHand is keyed by its request id, SealHand and RevealHand by the hand id. A retry with the same
fields is answered as the first; with any field changed it is ALREADY_EXISTS `IDEMPOTENCY_CONFLICT`
and changes nothing. Two forms the table sends after a takeover are retries that name less on
purpose: SealHand naming nothing (the deck of a sealed hand again) and RevealHand naming no positions
(the reveal as it stands). On SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Sequence

import pytest
import sqlalchemy as sa

from service_runtime.database import create_engine
from service_runtime.errors import AlreadyExists, DomainError, FailedPrecondition
from services.fairness.application import FairnessApplication
from services.fairness.hands import ADMIN_READER, ClientSeedRecord, HandOutcome, HandState, Reader
from services.fairness.tables import hands


def _table() -> str:
    return f"table-{uuid.uuid4().hex[:8]}"


def _request() -> str:
    return f"req-{uuid.uuid4().hex}"


async def _conflict(call: Awaitable[object]) -> None:
    with pytest.raises(AlreadyExists) as error:
        await call
    assert error.value.reason == "IDEMPOTENCY_CONFLICT"


async def _refused(call: Awaitable[object]) -> str:
    with pytest.raises(DomainError) as error:
        await call
    return f"{error.value.kind.name} {error.value.reason}"


async def test_a_commit_retry_naming_other_participants_is_a_conflict_and_the_same_set_is_the_first(
    application: FairnessApplication,
) -> None:
    table, request_id = _table(), _request()
    first = await application.commit_hand(request_id, table, participants=["ann", "bob"])
    for other in (["ann"], ["ann", "bob", "carl"], ["carl"], []):
        await _conflict(application.commit_hand(request_id, table, participants=other))
    # The participants are a set: the same players in another order, or one named twice, are it.
    again = await application.commit_hand(request_id, table, participants=["bob", "ann", "bob"])
    assert again.hand == first.hand
    chain, _ = await application.list_table_commitments(table, reader=ADMIN_READER)
    assert [h.hand_id for h in chain] == [first.hand.hand_id]


async def test_a_commit_retry_after_the_seal_named_more_players_is_still_answered_as_the_first(
    application: FairnessApplication,
) -> None:
    # A house-game round names its player at the commitment; a cash hand's seal names the rest. The
    # request binds what the commitment was asked, not the readers the seal added since.
    table, request_id = _table(), _request()
    first = await application.commit_hand(request_id, table, participants=["ann"])
    await application.seal_hand(first.hand.hand_id, participants=["bob"])
    again = await application.commit_hand(request_id, table, participants=["ann"])
    assert (again.hand.hand_id, again.hand.participants) == (first.hand.hand_id, ("ann", "bob"))
    await _conflict(application.commit_hand(request_id, table, participants=["ann", "bob"]))


async def test_a_seal_retry_with_other_participants_or_seeds_is_a_conflict_and_adds_no_reader(
    application: FairnessApplication,
) -> None:
    hand_id = (await application.commit_hand(_request(), _table(), shuffle_version=2)).hand.hand_id
    seeds = [ClientSeedRecord(1, "ann", b"ann's seed")]
    sealed = await application.seal_hand(hand_id, seeds, ["ann", "bob"])
    other_seeds: list[Sequence[ClientSeedRecord]] = [
        [ClientSeedRecord(1, "ann", b"another seed")],
        [*seeds, ClientSeedRecord(2, "bob", b"a late seed")],
        [],
    ]
    for changed in other_seeds:
        await _conflict(application.seal_hand(hand_id, changed, ["ann", "bob"]))
    for players in (["ann", "bob", "carl"], ["ann"], ["carl"], []):
        await _conflict(application.seal_hand(hand_id, seeds, players))
    again = await application.seal_hand(hand_id, seeds, ["bob", "ann"])
    assert (again.hand, again.deck) == (sealed.hand, sealed.deck)
    await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    # carl was never dealt in: the reveal of a version 2 hand (every card) is not his.
    assert await _refused(application.get_reveal(hand_id, reader=Reader("carl"))) == (
        "PERMISSION_DENIED NOT_YOUR_RESOURCE"
    )
    revealed = await application.get_reveal(hand_id, reader=Reader("bob"))
    assert (revealed.hand.participants, revealed.hand.client_seeds) == (
        ("ann", "bob"),
        sealed.hand.client_seeds,
    )


async def test_a_seal_naming_nothing_gives_a_sealed_hands_deck_again(
    application: FairnessApplication,
) -> None:
    """The table's takeover: the next owner holds only the hand id and asks for the deck again."""
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    sealed = await application.seal_hand(hand_id, [ClientSeedRecord(3, "cat", b"cat")], ["ann", "cat"])
    assert (await application.seal_hand(hand_id)).deck == sealed.deck
    # A house-game round: its player named at the commitment, the seal names nobody, twice.
    table = _table()
    round_id = (
        await application.commit_hand(_request(), table, participants=["ann"], participants_only=True)
    ).hand.hand_id
    first = await application.seal_hand(round_id)
    assert (await application.seal_hand(round_id)).deck == first.deck
    await _conflict(application.seal_hand(round_id, participants=["ann"]))


async def test_a_hand_dealt_at_its_commitment_was_sealed_by_it_and_takes_no_seal_fields(
    application: FairnessApplication,
) -> None:
    committed = await application.commit_hand(_request(), _table(), deal_now=True, participants=["ann"])
    hand_id = committed.hand.hand_id
    assert (await application.seal_hand(hand_id)).deck == committed.deck
    await _conflict(application.seal_hand(hand_id, participants=["ann"]))
    await _conflict(application.seal_hand(hand_id, participants=["bob"]))
    await _conflict(application.seal_hand(hand_id, [ClientSeedRecord(1, "ann", b"late")]))
    stored = await application.get_commitment(hand_id, reader=ADMIN_READER)
    assert (stored.participants, stored.client_seeds) == (("ann",), ())


@pytest.mark.parametrize(
    ("first", "other"),
    [(HandOutcome.FINISHED, HandOutcome.VOIDED), (HandOutcome.VOIDED, HandOutcome.FINISHED)],
    ids=["finished-then-voided", "voided-then-finished"],
)
async def test_a_reveal_retry_with_another_outcome_is_a_conflict_and_the_hand_stays_as_it_ended(
    application: FairnessApplication, first: HandOutcome, other: HandOutcome
) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.seal_hand(hand_id, participants=["ann"])
    ended = await application.reveal_hand(hand_id, first)
    await _conflict(application.reveal_hand(hand_id, other))
    again = await application.reveal_hand(hand_id, first)
    assert (again.hand, again.server_seed) == (ended.hand, ended.server_seed)
    assert again.hand.state.value == first.value


async def test_a_seal_after_the_end_is_refused_and_with_other_fields_it_is_a_conflict(
    application: FairnessApplication,
) -> None:
    hand_id = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.seal_hand(hand_id, participants=["ann"])
    await application.reveal_hand(hand_id, HandOutcome.VOIDED)
    # The same seal again: no deck once the seed is public (the table reads this as "it ended").
    for same in ([], ["ann"]):
        with pytest.raises(FailedPrecondition) as error:
            await application.seal_hand(hand_id, participants=same)
        assert error.value.reason == "HAND_ALREADY_REVEALED"
    await _conflict(application.seal_hand(hand_id, participants=["bob"]))
    # A hand voided before any seal has no seal to conflict with.
    never = (await application.commit_hand(_request(), _table())).hand.hand_id
    await application.reveal_hand(never, HandOutcome.VOIDED)
    with pytest.raises(FailedPrecondition) as error:
        await application.seal_hand(never, participants=["bob"])
    assert error.value.reason == "HAND_ALREADY_REVEALED"


async def test_hands_recorded_before_requests_were_bound_take_a_retry_that_changes_nothing(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    """Hands committed or sealed before migration 0006 have no request recorded: a retry is
    answered when it asks for nothing the hand does not hold already, and is a conflict otherwise."""
    table, request_id = _table(), _request()
    committed = await application.commit_hand(request_id, table, participants=["ann"])
    hand_id = committed.hand.hand_id
    seeds = [ClientSeedRecord(1, "ann", b"ann's seed")]
    sealed = await application.seal_hand(hand_id, seeds, ["ann", "bob"])
    engine = create_engine(fairness_database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                sa.update(hands)
                .where(hands.c.hand_id == hand_id)
                .values(commit_request_sha256=None, seal_request_sha256=None)
            )
    finally:
        await engine.dispose()
    for players in (["ann"], ["bob", "ann"]):
        assert (await application.commit_hand(request_id, table, participants=players)).hand == sealed.hand
    await _conflict(application.commit_hand(request_id, table, participants=["carl"]))
    unbound: list[tuple[list[ClientSeedRecord], list[str]]] = [
        (seeds, ["ann", "bob"]),
        ([], ["bob"]),
        ([], []),
    ]
    for given, players in unbound:
        assert (await application.seal_hand(hand_id, given, players)).deck == sealed.deck
    await _conflict(application.seal_hand(hand_id, seeds, ["ann", "carl"]))
    await _conflict(application.seal_hand(hand_id, [ClientSeedRecord(2, "bob", b"late")], ["bob"]))
    stored = await application.get_commitment(hand_id, reader=ADMIN_READER)
    assert (stored.state, stored.participants, stored.client_seeds) == (
        HandState.SEALED,
        ("ann", "bob"),
        sealed.hand.client_seeds,
    )
