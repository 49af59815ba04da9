"""Every operation of the API, called through each client against the real daemon.

Each test drives one mock session through every route (events drive each next step, no
sleeps) and checks at the end that it called every operationId of the spec.
"""

from __future__ import annotations

import io
import tarfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    LocalDaemon,
    PermissionMode,
    ProblemError,
    TerminalExit,
    __version__,
)
from sandbox_daemon.models import (
    AgentId,
    CredentialKind,
    ItemDeltaEvent,
    LogChunk,
    LoginEntryKind,
    PermissionAskedEvent,
    ProcessInfo,
    QuestionAskedEvent,
    SessionEndedEvent,
    SessionEndReason,
    SessionStatus,
    StopReason,
    ToolCallRequestedEvent,
    TurnEndedEvent,
)

from .conftest import FAST_RETRY
from .recording import AsyncRecordingTransport, Exchange, RecordingTransport
from .terminals import PATIENCE, aread_until, read_until

# The turns each test plays, in order: what to send, and how the turn must stop.
SCRIPT = [
    ("a permission, then a question", StopReason.completed),  # reply both
    ("one more question", StopReason.completed),  # reject it
    ("hosttool lookup", StopReason.completed),  # answer the host tool call
    ("hosttool lookup again", StopReason.completed),  # reject it
    ("slow", StopReason.cancelled),  # cancel it mid-way
]

# A client host tool the mock calls on `hosttool lookup`.
LOOKUP = {"name": "lookup", "handler": {"type": "client"}}

# A Codex login as `codex login` writes it (~/.codex/auth.json), with fake tokens, and a
# Claude token: the daemon stores them and never answers them.
CODEX_LOGIN = {
    "tokens": {"access_token": "at-fake", "refresh_token": "rt-fake", "id_token": "x.y.z"}
}
CLAUDE_TOKEN = "sk-ant-oat01-fake"
# A webhook's secret, given: never answered either.
HOOK_SECRET = "operations-hook-secret-0123"
SECRETS = (b"at-fake", b"rt-fake", CLAUDE_TOKEN.encode(), HOOK_SECRET.encode())
# A webhook receiver that is down: nothing listens on port 1 of loopback.
DOWN = "http://127.0.0.1:1/hooks"
PATIENT = 20.0  # seconds to wait for a delivery attempt


