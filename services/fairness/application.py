"""Application layer of the fairness service: one method per use case, one short transaction each.

It validates requests, applies the lifecycle rules of `hands.py`, draws seeds from the operating
system's CSPRNG, keeps them encrypted through the `SeedVault`, and derives decks with `shuffle.py`.
Role checks live in the access policy of the gRPC layer; nothing here returns a seed before the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import random
import secrets
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from service_runtime.database import Transactions
from service_runtime.errors import Aborted, AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from service_runtime.structured_logging import get_logger
from service_runtime.validation import require_text
from services.fairness import storage
from services.fairness.client_seeds import (
    MAX_ID_LENGTH,
    Recorded,
    recorded_as,
    validated_seed,
    with_hash,
    with_seeds,
)
from services.fairness.deck_commitment import (
    DECK_SECRET_BYTES,
    CardOpening,
    commitment_v3,
    deal_order,
    dealt_cards,
    deck_root,
    open_positions,
    secret_deck_from,
    tree_levels,
)
from services.fairness.hands import (
    ClientSeedRecord,
    DealtHand,
    HandOutcome,
    HandRecord,
    HandState,
    Reader,
    RevealedHand,
    published_hand,
)
from services.fairness.request_binding import (
    SEALED_BY_COMMITMENT,
    CommitRequest,
    SealRequest,
    check_commit_retry,
    check_seal_retry,
)
from services.fairness.seed_vault import DECK_SECRET_LABEL, SeedVault, SeedVaultError
from services.fairness.shuffle import (
    GENESIS_COMMITMENT,
    NONCE_BYTES,
    SEED_BYTES,
    SHUFFLE_VERSION,
    HandBinding,
    ShuffleInputError,
    commitment_of,
    commitment_v2,
    shuffle_deck,
)
from services.fairness.verification import (
    DealtCard,
    PublishedHand,
    VerificationResult,
    check_shown_commitment,
    unreadable_stored,
    verify_chain_link,
    verify_hand,
)
from services.fairness.visibility import Visibility

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
# A table commits one hand at a time, so racing for the same chain position is rare; a few retries
# settle it, and a caller that still loses gets ABORTED and retries with the same request id.
COMMIT_ATTEMPTS = 5
# Tables whose newest link this process remembers (the last it committed for each), so that the
# common commit writes its hand without reading the chain first; the oldest is forgotten first.
CHAIN_HEADS_KEPT = 4096
_PAGE_TOKEN_PREFIX = "after:"
# A guarded transition that finds the hand moved on is decided again; with the hand locked for the
# whole transaction (row lock, or SQLite's write lock taken at BEGIN) the first attempt always holds.
STATE_MOVED_ATTEMPTS = 3
# Client seeds one SealHand may carry: far more seats than any table has.
MAX_SEEDS_PER_SEAL = 64
# Players one hand may name as dealt in (CommitHand and SealHand together).
MAX_PARTICIPANTS = 64
# The versions CommitHand deals under: 0 asks for the default; 2 is a room's full public reveal.
DEALT_VERSIONS = frozenset({2, 3})
T = TypeVar("T")
log = get_logger("fairness.application")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class CommittedHand:
    """A new (or replayed) hand; the deck only when it was dealt at once."""

    hand: HandRecord
    deck: tuple[int, ...] | None = field(default=None, repr=False)


def _required(value: str, name: str) -> str:
    return require_text(value, name, limit=MAX_ID_LENGTH)


def _participants(given: Sequence[str], already: Sequence[str] = ()) -> tuple[str, ...]:
    """The players dealt in: `already` plus `given`, each a valid id, at most MAX_PARTICIPANTS."""
    for player in given:
        if not player:
            raise InvalidArgument("FIELD_INVALID", "a participant id is empty", {"field": "participant_ids"})
        require_text(player, "participant_ids", limit=MAX_ID_LENGTH)
    merged = tuple(dict.fromkeys((*already, *given)))
    if len(merged) > MAX_PARTICIPANTS:
        raise InvalidArgument(
            "FIELD_INVALID", f"at most {MAX_PARTICIPANTS} participants", {"field": "participant_ids"}
        )
    return merged


async def _deciding_again_if_moved(unit: Callable[[], Awaitable[T]]) -> T:
    """Run a state transition; if its guarded write found the hand moved on, decide again from a
    fresh read (the second read sees the new state and the lifecycle rules answer it)."""
    for _ in range(STATE_MOVED_ATTEMPTS - 1):
        try:
            return await unit()
        except storage.StateMoved:
            continue
    return await unit()


def _log_damaged(record: HandRecord, part: str) -> None:
    log.error("hand record damaged", hand_id=record.hand_id, table_id=record.table_id, part=part)


def _damaged(record: HandRecord, part: str) -> FailedPrecondition:
    """A row that cannot give what dealing or ending the hand needs (docs/fairness.md, "Damaged
    rows"): refused with its reason, nothing changed; `part` (seed, deck_secret, shuffle) goes to the
    log only."""
    _log_damaged(record, part)
    return FailedPrecondition(
        "HAND_RECORD_DAMAGED",
        "the hand's stored record cannot give its seed or deck; nothing was changed",
        {"hand_id": record.hand_id},
    )


def _deck_of(record: HandRecord, seed: bytes, deck_secret: bytes | None = None) -> tuple[int, ...]:
    """The cards in deal order. Version 3: the committed deck dealt in the order the server's share
    and the revealed seeds give."""
    if record.opens_per_position:
        if deck_secret is None:
            raise ShuffleInputError("a version 3 hand has no deck secret")
        order = deal_order(seed, record.seat_seeds, record.nonce, record.commitment)
        return dealt_cards(secret_deck_from(deck_secret), order)
    return shuffle_deck(seed, record.seat_seeds, record.nonce, record.shuffle_version, record.commitment)


class FairnessApplication:
    """The fairness use cases over the service's transactions, a seed vault, a clock and a CSPRNG.

    Each use case is one unit of work (`async def unit(connection)`) run by `Transactions`: its own
    transaction on PostgreSQL, a share of one group commit on SQLite. A unit decides everything
    before it writes and writes once, so one that raises has changed nothing.
    """

    def __init__(
        self,
        transactions: Transactions,
        vault: SeedVault,
        *,
        clock: Callable[[], datetime] = utc_now,
        random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self._transactions = transactions
        self._vault = vault
        self._clock = clock
        self._random_bytes = random_bytes
        # table id -> (sequence, commitment) of the newest hand this process committed for it. Only
        # committed links go in, and links never change, so a remembered head is either the chain's
        # true head or behind it; a commit that links to one behind takes a position already taken
        # and fails on the unique (table_id, sequence), and its retry reads the chain under the lock.
        self._chain_heads: dict[str, tuple[int, str]] = {}

    # --- Mutations (service role). ---

    async def commit_hand(
        self,
        request_id: str,
        table_id: str,
        *,
        deal_now: bool = False,
        participants: Sequence[str] = (),
        participants_only: bool = False,
        private_room: bool = False,
        shuffle_version: int = 0,
    ) -> CommittedHand:
        """Draw a seed, publish its commitment as the next link of the table's chain. The players
        named are dealt in; a participants-only hand (a house-game round) exists for them alone, and
        so does a private room's hand for the players dealt in (named here or at the seal).
        Version 3 (the default) also draws the secret deck and commits to its root."""
        _required(request_id, "request_id")
        _required(table_id, "table_id")
        version = shuffle_version or SHUFFLE_VERSION
        if version not in DEALT_VERSIONS:
            raise InvalidArgument(
                "FIELD_INVALID", "shuffle_version is 0 (the default), 2 or 3", {"field": "shuffle_version"}
            )
        players = _participants(participants)
        if participants_only and not players:
            raise InvalidArgument(
                "FIELD_INVALID",
                "a participants-only hand names its participants",
                {"field": "participant_ids"},
            )
        request = CommitRequest(table_id, deal_now, players, participants_only, private_room, version)
        for attempt in range(COMMIT_ATTEMPTS):
            try:
                # Optimistic first attempt: a new request id and an uncontended chain are the common
                # case, so skip the lookup and the table lock (two round trips less); a replay or a
                # racing commit shows up as a unique violation, and the next attempt looks and locks.
                unit = functools.partial(
                    self._try_commit, request_id=request_id, request=request, retry=attempt > 0
                )
                committed = await self._transactions.run(unit)
            except storage.INTEGRITY_ERRORS:
                # Another commit took this request id or this chain position first: look again,
                # after a short jittered pause so racing commits do not collide again in lockstep.
                await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
            else:
                self._remember_head(committed.hand)
                return committed
        raise Aborted(
            "TABLE_CHAIN_CONTENDED", "concurrent commits for this table; retry", {"table_id": table_id}
        )

    async def _try_commit(
        self, connection: AsyncConnection, *, request_id: str, request: CommitRequest, retry: bool
    ) -> CommittedHand:
        table_id, version, deal_now = request.table_id, request.version, request.deal_now
        if retry:
            existing = await storage.find_by_request_id(connection, request_id)
            if existing is not None:
                return self._replay_commit(existing, request)
            await storage.lock_table_chain(connection, table_id)
            last = await storage.last_link_of_table(connection, table_id)
        else:
            last = self._chain_heads.get(table_id) or await storage.last_link_of_table(connection, table_id)
        sequence, previous = (last[0] + 1, last[1]) if last else (1, GENESIS_COMMITMENT)
        seed, nonce = self._random_bytes(SEED_BYTES), self._random_bytes(NONCE_BYTES)
        hand_id = str(uuid.uuid4())
        key_id, ciphertext = self._vault.encrypt(hand_id, seed)
        now = self._clock()
        seed_hash = commitment_of(seed)
        binding = HandBinding(table_id, hand_id, sequence, previous, nonce)
        deck_secret: bytes | None = None
        root = ""
        secret_ciphertext: bytes | None = None
        if version == 3:
            deck_secret = self._random_bytes(DECK_SECRET_BYTES)
            root = deck_root(tree_levels(secret_deck_from(deck_secret)))
            commitment = commitment_v3(seed_hash, binding, root)
            secret_ciphertext = self._vault.encrypt(hand_id, deck_secret, DECK_SECRET_LABEL)[1]
        else:
            commitment = commitment_v2(seed_hash, binding, version)
        record = HandRecord(
            hand_id=hand_id,
            request_id=request_id,
            table_id=table_id,
            sequence=sequence,
            commitment=commitment,
            server_seed_hash=seed_hash,
            deck_root=root,
            previous_commitment=previous,
            nonce=nonce,
            shuffle_version=version,
            deal_now=deal_now,
            state=HandState.SEALED if deal_now else HandState.COMMITTED,
            client_seeds=(),
            created_at=now,
            sealed_at=now if deal_now else None,
            participants=request.participants,
            participants_only=request.participants_only,
            private_room=request.private_room,
        )
        committed = CommittedHand(record, _deck_of(record, seed, deck_secret) if deal_now else None)
        stored = storage.StoredHand(
            record,
            key_id,
            ciphertext,
            deck_secret_ciphertext=secret_ciphertext,
            commit_request_sha256=request.digest(),
            seal_request_sha256=SEALED_BY_COMMITMENT if deal_now else None,
        )
        await storage.insert_hand(connection, stored, commit=True)
        return committed

    def _remember_head(self, record: HandRecord) -> None:
        """Keep a committed hand as its table's head, unless a newer one is already kept (a replay
        returns an older hand)."""
        known = self._chain_heads.pop(record.table_id, None)
        if known is not None and known[0] > record.sequence:
            self._chain_heads[record.table_id] = known
            return
        self._chain_heads[record.table_id] = (record.sequence, record.commitment)
        if len(self._chain_heads) > CHAIN_HEADS_KEPT:
            del self._chain_heads[next(iter(self._chain_heads))]

    def _replay_commit(self, existing: storage.StoredHand, request: CommitRequest) -> CommittedHand:
        """The hand this request id committed, if the request is the same in every field."""
        record = existing.record
        check_commit_retry(record, existing.commit_request_sha256, request)
        if not request.deal_now:
            return CommittedHand(record)
        return CommittedHand(record, self._deck(existing))

    async def add_player_entropy(
        self, hand_id: str, seat: int, player_id: str, client_seed: bytes, client_seed_hash: str = ""
    ) -> HandRecord:
        """Record a seated player's client seed (version 3: or only its hash, the seed to follow at
        the seal) while the hand is still open for entropy."""
        _required(hand_id, "hand_id")
        contribution = validated_seed(seat, player_id, client_seed, seed_hash=client_seed_hash)
        try:
            return await _deciding_again_if_moved(
                lambda: self._transactions.run(lambda c: self._try_add_entropy(c, hand_id, contribution))
            )
        except storage.INTEGRITY_ERRORS:
            # The same seat was written concurrently; a second pass sees that row and decides.
            return await _deciding_again_if_moved(
                lambda: self._transactions.run(lambda c: self._try_add_entropy(c, hand_id, contribution))
            )

    async def _try_add_entropy(
        self, connection: AsyncConnection, hand_id: str, contribution: ClientSeedRecord
    ) -> HandRecord:
        record = (await self._load(connection, hand_id, for_update=True)).record
        contribution = with_hash(record, contribution)
        recorded = recorded_as(record, contribution)
        if recorded is Recorded.ALREADY:
            return record
        record.check_accepts_entropy()
        if recorded is Recorded.REVEAL:
            change = storage.seed_reveal(hand_id, contribution)
        else:
            change = storage.seed_insert(hand_id, contribution, self._clock())
        await storage.write(connection, hand_id, [change], commit=True)
        return with_seeds(record, [contribution])

    async def seal_hand(
        self,
        hand_id: str,
        client_seeds: Sequence[ClientSeedRecord] = (),
        participants: Sequence[str] = (),
    ) -> DealtHand:
        """Record the client seeds given (as `add_player_entropy` would) and the players dealt in,
        close entropy and derive the deck, all in one unit of work. The hand id is the key: a sealed
        hand gives the same deck again to the request that sealed it, or to one naming nothing (a
        shard that took the table over holds only the hand id); any other is a conflict."""
        _required(hand_id, "hand_id")
        _participants(participants)
        if len(client_seeds) > MAX_SEEDS_PER_SEAL:
            raise InvalidArgument(
                "FIELD_INVALID", f"at most {MAX_SEEDS_PER_SEAL} client seeds", {"field": "client_seeds"}
            )
        seeds = [validated_seed(s.seat, s.player_id, s.client_seed, "client_seeds.") for s in client_seeds]
        if len({s.seat for s in seeds}) != len(seeds):
            raise InvalidArgument("FIELD_INVALID", "a seat is listed twice", {"field": "client_seeds.seat"})
        request = SealRequest(tuple(seeds), tuple(participants))

        def unit(connection: AsyncConnection) -> Awaitable[DealtHand]:
            return self._try_seal(connection, hand_id, request)

        try:
            return await _deciding_again_if_moved(lambda: self._transactions.run(unit))
        except storage.INTEGRITY_ERRORS:
            # A seat was written concurrently; a second pass sees that row and decides.
            return await _deciding_again_if_moved(lambda: self._transactions.run(unit))

    async def _try_seal(self, connection: AsyncConnection, hand_id: str, request: SealRequest) -> DealtHand:
        stored = await self._load(connection, hand_id, for_update=True)
        record = stored.record
        if record.sealed_at is not None:
            # A retry of the seal (ended since, or not): the request must be the one that sealed it.
            check_seal_retry(record, stored.seal_request_sha256, request)
        record.check_can_seal()
        if record.state is not HandState.COMMITTED:
            return DealtHand(record, self._deck(stored))
        players = _participants(request.participants, record.participants)
        hashed = [with_hash(record, seed) for seed in request.seeds]
        decided = [(seed, recorded_as(record, seed)) for seed in hashed]
        new = [(seed, how) for seed, how in decided if how is not Recorded.ALREADY]
        # The seeds, the seal and the players dealt in: one round trip with the COMMIT, after the
        # deck is derived (a unit that raises has written nothing).
        now = self._clock()
        changes: list[storage.Write] = [
            storage.seed_reveal(hand_id, seed)
            if how is Recorded.REVEAL
            else storage.seed_insert(hand_id, seed, now)
            for seed, how in new
        ]
        record = with_seeds(record, [seed for seed, _ in new])
        changes.append(storage.sealing(hand_id, now, players, request.digest()))
        record = dataclasses.replace(record, state=HandState.SEALED, sealed_at=now, participants=players)
        dealt = DealtHand(record, self._deck(dataclasses.replace(stored, record=record)))
        await storage.write(connection, hand_id, changes, commit=True)
        return dealt

    async def reveal_hand(
        self,
        hand_id: str,
        outcome: HandOutcome,
        public_positions: Sequence[int] = (),
        seen: Sequence[tuple[str, Sequence[int]]] = (),
    ) -> RevealedHand:
        """The table reports the end of the hand; the seed becomes public. Version 3: with the deal
        positions that were public and those each participant saw, which decide every reader's
        openings; the answer (to the table) opens the public positions only."""
        _required(hand_id, "hand_id")
        return await _deciding_again_if_moved(
            lambda: self._transactions.run(
                lambda connection: self._try_reveal(connection, hand_id, outcome, public_positions, seen)
            )
        )

    async def _try_reveal(
        self,
        connection: AsyncConnection,
        hand_id: str,
        outcome: HandOutcome,
        public_positions: Sequence[int],
        seen: Sequence[tuple[str, Sequence[int]]],
    ) -> RevealedHand:
        stored = await self._load(connection, hand_id, for_update=True)
        record = stored.record
        visibility = (
            Visibility.reported(public_positions, seen, record.participants)
            if record.opens_per_position
            else Visibility()
        )
        if record.check_can_end(outcome):
            seed = self._seed(stored)
            now = self._clock()
            state = HandState(outcome.value)
            leaving = record.state
            record = dataclasses.replace(record, state=state, revealed_at=now, visibility=visibility)
            stored = dataclasses.replace(stored, record=record, revealed_seed=seed)
            revealed = self._revealed(stored, Reader())
            change = storage.ending(hand_id, leaving, state, seed, now, visibility)
            await storage.write(connection, hand_id, [change], commit=True)
            return revealed
        if record.opens_per_position and visibility != Visibility() and visibility != record.visibility:
            raise AlreadyExists(
                "IDEMPOTENCY_CONFLICT",
                "the hand already ended with other public or seen positions",
                {"hand_id": hand_id},
            )
        return self._revealed(stored, Reader())

    # --- Reads (players and admins; `reader` says who asks). ---

    async def get_commitment(self, hand_id: str, *, reader: Reader) -> HandRecord:
        _required(hand_id, "hand_id")
        stored = await self._transactions.run(lambda connection: self._load(connection, hand_id))
        reader.check_may_know_of(stored.record)
        return stored.record

    async def get_reveal(self, hand_id: str, *, reader: Reader) -> RevealedHand:
        """The seed and deck of an ended hand of version 1 or 2, to its participants and admins only;
        of a version 3 hand, the seed and the openings of the positions the reader saw."""
        _required(hand_id, "hand_id")
        stored = await self._transactions.run(lambda connection: self._load(connection, hand_id))
        reader.check_may_read_reveal(stored.record)
        stored.record.check_revealed()
        return self._revealed(stored, reader)

    async def list_table_commitments(
        self, table_id: str, *, reader: Reader, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[HandRecord], str]:
        """One page of the table's chain, oldest first, and the token of the next page ("" at the end).
        A hand the reader did not play comes without its hand id; participants-only hands of others
        are left out."""
        _required(table_id, "table_id")
        size = DEFAULT_PAGE_SIZE if page_size <= 0 else min(page_size, MAX_PAGE_SIZE)
        after = 0
        if page_token:
            prefix, _, number = page_token.partition(_PAGE_TOKEN_PREFIX)
            if prefix or not number.isdigit():
                raise InvalidArgument("PAGE_TOKEN_INVALID", "the page token was not issued by this RPC")
            after = int(number)
        private_to = None if reader.admin else reader.player_id
        page = await self._transactions.run(
            lambda connection: storage.list_table_hands(
                connection, table_id, after_sequence=after, limit=size + 1, private_to=private_to
            )
        )
        shown = [h if reader.played(h) else dataclasses.replace(h, hand_id="") for h in page]
        if len(shown) > size:
            return shown[:size], f"{_PAGE_TOKEN_PREFIX}{shown[size - 1].sequence}"
        return shown, ""

    async def verify_stored_hand(
        self, hand_id: str, dealt: Sequence[DealtCard], *, reader: Reader, shown_commitment: str = ""
    ) -> VerificationResult:
        """Check an ended hand as stored: its commitment and what it binds, the commitment the caller
        was shown before the deal (if given), its link to the table's previous hand, and the dealt
        cards. A hand that has not ended is refused, so this cannot leak a live deck, and so is a
        reader who did not play it: a verdict on a dealt card would tell them the card."""
        _required(hand_id, "hand_id")

        async def unit(connection: AsyncConnection) -> tuple[storage.StoredHand, HandRecord | None]:
            stored = await self._load(connection, hand_id)
            reader.check_may_read_reveal(stored.record)
            stored.record.check_revealed()
            table_id, sequence = stored.record.table_id, stored.record.sequence
            return stored, await storage.hand_at_sequence(connection, table_id, sequence - 1)

        stored, previous = await self._transactions.run(unit)
        record = stored.record
        # A damaged row: like a stored hand whose values cannot give a deck, MALFORMED.
        seed = self._readable_seed(stored)
        if seed is None:
            return unreadable_stored("server_seed")
        if record.opens_per_position and self._deck_secret(stored) is None:
            return unreadable_stored("deck_secret")
        published = published_hand(record, seed, self._revealed(stored, reader).openings)
        # Checks run in the order the published values (shapes, seed hash, commitment, version 3's
        # client-seed hashes), shown commitment, chain link, then (version 3) the openings, then the
        # dealt cards; the first failure is reported.
        result = verify_hand(dataclasses.replace(published, openings=()))
        if not result.passed:
            return result
        mismatch = check_shown_commitment(shown_commitment, record.commitment) if shown_commitment else None
        if mismatch is None:
            mismatch = verify_chain_link(
                record.chain_link(), None if previous is None else previous.chain_link()
            )
        if mismatch is not None:
            return dataclasses.replace(result, first_mismatch=mismatch)
        return verify_hand(published, dealt)

    @staticmethod
    def verify_published_hand(published: PublishedHand, dealt: Sequence[DealtCard]) -> VerificationResult:
        """Check values a reveal published, without any stored state."""
        return verify_hand(published, dealt)

    # --- Internals. ---

    async def _load(
        self, connection: AsyncConnection, hand_id: str, *, for_update: bool = False
    ) -> storage.StoredHand:
        stored = await storage.load_hand(connection, hand_id, for_update=for_update)
        if stored is None:
            raise NotFound("HAND_NOT_FOUND", "no hand with this id", {"hand_id": hand_id})
        return stored

    def _readable_seed(self, stored: storage.StoredHand) -> bytes | None:
        """The seed: in clear once the hand ended, else decrypted and checked against the hash
        published before the deal. None when the row cannot give it (a damaged row: a ciphertext of
        another hand's row, a key no longer configured, an ended row whose seed is missing)."""
        if stored.revealed_seed is not None:
            return stored.revealed_seed
        try:
            seed = self._vault.decrypt(stored.record.hand_id, stored.seed_key_id, stored.seed_ciphertext)
        except SeedVaultError:
            return None
        return seed if commitment_of(seed) == stored.record.server_seed_hash else None

    def _seed(self, stored: storage.StoredHand) -> bytes:
        """The seed a deal or an end needs; a row that cannot give it is refused, never dealt or
        revealed (HAND_RECORD_DAMAGED)."""
        seed = self._readable_seed(stored)
        if seed is None:
            raise _damaged(stored.record, "seed")
        return seed

    def _deck_secret(self, stored: storage.StoredHand) -> bytes | None:
        """Version 3's deck secret; None when the row has none or it does not decrypt (a damaged
        row: a ciphertext of another hand's row, or a key no longer configured). Such a hand opens
        nothing and verifies as MALFORMED; it is not dealt (`_deck`: HAND_RECORD_DAMAGED)."""
        if stored.deck_secret_ciphertext is None:
            return None
        try:
            return self._vault.decrypt(
                stored.record.hand_id, stored.seed_key_id, stored.deck_secret_ciphertext, DECK_SECRET_LABEL
            )
        except SeedVaultError:
            return None

    def _deck(self, stored: storage.StoredHand) -> tuple[int, ...]:
        """The deck to deal; HAND_RECORD_DAMAGED when the row cannot give it."""
        seed = self._seed(stored)
        try:
            return _deck_of(stored.record, seed, self._deck_secret(stored))
        except ShuffleInputError:
            raise _damaged(
                stored.record, "deck_secret" if stored.record.opens_per_position else "shuffle"
            ) from None

    def _openings(self, stored: storage.StoredHand, seed: bytes, reader: Reader) -> tuple[CardOpening, ...]:
        record = stored.record
        positions = reader.positions_of(record)
        deck_secret = self._deck_secret(stored)
        if not positions or deck_secret is None:
            return ()
        secret = secret_deck_from(deck_secret)
        order = deal_order(seed, record.seat_seeds, record.nonce, record.commitment)
        return open_positions(secret, tree_levels(secret), order, positions)

    def _revealed(self, stored: storage.StoredHand, reader: Reader) -> RevealedHand:
        """The reveal as `reader` may have it: versions 1 and 2 the deck (none when the stored
        values cannot give one: a version or nonce no shuffle knows, which the verifier then
        reports as MALFORMED); version 3 the openings of the reader's positions, never the deck. A
        row that cannot give its seed gives neither, nor the seed."""
        seed = self._readable_seed(stored)
        if seed is None:
            _log_damaged(stored.record, "seed")
            return RevealedHand(stored.record, b"", ())
        try:
            if stored.record.opens_per_position:
                return RevealedHand(stored.record, seed, (), self._openings(stored, seed, reader))
            deck = _deck_of(stored.record, seed)
        except ShuffleInputError:
            deck = ()
        return RevealedHand(stored.record, seed, deck)
