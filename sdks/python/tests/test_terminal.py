"""Terminals against the real daemon: bash started with ``tty=True``, opened over a
WebSocket with a fresh ticket; typed input and its output, a resize the process sees, its
exit; a reconnect replays the screen; tickets open one connection each; what is refused.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    LocalDaemon,
    ProblemError,
    Session,
    StreamError,
    TerminalExit,
    TransportError,
)
from sandbox_daemon._operations import terminal_path
from sandbox_daemon.models import LogStream, ProcessStatus
from sandbox_daemon.terminal import _Frames, websocket_url

from .conftest import FAST_RETRY, SDK_DIR
from .recording import AsyncRecordingTransport, RecordingTransport
from .terminals import BASH, BASH_ENV, PATIENCE, PROMPT, aread_until, read_until


def slug(problem: ProblemError) -> str:
    return problem.type.rsplit(":", 1)[1]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def recorder() -> RecordingTransport:
    return RecordingTransport()


@pytest.fixture
def session(
    daemon: LocalDaemon, recorder: RecordingTransport, workspace: Path
) -> Iterator[Session]:
    with (
        Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c,
        c.start_session("mock", cwd=str(workspace)) as session,
    ):
        yield session


def test_bash_on_a_terminal_types_resizes_and_exits(
    session: Session, recorder: RecordingTransport
) -> None:
    name, args = BASH
    started = session.start_process(
        name, args, env=BASH_ENV, tty=True, size={"cols": 100, "rows": 30}
    )
    assert started.tty and started.status == ProcessStatus.running
    pid = started.process_id

    with session.open_terminal(pid) as terminal:
        seen = read_until(terminal, PROMPT)
        # A real terminal of the size asked for, with TERM set for it.
        terminal.send('[ -t 0 ] && stty size && echo "term=$TERM"\r')
        seen = read_until(terminal, "term=xterm-256color", seen)
        assert "30 100" in seen, seen
        terminal.send("echo $((6*7))\r")
        seen = read_until(terminal, "42\r\n", seen)

        # A resize reaches the process (bash learns it through SIGWINCH).
        terminal.resize(132, 43)
        terminal.send("stty size\r")
        seen = read_until(terminal, "43 132", seen)

        # Bytes are typed as they are (a binary frame).
        terminal.send(b"echo after-$((1+1))\r")
        seen = read_until(terminal, "after-2\r\n", seen)

        terminal.send("exit 3\r")
        ended = terminal.wait(timeout=PATIENCE)
        assert ended == TerminalExit(exit_code=3) and ended.signal is None
        assert terminal.exit == ended and terminal.ended
        assert terminal.read() is None and list(terminal) == []  # nothing follows the exit
        assert terminal.wait() == ended  # at once
        with pytest.raises(StreamError, match="closed: its process ended"):
            terminal.send("echo too late\r")
        assert terminal.errors == []

    info = session.get_process(pid)
    assert (info.status, info.exit_code, info.signal, info.tty) == (
        ProcessStatus.exited,
        3,
        None,
        True,
    )
    # The terminal's output is in the process's log too, as stdout.
    chunks = session.process_logs(pid).chunks
    assert {chunk.stream for chunk in chunks} == {LogStream.stdout}
    assert "42" in "".join(chunk.data for chunk in chunks)
    # One fresh ticket per connection; opening an exited process's terminal replays its
    # screen, then its exit.
    with session.open_terminal(pid) as again:
        assert "after-2" in b"".join(again).decode("utf-8", "replace")
        assert again.exit == ended
    assert recorder.statuses("createTerminalTicket") == [201, 201]


def test_tickets_open_one_connection_each(
    daemon: LocalDaemon, session: Session, recorder: RecordingTransport
) -> None:
    name, args = BASH
    one = session.start_process(name, args, env=BASH_ENV, tty=True)
    two = session.start_process(name, args, env=BASH_ENV, tty=True)

    ticket = session.create_terminal_ticket(one.process_id)
    assert daemon.token not in ticket.path and "ticket=" in ticket.path
    url = session.terminal_url(one.process_id, ticket.ticket)
    assert url == daemon.base_url.replace("http://", "ws://", 1) + ticket.path
    with session.open_terminal(one.process_id, ticket=ticket.ticket) as terminal:
        read_until(terminal, PROMPT)
    # The process goes on after its terminal closed; the ticket is used up.
    assert session.get_process(one.process_id).status == ProcessStatus.running
    with pytest.raises(ProblemError) as used:
        session.open_terminal(one.process_id, ticket=ticket.ticket)
    assert (used.value.status, slug(used.value)) == (401, "terminal-ticket-refused")
    assert ticket.ticket not in str(used.value)  # the URL is shown without its query
    # Another process's ticket, and a made-up one.
    other = session.create_terminal_ticket(two.process_id)
    for refused in (other.ticket, "made-up"):
        with pytest.raises(ProblemError) as wrong:
            session.open_terminal(one.process_id, ticket=refused)
        assert (wrong.value.status, slug(wrong.value)) == (401, "terminal-ticket-refused")

    # A process without a terminal has none to open; an unknown one is not found.
    piped = session.start_process("sleep", ["30"])
    assert not piped.tty
    for refuse in (
        lambda: session.create_terminal_ticket(piped.process_id),
        lambda: session.open_terminal(piped.process_id),
    ):
        with pytest.raises(ProblemError) as not_a_terminal:
            refuse()
        assert (not_a_terminal.value.status, slug(not_a_terminal.value)) == (
            409,
            "not-a-terminal",
        )
    with pytest.raises(ProblemError) as unknown:
        session.open_terminal("p999")
    assert (unknown.value.status, slug(unknown.value)) == (404, "process-not-found")
    # A size needs a terminal.
    with pytest.raises(ProblemError) as sized:
        session.start_process("sleep", ["30"], size={"cols": 80, "rows": 24})
    assert (sized.value.status, slug(sized.value)) == (422, "invalid-body")
    assert recorder.statuses("createTerminalTicket") == [201, 201, 409, 409, 404]

    for process in (one, two, piped):
        session.kill_process(process.process_id)


@pytest.mark.anyio
async def test_bash_on_a_terminal_async(
    daemon: LocalDaemon, session_id: str, workspace: Path
) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as client:
        session = await client.start_session("mock", session_id=session_id, cwd=str(workspace))
        name, args = BASH
        started = await session.start_process(
            name, args, env=BASH_ENV, tty=True, size={"cols": 100, "rows": 30}
        )
        pid = started.process_id
        async with await session.open_terminal(pid) as terminal:
            seen = await aread_until(terminal, PROMPT)
            await terminal.send("echo $((6*7))\r")
            seen = await aread_until(terminal, "42\r\n", seen)
            await terminal.resize(120, 40)
            await terminal.send("stty size\r")
            seen = await aread_until(terminal, "40 120", seen)
            # A size the daemon cannot take is answered with an `error` frame; the
            # terminal stays open.
            await terminal.resize(0, 5)
            pings = 0
            with anyio.fail_after(PATIENCE):
                while not terminal.errors:  # it comes in its own time: read on meanwhile
                    pings += 1
                    await terminal.send(f"echo still-open-$(({pings}))\r")
                    seen = await aread_until(terminal, f"still-open-{pings}\r\n", seen)
            assert terminal.errors == ["`cols` and `rows` are whole numbers from 1 to 1000"]

            # A second connection replays the screen so far, then both follow live.
            async with await client.open_terminal(session.id, pid) as second:
                replayed = await aread_until(second, f"still-open-{pings}\r\n")
                assert "42" in replayed and "40 120" in replayed
                await second.send("exit 3\r")
                with anyio.fail_after(PATIENCE):
                    assert await second.wait() == TerminalExit(exit_code=3)
            with anyio.fail_after(PATIENCE):
                output = b"".join([chunk async for chunk in terminal])
            assert b"exit" in output
            assert terminal.exit == TerminalExit(exit_code=3) and terminal.ended
            assert await terminal.wait() == terminal.exit
            with pytest.raises(StreamError):
                await terminal.resize(80, 24)
        assert (await session.get_process(pid)).exit_code == 3

        # A used ticket is refused: 401 problem details.
        sleeper = await session.start_process("sh", ["-c", "sleep 30"], tty=True)
        ticket = await client.create_terminal_ticket(session.id, sleeper.process_id)
        terminal = await session.open_terminal(sleeper.process_id, ticket=ticket.ticket)
        await terminal.aclose()
        with pytest.raises(StreamError, match="is closed: it was closed before"):
            await terminal.send("x")
        with pytest.raises(StreamError, match="is closed: it was closed before"):
            await terminal.wait()  # closed here: no exit
        with pytest.raises(ProblemError) as used:
            await session.open_terminal(sleeper.process_id, ticket=ticket.ticket)
        assert (used.value.status, slug(used.value)) == (401, "terminal-ticket-refused")
        assert used.value.method == "GET" and "?" not in used.value.url
        await session.kill_process(sleeper.process_id)
        await session.end()
    assert recorder.statuses("createTerminalTicket") == [201, 201, 201]


def test_the_terminal_url(daemon: LocalDaemon) -> None:
    with daemon.client() as client:
        ws = daemon.base_url.replace("http://", "ws://", 1)
        assert client.terminal_url("s1", "p1") == f"{ws}/sessions/s1/processes/p1/terminal"
        assert client.terminal_url("s1", "p1", "t+/=") == (
            f"{ws}/sessions/s1/processes/p1/terminal?ticket=t%2B%2F%3D"
        )
    assert websocket_url("https://host:8443/daemon/", "/x?ticket=t") == (
        "wss://host:8443/daemon/x?ticket=t"
    )
    assert websocket_url("HTTP://host", "/x") == "ws://host/x"
    assert websocket_url("wss://host", "/x") == "wss://host/x"
    assert terminal_path("a b", "p/1", None) == "/sessions/a%20b/processes/p%2F1/terminal"
    with pytest.raises(ValueError, match="not an http"):
        websocket_url("unix:///run/daemon.sock", "/x")


def test_a_daemon_out_of_reach_is_a_transport_error() -> None:
    with (
        Client("http://127.0.0.1:1", retry=FAST_RETRY) as client,
        pytest.raises(TransportError, match="WebSocket") as unreachable,
    ):
        client.open_terminal("s1", "p1", ticket="t")
    assert "ticket=" not in str(unreachable.value)


def test_without_websockets_the_error_says_what_to_install(
    daemon: LocalDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "websockets" or m.startswith("websockets.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "websockets", None)  # `import websockets` fails
    recorder = RecordingTransport()
    with (
        Client(daemon.base_url, token=daemon.token, transport=recorder) as client,
        pytest.raises(ImportError, match=r"sandbox-daemon\[terminal\]"),
    ):
        client.open_terminal("s1", "p1")
    assert recorder.operations == set()  # no ticket minted for nothing


def test_text_frames() -> None:
    frames = _Frames("s1", "p1")
    frames.control(json.dumps({"type": "error", "message": "bad resize"}))
    frames.control(json.dumps({"type": "bell", "volume": 11}))  # a newer daemon's: skipped
    assert (frames.errors, frames.ended, frames.exit) == (["bad resize"], False, None)
    frames.control(json.dumps({"type": "exit", "signal": 9, "coreDumped": False}))
    assert frames.ended and frames.exit is not None
    assert (frames.exit.exit_code, frames.exit.signal) == (None, 9)
    assert frames.exit.model_extra == {"coreDumped": False}
    for bad in ("not json", "[1]", '{"type": "exit", "exitCode": "three"}'):
        with pytest.raises(StreamError, match="p1 of session s1"):
            frames.control(bad)


def test_the_terminal_extra_pins_what_the_checks_install() -> None:
    pyproject = (SDK_DIR / "pyproject.toml").read_text()
    (extra,) = re.findall(r'^terminal = \["websockets==([^"]+)"\]$', pyproject, re.M)
    requirements = (SDK_DIR / "requirements-dev.txt").read_text().splitlines()
    assert f"websockets=={extra}" in requirements
