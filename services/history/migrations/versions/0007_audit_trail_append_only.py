"""The audit trail is append-only in the database too (issue 38: no staff member edits or deletes it).

No code of the history service updates or deletes an audit event; these triggers refuse it to anyone
with the database's credentials as well (an UPDATE or DELETE of `history_audit_events` or
`history_audit_event_players` raises), as the cashier's `transfers` are (cashier 0001).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TABLES = ("history_audit_events", "history_audit_event_players")


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION history_audit_append_only() RETURNS trigger AS $$
            BEGIN
                RAISE EXCEPTION 'the audit trail is append-only';
            END;
            $$ LANGUAGE plpgsql
            """
        )
        for table in TABLES:
            op.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION history_audit_append_only()"
            )
    else:
        for table in TABLES:
            for action in ("UPDATE", "DELETE"):
                op.execute(
                    f"CREATE TRIGGER {table}_append_only_{action.lower()} BEFORE {action} ON {table} "
                    "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END"
                )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in TABLES:
            op.execute(f"DROP TRIGGER {table}_append_only ON {table}")
        op.execute("DROP FUNCTION history_audit_append_only()")
    else:
        for table in TABLES:
            for action in ("update", "delete"):
                op.execute(f"DROP TRIGGER {table}_append_only_{action}")
