"""The table's durable logs: the hand's and seats' fenced log (`event_log`), the outbox of
records for history, and the retry queue of after-hand work.
"""
