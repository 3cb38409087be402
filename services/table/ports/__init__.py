"""The table's ports to the other services (cashier, fairness, lobby, history) and their errors."""
