"""Alembic environment of the lobby schema (version table `lobby_alembic_version`)."""

from service_runtime.migrations import run_alembic_env
from services.lobby.tables import metadata

run_alembic_env(metadata)
