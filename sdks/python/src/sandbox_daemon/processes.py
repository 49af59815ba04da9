"""The processes API of a session: a followed log's frames, and the stream that follows it.

A long-running process's output is a numbered log of chunks (``LogChunk``: ``sequence``
from 1, contiguous; ``stream`` stdout or stderr; ``data`` as text). The daemon keeps the
newest ``--process-log-bytes`` of it; chunks dropped before a reader got them are reported
as a :class:`LogGap`. Following a log (``GET .../logs?follow=true``) is an SSE stream of
``log`` frames (``id`` = the chunk's sequence), ``gap`` frames and one last ``exit`` frame
(the process as it ended), after which the daemon closes it.

:class:`ProcessLogStream` (and :class:`AsyncProcessLogStream`) yield those frames as
:data:`LogFrame` items and resume by themselves after a dropped connection, with
``Last-Event-ID`` = the last sequence delivered, as the event streams do (the same
machinery): every chunk arrives once, in order; a duplicate after a resume is skipped, and
chunks missing without a ``gap`` frame raise :class:`~sandbox_daemon.StreamError`.
"""

from __future__ import annotations

from typing import Annotated, TypeAlias

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import _operations as ops
from ._core import ReconnectHook, ResumeCursor
from ._generated.models import LogChunk, ProcessInfo
from .errors import StreamError
from .retry import RetryPolicy
from .sse import ServerSentEvent
from .stream import AsyncOpen, AsyncResumableStream, Open, ResumableStream

__all__ = [
    "DEFAULT_RUN_TIMEOUT",
    "AsyncProcessLogStream",
    "LogFrame",
    "LogGap",
    "ProcessLogStream",
]

DEFAULT_RUN_TIMEOUT = 60.0
"""Seconds a run may take when it names no ``timeout_ms`` (the daemon's default,
60,000 ms)."""


