"""The table of which identity may call which RPC, what each may read there, and the shares of a
server one identity may hold, generated from the services' access policies and settings.

`python -m services.access_table` prints it as Markdown; `docs/access.md` holds the output and a test
keeps the two equal, so the documented table is always the one the code enforces.
"""

from __future__ import annotations

import dataclasses
import importlib

from service_runtime.access import AccessPolicy, describe
from service_runtime.service_settings import ServiceSettings
from services.table.settings import TableSettings

SERVICES = ("lobby", "table", "cashier", "fairness", "history", "gateway")

HEADER = """# Who may call what

Generated from the access policies in `services/<name>/assembly.py` and the settings' defaults by
`python -m services.access_table`; `tests/security/test_access_table.py` fails when this file and
the code disagree.

Identities: `player` and the staff's jobs are roles of a person's token; `service:<name>` is a
service token whose subject names the calling service (`payments` is the payments gateway). No rule
grants "any service". Each staff role grants only its job: `support` (read players, their
statements and hands; chat moderation; notes), `risk` (fair-play cases and holds), `finance` (the
ledger, the house bank, the conservation audit), `operations` (rooms, tables, maintenance, invite
codes), `admin` (the staff and the audit trail). A person may hold several; where a handler widens a
read for staff ("staff: every room"), any staff role counts. `tests/security/test_role_matrix.py`
calls every RPC as each role and each service and holds the answers to this table. Health (`grpc.health.v1.Health/Check`, `Watch`, `List`) and server reflection need no
token. The third column says what a caller reads there, where the handler narrows the grant (the
tests in `tests/security/test_least_privilege.py` call each as another player).
"""

