"""A process's terminal over a WebSocket: what a ``tty: true`` process writes, as it writes
it, and what is typed into it.

A process started with ``tty=True`` runs on a pseudo-terminal of the daemon; its output is
also logged (as ``stdout`` chunks). ``GET .../terminal`` (``openTerminal``) upgrades to a
WebSocket carrying the terminal's bytes both ways: binary frames are output from the daemon
(first what the log still keeps, so a new connection redraws the screen, then live) and
input to it. Text frames are JSON messages tagged by ``type``: ``input`` (text typed in)
and ``resize`` go to the daemon; ``exit`` comes from it when the process ends (the daemon
closes the socket after it), and ``error`` when it could not act on a frame (the socket
stays open). Closing the socket leaves the process running.

A browser cannot send the ``Authorization`` header on a WebSocket, so the daemon mints
tickets (``POST .../terminal-ticket``): each opens one connection within 30 s. The
clients' ``open_terminal`` mints a fresh one for every connection unless given one.

:class:`Terminal` (blocking, on ``websockets.sync``) and :class:`AsyncTerminal` (asyncio,
on ``websockets.asyncio``) are that socket. They need the ``websockets`` package: install
the SDK with its ``terminal`` extra (``pip install 'sandbox-daemon[terminal]'``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ProblemError, StreamError, TransportError

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection as AsyncConnection
    from websockets.sync.client import ClientConnection as SyncConnection

__all__ = ["AsyncTerminal", "Terminal", "TerminalExit", "websocket_url"]

EXTRA = "terminal"
"""The SDK's optional extra that brings the ``websockets`` package."""

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


