"""A blocking handle on one session, and turns that answer permissions, questions
and host tool calls.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

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
    PermissionHandler,
    QuestionHandler,
    ToolCallHandlers,
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
from .processes import ProcessLogStream
from .retry import RetryPolicy
from .stream import EventStream
from .terminal import Terminal

if TYPE_CHECKING:
    from .client import Client

__all__ = ["Session", "Turn"]


class Session:
    """One session of a :class:`~sandbox_daemon.Client`, by id.

    Every method is the client's operation of the same name with this session's id. As a
    context manager it ends the session on exit (its log stays readable; ``delete``
    removes it).
    """

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.id = session_id

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.end()
            return
        # Leaving on an error: end the session if the daemon lets us, but let the error
        # that got us here be the one raised.
        with contextlib.suppress(SandboxDaemonError):
            self.end()

    def info(self) -> SessionInfo:
        """The session as the daemon sees it (``getSession``)."""
        return self.client.get_session(self.id)

    def send(
        self, message: MessageInput, *, idempotency_key: str | None = None
    ) -> SendMessageResponse:
        """Send a message, starting a turn (``sendMessage``); see :meth:`turn`.

        ``message`` is text, or parts (text and images: ``[text_part("..."),
        image_part(png)]``, or dicts with the wire names). ``idempotency_key`` makes it safe
        to repeat: the same key answers the first ``turn_id`` again instead of starting
        another turn (see ``send_message``).
        """
        return self.client.send_message(self.id, message, idempotency_key=idempotency_key)

    def turn(
        self,
        message: MessageInput,
        *,
        on_permission: PermissionHandler | None = None,
        on_question: QuestionHandler | None = None,
        on_tool_call: ToolCallHandlers | None = None,
        include_raw: bool | None = None,
    ) -> Turn:
        """Send ``message`` now and return the turn, to iterate its events until its
        ``turnEnded``.

        ``on_permission`` answers each permission request as it arrives (``once``,
        ``always`` or ``reject``); ``on_question`` answers each question request (one list
        of labels per question, or ``None`` to reject); ``on_tool_call`` answers each call
        of a client host tool (one handler, or a mapping of handlers by tool name; see
        :data:`~sandbox_daemon.ToolCallAnswer`: the output, ``{"output": ...,
        "is_error": True}``, ``{"reject": "why"}``, or ``None`` to leave it). A tool
        handler that raises rejects the call with the error's message, as does an output
        the daemon refuses (``422``). Without a handler the requests are left for you:
        answer them while iterating (``reply_permission`` ...).
        """
        offset = self.info().event_count
        turn_id = self.send(message).turn_id
        stream = self.events(offset=offset, include_raw=include_raw)
        return Turn(self, turn_id, stream, on_permission, on_question, on_tool_call)

    def events(
        self,
        *,
        offset: int = 0,
        include_raw: bool | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> EventStream:
        """Follow the session's events after ``offset`` until it ends (``streamEvents``)."""
        return self.client.events(
            self.id,
            offset=offset,
            include_raw=include_raw,
            retry=retry,
            on_reconnect=on_reconnect,
        )

    def get_events(
        self,
        *,
        offset: int | None = None,
        limit: int | None = None,
        include_raw: bool | None = None,
    ) -> EventsPage:
        """One page of stored events (``getEvents``)."""
        return self.client.get_events(self.id, offset=offset, limit=limit, include_raw=include_raw)

    def reply_permission(self, permission_id: str, reply: PermissionReply | str) -> None:
        """Answer a permission request (``replyPermission``)."""
        self.client.reply_permission(self.id, permission_id, reply)

    def reply_question(self, question_id: str, answers: Sequence[Sequence[str]]) -> None:
        """Answer a question request (``replyQuestion``)."""
        self.client.reply_question(self.id, question_id, answers)

    def reject_question(self, question_id: str) -> None:
        """Decline a question request (``rejectQuestion``)."""
        self.client.reject_question(self.id, question_id)

    def tool_call_result(
        self,
        call_id: str,
        output: str | Sequence[MessagePart | Mapping[str, Any]],
        *,
        is_error: bool | None = None,
    ) -> None:
        """Answer a client host tool call (``toolCallResult``)."""
        self.client.tool_call_result(self.id, call_id, output, is_error=is_error)

    def tool_call_reject(self, call_id: str, reason: str | None = None) -> None:
        """Reject a client host tool call (``toolCallReject``)."""
        self.client.tool_call_reject(self.id, call_id, reason)

    def export(self, *, include_raw: bool | None = None) -> SessionExport:
        """The session as one bundle, byte for byte as exported (``exportSession``)."""
        return self.client.export_session(self.id, include_raw=include_raw)

    def import_bundle(
        self, bundle: BundleSource, *, cwd: str | os.PathLike[str] | None = None
    ) -> SessionInfo:
        """Import a bundle as this session (``importSession``): its text, bytes, a path to it
        or a :class:`~sandbox_daemon.SessionExport`; ``cwd`` replaces its working directory.
        """
        return self.client.import_session(self.id, bundle, cwd=cwd)

    def handover(
        self, agent: AgentId | str, *, model: str | None = None, agent_mode: str | None = None
    ) -> SessionInfo:
        """Continue the session on ``agent`` with ``model`` / ``agent_mode``
        (``handoverSession``); the log records ``sessionHandedOver``.
        """
        return self.client.handover_session(
            self.id, agent=agent, model=model, agent_mode=agent_mode
        )

    def list_files(self, path: str | None = None, *, depth: int | None = None) -> FileListing:
        """A directory of the session's workspace, ``depth`` levels down (``listFiles``)."""
        return self.client.list_files(self.id, path, depth=depth)

    def read_file(self, path: str, *, range: ReadRange | None = None) -> bytes:
        """A file's bytes, or the part ``range`` says (``readFile``)."""
        return self.client.read_file(self.id, path, range=range)

    def write_file(self, path: str, content: FileContent) -> FileEntry:
        """Write a file of the workspace, atomically (``writeFile``)."""
        return self.client.write_file(self.id, path, content)

    def delete_file(self, path: str, *, recursive: bool | None = None) -> None:
        """Delete a file, a symlink or a directory (``recursive``) (``deleteFile``)."""
        self.client.delete_file(self.id, path, recursive=recursive)

    def upload_files(self, archive: ArchiveSource, *, path: str | None = None) -> UploadSummary:
        """Unpack a tar or tar.gz archive into the workspace (``uploadFiles``)."""
        return self.client.upload_files(self.id, archive, path=path)

    def archive_files(
        self,
        path: str | None = None,
        *,
        all: bool | None = None,
        max_file_bytes: int | None = None,
        max_bytes: int | None = None,
    ) -> FileArchive:
        """A tar.gz snapshot of the workspace, with its counts (``archiveFiles``)."""
        return self.client.archive_files(
            self.id, path, all=all, max_file_bytes=max_file_bytes, max_bytes=max_bytes
        )

    def run_process(
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
        return self.client.run_process(
            self.id,
            command,
            args,
            cwd=cwd,
            env=env,
            timeout_ms=timeout_ms,
            max_output_bytes=max_output_bytes,
        )

    def start_process(
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
        return self.client.start_process(
            self.id, command, args, cwd=cwd, env=env, tty=tty, size=size
        )

    def list_processes(self) -> ProcessList:
        """The session's long-running processes, oldest first (``listProcesses``)."""
        return self.client.list_processes(self.id)

    def get_process(self, process_id: str) -> ProcessInfo:
        """One process as it stands (``getProcess``)."""
        return self.client.get_process(self.id, process_id)

    def delete_process(self, process_id: str) -> None:
        """Forget an exited process and its log (``deleteProcess``)."""
        self.client.delete_process(self.id, process_id)

    def stop_process(self, process_id: str) -> ProcessInfo:
        """SIGTERM to a process's group (``stopProcess``)."""
        return self.client.stop_process(self.id, process_id)

    def kill_process(self, process_id: str) -> ProcessInfo:
        """SIGKILL to a process's group (``killProcess``)."""
        return self.client.kill_process(self.id, process_id)

    def process_logs(self, process_id: str, *, offset: int | None = None) -> ProcessLogs:
        """One page of a process's log after ``offset`` (``processLogs``)."""
        return self.client.process_logs(self.id, process_id, offset=offset)

    def follow_process_logs(
        self,
        process_id: str,
        *,
        offset: int = 0,
        last_event_id: int | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> ProcessLogStream:
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

    def create_terminal_ticket(self, process_id: str) -> TerminalTicket:
        """A ticket that opens a process's terminal once, within 30 s
        (``createTerminalTicket``).
        """
        return self.client.create_terminal_ticket(self.id, process_id)

    def terminal_url(self, process_id: str, ticket: str | None = None) -> str:
        """The WebSocket URL of a process's terminal, with ``ticket`` (no request)."""
        return self.client.terminal_url(self.id, process_id, ticket)

    def open_terminal(self, process_id: str, *, ticket: str | None = None) -> Terminal:
        """Open a process's terminal with a fresh ticket unless given one
        (``openTerminal``, a WebSocket).
        """
        return self.client.open_terminal(self.id, process_id, ticket=ticket)

    def turn_changes(self, turn_id: str) -> TurnChanges:
        """The files a turn added, modified and deleted, with diffs (``turnChanges``)."""
        return self.client.turn_changes(self.id, turn_id)

    def cancel(self) -> CancelResponse:
        """Interrupt the running turn (``cancelTurn``)."""
        return self.client.cancel_turn(self.id)

    def end(self) -> SessionInfo:
        """End the session; its events stay readable (``endSession``, idempotent)."""
        return self.client.end_session(self.id)

    def delete(self) -> None:
        """Remove the session and its events (``deleteSession``)."""
        self.client.delete_session(self.id)


class Turn:
    """A turn in progress: iterating it yields its events, from its start up to and
    including its ``turnEnded``, answering permissions, questions and host tool calls
    with the handlers given to :meth:`Session.turn`.

    Raises :class:`~sandbox_daemon.TurnInterruptedError` if the session ends first.
    Single use; close it (or use ``with``) to stop early.
    """

    def __init__(
        self,
        session: Session,
        turn_id: str,
        stream: EventStream,
        on_permission: PermissionHandler | None,
        on_question: QuestionHandler | None,
        on_tool_call: ToolCallHandlers | None = None,
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

    def __iter__(self) -> Turn:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def wait(self) -> TurnEndedEvent:
        """Run the turn to its end (handlers still answer) and return its ``turnEnded``."""
        for _ in self:
            pass
        assert self.ended is not None
        return self.ended

    def close(self) -> None:
        """Stop following the turn (the turn itself goes on; see ``Session.cancel``)."""
        self._events.close()

    def __enter__(self) -> Turn:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[Event, None, None]:
        with self._stream as stream:
            for event in stream:
                self._answer(event)
                done = self._tracker.see(event)
                yield event
                if done:
                    return
        raise self._tracker.interrupted("the stream ended")

    def _answer(self, event: Event) -> None:
        session = self.session
        if isinstance(event, PermissionAskedEvent) and self._on_permission is not None:
            request = event.data
            session.reply_permission(request.permission_id, self._on_permission(request))
        elif isinstance(event, QuestionAskedEvent) and self._on_question is not None:
            question = event.data
            answers = self._on_question(question)
            if answers is None:
                session.reject_question(question.question_id)
            else:
                session.reply_question(question.question_id, answers)
        elif isinstance(event, ToolCallRequestedEvent):
            self._answer_tool_call(event)

    def _answer_tool_call(self, event: ToolCallRequestedEvent) -> None:
        call = event.data
        handler = tool_handler(self._on_tool_call, call.tool)
        if handler is None:
            return
        try:
            reply = tool_reply(handler(call))
        except Exception as error:  # the handler's failure is the call's rejection
            reply = ToolReply.rejecting(str(error) or type(error).__name__)
        if reply is None:
            return
        try:
            self._send_tool_reply(call.call_id, reply)
        except ProblemError as error:
            if error.status != 422 or reply.reject:
                raise
            self._send_tool_reply(call.call_id, refused_output(error))

    def _send_tool_reply(self, call_id: str, reply: ToolReply) -> None:
        try:
            if reply.reject:
                self.session.tool_call_reject(call_id, reply.reason)
            else:
                self.session.tool_call_result(call_id, reply.output, is_error=reply.is_error)
        except ProblemError as error:
            if not is_resolved(error):
                raise
