"""Each hand records the CommitHand request that made it and the SealHand request that sealed it
(their SHA-256, `request_binding.py`), so a retry under the same key with any field changed is a
conflict (issue 41): a seal retried with other participants no longer adds readers to the hand.

Hands before this revision have neither: a retry of theirs is taken when it would change nothing
(the checks they had, without the seal that added participants).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("fairness_hands") as batch:
        batch.add_column(sa.Column("commit_request_sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("seal_request_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("fairness_hands") as batch:
        batch.drop_column("seal_request_sha256")
        batch.drop_column("commit_request_sha256")
