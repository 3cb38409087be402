"""When this process's TLS certificate and its CA end, for the alert that pages 14 days before.

`poker_tls_certificate_expiry_timestamp_seconds{certificate, path}` is read at scrape time from the
files themselves (cert-manager renews them in place), so a renewal shows at the next scrape, before
any handshake picked it up: `certificate="own"` is the leaf of the process's chain (the one it serves
and calls with), `certificate="ca"` the soonest-ending certificate of the CA bundle it trusts. A file
that cannot be read or parsed drops its series (and logs why) rather than export a wrong date.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

from cryptography import x509
from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from service_runtime.structured_logging import get_logger

log = get_logger("tls")

NAME = "poker_tls_certificate_expiry_timestamp_seconds"
_HELP = (
    "When a TLS certificate of this process ends (Unix time): certificate=own is the leaf it serves "
    "and calls with, certificate=ca the soonest-ending one of the CA bundle it trusts."
)


def not_after(path: Path, *, soonest: bool) -> float:
    """The end of the first certificate in the PEM file (or of the soonest-ending one)."""
    certificates = x509.load_pem_x509_certificates(path.read_bytes())
    ends = [c.not_valid_after_utc.timestamp() for c in certificates]
    return min(ends) if soonest else ends[0]


class _Expiries(Collector):
    def __init__(self) -> None:
        self._files: dict[Path, str] = {}
        self._lock = threading.Lock()

    def watch(self, cert_file: Path, ca_file: Path) -> None:
        with self._lock:
            self._files.setdefault(Path(cert_file), "own")
            self._files.setdefault(Path(ca_file), "ca")

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(NAME, _HELP, labels=("certificate", "path"))
        with self._lock:
            files = sorted(self._files.items())
        for path, role in files:
            try:
                family.add_metric((role, str(path)), not_after(path, soonest=role == "ca"))
            except (OSError, ValueError) as error:
                log.warning("tls certificate unreadable for its expiry", path=str(path), error=str(error))
        yield family

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(NAME, _HELP, labels=("certificate", "path"))


_EXPIRIES = _Expiries()
REGISTRY.register(_EXPIRIES)


def watch_certificates(cert_file: Path, ca_file: Path) -> None:
    """Export the expiry of this certificate chain and CA bundle from now on (once per path)."""
    _EXPIRIES.watch(cert_file, ca_file)
