"""What the table sends: the players' streams and views per step (`table_streams`), the
spectators' delay line, the per-caller stream budget, and the chat with its mutes.
"""