# What the handler lets each caller read or touch, where that is narrower than the grant.
READS: dict[tuple[str, str], str] = {
    ("lobby", "ListRooms"): "rooms the caller may see: a private room only for its allow-list, a disabled "
    "room only for staff (`include_disabled`)",
    ("lobby", "GetRoom"): "the same visibility (`ROOM_NOT_FOUND` for a room the caller may not see)",
    ("lobby", "ListTables"): "the same visibility; live figures carry no card",
    ("lobby", "JoinTable"): "the same visibility; the seat checks unless spectating",
    ("lobby", "GetMaintenance"): "the lobby's switches; a room's only of a room the caller may see "
    "(`ROOM_NOT_FOUND` otherwise), and `all_rooms` only those; staff and services: every room",
    ("lobby", "AuthorizeView"): "the visibility rule for a named player, for a shard about to show a table",
    ("lobby", "AuthorizeSeat"): "the seat checks for a named player, and that player's display name and "
    "photo, unless they turned showing it off (a profile made first if they have none)",
    ("lobby", "GetMyProfile"): "the caller's own profile (made on the first call: never another player's)",
    ("lobby", "SetDisplayName"): "the caller's own profile",
    ("lobby", "SetShowAvatar"): "the caller's own profile",
    (
        "lobby",
        "RecordSignInPhoto",
    ): "the caller's own profile; the gateway's Telegram sign-in calls it as the "
    "player, and does not forward it from browsers",
    ("table", "OpenTable"): "(ShardDirectoryService) opens the table JoinTable routes a player to",
    ("table", "ListShardTables"): "(ShardDirectoryService) live figures of the shard's tables, no card",
    ("table", "GetTableSnapshot"): "a seated player (a player with a round, at a house table): their own "
    "view; any other player: the waiting view, only of a room they may see (`TABLE_NOT_FOUND` "
    "otherwise); staff and services: every table",
    ("table", "WatchTable"): "the same as GetTableSnapshot, as a stream; a house table: the caller's own "
    "rounds only",
    ("table", "SpectateTable"): "the public view, late, of a room the caller may see; no hidden card",
    ("table", "Act"): "the caller's own seat",
    ("table", "SitOut"): "the caller's own seat",
    ("table", "SitIn"): "the caller's own seat",
    ("table", "LeaveTable"): "the caller's own seat",
    ("table", "MakeHouseDecision"): "the caller's own round",
    ("table", "PlaceHouseBets"): "the caller's own wallet, after the lobby's seat check",
    ("table", "SitDown"): "the caller's own wallet, after the lobby's seat check",
    ("cashier", "GetBalances"): "a player: their own wallets only (`NOT_YOUR_RESOURCE`)",
    ("cashier", "GetStatement"): "a player: their own statement only (`NOT_YOUR_RESOURCE`)",
    ("cashier", "GetSelfLimits"): "a player: their own limits, reminder and break only (`NOT_YOUR_RESOURCE`)",
    ("cashier", "SetSelfLimit"): "the caller's own limits (the player is the token's, never a field)",
    ("cashier", "SetSessionReminder"): "the caller's own reminder",
    ("cashier", "StartBreak"): "the caller's own break",
    ("fairness", "GetCommitment"): "the public record of any hand (commitments, state, seats and client "
    "seeds; a player id only the caller's own); a house-game round or a private room's hand only for "
    "its players (`HAND_NOT_FOUND` otherwise); staff: every hand",
    ("fairness", "ListTableCommitments"): "the table's chain links; the hand id only of hands the caller "
    "played; other players' house-game rounds and private rooms' hands left out; staff: every hand "
    "with its id",
    ("fairness", "GetReveal"): "an ended hand (`HAND_NOT_FINISHED` before). Versions 1 and 2: the seed "
    "and deck to the hand's participants only (`NOT_YOUR_RESOURCE`); a participant can compute every "
    "card of it, folded ones included (docs/fairness.md). Version 3: the seed and the openings of the "
    "public positions, with the caller's own if they played it. A house-game round or a private "
    "room's hand only for its players (`HAND_NOT_FOUND`); staff: every ended hand, all 52 openings",
    ("fairness", "VerifyHand"): "by hand id: the same as GetReveal (a verdict on a dealt card would "
    "tell a stranger the card); from published values: nothing stored, only what the caller sends",
    ("history", "ListMyHands"): "the caller's own hands",
    (
        "history",
        "GetHand",
    ): "hands the caller played, in their view (`HAND_NOT_FOUND` otherwise); support and risk: all",
    ("history", "ListTableHands"): "hands of the table the caller played; support and risk: all",
    ("history", "ExportHands"): "hands the caller may see, in their view",
    ("history", "ListBalanceChanges"): "the caller's own balance changes",
}

QUOTAS = """## Shares of a server per identity

Every service sheds what is beyond these bounds with RESOURCE_EXHAUSTED and a reason (each in the
error catalogue, `protos/poker/common/v1/common.proto`), so one account cannot take a server from
everyone else (`libs/service_runtime/interceptors.py`, `services/table/streams/stream_budget.py`). Keys are
`POKER_<SERVICE>_<NAME>`; the figures are the defaults.

| bound | default | beyond it |
|---|---|---|
"""

# The reasons any RPC of any service may answer besides its own (documented once, here).
EVERY_RPC = """Any RPC above may also answer: UNAUTHENTICATED `TOKEN_MISSING`, `TOKEN_MALFORMED`,
`TOKEN_INVALID_SIGNATURE`, `TOKEN_EXPIRED`, `TOKEN_KEY_SCOPE` (a key that signs player tokens only
signed more); PERMISSION_DENIED `ROLE_REQUIRED`; INVALID_ARGUMENT
`REQUEST_MALFORMED` (bytes that are no valid message; health and reflection too); RESOURCE_EXHAUSTED
`SERVER_OVERLOADED` and `CALLER_QUOTA_EXCEEDED` (the bounds above). SpectateTable and WatchTable also
`SPECTATOR_QUOTA_EXCEEDED` and `VIEWERS_FULL`.
"""


