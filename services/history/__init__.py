"""The history service."""
