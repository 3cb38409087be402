"""A network namespace of the test's own, joined to this machine by one veth pair, so a process started
in it (`prefix`) can be cut off the network and joined again (issue 30's partition of one shard).

The pair's two addresses are a /30 of the link-local range 169.254.0.0/16, on the pair only: no
route, no forwarding, no NAT is set up, so no packet of the namespace goes anywhere but to this
machine's root namespace. `cut()` takes the namespace's end of the pair down (its own routes go with
it; the root end keeps its address, which the root namespace's processes go on reaching locally),
`mend()` brings it up again. Everything is removed when the context ends, whatever happened.

Making one needs iproute2 and CAP_NET_ADMIN (root): without them the test skips loudly, unless
POKER_REQUIRE_NETNS=1 (CI), where that is a failure.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import random
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

REQUIRE = "POKER_REQUIRE_NETNS"
# /30s of 169.254.0.0/16 drawn from here (169.254.169.254, the cloud metadata address, is not in it).
_FIRST_THIRD, _LAST_THIRD = 32, 160


class NoNamespace(Exception):
    """This machine or user cannot make a network namespace (the reason says why)."""


@dataclass(frozen=True)
class Namespace:
    name: str
    # The root namespace's end of the pair and its address; the namespace's end and its address.
    outer_link: str
    outer: str
    inner_link: str
    inner: str

    @property
    def prefix(self) -> tuple[str, ...]:
        """Put before a command to run it inside the namespace (ip execs it: the PID is the command's)."""
        return ("ip", "netns", "exec", self.name)

    def cut(self) -> None:
        _ip("-n", self.name, "link", "set", self.inner_link, "down")

    def mend(self) -> None:
        _ip("-n", self.name, "link", "set", self.inner_link, "up")


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"`ip {' '.join(args)}` failed: {done.stderr.strip() or done.returncode}")


def _addresses_in_use() -> set[ipaddress.IPv4Network]:
    done = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=20)
    networks = set()
    for line in done.stdout.splitlines():
        fields = line.split()
        if "inet" in fields:
            networks.add(ipaddress.IPv4Interface(fields[fields.index("inet") + 1]).network)
    return networks


def _free_pair() -> tuple[str, str]:
    """Two addresses of a /30 in 169.254.0.0/16 that overlaps no network of this machine's addresses."""
    used = _addresses_in_use()
    for _ in range(100):
        network = ipaddress.IPv4Network(
            f"169.254.{random.randrange(_FIRST_THIRD, _LAST_THIRD)}.{4 * random.randrange(64)}/30"
        )
        if not any(network.overlaps(other) for other in used):
            first, second = list(network.hosts())
            return str(first), str(second)
    raise NoNamespace("no free /30 in 169.254.0.0/16")


def make_namespace() -> Namespace:
    """A namespace with a veth pair to the root namespace (`remove` it); NoNamespace if it cannot be
    made here, with nothing left behind."""
    if shutil.which("ip") is None:
        raise NoNamespace("`ip` (iproute2) is not installed")
    tag = uuid.uuid4().hex[:8]
    outer, inner = _free_pair()
    namespace = Namespace(f"poker-part-{tag}", f"pkp{tag}o", outer, f"pkp{tag}i", inner)
    try:
        _ip("netns", "add", namespace.name)
        _ip("link", "add", namespace.outer_link, "type", "veth", "peer", "name", namespace.inner_link)
        _ip("link", "set", namespace.inner_link, "netns", namespace.name)
        _ip("addr", "add", f"{outer}/30", "dev", namespace.outer_link)
        _ip("link", "set", namespace.outer_link, "up")
        _ip("-n", namespace.name, "addr", "add", f"{inner}/30", "dev", namespace.inner_link)
        _ip("-n", namespace.name, "link", "set", namespace.inner_link, "up")
        _ip("-n", namespace.name, "link", "set", "lo", "up")
    except RuntimeError as error:
        remove(namespace)
        raise NoNamespace(str(error)) from None
    return namespace


def remove(namespace: Namespace) -> None:
    """The pair (deleting one end deletes both) and the namespace (gone once its last process ended)."""
    subprocess.run(["ip", "link", "del", namespace.outer_link], capture_output=True, timeout=20, check=False)
    subprocess.run(["ip", "netns", "del", namespace.name], capture_output=True, timeout=20, check=False)


@contextlib.contextmanager
def network_namespace_or_skip() -> Iterator[Namespace]:
    """A namespace removed when this ends, whatever happened; or a loud skip saying why it cannot be
    made (a failure where POKER_REQUIRE_NETNS=1)."""
    try:
        namespace = make_namespace()
    except NoNamespace as error:
        reason = f"NETWORK PARTITION TEST SKIPPED: cannot make a network namespace: {error}"
        if os.environ.get(REQUIRE) == "1":
            pytest.fail(f"{reason} ({REQUIRE}=1)")
        pytest.skip(reason)
    try:
        yield namespace
    finally:
        remove(namespace)
