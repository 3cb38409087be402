"""Overlapping lifecycle calls on one hand, on SQLite and PostgreSQL: each state transition checks the
state it leaves inside the transaction that changes it, so no interleaving deals a deck the reveal
then contradicts, deals a voided hand, or ends a hand twice.

Each test holds the first call just after it read the hand (up to `HOLD` seconds, or until the second
call is done), which is exactly where a read-check-write without a lock taken at BEGIN lets the other
call slip in. Where the database serialises the two calls properly, the second one waits out the hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from service_runtime.database import create_engine
from service_runtime.errors import DomainError
from services.fairness import storage
from services.fairness.application import FairnessApplication
from services.fairness.deck_commitment import client_seed_hash
from services.fairness.hands import ADMIN_READER, ClientSeedRecord, HandOutcome, HandState
from services.fairness.verification import dealt_from_prefix

HOLD = 0.3


class HoldAfterFirstLoad:
    """Wraps `storage.load_hand`: the first call to load the hand pauses once it has read it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loaded = asyncio.Event()
        self.release = asyncio.Event()
        self._held = False
        original = storage.load_hand

        async def load_hand(*args: Any, **kwargs: Any) -> storage.StoredHand | None:
            stored = await original(*args, **kwargs)
            if not self._held:
                self._held = True
                self.loaded.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.release.wait(), HOLD)
            return stored

        monkeypatch.setattr(storage, "load_hand", load_hand)


async def overlap(
    hold: HoldAfterFirstLoad, first: Callable[[], Awaitable[Any]], second: Callable[[], Awaitable[Any]]
) -> tuple[Any, Any]:
    """Run `first` until it read the hand, then `second`; results or the exceptions they raised."""
    first_task = asyncio.ensure_future(first())
    await asyncio.wait_for(hold.loaded.wait(), 10)
    second_task = asyncio.ensure_future(second())
    await asyncio.wait({second_task}, timeout=HOLD)
    hold.release.set()
    results = await asyncio.gather(first_task, second_task, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, DomainError):
            raise result
    return results[0], results[1]


def _reason(outcome: Any) -> str | None:
    return outcome.reason if isinstance(outcome, DomainError) else None


async def _committed(application: FairnessApplication, version: int = 3) -> str:
    table = f"race-{uuid.uuid4().hex[:8]}"
    return (await application.commit_hand(f"{table}/1", table, shuffle_version=version)).hand.hand_id


async def _revealed_deck(application: FairnessApplication, hand_id: str) -> tuple[int, ...]:
    """The deck in deal order as the reveal gives it: version 2 the deck itself, version 3 the
    openings of all 52 positions an admin gets."""
    revealed = await application.get_reveal(hand_id, reader=ADMIN_READER)
    if revealed.deck:
        return revealed.deck
    return tuple(o.card for o in sorted(revealed.openings, key=lambda o: o.deal_position))


VERSIONS = pytest.mark.parametrize("version", [2, 3], ids=["v2", "v3"])


@VERSIONS
@pytest.mark.parametrize("entropy_first", [True, False], ids=["entropy-reads-first", "seal-reads-first"])
async def test_entropy_racing_the_seal_is_in_the_dealt_deck_or_refused(
    application: FairnessApplication, monkeypatch: pytest.MonkeyPatch, entropy_first: bool, version: int
) -> None:
    hand_id = await _committed(application, version)
    hold = HoldAfterFirstLoad(monkeypatch)

    def entropy() -> Awaitable[Any]:
        return application.add_player_entropy(hand_id, 3, "carol", b"carol-seed")

    def seal() -> Awaitable[Any]:
        return application.seal_hand(hand_id)

    if entropy_first:
        added, sealed = await overlap(hold, entropy, seal)
    else:
        sealed, added = await overlap(hold, seal, entropy)
    assert not isinstance(sealed, BaseException)
    assert isinstance(added, BaseException) is False or _reason(added) == "ENTROPY_CLOSED"
    revealed = await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    # The deck the table dealt is the deck the reveal gives, so the honest hand verifies...
    assert await _revealed_deck(application, hand_id) == sealed.deck
    assert (
        await application.verify_stored_hand(hand_id, dealt_from_prefix(sealed.deck), reader=ADMIN_READER)
    ).passed
    # ...and the seed is in the reveal exactly when its caller was told it was accepted.
    seats = [s.seat for s in revealed.hand.client_seeds]
    assert seats == ([] if isinstance(added, BaseException) else [3])


