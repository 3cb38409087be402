"""Alembic environment of the cashier schema (version table `cashier_alembic_version`)."""

from service_runtime.migrations import run_alembic_env
from services.cashier.tables import metadata

run_alembic_env(metadata)