class TerminalExit(BaseModel):
    """How a terminal's process ended (its ``exit`` frame): ``exit_code`` when it exited,
    ``signal`` when a signal ended it.
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True)

    exit_code: Annotated[int | None, Field(alias="exitCode")] = None
    """Its exit code, when it exited."""
    signal: int | None = None
    """The signal that ended it, when one did."""


def websocket_url(base_url: str, path: str) -> str:
    """The ``ws://`` (``wss://`` for ``https://``) URL of ``path`` on the daemon at
    ``base_url`` (``path`` is relative to it, as a terminal ticket's ``path`` is).
    """
    scheme, separator, rest = base_url.partition("://")
    websocket = _SCHEMES.get(scheme.lower())
    if not separator or websocket is None:
        raise ValueError(f"{base_url!r} is not an http://, https://, ws:// or wss:// address")
    return f"{websocket}://{rest.rstrip('/')}{path}"


def _missing_websockets(error: ImportError) -> ImportError:
    missing = ImportError(
        "a terminal needs the websockets package: install the SDK with its "
        f"`{EXTRA}` extra (pip install 'sandbox-daemon[{EXTRA}]')"
    )
    missing.__cause__ = error
    return missing


def require_websockets() -> None:
    """Raise an :class:`ImportError` saying how to install ``websockets`` when it is
    missing (before a ticket is minted for nothing).
    """
    try:
        import websockets  # noqa: F401
    except ImportError as error:
        raise _missing_websockets(error) from error


def _shown(url: str) -> str:
    """The URL without its query: a ticket is not repeated in error messages."""
    return url.partition("?")[0]


def _refused(error: Exception, url: str) -> ProblemError | TransportError:
    """The error to raise for a connection that could not be opened: the daemon's problem
    details when it refused the handshake, else a transport error.
    """
    from websockets.exceptions import InvalidStatus

    if isinstance(error, InvalidStatus):
        response = error.response
        return ProblemError.from_answer(
            status=response.status_code,
            reason=response.reason_phrase,
            headers=response.headers.raw_items(),
            body=bytes(response.body),
            method="GET",
            url=_shown(url),
        )
    return TransportError(
        f"GET {_shown(url)} (WebSocket) failed: {type(error).__name__}: {error}", attempts=1
    )


def _input(data: str) -> str:
    return json.dumps({"type": "input", "data": data})


def _resize(cols: int, rows: int) -> str:
    return json.dumps({"type": "resize", "cols": cols, "rows": rows})


class _Frames:
    """What both terminals make of the daemon's text frames."""

    def __init__(self, session_id: str, process_id: str) -> None:
        self.session_id = session_id
        self.process_id = process_id
        self.exit: TerminalExit | None = None
        self.errors: list[str] = []
        self.ended = False
        self.closed_here = False

    @property
    def what(self) -> str:
        return f"the terminal of process {self.process_id} of session {self.session_id}"

    def control(self, text: str) -> None:
        """Take in a text frame: ``exit`` ends the terminal, ``error`` is noted, a frame of
        a type this SDK does not know (a newer daemon) is skipped.
        """
        try:
            message: Any = json.loads(text)
        except ValueError as error:
            raise StreamError(f"a text frame of {self.what} is not JSON: {text!r}") from error
        if not isinstance(message, dict):
            raise StreamError(f"a text frame of {self.what} is not a JSON object: {text!r}")
        kind = message.get("type")
        if kind == "exit":
            fields = {k: v for k, v in message.items() if k != "type"}
            try:
                self.exit = TerminalExit.model_validate(fields)
            except ValidationError as error:
                raise StreamError(f"the `exit` frame of {self.what}: {error}") from error
            self.ended = True
        elif kind == "error":
            self.errors.append(str(message.get("message", "")))

    def closed(self) -> StreamError:
        """The error of a terminal used after its socket closed."""
        if self.exit is not None:
            return StreamError(f"{self.what} is closed: its process ended")
        if self.closed_here:
            return StreamError(f"{self.what} is closed: it was closed before the process's exit")
        return StreamError(
            f"{self.what} closed before the process's exit arrived (the process may still "
            "be running: open the terminal again, or see get_process)"
        )


class AsyncTerminal:
    r"""An open terminal of a process (asyncio): :meth:`send` types into it,
    :meth:`resize` resizes it, ``async for`` reads its output as bytes (first what the
    daemon's log still keeps, then live) until the process ends, and :meth:`wait` answers
    how it ended (:class:`TerminalExit`).

    Opened by :meth:`AsyncClient.open_terminal <sandbox_daemon.AsyncClient.open_terminal>`;
    use it in an ``async with`` block, which closes the socket (the process goes on
    running)::

        async with await client.open_terminal("s1", "p1") as terminal:
            await terminal.send("echo $((6*7))\r")
            async for output in terminal:
                print(output.decode(errors="replace"), end="")

    One task reads at a time; frames the daemon could not act on (a bad size) are in
    :attr:`errors`.
    """

    def __init__(self, connection: AsyncConnection, session_id: str, process_id: str) -> None:
        self._socket = connection
        self._frames = _Frames(session_id, process_id)
        self._reading = asyncio.Lock()
        self.session_id = session_id
        self.process_id = process_id

    @classmethod
    async def connect(
        cls,
        url: str,
        session_id: str,
        process_id: str,
        *,
        headers: Mapping[str, str],
        open_timeout: float | None,
    ) -> AsyncTerminal:
        """Open the terminal's WebSocket at ``url`` (one try: a ticket opens one
        connection). A refused handshake raises :class:`~sandbox_daemon.ProblemError`, a
        daemon that cannot be reached :class:`~sandbox_daemon.TransportError`.
        """
        try:
            from websockets.asyncio.client import connect
            from websockets.exceptions import InvalidHandshake
        except ImportError as error:
            raise _missing_websockets(error) from error
        try:
            connection = await connect(
                url,
                additional_headers=dict(headers),
                user_agent_header=None,
                open_timeout=open_timeout,
            )
        except (OSError, TimeoutError, asyncio.TimeoutError, InvalidHandshake) as error:
            raise _refused(error, url) from error
        return cls(connection, session_id, process_id)

    def __repr__(self) -> str:
        return f"AsyncTerminal({self.session_id!r}, {self.process_id!r})"

    @property
    def exit(self) -> TerminalExit | None:
        """How the process ended, once its ``exit`` frame arrived."""
        return self._frames.exit

    @property
    def ended(self) -> bool:
        """Whether no more output will come: the exit arrived, or the socket closed."""
        return self._frames.ended

    @property
    def errors(self) -> list[str]:
        """The messages of the ``error`` frames so far: frames the daemon could not act on."""
        return self._frames.errors

    async def send(self, data: str | bytes) -> None:
        r"""Type ``data`` into the terminal: text (an ``input`` frame), or bytes as they are
        (a binary frame; e.g. ``b"\x03"`` for Ctrl-C). End a command with ``"\r"``, the
        Enter key.
        """
        from websockets.exceptions import ConnectionClosed

        message = data if isinstance(data, bytes) else _input(data)
        try:
            await self._socket.send(message)
        except ConnectionClosed as error:
            raise self._frames.closed() from error

    async def resize(self, cols: int, rows: int) -> None:
        """Resize the terminal to ``cols`` columns and ``rows`` rows (1 to 1,000 each; the
        process gets SIGWINCH). A size the daemon refuses comes back as an ``error`` frame
        (see :attr:`errors`).
        """
        from websockets.exceptions import ConnectionClosed

        try:
            await self._socket.send(_resize(cols, rows))
        except ConnectionClosed as error:
            raise self._frames.closed() from error

    async def read(self) -> bytes | None:
        """The next output, or ``None`` once there is no more (the exit arrived, or the
        socket closed).
        """
        from websockets.exceptions import ConnectionClosed

        async with self._reading:
            while not self._frames.ended:
                try:
                    message = await self._socket.recv()
                except ConnectionClosed:
                    self._frames.ended = True
                    break
                if isinstance(message, bytes):
                    return message
                self._frames.control(message)
                if self._frames.exit is not None:
                    # The daemon closes the socket after the exit: close it on this side too,
                    # so the terminal is closed from here on.
                    await self._socket.close()
            return None

    def __aiter__(self) -> AsyncTerminal:
        return self

    async def __anext__(self) -> bytes:
        output = await self.read()
        if output is None:
            raise StopAsyncIteration
        return output

    async def wait(self) -> TerminalExit:
        """Read on to the process's end and answer how it ended. Output it reads is
        dropped: iterate to see it (the iteration stops at the exit; this then answers at
        once). A socket that closes first raises :class:`~sandbox_daemon.StreamError`.
        """
        while await self.read() is not None:
            pass
        if self.exit is None:
            raise self._frames.closed()
        return self.exit

    async def aclose(self) -> None:
        """Close the socket; the process goes on running (stop or kill it to end it)."""
        self._frames.ended = self._frames.closed_here = True
        await self._socket.close()

    async def __aenter__(self) -> AsyncTerminal:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class Terminal:
    r"""An open terminal of a process (blocking): :meth:`send` types into it,
    :meth:`resize` resizes it, iterating reads its output as bytes (first what the
    daemon's log still keeps, then live) until the process ends, and :meth:`wait` answers
    how it ended (:class:`TerminalExit`).

    Opened by :meth:`Client.open_terminal <sandbox_daemon.Client.open_terminal>`; use it in
    a ``with`` block, which closes the socket (the process goes on running)::

        with client.open_terminal("s1", "p1") as terminal:
            terminal.send("echo $((6*7))\r")
            for output in terminal:
                print(output.decode(errors="replace"), end="")

    :meth:`read` and :meth:`wait` take a ``timeout``. One thread reads at a time; frames
    the daemon could not act on (a bad size) are in :attr:`errors`.
    """

    def __init__(self, connection: SyncConnection, session_id: str, process_id: str) -> None:
        self._socket = connection
        self._frames = _Frames(session_id, process_id)
        self._reading = threading.Lock()
        self.session_id = session_id
        self.process_id = process_id

    @classmethod
    def connect(
        cls,
        url: str,
        session_id: str,
        process_id: str,
        *,
        headers: Mapping[str, str],
        open_timeout: float | None,
    ) -> Terminal:
        """Open the terminal's WebSocket at ``url`` (one try: a ticket opens one
        connection). A refused handshake raises :class:`~sandbox_daemon.ProblemError`, a
        daemon that cannot be reached :class:`~sandbox_daemon.TransportError`.
        """
        try:
            from websockets.exceptions import InvalidHandshake
            from websockets.sync.client import connect
        except ImportError as error:
            raise _missing_websockets(error) from error
        try:
            connection = connect(
                url,
                additional_headers=dict(headers),
                user_agent_header=None,
                open_timeout=open_timeout,
                legacy=True,  # the connection itself: this terminal closes it
            )
        except (OSError, TimeoutError, InvalidHandshake) as error:
            raise _refused(error, url) from error
        return cls(connection, session_id, process_id)

    def __repr__(self) -> str:
        return f"Terminal({self.session_id!r}, {self.process_id!r})"

    @property
    def exit(self) -> TerminalExit | None:
        """How the process ended, once its ``exit`` frame arrived."""
        return self._frames.exit

    @property
    def ended(self) -> bool:
        """Whether no more output will come: the exit arrived, or the socket closed."""
        return self._frames.ended

    @property
    def errors(self) -> list[str]:
        """The messages of the ``error`` frames so far: frames the daemon could not act on."""
        return self._frames.errors

    def send(self, data: str | bytes) -> None:
        r"""Type ``data`` into the terminal: text (an ``input`` frame), or bytes as they are
        (a binary frame; e.g. ``b"\x03"`` for Ctrl-C). End a command with ``"\r"``, the
        Enter key.
        """
        from websockets.exceptions import ConnectionClosed

        message = data if isinstance(data, bytes) else _input(data)
        try:
            self._socket.send(message)
        except ConnectionClosed as error:
            raise self._frames.closed() from error

    def resize(self, cols: int, rows: int) -> None:
        """Resize the terminal to ``cols`` columns and ``rows`` rows (1 to 1,000 each; the
        process gets SIGWINCH). A size the daemon refuses comes back as an ``error`` frame
        (see :attr:`errors`).
        """
        from websockets.exceptions import ConnectionClosed

        try:
            self._socket.send(_resize(cols, rows))
        except ConnectionClosed as error:
            raise self._frames.closed() from error

    def read(self, timeout: float | None = None) -> bytes | None:
        """The next output, or ``None`` once there is no more (the exit arrived, or the
        socket closed). Waits up to ``timeout`` seconds (``None``: as long as it takes),
        then raises :class:`TimeoutError`.
        """
        from websockets.exceptions import ConnectionClosed

        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._reading.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            raise TimeoutError(f"another thread is reading {self._frames.what}")
        try:
            while not self._frames.ended:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    message = self._socket.recv(left)
                except ConnectionClosed:
                    self._frames.ended = True
                    break
                if isinstance(message, bytes):
                    return message
                self._frames.control(message)
                if self._frames.exit is not None:
                    # The daemon closes the socket after the exit: close it on this side too,
                    # so the terminal is closed from here on.
                    self._socket.close()
            return None
        finally:
            self._reading.release()

    def __iter__(self) -> Iterator[bytes]:
        while (output := self.read()) is not None:
            yield output

    def wait(self, timeout: float | None = None) -> TerminalExit:
        """Read on to the process's end and answer how it ended, within ``timeout``
        seconds (``None``: as long as it takes; then :class:`TimeoutError`). Output it
        reads is dropped: iterate to see it (the iteration stops at the exit; this then
        answers at once). A socket that closes first raises
        :class:`~sandbox_daemon.StreamError`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self.read(left) is None:
                break
        if self.exit is None:
            raise self._frames.closed()
        return self.exit

    def close(self) -> None:
        """Close the socket; the process goes on running (stop or kill it to end it)."""
        self._frames.ended = self._frames.closed_here = True
        self._socket.close()

    def __enter__(self) -> Terminal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
