"""httpx transports that remember which API operations were called, for coverage checks."""

from __future__ import annotations

import re

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


class RecordingTransport(httpx.BaseTransport):
    """A real transport that notes the operation of every request it sends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.operations: set[str] = set()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.operations.add(operation_of(request))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class AsyncRecordingTransport(httpx.AsyncBaseTransport):
    """The async twin of :class:`RecordingTransport`."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.operations: set[str] = set()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.operations.add(operation_of(request))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