class LogGap(BaseModel):
    """Chunks ``from_`` to ``to`` (both included) of a process's log were dropped before
    this reader got them, to keep the log within the daemon's ``--process-log-bytes``
    (a ``gap`` frame; on the wire ``{"from": ..., "to": ...}``).
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True)

    from_: Annotated[int, Field(alias="from", ge=1)]
    """The first sequence dropped."""
    to: Annotated[int, Field(ge=1)]
    """The last sequence dropped."""

    @property
    def count(self) -> int:
        """How many chunks were dropped."""
        return self.to - self.from_ + 1


LogFrame: TypeAlias = LogChunk | LogGap | ProcessInfo
"""One item of a followed log: a chunk of output, a gap (chunks dropped), or — last — the
process as it ended (its ``exit`` frame)."""


def run_timeouts(timeout: httpx.Timeout, timeout_ms: int | None) -> httpx.Timeout:
    """The timeouts of a ``runProcess`` call: the daemon answers when the program ends, so
    the wait for its answer is the run's own timeout (``timeout_ms``, default 60 s) plus the
    client's read timeout (``None`` stays unbounded).
    """
    run = DEFAULT_RUN_TIMEOUT if timeout_ms is None else timeout_ms / 1000
    read = None if timeout.read is None else timeout.read + run
    return httpx.Timeout(connect=timeout.connect, read=read, write=timeout.write, pool=timeout.pool)


class LogCursor(ResumeCursor[LogFrame]):
    """The cursor of a followed process log. It checks the daemon's promises — a ``log``
    frame's ``id`` is its chunk's sequence, sequences follow each other unless a ``gap``
    says which were dropped, and ``exit`` comes after the last chunk — so a resumed stream
    delivers every chunk once and in order, or fails loudly. Frames of a kind it does not
    know (a newer daemon) are skipped.
    """

    last_frame = "the process's exit"

    def __init__(
        self,
        session_id: str,
        process_id: str,
        offset: int,
        policy: RetryPolicy,
        on_reconnect: ReconnectHook | None,
    ) -> None:
        super().__init__(offset, policy, on_reconnect)
        self.session_id = session_id
        self.process_id = process_id
        self.what = f"the log of process {process_id} of session {session_id}"
        self.exit: ProcessInfo | None = None

    def request(self, last_event_id: int | None) -> ops.Call[None]:
        """``processLogs`` with ``follow=true`` from ``offset``, or after ``last_event_id``."""
        return ops.follow_process_logs(self.session_id, self.process_id, self.offset, last_event_id)

    def accept(self, frame: ServerSentEvent) -> LogFrame | None:
        """The chunk, gap or exit a frame carries, or ``None`` for one to skip."""
        if frame.event == "log":
            return self._chunk(frame)
        if frame.event == "gap":
            return self._gap(frame)
        if frame.event == "exit":
            return self._exit(frame)
        return None

    def _unreadable(self, frame: ServerSentEvent, model: type[BaseModel]) -> str:
        return f"a `{frame.event}` frame of {self.what} is not a {model.__name__}"

    def _chunk(self, frame: ServerSentEvent) -> LogChunk | None:
        try:
            chunk = LogChunk.model_validate_json(frame.data)
        except ValidationError as error:
            raise StreamError(f"{self._unreadable(frame, LogChunk)}: {error}") from error
        if frame.id is not None and frame.id != str(chunk.sequence):
            raise StreamError(
                f"frame id {frame.id!r} differs from its chunk's sequence {chunk.sequence}"
            )
        if chunk.sequence <= self.last_sequence:
            self.duplicates_skipped += 1
            return None
        if chunk.sequence != self.last_sequence + 1:
            raise StreamError(
                f"{self.what} skipped from {self.last_sequence} to {chunk.sequence} without "
                "a gap frame: the stream lost chunks"
            )
        self.delivered(chunk.sequence)
        return chunk

    def _gap(self, frame: ServerSentEvent) -> LogGap | None:
        try:
            gap = LogGap.model_validate_json(frame.data)
        except ValidationError as error:
            raise StreamError(f"{self._unreadable(frame, LogGap)}: {error}") from error
        if gap.to <= self.last_sequence:
            self.duplicates_skipped += 1
            return None
        if gap.from_ != self.last_sequence + 1 or gap.to < gap.from_:
            raise StreamError(
                f"{self.what} reported chunks {gap.from_} to {gap.to} dropped after sequence "
                f"{self.last_sequence}: the stream lost chunks"
            )
        self.delivered(gap.to)
        return gap

    def _exit(self, frame: ServerSentEvent) -> ProcessInfo:
        try:
            info = ProcessInfo.model_validate_json(frame.data)
        except ValidationError as error:
            raise StreamError(f"{self._unreadable(frame, ProcessInfo)}: {error}") from error
        if info.last_sequence > self.last_sequence:
            raise StreamError(
                f"{self.what} ended at sequence {info.last_sequence} but the stream delivered "
                f"up to {self.last_sequence}: the stream lost chunks"
            )
        self.failures = 0
        self.exit = info
        self.finish()
        return info


class ProcessLogStream(ResumableStream[LogFrame]):
    """Follow a process's log (blocking): :class:`~sandbox_daemon.models.LogChunk` s as
    they are written, a :class:`LogGap` where chunks were dropped before they could be
    read, and last the process as it ended (a ``ProcessInfo``, also :attr:`exit`); then
    the iteration stops. See the module doc for what it promises across dropped
    connections.

    Use it in a ``with`` block so an abandoned stream closes its connection at once::

        with client.follow_process_logs("s1", "p1") as logs:
            for frame in logs:
                if isinstance(frame, LogChunk):
                    print(frame.data, end="")
        print(logs.exit.exit_code)
    """

    def __init__(self, open: Open, cursor: LogCursor) -> None:
        super().__init__(open, cursor)
        self._log = cursor

    @property
    def exit(self) -> ProcessInfo | None:
        """The process as it ended (its ``exit`` frame), once it arrived."""
        return self._log.exit

    @property
    def ended(self) -> bool:
        """Whether the ``exit`` frame was delivered (the stream is over)."""
        return self._log.ended()


class AsyncProcessLogStream(AsyncResumableStream[LogFrame]):
    """Follow a process's log with ``async for``; see :class:`ProcessLogStream`.

    Use it in an ``async with`` block so an abandoned stream closes its connection::

        async with client.follow_process_logs("s1", "p1") as logs:
            async for frame in logs:
                ...
    """

    def __init__(self, open: AsyncOpen, cursor: LogCursor) -> None:
        super().__init__(open, cursor)
        self._log = cursor

    @property
    def exit(self) -> ProcessInfo | None:
        """The process as it ended (its ``exit`` frame), once it arrived."""
        return self._log.exit

    @property
    def ended(self) -> bool:
        """Whether the ``exit`` frame was delivered (the stream is over)."""
        return self._log.ended()
