"""The gateway: browsers (the Telegram Mini App) over Connect, as the player, in front of the cluster."""
