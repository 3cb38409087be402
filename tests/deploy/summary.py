"""What the deployment tests report at the end of a run: loud skip messages and measured durations."""

from __future__ import annotations

# A string is a loud message (a skipped check and why); a float is a duration in seconds.
SUMMARY: dict[str, float | str] = {}
