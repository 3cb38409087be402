"""The lobby service."""
