"""A throwaway certificate authority for tests: real X.509 certificates made with `cryptography`.

Tests (and the container tier) run the services with mutual TLS as production does: one CA, and a
certificate per service for its DNS names and loopback, usable for serving and for calling. Nothing
in production imports this; there, cert-manager issues the certificates (deploy/k8s).
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from service_runtime.tls import TlsFiles

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


_CA_USAGE = x509.KeyUsage(
    digital_signature=True,
    key_cert_sign=True,
    crl_sign=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    encipher_only=False,
    decipher_only=False,
)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _names(hosts: tuple[str, ...]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


@dataclass
class TestAuthority:
    """A CA that writes its certificate and issues leaf certificates into `folder`."""

    __test__ = False  # not a pytest test class, whatever its name says

    folder: Path
    name: str = "poker test CA"

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.name)])
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_CA_USAGE, critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.ca_file = self.folder / "ca.crt"
        self.ca_file.write_bytes(self.certificate.public_bytes(serialization.Encoding.PEM))

    def issue(
        self,
        name: str,
        hosts: tuple[str, ...] = LOOPBACK_NAMES,
        *,
        folder: Path | None = None,
        valid_days: int = 2,
    ) -> TlsFiles:
        """A certificate for `name` valid for `hosts`, for serving and calling (server and client auth).

        Written as tls.crt / tls.key / ca.crt in `folder` (default: <ca folder>/<name>), the layout
        of a cert-manager Secret mounted as a volume."""
        target = folder or self.folder / name
        target.mkdir(parents=True, exist_ok=True)
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=valid_days))
            .add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
            .sign(self._key, hashes.SHA256())
        )
        files = TlsFiles(target / "tls.crt", target / "tls.key", target / "ca.crt")
        # Key first, then certificate: a reader that sees the new certificate finds its key.
        files.key_file.write_bytes(_pem_key(key))
        files.cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        files.ca_file.write_bytes(self.ca_file.read_bytes())
        return files


def tls_environment(files: TlsFiles) -> dict[str, str]:
    """The POKER_TLS_* settings that make a service use `files`."""
    return {
        "POKER_TLS_CERT_FILE": str(files.cert_file),
        "POKER_TLS_KEY_FILE": str(files.key_file),
        "POKER_TLS_CA_FILE": str(files.ca_file),
    }
