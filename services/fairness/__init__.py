"""The fairness service: per-hand seed commitments, player entropy, the documented shuffle, reveals."""
