"""The exceptions the SDK raises; every one derives from :class:`SandboxDaemonError`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import httpx
from pydantic import ValidationError

from ._generated.models import AgentError, ProblemDetails

__all__ = [
    "DaemonStartError",
    "ProblemError",
    "ResponseError",
    "SandboxDaemonError",
    "StreamError",
    "TransportError",
    "TurnInterruptedError",
]

# Members of a problem body that have their own attribute on ProblemError.
_KNOWN_MEMBERS = frozenset({"type", "title", "status", "detail", "instance", "agentError"})


class SandboxDaemonError(Exception):
    """Base class of every error this SDK raises."""


class ProblemError(SandboxDaemonError):
    """The daemon answered with a non-2xx status; carries its RFC 7807 problem details.

    ``type`` is the stable URI of the error kind (e.g.
    ``urn:sandbox-daemon:problem:unknown-agent``), ``status`` the HTTP status, ``title``
    and ``detail`` the human text, ``agent_error`` the agent's own error when the problem
    is that an agent could not do what was asked, and ``extras`` any other member of the
    body. A body that is not problem JSON (e.g. a bare ``400`` from the HTTP layer) gives
    ``type == "about:blank"`` and the body text as ``detail``.
    """

    def __init__(
        self,
        *,
        type: str,
        status: int,
        title: str,
        detail: str,
        instance: str | None = None,
        agent_error: AgentError | None = None,
        extras: Mapping[str, Any] | None = None,
        method: str = "",
        url: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.type = type
        self.status = status
        self.title = title
        self.detail = detail
        self.instance = instance
        self.agent_error = agent_error
        self.extras: dict[str, Any] = dict(extras or {})
        self.method = method
        self.url = url
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(f"{status} {title}: {detail} [{type}] ({method} {url})".rstrip())

    @property
    def retry_after(self) -> float | None:
        """Seconds the daemon asked to wait (``Retry-After``), when it said so."""
        value = self.headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            return None

    @property
    def problem(self) -> ProblemDetails:
        """The problem as the generated :class:`ProblemDetails` model."""
        return ProblemDetails.model_validate(
            {
                "type": self.type,
                "title": self.title,
                "status": self.status,
                "detail": self.detail,
                "instance": self.instance,
                "agentError": (
                    self.agent_error.model_dump(by_alias=True) if self.agent_error else None
                ),
                **self.extras,
            }
        )

    @classmethod
    def from_response(cls, response: httpx.Response, body: bytes | None = None) -> ProblemError:
        """Build the error from a non-2xx response (its body must have been read)."""
        return cls.from_answer(
            status=response.status_code,
            reason=response.reason_phrase,
            headers=response.headers.items(),
            body=response.content if body is None else body,
            method=response.request.method,
            url=str(response.request.url),
        )

    @classmethod
    def from_answer(
        cls,
        *,
        status: int,
        reason: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        method: str,
        url: str,
    ) -> ProblemError:
        """Build the error from the parts of a non-2xx answer, whichever library read it
        (httpx, or the WebSocket handshake of a terminal).
        """
        common: dict[str, Any] = {
            "method": method,
            "url": url,
            "headers": {k.lower(): v for k, v in headers},
        }
        try:
            document = json.loads(body) if body else None
        except ValueError:
            document = None
        problem = cls.from_document(document, status=status, title=reason or "", **common)
        if problem is not None:
            return problem
        return cls(
            type="about:blank",
            status=status,
            title=reason or "HTTP error",
            detail=body.decode("utf-8", "replace").strip(),
            **common,
        )

    @classmethod
    def from_document(
        cls,
        document: Any,
        *,
        status: int,
        title: str = "",
        method: str = "",
        url: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> ProblemError | None:
        """The error a decoded problem JSON document describes (``status`` and ``title``
        stand in for members it lacks), or ``None`` when it is not problem details — e.g.
        the ``data`` of an install stream's ``error`` frame.
        """
        if not isinstance(document, dict) or not isinstance(document.get("type", ""), str):
            return None
        parsed = _parse_problem(document, status, title)
        if parsed is None:
            return None
        return cls(**parsed, method=method, url=url, headers=headers)


def _parse_problem(document: dict[str, Any], status: int, title: str) -> dict[str, Any] | None:
    """The members of a problem JSON body, or None when it is not one."""
    try:
        problem = ProblemDetails.model_validate(
            {
                "type": "about:blank",
                "title": title,
                "status": status,
                "detail": "",
                **document,
            }
        )
    except ValidationError:
        return None
    extras = {k: v for k, v in document.items() if k not in _KNOWN_MEMBERS}
    return {
        "type": problem.type,
        "status": problem.status,
        "title": problem.title,
        "detail": problem.detail,
        "instance": problem.instance,
        "agent_error": problem.agent_error,
        "extras": extras,
    }


class TransportError(SandboxDaemonError):
    """The daemon could not be reached, or the connection broke (after any retries).

    The underlying :class:`httpx.TransportError` is the ``__cause__``; ``attempts`` says
    how many times the call was tried.
    """

    def __init__(self, message: str, *, attempts: int) -> None:
        self.attempts = attempts
        super().__init__(message)


class ResponseError(SandboxDaemonError):
    """A 2xx answer whose body is not what the API promises (not JSON, wrong shape)."""

    def __init__(self, message: str, *, status: int, body: bytes) -> None:
        self.status = status
        self.body = body
        super().__init__(message)


class StreamError(SandboxDaemonError):
    """An event stream broke a promise (a gap in sequences, a frame that is not an event),
    or could not be resumed within the retry policy.
    """


class TurnInterruptedError(SandboxDaemonError):
    """The session ended before the awaited turn's ``turnEnded`` arrived."""

    def __init__(self, message: str, *, session_id: str, turn_id: str) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        super().__init__(message)


class DaemonStartError(SandboxDaemonError):
    """A local daemon could not be started (binary missing, exited, never listened)."""
