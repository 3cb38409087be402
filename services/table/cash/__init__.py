"""The cash-game table: its pure cores (`core` the hand, `table_core` the seats, `countdown`,
`presence`, `time_banks`, `table_state`, `takeover`) and the shell that runs them (`actor`,
`hand_cycle`, `dealing`, `settlement`, `recovery`), with the views and the hand's record.
"""
