"""ACL request signing (ACL 1.0 ``AclClientRPCHook`` and ACL 2.0 share the wire signature).

``Signature = Base64(HmacSHA1(secretKey, concat(values of extFields sorted by key, without
Signature) + body))`` -- values only, no keys, no separators; keys in Java ``TreeMap`` order
(UTF-16 code-unit order, identical to Python's for ASCII keys). Source: apache/rocketmq
``acl/common/AclClientRPCHook.java``, ``AclUtils.combineRequestContent``, ``AclSigner``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass

ACCESS_KEY = "AccessKey"
SECURITY_TOKEN = "SecurityToken"
SIGNATURE = "Signature"


@dataclass(frozen=True, slots=True)
class Credentials:
    access_key: str
    secret_key: str
    security_token: str | None = None

    def __repr__(self) -> str:  # never print the secret
        tok = ", security_token=<redacted>" if self.security_token else ""
        return f"Credentials(access_key={self.access_key!r}, secret_key=<redacted>{tok})"

    __str__ = __repr__


def _java_key(k: str) -> bytes:
    return k.encode("utf-16-be")


def signing_content(ext_fields: dict[str, str], body: bytes = b"") -> bytes:
    values = "".join(v for k, v in sorted(ext_fields.items(), key=lambda kv: _java_key(kv[0]))
                     if k != SIGNATURE and v is not None)
    return values.encode("utf-8") + (body or b"")


def compute_signature(secret_key: str, content: bytes) -> str:
    mac = hmac.new(secret_key.encode("utf-8"), content, hashlib.sha1).digest()
    return base64.b64encode(mac).decode("ascii")


def sign(ext_fields: dict[str, str] | None, body: bytes, creds: Credentials) -> dict[str, str]:
    """Return a copy of ``ext_fields`` with AccessKey, SecurityToken and Signature added.

    Sign last: nothing may be added to the fields after this.
    """
    out = dict(ext_fields or {})
    out[ACCESS_KEY] = creds.access_key
    if creds.security_token:
        out[SECURITY_TOKEN] = creds.security_token
    out.pop(SIGNATURE, None)
    out[SIGNATURE] = compute_signature(creds.secret_key, signing_content(out, body))
    return out


def verify(ext_fields: dict[str, str] | None, body: bytes, secret_key: str) -> bool:
    """Server side check (used by the simulated cluster): constant-time compare."""
    fields = ext_fields or {}
    got = fields.get(SIGNATURE)
    if not got:
        return False
    want = compute_signature(secret_key, signing_content(fields, body))
    return hmac.compare_digest(got, want)
