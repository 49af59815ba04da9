"""The public API is precisely typed: mypy --strict accepts correct use of the installed
package (py.typed) and rejects misuse, line by line.
"""

from __future__ import annotations

import re
from pathlib import Path

from mypy import api

from .conftest import SDK_DIR

PROGRAM = """
from sandbox_daemon import AsyncClient, Client, PermissionReply
from sandbox_daemon.models import (
    DownloadingInstallProgress,
    ErrorEvent,
    InstallResponse,
    TurnEndedEvent,
)


def use(client: Client) -> None:
    session = client.start_session("mock", permission_mode="default")
    turn = session.turn("hi", on_permission=lambda request: PermissionReply.once)
    for event in turn:
        if isinstance(event, TurnEndedEvent):
            reveal_type(event.data.stop_reason)
        if isinstance(event, ErrorEvent):
            print(event.data.message)
    reveal_type(client.get_session("s").pending_permissions)
    reveal_type(client.get_events("s").events[0].sequence)
    client.send_message("s", 42)  # error: not a str
    client.get_events("s", offset="1")  # error: not an int
    client.create_session("s", agent="mock", modle="x")  # error: no such argument
    session.turn("hi", on_permission=lambda request: "sometimes")  # error: not a reply
    client.get_session("s").no_such_field  # error: no such attribute
    session.turn("hi", on_question=lambda request: [[1]])  # error: labels are strings
    for frame in client.install_agent_progress("claude", version="latest"):
        if isinstance(frame, DownloadingInstallProgress):
            reveal_type(frame.total)
        elif isinstance(frame, InstallResponse):
            reveal_type(frame.already_installed)
    client.install_agent_progress("claude", reinstall="yes")  # error: not a bool
    reveal_type(client.read_file("s", "a.txt", range=(0, None)))
    reveal_type(client.archive_files("s").skipped_paths)
    client.write_file("s", "a.txt", 42)  # error: not bytes, text or a binary file
    client.read_file("s", "a.txt", range=(0, "9"))  # error: offsets are ints
    client.upload_files("s", "site.tar")  # error: a str is neither bytes nor a path
    shell = client.start_process("s", "bash", tty=True, size={"cols": 80, "rows": 24})
    client.start_process("s", "bash", tty="yes")  # error: not a bool
    with client.open_terminal("s", shell.process_id) as terminal:
        terminal.send(b"q")
        terminal.resize("80", 24)  # error: columns are an int
        for output in terminal:
            reveal_type(output)
        reveal_type(terminal.wait(timeout=5).exit_code)
    reveal_type(client.turn_changes("s", "turn_1").files[0].diff)


async def use_async(client: AsyncClient) -> None:
    info = await client.get_session("s")
    reveal_type(info.status)
    async with client.events("s") as events:
        async for event in events:
            reveal_type(event.sequence)
    async with client.install_agent_progress("amp") as install:
        async for frame in install:
            reveal_type(frame)
    reveal_type(install.result)
    reveal_type((await client.upload_files("s", b"...", path="dir")).files)
    client.get_session("s").status  # error: a coroutine has no status
    async with await client.open_terminal("s", "p1") as aterminal:
        await aterminal.send("exit")
        reveal_type(aterminal.exit)
    reveal_type(client.terminal_url("s", "p1"))
"""


def test_mypy_strict_types_the_public_api(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(PROGRAM)
    out, err, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--cache-dir",
            str(SDK_DIR / ".mypy_cache"),
            "--config-file",
            str(SDK_DIR / "pyproject.toml"),
            str(program),
        ]
    )
    assert status == 1, out + err
    lines = PROGRAM.splitlines()
    found: dict[int, list[str]] = {}
    for message in out.splitlines():
        match = re.match(r".*program\.py:(\d+): (\w+): (.*)", message)
        assert match, message
        found.setdefault(int(match.group(1)), []).append(f"{match.group(2)}: {match.group(3)}")
    expected_errors = {n for n, line in enumerate(lines, 1) if "# error" in line}
    errors = {n for n, messages in found.items() if any(m.startswith("error") for m in messages)}
    assert errors == expected_errors, out
    notes = {lines[n - 1].strip(): m for n, ms in found.items() for m in ms if "Revealed" in m}
    assert "StopReason" in notes["reveal_type(event.data.stop_reason)"]
    assert (
        "list[sandbox_daemon._generated.models.PermissionRequest]"
        in notes['reveal_type(client.get_session("s").pending_permissions)']
    )
    assert notes['reveal_type(client.get_events("s").events[0].sequence)'].endswith('"int"')
    assert "SessionStatus" in notes["reveal_type(info.status)"]
    assert notes["reveal_type(event.sequence)"].endswith('"int"')
    assert notes["reveal_type(frame.total)"].endswith('"int | None"')
    assert notes["reveal_type(frame.already_installed)"].endswith('"bool"')
    frame = notes["reveal_type(frame)"]
    for model in ("ResolvingInstallProgress", "UnrecognizedInstallProgress", "InstallResponse"):
        assert f".{model}" in frame, frame
    assert notes["reveal_type(install.result)"].endswith('.InstallResponse | None"')
    assert notes['reveal_type(client.read_file("s", "a.txt", range=(0, None)))'].endswith('"bytes"')
    assert notes['reveal_type(client.archive_files("s").skipped_paths)'].endswith('"list[str]"')
    assert notes[
        'reveal_type((await client.upload_files("s", b"...", path="dir")).files)'
    ].endswith('"int"')
    assert notes["reveal_type(output)"].endswith('"bytes"')
    assert notes["reveal_type(terminal.wait(timeout=5).exit_code)"].endswith('"int | None"')
    assert notes['reveal_type(client.turn_changes("s", "turn_1").files[0].diff)'].endswith(
        '"str | None"'
    )
    assert notes["reveal_type(aterminal.exit)"].endswith('.TerminalExit | None"')
    assert notes['reveal_type(client.terminal_url("s", "p1"))'].endswith('"str"')
