"""Loopback ports for the processes a test starts and tells where to listen.

A port found free by binding port 0 comes from the kernel's ephemeral range, where every other test's
server (bound to port 0) and every outgoing connection also take theirs: between the probe and the
process's own bind another one can take it (seen in CI as "Failed to bind to address"). These ports
are drawn at random below the ephemeral range, where the kernel never hands one out by itself, so
only another test drawing the same port could collide.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

_RANDOM = random.SystemRandom()
_LOWEST = 10_000


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(span: int = 1) -> int:
    """The first of `span` consecutive loopback ports that are free now, below the ephemeral range."""
    highest = _ephemeral_start() - span
    for _ in range(200):
        first = _RANDOM.randrange(_LOWEST, max(_LOWEST + 1, highest))
        if all(_bindable(port) for port in range(first, first + span)):
            return first
    raise AssertionError(f"no {span} free loopback ports in a row")