GATEWAY_NOTE = """The gateway serves browsers over Connect (HTTP): its own sign-in service, and the player's share
of the others, forwarded with the player's own token (so the service behind checks the player again).
It admits player tokens only; "nobody" marks a method it never forwards."""


def policy_of(service: str) -> AccessPolicy:
    """The service's policy, with the other services its process serves (a table shard's directory)."""
    module = importlib.import_module(f"services.{service}.assembly")
    policy: AccessPolicy = module.ACCESS
    directory: AccessPolicy | None = getattr(module, "DIRECTORY_ACCESS", None)
    return policy if directory is None else policy.merged(directory)


def _default(settings: type[ServiceSettings], name: str) -> object:
    field = next(f for f in dataclasses.fields(settings) if f.name == name)
    return field.default


def _quota_rows() -> list[str]:
    def row(name: str, settings: type[ServiceSettings], what: str, beyond: str) -> str:
        value = _default(settings, name)
        prefix = "POKER_TABLE_" if settings is TableSettings else "POKER_<SERVICE>_"
        return f"| {what} (`{prefix}{name.upper()}`) | {value:,} | {beyond} |"

    return [
        row(
            "max_concurrent_rpcs",
            ServiceSettings,
            "unary calls a server serves at once",
            "`SERVER_OVERLOADED`",
        ),
        row(
            "max_concurrent_streams",
            ServiceSettings,
            "streams a server serves at once",
            "`SERVER_OVERLOADED`",
        ),
        row(
            "player_concurrent_calls",
            ServiceSettings,
            "unary calls one player (token subject) has served at once; staff and services: the totals only",
            "`CALLER_QUOTA_EXCEEDED`",
        ),
        row(
            "player_concurrent_streams",
            ServiceSettings,
            "streams one player holds open at once, across the server",
            "`CALLER_QUOTA_EXCEEDED`",
        ),
        row(
            "seated_stream_reserve",
            TableSettings,
            "a table shard's streams kept for seated players' own WatchTable streams: callers without a "
            "seat (SpectateTable, WatchTable unseated) share only the rest",
            "`VIEWERS_FULL` for callers without a seat",
        ),
        row(
            "spectator_streams_per_account",
            TableSettings,
            "streams without a seat one account holds at one table",
            "`SPECTATOR_QUOTA_EXCEEDED`",
        ),
        row("max_spectators", TableSettings, "spectator streams one table serves", "`SPECTATORS_FULL`"),
        row(
            "max_streams_per_player",
            TableSettings,
            "WatchTable streams one player holds at one table",
            "`WATCH_STREAMS_EXCEEDED`",
        ),
        row("chat_burst", TableSettings, "chat messages one player sends at once", "`CHAT_RATE_LIMITED`"),
    ]


def _name(method: str, policy: AccessPolicy) -> str:
    """`Method`, or `Service/Method` for a policy over several services (the gateway's)."""
    services = {m.rsplit("/", 1)[0] for m in policy.roles}
    service, name = method.rsplit("/", 1)
    return f"{service.rsplit('.', 1)[1]}/{name}" if len(services) > 1 else name


def render() -> str:
    lines = [HEADER]
    for service in SERVICES:
        policy = policy_of(service)
        lines += [f"## {service}", "", "| RPC | who may call it | what they read there |", "|---|---|---|"]
        if service == "gateway":
            lines[-2:-2] = [GATEWAY_NOTE, ""]
        for method in sorted(policy.roles):
            reads = READS.get((service, method.rsplit("/", 1)[1]), "")
            lines.append(f"| `{_name(method, policy)}` | {describe(policy.roles[method])} | {reads} |")
        for method in sorted(policy.public - set(policy.roles)):
            if not method.startswith("/grpc."):
                lines.append(f"| `{_name(method, policy)}` | anyone, without a token | |")
        lines.append("")
    lines += [QUOTAS.rstrip("\n"), *_quota_rows(), "", EVERY_RPC]
    return "\n".join(lines)


def main() -> None:
    print(render(), end="")


if __name__ == "__main__":
    main()
