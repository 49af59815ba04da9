"""The processes API of a session, through both clients and their session handles, against
the real daemon: runs (exit codes, output, truncation, timeouts, refusals), long-running
processes followed to their exit (every line once, across a closed or a dropped
connection), gaps in a bounded log, keep-alives, stop and kill, list, get and delete.

Every session works in ``tmp_path / "workspace"``. The programs are ``sh`` scripts; a slow
one prints numbered lines with a pause between them, so a follow reads them live.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    AsyncSession,
    Client,
    LocalDaemon,
    LogFrame,
    LogGap,
    ProblemError,
    Reconnect,
    Session,
    StreamError,
)
from sandbox_daemon import _operations as ops
from sandbox_daemon.models import LogChunk, LogStream, ProcessInfo, ProcessStatus
from sandbox_daemon.processes import LogCursor, run_timeouts
from sandbox_daemon.sse import ServerSentEvent

from .conftest import FAST_RETRY, daemon_env
from .proxy import Proxy
from .recording import AsyncRecordingTransport, RecordingTransport

PROBLEM = "urn:sandbox-daemon:problem:"


def slug(problem: ProblemError) -> str:
    """The last part of a problem's type (``process-not-found``)."""
    assert problem.type.startswith(PROBLEM), problem.type
    return problem.type.removeprefix(PROBLEM)


def slow_lines(count: int, pause: float = 0.05) -> list[str]:
    """``sh -c`` arguments printing ``line 1`` to ``line <count>``, ``pause`` s apart."""
    script = f'i=1; while [ "$i" -le {count} ]; do echo "line $i"; i=$((i+1)); sleep {pause}; done'
    return ["-c", script]


def numbered(count: int) -> list[str]:
    return [f"line {i}" for i in range(1, count + 1)]


def chunks_of(frames: Sequence[LogFrame]) -> list[LogChunk]:
    return [frame for frame in frames if isinstance(frame, LogChunk)]


def lines_of(frames: Sequence[LogFrame], stream: LogStream | None = None) -> list[str]:
    """The text of the chunks (of one ``stream``, or both), as lines."""
    chunks = [c for c in chunks_of(frames) if stream is None or c.stream == stream]
    return "".join(chunk.data for chunk in chunks).splitlines()


def follow_all(
    session: Session, process_id: str, *, offset: int = 0, last_event_id: int | None = None
) -> list[LogFrame]:
    """Every frame of a process's log, followed to its exit."""
    with session.follow_process_logs(
        process_id, offset=offset, last_event_id=last_event_id
    ) as logs:
        return list(logs)


def assert_followed_to_exit(frames: Sequence[LogFrame], process_id: str) -> ProcessInfo:
    """The frames end with the process's exit, once, after contiguous chunks."""
    *body, last = frames
    assert isinstance(last, ProcessInfo), last
    assert not [frame for frame in body if isinstance(frame, ProcessInfo)]
    assert (last.process_id, last.status) == (process_id, ProcessStatus.exited)
    assert last.ended_at is not None and last.ended_at >= last.started_at
    sequences = [chunk.sequence for chunk in chunks_of(body)]
    if sequences:
        assert sequences == list(range(sequences[0], sequences[0] + len(sequences)))
        assert last.last_sequence == sequences[-1]
    return last


