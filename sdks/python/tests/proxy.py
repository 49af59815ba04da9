"""A tiny loopback TCP proxy that breaks connections on purpose.

Connection ``i`` has its answer cut after ``cuts[i]`` bytes (mid-frame, mid-chunk: wherever
the count falls); later connections pass whole. Each connection's request and answer bytes
are kept (``requests``, ``answers``). :meth:`stop` kills the listener and every
connection; :meth:`start` brings the listener back on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Sequence
from types import TracebackType


class Proxy:
    """Forwards 127.0.0.1:<port> to ``target``, cutting answers as told."""

    def __init__(self, target: tuple[str, int], cuts: Sequence[int] = ()) -> None:
        self.target = target
        self.cuts = list(cuts)
        self.port = 0
        self.connections = 0
        self.requests: list[bytearray] = []
        self.answers: list[bytearray] = []
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Proxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._spawn(self._accept, listener)
        return self

    def stop(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, set()
        if listener is not None:
            _kill(listener)
        for sock in sockets:
            _kill(sock)

    def close(self) -> None:
        self.stop()
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def last_event_ids(self) -> list[str | None]:
        """The ``Last-Event-ID`` header of each connection's request (None: absent)."""
        found: list[str | None] = []
        for request in self.requests:
            head = bytes(request).split(b"\r\n\r\n", 1)[0].decode("latin-1")
            value = None
            for line in head.split("\r\n")[1:]:
                name, _, rest = line.partition(":")
                if name.strip().lower() == "last-event-id":
                    value = rest.strip()
            found.append(value)
        return found

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                _kill(client)
                continue
            with self._lock:
                index = self.connections
                self.connections += 1
                self.requests.append(bytearray())
                self.answers.append(bytearray())
                self._sockets |= {client, upstream}
            limit = self.cuts[index] if index < len(self.cuts) else None
            self._spawn(self._pump_request, client, upstream, self.requests[index])
            self._spawn(self._pump_answer, upstream, client, limit, self.answers[index])

    def _pump_request(self, client: socket.socket, upstream: socket.socket, log: bytearray) -> None:
        try:
            while data := client.recv(65536):
                log += data
                upstream.sendall(data)
        except OSError:
            pass

    def _pump_answer(
        self, upstream: socket.socket, client: socket.socket, limit: int | None, log: bytearray
    ) -> None:
        sent = 0
        try:
            while data := upstream.recv(65536):
                if limit is not None and sent + len(data) >= limit:
                    log += data[: limit - sent]
                    client.sendall(data[: limit - sent])
                    break
                log += data
                client.sendall(data)
                sent += len(data)
        except OSError:
            pass
        _kill(client)
        _kill(upstream)


def _kill(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
