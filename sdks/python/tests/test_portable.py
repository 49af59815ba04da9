"""Portable sessions through both clients against real daemons: export a session after two
turns, import it into a second daemon (another data dir) under another id and cwd, where the
mock agent still remembers the earlier messages; tampered bundles are refused; handover.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    LocalDaemon,
    ProblemError,
    Session,
    SessionExport,
)
from sandbox_daemon.models import AgentId, SessionHandedOverEvent, SessionStatus

from .conftest import FAST_RETRY, daemon_env

RECALLED = "recalled: hello one | hello two"


@pytest.fixture(scope="module")
def other_daemon(daemon_bin: str, offline_daemons: None) -> Iterator[LocalDaemon]:
    """A second daemon with its own data dir (and so its own store and agent homes)."""
    with LocalDaemon(daemon_bin, args=["--idle-timeout", "0"], env=daemon_env()) as running:
        yield running


@pytest.fixture
def other(other_daemon: LocalDaemon) -> Iterator[Client]:
    with other_daemon.client(retry=FAST_RETRY) as sync_client:
        yield sync_client


def events_sha256(events: list[dict[str, Any]]) -> str:
    """The checksum as the daemon computes it: each event's compact JSON and a newline."""
    digest = hashlib.sha256()
    for event in events:
        digest.update(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def two_turns(client: Client) -> Session:
    session = client.start_session("mock")
    for message in ("hello one", "hello two"):
        turn = session.turn(message)
        turn.wait()
        assert turn.text == f"echo: {message}"
    return session


def recall(session: Session) -> str:
    turn = session.turn("recall")
    turn.wait()
    return turn.text


def assert_problem(error: pytest.ExceptionInfo[ProblemError], status: int, kind: str) -> None:
    assert error.value.status == status, error.value
    assert error.value.type == f"urn:sandbox-daemon:problem:{kind}", error.value


def test_export_answers_the_bundle_as_received(client: Client) -> None:
    session = two_turns(client)
    count = session.info().event_count
    exported = session.export()
    assert isinstance(exported, SessionExport)
    assert exported.text.encode() == exported.content
    assert exported.data == json.loads(exported.text)
    bundle = exported.bundle
    assert (bundle.format, bundle.session.session_id, bundle.session.agent) == (
        1,
        session.id,
        AgentId.mock,
    )
    assert bundle.event_count == count == len(bundle.events)
    assert [e.sequence for e in bundle.events] == list(range(1, count + 1))
    assert bundle.events_sha256 == events_sha256(exported.data["events"])
    assert f"events={count}" in repr(exported)

    with_raw = client.export_session(session.id, include_raw=True)
    assert with_raw.data["eventCount"] == count
    assert with_raw.data["eventsSha256"] == events_sha256(with_raw.data["events"])


def test_import_into_a_second_daemon_under_another_id_and_cwd_remembers(
    client: Client, other: Client, tmp_path: Path
) -> None:
    source = two_turns(client)
    count = source.info().event_count
    exported = source.export()

    copy = other.session(f"{source.id}-imported")
    info = copy.import_bundle(exported, cwd=tmp_path)
    assert (info.session_id, info.agent, info.cwd) == (copy.id, AgentId.mock, str(tmp_path))
    assert (info.status, info.event_count) == (SessionStatus.idle, count)
    with pytest.raises(ProblemError) as elsewhere:
        client.get_session(copy.id)
    assert elsewhere.value.status == 404
    imported = [e.type for e in other.iter_events(copy.id)]
    assert imported == [e.type for e in exported.bundle.events]

    assert recall(copy) == f"{RECALLED}\necho: recall"
    assert copy.info().event_count > count
    # The source daemon's session goes on unchanged.
    assert recall(source) == f"{RECALLED}\necho: recall"


def test_import_takes_text_bytes_and_a_path(client: Client, other: Client, tmp_path: Path) -> None:
    exported = two_turns(client).export()
    path = exported.save(tmp_path / "bundle.json")
    assert path.read_bytes() == exported.content
    for name, bundle in (
        ("text", exported.text),
        ("bytes", exported.content),
        ("path", path),
    ):
        info = other.import_session(f"{exported.bundle.session.session_id}-{name}", bundle)
        assert info.event_count == exported.bundle.event_count, name
        assert info.cwd == exported.bundle.session.cwd, name
        assert recall(other.session(info.session_id)) == f"{RECALLED}\necho: recall", name


def test_a_tampered_bundle_is_refused_with_the_422_problem(
    client: Client, other: Client, session_id: str
) -> None:
    source = two_turns(client)
    exported = source.export()
    tampered = exported.text.replace('"delta":"echo:"', '"delta":"ECHO:"', 1)
    assert tampered != exported.text
    with pytest.raises(ProblemError) as refused:
        other.import_session(session_id, tampered)
    assert_problem(refused, 422, "invalid-bundle")
    assert "events" in refused.value.detail.lower() or "sha" in refused.value.detail.lower()

    newer = json.dumps({**exported.data, "format": exported.data["format"] + 1})
    with pytest.raises(ProblemError) as too_new:
        other.import_session(session_id, newer)
    assert_problem(too_new, 422, "invalid-bundle")

    with pytest.raises(ProblemError) as taken:
        client.import_session(source.id, exported)
    assert_problem(taken, 409, "session-exists")
    with pytest.raises(ProblemError) as relative:
        other.import_session(session_id, exported, cwd="relative/dir")
    assert_problem(relative, 400, "invalid-session-config")
    with pytest.raises(TypeError, match="as exported"):
        other.import_session(session_id, exported.data)  # type: ignore[arg-type]
    with pytest.raises(ProblemError) as nothing:
        other.get_session(session_id)
    assert nothing.value.status == 404


def test_handover_mock_to_mock_records_the_event_and_keeps_the_memory(client: Client) -> None:
    session = two_turns(client)
    before = session.info().event_count
    info = session.handover("mock", model="mock-1")
    assert (info.agent, info.model, info.status) == (AgentId.mock, "mock-1", SessionStatus.idle)
    assert info.event_count == before + 1
    handed = [e for e in client.iter_events(session.id) if isinstance(e, SessionHandedOverEvent)]
    assert len(handed) == 1
    assert handed[0].sequence == before + 1
    data = handed[0].data
    assert (data.from_agent, data.to_agent, data.model, data.turns) == (
        AgentId.mock,
        AgentId.mock,
        "mock-1",
        2,
    )
    assert recall(session) == f"{RECALLED}\necho: recall"

    with pytest.raises(ProblemError) as unknown_model:
        session.handover("mock", model="no-such-model")
    assert unknown_model.value.status == 400
    with pytest.raises(ProblemError) as unknown_agent:
        session.handover("cursor")
    assert unknown_agent.value.status == 422
    session.end()
    with pytest.raises(ProblemError) as ended:
        session.handover("mock")
    assert_problem(ended, 409, "session-ended")


@pytest.mark.anyio
async def test_export_import_and_handover_async(
    aclient: AsyncClient, other_daemon: LocalDaemon, tmp_path: Path
) -> None:
    source = await aclient.start_session(AgentId.mock)
    for message in ("hello one", "hello two"):
        turn = await source.turn(message)
        await turn.wait()
    exported = await source.export()
    assert exported.bundle.event_count == (await source.info()).event_count

    async with other_daemon.async_client(retry=FAST_RETRY) as other:
        bundle_file = exported.save(tmp_path / "bundle.json")
        workspace = tmp_path / "workspace"
        workspace.mkdir()
        copy = other.session(f"{source.id}-imported")
        info = await copy.import_bundle(bundle_file, cwd=workspace)
        assert (info.cwd, info.event_count) == (str(workspace), exported.bundle.event_count)
        turn = await copy.turn("recall")
        await turn.wait()
        assert turn.text == f"{RECALLED}\necho: recall"

        with pytest.raises(ProblemError) as refused:
            await other.import_session(
                f"{source.id}-tampered", exported.content.replace(b"hello two", b"hello 2")
            )
        assert_problem(refused, 422, "invalid-bundle")

    handed = await source.handover(AgentId.mock, model="mock-1")
    assert (handed.model, handed.event_count) == ("mock-1", exported.bundle.event_count + 1)
    events = [e async for e in aclient.iter_events(source.id, offset=exported.bundle.event_count)]
    assert isinstance(events[0], SessionHandedOverEvent) and events[0].data.turns == 2
    turn = await source.turn("recall")
    await turn.wait()
    assert turn.text == f"{RECALLED}\necho: recall"
