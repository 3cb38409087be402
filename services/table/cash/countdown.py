"""The countdown between two hands, as a pure state machine (issue 30; docs/table.md "The hand's core").

Like the running hand's core (core.py) it does no I/O and reads no clock: every time is an input,
and the shell (the table's actor) runs the calls it leads to - fairness's `CommitHand` before it,
`AddPlayerEntropy` for each seed or hash taken, `SealHand` when it says so.

Once the next hand is committed the countdown runs `countdown_seconds` (docs/table.md, "A hand,
start to end"). A version 3 hand takes client seeds in two steps (docs/fairness.md, "The seed flow at
a table"): seed hashes until the countdown's last `seed_seconds`, when the hash set closes; then the
seeds of exactly the seats in the set, until the seal. A version 2 hand takes the seed in one step
for the whole countdown. A countdown begun again for the same commitment (the plan fell short of two
players at the seal) takes the seeds of the closed set for the whole countdown.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from poker.table.v1 import table_pb2
from service_runtime.errors import FailedPrecondition, InvalidArgument

if TYPE_CHECKING:
    from services.table.ports.dependencies import Commitment


class Due(enum.Enum):
    NOTHING = "NOTHING"  # the running phase has time left
    CLOSE_HASHES = "CLOSE_HASHES"  # version 3: the hash set closes now, the seeds' phase begins
    SEAL = "SEAL"  # the countdown is over: seal and deal


def seed_seconds(countdown_seconds: float, seed_reveal_seconds: float) -> float:
    """The seeds' phase of a version 3 countdown: at most half of it."""
    return min(seed_reveal_seconds, countdown_seconds / 2)


@dataclass
class Countdown:
    commitment: Commitment
    # The room's terms the commitment was asked on (private room, shuffle version; Dealer.terms): a
    # room whose terms changed before the deal gets a commitment of its own (the old one is voided).
    terms: tuple[bool, int] = (False, 0)
    seeds: dict[int, bytes] = field(default_factory=dict)  # engine seat -> seed relayed
    # Version 3: engine seat -> (player, seed hash) relayed while hashes are taken; closed once,
    # then only those seats send their seeds.
    hashes: dict[int, tuple[str, str]] = field(default_factory=dict)
    hashes_closed: bool = False
    # When the running phase ends (the shell's wall clock); None before the countdown begins.
    phase_ends: float | None = None

    @property
    def hash_first(self) -> bool:
        return self.commitment.version >= 3

    def seed_phase(self) -> int:
        if not self.hash_first:
            return int(table_pb2.SEED_PHASE_ONE_STEP)
        return int(table_pb2.SEED_PHASE_SEEDS if self.hashes_closed else table_pb2.SEED_PHASE_HASHES)

    def start(self, at: float, countdown_seconds: float, seeds_seconds: float) -> None:
        """The countdown begins at `at` (again, for a commitment kept from an earlier one): hashes for
        the countdown less its seeds' phase, unless the set is closed already."""
        hashes_now = self.hash_first and not self.hashes_closed
        self.phase_ends = at + countdown_seconds - (seeds_seconds if hashes_now else 0.0)

    def due(self, at: float) -> Due:
        """What the countdown needs at `at`."""
        if self.phase_ends is None or at < self.phase_ends:
            return Due.NOTHING
        return Due.CLOSE_HASHES if self.hash_first and not self.hashes_closed else Due.SEAL

    def close_hashes(self, at: float, seeds_seconds: float) -> None:
        """Version 3: the set of seed hashes closes at `at`; its seats send their seeds until the seal."""
        self.hashes_closed = True
        self.phase_ends = at + seeds_seconds

    def check(self, seat: int, player_id: str, *, is_hash: bool) -> int:
        """The seed phase a hash or seed of `seat` is taken in now, or why not."""
        hand_id = self.commitment.hand_id
        if not self.hash_first:
            if is_hash:
                raise InvalidArgument(
                    "FIELD_INVALID",
                    "this hand takes the client seed in one step (fairness version 2): send client_seed",
                    {"field": "client_seed_hash"},
                )
            return int(table_pb2.SEED_PHASE_ONE_STEP)
        if is_hash:
            if self.hashes_closed:
                raise FailedPrecondition(
                    "SEED_HASHES_CLOSED",
                    "the client-seed hashes of this hand are closed; send a hash for the next hand",
                    {"hand_id": hand_id},
                )
            return int(table_pb2.SEED_PHASE_HASHES)
        recorded = self.hashes.get(seat)
        if recorded is None or recorded[0] != player_id:
            raise FailedPrecondition(
                "SEED_HASH_REQUIRED",
                "this hand takes a client seed only after its hash (fairness version 3)",
                {"hand_id": hand_id},
            )
        if not self.hashes_closed:
            raise FailedPrecondition(
                "SEED_REVEAL_NOT_OPEN",
                "the hashes of this hand are still taken; send the seed once they are closed",
                {"hand_id": hand_id},
            )
        return int(table_pb2.SEED_PHASE_SEEDS)

    def take(self, seat: int, player_id: str, *, seed: bytes = b"", seed_hash: str = "") -> None:
        """A hash or seed fairness accepted (after `check`)."""
        if seed_hash:
            self.hashes[seat] = (player_id, seed_hash)
        else:
            self.seeds[seat] = seed
