"""The audit trail searchable by actor and by player (issue 38: the staff console searches it).

`history_audit_events` gains the recorder (`actor`, a column beside the record) and
`history_audit_event_players` the players each event concerns; both are filled in from the stored
records of the events already there, so the search finds old events too.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from poker.history.v1 import history_pb2

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

Number = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
BATCH = 500


def upgrade() -> None:
    with op.batch_alter_table("history_audit_events") as batch:
        batch.add_column(sa.Column("actor", sa.String(length=160), server_default="", nullable=False))
    op.create_index(
        op.f("ix_history_audit_events_actor_time_us_number"),
        "history_audit_events",
        ["actor", "time_us", "number"],
    )
    op.create_table(
        "history_audit_event_players",
        sa.Column("player_id", sa.String(length=128), nullable=False),
        sa.Column("number", Number, nullable=False),
        sa.ForeignKeyConstraint(
            ["number"],
            ["history_audit_events.number"],
            name=op.f("fk_history_audit_event_players_number_history_audit_events"),
        ),
        sa.PrimaryKeyConstraint("player_id", "number", name=op.f("pk_history_audit_event_players")),
    )
    events = sa.table(
        "history_audit_events",
        sa.column("number", Number),
        sa.column("record", sa.LargeBinary),
        sa.column("actor", sa.String),
    )
    players = sa.table(
        "history_audit_event_players", sa.column("player_id", sa.String), sa.column("number", Number)
    )
    connection = op.get_bind()
    after = -1
    while True:
        rows = connection.execute(
            sa.select(events.c.number, events.c.record)
            .where(events.c.number > after)
            .order_by(events.c.number)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        for number, record in rows:
            event = history_pb2.AuditEvent.FromString(bytes(record))
            connection.execute(events.update().where(events.c.number == number).values(actor=event.actor))
            for player_id in dict.fromkeys(event.player_ids):
                connection.execute(players.insert().values(player_id=player_id, number=number))
        after = rows[-1][0]


def downgrade() -> None:
    op.drop_table("history_audit_event_players")
    op.drop_index(op.f("ix_history_audit_events_actor_time_us_number"), table_name="history_audit_events")
    with op.batch_alter_table("history_audit_events") as batch:
        batch.drop_column("actor")