def target(daemon: LocalDaemon) -> tuple[str, int]:
    parts = urlsplit(daemon.base_url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


# Bytes each connection may carry before the proxy cuts it: the answer's head (~130
# bytes), then two or three frames (~120 bytes each), cut in the middle of the next.
CUTS = [400, 460]


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def recorder() -> RecordingTransport:
    return RecordingTransport()


@pytest.fixture
def session(
    daemon: LocalDaemon, recorder: RecordingTransport, workspace: Path
) -> Iterator[Session]:
    with (
        Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c,
        c.start_session("mock", cwd=str(workspace)) as started,
    ):
        yield started


@pytest.fixture(scope="module")
def small(daemon_bin: str, offline_daemons: None) -> Iterator[LocalDaemon]:
    """A daemon with small limits: 4 KiB of log per process, a keep-alive every second,
    two processes at once per session.
    """
    args = ["--idle-timeout", "0", "--process-log-bytes", "4096", "--sse-keep-alive-secs", "1"]
    args += ["--max-processes", "2"]
    with LocalDaemon(daemon_bin, args=args, env=daemon_env()) as running:
        yield running


# --- run -------------------------------------------------------------------------------


def test_run_answers_the_exit_code_and_the_output(
    session: Session, recorder: RecordingTransport, workspace: Path
) -> None:
    ran = session.run_process("sh", ["-c", "echo out; echo err >&2; exit 3"])
    assert (ran.exit_code, ran.signal, ran.timed_out) == (3, None, False)
    assert (ran.stdout, ran.stderr) == ("out\n", "err\n")
    assert not ran.stdout_truncated and not ran.stderr_truncated
    assert 0 <= ran.duration_ms < 10_000

    # Arguments go to the program as they are: no shell expands them.
    verbatim = session.run_process("printf", ["%s|", "a b", "$HOME", "*", "'q'"])
    assert (verbatim.exit_code, verbatim.stdout) == (0, "a b|$HOME|*|'q'|")

    # In a directory of the workspace, with a variable of our own, a private HOME.
    (workspace / "sub" / "dir").mkdir(parents=True)
    (workspace / "sub" / "dir" / "here.txt").write_text("x")
    where = session.run_process("sh", ["-c", "pwd; ls"], cwd="sub/dir")
    assert where.stdout.splitlines() == [str((workspace / "sub" / "dir").resolve()), "here.txt"]
    env = session.run_process("sh", ["-c", 'echo "$GREETING|$HOME"'], env={"GREETING": "hi"})
    greeting, home = env.stdout.rstrip("\n").split("|")
    assert greeting == "hi"
    assert home and home != os.environ.get("HOME") and not home.startswith(str(workspace))

    session.run_process("sh", ["-c", "echo made > made.txt"])  # its cwd: the workspace
    assert (workspace / "made.txt").read_text() == "made\n"
    assert recorder.statuses("runProcess") == [200] * 5


def test_run_output_past_the_limit_is_dropped(session: Session) -> None:
    script = "head -c 5000 /dev/zero | tr '\\0' o; head -c 3000 /dev/zero | tr '\\0' e >&2"
    both = session.run_process("sh", ["-c", script], max_output_bytes=2000)
    assert (both.stdout, both.stderr) == ("o" * 2000, "e" * 2000)
    assert both.stdout_truncated and both.stderr_truncated
    assert both.exit_code == 0  # the rest was read (and dropped): the program never blocked
    one = session.run_process("sh", ["-c", script], max_output_bytes=4000)
    assert (one.stdout, one.stderr) == ("o" * 4000, "e" * 3000)
    assert one.stdout_truncated and not one.stderr_truncated
    nothing = session.run_process("sh", ["-c", "echo hidden"], max_output_bytes=0)
    assert (nothing.stdout, nothing.stdout_truncated) == ("", True)


def test_a_run_past_its_timeout_is_killed_with_its_group(session: Session) -> None:
    # A child in the background holds the pipes too: the whole group goes.
    ran = session.run_process(
        "sh", ["-c", "echo started; sleep 30 & sleep 30; echo never"], timeout_ms=300
    )
    assert ran.timed_out
    assert (ran.exit_code, ran.signal) == (None, 9)
    assert ran.stdout == "started\n"
    assert 300 <= ran.duration_ms < 10_000


def test_a_run_may_outlast_the_client_timeout(daemon: LocalDaemon, workspace: Path) -> None:
    # The client waits 0.5 s for each read; the run answers after 1.2 s and is not cut.
    with (
        daemon.client(timeout=0.5, retry=FAST_RETRY) as impatient,
        impatient.start_session("mock", cwd=str(workspace)) as session,
    ):
        ran = session.run_process("sh", ["-c", "sleep 1.2; echo done"], timeout_ms=5000)
        assert (ran.exit_code, ran.stdout, ran.timed_out) == (0, "done\n", False)


def test_run_timeouts() -> None:
    client = httpx.Timeout(30.0)
    assert run_timeouts(client, 5000).read == 35.0
    assert run_timeouts(client, None).read == 90.0  # the daemon's default run: 60 s
    assert run_timeouts(client, 5000).connect == 30.0
    assert run_timeouts(httpx.Timeout(30.0, read=None), 5000).read is None


def test_runs_the_daemon_refuses(session: Session, workspace: Path, tmp_path: Path) -> None:
    touch = ["-c", "touch ran"]
    for name in ("HOME", "LD_PRELOAD"):
        with pytest.raises(ProblemError) as protected:
            session.run_process("sh", touch, env={name: "/tmp/x"})
        assert (protected.value.status, slug(protected.value)) == (422, "invalid-body")
        assert f"env.{name}" in protected.value.detail
    with pytest.raises(ProblemError) as protected_start:
        session.start_process("sh", touch, env={"HOME": "/tmp/x"})
    assert (protected_start.value.status, slug(protected_start.value)) == (422, "invalid-body")

    with pytest.raises(ProblemError) as missing_program:
        session.run_process("no-such-program-here")
    assert (missing_program.value.status, slug(missing_program.value)) == (
        422,
        "process-not-started",
    )
    with pytest.raises(ProblemError) as missing_start:
        session.start_process("./not-here.sh")
    assert slug(missing_start.value) == "process-not-started"

    with pytest.raises(ProblemError) as no_directory:
        session.run_process("sh", touch, cwd="missing")
    assert (no_directory.value.status, slug(no_directory.value)) == (404, "file-not-found")
    (workspace / "a-file").write_text("x")
    with pytest.raises(ProblemError) as not_a_directory:
        session.run_process("sh", touch, cwd="a-file")
    assert (not_a_directory.value.status, slug(not_a_directory.value)) == (
        409,
        "wrong-file-kind",
    )
    (workspace / "out").symlink_to(tmp_path)
    with pytest.raises(ProblemError) as through_link:
        session.run_process("sh", touch, cwd="out")
    assert (through_link.value.status, slug(through_link.value)) == (403, "outside-workspace")
    for escaping in ("..", "a/../..", str(tmp_path)):
        with pytest.raises(ProblemError) as refused:
            session.run_process("sh", touch, cwd=escaping)
        # The spec says 400 `invalid-path`; this daemon answers 422 `invalid-body` (the
        # request schema's `cwd` pattern refuses it first). Either way nothing runs.
        assert (refused.value.status, slug(refused.value)) in {
            (400, "invalid-path"),
            (422, "invalid-body"),
        }, escaping
    assert not (tmp_path / "ran").exists() and not (workspace / "ran").exists()
    assert not list(workspace.rglob("ran"))

    # Asking for more than the daemon allows is not refused: cut to its limits.
    large = session.run_process("true", timeout_ms=10 * 3600 * 1000, max_output_bytes=2**40)
    assert (large.exit_code, large.timed_out) == (0, False)

    # One string is not a list of arguments: refused here, before anything is sent.
    with pytest.raises(TypeError, match="list of arguments"):
        session.run_process("sh", "-c ls")  # a str is a Sequence[str]: only caught at run time


def test_process_requests_on_the_wire() -> None:
    run = ops.run_process("s", "sh", ["-c", "x"], "sub", {"A": "1"}, 5000, 100)
    assert run.content() == (
        b'{"command": "sh", "args": ["-c", "x"], "cwd": "sub", "env": {"A": "1"}, '
        b'"timeoutMs": 5000, "maxOutputBytes": 100}'
    )
    assert ops.run_process("s", "true", None, None, None, None, None).content() == (
        b'{"command": "true"}'
    )
    start = ops.start_process("s", "sleep", ("9",), None, None)
    assert (start.path, start.content()) == (
        "/sessions/s/processes",
        b'{"command": "sleep", "args": ["9"]}',
    )
    assert not run.idempotent and not start.idempotent
    for call in (ops.stop_process("s", "p/1"), ops.kill_process("s", "p/1")):
        assert call.idempotent and call.path.startswith("/sessions/s/processes/p%2F1/")
    page = ops.process_logs("s", "p1", 4)
    assert (page.params, page.accept, page.headers) == ({"offset": 4}, "application/json", {})
    follow = ops.follow_process_logs("s", "p1", 0, 7)
    assert follow.params == {"offset": 0, "follow": "true"}
    assert (follow.accept, follow.headers) == ("text/event-stream", {"Last-Event-ID": "7"})
    assert follow.idempotent and follow.content() is None


# --- long-running processes: follow ----------------------------------------------------


def test_follow_a_slow_process_to_its_exit(session: Session, recorder: RecordingTransport) -> None:
    started = session.start_process("sh", slow_lines(20))
    assert (started.command, started.args, started.cwd) == ("sh", slow_lines(20), "")
    assert started.status == ProcessStatus.running and started.pid > 0
    assert started.exit_code is None and started.ended_at is None
    assert recorder.statuses("startProcess") == [201]

    with session.follow_process_logs(started.process_id) as logs:
        frames = list(logs)
        assert logs.ended and logs.connections == 1
    assert lines_of(frames) == numbered(20)  # every line, once, in order
    assert all(chunk.stream == LogStream.stdout for chunk in chunks_of(frames))
    exited = assert_followed_to_exit(frames, started.process_id)
    assert chunks_of(frames)[0].sequence == 1
    assert (exited.exit_code, exited.signal, exited.pid) == (0, None, started.pid)
    assert logs.exit == exited and logs.last_sequence == exited.last_sequence
    assert session.get_process(started.process_id) == exited

    # The same log, paged: from the start, after an offset; a follow of an exited process
    # replays it and ends.
    page = session.process_logs(started.process_id)
    assert page.chunks == chunks_of(frames)
    assert (page.first_kept, page.process) == (1, exited)
    rest = session.process_logs(started.process_id, offset=15)
    assert [c.sequence for c in rest.chunks] == list(range(16, exited.last_sequence + 1))
    assert follow_all(session, started.process_id, offset=15)[:-1] == rest.chunks
    assert follow_all(session, started.process_id, last_event_id=15, offset=2)[:-1] == (
        rest.chunks  # Last-Event-ID wins over offset, as the header does
    )
    assert follow_all(session, started.process_id, offset=exited.last_sequence) == [exited]


def test_stdout_and_stderr_are_told_apart(session: Session) -> None:
    script = "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three"
    started = session.start_process("sh", ["-c", script])
    frames = follow_all(session, started.process_id)
    assert [(c.stream, c.data) for c in chunks_of(frames)] == [
        (LogStream.stdout, "one\n"),
        (LogStream.stderr, "two\n"),
        (LogStream.stdout, "three\n"),
    ]
    assert assert_followed_to_exit(frames, started.process_id).exit_code == 0


def test_a_follow_closed_midway_resumes_from_its_last_sequence(session: Session) -> None:
    started = session.start_process("sh", slow_lines(30))
    first: list[LogFrame] = []
    with session.follow_process_logs(started.process_id) as logs:
        for frame in logs:
            first.append(frame)
            if len(first) == 8:
                break  # leaving the block closes the connection, midway
        last = logs.last_sequence
    assert last == 8 and not logs.ended
    assert session.get_process(started.process_id).status == ProcessStatus.running

    second = follow_all(session, started.process_id, offset=last)
    assert chunks_of(second)[0].sequence == last + 1
    assert lines_of([*first, *second]) == numbered(30)  # every line exactly once
    assert_followed_to_exit([*first, *second], started.process_id)


def test_a_dropped_follow_resumes_by_itself(session: Session, daemon: LocalDaemon) -> None:
    started = session.start_process("sh", slow_lines(25))
    reconnects: list[Reconnect] = []
    with (
        Proxy(target(daemon), cuts=CUTS) as proxy,
        Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
        via_proxy.follow_process_logs(
            session.id, started.process_id, on_reconnect=reconnects.append
        ) as logs,
    ):
        frames = list(logs)
    assert lines_of(frames) == numbered(25)  # every line exactly once, in order
    assert_followed_to_exit(frames, started.process_id)
    assert proxy.connections == len(CUTS) + 1 == logs.connections
    assert [r.attempt for r in reconnects] == [2, 2]  # each drop: one quick retry
    assert all(isinstance(r.error, httpx.TransportError) for r in reconnects)
    assert 0 < reconnects[0].last_sequence < reconnects[1].last_sequence < 25
    # Each new connection asked for what follows the last chunk delivered.
    assert proxy.last_event_ids() == [None, *(str(r.last_sequence) for r in reconnects)]


def test_a_follow_gives_up_when_the_daemon_stays_away(
    session: Session, daemon: LocalDaemon
) -> None:
    started = session.start_process("sh", slow_lines(10))
    seen: list[LogFrame] = []
    with (
        Proxy(target(daemon)) as proxy,
        Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
        via_proxy.follow_process_logs(session.id, started.process_id) as logs,
    ):

        def follow() -> None:
            for frame in logs:
                seen.append(frame)
                proxy.stop()  # for good (what was already received still arrives)

        with pytest.raises(StreamError, match=r"the log of process p\d+ of session") as gave:
            follow()
    assert f"after sequence {logs.last_sequence} in" in str(gave.value)
    assert lines_of(seen) == numbered(len(lines_of(seen)))
    session.kill_process(started.process_id)


def test_an_unknown_process_is_not_followed_again_and_again(session: Session) -> None:
    reconnects: list[Reconnect] = []
    with (
        session.follow_process_logs("p999", on_reconnect=reconnects.append) as logs,
        pytest.raises(ProblemError) as unknown,
    ):
        next(logs)
    assert (unknown.value.status, slug(unknown.value)) == (404, "process-not-found")
    assert reconnects == [] and logs.connections == 1


# --- a bounded log: gaps; keep-alives -----------------------------------------------------


LAST_BULK_LINE = "bulk 0200 " + "0" * 90 + "\n"


def test_chunks_dropped_from_a_bounded_log_are_a_gap(small: LocalDaemon, workspace: Path) -> None:
    # ~20 KB written at once into a 4 KiB log, then a wait for the test's go, then a line.
    bulk = 'i=1; while [ "$i" -le 200 ]; do printf "bulk %04d %090d\\n" "$i" 0; i=$((i+1)); done'
    script = f"{bulk}; while [ ! -e go ]; do sleep 0.02; done; echo done"
    with (
        small.client(retry=FAST_RETRY) as client,
        client.start_session("mock", cwd=str(workspace)) as session,
    ):
        started = session.start_process("sh", ["-c", script])
        pid = started.process_id

        # Once it is all written (and the oldest chunks dropped), it waits.
        def written() -> bool:
            chunks = session.process_logs(pid).chunks
            return bool(chunks) and chunks[-1].data.endswith(LAST_BULK_LINE)

        wait_until(written)
        page = session.process_logs(pid)
        kept = page.first_kept
        assert kept > 1 and page.chunks[0].sequence == kept
        assert page.process.status == ProcessStatus.running
        assert sum(len(c.data) for c in page.chunks) <= 4096 or len(page.chunks) == 1

        frames: list[LogFrame] = []
        with session.follow_process_logs(pid) as logs:
            for frame in logs:
                frames.append(frame)
                if isinstance(frame, LogChunk) and frame.data.endswith(LAST_BULK_LINE):
                    (workspace / "go").touch()  # everything kept is read: now the last line
        gap, *rest = frames
        assert isinstance(gap, LogGap)
        assert (gap.from_, gap.to, gap.count) == (1, kept - 1, kept - 1)
        assert chunks_of(rest)[0].sequence == kept
        exited = assert_followed_to_exit(rest, pid)
        assert lines_of(rest)[-1] == "done" and exited.exit_code == 0
        # The lines that arrived are the last ones written, whole and in order.
        bulk_lines = [line for line in lines_of(rest) if line.startswith("bulk")]
        numbers = [int(line.split()[1]) for line in bulk_lines[1:]]  # the first may be cut
        assert numbers == list(range(numbers[0], 201))

        # Following again from the last chunk but one: that chunk, the exit, no gap.
        assert follow_all(session, pid, last_event_id=exited.last_sequence - 1) == rest[-2:]


def test_keep_alives_hold_a_silent_follow_open(small: LocalDaemon, workspace: Path) -> None:
    # The daemon sends `: running` every second; the client gives up on a silence of 2 s.
    with (
        small.client(retry=FAST_RETRY, stream_read_timeout=2.0) as client,
        client.start_session("mock", cwd=str(workspace)) as session,
    ):
        started = session.start_process("sh", ["-c", "echo before; sleep 3; echo after"])
        with session.follow_process_logs(started.process_id) as logs:
            frames = list(logs)
        assert lines_of(frames) == ["before", "after"]
        assert logs.connections == 1  # never dropped, never resumed
        assert_followed_to_exit(frames, started.process_id)


def test_limits_and_the_end_of_the_session(small: LocalDaemon, workspace: Path) -> None:
    with (
        small.client(retry=FAST_RETRY) as client,
        client.start_session("mock", cwd=str(workspace)) as session,
    ):
        first = session.start_process("sleep", ["30"])
        second = session.start_process("sleep", ["30"])
        with pytest.raises(ProblemError) as too_many:
            session.start_process("sleep", ["30"])
        assert (too_many.value.status, slug(too_many.value)) == (409, "too-many-processes")
        with pytest.raises(ProblemError) as no_run:
            session.run_process("true")  # runs count too
        assert (no_run.value.status, slug(no_run.value)) == (409, "too-many-processes")

        session.kill_process(first.process_id)
        assert follow_all(session, first.process_id) == [session.get_process(first.process_id)]
        assert session.get_process(first.process_id).signal == 9
        assert session.run_process("true").exit_code == 0  # a place is free again

        # The session's end ends its processes: a follow ends with the kill.
        waiting = session.start_process("sh", ["-c", "echo ready; sleep 30"])
        session.kill_process(second.process_id)
        frames: list[LogFrame] = []
        with session.follow_process_logs(waiting.process_id) as logs:
            for frame in logs:
                frames.append(frame)
                if isinstance(frame, LogChunk):
                    session.end()
        exited = assert_followed_to_exit(frames, waiting.process_id)
        assert lines_of(frames) == ["ready"] and exited.signal == 9
        with pytest.raises(ProblemError) as ended:
            session.start_process("sleep", ["30"])
        assert (ended.value.status, slug(ended.value)) == (409, "session-ended")
        with pytest.raises(ProblemError) as ended_run:
            session.run_process("true")
        assert (ended_run.value.status, slug(ended_run.value)) == (409, "session-ended")


# --- stop, kill, list, get, delete ------------------------------------------------------


def test_stop_asks_and_kill_forces(session: Session, recorder: RecordingTransport) -> None:
    graceful = "trap 'echo stopping; exit 7' TERM; echo ready; while :; do sleep 0.05; done"
    started = session.start_process("sh", ["-c", graceful])
    frames: list[LogFrame] = []
    with session.follow_process_logs(started.process_id) as logs:
        for frame in logs:
            frames.append(frame)
            if isinstance(frame, LogChunk) and frame.data == "ready\n":
                stopping = session.stop_process(started.process_id)
                assert stopping.process_id == started.process_id
    # (sh may say on stderr that its `sleep` was terminated: the group got the signal.)
    assert lines_of(frames, LogStream.stdout) == ["ready", "stopping"]
    exited = assert_followed_to_exit(frames, started.process_id)
    assert (exited.exit_code, exited.signal) == (7, None)  # it stopped its own way
    # Signalling a process that has ended does nothing: the same answer again.
    assert session.stop_process(started.process_id) == exited
    assert session.kill_process(started.process_id) == exited

    stubborn = "trap '' TERM; echo ready; while :; do sleep 0.05; done"
    started = session.start_process("sh", ["-c", stubborn])
    frames = []
    with session.follow_process_logs(started.process_id) as logs:
        for frame in logs:
            frames.append(frame)
            if isinstance(frame, LogChunk) and frame.data == "ready\n":
                session.stop_process(started.process_id)  # ignored
                session.kill_process(started.process_id)
    exited = assert_followed_to_exit(frames, started.process_id)
    assert (exited.exit_code, exited.signal) == (None, 9)
    assert recorder.statuses("stopProcess") == [200, 200, 200]
    assert recorder.statuses("killProcess") == [200, 200]


def test_list_get_and_delete(session: Session, recorder: RecordingTransport) -> None:
    assert session.list_processes().processes == []
    running = session.start_process("sleep", ["30"])
    quick = session.start_process("sh", ["-c", "echo hi"])
    assert running.process_id != quick.process_id
    listed = session.list_processes().processes
    assert [p.process_id for p in listed] == [running.process_id, quick.process_id]
    assert session.get_process(running.process_id).status == ProcessStatus.running

    with pytest.raises(ProblemError) as still_running:
        session.delete_process(running.process_id)
    assert (still_running.value.status, slug(still_running.value)) == (409, "process-running")
    assert running.process_id in [p.process_id for p in session.list_processes().processes]

    assert lines_of(follow_all(session, quick.process_id)) == ["hi"]
    session.delete_process(quick.process_id)
    for gone in (
        lambda: session.get_process(quick.process_id),
        lambda: session.process_logs(quick.process_id),
        lambda: session.stop_process(quick.process_id),
        lambda: session.kill_process(quick.process_id),
        lambda: session.delete_process(quick.process_id),
    ):
        with pytest.raises(ProblemError) as unknown:
            gone()
        assert (unknown.value.status, slug(unknown.value)) == (404, "process-not-found")

    session.kill_process(running.process_id)
    follow_all(session, running.process_id)
    session.delete_process(running.process_id)
    assert session.list_processes().processes == []
    assert recorder.statuses("deleteProcess") == [409, 204, 404, 204]
    assert recorder.statuses("getProcess") == [200, 404]


# --- the cursor's checks ------------------------------------------------------------------


NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def log_frame(sequence: int, id: str | None = None) -> ServerSentEvent:
    chunk = LogChunk(sequence=sequence, stream=LogStream.stdout, data="x\n", time=NOW)
    data = chunk.model_dump_json(by_alias=True)
    return ServerSentEvent("log", data, str(sequence) if id is None else id, None)


def exit_frame(last_sequence: int) -> ServerSentEvent:
    info = {
        "processId": "p1",
        "pid": 42,
        "command": "sh",
        "args": [],
        "cwd": "",
        "status": "exited",
        "exitCode": 0,
        "startedAt": "2026-01-01T00:00:00Z",
        "endedAt": "2026-01-01T00:00:01Z",
        "lastSequence": last_sequence,
        "tty": False,
    }
    return ServerSentEvent("exit", json.dumps(info), None, None)


def test_the_log_cursor_checks_what_the_daemon_promises() -> None:
    cursor = LogCursor("s1", "p1", 0, FAST_RETRY, None)
    first = cursor.call()
    assert first.headers == {} and first.params == {"offset": 0, "follow": "true"}
    assert isinstance(cursor.accept(log_frame(1)), LogChunk)
    assert isinstance(cursor.accept(log_frame(2)), LogChunk)
    assert cursor.accept(log_frame(2)) is None  # a duplicate after a resume: skipped
    assert cursor.duplicates_skipped == 1
    assert cursor.call().headers == {"Last-Event-ID": "2"}  # resumes after the last one
    gap = cursor.accept(ServerSentEvent("gap", '{"from": 3, "to": 5}', "2", None))
    assert isinstance(gap, LogGap) and (gap.from_, gap.to) == (3, 5)
    assert cursor.last_sequence == 5
    assert cursor.accept(ServerSentEvent("gap", '{"from": 3, "to": 5}', None, None)) is None
    assert cursor.accept(ServerSentEvent("progress", "{}", None, None)) is None  # unknown kind
    assert isinstance(cursor.accept(log_frame(6)), LogChunk)
    with pytest.raises(StreamError, match="differs"):
        cursor.accept(log_frame(7, id="9"))
    with pytest.raises(StreamError, match="without a gap frame"):
        cursor.accept(log_frame(8))
    with pytest.raises(StreamError, match="dropped after sequence 6"):
        cursor.accept(ServerSentEvent("gap", '{"from": 8, "to": 9}', None, None))
    with pytest.raises(StreamError, match="not a LogChunk"):
        cursor.accept(ServerSentEvent("log", '{"sequence": 7}', "7", None))
    with pytest.raises(StreamError, match="lost chunks"):
        cursor.accept(exit_frame(7))  # it wrote a 7th chunk this stream never delivered
    assert not cursor.ended()
    ended = cursor.accept(exit_frame(6))
    assert isinstance(ended, ProcessInfo) and cursor.exit == ended and cursor.ended()

    with pytest.raises(ValueError, match="offset"):
        LogCursor("s1", "p1", -1, FAST_RETRY, None)


# --- async -----------------------------------------------------------------------------


async def afollow_all(session: AsyncSession, process_id: str, offset: int = 0) -> list[LogFrame]:
    async with session.follow_process_logs(process_id, offset=offset) as logs:
        return [frame async for frame in logs]


@pytest.mark.anyio
async def test_processes_async(daemon: LocalDaemon, session_id: str, workspace: Path) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as client:
        await client.create_session(session_id, agent="mock", cwd=str(workspace))
        ran = await client.run_process(session_id, "sh", ["-c", "echo $0-$1; exit 5", "a", "b"])
        assert (ran.exit_code, ran.stdout) == (5, "a-b\n")
        timed = await client.run_process(session_id, "sleep", ["10"], timeout_ms=200)
        assert timed.timed_out and timed.signal == 9
        cut = await client.run_process(session_id, "printf", ["0123456789"], max_output_bytes=4)
        assert (cut.stdout, cut.stdout_truncated) == ("0123", True)
        with pytest.raises(ProblemError) as protected:
            await client.run_process(session_id, "env", env={"HOME": "/"})
        assert (protected.value.status, slug(protected.value)) == (422, "invalid-body")

        session = client.session(session_id)
        started = await session.start_process("sh", slow_lines(20))
        # Closed midway, then resumed from the last sequence: every line once.
        first: list[LogFrame] = []
        async with session.follow_process_logs(started.process_id) as logs:
            async for frame in logs:
                first.append(frame)
                if len(first) == 5:
                    break
            last = logs.last_sequence
        second = await afollow_all(session, started.process_id, offset=last)
        assert lines_of([*first, *second]) == numbered(20)
        exited = assert_followed_to_exit([*first, *second], started.process_id)
        assert await session.get_process(started.process_id) == exited
        page = await session.process_logs(started.process_id, offset=18)
        assert [c.data for c in page.chunks] == ["line 19\n", "line 20\n"]

        sleeper = await session.start_process("sleep", ["30"])
        assert [p.process_id for p in (await session.list_processes()).processes] == [
            started.process_id,
            sleeper.process_id,
        ]
        with pytest.raises(ProblemError) as running:
            await session.delete_process(sleeper.process_id)
        assert (running.value.status, slug(running.value)) == (409, "process-running")
        await session.stop_process(sleeper.process_id)
        (stopped,) = await afollow_all(session, sleeper.process_id)  # it printed nothing
        assert isinstance(stopped, ProcessInfo) and stopped.signal == 15
        assert await session.kill_process(sleeper.process_id) == stopped
        await session.delete_process(sleeper.process_id)
        await client.delete_process(session_id, started.process_id)
        assert (await session.list_processes()).processes == []
        with pytest.raises(ProblemError) as unknown:
            await client.get_process(session_id, started.process_id)
        assert (unknown.value.status, slug(unknown.value)) == (404, "process-not-found")
        await session.end()
    assert recorder.statuses("deleteProcess") == [409, 204, 204]


@pytest.mark.anyio
async def test_a_dropped_follow_resumes_by_itself_async(
    daemon: LocalDaemon, session_id: str, workspace: Path
) -> None:
    reconnects: list[Reconnect] = []
    async with daemon.async_client(retry=FAST_RETRY) as client:
        await client.create_session(session_id, agent="mock", cwd=str(workspace))
        started = await client.start_process(session_id, "sh", slow_lines(25))
        with Proxy(target(daemon), cuts=CUTS) as proxy:
            async with (
                AsyncClient(proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
                via_proxy.follow_process_logs(
                    session_id, started.process_id, on_reconnect=reconnects.append
                ) as logs,
            ):
                frames = [frame async for frame in logs]
        assert lines_of(frames) == numbered(25)
        assert_followed_to_exit(frames, started.process_id)
        assert logs.exit == frames[-1] and logs.connections == len(CUTS) + 1
        assert proxy.last_event_ids() == [None, *(str(r.last_sequence) for r in reconnects)]
        await client.end_session(session_id)
