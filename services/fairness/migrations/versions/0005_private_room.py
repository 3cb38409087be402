"""Each hand records whether it was dealt in a private room (issue 23, item 4): such a hand exists
only for its participants and admins, as a participants-only hand does.

Hands committed before this revision were not told their room's visibility: they keep reading as
they did (public), as a room that turns private keeps its earlier hands.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("fairness_hands") as batch:
        batch.add_column(sa.Column("private_room", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # Older code would show a private room's hands to anyone: refuse rather than publish them.
    bind = op.get_bind()
    if bind.execute(sa.text("SELECT 1 FROM fairness_hands WHERE private_room LIMIT 1")).first():
        raise RuntimeError("fairness hands of private rooms exist; downgrading would show them to anyone")
    with op.batch_alter_table("fairness_hands") as batch:
        batch.drop_column("private_room")
