"""Cashier service: the double-entry chip ledger, purchases and withdrawals, and seat sessions."""
