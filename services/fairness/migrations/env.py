"""Alembic environment of the fairness schema (version table `fairness_alembic_version`)."""

from service_runtime.migrations import run_alembic_env
from services.fairness.tables import metadata

run_alembic_env(metadata)
