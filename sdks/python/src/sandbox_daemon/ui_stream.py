"""A turn as the Vercel AI SDK's UI message stream (v1): ``GET /sessions/{id}/ui-stream``,
blocking (:class:`UiMessageStream`) and async (:class:`AsyncUiMessageStream`).

The daemon answers SSE frames whose ``data`` is one chunk as JSON (``start``,
``text-delta``, ``tool-approval-request``, ``data-question``, ``finish``, ``abort``, … as the
``ai`` package's ``uiMessageChunkSchema`` has them), then ``data: [DONE]``. A stream yields
each chunk as a ``dict`` and ends after ``[DONE]``; when no turn was named and none runs
(``204``) it yields nothing and :attr:`~UiMessageStream.found` is ``False``.

A turn's stream is a pure function of the session's log: reading it again replays it from
its start, chunk for chunk, under the same ``messageId``. So a stream is never resumed:
one that breaks off, or ends before ``[DONE]``, raises
:class:`~sandbox_daemon.StreamError`; read the turn again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from types import TracebackType
from typing import Any

import httpx

from . import _operations as ops
from ._core import transport_error
from .errors import StreamError, TransportError
from .sse import ServerSentEvent, SSEDecoder

__all__ = ["AsyncUiMessageStream", "UiChunk", "UiMessageStream"]

UiChunk = dict[str, Any]
"""One chunk of a UI message stream: its ``type`` and that type's fields, as sent."""

_DONE = "[DONE]"

Open = Callable[[ops.Call[None]], httpx.Response]
AsyncOpen = Callable[[ops.Call[None]], Awaitable[httpx.Response]]


class _Reader:
    """What both streams share: the chunks of the frames, and the errors they raise."""

    def __init__(self, call: ops.Call[None]) -> None:
        self.call = call
        self.session_id = call.path_params["sessionId"]
        self.found: bool | None = None
        self.done = False
        self.chunks = 0

    def opened(self, response: httpx.Response) -> bool:
        """Note the response; ``False`` when there is nothing to stream (``204``)."""
        self.found = response.status_code != 204
        return self.found

    def accept(self, frame: ServerSentEvent) -> UiChunk | None:
        """The chunk of a frame (``None`` for ``[DONE]``, which ends the stream)."""
        if frame.data == _DONE:
            self.done = True
            return None
        try:
            chunk = json.loads(frame.data)
        except ValueError as error:
            raise StreamError(f"{self.what}: a frame is not JSON: {frame.data[:200]}") from error
        if not isinstance(chunk, dict) or not isinstance(chunk.get("type"), str):
            raise StreamError(f"{self.what}: a frame is not a chunk: {frame.data[:200]}")
        self.chunks += 1
        return chunk

    @property
    def what(self) -> str:
        return f"the UI message stream of session {self.session_id}"

    def unreachable(self, error: httpx.TransportError) -> TransportError:
        return transport_error(self.call, 1, error)

    def dropped(self, error: BaseException | None) -> StreamError:
        how = (
            f"broke off ({type(error).__name__}: {error})"
            if error is not None
            else "ended before its [DONE]"
        )
        return StreamError(
            f"{self.what} {how} after {self.chunks} chunk{'' if self.chunks == 1 else 's'}: "
            "read the turn again (it replays from its start)"
        )


class UiMessageStream:
    """Iterate a turn's UI message chunks (blocking); see the module doc.

    The request is sent when iteration starts (a refusal, e.g. ``404`` ``turn-not-found``,
    raises :class:`~sandbox_daemon.ProblemError` then). Use it in a ``with`` block so an
    abandoned stream closes its connection::

        with client.ui_message_stream("s1", turn_id="turn_1") as chunks:
            for chunk in chunks:
                print(chunk["type"])
    """

    def __init__(self, open: Open, call: ops.Call[None]) -> None:
        self._open = open
        self._reader = _Reader(call)
        self._chunks = self._run()

    @property
    def found(self) -> bool | None:
        """Whether there was a turn to stream (``False``: ``204``, no turn running);
        ``None`` before the request.
        """
        return self._reader.found

    @property
    def done(self) -> bool:
        """Whether the stream ended with ``[DONE]`` (the turn's ``finish`` or ``abort``)."""
        return self._reader.done

    def __iter__(self) -> UiMessageStream:
        return self

    def __next__(self) -> UiChunk:
        return next(self._chunks)

    def close(self) -> None:
        """Stop reading and close the connection (the turn goes on)."""
        self._chunks.close()

    def __enter__(self) -> UiMessageStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[UiChunk, None, None]:
        reader = self._reader
        try:
            response = self._open(reader.call)
        except httpx.TransportError as error:
            raise reader.unreachable(error) from error
        try:
            if not reader.opened(response):
                return
            decoder = SSEDecoder()
            try:
                for data in response.iter_bytes():
                    for frame in decoder.feed(data):
                        chunk = reader.accept(frame)
                        if reader.done:
                            return
                        if chunk is not None:
                            yield chunk
                for frame in decoder.close():
                    chunk = reader.accept(frame)
                    if reader.done:
                        return
                    if chunk is not None:
                        yield chunk
            except httpx.TransportError as error:
                raise reader.dropped(error) from error
            raise reader.dropped(None)
        finally:
            response.close()


class AsyncUiMessageStream:
    """Iterate a turn's UI message chunks with ``async for``; see the module doc.

    The request is sent when iteration starts. Use it in an ``async with`` block so an
    abandoned stream closes its connection::

        async with client.ui_message_stream("s1") as chunks:
            async for chunk in chunks:
                print(chunk["type"])
    """

    def __init__(self, open: AsyncOpen, call: ops.Call[None]) -> None:
        self._open = open
        self._reader = _Reader(call)
        self._chunks = self._run()

    @property
    def found(self) -> bool | None:
        """Whether there was a turn to stream (``False``: ``204``, no turn running);
        ``None`` before the request.
        """
        return self._reader.found

    @property
    def done(self) -> bool:
        """Whether the stream ended with ``[DONE]`` (the turn's ``finish`` or ``abort``)."""
        return self._reader.done

    def __aiter__(self) -> AsyncUiMessageStream:
        return self

    async def __anext__(self) -> UiChunk:
        return await self._chunks.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the connection (the turn goes on)."""
        await self._chunks.aclose()

    async def __aenter__(self) -> AsyncUiMessageStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[UiChunk, None]:
        reader = self._reader
        try:
            response = await self._open(reader.call)
        except httpx.TransportError as error:
            raise reader.unreachable(error) from error
        try:
            if not reader.opened(response):
                return
            decoder = SSEDecoder()
            try:
                async for data in response.aiter_bytes():
                    for frame in decoder.feed(data):
                        chunk = reader.accept(frame)
                        if reader.done:
                            return
                        if chunk is not None:
                            yield chunk
                for frame in decoder.close():
                    chunk = reader.accept(frame)
                    if reader.done:
                        return
                    if chunk is not None:
                        yield chunk
            except httpx.TransportError as error:
                raise reader.dropped(error) from error
            raise reader.dropped(None)
        finally:
            await response.aclose()