@VERSIONS
@pytest.mark.parametrize("seal_first", [True, False], ids=["seal-reads-first", "void-reads-first"])
async def test_a_hand_voided_while_being_sealed_is_never_dealt_after_its_end(
    application: FairnessApplication, monkeypatch: pytest.MonkeyPatch, seal_first: bool, version: int
) -> None:
    hand_id = await _committed(application, version)
    hold = HoldAfterFirstLoad(monkeypatch)

    def seal() -> Awaitable[Any]:
        return application.seal_hand(hand_id)

    def void() -> Awaitable[Any]:
        return application.reveal_hand(hand_id, HandOutcome.VOIDED)

    if seal_first:
        sealed, voided = await overlap(hold, seal, void)
    else:
        voided, sealed = await overlap(hold, void, seal)
    assert not isinstance(voided, BaseException)
    stored = await application.get_commitment(hand_id, reader=ADMIN_READER)
    assert stored.state is HandState.VOIDED
    if isinstance(sealed, BaseException):
        # The void came first: the seed is public, so no deck may be dealt from it.
        assert _reason(sealed) == "HAND_ALREADY_REVEALED"
        assert stored.sealed_at is None
    else:
        # The seal came first: the hand was dealt, then voided, and the record says so.
        assert stored.sealed_at is not None
        assert await _revealed_deck(application, hand_id) == sealed.deck


@VERSIONS
@pytest.mark.parametrize("void_first", [True, False], ids=["void-reads-first", "finish-reads-first"])
async def test_void_racing_finish_ends_the_hand_exactly_once(
    application: FairnessApplication, monkeypatch: pytest.MonkeyPatch, void_first: bool, version: int
) -> None:
    hand_id = await _committed(application, version)
    await application.seal_hand(hand_id)
    hold = HoldAfterFirstLoad(monkeypatch)

    def end(outcome: HandOutcome) -> Callable[[], Awaitable[Any]]:
        return lambda: application.reveal_hand(hand_id, outcome)

    first, second = (HandOutcome.VOIDED, HandOutcome.FINISHED)[:: 1 if void_first else -1]
    first_result, second_result = await overlap(hold, end(first), end(second))
    outcomes = {first: first_result, second: second_result}
    winners = [o for o, r in outcomes.items() if not isinstance(r, BaseException)]
    assert len(winners) == 1, outcomes
    loser = next(o for o in outcomes if o not in winners)
    # RevealHand is keyed by the hand id: the second is the first's request with another outcome.
    assert _reason(outcomes[loser]) == "IDEMPOTENCY_CONFLICT"
    assert (await application.get_commitment(hand_id, reader=ADMIN_READER)).state.value == winners[0].value


@pytest.mark.parametrize("reveal_first", [True, False], ids=["seed-reads-first", "seal-reads-first"])
async def test_a_seed_given_after_its_hash_racing_the_seal_is_dealt_or_refused(
    application: FairnessApplication, monkeypatch: pytest.MonkeyPatch, reveal_first: bool
) -> None:
    # Version 3: the seat recorded its hash; its seed then races a seal that does not carry it.
    hand_id = await _committed(application)
    commitment = (await application.get_commitment(hand_id, reader=ADMIN_READER)).commitment
    await application.add_player_entropy(hand_id, 3, "carol", b"", client_seed_hash(commitment, 3, b"carol"))
    hold = HoldAfterFirstLoad(monkeypatch)

    def seed() -> Awaitable[Any]:
        return application.add_player_entropy(hand_id, 3, "carol", b"carol")

    def seal() -> Awaitable[Any]:
        return application.seal_hand(hand_id)

    if reveal_first:
        added, sealed = await overlap(hold, seed, seal)
    else:
        sealed, added = await overlap(hold, seal, seed)
    assert not isinstance(sealed, BaseException)
    assert isinstance(added, BaseException) is False or _reason(added) == "ENTROPY_CLOSED"
    await application.reveal_hand(hand_id, HandOutcome.FINISHED)
    assert await _revealed_deck(application, hand_id) == sealed.deck
    stored = await application.get_commitment(hand_id, reader=ADMIN_READER)
    # The seed is in the deal exactly when its caller was told it was accepted.
    assert [s.seat for s in stored.seat_seeds] == ([] if isinstance(added, BaseException) else [3])


async def test_a_transition_from_a_state_the_hand_already_left_writes_nothing(
    application: FairnessApplication, fairness_database_url: str
) -> None:
    # The guard inside each write, independent of the locks: the state a decision was made in must
    # still be the stored one, or the write changes nothing.
    hand_id = await _committed(application)
    await application.reveal_hand(hand_id, HandOutcome.VOIDED)
    engine = create_engine(fairness_database_url)
    now = datetime.now(UTC)
    writes: list[Callable[[Any], Awaitable[None]]] = [
        lambda s: storage.insert_client_seed(s, hand_id, ClientSeedRecord(1, "p", b"late"), now),
        lambda s: storage.mark_sealed(s, hand_id, now, ("p",), "0" * 64),
        lambda s: storage.mark_ended(s, hand_id, HandState.SEALED, HandState.FINISHED, bytes(32), now),
    ]
    try:
        for write in writes:
            with pytest.raises(storage.StateMoved):
                async with engine.begin() as connection:
                    await write(connection)
    finally:
        await engine.dispose()
    after = await application.get_commitment(hand_id, reader=ADMIN_READER)
    assert (after.state, after.sealed_at, after.client_seeds) == (HandState.VOIDED, None, ())
