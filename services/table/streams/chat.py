"""Table chat and stickers (rules 14): what a message may be, how often a player may post, who is muted.

Pure: times are passed in (seconds on any one clock), nothing here does I/O or knows grpc. Each
refusal has its own reason (docs/table.md "Chat and stickers"):

* CHAT_EMPTY (no text, or nothing a reader would see: only spaces, combining marks with nothing to
  sit on and the letters drawn as nothing in `_BLANK_LETTERS`), CHAT_TOO_LONG (more than `MAX_TEXT_LENGTH` characters), CHAT_CONTROL_CHARACTERS
  (any character of the Unicode categories in `_REFUSED_CATEGORIES`: C0/C1 controls and line
  breaks, invisible format characters such as the bidirectional embeddings, overrides and isolates
  U+202A-U+202E and U+2066-U+2069, surrogates, private-use and unassigned code points; only the two
  join controls of emoji sequences and Persian or Indic spelling, U+200C and U+200D, pass) and
  CHAT_STACKED_MARKS (more than `MAX_MARKS_PER_CHARACTER` combining marks on one character) and
  STICKER_UNKNOWN (not in `STICKERS`): INVALID_ARGUMENT;
* CHAT_RATE_LIMITED: RESOURCE_EXHAUSTED, a token bucket per player (a burst, refilled at a sustained
  rate per minute), shared by every table of the shard;
* CHAT_MUTED: PERMISSION_DENIED, an admin's mute at one table or everywhere, until a time.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from service_runtime.errors import AlreadyExists, InvalidArgument, PermissionDenied, ResourceExhausted

MAX_TEXT_LENGTH = 200
MUTE_REQUEST_MEMORY = 10_000

# The fixed sticker catalogue; clients ship the pictures, the table relays the id.
STICKERS: frozenset[str] = frozenset(
    {
        "thumbs-up",
        "thumbs-down",
        "clap",
        "laugh",
        "cry",
        "angry",
        "cool",
        "think",
        "wow",
        "gg",
        "nice-hand",
        "good-luck",
        "thanks",
        "bluff",
        "fire",
        "rocket",
    }
)

EVERYWHERE = ""  # the table id of a mute that applies at every table

# Characters that are not shown as themselves but change how the text around them is shown (or are
# not characters yet): controls, format characters, line and paragraph separators, surrogates,
# private use and unassigned code points. Decided by category, so every bidirectional control is
# covered, today's and tomorrow's.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Unicode's Join_Control property: format characters that emoji sequences and scripts need.
_JOIN_CONTROLS = frozenset({"\u200c", "\u200d"})


# Combining marks one character may carry: scripts need a few (Vietnamese two, Hebrew with points and
# accents four); text that stacks dozens ("zalgo") spills over the chat lines around it.
MAX_MARKS_PER_CHARACTER = 6

# Letters and symbols that fonts draw as nothing (Hangul fillers, the blank Braille pattern, Khmer's
# inherent vowels): a message of these alone is a blank line.
_BLANK_LETTERS = frozenset({"\u115f", "\u1160", "\u17b4", "\u17b5", "\u2800", "\u3164", "\uffa0"})


def _seen(char: str) -> bool:
    """A character a reader sees: not a space, not a combining mark, not a letter drawn as nothing."""
    return not char.isspace() and unicodedata.category(char)[0] != "M" and char not in _BLANK_LETTERS


def _shown_as_itself(char: str) -> bool:
    return char in _JOIN_CONTROLS or unicodedata.category(char) not in _REFUSED_CATEGORIES


def check_text(text: str) -> str:
    if not text:
        raise InvalidArgument("CHAT_EMPTY", "a message needs some text", {"field": "text"})
    if len(text) > MAX_TEXT_LENGTH:
        raise InvalidArgument(
            "CHAT_TOO_LONG", f"a message is at most {MAX_TEXT_LENGTH} characters", {"field": "text"}
        )
    if not all(_shown_as_itself(c) for c in text):
        raise InvalidArgument(
            "CHAT_CONTROL_CHARACTERS", "a message may not hold control characters", {"field": "text"}
        )
    if not any(_seen(c) for c in text):
        raise InvalidArgument("CHAT_EMPTY", "a message needs some text", {"field": "text"})
    if _most_marks_on_one_character(text) > MAX_MARKS_PER_CHARACTER:
        raise InvalidArgument(
            "CHAT_STACKED_MARKS",
            f"at most {MAX_MARKS_PER_CHARACTER} combining marks on one character",
            {"field": "text"},
        )
    return text


def _most_marks_on_one_character(text: str) -> int:
    """The longest run of combining marks (Unicode categories M*) in the text."""
    most = run = 0
    for char in text:
        run = run + 1 if unicodedata.category(char)[0] == "M" else 0
        most = max(most, run)
    return most


def check_sticker(sticker_id: str) -> str:
    if sticker_id not in STICKERS:
        raise InvalidArgument("STICKER_UNKNOWN", "no such sticker in the catalogue", {"field": "sticker_id"})
    return sticker_id


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class ChatGuard:
    """Rate limits and mutes of the players of one shard (every table of it)."""

    def __init__(self, *, burst: int = 5, per_minute: float = 20.0, max_players: int = 100_000) -> None:
        self.burst = burst
        self.per_second = per_minute / 60.0
        self._max_players = max_players
        self._buckets: dict[str, _Bucket] = {}
        self._mutes: dict[tuple[str, str], float] = {}  # (player, table id or EVERYWHERE) -> until
        self._mute_requests: dict[tuple[str, str], tuple[tuple[str, str, float], float | None]] = {}

    # ------------------------------------------------------------------ mutes

    def mute(self, player_id: str, table_id: str, until: float) -> None:
        """Mute `player_id` at `table_id` (EVERYWHERE for all tables) until `until`; a past time unmutes."""
        self._mutes[(player_id, table_id)] = until
        self._forget_expired_mutes(until)

    def mute_once(
        self, key: tuple[str, str], player_id: str, table_id: str, seconds: float, now: float
    ) -> float | None:
        """An admin's mute, idempotent by `key` (admin, request id): a retry returns the first answer,
        the same key with other fields is IDEMPOTENCY_CONFLICT. Returns the end, None when lifted."""
        fields = (player_id, table_id, seconds)
        known = self._mute_requests.get(key)
        if known is not None:
            if known[0] != fields:
                raise AlreadyExists("IDEMPOTENCY_CONFLICT", "the request id was used with other fields")
            return known[1]
        until = now + seconds if seconds > 0 else None
        self.mute(player_id, table_id, until if until is not None else now)
        self._mute_requests[key] = (fields, until)
        while len(self._mute_requests) > MUTE_REQUEST_MEMORY:
            self._mute_requests.pop(next(iter(self._mute_requests)))
        return until

    def muted_until(self, player_id: str, table_id: str, now: float) -> float | None:
        ends = [
            until
            for key in ((player_id, table_id), (player_id, EVERYWHERE))
            if (until := self._mutes.get(key)) is not None and until > now
        ]
        return max(ends) if ends else None

    def _forget_expired_mutes(self, now: float) -> None:
        if len(self._mutes) > self._max_players:
            for key, until in list(self._mutes.items()):
                if until <= now:
                    del self._mutes[key]

    # ------------------------------------------------------------------ posting

    def admit(self, player_id: str, table_id: str, now: float) -> None:
        """Raise the refusal if the player may not post now; else take one token."""
        until = self.muted_until(player_id, table_id, now)
        if until is not None:
            raise PermissionDenied(
                "CHAT_MUTED",
                "an admin muted you in the chat",
                {"muted_for_seconds": str(int(until - now) + 1)},
            )
        bucket = self._buckets.get(player_id)
        if bucket is None:
            if len(self._buckets) >= self._max_players:
                self._buckets = {p: b for p, b in self._buckets.items() if self._level(b, now) < self.burst}
            bucket = self._buckets[player_id] = _Bucket(float(self.burst), now)
        bucket.tokens, bucket.at = self._level(bucket, now), now
        if bucket.tokens < 1.0:
            wait = (1.0 - bucket.tokens) / self.per_second
            raise ResourceExhausted(
                "CHAT_RATE_LIMITED",
                "too many messages; wait a moment",
                {"retry_after_seconds": f"{wait:.1f}"},
            )
        bucket.tokens -= 1.0

    def _level(self, bucket: _Bucket, now: float) -> float:
        return min(float(self.burst), bucket.tokens + max(0.0, now - bucket.at) * self.per_second)
