"""What the sync and the async client share: settings, retry decisions, stream bookkeeping.

Nothing here does I/O; the clients do it, each in its own way (blocking or awaiting).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from . import _operations as ops
from ._generated.models import SessionEndedEvent
from ._version import __version__
from .errors import ProblemError, StreamError, TransportError
from .events import Event, parse_event
from .retry import DEFAULT_RETRY, RetryPolicy
from .sse import ServerSentEvent

DEFAULT_ENDPOINT = "http://127.0.0.1:2468"
"""Where a daemon listens unless told otherwise."""

ENDPOINT_ENV = "SANDBOX_DAEMON_ENDPOINT"
TOKEN_ENV = "SANDBOX_DAEMON_TOKEN"

DEFAULT_TIMEOUT = 30.0
"""Seconds for connecting, and for each read or write of an ordinary call."""

DEFAULT_STREAM_READ_TIMEOUT = 60.0
"""Seconds an event stream may stay silent before it counts as dropped. The daemon sends a
keep-alive comment every 15 s by default, so only a dead connection stays this quiet."""

DEFAULT_INSTALL_TIMEOUT = 600.0
"""Seconds an install may keep the daemon silent: the wait for the JSON summary of
``installAgent`` (the daemon answers when the install is over), and the longest pause between
two frames of its progress stream (which has no keep-alives: resolving a version, unpacking,
or waiting for another install of the same agent can stay quiet a while)."""


@dataclass(frozen=True)
class Settings:
    """A client's resolved settings (see :class:`sandbox_daemon.Client`)."""

    base_url: str
    token: str | None = field(repr=False)
    timeout: httpx.Timeout
    stream_timeout: httpx.Timeout
    retry: RetryPolicy
    headers: dict[str, str]

    def request_headers(self) -> dict[str, str]:
        """The headers every request carries: ``User-Agent``, the client's own headers, and
        ``Authorization`` when there is a token (also a terminal's WebSocket handshake).
        """
        headers = {"User-Agent": f"sandbox-daemon-python/{__version__}", **self.headers}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``httpx.Client`` / ``httpx.AsyncClient``."""
        return {
            "base_url": self.base_url,
            "headers": self.request_headers(),
            "timeout": self.timeout,
        }


def resolve_settings(
    base_url: str | None,
    token: str | None,
    timeout: float | httpx.Timeout | None,
    stream_read_timeout: float | None,
    retry: RetryPolicy | None,
    headers: dict[str, str] | None,
) -> Settings:
    """Settings from the arguments, then the environment, then the defaults."""
    url = base_url or os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT
    secret = token if token is not None else os.environ.get(TOKEN_ENV)
    if isinstance(timeout, httpx.Timeout):
        plain = timeout
    else:
        plain = httpx.Timeout(timeout if timeout is not None else DEFAULT_TIMEOUT)
    stream = with_read_timeout(plain, stream_read_timeout)
    return Settings(
        base_url=url.rstrip("/"),
        token=secret or None,
        timeout=plain,
        stream_timeout=stream,
        retry=retry or DEFAULT_RETRY,
        headers=dict(headers or {}),
    )


def build_request(
    client: httpx.Client | httpx.AsyncClient,
    call: ops.Call[Any],
    timeout: httpx.Timeout | None = None,
) -> httpx.Request:
    """The httpx request for a call (with the client's timeouts unless ``timeout``)."""
    request = client.build_request(
        call.operation.method,
        call.path,
        params=call.params,
        headers=call.request_headers(),
        content=call.content(),
    )
    if timeout is not None:
        request.extensions["timeout"] = timeout.as_dict()
    return request


def with_read_timeout(timeout: httpx.Timeout, read: float | None) -> httpx.Timeout:
    """``timeout`` with another read timeout (``None``: wait as long as it takes)."""
    return httpx.Timeout(connect=timeout.connect, read=read, write=timeout.write, pool=timeout.pool)


def retry_delay(
    call: ops.Call[Any],
    policy: RetryPolicy,
    attempt: int,
    *,
    error: BaseException | None = None,
    problem: ProblemError | None = None,
) -> float | None:
    """Seconds to wait before trying ``call`` again after try ``attempt`` failed, or
    ``None`` when it must not be tried again.
    """
    if not call.idempotent or not policy.allows(attempt + 1):
        return None
    if error is not None:
        return policy.delay(attempt + 1) if policy.is_retryable_error(error) else None
    if problem is not None and problem.status in policy.retry_statuses:
        return policy.delay(attempt + 1, problem.retry_after)
    return None


def transport_error(call: ops.Call[Any], attempts: int, error: Exception) -> TransportError:
    """The error for a call whose connection failed ``attempts`` times."""
    return TransportError(
        f"{call.operation.method} {call.path} failed after {attempts} "
        f"{'try' if attempts == 1 else 'tries'}: {type(error).__name__}: {error}",
        attempts=attempts,
    )


@dataclass(frozen=True)
class Reconnect:
    """What a resumable stream (a session's events, a process's log) reports before it
    connects again (see ``on_reconnect``).
    """

    attempt: int
    """The try about to be made since the last frame arrived (2 for the first retry)."""
    delay: float
    """Seconds it waits first."""
    last_sequence: int
    """The sequence it resumes after (sent as ``Last-Event-ID``)."""
    error: BaseException | None
    """Why the previous connection ended (``None``: it closed before the stream's last
    frame, ``sessionEnded`` or a process's ``exit``)."""


ReconnectHook = Callable[[Reconnect], None]

T = TypeVar("T")


class ResumeCursor(ABC, Generic[T]):
    """Where a resumable SSE stream stands: the last sequence delivered, whether its last
    frame came, how many connections in a row failed. Subclasses say what each connection
    asks for and how a frame is read; this class decides when and how long to wait before
    the next connection, and when to give up.
    """

    what = "the stream"
    """What the stream is, for messages (``the event stream of session s1``)."""
    last_frame = "its end"
    """What ends it, for messages (``sessionEnded``)."""

    def __init__(
        self, offset: int, policy: RetryPolicy, on_reconnect: ReconnectHook | None
    ) -> None:
        if offset < 0:
            raise ValueError("offset must be >= 0")
        self.offset = offset
        self.policy = policy
        self.on_reconnect = on_reconnect
        self.last_sequence = offset
        self._ended = False
        self.failures = 0
        self.connections = 0
        self.duplicates_skipped = 0

    def call(self) -> ops.Call[None]:
        """The request of the next connection: the first from ``offset``, every later
        one resuming with ``Last-Event-ID`` = the last sequence delivered.
        """
        resume = self.last_sequence if self.connections > 0 else None
        self.connections += 1
        return self.request(resume)

    @abstractmethod
    def request(self, last_event_id: int | None) -> ops.Call[None]:
        """The request of a connection (``last_event_id``: ``None`` for the first)."""

    @abstractmethod
    def accept(self, frame: ServerSentEvent) -> T | None:
        """The item a frame carries, or ``None`` for one to skip (already delivered, or
        not one this stream knows).
        """

    def delivered(self, sequence: int) -> None:
        """A frame up to ``sequence`` was delivered: resume after it; tries start again."""
        self.last_sequence = sequence
        self.failures = 0

    def finish(self) -> None:
        """The stream's last frame was delivered: it is over."""
        self._ended = True

    def ended(self) -> bool:
        """Whether the stream's last frame was delivered: the stream is over."""
        return self._ended

    def dropped(self, error: BaseException | None, retry_after: float | None = None) -> float:
        """A connection failed or ended early: the seconds to wait before the next one.

        Raises :class:`StreamError` once the policy's tries are used up, and
        :class:`TransportError` at once for a connection error that no retry can mend (an
        unsupported URL scheme, ...).
        """
        if isinstance(error, httpx.TransportError) and not self.policy.is_retryable_error(error):
            raise TransportError(
                f"{self.what} cannot connect: {type(error).__name__}: {error}",
                attempts=self.failures + 1,
            ) from error
        self.failures += 1
        attempt = self.failures + 1
        if not self.policy.allows(attempt):
            reason = f": {error}" if error is not None else f" (closed before {self.last_frame})"
            raise StreamError(
                f"{self.what} could not be resumed after sequence {self.last_sequence} in "
                f"{self.failures} tries{reason}"
            ) from error
        delay = self.policy.delay(attempt, retry_after)
        if self.on_reconnect is not None:
            self.on_reconnect(Reconnect(attempt, delay, self.last_sequence, error))
        return delay

    def retryable_problem(self, problem: ProblemError) -> bool:
        """Whether a refused connection is worth another try (e.g. ``503``)."""
        return problem.status in self.policy.retry_statuses


class StreamCursor(ResumeCursor[Event]):
    """The cursor of a session's event stream. It checks the daemon's promises — each
    event's ``id`` is its ``sequence`` and sequences follow each other with no gap — so
    a resumed stream delivers every event once and in order, or fails loudly.
    """

    last_frame = "sessionEnded"

    def __init__(
        self,
        session_id: str,
        offset: int,
        include_raw: bool | None,
        policy: RetryPolicy,
        on_reconnect: ReconnectHook | None,
    ) -> None:
        super().__init__(offset, policy, on_reconnect)
        self.session_id = session_id
        self.include_raw = include_raw
        self.what = f"the event stream of session {session_id}"

    def request(self, last_event_id: int | None) -> ops.Call[None]:
        """``streamEvents`` from ``offset``, or after ``last_event_id``."""
        return ops.stream_events(self.session_id, self.offset, self.include_raw, last_event_id)

    def accept(self, frame: ServerSentEvent) -> Event | None:
        """The event a frame carries, or ``None`` for one already delivered."""
        try:
            event = parse_event(frame.data)
        except ValueError as error:
            raise StreamError(
                f"a frame of session {self.session_id} is not an event: {error}"
            ) from error
        if frame.id is not None and frame.id != str(event.sequence):
            raise StreamError(
                f"frame id {frame.id!r} differs from its event's sequence {event.sequence}"
            )
        if event.sequence <= self.last_sequence:
            self.duplicates_skipped += 1
            return None
        if event.sequence != self.last_sequence + 1:
            raise StreamError(
                f"events of session {self.session_id} skipped from {self.last_sequence} to "
                f"{event.sequence}: the stream lost events"
            )
        self.delivered(event.sequence)
        if isinstance(event, SessionEndedEvent):
            self.finish()
        return event
