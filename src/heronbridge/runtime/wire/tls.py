"""TLS for the TCP links between hosts, when the topology names its PEM files
(`heronbridge.tls.cert`, `.key`, `.ca`): both sides present a certificate signed by that
CA and check the other's. Names are not checked, since hosts are often bare addresses;
the CA is the topology's own, and the secret's handshake still runs inside TLS."""

from __future__ import annotations

import ssl

from ..config import TLS_KEYS
from ..errors import ConfigError, where


def contexts(tls: tuple[str, str, str] | None,
             topology: str | None = None) -> tuple[ssl.SSLContext | None, ssl.SSLContext | None]:
    """(listener's context, dialer's context), or (None, None) without TLS."""
    if tls is None:
        return None, None
    cert, key, ca = tls
    made = []
    for purpose in (ssl.Purpose.CLIENT_AUTH, ssl.Purpose.SERVER_AUTH):
        try:
            context = ssl.create_default_context(purpose, cafile=ca)
            context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as exc:
            msg = (f"{where(topology)}: configs {', '.join(TLS_KEYS)} expect a readable PEM "
                   f"certificate, its key and a CA ({cert}, {key}, {ca}); loading them "
                   f"failed: {exc}")
            raise ConfigError(msg) from exc
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.check_hostname = False
        context.verify_mode = ssl.CERT_REQUIRED  # the dialer's certificate too
        made.append(context)
    return made[0], made[1]
