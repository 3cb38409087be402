"""The house-banked tables (Casino Hold'em, Russian Poker): the round's pure core (`house_core`,
`house_round`), the table that runs it (`house_table`), its views, admission and fenced journal.
"""
