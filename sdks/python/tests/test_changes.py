"""What a turn changed in the workspace, against the real daemon: the mock's write turn
lists its file with a diff, the counts its ``turnEnded`` carries match, a change made
between turns belongs to no turn; an unknown turn, and one still running, are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_daemon import AsyncClient, Client, LocalDaemon, PermissionMode, ProblemError
from sandbox_daemon.models import (
    ChangeCounts,
    FileChangeKind,
    ItemDeltaEvent,
    StopReason,
    TurnEndedEvent,
)

from .conftest import FAST_RETRY
from .recording import AsyncRecordingTransport, RecordingTransport

# What the mock writes on `write` (crates/agents/src/mock): a file of its working directory.
WRITTEN = "mock_written.txt"
CONTENT = "written by the mock\n"


def slug(problem: ProblemError) -> str:
    return problem.type.rsplit(":", 1)[1]


def test_a_write_turn_lists_its_file_with_a_diff(
    daemon: LocalDaemon, session_id: str, tmp_path: Path
) -> None:
    recorder = RecordingTransport()
    with (
        Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c,
        c.start_session(
            "mock",
            session_id=session_id,
            cwd=str(tmp_path),
            permission_mode=PermissionMode.accept_edits,  # it writes without asking
        ) as session,
    ):
        ended = session.turn("write a file").wait()
        assert ended.data.stop_reason == StopReason.completed
        assert (tmp_path / WRITTEN).read_text() == CONTENT
        assert ended.data.changes == ChangeCounts(added=1, modified=0, deleted=0)

        changes = session.turn_changes(ended.data.turn_id)
        assert changes.turn_id == ended.data.turn_id
        assert changes.counts == ended.data.changes
        (file,) = changes.files
        assert (file.path, file.change) == (WRITTEN, FileChangeKind.add)
        assert (file.size_before, file.size_after) == (None, len(CONTENT))
        assert file.diff is not None and file.diff_omitted is None
        assert f"+++ b/{WRITTEN}" in file.diff and f"+{CONTENT}" in file.diff

        # A change made between turns belongs to neither: the next turn starts from it.
        session.write_file("between.txt", b"not a turn's\n")
        (tmp_path / WRITTEN).write_text("edited by hand\n")
        quiet = session.turn("hello").wait()
        assert quiet.data.changes == ChangeCounts(added=0, modified=0, deleted=0)
        assert session.turn_changes(quiet.data.turn_id).files == []
        # Each turn's changes stay as they were when it ended.
        assert c.turn_changes(session_id, ended.data.turn_id) == changes

        with pytest.raises(ProblemError) as unknown:
            session.turn_changes("turn_99")
        assert (unknown.value.status, slug(unknown.value)) == (404, "changes-not-found")
    assert recorder.statuses("turnChanges") == [200, 200, 200, 404]


@pytest.mark.anyio
async def test_turn_changes_async(daemon: LocalDaemon, session_id: str, tmp_path: Path) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as client:
        session = await client.start_session(
            "mock", session_id=session_id, cwd=str(tmp_path), permission_mode="acceptEdits"
        )
        (tmp_path / WRITTEN).write_text("before the turn\n")
        turn = await session.turn("write it again, slowly: slow")
        async for event in turn:
            if isinstance(event, ItemDeltaEvent) and turn.ended is None:
                # Its changes are known once it ends. (The spec's description names the
                # slug `turn-running`; the daemon answers its usual `turn-in-progress`.)
                with pytest.raises(ProblemError) as running:
                    await session.turn_changes(turn.turn_id)
                assert (running.value.status, slug(running.value)) == (409, "turn-in-progress")
                break
        ended = await turn.wait()
        assert isinstance(ended, TurnEndedEvent)
        assert ended.data.changes == ChangeCounts(added=0, modified=1, deleted=0)
        changes = await client.turn_changes(session_id, ended.data.turn_id)
        assert changes.counts == ended.data.changes
        (file,) = changes.files
        assert (file.path, file.change) == (WRITTEN, FileChangeKind.update)
        assert file.diff is not None
        assert "-before the turn\n" in file.diff and f"+{CONTENT}" in file.diff
        with pytest.raises(ProblemError) as unknown:
            await session.turn_changes("turn_0")
        assert (unknown.value.status, slug(unknown.value)) == (404, "changes-not-found")
        await session.end()
    assert recorder.statuses("turnChanges") == [409, 200, 404]
