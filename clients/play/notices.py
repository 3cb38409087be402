"""The table's notices in the chosen language. The table sends each with a stable code and a line of
English (services/table: `hand h1 started`, `posts small blind 5`); the figures and names are read
from that line and said with the catalogue's words. A line that does not read as its code's known
form is shown as it came (a notice from a newer table release is still shown, in English)."""

from __future__ import annotations

import re

from clients.play.texts import t
from clients.play.words import words

# code: the forms of its line, each (pattern, catalogue key); the pattern's named groups are the
# entry's parameters.
_NOTICES: dict[str, tuple[tuple[str, str], ...]] = {
    "TABLE_OPEN": ((r"the table is open", "notice.table_open"),),
    "HAND_STARTED": ((r"hand (?P<hand>\S+) started", "notice.hand_started"),),
    "HAND_CONTINUED": ((r"hand (?P<hand>\S+) goes on where it was", "notice.hand_continued"),),
    "HAND_COMMITTED": ((r"next hand (?P<hand>\S+) committed", "notice.hand_committed"),),
    "SEED_HASHES_CLOSED": (
        (
            r"client-seed hashes of hand (?P<hand>\S+) closed \(seats: (?P<seats>[^)]*)\); send your seeds",
            "notice.seed_hashes_closed",
        ),
    ),
    "TABLE_MOVING": ((r"the table moves to another server; your seat is kept", "notice.table_moving"),),
    "TABLE_PAUSED": ((r"waiting for the cashier to settle the hand", "notice.table_paused"),),
    "HAND_SETTLED": ((r"hand (?P<hand>\S+) settled", "notice.hand_settled"),),
    "BLIND_POSTED": (
        (
            r"posts (?P<post>small blind|big blind|extra big blind|dead small blind) (?P<amount>\d+)",
            "notice.blind_posted",
        ),
    ),
    "UNCALLED_BET_RETURNED": ((r"(?P<amount>\d+) returned", "notice.uncalled_returned"),),
    "CARDS_MUCKED": ((r"mucked", "notice.mucked"),),
    "HAND_ENDED": ((r"hand ended, rake (?P<rake>\d+)", "notice.hand_ended"),),
    "PLAYER_SAT_DOWN": ((r"(?P<player>\S+) sat at seat (?P<seat>\d+)", "notice.sat_down"),),
    "PLAYER_LEFT": ((r"(?P<player>\S+) left seat (?P<seat>\d+)", "notice.left"),),
    "PLAYER_SAT_IN": ((r"(?P<player>\S+)", "notice.sat_in"),),
    "PLAYER_SAT_OUT": (
        (r"(?P<player>\S+) timed out (?P<hands>\d+) hands in a row", "notice.timed_out"),
        (r"(?P<player>\S+)", "notice.sat_out"),
    ),
    "PLAYER_RECONNECTED": ((r"(?P<player>\S+) is back", "notice.back"),),
    "PLAYER_DISCONNECTED": (
        (r"(?P<player>\S+) is away; the seat is kept (?P<seconds>\S+) s", "notice.away"),
    ),
    "SEAT_RESERVE_EXPIRED": ((r"(?P<player>\S+) is removed from the table", "notice.removed"),),
    "SIT_OUT_EXPIRED": ((r"(?P<player>\S+) is removed from the table", "notice.removed"),),
    "ROUND_STARTED": ((r"round (?P<round>\S+) dealt", "notice.round_started"),),
    "ROUND_RESUMED": ((r"round (?P<round>\S+) resumed", "notice.round_resumed"),),
    "ROUND_SETTLED": ((r"round (?P<round>\S+) settled", "notice.round_settled"),),
    "ROUND_COMMITTED": ((r"next round (?P<round>\S+) committed", "notice.round_committed"),),
    "HOUSE_DECISION": ((r"box (?P<box>\d+): (?P<decision>[A-Z_]+)", "notice.house_decision"),),
}
_COMPILED = {
    code: tuple((re.compile(pattern), key) for pattern, key in forms) for code, forms in _NOTICES.items()
}


def notice_text(code: str, text: str) -> str:
    """A notice's line in the chosen language, or as it came when its form is not known."""
    said = known_notice_text(code, text)
    return text if said is None else said


def known_notice_text(code: str, text: str, player: str | None = None) -> str | None:
    """A notice's line in the chosen language, or None when its form is not known. `player`, when
    given, names the player the line is about (the line's own first word stands for them)."""
    for pattern, key in _COMPILED.get(code, ()):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        params = match.groupdict()
        if player is not None and "player" in params:
            params["player"] = player
        if "post" in params:
            params["post"] = t(f"notice.post_{params['post'].replace(' ', '_')}")
        if "decision" in params:
            params["decision"] = words(params["decision"])
        return t(key, **params)
    return None
