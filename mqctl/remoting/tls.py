"""TLS for remoting connections, matching the Java client's defaults.

The Java client (``TlsHelper``, ``tls.client.authServer=false``) trusts any server certificate
and sends no SNI / checks no host name. mqctl requires an explicit choice: ``--tls-ca FILE``
verifies the chain (still without a host-name check unless ``verify_hostname``), and
``--tls-insecure`` accepts any certificate, as Java does by default.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from mqctl.errors import ConfigError


@dataclass(frozen=True, slots=True)
class TlsSettings:
    enabled: bool = False
    ca_file: str | None = None
    insecure: bool = False
    verify_hostname: bool = False
    cert_file: str | None = None
    key_file: str | None = None


def client_context(s: TlsSettings) -> ssl.SSLContext | None:
    if not s.enabled:
        return None
    if not s.ca_file and not s.insecure:
        raise ConfigError("TLS needs a CA file to verify the server, or an explicit "
                          "--tls-insecure",
                          hint="pass --tls-ca FILE (or tls.ca_file in the profile), or "
                               "--tls-insecure to trust any certificate as the Java client does")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if s.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        assert s.ca_file is not None
        if not Path(s.ca_file).is_file():
            raise ConfigError(f"TLS CA file not found: {s.ca_file}",
                          hint="pass the PEM file of the CA that signed the brokers' certificates")
        try:
            ctx.load_verify_locations(cafile=s.ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"cannot load TLS CA file {s.ca_file}: {exc}") from None
        ctx.check_hostname = s.verify_hostname
        ctx.verify_mode = ssl.CERT_REQUIRED
    if s.cert_file:
        try:
            ctx.load_cert_chain(s.cert_file, s.key_file)
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"cannot load TLS client certificate {s.cert_file}: {exc}") from None
    return ctx
