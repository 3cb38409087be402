"""`poker-bots`: bot players that buy chips, sit, play and leave against a running cluster."""
