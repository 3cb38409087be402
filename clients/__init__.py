"""Programs people and bots run against the platform (not services: they serve nothing)."""
