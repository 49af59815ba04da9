"""httpx transports that remember which API operations were called, for coverage checks,
and what each answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from sandbox_daemon._operations import OPERATIONS

_PATTERNS = [
    (
        op.operation_id,
        op.method,
        re.compile(
            "^"
            + re.sub(
                r"\{[^}]+\}", "[^/]+", re.escape(op.path).replace(r"\{", "{").replace(r"\}", "}")
            )
            + "$"
        ),
    )
    for op in OPERATIONS.values()
]


def operation_of(request: httpx.Request) -> str:
    """The operationId a request calls."""
    for op_id, method, pattern in _PATTERNS:
        if request.method == method and pattern.match(request.url.path):
            return op_id
    raise AssertionError(f"no operation for {request.method} {request.url.path}")


def websocket_operation(url: str) -> str:
    """The operationId of a WebSocket opened at ``url`` (a terminal's): its handshake is a
    ``GET`` that no httpx transport sees.
    """
    return operation_of(httpx.Request("GET", url.replace("ws", "http", 1)))


@dataclass(frozen=True)
class Exchange:
    """One request sent and its answer: the status, and the body unless it is a stream."""

    operation: str
    status: int
    body: bytes | None
    request_headers: httpx.Headers | None = None
    response_headers: httpx.Headers | None = None


def is_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.startswith("text/event-stream")


class RecordingTransport(httpx.BaseTransport):
    """A real transport that notes the operation of every request it sends, and each
    answer (bodies read here, except event streams, which are left to the client).
    """

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.operations: set[str] = set()
        self.exchanges: list[Exchange] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        operation = operation_of(request)
        self.operations.add(operation)
        response = self.inner.handle_request(request)
        body = None if is_stream(response) else response.read()
        self.exchanges.append(
            Exchange(operation, response.status_code, body, request.headers, response.headers)
        )
        return response

    def statuses(self, operation: str) -> list[int]:
        """The status of each answer to ``operation``, in order."""
        return [e.status for e in self.exchanges if e.operation == operation]

    def opened_websocket(self, url: str) -> None:
        """Note a WebSocket opened at ``url`` (it went past this transport), answered 101."""
        operation = websocket_operation(url)
        self.operations.add(operation)
        self.exchanges.append(Exchange(operation, 101, None))

    def close(self) -> None:
        self.inner.close()


class AsyncRecordingTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`RecordingTransport`."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.operations: set[str] = set()
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        operation = operation_of(request)
        self.operations.add(operation)
        response = await self.inner.handle_async_request(request)
        body = None if is_stream(response) else await response.aread()
        self.exchanges.append(
            Exchange(operation, response.status_code, body, request.headers, response.headers)
        )
        return response

    def statuses(self, operation: str) -> list[int]:
        """The status of each answer to ``operation``, in order."""
        return [e.status for e in self.exchanges if e.operation == operation]

    def opened_websocket(self, url: str) -> None:
        """Note a WebSocket opened at ``url`` (it went past this transport), answered 101."""
        operation = websocket_operation(url)
        self.operations.add(operation)
        self.exchanges.append(Exchange(operation, 101, None))

    async def aclose(self) -> None:
        await self.inner.aclose()
