"""Which shard runs which table: the shard (leases, rooms, opening and handing over tables) and
who may reach a table (`table_access`).
"""
