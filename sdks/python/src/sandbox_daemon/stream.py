"""Lossless event streams over SSE, blocking (:class:`EventStream`) and async
(:class:`AsyncEventStream`).

A stream replays a session's log after ``offset``, then follows it live, and ends after
``sessionEnded``. When the connection drops (an error, a silence longer than the stream
timeout, or an end without ``sessionEnded``) it connects again with ``Last-Event-ID`` set
to the last sequence it delivered, waiting as its :class:`~sandbox_daemon.RetryPolicy`
says; the attempt count starts again after every event. Events arrive once each, in
order: a duplicate after a resume is skipped and a gap raises
:class:`~sandbox_daemon.StreamError`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from types import TracebackType

import anyio
import httpx

from . import _operations as ops
from ._core import StreamCursor
from .errors import ProblemError
from .events import Event
from .sse import SSEDecoder

__all__ = ["AsyncEventStream", "EventStream"]

Open = Callable[[ops.Call[None]], httpx.Response]
AsyncOpen = Callable[[ops.Call[None]], Awaitable[httpx.Response]]


class EventStream:
    """Iterate a session's events (blocking); see the module doc for what it promises.

    Use it as an iterator, ideally in a ``with`` block so an abandoned stream closes its
    connection at once::

        with client.events("s1") as events:
            for event in events:
                ...
    """

    def __init__(self, open: Open, cursor: StreamCursor) -> None:
        self._open = open
        self._cursor = cursor
        self._response: httpx.Response | None = None
        self._events = self._run()

    @property
    def last_sequence(self) -> int:
        """The sequence of the last event delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether ``sessionEnded`` was delivered (the stream is over)."""
        return self._cursor.ended()

    @property
    def connections(self) -> int:
        """How many connections the stream has opened so far."""
        return self._cursor.connections

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Stop the stream and close its connection."""
        self._events.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[Event, None, None]:
        cursor = self._cursor
        while not cursor.ended():
            try:
                response = self._open(cursor.call())
            except httpx.TransportError as error:
                time.sleep(cursor.dropped(error))
                continue
            except ProblemError as problem:
                if not cursor.retryable_problem(problem):
                    raise
                time.sleep(cursor.dropped(problem, problem.retry_after))
                continue
            failure: BaseException | None = None
            decoder = SSEDecoder()
            try:
                for chunk in response.iter_bytes():
                    for frame in decoder.feed(chunk):
                        event = cursor.accept(frame)
                        if event is not None:
                            yield event
                        if cursor.ended():
                            return
                for frame in decoder.close():
                    event = cursor.accept(frame)
                    if event is not None:
                        yield event
            except httpx.TransportError as error:
                failure = error
            finally:
                response.close()
            if not cursor.ended():
                time.sleep(cursor.dropped(failure))


class AsyncEventStream:
    """Iterate a session's events with ``async for``; see the module doc.

    Use it in an ``async with`` block so an abandoned stream closes its connection::

        async with client.events("s1") as events:
            async for event in events:
                ...
    """

    def __init__(self, open: AsyncOpen, cursor: StreamCursor) -> None:
        self._open = open
        self._cursor = cursor
        self._events = self._run()

    @property
    def last_sequence(self) -> int:
        """The sequence of the last event delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether ``sessionEnded`` was delivered (the stream is over)."""
        return self._cursor.ended()

    @property
    def connections(self) -> int:
        """How many connections the stream has opened so far."""
        return self._cursor.connections

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop the stream and close its connection."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[Event, None]:
        cursor = self._cursor
        while not cursor.ended():
            try:
                response = await self._open(cursor.call())
            except httpx.TransportError as error:
                await anyio.sleep(cursor.dropped(error))
                continue
            except ProblemError as problem:
                if not cursor.retryable_problem(problem):
                    raise
                await anyio.sleep(cursor.dropped(problem, problem.retry_after))
                continue
            failure: BaseException | None = None
            decoder = SSEDecoder()
            try:
                async for chunk in response.aiter_bytes():
                    for frame in decoder.feed(chunk):
                        event = cursor.accept(frame)
                        if event is not None:
                            yield event
                        if cursor.ended():
                            return
                for frame in decoder.close():
                    event = cursor.accept(frame)
                    if event is not None:
                        yield event
            except httpx.TransportError as error:
                failure = error
            finally:
                await response.aclose()
            if not cursor.ended():
                await anyio.sleep(cursor.dropped(failure))
