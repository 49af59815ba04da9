"""Lossless streams over SSE that resume by themselves: a session's events, blocking
(:class:`EventStream`) and async (:class:`AsyncEventStream`), and the machinery they share
with a process's followed log (:mod:`sandbox_daemon.processes`).

An event stream replays a session's log after ``offset``, then follows it live, and ends
after ``sessionEnded``. When the connection drops (an error, a silence longer than the
stream timeout, or an end without ``sessionEnded``) it connects again with
``Last-Event-ID`` set to the last sequence it delivered, waiting as its
:class:`~sandbox_daemon.RetryPolicy` says; the attempt count starts again after every
event. Events arrive once each, in order: a duplicate after a resume is skipped and a gap
raises :class:`~sandbox_daemon.StreamError`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from types import TracebackType
from typing import Generic, TypeVar

import anyio
import httpx
from typing_extensions import Self

from . import _operations as ops
from ._core import ResumeCursor, StreamCursor
from .errors import ProblemError
from .events import Event
from .sse import SSEDecoder

__all__ = ["AsyncEventStream", "AsyncResumableStream", "EventStream", "ResumableStream"]

T = TypeVar("T")

Open = Callable[[ops.Call[None]], httpx.Response]
AsyncOpen = Callable[[ops.Call[None]], Awaitable[httpx.Response]]


class ResumableStream(Generic[T]):
    """The items of an SSE stream that resumes after a drop (blocking): a cursor says
    what each connection asks for, reads each frame and decides about retries; this
    class connects, decodes and yields. Iterate it, ideally in a ``with`` block so an
    abandoned stream closes its connection at once.
    """

    def __init__(self, open: Open, cursor: ResumeCursor[T]) -> None:
        self._open = open
        self._cursor = cursor
        self._items = self._run()

    @property
    def last_sequence(self) -> int:
        """The sequence of the last frame delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether the stream's last frame was delivered (the stream is over)."""
        return self._cursor.ended()

    @property
    def connections(self) -> int:
        """How many connections the stream has opened so far."""
        return self._cursor.connections

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> T:
        return next(self._items)

    def close(self) -> None:
        """Stop the stream and close its connection."""
        self._items.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[T, None, None]:
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
                        item = cursor.accept(frame)
                        if item is not None:
                            yield item
                        if cursor.ended():
                            return
                for frame in decoder.close():
                    item = cursor.accept(frame)
                    if item is not None:
                        yield item
            except httpx.TransportError as error:
                failure = error
            finally:
                response.close()
            if not cursor.ended():
                time.sleep(cursor.dropped(failure))


class AsyncResumableStream(Generic[T]):
    """The async twin of :class:`ResumableStream`: iterate it with ``async for``, in an
    ``async with`` block so an abandoned stream closes its connection.
    """

    def __init__(self, open: AsyncOpen, cursor: ResumeCursor[T]) -> None:
        self._open = open
        self._cursor = cursor
        self._items = self._run()

    @property
    def last_sequence(self) -> int:
        """The sequence of the last frame delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether the stream's last frame was delivered (the stream is over)."""
        return self._cursor.ended()

    @property
    def connections(self) -> int:
        """How many connections the stream has opened so far."""
        return self._cursor.connections

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> T:
        return await self._items.__anext__()

    async def aclose(self) -> None:
        """Stop the stream and close its connection."""
        await self._items.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[T, None]:
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
                        item = cursor.accept(frame)
                        if item is not None:
                            yield item
                        if cursor.ended():
                            return
                for frame in decoder.close():
                    item = cursor.accept(frame)
                    if item is not None:
                        yield item
            except httpx.TransportError as error:
                failure = error
            finally:
                await response.aclose()
            if not cursor.ended():
                await anyio.sleep(cursor.dropped(failure))


class EventStream(ResumableStream[Event]):
    """Iterate a session's events (blocking); see the module doc for what it promises.

    Use it as an iterator, ideally in a ``with`` block so an abandoned stream closes its
    connection at once::

        with client.events("s1") as events:
            for event in events:
                ...
    """

    def __init__(self, open: Open, cursor: StreamCursor) -> None:
        super().__init__(open, cursor)

    @property
    def last_sequence(self) -> int:
        """The sequence of the last event delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether ``sessionEnded`` was delivered (the stream is over)."""
        return self._cursor.ended()


class AsyncEventStream(AsyncResumableStream[Event]):
    """Iterate a session's events with ``async for``; see the module doc.

    Use it in an ``async with`` block so an abandoned stream closes its connection::

        async with client.events("s1") as events:
            async for event in events:
                ...
    """

    def __init__(self, open: AsyncOpen, cursor: StreamCursor) -> None:
        super().__init__(open, cursor)

    @property
    def last_sequence(self) -> int:
        """The sequence of the last event delivered (the ``offset`` before the first)."""
        return self._cursor.last_sequence

    @property
    def ended(self) -> bool:
        """Whether ``sessionEnded`` was delivered (the stream is over)."""
        return self._cursor.ended()
