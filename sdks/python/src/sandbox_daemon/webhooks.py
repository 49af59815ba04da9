"""Checking that a webhook delivery comes from the daemon.

Each delivery is a ``POST`` whose body is a ``WebhookPayload`` (``deliveryId``,
``webhookId``, ``type``, ``event``), signed in ``Sandbox-Daemon-Signature``:
``t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">``, keyed by the webhook's
secret. ``Webhook-Id`` (``<sessionId>:<sequence>``) is the same on every attempt of one
delivery, so a receiver can drop a repeat.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import time
from collections.abc import Iterable
from typing import Literal

from .errors import SandboxDaemonError

__all__ = [
    "DEFAULT_WEBHOOK_TOLERANCE",
    "WEBHOOK_ID_HEADER",
    "WEBHOOK_SIGNATURE_HEADER",
    "WebhookSignatureError",
    "verify_webhook_signature",
]

WEBHOOK_SIGNATURE_HEADER = "Sandbox-Daemon-Signature"
"""The header carrying a delivery's signature."""

WEBHOOK_ID_HEADER = "Webhook-Id"
"""The header carrying a delivery's id, ``<sessionId>:<sequence>``, the same on every attempt."""

DEFAULT_WEBHOOK_TOLERANCE = 300.0
"""How far (in seconds) a signature's time may be from now by default: 5 minutes."""

_SECONDS = re.compile(r"[0-9]{1,15}")

WebhookSignatureFailure = Literal["malformed", "mismatch", "stale"]


class WebhookSignatureError(SandboxDaemonError):
    """A delivery's signature was refused. ``reason`` says why: ``malformed`` (no header,
    no ``t``, no ``v1``), ``mismatch`` (no ``v1`` is the body's HMAC with this secret:
    another secret, or a body changed on the way or re-serialised) or ``stale`` (genuine,
    but signed further from now than the tolerance: a replay). ``timestamp`` is the
    signature's time (Unix seconds), when the header had one. Answer such a request with a
    4xx and do not act on it.
    """

    def __init__(
        self, reason: WebhookSignatureFailure, message: str, timestamp: int | None = None
    ) -> None:
        super().__init__(message)
        self.reason: WebhookSignatureFailure = reason
        self.timestamp = timestamp


def verify_webhook_signature(
    secret: str | bytes,
    header: str | bytes | Iterable[str] | None,
    body: bytes | str,
    *,
    tolerance_seconds: float = DEFAULT_WEBHOOK_TOLERANCE,
    now: float | None = None,
) -> int:
    """Check a webhook delivery's ``Sandbox-Daemon-Signature`` ``header`` against its raw
    ``body`` with the webhook's ``secret``; raise :class:`WebhookSignatureError` when it does
    not hold (see its ``reason``), answer the signature's time (Unix seconds) when it does.

    ``body`` must be the body exactly as received (bytes, or text decoded from them), never
    JSON parsed and serialised again. ``header`` is the header's value (several values, as
    some frameworks give a repeated header, are taken together). Every ``v1=`` is tried (a
    daemon rotating secrets may send several), each compared in constant time
    (:func:`hmac.compare_digest`). A ``t`` more than ``tolerance_seconds`` (default 300;
    ``math.inf``: any) from ``now`` (Unix seconds, default :func:`time.time`) is refused as
    ``stale``. Check the signature before acting, and drop a repeated ``Webhook-Id``.
    """
    if isinstance(tolerance_seconds, bool) or not tolerance_seconds >= 0:
        raise ValueError("tolerance_seconds must be a number of seconds, 0 or more")
    current = time.time() if now is None else now
    if isinstance(current, bool) or not math.isfinite(current):
        raise ValueError("now must be a finite number of Unix seconds")
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("the webhook secret is empty")
    if header is None:
        value = ""
    elif isinstance(header, str):
        value = header
    elif isinstance(header, bytes):
        value = header.decode("latin-1")
    else:
        value = ",".join(header)

    timestamp: int | None = None
    signatures: list[bytes] = []
    for item in value.split(","):
        name, equals, text = item.partition("=")
        if not equals:
            continue
        name, text = name.strip(), text.strip()
        if name == "t":
            if timestamp is not None or not _SECONDS.fullmatch(text):
                raise WebhookSignatureError(
                    "malformed",
                    f"the {WEBHOOK_SIGNATURE_HEADER} header's `t` is not one number of seconds",
                )
            timestamp = int(text)
        elif name == "v1":
            signatures.append(text.lower().encode("ascii", "replace"))
    if timestamp is None:
        raise WebhookSignatureError(
            "malformed", f"no `t=` in the {WEBHOOK_SIGNATURE_HEADER} header"
        )
    if not signatures:
        raise WebhookSignatureError(
            "malformed", f"no `v1=` signature in the {WEBHOOK_SIGNATURE_HEADER} header", timestamp
        )

    payload = body.encode() if isinstance(body, str) else bytes(body)
    expected = (
        hmac.new(key, f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest().encode()
    )
    # Every candidate is compared (no early exit), each in constant time.
    matched = False
    for signature in signatures:
        if hmac.compare_digest(signature, expected):
            matched = True
    if not matched:
        raise WebhookSignatureError(
            "mismatch",
            "the webhook signature does not match the body: another secret, or a body changed "
            "(or re-serialised) on the way",
            timestamp,
        )
    if abs(current - timestamp) > tolerance_seconds:
        when = "ago" if current >= timestamp else "ahead"
        raise WebhookSignatureError(
            "stale",
            f"the webhook was signed at {timestamp}, {abs(current - timestamp):.0f} s {when}: "
            f"more than the {tolerance_seconds:g} s tolerated",
            timestamp,
        )
    return timestamp
