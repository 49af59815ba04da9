"""The async client: one coroutine per API operation, plus streams and session helpers."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import anyio
import httpx
from typing_extensions import Unpack

from . import _operations as ops
from ._core import (
    DEFAULT_INSTALL_TIMEOUT,
    DEFAULT_STREAM_READ_TIMEOUT,
    ReconnectHook,
    StreamCursor,
    build_request,
    resolve_settings,
    retry_delay,
    transport_error,
    with_read_timeout,
)
from ._generated.models import (
    AgentId,
    AgentsResponse,
    CancelResponse,
    CreatedWebhook,
    CreateSessionResponse,
    CredentialsResponse,
    FileEntry,
    FileListing,
    HealthResponse,
    HostTool,
    InstallResponse,
    McpServer,
    MessagePart,
    ModelsResponse,
    ModesResponse,
    PermissionMode,
    PermissionReply,
    ProcessInfo,
    ProcessList,
    ProcessLogs,
    ProcessOutput,
    SendMessageResponse,
    SessionInfo,
    SessionListResponse,
    SessionStatus,
    SessionWebhook,
    StoredLoginInfo,
    SystemPromptMode,
    TerminalSize,
    TerminalTicket,
    ToolPolicy,
    TurnChanges,
    UploadSummary,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryList,
    WebhookEventType,
    WebhookList,
)
from .async_session import AsyncSession
from .content import MessageInput
from .errors import ProblemError
from .events import Event, EventsPage
from .files import (
    ArchiveSource,
    FileArchive,
    FileContent,
    ReadRange,
    archive_bytes,
    content_bytes,
)
from .install import AsyncInstallStream
from .options import SessionOptions
from .portable import BundleSource, SessionExport, bundle_bytes
from .processes import AsyncProcessLogStream, LogCursor, run_timeouts
from .retry import RetryPolicy
from .stream import AsyncEventStream
from .terminal import AsyncTerminal, require_websockets, websocket_url
from .ui_stream import AsyncUiMessageStream

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient:
    """An async client of one daemon (asyncio or trio, through httpx and anyio).

    ``base_url`` defaults to ``$SANDBOX_DAEMON_ENDPOINT``, then ``http://127.0.0.1:2468``;
    ``token`` to ``$SANDBOX_DAEMON_TOKEN`` (sent as ``Authorization: Bearer``).
    ``timeout`` (seconds or an ``httpx.Timeout``, default 30 s) bounds connecting and each
    read and write of a call; event streams wait up to ``stream_read_timeout`` (default
    60 s; the daemon's keep-alives come every 15 s) for the next bytes before they count
    as dropped and resume. ``retry`` says how idempotent calls and streams are tried again
    (see :class:`~sandbox_daemon.RetryPolicy`); ``sendMessage`` and the other ``POST`` s
    that are not idempotent are never repeated, unless ``createSession`` or
    ``sendMessage`` is given an ``idempotency_key`` (the daemon then answers a repeat with
    the first answer). ``transport`` replaces httpx's own (tests, proxies).

    Use it as an async context manager (``async with AsyncClient(...) as client:``) or
    await :meth:`aclose`.
    Every non-2xx answer raises :class:`~sandbox_daemon.ProblemError`; a daemon that
    cannot be reached raises :class:`~sandbox_daemon.TransportError`.
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        stream_read_timeout: float | None = DEFAULT_STREAM_READ_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = resolve_settings(
            base_url, token, timeout, stream_read_timeout, retry, dict(headers or {})
        )
        self._http = httpx.AsyncClient(transport=transport, **self._settings.client_kwargs())

    @property
    def base_url(self) -> str:
        """The daemon's address."""
        return self._settings.base_url

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of idempotent calls and streams."""
        return self._settings.retry

    # --- lifecycle ------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connections (streams opened by this client stop working)."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- sending --------------------------------------------------------------------------

    async def _send(self, call: ops.Call[T], timeouts: httpx.Timeout | None = None) -> T:
        attempt = 1
        while True:
            try:
                response = await self._http.send(build_request(self._http, call, timeouts))
            except httpx.TransportError as error:
                delay = retry_delay(call, self.retry, attempt, error=error)
                if delay is None:
                    raise transport_error(call, attempt, error) from error
                await anyio.sleep(delay)
                attempt += 1
                continue
            if response.is_success:
                return call.parse(response)
            problem = ProblemError.from_response(response)
            delay = retry_delay(call, self.retry, attempt, problem=problem)
            if delay is None:
                raise problem
            await anyio.sleep(delay)
            attempt += 1

    async def _open(
        self, call: ops.Call[None], timeouts: httpx.Timeout | None = None
    ) -> httpx.Response:
        """Open a streamed response (one try; the stream decides about retries), with the
        stream timeouts unless ``timeouts``.
        """
        request = build_request(self._http, call, timeouts or self._settings.stream_timeout)
        response = await self._http.send(request, stream=True)
        if response.is_success:
            return response
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        raise ProblemError.from_response(response, body)

    # --- daemon ---------------------------------------------------------------------------

    async def health(self) -> HealthResponse:
        """``GET /health``: liveness, version, and whether the store can write (no token)."""
        return await self._send(ops.health())

    async def openapi(self) -> dict[str, Any]:
        """``GET /openapi.json``: the daemon's OpenAPI document, as it runs."""
        return await self._send(ops.openapi())

    # --- agents ---------------------------------------------------------------------------

    async def list_agents(self) -> AgentsResponse:
        """``GET /agents``: every agent, whether installed, and its capabilities."""
        return await self._send(ops.list_agents())

    async def install_agent(
        self,
        agent: AgentId | str,
        *,
        version: str | None = None,
        reinstall: bool | None = None,
        read_timeout: float | None = DEFAULT_INSTALL_TIMEOUT,
    ) -> InstallResponse:
        """``POST /agents/{agent}/install``: install an agent and answer a JSON summary.

        ``version`` is ``pinned``, ``latest`` or a version (default: the daemon's);
        ``reinstall`` downloads again even when that version is there. Left ``None``, they
        are not sent. An agent already installed answers at once; otherwise the daemon
        answers when the install is over, so the call waits up to ``read_timeout`` seconds
        (default 600; ``None``: no limit) instead of the client's ``timeout``. A failed
        install raises :class:`~sandbox_daemon.ProblemError` (``502``, ``agent_error`` of
        type ``installFailed``). :meth:`install_agent_progress` streams its progress.
        """
        return await self._send(
            ops.install_agent(agent, version, reinstall),
            with_read_timeout(self._settings.timeout, read_timeout),
        )

    def install_agent_progress(
        self,
        agent: AgentId | str,
        *,
        version: str | None = None,
        reinstall: bool | None = None,
        read_timeout: float | None = DEFAULT_INSTALL_TIMEOUT,
    ) -> AsyncInstallStream:
        """``POST /agents/{agent}/install`` with ``Accept: text/event-stream``: the same
        install (same arguments as :meth:`install_agent`), its progress as it happens.

        The stream yields the progress models (``ResolvingInstallProgress``,
        ``DownloadingInstallProgress``, …) then the final ``InstallResponse``, and ends; an
        install that fails raises :class:`~sandbox_daemon.ProblemError` with the ``error``
        frame's problem details. The request is sent when iteration starts, once: never
        retried, never resumed — a dropped connection raises
        :class:`~sandbox_daemon.StreamError` (the install may still be running on the
        daemon). ``read_timeout`` bounds the silence between two frames (default 600 s;
        ``None``: no limit). See :class:`~sandbox_daemon.AsyncInstallStream`.
        """
        call = ops.install_agent_stream(agent, version, reinstall)
        timeouts = with_read_timeout(self._settings.timeout, read_timeout)
        return AsyncInstallStream(lambda c: self._open(c, timeouts), call)

    async def agent_models(self, agent: AgentId | str) -> ModelsResponse:
        """``GET /agents/{agent}/models``: the models an agent offers."""
        return await self._send(ops.agent_models(agent))

    async def agent_modes(self, agent: AgentId | str) -> ModesResponse:
        """``GET /agents/{agent}/modes``: agent modes and permission modes."""
        return await self._send(ops.agent_modes(agent))

    # --- stored logins --------------------------------------------------------------------

    async def list_credentials(self) -> CredentialsResponse:
        """``GET /credentials``: every login the daemon keeps, one per agent: its agent, the
        file a session's private home gets, its entries (``name``, ``kind``: ``oauth``,
        ``apiKey``, ``token`` or ``other``, ``expires_at``), ``source``, ``stored_at`` and
        ``refreshed_at``. Never a secret.
        """
        return await self._send(ops.list_credentials())

    async def get_credential(self, agent: AgentId | str) -> StoredLoginInfo:
        """``GET /credentials/{agent}``: the login stored for an agent (never its secret).
        None stored is a ``404`` ``credential-not-found``, an unknown agent a ``404``
        ``unknown-agent`` (raised as :class:`~sandbox_daemon.ProblemError`).
        """
        return await self._send(ops.get_credential(agent))

    async def put_credential(
        self,
        agent: AgentId | str,
        login: Mapping[str, Any] | None = None,
        *,
        token: str | None = None,
        source: str | None = None,
    ) -> StoredLoginInfo:
        """``PUT /credentials/{agent}``: store a login for an agent, replacing the one stored,
        and answer its description (never its secret; the daemon answers ``201`` when none
        was stored, ``200`` when it replaced one).

        Give exactly one of ``login``, the agent's login file as it wrote it, parsed
        (Claude's ``.credentials.json``, Codex's ``auth.json``, OpenCode's ``auth.json``,
        Amp's ``secrets.json``, Pi's ``auth.json``), and ``token`` (Claude: a long-lived
        ``claude setup-token`` token); ``source`` says where it came from, for the listing.
        Arguments left ``None`` are not sent. Sessions of the agent with no ``token`` of their
        own, on a daemon whose environment has no credential for it, get it in their private
        home. A login that is not one of that agent is a ``422`` ``invalid-credential`` (its
        ``detail`` says why), both or neither of ``login`` and ``token`` a ``422``
        ``invalid-body`` (raised as :class:`~sandbox_daemon.ProblemError`). Retried after a
        connection error: storing the same login again replaces it with itself.
        """
        return await self._send(ops.put_credential(agent, login, token, source))

    async def delete_credential(self, agent: AgentId | str) -> None:
        """``DELETE /credentials/{agent}``: remove the login stored for an agent (sessions
        running on it keep their copy until their agent stops). None stored is a ``404``
        ``credential-not-found`` (raised as a ProblemError), as is a retry whose first try
        went through.
        """
        await self._send(ops.delete_credential(agent))

    # --- sessions -------------------------------------------------------------------------

    async def list_sessions(
        self,
        *,
        cursor: str | None = None,
        limit: int | None = None,
        status: SessionStatus | str | None = None,
    ) -> SessionListResponse:
        """``GET /sessions``: one page of sessions, oldest first (``next_cursor``)."""
        return await self._send(ops.list_sessions(cursor, limit, status))

    async def iter_sessions(
        self, *, status: SessionStatus | str | None = None, page_size: int | None = None
    ) -> AsyncIterator[SessionInfo]:
        """Every session, page after page (``list_sessions`` following ``next_cursor``)."""
        cursor: str | None = None
        while True:
            page = await self.list_sessions(cursor=cursor, limit=page_size, status=status)
            for session in page.sessions:
                yield session
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def create_session(
        self,
        session_id: str,
        *,
        agent: AgentId | str,
        agent_mode: str | None = None,
        agent_version: str | None = None,
        cwd: str | None = None,
        dangerously_skip_permissions: bool | None = None,
        model: str | None = None,
        permission_mode: PermissionMode | str | None = None,
        token: str | None = None,
        validate_token: bool | None = None,
        variant: str | None = None,
        system_prompt: str | None = None,
        system_prompt_mode: SystemPromptMode | str | None = None,
        tools: ToolPolicy | Mapping[str, Sequence[str]] | None = None,
        max_turns: int | None = None,
        mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None,
        env: Mapping[str, str] | None = None,
        host_tools: Sequence[HostTool | Mapping[str, Any]] | None = None,
        webhook: SessionWebhook | Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> CreateSessionResponse:
        """``POST /sessions/{sessionId}``: create a session and start its agent.

        Arguments left ``None`` are not sent (the daemon's defaults apply). The session's
        policy: ``system_prompt`` (``system_prompt_mode`` ``append``, the default, or
        ``replace``), ``tools`` (``{"allow": [...], "deny": [...]}`` in universal names:
        ``read``, ``shell``, ``mcp:<server>/<tool>``, ...), ``max_turns``, ``mcp_servers``
        (by name: ``{"type": "stdio", "command": ...}`` or ``{"type": "http", "url": ...}``,
        or the models ``StdioMcpServer`` / ``HttpMcpServer``) and ``env`` (extra variables
        for the agent's process). What an agent honours is in its ``policy`` and
        ``capabilities`` (``list_agents``); a field it cannot honour is refused with a
        ``422`` ``policy-unsupported`` naming it, and bad input with a ``422``
        ``invalid-body`` naming it (both raised as :class:`~sandbox_daemon.ProblemError`).

        ``host_tools`` offers the agent the host's own tools, served by the daemon: each
        ``{"name": ..., "description": ..., "inputSchema": {...}, "handler": {"type":
        "client"}}`` (answered with :meth:`tool_call_result` / :meth:`tool_call_reject`,
        or a turn's ``on_tool_call``) or ``"handler": {"type": "http", "url": ...}``
        (called by the daemon), or the model ``HostTool``.

        ``webhook`` is the session's own webhook, ``{"url": ..., "events": [...], "secret":
        ...}`` (or the model ``SessionWebhook``): the daemon ``POST`` s this session's events
        of those types there, signed with ``secret`` (see :meth:`create_webhook`); it goes
        with the session.

        ``idempotency_key`` (sent as ``Idempotency-Key``) makes the call safe to repeat: a
        request with the key of an earlier one (within 24 hours) gets that one's answer
        again instead of a ``409`` ``session-exists``, so with a key the call is retried
        after a connection error or a ``503`` as idempotent calls are. The same key with
        another request (another id or body) is a ``422`` ``idempotency-key-reused``; a key
        that is not 1 to 255 printable ASCII characters a ``400``.
        """
        return await self._send(
            ops.create_session(
                session_id,
                agent=agent,
                agent_mode=agent_mode,
                agent_version=agent_version,
                cwd=cwd,
                dangerously_skip_permissions=dangerously_skip_permissions,
                model=model,
                permission_mode=permission_mode,
                token=token,
                validate_token=validate_token,
                variant=variant,
                system_prompt=system_prompt,
                system_prompt_mode=system_prompt_mode,
                tools=tools,
                max_turns=max_turns,
                mcp_servers=mcp_servers,
                env=env,
                host_tools=host_tools,
                webhook=webhook,
                idempotency_key=idempotency_key,
            )
        )

    async def get_session(self, session_id: str) -> SessionInfo:
        """``GET /sessions/{sessionId}``: status, pending permissions and questions."""
        return await self._send(ops.get_session(session_id))

    async def delete_session(self, session_id: str) -> None:
        """``DELETE /sessions/{sessionId}``: remove a session and its events.

        Retried after a connection error: if the first try went through, the retry answers
        ``404`` (raised as a ProblemError).
        """
        await self._send(ops.delete_session(session_id))

    async def end_session(self, session_id: str) -> SessionInfo:
        """``POST /sessions/{sessionId}/end``: stop the agent; the log stays readable."""
        return await self._send(ops.end_session(session_id))

    async def cancel_turn(self, session_id: str) -> CancelResponse:
        """``POST /sessions/{sessionId}/cancel``: interrupt the running turn."""
        return await self._send(ops.cancel_turn(session_id))

    async def turn_changes(self, session_id: str, turn_id: str) -> TurnChanges:
        """``GET /sessions/{sessionId}/turns/{turnId}/changes``: the files a turn added,
        modified and deleted in the session's workspace, whichever agent (or program) made
        the changes, by path: ``change`` (``add``, ``update``, ``delete``), sizes before and
        after, and a unified ``diff`` of text (or ``diff_omitted`` saying why not:
        ``binary``, ``tooLarge``, ``turnLimit``, ``modeOnly``, ``unreadable``); ``counts``
        are those its ``turnEnded`` event carries (``changes``). The workspace as the turn
        started against it as the turn ended; ``.git``, ``node_modules`` and what
        ``.gitignore`` ignores are left out.

        A turn still running is a ``409`` ``turn-running``; a ``404`` ``changes-not-found``
        when they are not known (no such turn, the daemon did not see it start or end,
        changes not tracked, or a workspace of more files than it tracks).
        """
        return await self._send(ops.turn_changes(session_id, turn_id))

    def ui_message_stream(
        self, session_id: str, turn_id: str | None = None
    ) -> AsyncUiMessageStream:
        """``GET /sessions/{sessionId}/ui-stream``: a turn as the Vercel AI SDK's UI message
        stream (v1), its chunks as dicts (``{"type": "text-delta", "id": ..., "delta": ...}``,
        the ``ai`` package's ``UIMessageChunk`` s) until the turn's ``finish`` (or ``abort``):
        turn ``turn_id`` replayed from its start then followed live, or without it the
        running turn (nothing when none runs: the stream's ``found`` is then ``False``).
        Reading a turn again gives the same chunks under the same ``messageId``
        (``msg_<turnId>``). An unknown turn raises :class:`~sandbox_daemon.ProblemError`
        ``404`` ``turn-not-found`` when iteration starts. See
        :class:`~sandbox_daemon.AsyncUiMessageStream`.
        """
        return AsyncUiMessageStream(self._open, ops.ui_message_stream(session_id, turn_id))

    async def send_message(
        self,
        session_id: str,
        message: MessageInput | None = None,
        *,
        content: Sequence[MessagePart | Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ) -> SendMessageResponse:
        """``POST /sessions/{sessionId}/messages``: start a turn (never retried without
        ``idempotency_key``).

        The message is text (sent as ``message``) or parts (sent as ``content``): text and
        images, as the models ``TextMessagePart`` / ``ImageMessagePart`` (see
        :func:`~sandbox_daemon.image_part`) or dicts with the wire names; parts can be given
        as ``message`` too. An agent that takes no images refuses them with a ``422``
        ``policy-unsupported`` naming the part (``content[1]``).

        ``idempotency_key`` (sent as ``Idempotency-Key``) makes the call safe to repeat: a
        request with the key of an earlier one (within 24 hours) answers that one's
        ``turn_id`` again instead of starting another turn (or a ``409``), so with a key the
        call is retried after a connection error or a ``503``. The same key with another
        message is a ``422`` ``idempotency-key-reused``.

        ``traceparent`` (and ``tracestate``) carry the caller's W3C trace context: with
        trace export on, the turn's span is a child of the caller's span.
        """
        return await self._send(
            ops.send_message(session_id, message, content, idempotency_key, traceparent, tracestate)
        )

    # --- portable sessions --------------------------------------------------------------

    async def export_session(
        self, session_id: str, *, include_raw: bool | None = None
    ) -> SessionExport:
        """``GET /sessions/{sessionId}/export``: the session as one bundle (its record
        without credentials, the agent's native state, the event log with its count and
        SHA-256), as a :class:`~sandbox_daemon.SessionExport`: its ``content`` / ``text`` are
        the document byte for byte as received (keep and import those: the checksum covers
        each event's text), ``data`` and ``bundle`` the same parsed. ``include_raw`` adds each
        event's native ``raw`` payload. Refused while a turn runs (``409``
        ``turn-in-progress``).
        """
        return await self._send(ops.export_session(session_id, include_raw))

    async def import_session(
        self,
        session_id: str,
        bundle: BundleSource,
        *,
        cwd: str | os.PathLike[str] | None = None,
    ) -> SessionInfo:
        """``POST /sessions/{sessionId}/import``: store a bundle written by
        :meth:`export_session` (on this or another daemon) as session ``session_id``, and
        answer it. ``bundle`` is the JSON text (a ``str``), its bytes, a path to a file
        holding it (a path-like such as ``pathlib.Path``), or a
        :class:`~sandbox_daemon.SessionExport`; it is sent unchanged. ``cwd`` (absolute,
        existing) replaces the bundle's working directory. The log keeps its sequences and
        the next message resumes the agent with its memory. Never retried.

        A bundle that cannot be imported (a newer ``format``, events or a native file that do
        not match their checksum) is a ``422`` ``invalid-bundle``; a taken id a ``409``
        ``session-exists``; a bad ``cwd`` a ``400`` ``invalid-session-config``; a bundle over
        1 GiB a ``413`` (all raised as :class:`~sandbox_daemon.ProblemError`).
        """
        content = await anyio.to_thread.run_sync(bundle_bytes, bundle)
        where = None if cwd is None else os.fspath(cwd)
        return await self._send(ops.import_session(session_id, content, where))

    async def handover_session(
        self,
        session_id: str,
        *,
        agent: AgentId | str,
        model: str | None = None,
        agent_mode: str | None = None,
    ) -> SessionInfo:
        """``POST /sessions/{sessionId}/handover``: continue the session on ``agent``
        (another agent, or the same one afresh) with ``model`` and ``agent_mode`` (default:
        the agent's); the earlier turns become the new agent's own history and the log
        records ``sessionHandedOver``. Answers the session as it stands now. Refused while a
        turn runs (``409`` ``turn-in-progress``) or once ended (``409`` ``session-ended``);
        an unknown agent is a ``404``, a model or mode it does not offer a ``400``
        ``invalid-session-config``. Never retried.
        """
        return await self._send(ops.handover_session(session_id, agent, model, agent_mode))

    # --- workspace files ------------------------------------------------------------------

    async def list_files(
        self, session_id: str, path: str | None = None, *, depth: int | None = None
    ) -> FileListing:
        """``GET /sessions/{sessionId}/files``: the entries of a directory of the session's
        workspace (``path``, relative to its working directory, ``/``-separated; default: the
        working directory itself), ``depth`` levels down (default 1, at most 32), each
        directory followed by its own entries in name order. Symlinks are listed, not
        followed; ``truncated`` says the listing stopped at 10,000 entries. Nothing there is
        a ``404`` ``file-not-found``, a file a ``409`` ``wrong-file-kind``.
        """
        return await self._send(ops.list_files(session_id, path, depth))

    async def read_file(
        self, session_id: str, path: str, *, range: ReadRange | None = None
    ) -> bytes:
        """``GET /sessions/{sessionId}/files/content``: a file's bytes; with ``range`` only
        that part (``(first, last)`` offsets, both included, ``last`` ``None`` for the rest
        of the file, or a ``Range`` header value such as ``"bytes=-100"``, the last 100).
        A range that starts past the end is a ``416`` ``range-not-satisfiable`` (its
        ``Content-Range`` header, ``bytes */size``, is in the error's ``headers``); several
        ranges answer the whole file. A directory is a ``409`` ``wrong-file-kind``.
        """
        return await self._send(ops.read_file(session_id, path, range))

    async def write_file(self, session_id: str, path: str, content: FileContent) -> FileEntry:
        """``PUT /sessions/{sessionId}/files/content``: write a file, creating missing parent
        directories, and answer its entry. ``content`` is bytes, text (sent as UTF-8) or a
        binary file object (read to its end first, in a worker thread); it is sent as
        ``application/octet-stream``. The daemon writes it atomically (a reader sees the old
        content or the new) and answers ``201`` when it created the file, ``200`` when it
        replaced one (which keeps its permission bits). Retried after a connection error:
        writing the same bytes again gives the same file. A directory at ``path`` is a
        ``409`` ``wrong-file-kind``; a body over ``--max-upload-bytes`` a ``413``.
        """
        data = await anyio.to_thread.run_sync(content_bytes, content)
        return await self._send(ops.write_file(session_id, path, data))

    async def delete_file(
        self, session_id: str, path: str, *, recursive: bool | None = None
    ) -> None:
        """``DELETE /sessions/{sessionId}/files``: delete a file, a symlink (never what it
        points to) or an empty directory; ``recursive=True`` deletes a directory with
        everything in it (without, a ``409`` ``directory-not-empty``). Nothing there is a
        ``404`` ``file-not-found``, as is a retry whose first try went through; the workspace
        itself (``.``) a ``409`` ``workspace-root``.
        """
        await self._send(ops.delete_file(session_id, path, recursive))

    async def upload_files(
        self, session_id: str, archive: ArchiveSource, *, path: str | None = None
    ) -> UploadSummary:
        """``POST /sessions/{sessionId}/files/upload``: unpack a tar or tar.gz archive into
        the directory ``path`` of the workspace (created if missing; default: the working
        directory) and answer what it wrote. ``archive`` is the archive's bytes, a binary
        file object or a path-like to an archive file (read in a worker thread); it is sent
        as ``application/gzip`` when it is gzip-compressed, else as ``application/x-tar``.
        Never retried.

        Every entry is checked before anything is written: an entry that is absolute or
        names ``..``, a device node, a FIFO, a hard link or a symlink pointing outside the
        workspace refuses the whole archive (``422`` ``archive-entry-refused``), as a body
        that is not an archive does (``422`` ``invalid-archive``); too many entries or bytes
        are a ``413`` ``files-limit-exceeded``.
        """
        data = await anyio.to_thread.run_sync(archive_bytes, archive)
        return await self._send(ops.upload_files(session_id, data, path))

    async def archive_files(
        self,
        session_id: str,
        path: str | None = None,
        *,
        all: bool | None = None,
        max_file_bytes: int | None = None,
        max_bytes: int | None = None,
    ) -> FileArchive:
        """``GET /sessions/{sessionId}/files/archive``: a tar.gz snapshot of the workspace
        (or of its directory ``path``), entries named relative to it, as a
        :class:`~sandbox_daemon.FileArchive`: the archive (``content``, ``open()`` for
        :mod:`tarfile`, ``save(path)``) and its counts (``files``, ``bytes``, ``skipped``,
        ``skipped_paths`` decoded). Leaves out ``.git``, ``node_modules`` and what
        ``.gitignore`` ignores unless ``all``, and files over ``max_file_bytes`` (default
        the daemon's, 1 MiB; named in ``skipped_paths``). Files adding up to more than
        ``max_bytes`` (default 12 MiB) are a ``409`` ``archive-too-large``.
        """
        return await self._send(ops.archive_files(session_id, path, all, max_file_bytes, max_bytes))

    # --- processes ------------------------------------------------------------------------

    async def run_process(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] | None = None,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout_ms: int | None = None,
        max_output_bytes: int | None = None,
    ) -> ProcessOutput:
        """``POST /sessions/{sessionId}/processes/run``: run a program in the session's
        workspace to its end and answer how it ended (``exit_code``, or ``signal``) and what
        it wrote (``stdout``, ``stderr``, as text). ``command`` is a name looked up on
        ``PATH`` or a path relative to ``cwd``; ``args`` its arguments (a list: no shell is
        involved, use ``["sh", "-c", ...]`` for one); ``cwd`` a directory relative to the
        session's working directory (default: that one); ``env`` variables added to the
        agents' allow-listed environment. The program gets a private ``HOME`` and runs as the
        agent user, in a process group of its own.

        Past ``timeout_ms`` (default 60,000) the whole group is killed and the answer says
        ``timed_out``; output past ``max_output_bytes`` per stream (default 1 MiB) is read and
        dropped (``stdout_truncated``). More than the daemon allows is cut to its limits
        (``--process-timeout``, 1 h, and ``--process-output-bytes``, 16 MiB, unless set).
        The call waits for the run: the client's read timeout plus the run's own. Never
        retried (each try would run the program again); abandoning the call kills the run.

        A protected variable in ``env`` (``HOME``, ``PATH``, ``LD_*``, credentials) is a
        ``422`` ``invalid-body``, a program that cannot be started a ``422``
        ``process-not-started``, ``--max-processes`` running already a ``409``
        ``too-many-processes``, an ended session a ``409`` ``session-ended``. A ``cwd`` that
        is absolute or names ``..`` is refused before anything runs, one leading out
        through a symlink is a ``403`` ``outside-workspace``, a missing one a ``404``
        ``file-not-found``, a file a ``409`` ``wrong-file-kind``.
        """
        call = ops.run_process(session_id, command, args, cwd, env, timeout_ms, max_output_bytes)
        return await self._send(call, run_timeouts(self._settings.timeout, timeout_ms))

    async def start_process(
        self,
        session_id: str,
        command: str,
        args: Sequence[str] | None = None,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        tty: bool | None = None,
        size: TerminalSize | Mapping[str, int] | None = None,
    ) -> ProcessInfo:
        """``POST /sessions/{sessionId}/processes``: start a long-running program (a dev
        server, a watcher, ...) as :meth:`run_process` runs one (same ``command``, ``args``,
        ``cwd``, ``env`` and refusals), and answer at once with its ``ProcessInfo``
        (``process_id``, ``pid``, ``status`` ``running``). Its output is logged: read it
        with :meth:`process_logs`, follow it with :meth:`follow_process_logs`. It runs until
        it exits, is stopped or killed, or the session ends. Never retried (each try would
        start another).

        ``tty=True`` runs it on a pseudo-terminal (its stdin, stdout and stderr; ``TERM``
        is ``xterm-256color`` unless ``env`` names one) of ``size`` (``{"cols": ...,
        "rows": ...}``, 1 to 1,000 each, or the model ``TerminalSize``; default 80 by 24),
        reachable with :meth:`open_terminal`; its output is logged as ``stdout``. A
        ``size`` without ``tty`` is a ``422`` ``invalid-body``.
        """
        return await self._send(
            ops.start_process(session_id, command, args, cwd, env, tty=tty, size=size)
        )

    async def list_processes(self, session_id: str) -> ProcessList:
        """``GET /sessions/{sessionId}/processes``: the session's long-running processes,
        oldest first, running and exited (until deleted).
        """
        return await self._send(ops.list_processes(session_id))

    async def get_process(self, session_id: str, process_id: str) -> ProcessInfo:
        """``GET /sessions/{sessionId}/processes/{processId}``: one process as it stands
        (``status``, and once ``exited`` its ``exit_code`` or ``signal`` and ``ended_at``).
        An unknown one is a ``404`` ``process-not-found``.
        """
        return await self._send(ops.get_process(session_id, process_id))

    async def delete_process(self, session_id: str, process_id: str) -> None:
        """``DELETE /sessions/{sessionId}/processes/{processId}``: forget an exited process
        and its log. One still running is a ``409`` ``process-running`` (stop or kill it
        first); an unknown one a ``404`` ``process-not-found``, as is a retry whose first try
        went through.
        """
        await self._send(ops.delete_process(session_id, process_id))

    async def stop_process(self, session_id: str, process_id: str) -> ProcessInfo:
        """``POST /sessions/{sessionId}/processes/{processId}/stop``: ask a process to stop
        (SIGTERM to its process group) and answer it as it stands, usually still
        ``running``: its end shows in its log's ``exit`` and in :meth:`get_process`. Nothing
        happens to one that has ended. Retried after a connection error: a repeat signals
        the group again (harmless, unless a program takes a second SIGTERM as "hurry").
        """
        return await self._send(ops.stop_process(session_id, process_id))

    async def kill_process(self, session_id: str, process_id: str) -> ProcessInfo:
        """``POST /sessions/{sessionId}/processes/{processId}/kill``: kill a process
        (SIGKILL to its process group) and answer it as it stands. Nothing happens to one
        that has ended; retried after a connection error.
        """
        return await self._send(ops.kill_process(session_id, process_id))

    async def process_logs(
        self, session_id: str, process_id: str, *, offset: int | None = None
    ) -> ProcessLogs:
        """``GET /sessions/{sessionId}/processes/{processId}/logs``: one page of a
        process's log, the chunks with ``sequence > offset`` still kept (at most 1,000),
        ``first_kept`` (chunks before it were dropped to keep the log within the daemon's
        ``--process-log-bytes``) and the ``process`` as it stands (``exited``: no chunk will
        follow these). The next page starts at the last chunk's sequence.
        """
        return await self._send(ops.process_logs(session_id, process_id, offset))

    def follow_process_logs(
        self,
        session_id: str,
        process_id: str,
        *,
        offset: int = 0,
        last_event_id: int | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncProcessLogStream:
        """``GET /sessions/{sessionId}/processes/{processId}/logs?follow=true``: the log
        after ``offset`` (or after ``last_event_id``, which wins, as the header does), then
        live, until the process ends: ``LogChunk`` s, a ``LogGap`` where chunks were dropped
        before they could be sent, and last the ``ProcessInfo`` it ended with (also the
        stream's ``exit``). Resumes by itself after a dropped connection, from the last
        sequence delivered (see :class:`~sandbox_daemon.AsyncProcessLogStream`).

        ``retry`` overrides the client's policy for reconnecting; ``on_reconnect`` is
        called before each new connection (logging, tests).
        """
        start = offset if last_event_id is None else last_event_id
        cursor = LogCursor(session_id, process_id, start, retry or self.retry, on_reconnect)
        return AsyncProcessLogStream(self._open, cursor)

    # --- terminals ------------------------------------------------------------------------

    async def create_terminal_ticket(self, session_id: str, process_id: str) -> TerminalTicket:
        """``POST /sessions/{sessionId}/processes/{processId}/terminal-ticket``: a ticket
        that opens the terminal of a process started with ``tty=True`` once, within 30 s
        (``ticket``, ``expires_at``, and ``path``: the WebSocket's path with it, relative to
        the daemon's address). For a client that cannot send the ``Authorization`` header
        on a WebSocket (a browser): hand it :meth:`terminal_url`, never the token. A process
        without a terminal is a ``409`` ``not-a-terminal``, an unknown one a ``404``
        ``process-not-found``.
        """
        return await self._send(ops.create_terminal_ticket(session_id, process_id))

    def terminal_url(self, session_id: str, process_id: str, ticket: str | None = None) -> str:
        """The WebSocket URL of a process's terminal (``GET
        /sessions/{sessionId}/processes/{processId}/terminal``): the client's address as
        ``ws://`` (``wss://`` for ``https://``), with ``?ticket=`` when ``ticket`` is given
        (a daemon with a token wants one, or the ``Authorization`` header). No request is
        made.
        """
        return websocket_url(self.base_url, ops.terminal_path(session_id, process_id, ticket))

    async def open_terminal(
        self, session_id: str, process_id: str, *, ticket: str | None = None
    ) -> AsyncTerminal:
        """``GET /sessions/{sessionId}/processes/{processId}/terminal``: open the terminal
        of a process started with ``tty=True``, a WebSocket (see
        :class:`~sandbox_daemon.AsyncTerminal`): output as bytes, first what the log still keeps
        (the screen is redrawn), then live, until the process ends; input, resizes, and
        how it ended. Closing it leaves the process running. Needs the ``websockets``
        package (the SDK's ``terminal`` extra), and asyncio (not trio).

        A fresh ticket is minted for the connection (:meth:`create_terminal_ticket`)
        unless ``ticket`` is given; the connection is tried once. A refused handshake
        raises :class:`~sandbox_daemon.ProblemError`: a ``401``
        ``terminal-ticket-refused`` (a ticket used, expired or for another process), a
        ``404`` ``process-not-found``, a ``409`` ``not-a-terminal``.
        """
        require_websockets()
        if ticket is None:
            ticket = (await self.create_terminal_ticket(session_id, process_id)).ticket
        return await AsyncTerminal.connect(
            self.terminal_url(session_id, process_id, ticket),
            session_id,
            process_id,
            headers=self._settings.request_headers(),
            open_timeout=self._settings.timeout.connect,
        )

    # --- events ---------------------------------------------------------------------------

    async def get_events(
        self,
        session_id: str,
        *,
        offset: int | None = None,
        limit: int | None = None,
        include_raw: bool | None = None,
    ) -> EventsPage:
        """``GET /sessions/{sessionId}/events``: events with ``sequence > offset``."""
        return await self._send(ops.get_events(session_id, offset, limit, include_raw))

    async def iter_events(
        self,
        session_id: str,
        *,
        offset: int = 0,
        page_size: int | None = None,
        include_raw: bool | None = None,
    ) -> AsyncIterator[Event]:
        """Every stored event after ``offset``, page after page, until ``has_more`` is
        false (it does not wait for new events: use :meth:`events` to follow live).
        """
        while True:
            page = await self.get_events(
                session_id, offset=offset, limit=page_size, include_raw=include_raw
            )
            for event in page.events:
                yield event
            if not page.has_more or page.next_offset is None:
                return
            offset = page.next_offset

    def stream_events(
        self,
        session_id: str,
        *,
        offset: int = 0,
        include_raw: bool | None = None,
        last_event_id: int | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncEventStream:
        """``GET /sessions/{sessionId}/events/sse``: the log after ``offset`` (or after
        ``last_event_id``, which wins, as the header does), then live, until
        ``sessionEnded``; resumes by itself after a drop (see :class:`AsyncEventStream`).

        ``retry`` overrides the client's policy for reconnecting; ``on_reconnect`` is
        called before each new connection (logging, tests).
        """
        start = offset if last_event_id is None else last_event_id
        cursor = StreamCursor(session_id, start, include_raw, retry or self.retry, on_reconnect)
        return AsyncEventStream(self._open, cursor)

    def events(
        self,
        session_id: str,
        *,
        offset: int = 0,
        include_raw: bool | None = None,
        last_event_id: int | None = None,
        retry: RetryPolicy | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncEventStream:
        """Follow a session's events: the same as :meth:`stream_events`."""
        return self.stream_events(
            session_id,
            offset=offset,
            include_raw=include_raw,
            last_event_id=last_event_id,
            retry=retry,
            on_reconnect=on_reconnect,
        )

    # --- human in the loop ----------------------------------------------------------------

    async def reply_permission(
        self, session_id: str, permission_id: str, reply: PermissionReply | str
    ) -> None:
        """``POST .../permissions/{permissionId}/reply``: ``once``, ``always`` or ``reject``."""
        await self._send(ops.reply_permission(session_id, permission_id, reply))

    async def reply_question(
        self, session_id: str, question_id: str, answers: Sequence[Sequence[str]]
    ) -> None:
        """``POST .../questions/{questionId}/reply``: one list of labels per question."""
        await self._send(ops.reply_question(session_id, question_id, answers))

    async def reject_question(self, session_id: str, question_id: str) -> None:
        """``POST .../questions/{questionId}/reject``: decline to answer."""
        await self._send(ops.reject_question(session_id, question_id))

    async def tool_call_result(
        self,
        session_id: str,
        call_id: str,
        output: str | Sequence[MessagePart | Mapping[str, Any]],
        *,
        is_error: bool | None = None,
    ) -> None:
        """``POST .../tool-calls/{callId}/result``: answer a client host tool's call
        (``toolCallRequested``) with its output, text or parts; ``is_error`` when the tool
        failed. A second answer is a ``409`` ``tool-call-resolved``, an unknown call a
        ``404`` ``tool-call-not-found``, an unusable image a ``422``.
        """
        await self._send(ops.tool_call_result(session_id, call_id, output, is_error))

    async def tool_call_reject(
        self, session_id: str, call_id: str, reason: str | None = None
    ) -> None:
        """``POST .../tool-calls/{callId}/reject``: reject a client host tool's call (the
        model reads that the user rejected it, and ``reason`` when given).
        """
        await self._send(ops.tool_call_reject(session_id, call_id, reason))

    # --- webhooks -------------------------------------------------------------------------
    #
    # The daemon POSTs chosen events of every session (or of one session: create_session's
    # ``webhook``) to a URL, at least once, from an outbox in its store, retrying with
    # backoff for up to 24 hours. Each body is a ``WebhookPayload`` (``deliveryId``,
    # ``webhookId``, ``type``, ``event``), signed in ``Sandbox-Daemon-Signature``: check it
    # with :func:`~sandbox_daemon.verify_webhook_signature`.

    async def create_webhook(
        self, url: str, events: Sequence[WebhookEventType | str], *, secret: str | None = None
    ) -> CreatedWebhook:
        """``POST /webhooks``: register a webhook for every session's events of the listed
        types (``events``: any type but ``itemDelta``, or ``["*"]`` for all) at ``url``
        (``http`` or ``https``), and answer it with its ``id``. Without ``secret`` (16 to
        512 printable characters) the daemon makes one and answers it this once, in
        ``secret``: keep it to check the deliveries' signatures. A URL that is not http(s),
        an unknown, repeated or ``itemDelta`` event type, or a secret of the wrong length is
        a ``422`` ``invalid-body``. Never retried: each call registers another webhook.
        """
        return await self._send(ops.create_webhook(url, events, secret))

    async def list_webhooks(self) -> WebhookList:
        """``GET /webhooks``: every webhook, the daemon-wide ones and the sessions' own (with
        their ``session_id``), oldest first; never a secret.
        """
        return await self._send(ops.list_webhooks())

    async def get_webhook(self, webhook_id: str) -> Webhook:
        """``GET /webhooks/{webhookId}``: one webhook (never its secret). An unknown one is a
        ``404`` ``webhook-not-found``.
        """
        return await self._send(ops.get_webhook(webhook_id))

    async def delete_webhook(self, webhook_id: str) -> None:
        """``DELETE /webhooks/{webhookId}``: delete a webhook with its deliveries (what is
        pending is not attempted again). An unknown one is a ``404`` ``webhook-not-found``,
        as is a retry whose first try went through.
        """
        await self._send(ops.delete_webhook(webhook_id))

    async def list_webhook_deliveries(
        self, webhook_id: str, *, cursor: str | None = None, limit: int | None = None
    ) -> WebhookDeliveryList:
        """``GET /webhooks/{webhookId}/deliveries``: one page of a webhook's deliveries,
        oldest first (``limit`` 1 to 500, default 100; ``next_cursor`` for the next page,
        ``None`` on the last): each event's ``status`` (``pending``, ``delivered``,
        ``failed``), ``attempts``, ``last_status_code`` or ``last_error``, and
        ``next_attempt_at``. Finished deliveries are kept 7 days. See
        :meth:`iter_webhook_deliveries` for every page.
        """
        return await self._send(ops.list_webhook_deliveries(webhook_id, cursor, limit))

    async def iter_webhook_deliveries(
        self, webhook_id: str, *, page_size: int | None = None
    ) -> AsyncIterator[WebhookDelivery]:
        """Every delivery of a webhook, oldest first, page after page
        (``list_webhook_deliveries`` following ``next_cursor``).
        """
        cursor: str | None = None
        while True:
            page = await self.list_webhook_deliveries(webhook_id, cursor=cursor, limit=page_size)
            for delivery in page.deliveries:
                yield delivery
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    # --- helpers --------------------------------------------------------------------------

    def session(self, session_id: str) -> AsyncSession:
        """A handle on an existing session (no request is made)."""
        return AsyncSession(self, session_id)

    async def start_session(
        self,
        agent: AgentId | str,
        *,
        session_id: str | None = None,
        **options: Unpack[SessionOptions],
    ) -> AsyncSession:
        """Create a session (a random id unless given) and return its handle."""
        sid = session_id or f"py-{uuid.uuid4().hex}"
        await self.create_session(sid, agent=agent, **options)
        return AsyncSession(self, sid)
