"""The history schema (SQLAlchemy Core). Migrations mirror it.

One row per hand with the full record (deterministically serialised protobuf, the source of truth
for disputes, rules 17), one row per player of each hand (who may read it, their result and the
client fingerprint, never shown to players), fair-play totals of every two players and the cases
they make, and the audit log. Times are microseconds since the epoch (UTC) so both backends compare and index them alike.
Lists are newest first by (time, number): `number` is the insertion order and breaks ties.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
Number = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

hands = sa.Table(
    "history_hands",
    metadata,
    sa.Column("number", Number, primary_key=True, autoincrement=True),
    sa.Column("hand_id", sa.String(128), nullable=False, unique=True),
    sa.Column("table_id", sa.String(128), nullable=False),
    sa.Column("room_id", sa.String(128), nullable=False),
    sa.Column("variant", sa.SmallInteger, nullable=False),
    sa.Column("pool", sa.SmallInteger, nullable=False),
    sa.Column("start_us", sa.BigInteger, nullable=False),
    sa.Column("end_us", sa.BigInteger, nullable=False),
    sa.Column("record", sa.LargeBinary, nullable=False),
    sa.Column("recorded_us", sa.BigInteger, nullable=False),
    # A table's hands, newest first (ListTableHands for admins, the detectors).
    sa.Index(None, "table_id", "end_us", "number"),
)

hand_players = sa.Table(
    "history_hand_players",
    metadata,
    sa.Column("hand_number", Number, sa.ForeignKey("history_hands.number"), primary_key=True),
    sa.Column("seat", sa.SmallInteger, primary_key=True),
    sa.Column("player_id", sa.String(128), nullable=False),
    sa.Column("table_id", sa.String(128), nullable=False),
    sa.Column("end_us", sa.BigInteger, nullable=False),
    sa.Column("net_result", sa.BigInteger, nullable=False),
    # Stored with the seat for the fair-play checks; no player-facing query ever selects it.
    sa.Column("client_fingerprint", sa.String(128), nullable=False, server_default=""),
    # A player's hands by time (ListMyHands) and a player's hands at one table (ListTableHands).
    sa.Index(None, "player_id", "end_us", "hand_number"),
    sa.Index(None, "player_id", "table_id", "end_us", "hand_number"),
)

# The running fair-play totals of every two players who shared a hand, per pool (`cases.PairTotals`:
# `first` < `second`, `*_to_second` is what `first` gave `second`). RecordHand adds each hand's
# evidence in one upsert per pair; the verdicts read the row it returns.
pair_totals = sa.Table(
    "history_pair_totals",
    metadata,
    sa.Column("pool", sa.SmallInteger, primary_key=True),
    sa.Column("first_id", sa.String(128), primary_key=True),
    sa.Column("second_id", sa.String(128), primary_key=True),
    sa.Column("hands", sa.BigInteger, nullable=False),
    sa.Column("chips_to_second", sa.BigInteger, nullable=False),
    sa.Column("chips_to_first", sa.BigInteger, nullable=False),
    sa.Column("chips_cbb_to_second", sa.BigInteger, nullable=False),
    sa.Column("chips_cbb_to_first", sa.BigInteger, nullable=False),
    sa.Column("gift_cbb_to_second", sa.BigInteger, nullable=False),
    sa.Column("gift_cbb_to_first", sa.BigInteger, nullable=False),
    sa.Column("blatant_cbb_to_second", sa.BigInteger, nullable=False),
    sa.Column("blatant_cbb_to_first", sa.BigInteger, nullable=False),
    sa.Column("blatant_hands_to_second", sa.BigInteger, nullable=False),
    sa.Column("blatant_hands_to_first", sa.BigInteger, nullable=False),
    sa.Column("strong_folds_to_second", sa.BigInteger, nullable=False),
    sa.Column("strong_folds_to_first", sa.BigInteger, nullable=False),
    sa.Column("heads_up_streets", sa.BigInteger, nullable=False),
    sa.Column("passive_streets", sa.BigInteger, nullable=False),
    sa.Column("squeezes", sa.BigInteger, nullable=False),
    sa.Column("multiway_hands", sa.BigInteger, nullable=False),
    sa.Column("hands_with_others", sa.BigInteger, nullable=False),
    sa.Column("shared_device_hands", sa.BigInteger, nullable=False),
    sa.Column("shared_network_hands", sa.BigInteger, nullable=False),
    # Soft play in multiway pots and whipsaws (migration 0003; 0 for the hands weighed before it).
    sa.Column("strong_facing_to_second", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_facing_to_first", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_raised_to_second", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_raised_to_first", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_facing_others_to_second", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_facing_others_to_first", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_raised_others_to_second", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("strong_raised_others_to_first", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("whipsaw_chances", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("whipsaws_to_second", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("whipsaws_to_first", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("first_seen_us", sa.BigInteger, nullable=False),
    sa.Column("last_seen_us", sa.BigInteger, nullable=False),
    # A player's pairs where they are `second` (their baseline: the primary key serves `first`).
    sa.Index(None, "pool", "second_id"),
)

# Each player's timed decisions by bucket (`detectors.DECISION_TIME_BOUNDS_MS`), for the automation
# verdict; one upsert per hand for the players who decided in it.
player_timing = sa.Table(
    "history_player_timing",
    metadata,
    sa.Column("player_id", sa.String(128), primary_key=True),
    *(sa.Column(f"bucket_{index}", sa.BigInteger, nullable=False) for index in range(7)),
    sa.Column("last_seen_us", sa.BigInteger, nullable=False),
)

# Fair-play cases for operators (`FairPlayCase`, deterministic protobuf), one per kind, pool and
# pair, updated as the evidence grows; listed newest update first.
cases = sa.Table(
    "history_cases",
    metadata,
    sa.Column("number", Number, primary_key=True, autoincrement=True),
    sa.Column("case_id", sa.String(128), nullable=False, unique=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("updated_us", sa.BigInteger, nullable=False),
    sa.Column("record", sa.LargeBinary, nullable=False),
    sa.Index(None, "updated_us", "number"),
    sa.Index(None, "kind", "updated_us", "number"),
)

audit_events = sa.Table(
    "history_audit_events",
    metadata,
    sa.Column("number", Number, primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.String(128), nullable=False, unique=True),
    sa.Column("time_us", sa.BigInteger, nullable=False),
    sa.Column("kind", sa.String(64), nullable=False),
    # The event as recorded (deterministic protobuf), compared byte for byte on a retry.
    sa.Column("record", sa.LargeBinary, nullable=False),
    # Who recorded it (the record's `actor`), for the trail's search by actor (migration 0006).
    sa.Column("actor", sa.String(160), nullable=False, server_default=""),
    sa.Index(None, "time_us", "number"),
    sa.Index(None, "kind", "time_us", "number"),
    sa.Index(None, "actor", "time_us", "number"),
)

# The players each audit event concerns (the record's `player_ids`), for the trail's search by player.
audit_event_players = sa.Table(
    "history_audit_event_players",
    metadata,
    sa.Column("player_id", sa.String(128), primary_key=True),
    sa.Column("number", Number, sa.ForeignKey("history_audit_events.number"), primary_key=True),
)

# Automatic withdrawal holds of strong chip-dumping cases (docs/integrity.md "Automatic holds"), one
# per case and player: recorded `DUE` in the RecordHand transaction that made the case strong,
# applied at the cashier by the service's background task (`HELD`), lifted by ResolveCase RELEASE
# (`RELEASED`), or refused by the cashier for good (`FAILED`, with the reason in `note`).
auto_holds = sa.Table(
    "history_auto_holds",
    metadata,
    sa.Column("case_id", sa.String(128), primary_key=True),
    sa.Column("player_id", sa.String(128), primary_key=True),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("due_us", sa.BigInteger, nullable=False),
    sa.Column("held_us", sa.BigInteger, nullable=True),
    sa.Column("released_us", sa.BigInteger, nullable=True),
    sa.Column("note", sa.String(256), nullable=False, server_default=""),
    # The holds still to apply, oldest first (the background task), and a player's holds (the release).
    sa.Index(None, "state", "due_us"),
    sa.Index(None, "player_id", "state"),
)

# The operators' ResolveCase decisions: at most one per case, by the admin's request id (the
# idempotency key). `done` is false while a RELEASE still has holds to lift at the cashier.
case_resolutions = sa.Table(
    "history_case_resolutions",
    metadata,
    sa.Column("request_id", sa.String(64), primary_key=True),
    sa.Column("case_id", sa.String(128), nullable=False),
    sa.Column("resolution", sa.String(16), nullable=False),
    sa.Column("reason", sa.String(128), nullable=False),
    sa.Column("actor", sa.String(128), nullable=False),
    sa.Column("resolved_us", sa.BigInteger, nullable=False),
    sa.Column("done", sa.Boolean, nullable=False),
    # At most one decision of each kind per case: a CONFIRM may be followed by a RELEASE (an appeal
    # upheld), never the other way round.
    sa.UniqueConstraint("case_id", "resolution"),
)

# The operators' HoldPlayer / ReleasePlayer requests by request id (the idempotency key), claimed
# before the cashier is asked; `done` once the cashier's change and its audit event are both stored.
# Four-eyes on releasing held chips (issue 38): a release asked by one staff member (ReleasePlayer,
# ResolveCase RELEASE), carried out only once another, of finance, approves it (DecideRelease).
release_requests = sa.Table(
    "history_release_requests",
    metadata,
    sa.Column("request_id", sa.String(64), primary_key=True),
    sa.Column("case_release", sa.Boolean, nullable=False),
    sa.Column("player_id", sa.String(128), nullable=False),
    sa.Column("case_id", sa.String(128), nullable=False),
    sa.Column("reason", sa.String(128), nullable=False),
    # ReleasePlayer's: the HoldPlayer request whose hold it ends (a newer hold is not released by it).
    sa.Column("hold_request_id", sa.String(64), nullable=False, server_default=""),
    sa.Column("asked_by", sa.String(160), nullable=False),
    sa.Column("asked_us", sa.BigInteger, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("decision_id", sa.String(64), nullable=True, unique=True),
    sa.Column("decided_by", sa.String(160), nullable=True),
    sa.Column("decision_reason", sa.String(128), nullable=False, server_default=""),
    sa.Column("decided_us", sa.BigInteger, nullable=True),
    # The approved release is carried out (cashier and audit) after the decision's commit.
    sa.Column("done", sa.Boolean, nullable=False),
    sa.CheckConstraint("decided_by IS NULL OR lower(decided_by) <> lower(asked_by)", name="four_eyes"),
    sa.Index("ix_history_release_requests_state_asked_us", "state", "asked_us"),
)

# The staff directory (issue 38): who may sign in to the back office besides the gateway's Secret
# allow-list, under which name, with which roles; set by staff administrators (SetStaffMember).
staff_members = sa.Table(
    "history_staff_members",
    metadata,
    sa.Column("telegram_id", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("name", sa.String(56), nullable=False),
    # The name without case: no two people share a name however it is written.
    sa.Column("name_key", sa.String(56), nullable=False, unique=True),
    # The staff roles joined by "+" in sorted order (the last ones kept when taken off).
    sa.Column("roles", sa.String(128), nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    sa.Column("updated_by", sa.String(160), nullable=False),
    sa.Column("updated_us", sa.BigInteger, nullable=False),
)

# Each SetStaffMember by its request id (the idempotency key): what it asked and the entry it left.
staff_changes = sa.Table(
    "history_staff_changes",
    metadata,
    sa.Column("request_id", sa.String(64), primary_key=True),
    sa.Column("actor", sa.String(160), nullable=False),
    sa.Column("telegram_id", sa.BigInteger, nullable=False),
    sa.Column("name", sa.String(56), nullable=False),
    sa.Column("asked_roles", sa.String(128), nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    # The entry as this change left it (a retry answers it, whatever changed since).
    sa.Column("roles", sa.String(128), nullable=False),
    sa.Column("applied_us", sa.BigInteger, nullable=False),
)

hold_requests = sa.Table(
    "history_hold_requests",
    metadata,
    sa.Column("request_id", sa.String(64), primary_key=True),
    sa.Column("player_id", sa.String(128), nullable=False),
    sa.Column("held", sa.Boolean, nullable=False),
    sa.Column("reason", sa.String(128), nullable=False),
    sa.Column("case_id", sa.String(128), nullable=False),
    sa.Column("actor", sa.String(128), nullable=False),
    sa.Column("requested_us", sa.BigInteger, nullable=False),
    sa.Column("done", sa.Boolean, nullable=False),
)
