"""A cash table's timings and limits (the table service's settings, services/table/settings.py, give
them): the action clock and time banks, the countdown, retries, queues and streams, seat reserves
and sit-outs, the spectators' delay (docs/table.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Timings:
    action_seconds: float
    time_bank_seconds: float
    countdown_seconds: float
    retry_initial_seconds: float
    retry_max_seconds: float
    command_queue_size: int
    watch_queue_size: int
    enqueue_timeout_seconds: float = 5.0
    room_refresh_seconds: float = 30.0
    seat_reserve_seconds: float = 90.0
    sit_out_seconds: float = 600.0
    timeout_hands_to_sit_out: int = 3
    spectator_delay_seconds: float = 20.0
    max_spectators: int = 200
    max_streams_per_player: int = 4
    spectators_need_access: bool = False
    time_bank_keep_seconds: float = 1800.0
    # Rooms dealt under fairness version 2 (the whole seed revealed); the rest under version 3.
    full_reveal_rooms: frozenset[str] = frozenset()
    # Version 3: the last part of the countdown (at most half of it), after the hash set closed, in
    # which the seats of the set send their seeds; the hashes are taken in the rest.
    seed_reveal_seconds: float = 1.0
    # A hand continued after a takeover (docs/table.md "Takeover"): the player to act gets what was
    # left of their turn plus this much, so the time their client spent re-routing is not theirs to lose.
    handover_grace_seconds: float = 5.0
    # A hand that ended with cards shown stays on the table this long before the next countdown.
    showdown_seconds: float = 0.0
    # A sit-down whose seat session the cashier has not answered for (away, or its reply lost) is
    # answered UNAVAILABLE after this long; the table keeps asking with the same seat and session id.
    seat_answer_seconds: float = 5.0
