"""Local mode: finding the binary, starting on a free port with a private token, stopping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_daemon import DaemonStartError, LocalDaemon, ProblemError, find_binary


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_binary_from_argument_then_environment_then_path(
    daemon_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert find_binary(daemon_bin) == daemon_bin
    monkeypatch.setenv("SANDBOX_DAEMON_BIN", daemon_bin)
    assert find_binary() == daemon_bin
    monkeypatch.delenv("SANDBOX_DAEMON_BIN")
    (tmp_path / "sandbox-daemon").symlink_to(daemon_bin)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_binary() == str(tmp_path / "sandbox-daemon")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(DaemonStartError, match="SANDBOX_DAEMON_BIN"):
        find_binary()
    with pytest.raises(DaemonStartError, match="not an executable"):
        find_binary(tmp_path / "missing")


def test_start_use_and_stop(daemon_bin: str) -> None:
    with LocalDaemon(daemon_bin) as daemon:
        pid, data_dir = daemon.pid, Path(daemon.data_dir)
        assert pid is not None and daemon.running and data_dir.is_dir()
        assert daemon.base_url.startswith("http://127.0.0.1:")
        assert not daemon.base_url.endswith(":0")
        # The token is required, and is not on the command line.
        with daemon.client() as client:
            assert client.list_agents().agents
        with daemon.client(token="") as anonymous, pytest.raises(ProblemError) as denied:
            anonymous.list_agents()
        assert denied.value.status == 401
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert daemon.token.encode() not in b" ".join(cmdline)
        assert cmdline[3:5] == [b"--port", b"0"]
        assert "listening on" in daemon.output
    assert not alive(pid)
    assert not data_dir.exists()  # the temporary data dir went with it
    assert daemon.pid is None
    daemon.stop()  # twice is fine


def test_a_given_data_dir_is_kept_and_sessions_survive_a_restart(
    daemon_bin: str, tmp_path: Path
) -> None:
    with LocalDaemon(daemon_bin, data_dir=tmp_path) as first, first.client() as client:
        session = client.start_session("mock")
        session.turn("hello").wait()
    assert (tmp_path / "store.db").exists()
    with LocalDaemon(daemon_bin, data_dir=tmp_path) as second, second.client() as client:
        assert second.token != first.token
        texts = [e.type for e in client.iter_events(session.id)]
        assert texts[:2] == ["sessionStarted", "turnStarted"] and "turnEnded" in texts


def test_a_binary_that_fails_says_why(tmp_path: Path) -> None:
    script = tmp_path / "fake-daemon"
    script.write_text("#!/bin/sh\necho 'fatal: no store here' >&2\nexit 3\n")
    script.chmod(0o755)
    daemon = LocalDaemon(script)
    with pytest.raises(DaemonStartError, match=r"exited with 3[\s\S]*fatal: no store here"):
        daemon.start()
    assert not daemon.running


@pytest.mark.anyio
async def test_async_context_manager(daemon_bin: str) -> None:
    async with LocalDaemon(daemon_bin) as daemon, daemon.async_client() as client:
        assert (await client.health()).status == "ok"
        pid = daemon.pid
    assert pid is not None and not alive(pid)


def test_the_daemon_is_stopped_when_the_interpreter_exits(daemon_bin: str) -> None:
    program = (
        "import sys; from sandbox_daemon import LocalDaemon\n"
        "d = LocalDaemon(sys.argv[1]).start()\n"
        "print(d.pid, d.data_dir, flush=True)\n"
        # No stop(): the atexit hook must do it.
    )
    done = subprocess.run(
        [sys.executable, "-c", program, daemon_bin],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    pid, data_dir = done.stdout.split()
    assert not alive(int(pid))
    assert not Path(data_dir).exists()
