"""An async handle on one session, and turns that answer permissions, questions
and host tool calls.
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import AsyncGenerator, Awaitable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ._core import ReconnectHook
from ._generated.models import (
    AgentId,
    CancelResponse,
    FileEntry,
    FileListing,
    MessagePart,
    PermissionAskedEvent,
    PermissionReply,
    ProcessInfo,
    ProcessList,
    ProcessLogs,
    ProcessOutput,
    QuestionAskedEvent,
    SendMessageResponse,
    SessionInfo,
    TerminalSize,
    TerminalTicket,
    ToolCallRequestedEvent,
    TurnChanges,
    TurnEndedEvent,
    UploadSummary,
)
from ._turn import (
    AsyncPermissionHandler,
    AsyncQuestionHandler,
    AsyncToolCallHandlers,
    ToolReply,
    TurnTracker,
    is_resolved,
    refused_output,
    tool_handler,
    tool_reply,
)
from .content import MessageInput
from .errors import ProblemError, SandboxDaemonError
from .events import Event, EventsPage
from .files import ArchiveSource, FileArchive, FileContent, ReadRange
from .portable import BundleSource, SessionExport
from .processes import AsyncProcessLogStream
from .retry import RetryPolicy
from .stream import AsyncEventStream
from .terminal import AsyncTerminal

if TYPE_CHECKING:
    from .async_client import AsyncClient

__all__ = ["AsyncSession", "AsyncTurn"]

T = TypeVar("T")


async def _resolve(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


class AsyncSession:
    """One session of an :class:`~sandbox_daemon.AsyncClient`, by id.

    Every method is the client's operation of the same name with this session's id. As an
    async context manager it ends the session on exit (its log stays readable).
    """

    def __init__(self, client: AsyncClient, session_id: str) -> None:
        self.client = client
        self.id = session_id

    def __repr__(self) -> str:
        return f"AsyncSession({self.id!r})"

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            await self.end()
            return
        # Leaving on an error: end the session if the daemon lets us, but let the error
        # that got us here be the one raised.
        with contextlib.suppress(SandboxDaemonError):
            await self.end()

    async def info(self) -> SessionInfo:
        """The session as the daemon sees it (``getSession``)."""
        return await self.client.get_session(self.id)

    async def send(
        self, message: MessageInput, *, idempotency_key: str | None = None
    ) -> SendMessageResponse:
        """Send a message, starting a turn (``sendMessage``); see :meth:`turn`.

        ``message`` is text, or parts (text and images: ``[text_part("..."),
        image_part(png)]``, or dicts with the wire names). ``idempotency_key`` makes it safe
        to repeat: the same key answers the first ``turn_id`` again instead of starting
        another turn (see ``send_message``).
        """
        return await self.client.send_message(self.id, message, idempotency_key=idempotency_key)

    async def turn(
        self,
        message: MessageInput,
        *,
        on_permission: AsyncPermissionHandler | None = None,
        on_question: AsyncQuestionHandler | None = None,
        on_tool_call: AsyncToolCallHandlers | None = None,
        include_raw: bool | None = None,
    ) -> AsyncTurn:
        """Send ``message`` now and return the turn, to iterate (``async for``) its events
        until its ``turnEnded``.

        Handlers may be plain functions or coroutines: ``on_permission`` answers each
        permission request (``once``, ``always`` or ``reject``), ``on_question`` each
        question request (one list of labels per question, or ``None`` to reject),
        ``on_tool_call`` each call of a client host tool (one handler, or a mapping of
        handlers by tool name; see :data:`~sandbox_daemon.ToolCallAnswer`: the output,
        ``{"output": ..., "is_error": True}``, ``{"reject": "why"}``, or ``None``). A tool
        handler that raises rejects the call with the error's message, as does an output
        the daemon refuses (``422``). Without a handler the requests are left for you to
        answer while iterating.
        """
        offset = (await self.info()).event_count
        turn_id = (await self.send(message)).turn_id
        stream = self.events(offset=offset, include_raw=include_raw)
        return AsyncTurn(self, turn_id, stream, on_permission, on_question, on_tool_call)

    def events(
        self,
        *,
        offset: int = 0,
        include_raw: bool | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncEventStream:
        """Follow the session's events after ``offset`` until it ends (``streamEvents``)."""
        return self.client.events(
            self.id,
            offset=offset,
            include_raw=include_raw,
            retry=retry,
            on_reconnect=on_reconnect,
        )

    async def get_events(
        self,
        *,
        offset: int | None = None,
        limit: int | None = None,
        include_raw: bool | None = None,
    ) -> EventsPage:
        """One page of stored events (``getEvents``)."""
        return await self.client.get_events(
            self.id, offset=offset, limit=limit, include_raw=include_raw
        )

    async def reply_permission(self, permission_id: str, reply: PermissionReply | str) -> None:
        """Answer a permission request (``replyPermission``)."""
        await self.client.reply_permission(self.id, permission_id, reply)

    async def reply_question(self, question_id: str, answers: Sequence[Sequence[str]]) -> None:
        """Answer a question request (``replyQuestion``)."""
        await self.client.reply_question(self.id, question_id, answers)

    async def reject_question(self, question_id: str) -> None:
        """Decline a question request (``rejectQuestion``)."""
        await self.client.reject_question(self.id, question_id)

    async def tool_call_result(
        self,
        call_id: str,
        output: str | Sequence[MessagePart | Mapping[str, Any]],
        *,
        is_error: bool | None = None,
    ) -> None:
        """Answer a client host tool call (``toolCallResult``)."""
        await self.client.tool_call_result(self.id, call_id, output, is_error=is_error)

    async def tool_call_reject(self, call_id: str, reason: str | None = None) -> None:
        """Reject a client host tool call (``toolCallReject``)."""
        await self.client.tool_call_reject(self.id, call_id, reason)

    async def export(self, *, include_raw: bool | None = None) -> SessionExport:
        """The session as one bundle, byte for byte as exported (``exportSession``)."""
        return await self.client.export_session(self.id, include_raw=include_raw)

    async def import_bundle(
        self, bundle: BundleSource, *, cwd: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """Import a bundle as this session (``importSession``): its text, bytes, a path to it
        or a :class:`~sandbox_daemon.SessionExport`; ``cwd`` replaces its working directory.
        """
        return await self.client.import_session(self.id, bundle, cwd=cwd)

    async def handover(
        self, agent: AgentId | str, *, model: str | None = None, agent_mode: str | None = None
    ) -> SessionInfo:
        """Continue the session on ``agent`` with ``model`` / ``agent_mode``
        (``handoverSession``); the log records ``sessionHandedOver``.
        """
        return await self.client.handover_session(
            self.id, agent=agent, model=model, agent_mode=agent_mode
        )

    async def list_files(self, path: str | None = None, *, depth: int | None = None) -> FileListing:
        """A directory of the session's workspace, ``depth`` levels down (``listFiles``)."""
        return await self.client.list_files(self.id, path, depth=depth)

    async def read_file(self, path: str, *, range: ReadRange | None = None) -> bytes:
        """A file's bytes, or the part ``range`` says (``readFile``)."""
        return await self.client.read_file(self.id, path, range=range)

    async def write_file(self, path: str, content: FileContent) -> FileEntry:
        """Write a file of the workspace, atomically (``writeFile``)."""
        return await self.client.write_file(self.id, path, content)

    async def delete_file(self, path: str, *, recursive: bool | None = None) -> None:
        """Delete a file, a symlink or a directory (``recursive``) (``deleteFile``)."""
        await self.client.delete_file(self.id, path, recursive=recursive)

    async def upload_files(
        self, archive: ArchiveSource, *, path: str | None = None
    ) -> UploadSummary:
        """Unpack a tar or tar.gz archive into the workspace (``uploadFiles``)."""
        return await self.client.upload_files(self.id, archive, path=path)

    async def archive_files(
        self,
        path: str | None = None,
        *,
        all: bool | None = None,
        max_file_bytes: int | None = None,
        max_bytes: int | None = None,
    ) -> FileArchive:
        """A tar.gz snapshot of the workspace, with its counts (``archiveFiles``)."""
        return await self.client.archive_files(
            self.id, path, all=all, max_file_bytes=max_file_bytes, max_bytes=max_bytes
        )

    async def run_process(
        self,
        command: str,
        args: Sequence[str] | None = None,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        max_output_bytes: int | None = None,
    ) -> ProcessOutput:
        """Run a program in the workspace to its end; its exit and output (``runProcess``)."""
        return await self.client.run_process(
            self.id,
            command,
            args,
            cwd=cwd,
            env=env,
            timeout_ms=timeout_ms,
            max_output_bytes=max_output_bytes,
        )

    async def start_process(
        self,
        command: str,
        args: Sequence[str] | None = None,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        tty: bool | None = None,
        size: TerminalSize | Mapping[str, int] | None = None,
    ) -> ProcessInfo:
        """Start a long-running program in the workspace, its output logged; on a
        terminal of ``size`` with ``tty=True`` (``startProcess``).
        """
        return await self.client.start_process(
            self.id, command, args, cwd=cwd, env=env, tty=tty, size=size
        )

    async def list_processes(self) -> ProcessList:
        """The session's long-running processes, oldest first (``listProcesses``)."""
        return await self.client.list_processes(self.id)

    async def get_process(self, process_id: str) -> ProcessInfo:
        """One process as it stands (``getProcess``)."""
        return await self.client.get_process(self.id, process_id)

    async def delete_process(self, process_id: str) -> None:
        """Forget an exited process and its log (``deleteProcess``)."""
        await self.client.delete_process(self.id, process_id)

    async def stop_process(self, process_id: str) -> ProcessInfo:
        """SIGTERM to a process's group (``stopProcess``)."""
        return await self.client.stop_process(self.id, process_id)

    async def kill_process(self, process_id: str) -> ProcessInfo:
        """SIGKILL to a process's group (``killProcess``)."""
        return await self.client.kill_process(self.id, process_id)

    async def process_logs(self, process_id: str, *, offset: int | None = None) -> ProcessLogs:
        """One page of a process's log after ``offset`` (``processLogs``)."""
        return await self.client.process_logs(self.id, process_id, offset=offset)

    def follow_process_logs(
        self,
        process_id: str,
        *,
        offset: int = 0,
        last_event_id: int | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncProcessLogStream:
        """Follow a process's log after ``offset`` until it ends, resuming after a drop
        (``processLogs`` with ``follow=true``).
        """
        return self.client.follow_process_logs(
            self.id,
            process_id,
            offset=offset,
            last_event_id=last_event_id,
            retry=retry,
            on_reconnect=on_reconnect,
        )

    async def create_terminal_ticket(self, process_id: str) -> TerminalTicket:
        """A ticket that opens a process's terminal once, within 30 s
        (``createTerminalTicket``).
        """
        return await self.client.create_terminal_ticket(self.id, process_id)

    def terminal_url(self, process_id: str, ticket: str | None = None) -> str:
        """The WebSocket URL of a process's terminal, with ``ticket`` (no request)."""
        return self.client.terminal_url(self.id, process_id, ticket)

    async def open_terminal(self, process_id: str, *, ticket: str | None = None) -> AsyncTerminal:
        """Open a process's terminal with a fresh ticket unless given one
        (``openTerminal``, a WebSocket).
        """
        return await self.client.open_terminal(self.id, process_id, ticket=ticket)

    async def turn_changes(self, turn_id: str) -> TurnChanges:
        """The files a turn added, modified and deleted, with diffs (``turnChanges``)."""
        return await self.client.turn_changes(self.id, turn_id)

    async def cancel(self) -> CancelResponse:
        """Interrupt the running turn (``cancelTurn``)."""
        return await self.client.cancel_turn(self.id)

    async def end(self) -> SessionInfo:
        """End the session; its events stay readable (``endSession``, idempotent)."""
        return await self.client.end_session(self.id)

    async def delete(self) -> None:
        """Remove the session and its events (``deleteSession``)."""
        await self.client.delete_session(self.id)


class AsyncTurn:
    """A turn in progress: ``async for`` yields its events, from its start up to and
    including its ``turnEnded``, answering permissions, questions and host tool calls
    with the handlers given to :meth:`AsyncSession.turn`.

    Raises :class:`~sandbox_daemon.TurnInterruptedError` if the session ends first.
    Single use; ``aclose`` it (or use ``async with``) to stop early.
    """

    def __init__(
        self,
        session: AsyncSession,
        turn_id: str,
        stream: AsyncEventStream,
        on_permission: AsyncPermissionHandler | None,
        on_question: AsyncQuestionHandler | None,
        on_tool_call: AsyncToolCallHandlers | None = None,
    ) -> None:
        self.session = session
        self.turn_id = turn_id
        self._stream = stream
        self._on_permission = on_permission
        self._on_question = on_question
        self._on_tool_call = on_tool_call
        self._tracker = TurnTracker(session.id, turn_id)
        self._events = self._run()

    @property
    def ended(self) -> TurnEndedEvent | None:
        """The turn's ``turnEnded`` once it arrived (its ``stop_reason``, ``usage``)."""
        return self._tracker.ended

    @property
    def text(self) -> str:
        """The assistant's messages completed so far in this turn, one per line."""
        return self._tracker.text

    def __aiter__(self) -> AsyncTurn:
        return self

    async def __anext__(self) -> Event:
        return await self._events.__anext__()

    async def wait(self) -> TurnEndedEvent:
        """Run the turn to its end (handlers still answer) and return its ``turnEnded``."""
        async for _ in self:
            pass
        assert self.ended is not None
        return self.ended

    async def aclose(self) -> None:
        """Stop following the turn (the turn itself goes on; see ``AsyncSession.cancel``)."""
        await self._events.aclose()

    async def __aenter__(self) -> AsyncTurn:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[Event, None]:
        async with self._stream as stream:
            async for event in stream:
                await self._answer(event)
                done = self._tracker.see(event)
                yield event
                if done:
                    return
        raise self._tracker.interrupted("the stream ended")

    async def _answer(self, event: Event) -> None:
        session = self.session
        if isinstance(event, PermissionAskedEvent) and self._on_permission is not None:
            request = event.data
            reply = await _resolve(self._on_permission(request))
            await session.reply_permission(request.permission_id, reply)
        elif isinstance(event, QuestionAskedEvent) and self._on_question is not None:
            question = event.data
            answers = await _resolve(self._on_question(question))
            if answers is None:
                await session.reject_question(question.question_id)
            else:
                await session.reply_question(question.question_id, answers)
        elif isinstance(event, ToolCallRequestedEvent):
            await self._answer_tool_call(event)

    async def _answer_tool_call(self, event: ToolCallRequestedEvent) -> None:
        call = event.data
        handler = tool_handler(self._on_tool_call, call.tool)
        if handler is None:
            return
        try:
            reply = tool_reply(await _resolve(handler(call)))
        except Exception as error:  # the handler's failure is the call's rejection
            reply = ToolReply.rejecting(str(error) or type(error).__name__)
        if reply is None:
            return
        try:
            await self._send_tool_reply(call.call_id, reply)
        except ProblemError as error:
            if error.status != 422 or reply.reject:
                raise
            await self._send_tool_reply(call.call_id, refused_output(error))

    async def _send_tool_reply(self, call_id: str, reply: ToolReply) -> None:
        try:
            if reply.reject:
                await self.session.tool_call_reject(call_id, reply.reason)
            else:
                await self.session.tool_call_result(call_id, reply.output, is_error=reply.is_error)
        except ProblemError as error:
            if not is_resolved(error):
                raise
