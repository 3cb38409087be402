"""poker_engine package."""
