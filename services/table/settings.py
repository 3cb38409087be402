"""Settings of the table service (POKER_TABLE_* environment keys)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from poker_engine.config import MAX_SEATS
from service_runtime.service_settings import ServiceSettings
from service_runtime.settings import positive, setting


def _not_negative(value: float) -> str | None:
    return None if value >= 0 else "must not be negative"


# Betting rounds of a Hold'em hand (preflop, flop, turn, river): the drain's bound gives every seat
# its full action time in each, plus its whole time bank once.
BETTING_ROUNDS = 4


@dataclass(frozen=True, kw_only=True)
class TableSettings(ServiceSettings):
    """Where the table's dependencies are, and the clocks of a table (rules 8 and 9)."""

    ENV_PREFIX: ClassVar[str] = "POKER_TABLE_"
    SERVICE: ClassVar[str] = "table"
    DEFAULT_PORT: ClassVar[int] = 50052
    # Hands live in Redis (or a file of the shard without it), money in the cashier, records in history.
    STORES_DATA: ClassVar[bool] = False

    lobby_address: str = setting("127.0.0.1:50051", help="host:port of the lobby (room catalogue)")
    cashier_address: str = setting("127.0.0.1:50053", help="host:port of the cashier (seat sessions)")
    fairness_address: str = setting("127.0.0.1:50054", help="host:port of fairness (decks)")
    history_address: str = setting("127.0.0.1:50055", help="host:port of history (hand records)")
    shard_id: str = setting(
        "table-0", help="this shard's id in the registry (stable across restarts, e.g. the pod name)"
    )
    advertise_address: str = setting(
        "", help="host:port the lobby routes players to; empty means host:port of this process"
    )
    registry_prefix: str = setting("poker:", help="key prefix of the shard registry, the same as the lobby's")
    lease_seconds: float = setting(3.0, help="shard lease in the registry (Redis only)", check=positive)
    action_seconds: float = setting(
        20.0, help="time per action before the time bank runs (rules 9)", check=positive
    )
    time_bank_seconds: float = setting(
        15.0, help="personal time bank of a seat, kept across hands (rules 9)", check=_not_negative
    )
    time_bank_keep_seconds: float = setting(
        1800.0,
        help="a player who leaves and sits down again at the table within this time gets back what was "
        "left of their time bank, not a full one (rules 9)",
        check=positive,
    )
    handover_grace_seconds: float = setting(
        5.0,
        help="a hand another shard left running goes on here after a takeover; the player to act gets "
        "what was left of their turn plus this long (their client re-routes meanwhile)",
        check=_not_negative,
    )
    countdown_seconds: float = setting(
        3.0, help="pause between hands; players may add client seeds until it ends", check=_not_negative
    )
    showdown_seconds: float = setting(
        3.0,
        help="a hand that ended with cards shown stays on the table this long (the board, the cards "
        "shown, each pot's award) before the next countdown; a hand won by a fold is not held",
        check=_not_negative,
    )
    seed_reveal_seconds: float = setting(
        1.0,
        help="fairness version 3: the last part of the countdown, after the set of client-seed hashes "
        "closed, in which those players send their seeds (at most half the countdown; the hashes are "
        "taken in the rest)",
        check=_not_negative,
    )
    full_reveal_rooms: tuple[str, ...] = setting(
        (),
        help="room ids (comma-separated) whose hands are dealt under fairness version 2, the whole seed "
        "revealed after the hand (the literal reading of rules 15); every other room deals under "
        "version 3, each player opening only the cards they saw (docs/fairness.md)",
    )
    command_queue_size: int = setting(256, help="commands a table holds before callers wait", check=positive)
    watch_queue_size: int = setting(
        64, help="updates a slow watcher may fall behind before it gets a fresh snapshot", check=positive
    )
    retry_initial_seconds: float = setting(
        0.2, help="first backoff when the cashier or fairness is down", check=positive
    )
    retry_max_seconds: float = setting(5.0, help="longest backoff between retries", check=positive)
    history_queue_size: int = setting(
        10_000, help="hand records kept while history is down (oldest dropped beyond)", check=positive
    )
    maintenance_poll_seconds: float = setting(
        1.0, help="how often the lobby's maintenance switches are read", check=positive
    )
    close_empty_table_seconds: float = setting(
        60.0, help="an extra table of a room (not its first) closes after this long empty", check=positive
    )
    room_refresh_seconds: float = setting(
        30.0, help="how often a table re-reads its room from the lobby (between hands)", check=positive
    )
    seat_reserve_seconds: float = setting(
        90.0,
        help="a disconnected player's seat and stack are kept this long (rules 13); then removed and cashed out",
        check=positive,
    )
    sit_out_seconds: float = setting(
        600.0, help="a player sitting out longer than this is removed and cashed out", check=positive
    )
    timeout_hands_to_sit_out: int = setting(
        3,
        help="hands in a row lost to timeouts that put a player in sit-out at the next boundary",
        check=positive,
    )
    spectator_delay_seconds: float = setting(
        20.0, help="how late spectators see the public view (rules 14)", check=_not_negative
    )
    max_spectators: int = setting(200, help="spectators one table serves at once", check=positive)
    view_recheck_seconds: float = setting(
        5.0,
        help="how often a reader's open stream without a seat is checked against the room's visibility"
        " (a room turned private ends a stranger's stream)",
        check=positive,
    )
    max_streams_per_player: int = setting(
        4, help="WatchTable streams one player may hold open at one table", check=positive
    )
    seated_stream_reserve: int = setting(
        200,
        help="streams of the server (of POKER_TABLE_MAX_CONCURRENT_STREAMS) kept for seated players' own "
        "WatchTable streams; callers without a seat share the rest",
        check=positive,
    )
    spectator_streams_per_account: int = setting(
        2,
        help="streams without a seat (SpectateTable, WatchTable unseated) one account holds at one table",
        check=positive,
    )
    spectators_need_access: bool = setting(
        False, help="true: spectating a room checks the allow-lists as a seat does (closed access)"
    )
    chat_burst: int = setting(
        5, help="chat messages a player may send at once (rate limit burst)", check=positive
    )
    chat_per_minute: float = setting(
        20.0, help="sustained chat messages per minute per player (rate limit refill)", check=positive
    )
    drain_seconds: float = setting(
        960.0,
        help="on SIGTERM the shard starts no new hand, plays the running ones out for at most this long, "
        "then hands its rooms to another shard and exits (hands still running then are voided, as on a "
        "takeover); at least a hand in which every seat uses its whole time bank",
        check=positive,
    )
    # House-game tables (issue 16).
    house_decision_seconds: float = setting(
        20.0, help="time for each house-game decision before the rules' default is taken", check=positive
    )
    house_keep_finished_rounds: int = setting(
        1_000,
        help="finished house-game rounds a table remembers (a retried request's answer, a player's last"
        " round in the view); older ones are forgotten as rounds open, so a table's memory stays bounded",
        check=positive,
    )
    house_bank_minimum: int = setting(
        0, help="house bank balance below which no new house-game round starts (HOUSE_BANK_PAUSED)"
    )
    house_journal: str = setting(
        "",
        help="file of the house-game round journal without Redis (with Redis it is shared in Redis);"
        " empty means <data_dir>/house-rounds-<shard_id>.jsonl",
    )

    def longest_hand_seconds(self) -> float:
        """A hand at a full table in which every seat takes its whole action time in every betting
        round and its whole time bank once, after the countdown; a house round's decisions likewise."""
        cash = (
            self.showdown_seconds
            + self.countdown_seconds
            + MAX_SEATS * (BETTING_ROUNDS * self.action_seconds + self.time_bank_seconds)
        )
        return max(cash, 2 * self.house_decision_seconds)

    def validate(self) -> list[str]:
        problems = super().validate()
        if self.drain_seconds < self.longest_hand_seconds():
            problems.append(
                f"{self.ENV_PREFIX}DRAIN_SECONDS: must be at least {self.longest_hand_seconds():g} (a hand "
                f"in which every seat uses its whole action time and time bank: {self.ENV_PREFIX}"
                "COUNTDOWN_SECONDS, ACTION_SECONDS, TIME_BANK_SECONDS)"
            )
        if self.seated_stream_reserve >= self.max_concurrent_streams:
            problems.append(
                f"{self.ENV_PREFIX}SEATED_STREAM_RESERVE: must be below {self.ENV_PREFIX}MAX_CONCURRENT_STREAMS"
            )
        return problems