def one_file_tar(name: str, data: bytes) -> bytes:
    """A tar archive holding one file (built with :mod:`tarfile`)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        entry = tarfile.TarInfo(name)
        entry.size = len(data)
        archive.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


def spec_operation_ids(openapi: dict[str, Any]) -> set[str]:
    return {op["operationId"] for methods in openapi["paths"].values() for op in methods.values()}


def assert_no_secret(exchanges: list[Exchange]) -> None:
    """No answer (of any operation) carried a stored secret back."""
    stored_logins = [e for e in exchanges if e.operation.endswith(("Credential", "Credentials"))]
    assert len(stored_logins) >= 8
    for exchange in exchanges:
        body = exchange.body or b""
        assert not [s for s in SECRETS if s in body], (exchange.operation, body[:200])


def test_every_operation_sync(
    daemon: LocalDaemon, session_id: str, tmp_path: Path, openapi: dict[str, Any]
) -> None:
    recorder = RecordingTransport()
    with Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c:
        health = c.health()
        assert (health.status, health.version) == ("ok", __version__)
        assert "streamEvents" in str(c.openapi()["paths"])

        agents = {agent.id: agent for agent in c.list_agents().agents}
        assert set(agents) == set(AgentId)
        assert agents[AgentId.mock].installed and agents[AgentId.mock].capabilities.permissions
        installed = c.install_agent(AgentId.mock)
        assert installed.agent == AgentId.mock and installed.already_installed
        models = c.agent_models("mock")
        assert models.default_model in {m.id for m in models.models}
        modes = c.agent_modes("mock")
        assert "plan" in {m.id for m in modes.modes}
        assert PermissionMode.bypass in modes.permission_modes

        # Stored logins: write-only, the daemon describes them and never answers a secret.
        stored = c.put_credential("codex", CODEX_LOGIN, source="/home/me/.codex/auth.json")
        assert (stored.agent, stored.source) == (AgentId.codex, "/home/me/.codex/auth.json")
        assert [(e.name, e.kind) for e in stored.entries] == [("chatgpt", LoginEntryKind.oauth)]
        replaced = c.put_credential(AgentId.codex, login=CODEX_LOGIN)
        assert recorder.statuses("putCredential") == [201, 200]  # stored, then replaced
        assert [(e.name, e.kind) for e in replaced.entries] == [("chatgpt", LoginEntryKind.oauth)]
        assert c.get_credential("codex") == replaced
        assert [info.agent for info in c.list_credentials().credentials] == [AgentId.codex]
        codex = {agent.id: agent for agent in c.list_agents().agents}[AgentId.codex]
        assert codex.credentials is not None and codex.credentials.required
        assert CredentialKind.stored_login in codex.credentials.available
        with pytest.raises(ProblemError) as refused:
            c.put_credential("codex", {"tokens": {"refresh_token": "rt-fake"}})
        assert refused.value.status == 422
        assert refused.value.type.endswith("invalid-credential"), refused.value.type
        with pytest.raises(ProblemError) as neither:
            c.put_credential("codex")
        assert (neither.value.status, neither.value.type.rsplit(":", 1)[1]) == (422, "invalid-body")
        assert c.get_credential("codex") == replaced  # refused puts change nothing
        c.delete_credential("codex")
        assert recorder.statuses("deleteCredential") == [204]
        with pytest.raises(ProblemError) as gone_login:
            c.get_credential("codex")
        assert gone_login.value.status == 404
        assert gone_login.value.type.endswith("credential-not-found")
        assert AgentId.codex not in {info.agent for info in c.list_credentials().credentials}

        # A webhook for every session's end, at a receiver that is down: its deliveries are
        # attempted and stay pending (checked once the session ended); deleted at the end.
        hook = c.create_webhook(DOWN, ["sessionEnded"], secret=HOOK_SECRET)
        assert hook.id.startswith("wh_") and hook.secret is None  # a secret given: not answered
        assert (hook.url, hook.events, hook.session_id) == (DOWN, ["sessionEnded"], None)
        assert c.get_webhook(hook.id).model_dump() == hook.model_dump(exclude={"secret"})
        assert hook.id in {w.id for w in c.list_webhooks().webhooks}

        created = c.create_session(
            session_id,
            agent="mock",
            agent_mode="plan",
            model=models.default_model,
            variant="high",
            permission_mode=PermissionMode.default,
            cwd=str(tmp_path),
            host_tools=[LOOKUP],
            idempotency_key=f"create {session_id}",
        )
        assert created.healthy
        info = c.get_session(session_id)
        assert (info.agent, info.agent_mode, info.variant) == (AgentId.mock, "plan", "high")
        assert (info.status, info.cwd) == (SessionStatus.idle, str(tmp_path))
        # Its workspace (the cwd): write, read, list, upload, snapshot, delete.
        written = c.write_file(session_id, "notes.txt", b"hello")
        assert (written.path, written.size) == ("notes.txt", 5)
        assert c.read_file(session_id, "notes.txt", range=(1, 3)) == b"ell"
        assert (tmp_path / "notes.txt").read_bytes() == b"hello"
        uploaded = c.upload_files(session_id, one_file_tar("a.txt", b"abc"), path="up")
        assert (uploaded.path, uploaded.files, uploaded.bytes) == ("up", 1, 3)
        listing = c.list_files(session_id, depth=2)
        assert [e.path for e in listing.entries] == ["notes.txt", "up", "up/a.txt"]
        snapshot = c.archive_files(session_id, max_file_bytes=4)
        assert (snapshot.files, snapshot.skipped_paths) == (1, ["notes.txt"])
        with snapshot.open() as archive:
            assert archive.getnames() == ["up", "up/a.txt"]
        c.delete_file(session_id, "up", recursive=True)
        c.delete_file(session_id, "notes.txt")
        assert c.list_files(session_id).entries == []
        assert recorder.statuses("writeFile") == [201]
        assert recorder.statuses("deleteFile") == [204, 204]
        # Its processes: one run to its end; one started, followed, paged, stopped, deleted.
        ran = c.run_process(session_id, "sh", ["-c", "echo hi; exit 2"], timeout_ms=5000)
        assert (ran.exit_code, ran.stdout, ran.timed_out) == (2, "hi\n", False)
        started = c.start_process(session_id, "sh", ["-c", "echo ready; sleep 30"], cwd="")
        pid = started.process_id
        with c.follow_process_logs(session_id, pid) as logs:
            for frame in logs:
                if isinstance(frame, LogChunk):
                    assert frame.data == "ready\n"
                    assert c.stop_process(session_id, pid).process_id == pid
        assert isinstance(frame, ProcessInfo) and frame.signal == 15  # SIGTERM ended it
        assert c.kill_process(session_id, pid) == c.get_process(session_id, pid) == frame
        assert [p.process_id for p in c.list_processes(session_id).processes] == [pid]
        assert [chunk.data for chunk in c.process_logs(session_id, pid).chunks] == ["ready\n"]
        assert c.process_logs(session_id, pid, offset=1).chunks == []
        c.delete_process(session_id, pid)
        assert c.list_processes(session_id).processes == []
        # A process on a terminal: a ticket, its WebSocket, typed input, its exit.
        shell = c.start_process(session_id, "sh", tty=True, size={"cols": 90, "rows": 20})
        assert shell.tty
        ticket = c.create_terminal_ticket(session_id, shell.process_id)
        url = c.terminal_url(session_id, shell.process_id, ticket.ticket)
        assert url == daemon.base_url.replace("http://", "ws://", 1) + ticket.path
        with c.open_terminal(session_id, shell.process_id, ticket=ticket.ticket) as terminal:
            recorder.opened_websocket(url)
            terminal.send("stty size; exit 4\r")
            assert "20 90" in read_until(terminal, "20 90")
            assert terminal.wait(timeout=PATIENCE) == TerminalExit(exit_code=4)
        c.delete_process(session_id, shell.process_id)
        listed = [s.session_id for s in c.iter_sessions(page_size=1)]
        assert session_id in listed
        assert session_id in {s.session_id for s in c.list_sessions(status="idle").sessions}
        # The same agent afresh, keeping mode and model; the earlier turns (none yet) carry over.
        handed = c.handover_session(
            session_id, agent="mock", model=models.default_model, agent_mode="plan"
        )
        assert (handed.agent, handed.agent_mode) == (AgentId.mock, "plan")
        assert (handed.model, handed.status) == (models.default_model, SessionStatus.idle)

        turns = iter(SCRIPT)
        message, expected = next(turns)
        turn_id = c.send_message(session_id, message).turn_id
        cancelled = False
        with c.stream_events(session_id) as events:
            for event in events:
                if isinstance(event, PermissionAskedEvent):
                    pending = c.get_session(session_id).pending_permissions
                    assert [p.permission_id for p in pending] == [event.data.permission_id]
                    c.reply_permission(session_id, event.data.permission_id, "once")
                elif isinstance(event, QuestionAskedEvent):
                    if turn_id == "turn_1":
                        c.reply_question(session_id, event.data.question_id, [["Red"], ["Olives"]])
                    else:
                        c.reject_question(session_id, event.data.question_id)
                elif isinstance(event, ToolCallRequestedEvent):
                    calls = c.get_session(session_id).pending_tool_calls or []
                    assert [call.call_id for call in calls] == [event.data.call_id]
                    if "again" in message:
                        c.tool_call_reject(session_id, event.data.call_id, "not now")
                    else:
                        c.tool_call_result(session_id, event.data.call_id, "found", is_error=False)
                elif isinstance(event, ItemDeltaEvent) and message == "slow" and not cancelled:
                    assert c.cancel_turn(session_id).turn_id == turn_id
                    cancelled = True
                elif isinstance(event, TurnEndedEvent):
                    assert (event.data.turn_id, event.data.stop_reason) == (turn_id, expected)
                    # What the turn changed in the workspace: nothing, as its end says.
                    changes = c.turn_changes(session_id, turn_id)
                    assert (changes.turn_id, changes.files) == (turn_id, [])
                    assert changes.counts == event.data.changes
                    step = next(turns, None)
                    if step is None:
                        ended = c.end_session(session_id)
                        assert ended.status == SessionStatus.ended
                        assert ended.end_reason == SessionEndReason.terminated
                    else:
                        message, expected = step
                        turn_id = c.send_message(session_id, message).turn_id
            assert isinstance(event, SessionEndedEvent)
            assert events.ended and events.last_sequence == event.sequence

        first = c.get_events(session_id, offset=0, limit=5)
        assert [e.sequence for e in first.events] == [1, 2, 3, 4, 5] and first.has_more
        rest = c.get_events(session_id, offset=5, limit=1000, include_raw=True)
        assert not rest.has_more and rest.events[-1].sequence == event.sequence
        assert [e.sequence for e in c.iter_events(session_id, page_size=7)] == list(
            range(1, event.sequence + 1)
        )
        assert c.get_session(session_id).event_count == event.sequence
        # The first turn as the AI SDK's UI message stream, replayed from the log.
        with c.ui_message_stream(session_id, turn_id="turn_1") as ui:
            chunks = list(ui)
        assert chunks[0] == {
            "type": "start",
            "messageId": "msg_turn_1",
            "messageMetadata": {"turnId": "turn_1"},
        }
        assert [k["type"] for k in chunks if k["type"].startswith("tool-approval")] == [
            "tool-approval-request",
            "tool-approval-response",
        ]
        assert chunks[-1]["type"] == "finish" and ui.done
        with c.ui_message_stream(session_id) as idle:
            assert list(idle) == [] and idle.found is False  # no turn runs

        exported = c.export_session(session_id, include_raw=True)
        assert exported.bundle.event_count == event.sequence
        copy = c.import_session(f"{session_id}-copy", exported, cwd=tmp_path)
        assert (copy.session_id, copy.cwd) == (f"{session_id}-copy", str(tmp_path))
        assert copy.event_count == event.sequence
        c.delete_session(copy.session_id)

        # The webhook's delivery of the session's end: attempted, failed, to be tried again.
        delivery_id = f"{session_id}:{event.sequence}"
        deadline = time.monotonic() + PATIENT
        while True:
            page = c.list_webhook_deliveries(hook.id, limit=500)
            tried = [d for d in page.deliveries if d.id == delivery_id and d.attempts >= 1]
            if tried or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert tried, page
        assert (tried[0].event_type.value, tried[0].status.value) == ("sessionEnded", "pending")
        assert (tried[0].session_id, tried[0].sequence) == (session_id, event.sequence)
        assert tried[0].last_error and tried[0].next_attempt_at
        assert delivery_id in {d.id for d in c.iter_webhook_deliveries(hook.id, page_size=1)}
        c.delete_webhook(hook.id)
        assert recorder.statuses("deleteWebhook") == [204]
        with pytest.raises(ProblemError) as gone_hook:
            c.get_webhook(hook.id)
        assert (gone_hook.value.status, gone_hook.value.type.rsplit(":", 1)[1]) == (
            404,
            "webhook-not-found",
        )

        c.delete_session(session_id)
        with pytest.raises(ProblemError) as gone:
            c.get_session(session_id)
        assert gone.value.status == 404

    assert recorder.operations == spec_operation_ids(openapi)
    assert_no_secret(recorder.exchanges)


@pytest.mark.anyio
async def test_every_operation_async(
    daemon: LocalDaemon, session_id: str, tmp_path: Path, openapi: dict[str, Any]
) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as c:
        health = await c.health()
        assert (health.status, health.version) == ("ok", __version__)
        assert "streamEvents" in str((await c.openapi())["paths"])

        agents = {agent.id: agent for agent in (await c.list_agents()).agents}
        assert set(agents) == set(AgentId)
        installed = await c.install_agent(AgentId.mock)
        assert installed.agent == AgentId.mock and installed.already_installed
        models = await c.agent_models("mock")
        assert models.default_model in {m.id for m in models.models}
        modes = await c.agent_modes("mock")
        assert PermissionMode.bypass in modes.permission_modes

        # Stored logins: write-only, the daemon describes them and never answers a secret.
        stored = await c.put_credential(AgentId.codex, CODEX_LOGIN)
        assert [(e.name, e.kind) for e in stored.entries] == [("chatgpt", LoginEntryKind.oauth)]
        assert stored.source is None
        replaced = await c.put_credential("codex", login=CODEX_LOGIN, source="auth.json")
        assert (replaced.agent, replaced.source) == (AgentId.codex, "auth.json")
        token = await c.put_credential("claude", token=CLAUDE_TOKEN)
        assert [(e.name, e.kind) for e in token.entries] == [("oauthToken", LoginEntryKind.token)]
        assert recorder.statuses("putCredential") == [201, 200, 201]
        assert await c.get_credential(AgentId.codex) == replaced
        logins = (await c.list_credentials()).credentials
        assert sorted(info.agent.value for info in logins) == ["claude", "codex"]
        by_id = {agent.id: agent for agent in (await c.list_agents()).agents}
        for agent in (AgentId.codex, AgentId.claude):
            credentials = by_id[agent].credentials
            assert credentials is not None and credentials.required
            assert CredentialKind.stored_login in credentials.available
        with pytest.raises(ProblemError) as refused:
            await c.put_credential("codex", {"OPENAI_API_KEY": None, "tokens": None})
        assert refused.value.status == 422
        assert refused.value.type.endswith("invalid-credential"), refused.value.type
        with pytest.raises(ProblemError) as both:
            await c.put_credential("claude", CODEX_LOGIN, token=CLAUDE_TOKEN)
        assert (both.value.status, both.value.type.rsplit(":", 1)[1]) == (422, "invalid-body")
        with pytest.raises(ProblemError) as unknown:
            await c.get_credential("nope")
        assert (unknown.value.status, unknown.value.type.rsplit(":", 1)[1]) == (
            404,
            "unknown-agent",
        )
        await c.delete_credential("claude")
        await c.delete_credential(AgentId.codex)
        assert recorder.statuses("deleteCredential") == [204, 204]
        with pytest.raises(ProblemError) as gone_login:
            await c.delete_credential("codex")
        assert gone_login.value.status == 404
        assert gone_login.value.type.endswith("credential-not-found")
        assert (await c.list_credentials()).credentials == []

        # A webhook for every session's end, at a receiver that is down (see the sync test).
        hook = await c.create_webhook(DOWN, ["sessionEnded"])
        assert hook.id.startswith("wh_") and hook.secret  # made by the daemon, shown once
        assert (await c.get_webhook(hook.id)).model_dump() == hook.model_dump(exclude={"secret"})
        listed_hooks = (await c.list_webhooks()).webhooks
        assert hook.id in {w.id for w in listed_hooks}
        assert hook.secret.encode() not in b"".join(e.body or b"" for e in recorder.exchanges[-2:])

        created = await c.create_session(
            session_id,
            agent=AgentId.mock,
            agent_mode="build",
            cwd=str(tmp_path),
            host_tools=[LOOKUP],
        )
        assert created.healthy
        info = await c.get_session(session_id)
        assert (info.agent_mode, info.status) == ("build", SessionStatus.idle)
        # Its workspace (the cwd): write, read, list, upload, snapshot, delete.
        written = await c.write_file(session_id, "notes.txt", "hello")
        assert (written.path, written.size) == ("notes.txt", 5)
        assert await c.read_file(session_id, "notes.txt") == b"hello"
        uploaded = await c.upload_files(session_id, one_file_tar("a.txt", b"abc"))
        assert (uploaded.path, uploaded.files, uploaded.bytes) == ("", 1, 3)
        listing = await c.list_files(session_id)
        assert [e.path for e in listing.entries] == ["a.txt", "notes.txt"]
        snapshot = await c.archive_files(session_id, all=True)
        assert (snapshot.files, snapshot.bytes, snapshot.skipped) == (2, 8, 0)
        await c.delete_file(session_id, "a.txt")
        await c.delete_file(session_id, "notes.txt", recursive=False)
        assert (await c.list_files(session_id, "")).entries == []
        assert recorder.statuses("writeFile") == [201]
        # Its processes: one run to its end; one started, followed, paged, killed, deleted.
        ran = await c.run_process(session_id, "sh", ["-c", "echo hi >&2"], env={"X": "1"})
        assert (ran.exit_code, ran.stderr) == (0, "hi\n")
        started = await c.start_process(session_id, "sh", ["-c", "echo ready; sleep 30"])
        pid = started.process_id
        async with c.follow_process_logs(session_id, pid) as logs:
            async for frame in logs:
                if isinstance(frame, LogChunk):
                    assert (await c.kill_process(session_id, pid)).process_id == pid
        assert isinstance(frame, ProcessInfo) and frame.signal == 9
        assert await c.stop_process(session_id, pid) == frame
        assert await c.get_process(session_id, pid) == frame
        assert [p.process_id for p in (await c.list_processes(session_id)).processes] == [pid]
        log = await c.process_logs(session_id, pid, offset=0)
        assert [chunk.data for chunk in log.chunks] == ["ready\n"]
        await c.delete_process(session_id, pid)
        assert (await c.list_processes(session_id)).processes == []
        # A process on a terminal: a ticket, its WebSocket, typed input, its exit.
        shell = await c.start_process(session_id, "sh", tty=True)
        assert shell.tty
        ticket = await c.create_terminal_ticket(session_id, shell.process_id)
        url = c.terminal_url(session_id, shell.process_id, ticket.ticket)
        assert url == daemon.base_url.replace("http://", "ws://", 1) + ticket.path
        async with await c.open_terminal(
            session_id, shell.process_id, ticket=ticket.ticket
        ) as terminal:
            recorder.opened_websocket(url)
            await terminal.send("stty size; exit 4\r")
            assert "24 80" in await aread_until(terminal, "24 80")  # the default size
            with anyio.fail_after(PATIENCE):
                assert await terminal.wait() == TerminalExit(exit_code=4)
        await c.delete_process(session_id, shell.process_id)
        listed = [s.session_id async for s in c.iter_sessions(page_size=1)]
        assert session_id in listed
        page = await c.list_sessions(status=SessionStatus.idle, limit=1000)
        assert session_id in {s.session_id for s in page.sessions}
        handed = await c.handover_session(session_id, agent=AgentId.mock, agent_mode="build")
        assert (handed.agent, handed.agent_mode) == (AgentId.mock, "build")

        turns = iter(SCRIPT)
        message, expected = next(turns)
        turn_id = (await c.send_message(session_id, message)).turn_id
        cancelled = False
        async with c.stream_events(session_id) as events:
            async for event in events:
                if isinstance(event, PermissionAskedEvent):
                    pending = (await c.get_session(session_id)).pending_permissions
                    assert [p.permission_id for p in pending] == [event.data.permission_id]
                    await c.reply_permission(session_id, event.data.permission_id, "always")
                elif isinstance(event, QuestionAskedEvent):
                    if turn_id == "turn_1":
                        await c.reply_question(
                            session_id, event.data.question_id, [["Red"], ["Olives"]]
                        )
                    else:
                        await c.reject_question(session_id, event.data.question_id)
                elif isinstance(event, ToolCallRequestedEvent):
                    if "again" in message:
                        await c.tool_call_reject(session_id, event.data.call_id)
                    else:
                        await c.tool_call_result(
                            session_id, event.data.call_id, [{"type": "text", "text": "found"}]
                        )
                elif isinstance(event, ItemDeltaEvent) and message == "slow" and not cancelled:
                    assert (await c.cancel_turn(session_id)).turn_id == turn_id
                    cancelled = True
                elif isinstance(event, TurnEndedEvent):
                    assert (event.data.turn_id, event.data.stop_reason) == (turn_id, expected)
                    # What the turn changed in the workspace: nothing, as its end says.
                    changes = await c.turn_changes(session_id, turn_id)
                    assert (changes.turn_id, changes.files) == (turn_id, [])
                    assert changes.counts == event.data.changes
                    step = next(turns, None)
                    if step is None:
                        ended = await c.end_session(session_id)
                        assert ended.status == SessionStatus.ended
                    else:
                        message, expected = step
                        turn_id = (await c.send_message(session_id, message)).turn_id
            assert isinstance(event, SessionEndedEvent)
            assert events.ended and events.last_sequence == event.sequence

        first = await c.get_events(session_id, offset=0, limit=5)
        assert [e.sequence for e in first.events] == [1, 2, 3, 4, 5] and first.has_more
        rest = await c.get_events(session_id, offset=5, limit=1000, include_raw=True)
        assert not rest.has_more and rest.events[-1].sequence == event.sequence
        sequences = [e.sequence async for e in c.iter_events(session_id, page_size=7)]
        assert sequences == list(range(1, event.sequence + 1))
        # The first turn as the AI SDK's UI message stream, replayed from the log.
        async with c.ui_message_stream(session_id, turn_id="turn_1") as ui:
            chunks = [chunk async for chunk in ui]
        assert chunks[0] == {
            "type": "start",
            "messageId": "msg_turn_1",
            "messageMetadata": {"turnId": "turn_1"},
        }
        assert chunks[-1]["type"] == "finish" and ui.done
        async with c.ui_message_stream(session_id) as idle:
            assert [chunk async for chunk in idle] == [] and idle.found is False

        exported = await c.export_session(session_id)
        assert exported.data["eventCount"] == event.sequence
        copy = await c.import_session(f"{session_id}-copy", exported.content)
        assert (copy.cwd, copy.event_count) == (str(tmp_path), event.sequence)
        await c.delete_session(copy.session_id)

        # The webhook's delivery of the session's end: attempted, failed, to be tried again.
        delivery_id = f"{session_id}:{event.sequence}"
        with anyio.fail_after(PATIENT):
            while True:
                hooked = await c.list_webhook_deliveries(hook.id, cursor=None, limit=500)
                tried = [d for d in hooked.deliveries if d.id == delivery_id and d.attempts >= 1]
                if tried:
                    break
                await anyio.sleep(0.05)
        assert (tried[0].event_type.value, tried[0].status.value) == ("sessionEnded", "pending")
        assert tried[0].last_error and tried[0].next_attempt_at
        paged = [d.id async for d in c.iter_webhook_deliveries(hook.id, page_size=1)]
        assert delivery_id in paged
        await c.delete_webhook(hook.id)
        with pytest.raises(ProblemError) as gone_hook:
            await c.delete_webhook(hook.id)
        assert (gone_hook.value.status, gone_hook.value.type.rsplit(":", 1)[1]) == (
            404,
            "webhook-not-found",
        )

        await c.delete_session(session_id)
        with pytest.raises(ProblemError) as gone:
            await c.get_session(session_id)
        assert gone.value.status == 404

    assert recorder.operations == spec_operation_ids(openapi)
    assert_no_secret(recorder.exchanges)
