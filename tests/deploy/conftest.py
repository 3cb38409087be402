"""Loud summary lines for the deployment tests: what was skipped and why, and what the tier took."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.summary import SUMMARY


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for key, value in SUMMARY.items():
        if isinstance(value, str):
            terminalreporter.write_sep("!", value, red=True, bold=True)
        else:
            terminalreporter.write_line(f"container tier: {key}: {value:.1f}s")


@pytest.fixture(scope="module")
def rendered_production() -> list[dict[str, Any]]:
    from tests.deploy.rendering import render

    return render("production")
