"""Durations the container tier measures, printed in the test summary (CI's budget depends on them)."""

from __future__ import annotations

TIMINGS: dict[str, float | str] = {}
