"""The fairness schema (SQLAlchemy Core): one row per hand, one per client seed. Migrations mirror it."""

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

hands = sa.Table(
    "fairness_hands",
    metadata,
    sa.Column("hand_id", sa.String(36), primary_key=True),
    # The caller's idempotency key: a retry of CommitHand finds the hand it already created.
    sa.Column("request_id", sa.String(128), nullable=False, unique=True),
    sa.Column("table_id", sa.String(128), nullable=False),
    # Position in the table's chain; unique per table so two concurrent commits cannot share a link.
    sa.Column("sequence", sa.BigInteger, nullable=False),
    sa.Column("commitment", sa.String(64), nullable=False),
    # SHA-256 of the seed, published before the deal (the whole commitment of version 1 hands).
    sa.Column("server_seed_hash", sa.String(64), nullable=False),
    sa.Column("previous_commitment", sa.String(64), nullable=False),
    sa.Column("nonce", sa.LargeBinary(16), nullable=False),
    sa.Column("shuffle_version", sa.Integer, nullable=False),
    sa.Column("deal_now", sa.Boolean, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    # AES-256-GCM of the seed under the key `seed_key_id`, bound to the hand id (see seed_vault.py).
    sa.Column("seed_key_id", sa.String(64), nullable=False),
    sa.Column("seed_ciphertext", sa.LargeBinary, nullable=False),
    # The seed in clear, set only when the hand ended and the seed became public.
    sa.Column("revealed_seed", sa.LargeBinary(32), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("sealed_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("revealed_at", sa.DateTime(timezone=True), nullable=True),
    # The players dealt in, each between two newlines ("\nann\nbob\n"; "" for none), so one LIKE
    # finds a player's hands; player ids are printable, so a newline cannot be part of one.
    sa.Column("participants", sa.Text, nullable=False, server_default=""),
    # A house-game round: listed and shown to its participants and admins only.
    sa.Column("participants_only", sa.Boolean, nullable=False, server_default=sa.false()),
    # A private room's hand (the table says so at the commitment): likewise for its participants and
    # admins only.
    sa.Column("private_room", sa.Boolean, nullable=False, server_default=sa.false()),
    # Version 3: the Merkle root over the secret deck's per-position commitments ("" before).
    sa.Column("deck_root", sa.String(64), nullable=False, server_default=""),
    # Version 3: AES-256-GCM of the 32-byte deck secret (the committed cards and their salts) under
    # `seed_key_id`; never revealed, since it gives every card of the hand.
    sa.Column("deck_secret_ciphertext", sa.LargeBinary, nullable=True),
    # Version 3, once ended: the deal positions that were public and those each participant saw
    # (JSON, see `visibility.py`); "" when none were reported.
    sa.Column("visibility", sa.Text, nullable=False, server_default=""),
    # SHA-256 of the CommitHand request that made the hand, and of the SealHand request that sealed
    # it (a hand dealt at once: of a seal naming nothing), as `request_binding.py` reads them: a
    # retry with any field changed is a conflict. NULL for hands before migration 0006.
    sa.Column("commit_request_sha256", sa.String(64), nullable=True),
    sa.Column("seal_request_sha256", sa.String(64), nullable=True),
    sa.UniqueConstraint("table_id", "sequence"),
    sa.CheckConstraint("state IN ('committed', 'sealed', 'finished', 'voided')", name="state_known"),
    sa.CheckConstraint("sequence >= 1", name="sequence_positive"),
    sa.CheckConstraint(
        "(revealed_seed IS NULL) = (state IN ('committed', 'sealed'))", name="seed_revealed_only_when_ended"
    ),
)

client_seeds = sa.Table(
    "fairness_client_seeds",
    metadata,
    sa.Column("hand_id", sa.String(36), sa.ForeignKey("fairness_hands.hand_id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("player_id", sa.String(128), nullable=False),
    # Empty (version 3) while only the seed's hash is recorded, or for a seat left out at the seal.
    sa.Column("client_seed", sa.LargeBinary(64), nullable=False),
    # Version 3: the client-seed hash of docs/fairness.md ("" for versions 1 and 2).
    sa.Column("client_seed_hash", sa.String(64), nullable=False, server_default=""),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("seat >= 0 AND seat <= 1023", name="seat_in_range"),
)
