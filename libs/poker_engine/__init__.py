"""poker_engine: the pure rules library of the poker platform (no I/O, no clock, no randomness, no grpc).

Modules: ``cards`` (encoding), ``evaluator`` (hand strength), ``config`` + ``hand`` (one hand of no-limit
or fixed-limit Hold'em), ``events`` + ``views`` (the record and who may see what), ``seating`` (the
table between hands), ``replay`` (``python -m poker_engine.replay FILE.json``). See docs/engine.md.
Nothing is imported here so that ``poker_engine.cards`` stays cheap (the evaluator builds its tables
at import).
"""
