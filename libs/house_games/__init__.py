"""house_games package."""
