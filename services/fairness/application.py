"""Application layer of the fairness service: one method per use case, one short transaction each.

It validates requests, applies the lifecycle rules of `hands.py`, draws seeds from the operating
system's CSPRNG, keeps them encrypted through the `SeedVault`, and derives decks with `shuffle.py`.
Role checks live in the access policy of the gRPC layer; nothing here returns a seed before the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import secrets
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from service_runtime.errors import Aborted, AlreadyExists, InvalidArgument, NotFound
from service_runtime.validation import require_text
from services.fairness import storage
from services.fairness.hands import (
    ClientSeedRecord,
    DealtHand,
    HandOutcome,
    HandRecord,
    HandState,
    RevealedHand,
)
from services.fairness.seed_vault import SeedVault
from services.fairness.shuffle import (
    CLIENT_SEED_MAX_BYTES,
    GENESIS_COMMITMENT,
    MAX_SEAT,
    NONCE_BYTES,
    SEED_BYTES,
    SHUFFLE_VERSION,
    commitment_of,
    shuffle_deck,
)
from services.fairness.verification import (
    DealtCard,
    PublishedHand,
    VerificationResult,
    verify_chain_link,
    verify_hand,
)

MAX_ID_LENGTH = 128
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
# A table commits one hand at a time, so racing for the same chain position is rare; a few retries
# settle it, and a caller that still loses gets ABORTED and retries with the same request id.
COMMIT_ATTEMPTS = 5
_PAGE_TOKEN_PREFIX = "after:"


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class CommittedHand:
    """A new (or replayed) hand; the deck only when it was dealt at once."""

    hand: HandRecord
    deck: tuple[int, ...] | None = field(default=None, repr=False)


def _required(value: str, name: str) -> str:
    return require_text(value, name, limit=MAX_ID_LENGTH)


class FairnessApplication:
    """The fairness use cases over a session factory, a seed vault, a clock and a CSPRNG."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        vault: SeedVault,
        *,
        clock: Callable[[], datetime] = utc_now,
        random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self._sessions = sessions
        self._vault = vault
        self._clock = clock
        self._random_bytes = random_bytes

    # --- Mutations (service role). ---

    async def commit_hand(self, request_id: str, table_id: str, *, deal_now: bool = False) -> CommittedHand:
        """Draw a seed, publish its commitment as the next link of the table's chain."""
        _required(request_id, "request_id")
        _required(table_id, "table_id")
        for attempt in range(COMMIT_ATTEMPTS):
            try:
                # Optimistic first attempt: a new request id is the common case, so skip the lookup
                # (one round trip less); a replay shows up as a unique violation and is looked up next.
                return await self._try_commit(request_id, table_id, deal_now, look_up_request=attempt > 0)
            except IntegrityError:
                # Another commit took this request id or this chain position first: look again,
                # after a short jittered pause so racing commits do not collide again in lockstep.
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
        raise Aborted(
            "TABLE_CHAIN_CONTENDED", "concurrent commits for this table; retry", {"table_id": table_id}
        )

    async def _try_commit(
        self, request_id: str, table_id: str, deal_now: bool, *, look_up_request: bool
    ) -> CommittedHand:
        async with self._sessions.begin() as session:
            if look_up_request:
                existing = await storage.find_by_request_id(session, request_id)
                if existing is not None:
                    return self._replay_commit(existing, table_id, deal_now)
            await storage.lock_table_chain(session, table_id)
            last = await storage.last_link_of_table(session, table_id)
            sequence, previous = (last[0] + 1, last[1]) if last else (1, GENESIS_COMMITMENT)
            seed, nonce = self._random_bytes(SEED_BYTES), self._random_bytes(NONCE_BYTES)
            hand_id = str(uuid.uuid4())
            key_id, ciphertext = self._vault.encrypt(hand_id, seed)
            now = self._clock()
            record = HandRecord(
                hand_id=hand_id,
                request_id=request_id,
                table_id=table_id,
                sequence=sequence,
                commitment=commitment_of(seed),
                previous_commitment=previous,
                nonce=nonce,
                shuffle_version=SHUFFLE_VERSION,
                deal_now=deal_now,
                state=HandState.SEALED if deal_now else HandState.COMMITTED,
                client_seeds=(),
                created_at=now,
                sealed_at=now if deal_now else None,
            )
            await storage.insert_hand(session, storage.StoredHand(record, key_id, ciphertext))
        return CommittedHand(record, shuffle_deck(seed, (), nonce) if deal_now else None)

    def _replay_commit(self, existing: storage.StoredHand, table_id: str, deal_now: bool) -> CommittedHand:
        record = existing.record
        if record.table_id != table_id or record.deal_now != deal_now:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "this request id started another hand with different fields",
                {"request_id": record.request_id},
            )
        if not deal_now:
            return CommittedHand(record)
        return CommittedHand(record, self._deck(existing))

    async def add_player_entropy(
        self, hand_id: str, seat: int, player_id: str, client_seed: bytes
    ) -> HandRecord:
        """Record a seated player's client seed while the hand is still open for entropy."""
        _required(hand_id, "hand_id")
        _required(player_id, "player_id")
        if not 0 <= seat <= MAX_SEAT:
            raise InvalidArgument("FIELD_INVALID", f"seat is 0..{MAX_SEAT}", {"field": "seat"})
        if not client_seed:
            raise InvalidArgument("FIELD_REQUIRED", "client_seed is required", {"field": "client_seed"})
        if len(client_seed) > CLIENT_SEED_MAX_BYTES:
            raise InvalidArgument(
                "FIELD_INVALID",
                f"client_seed is at most {CLIENT_SEED_MAX_BYTES} bytes",
                {"field": "client_seed"},
            )
        contribution = ClientSeedRecord(seat, player_id, client_seed)
        try:
            return await self._try_add_entropy(hand_id, contribution)
        except IntegrityError:
            # The same seat was written concurrently; a second pass sees that row and decides.
            return await self._try_add_entropy(hand_id, contribution)

    async def _try_add_entropy(self, hand_id: str, contribution: ClientSeedRecord) -> HandRecord:
        async with self._sessions.begin() as session:
            record = (await self._load(session, hand_id, for_update=True)).record
            recorded = next((s for s in record.client_seeds if s.seat == contribution.seat), None)
            if recorded is not None:
                if recorded == contribution:
                    return record
                raise AlreadyExists(
                    "IDEMPOTENCY_CONFLICT",
                    "this seat already contributed another client seed",
                    {"hand_id": hand_id, "seat": str(contribution.seat)},
                )
            record.check_accepts_entropy()
            await storage.insert_client_seed(session, hand_id, contribution, self._clock())
        return dataclasses.replace(
            record, client_seeds=tuple(sorted((*record.client_seeds, contribution), key=lambda s: s.seat))
        )

    async def seal_hand(self, hand_id: str) -> DealtHand:
        """Close entropy and derive the deck; a sealed hand gives the same deck again."""
        _required(hand_id, "hand_id")
        async with self._sessions.begin() as session:
            stored = await self._load(session, hand_id, for_update=True)
            record = stored.record
            record.check_can_seal()
            if record.state is HandState.COMMITTED:
                now = self._clock()
                await storage.mark_sealed(session, hand_id, now)
                record = dataclasses.replace(record, state=HandState.SEALED, sealed_at=now)
        return DealtHand(record, self._deck(stored))

    async def reveal_hand(self, hand_id: str, outcome: HandOutcome) -> RevealedHand:
        """The table reports the end of the hand; the seed becomes public."""
        _required(hand_id, "hand_id")
        async with self._sessions.begin() as session:
            stored = await self._load(session, hand_id, for_update=True)
            record = stored.record
            if record.check_can_end(outcome):
                seed = self._seed(stored)
                now = self._clock()
                state = HandState(outcome.value)
                await storage.mark_ended(session, hand_id, state, seed, now)
                record = dataclasses.replace(record, state=state, revealed_at=now)
                stored = dataclasses.replace(stored, record=record, revealed_seed=seed)
        return self._revealed(stored)

    # --- Reads (any role). ---

    async def get_commitment(self, hand_id: str) -> HandRecord:
        _required(hand_id, "hand_id")
        async with self._sessions() as session:
            return (await self._load(session, hand_id)).record

    async def get_reveal(self, hand_id: str) -> RevealedHand:
        _required(hand_id, "hand_id")
        async with self._sessions() as session:
            stored = await self._load(session, hand_id)
        stored.record.check_revealed()
        return self._revealed(stored)

    async def list_table_commitments(
        self, table_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[HandRecord], str]:
        """One page of the table's chain, oldest first, and the token of the next page ("" at the end)."""
        _required(table_id, "table_id")
        size = DEFAULT_PAGE_SIZE if page_size <= 0 else min(page_size, MAX_PAGE_SIZE)
        after = 0
        if page_token:
            prefix, _, number = page_token.partition(_PAGE_TOKEN_PREFIX)
            if prefix or not number.isdigit():
                raise InvalidArgument("PAGE_TOKEN_INVALID", "the page token was not issued by this RPC")
            after = int(number)
        async with self._sessions() as session:
            page = await storage.list_table_hands(session, table_id, after_sequence=after, limit=size + 1)
        if len(page) > size:
            return page[:size], f"{_PAGE_TOKEN_PREFIX}{page[size - 1].sequence}"
        return page, ""

    async def verify_stored_hand(self, hand_id: str, dealt: Sequence[DealtCard]) -> VerificationResult:
        """Check an ended hand as stored: its commitment, its link to the table's previous hand, and
        the dealt cards. A hand that has not ended is refused, so this cannot leak a live deck."""
        _required(hand_id, "hand_id")
        async with self._sessions() as session:
            stored = await self._load(session, hand_id)
            record = stored.record
            record.check_revealed()
            previous = await storage.hand_at_sequence(session, record.table_id, record.sequence - 1)
        assert stored.revealed_seed is not None  # an ended hand always has its seed revealed
        published = PublishedHand(
            stored.revealed_seed, record.seat_seeds, record.nonce, record.commitment, record.shuffle_version
        )
        # Checks run in the order commitment, chain link, dealt cards; the first failure is reported.
        result = verify_hand(published)
        if not result.passed:
            return result
        link_mismatch = verify_chain_link(
            record.chain_link(), None if previous is None else previous.chain_link()
        )
        if link_mismatch is not None:
            return dataclasses.replace(result, first_mismatch=link_mismatch)
        return verify_hand(published, dealt)

    @staticmethod
    def verify_published_hand(published: PublishedHand, dealt: Sequence[DealtCard]) -> VerificationResult:
        """Check values a reveal published, without any stored state."""
        return verify_hand(published, dealt)

    # --- Internals. ---

    async def _load(
        self, session: AsyncSession, hand_id: str, *, for_update: bool = False
    ) -> storage.StoredHand:
        stored = await storage.load_hand(session, hand_id, for_update=for_update)
        if stored is None:
            raise NotFound("HAND_NOT_FOUND", "no hand with this id", {"hand_id": hand_id})
        return stored

    def _seed(self, stored: storage.StoredHand) -> bytes:
        if stored.revealed_seed is not None:
            return stored.revealed_seed
        seed = self._vault.decrypt(stored.record.hand_id, stored.seed_key_id, stored.seed_ciphertext)
        if commitment_of(seed) != stored.record.commitment:
            # Cannot happen unless the row was tampered with; never deal or reveal such a hand.
            raise RuntimeError(f"stored seed of hand {stored.record.hand_id} does not match its commitment")
        return seed

    def _deck(self, stored: storage.StoredHand) -> tuple[int, ...]:
        record = stored.record
        return shuffle_deck(self._seed(stored), record.seat_seeds, record.nonce, record.shuffle_version)

    def _revealed(self, stored: storage.StoredHand) -> RevealedHand:
        seed = self._seed(stored)
        return RevealedHand(
            stored.record, seed, shuffle_deck(seed, stored.record.seat_seeds, stored.record.nonce)
        )
