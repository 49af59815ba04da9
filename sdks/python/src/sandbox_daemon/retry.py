"""When and how long to wait before trying a call, or resuming a stream, again."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import httpx

__all__ = ["DEFAULT_RETRY", "NO_RETRY", "RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retries with exponential backoff, for idempotent calls and for event streams.

    A call is tried at most ``max_attempts`` times in all. Before try ``n`` (from 2) the
    client waits ``min(max_backoff, backoff * multiplier ** (n - 2))`` seconds, give or
    take ``jitter`` (a fraction), or the daemon's ``Retry-After`` when it sent one (capped
    at ``max_backoff``). What is retried:

    * a connection that could not be made or broke (``httpx.TransportError``, timeouts
      included) — for idempotent operations only: ``GET``, ``DELETE``, ``endSession`` and
      ``installAgent``; never ``sendMessage`` or the other ``POST`` s;
    * a status in ``retry_statuses`` (by default ``503``: the store is unavailable or the
      session is being restored), again for idempotent operations only.

    Event streams use the same policy to reconnect; their attempt count starts again after
    every event received, so a long stream survives any number of separate drops.
    """

    max_attempts: int = 4
    backoff: float = 0.1
    multiplier: float = 2.0
    max_backoff: float = 5.0
    jitter: float = 0.1
    retry_statuses: frozenset[int] = field(default_factory=lambda: frozenset({503}))

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if self.backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoff and max_backoff must be >= 0 and multiplier >= 1")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before try number ``attempt`` (2 for the first retry)."""
        if retry_after is not None:
            return min(self.max_backoff, max(0.0, retry_after))
        base = min(self.max_backoff, self.backoff * self.multiplier ** max(0, attempt - 2))
        if self.jitter:
            base *= 1 + random.uniform(-self.jitter, self.jitter)
        return max(0.0, base)

    def allows(self, attempt: int) -> bool:
        """Whether try number ``attempt`` (counting from 1) may be made."""
        return attempt <= self.max_attempts

    @staticmethod
    def is_retryable_error(error: BaseException) -> bool:
        """Whether a failed try may be repeated (for an idempotent call)."""
        if isinstance(error, (httpx.UnsupportedProtocol, httpx.LocalProtocolError)):
            return False  # a mistake on this side: trying again changes nothing
        return isinstance(error, httpx.TransportError)


DEFAULT_RETRY = RetryPolicy()
"""The policy clients use unless told otherwise: 4 tries, 0.1 s doubling to 5 s."""

NO_RETRY = RetryPolicy(max_attempts=1)
"""Try once, never again."""
