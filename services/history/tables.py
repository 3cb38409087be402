"""The history schema (SQLAlchemy Core). Migrations mirror it.

One row per hand with the full record (deterministically serialised protobuf, the source of truth
for disputes, rules 17), one row per player of each hand (who may read it, their result and the
client fingerprint, never shown to players), fair-play signals between two players, and the audit
log. Times are microseconds since the epoch (UTC) so both backends compare and index them alike.
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

dumping_signals = sa.Table(
    "history_dumping_signals",
    metadata,
    sa.Column("hand_number", Number, sa.ForeignKey("history_hands.number"), primary_key=True),
    sa.Column("loser_id", sa.String(128), primary_key=True),
    sa.Column("winner_id", sa.String(128), primary_key=True),
    sa.Column("table_id", sa.String(128), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("big_blind", sa.BigInteger, nullable=False),
    sa.Column("pattern", sa.String(32), nullable=False),
    sa.Index(None, "loser_id", "winner_id"),
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
    sa.Index(None, "time_us", "number"),
    sa.Index(None, "kind", "time_us", "number"),
)
