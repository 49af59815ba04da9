"""Local mode: run a ``sandbox-daemon`` binary on this machine for as long as you need it.

The daemon listens on a free loopback port (``--port 0``), keeps its store in a temporary
``--data-dir`` (unless given one), and requires a random bearer token handed over in its
environment (``SANDBOX_DAEMON_TOKEN``), never on its command line where every local user
could read it. The daemon says where it listens on stderr
(``sandbox-daemon listening on http://127.0.0.1:PORT``); both of its output streams are
read (and kept, last lines only) for as long as it runs, so it never blocks on a full pipe.
It is stopped at the end of the ``with`` block, by :meth:`stop`, or when the interpreter
exits.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

import anyio.to_thread
import httpx

from ._core import DEFAULT_STREAM_READ_TIMEOUT
from .async_client import AsyncClient
from .client import Client
from .errors import DaemonStartError
from .retry import RetryPolicy

__all__ = ["BINARY_ENV", "LocalDaemon", "find_binary"]

BINARY_ENV = "SANDBOX_DAEMON_BIN"
"""The environment variable naming the daemon binary when none is given."""

BINARY_NAME = "sandbox-daemon"

_LISTENING = re.compile(r"listening on (http://\S+)")


def find_binary(binary: str | os.PathLike[str] | None = None) -> str:
    """The daemon binary to run: ``binary``, else ``$SANDBOX_DAEMON_BIN``, else
    ``sandbox-daemon`` on ``PATH``. Raises :class:`DaemonStartError` when none is usable.
    """
    if binary is not None:
        candidate, origin = os.fspath(binary), "the argument"
    elif os.environ.get(BINARY_ENV):
        candidate, origin = os.environ[BINARY_ENV], f"${BINARY_ENV}"
    else:
        found = shutil.which(BINARY_NAME)
        if found is None:
            raise DaemonStartError(
                f"no daemon binary: pass one, set {BINARY_ENV}, or put {BINARY_NAME} on PATH"
            )
        candidate, origin = found, "PATH"
    path = Path(candidate)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise DaemonStartError(f"{candidate} (from {origin}) is not an executable file")
    return str(path)


class LocalDaemon:
    """A daemon process of this machine, started and stopped by the SDK.

    ::


        with LocalDaemon() as daemon, daemon.client() as client:
            print(client.health().version)

    ``binary`` defaults as :func:`find_binary` says. ``data_dir`` defaults to a temporary
    directory removed at :meth:`stop`. ``args`` are extra daemon flags (e.g.
    ``["--idle-timeout", "0"]``); ``env`` replaces the environment it inherits.
    ``startup_timeout`` bounds the wait for it to listen and answer ``/health``.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        *,
        token: str | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        startup_timeout: float = 30.0,
        stop_timeout: float = 10.0,
    ) -> None:
        self._binary = binary
        self.token = token or secrets.token_urlsafe(32)
        """The bearer token the daemon requires."""
        self._data_dir = None if data_dir is None else os.fspath(data_dir)
        self._own_data_dir = False
        self._args = list(args)
        self._env = None if env is None else dict(env)
        self._host = host
        self._startup_timeout = startup_timeout
        self._stop_timeout = stop_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._readers: list[threading.Thread] = []
        self._output: collections.deque[str] = collections.deque(maxlen=200)
        self._listening = threading.Event()
        self._pipes_lock = threading.Lock()
        self._open_pipes = 0
        self._base_url: str | None = None
        self._lock = threading.Lock()

    # --- facts ----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """Where the daemon listens, e.g. ``http://127.0.0.1:40123``."""
        if self._base_url is None:
            raise RuntimeError("the daemon is not running: call start() first")
        return self._base_url

    @property
    def data_dir(self) -> str:
        """The daemon's ``--data-dir``."""
        if self._data_dir is None:
            raise RuntimeError("the daemon has not been started")
        return self._data_dir

    @property
    def pid(self) -> int | None:
        """The daemon's process id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def output(self) -> str:
        """The daemon's last lines of output (stdout and stderr), for diagnostics."""
        return "\n".join(self._output)

    # --- clients --------------------------------------------------------------------------

    def client(
        self,
        *,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        stream_read_timeout: float | None = DEFAULT_STREAM_READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Client:
        """A :class:`Client` of this daemon, with its token unless ``token`` is given."""
        return Client(
            self.base_url,
            token=self.token if token is None else token,
            timeout=timeout,
            stream_read_timeout=stream_read_timeout,
            retry=retry,
            headers=headers,
        )

    def async_client(
        self,
        *,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        stream_read_timeout: float | None = DEFAULT_STREAM_READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncClient:
        """An :class:`AsyncClient` of this daemon, with its token unless ``token`` is given."""
        return AsyncClient(
            self.base_url,
            token=self.token if token is None else token,
            timeout=timeout,
            stream_read_timeout=stream_read_timeout,
            retry=retry,
            headers=headers,
        )

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> LocalDaemon:
        """Start the daemon and wait until it answers ``/health``."""
        with self._lock:
            if self._process is not None:
                raise RuntimeError("the daemon is already started")
            binary = find_binary(self._binary)
            if self._data_dir is None:
                self._data_dir = tempfile.mkdtemp(prefix="sandbox-daemon-")
                self._own_data_dir = True
            env = dict(os.environ if self._env is None else self._env)
            env.pop("SANDBOX_DAEMON_TOKEN_FILE", None)
            env["SANDBOX_DAEMON_TOKEN"] = self.token
            command = [binary, "--host", self._host, "--port", "0"]
            command += ["--data-dir", self._data_dir, *self._args]
            try:
                self._process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                )
            except OSError as error:
                self._cleanup_data_dir()
                raise DaemonStartError(f"could not run {binary}: {error}") from error
            atexit.register(self.stop)
            pipes = [self._process.stdout, self._process.stderr]
            self._readers = [
                threading.Thread(target=self._read, args=(pipe,), daemon=True)
                for pipe in pipes
                if pipe is not None
            ]
            self._open_pipes = len(self._readers)
            for reader in self._readers:
                reader.start()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _read(self, pipe: IO[bytes]) -> None:
        # Drains one pipe for the life of the process (a full pipe would block the daemon).
        for raw in pipe:
            line = raw.decode("utf-8", "replace").rstrip()
            self._output.append(line)
            match = _LISTENING.search(line)
            if match and self._base_url is None:
                self._base_url = match.group(1).rstrip("/")
                self._listening.set()
        with self._pipes_lock:
            self._open_pipes -= 1
            if self._open_pipes == 0:
                self._listening.set()  # all output is over: the process is gone

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._startup_timeout
        self._listening.wait(self._startup_timeout)
        if self._base_url is None:
            if self._process is not None:
                # Its output is over: let it finish exiting, to tell its status.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(1.0)
            raise DaemonStartError(self._failure("did not say where it listens"))
        with httpx.Client(base_url=self._base_url, timeout=5.0) as http:
            delay = 0.01
            while True:
                try:
                    if http.get("/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if not self.running or time.monotonic() + delay > deadline:
                    raise DaemonStartError(self._failure("did not answer /health"))
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _failure(self, what: str) -> str:
        process = self._process
        code = process.poll() if process is not None else None
        state = f"exited with {code}" if code is not None else "still running"
        return f"the daemon {what} ({state}); its output:\n{self.output}"

    def stop(self) -> None:
        """Stop the daemon (SIGTERM, then SIGKILL after ``stop_timeout``) and remove its
        temporary data dir. Safe to call more than once.
        """
        with self._lock:
            process, self._process = self._process, None
            atexit.unregister(self.stop)
            if process is not None:
                if process.poll() is None:
                    process.terminate()
                    try:
                        process.wait(self._stop_timeout)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()
                for reader in self._readers:
                    reader.join(self._stop_timeout)
                for pipe in (process.stdout, process.stderr):
                    if pipe is not None:
                        pipe.close()
            self._readers = []
            self._base_url = None
            self._listening.clear()
            self._cleanup_data_dir()

    def _cleanup_data_dir(self) -> None:
        if self._own_data_dir and self._data_dir is not None:
            shutil.rmtree(self._data_dir, ignore_errors=True)
            self._data_dir = None
            self._own_data_dir = False

    def __enter__(self) -> LocalDaemon:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> LocalDaemon:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)
