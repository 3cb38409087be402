"""Alembic environment of the history schema (version table `history_alembic_version`)."""

from service_runtime.migrations import run_alembic_env
from services.history.tables import metadata

run_alembic_env(metadata)
