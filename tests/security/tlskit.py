"""A certificate authority made by a test, and host certificates it signs (cryptography)."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                 signer: ec.EllipticCurvePrivateKey, extension: x509.ExtensionType,
                 critical: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(extension, critical).sign(signer, hashes.SHA256()))


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class CertificateAuthority:
    def __init__(self, folder: Path, name: str = "heronbridge test CA") -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.name = _name(name)
        cert = _certificate(self.name, self.key, self.name, self.key,
                            x509.BasicConstraints(ca=True, path_length=None), True)
        self.path = folder / "ca.pem"
        self.path.write_bytes(_pem(cert))

    def issue(self, host: str) -> tuple[Path, Path]:
        """(certificate, key) files for one host, signed by this CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _certificate(_name(host), key, self.name, self.key, x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address(host))]), False)
        cert_path, key_path = self.folder / f"{host}.pem", self.folder / f"{host}.key"
        cert_path.write_bytes(_pem(cert))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key_path.chmod(0o600)
        return cert_path, key_path
