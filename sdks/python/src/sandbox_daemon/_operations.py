"""Every operation of the API as a request description, shared by both clients.

A :class:`Call` says what to send (method, path, query, headers, body: JSON, or raw bytes
with their content type), whether the
operation may be repeated safely, and how to read a successful answer. The clients only
send calls and parse answers; nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlencode

import httpx
from pydantic import BaseModel, ValidationError

from ._generated.models import (
    AgentId,
    AgentsResponse,
    CancelResponse,
    CreatedWebhook,
    CreateSessionRequest,
    CreateSessionResponse,
    CreateWebhookRequest,
    CredentialsResponse,
    FileEntry,
    FileListing,
    HandoverRequest,
    HealthResponse,
    HostTool,
    InstallRequest,
    InstallResponse,
    McpServer,
    MessagePart,
    ModelsResponse,
    ModesResponse,
    PermissionMode,
    PermissionReply,
    PermissionReplyRequest,
    ProcessInfo,
    ProcessList,
    ProcessLogs,
    ProcessOutput,
    ProcessRequest,
    PutCredentialRequest,
    QuestionReplyRequest,
    SendMessageRequest,
    SendMessageResponse,
    SessionInfo,
    SessionListResponse,
    SessionStatus,
    SessionWebhook,
    StoredLoginInfo,
    SystemPromptMode,
    TerminalSize,
    TerminalTicket,
    ToolCallRejectRequest,
    ToolCallResultRequest,
    ToolPolicy,
    TurnChanges,
    UploadSummary,
    Webhook,
    WebhookDeliveryList,
    WebhookEventType,
    WebhookList,
)
from .content import MessageInput, message_fields
from .errors import ResponseError
from .events import EventsPage
from .files import GZIP, OCTET_STREAM, FileArchive, ReadRange, archive_content_type, range_header
from .portable import SessionExport

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

JSON = "application/json"
EVENT_STREAM = "text/event-stream"


@dataclass(frozen=True)
class Operation:
    """One operation of the OpenAPI document, as this SDK sends it.

    ``idempotent`` marks the operations that may be sent again after a connection error
    (or a ``503``) without changing the outcome: every ``GET``, ``PUT`` and ``DELETE``
    (``putCredential`` stores the same login again, answering ``200`` instead of ``201``;
    ``writeFile`` writes the same bytes again), and the ``POST`` s whose contract makes a
    repeat harmless (``endSession``: "ending an ended session answers it as it is";
    ``installAgent``: an installed agent "answers at once"; ``stopProcess`` and
    ``killProcess``: a signal to a process that has ended does "nothing", and a second
    SIGTERM or SIGKILL to one still running asks what the first asked;
    ``createTerminalTicket``: a ticket minted again leaves the first unused, and an unused
    ticket expires after 30 s). ``uploadFiles``, ``runProcess`` and ``startProcess`` are
    not: each try runs the program once more. ``openTerminal`` is a ``GET`` but a
    WebSocket: the clients connect once (a ticket opens one connection) and never retry it.
    ``createWebhook`` is not either: each try registers another webhook.

    ``createSession`` and ``sendMessage`` are not, but one call of them carrying an
    ``Idempotency-Key`` is (see :attr:`Call.idempotent`).
    """

    operation_id: str
    method: str
    path: str
    idempotent: bool


OPERATIONS: Mapping[str, Operation] = {
    op.operation_id: op
    for op in (
        Operation("listAgents", "GET", "/agents", True),
        Operation("installAgent", "POST", "/agents/{agent}/install", True),
        Operation("agentModels", "GET", "/agents/{agent}/models", True),
        Operation("agentModes", "GET", "/agents/{agent}/modes", True),
        Operation("listCredentials", "GET", "/credentials", True),
        Operation("deleteCredential", "DELETE", "/credentials/{agent}", True),
        Operation("getCredential", "GET", "/credentials/{agent}", True),
        Operation("putCredential", "PUT", "/credentials/{agent}", True),
        Operation("health", "GET", "/health", True),
        Operation("openapi", "GET", "/openapi.json", True),
        Operation("listSessions", "GET", "/sessions", True),
        Operation("deleteSession", "DELETE", "/sessions/{sessionId}", True),
        Operation("getSession", "GET", "/sessions/{sessionId}", True),
        Operation("createSession", "POST", "/sessions/{sessionId}", False),
        Operation("cancelTurn", "POST", "/sessions/{sessionId}/cancel", False),
        Operation("endSession", "POST", "/sessions/{sessionId}/end", True),
        Operation("getEvents", "GET", "/sessions/{sessionId}/events", True),
        Operation("streamEvents", "GET", "/sessions/{sessionId}/events/sse", True),
        Operation("exportSession", "GET", "/sessions/{sessionId}/export", True),
        Operation("deleteFile", "DELETE", "/sessions/{sessionId}/files", True),
        Operation("listFiles", "GET", "/sessions/{sessionId}/files", True),
        Operation("archiveFiles", "GET", "/sessions/{sessionId}/files/archive", True),
        Operation("readFile", "GET", "/sessions/{sessionId}/files/content", True),
        Operation("writeFile", "PUT", "/sessions/{sessionId}/files/content", True),
        # Unpacking the same archive twice gives the same files, but the daemon does not
        # promise it (a file written in between would be replaced again): never repeated.
        Operation("uploadFiles", "POST", "/sessions/{sessionId}/files/upload", False),
        Operation("handoverSession", "POST", "/sessions/{sessionId}/handover", False),
        Operation("importSession", "POST", "/sessions/{sessionId}/import", False),
        Operation("sendMessage", "POST", "/sessions/{sessionId}/messages", False),
        Operation(
            "replyPermission",
            "POST",
            "/sessions/{sessionId}/permissions/{permissionId}/reply",
            False,
        ),
        Operation("listProcesses", "GET", "/sessions/{sessionId}/processes", True),
        # Each try starts (runs) the program again: never repeated.
        Operation("startProcess", "POST", "/sessions/{sessionId}/processes", False),
        Operation("runProcess", "POST", "/sessions/{sessionId}/processes/run", False),
        Operation("deleteProcess", "DELETE", "/sessions/{sessionId}/processes/{processId}", True),
        Operation("getProcess", "GET", "/sessions/{sessionId}/processes/{processId}", True),
        # Signalling again is harmless by the contract: "nothing if it has ended", and a
        # process still running gets the same request (stop, or die) once more.
        Operation("killProcess", "POST", "/sessions/{sessionId}/processes/{processId}/kill", True),
        Operation("processLogs", "GET", "/sessions/{sessionId}/processes/{processId}/logs", True),
        Operation("stopProcess", "POST", "/sessions/{sessionId}/processes/{processId}/stop", True),
        Operation(
            "openTerminal", "GET", "/sessions/{sessionId}/processes/{processId}/terminal", True
        ),
        # Another ticket for a lost answer: the unused first one expires after 30 s.
        Operation(
            "createTerminalTicket",
            "POST",
            "/sessions/{sessionId}/processes/{processId}/terminal-ticket",
            True,
        ),
        Operation(
            "rejectQuestion", "POST", "/sessions/{sessionId}/questions/{questionId}/reject", False
        ),
        Operation(
            "replyQuestion", "POST", "/sessions/{sessionId}/questions/{questionId}/reply", False
        ),
        Operation(
            "toolCallReject", "POST", "/sessions/{sessionId}/tool-calls/{callId}/reject", False
        ),
        Operation(
            "toolCallResult", "POST", "/sessions/{sessionId}/tool-calls/{callId}/result", False
        ),
        Operation("turnChanges", "GET", "/sessions/{sessionId}/turns/{turnId}/changes", True),
        Operation("uiMessageStream", "GET", "/sessions/{sessionId}/ui-stream", True),
        Operation("listWebhooks", "GET", "/webhooks", True),
        # Each try registers one more webhook: never repeated.
        Operation("createWebhook", "POST", "/webhooks", False),
        Operation("deleteWebhook", "DELETE", "/webhooks/{webhookId}", True),
        Operation("getWebhook", "GET", "/webhooks/{webhookId}", True),
        Operation("listWebhookDeliveries", "GET", "/webhooks/{webhookId}/deliveries", True),
    )
}

IDEMPOTENCY_KEY = "Idempotency-Key"
"""The request header that makes a ``createSession`` or ``sendMessage`` safe to repeat."""

REPLAYED = "Idempotent-Replayed"
"""The answer header (``true``) of an answer replayed for a repeated ``Idempotency-Key``."""

# The operations whose requests take an Idempotency-Key.
KEYED_OPERATIONS = frozenset({"createSession", "sendMessage"})


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request to make and how to read its successful answer."""

    operation: Operation
    parse: Callable[[httpx.Response], T]
    path_params: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str | int] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    accept: str = JSON
    raw_body: bytes | None = None
    """A body already encoded, sent as it is (instead of ``body``), as ``content_type``."""
    content_type: str = JSON
    """The ``Content-Type`` of the body (of ``raw_body``: JSON unless the call says)."""

    @property
    def path(self) -> str:
        """The path with its parameters filled in (each percent-encoded)."""
        return self.operation.path.format_map(
            {name: quote(value, safe="") for name, value in self.path_params.items()}
        )

    @property
    def idempotent(self) -> bool:
        """Whether the call may be repeated after a connection error or a 503: its
        operation is idempotent, or it is a ``createSession`` / ``sendMessage`` carrying an
        ``Idempotency-Key``. The daemon answers a repeat of a keyed request with the first
        request's answer (waiting for it if the first still runs) instead of acting twice,
        and frees the key when the first failed with a 5xx, so a repeat acts then.
        """
        if self.operation.idempotent:
            return True
        return self.operation.operation_id in KEYED_OPERATIONS and any(
            name.lower() == IDEMPOTENCY_KEY.lower() for name in self.headers
        )

    def request_headers(self) -> dict[str, str]:
        """The headers of this call (``Accept``, ``Content-Type`` and the call's own)."""
        headers = {"Accept": self.accept}
        if self.operation.method not in ("GET", "DELETE"):
            headers["Content-Type"] = self.content_type
        headers.update(self.headers)
        return headers

    def content(self) -> bytes | None:
        """The body to send, encoded (``None`` when the call has none)."""
        if self.operation.method in ("GET", "DELETE"):
            return None
        if self.raw_body is not None:
            return self.raw_body
        return json.dumps({} if self.body is None else self.body).encode()


# --- reading answers -------------------------------------------------------------------


def _model(model: type[M]) -> Callable[[httpx.Response], M]:
    def parse(response: httpx.Response) -> M:
        try:
            return model.model_validate_json(response.content)
        except ValidationError as error:
            raise ResponseError(
                f"{response.request.method} {response.request.url} answered "
                f"{response.status_code} with a body that is not a {model.__name__}: {error}",
                status=response.status_code,
                body=response.content,
            ) from error

    return parse


def _session_export(response: httpx.Response) -> SessionExport:
    """The bundle as received (its bytes are what an import must send), checked to be a
    JSON object.
    """
    exported = SessionExport(response.content)
    try:
        exported.data  # noqa: B018 - parse once now: a body that is not a bundle fails here
    except (ValueError, TypeError) as error:
        raise ResponseError(
            f"{response.request.url} answered {response.status_code} with a body that is not "
            "a JSON object",
            status=response.status_code,
            body=response.content,
        ) from error
    return exported


def _no_content(response: httpx.Response) -> None:
    return None


def _raw(response: httpx.Response) -> bytes:
    return response.content


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        document = json.loads(response.content)
    except ValueError as error:
        raise ResponseError(
            f"{response.request.url} answered {response.status_code} with a body that is not JSON",
            status=response.status_code,
            body=response.content,
        ) from error
    if not isinstance(document, dict):
        raise ResponseError(
            f"{response.request.url} answered a JSON {type(document).__name__}, not an object",
            status=response.status_code,
            body=response.content,
        )
    return document


# --- building requests -----------------------------------------------------------------


def _value(value: Any) -> Any:
    """A value as JSON: enums as their value, models with their wire names (``None``
    members left out), mappings and sequences member by member.
    """
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, Mapping):
        return {key: _value(member) for key, member in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_value(member) for member in value]
    return value


def wire_body(schema: type[BaseModel], /, **values: Any) -> dict[str, Any]:
    """A JSON body for ``schema`` from Python field names, with the wire names (aliases)
    of the generated model; ``None`` values are left out. The daemon validates it.
    """
    body: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        info = schema.model_fields[name]
        body[info.alias or name] = _value(value)
    return body


def _query(**values: Any) -> dict[str, str | int]:
    query: dict[str, str | int] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            query[name] = "true" if value else "false"
        else:
            query[name] = _value(value)
    return query


def _op(operation_id: str) -> Operation:
    return OPERATIONS[operation_id]


def _idempotency(key: str | None) -> dict[str, str]:
    """The ``Idempotency-Key`` header, when a key is given (the daemon checks it)."""
    if key is None:
        return {}
    if not isinstance(key, str):
        raise TypeError(f"idempotency_key must be a str, not {type(key).__name__}")
    return {IDEMPOTENCY_KEY: key}


def list_agents() -> Call[AgentsResponse]:
    """``GET /agents``."""
    return Call(_op("listAgents"), _model(AgentsResponse))


def install_agent(
    agent: AgentId | str, version: str | None, reinstall: bool | None
) -> Call[InstallResponse]:
    """``POST /agents/{agent}/install``, asking for the JSON summary (not the stream)."""
    return Call(
        _op("installAgent"),
        _model(InstallResponse),
        path_params={"agent": _value(agent)},
        body=wire_body(InstallRequest, version=version, reinstall=reinstall),
        accept=JSON,
    )


def install_agent_stream(
    agent: AgentId | str, version: str | None, reinstall: bool | None
) -> Call[None]:
    """``POST /agents/{agent}/install`` asking for its progress as ``text/event-stream``
    (the body is read as a stream; the same request body as :func:`install_agent`).
    """
    return Call(
        _op("installAgent"),
        _no_content,
        path_params={"agent": _value(agent)},
        body=wire_body(InstallRequest, version=version, reinstall=reinstall),
        accept=EVENT_STREAM,
    )


def agent_models(agent: AgentId | str) -> Call[ModelsResponse]:
    """``GET /agents/{agent}/models``."""
    return Call(_op("agentModels"), _model(ModelsResponse), path_params={"agent": _value(agent)})


def agent_modes(agent: AgentId | str) -> Call[ModesResponse]:
    """``GET /agents/{agent}/modes``."""
    return Call(_op("agentModes"), _model(ModesResponse), path_params={"agent": _value(agent)})


def list_credentials() -> Call[CredentialsResponse]:
    """``GET /credentials``."""
    return Call(_op("listCredentials"), _model(CredentialsResponse))


def get_credential(agent: AgentId | str) -> Call[StoredLoginInfo]:
    """``GET /credentials/{agent}``."""
    return Call(_op("getCredential"), _model(StoredLoginInfo), path_params={"agent": _value(agent)})


def put_credential(
    agent: AgentId | str,
    login: Mapping[str, Any] | None,
    token: str | None,
    source: str | None,
) -> Call[StoredLoginInfo]:
    """``PUT /credentials/{agent}``: ``login`` (the agent's login file, parsed) or ``token``."""
    return Call(
        _op("putCredential"),
        _model(StoredLoginInfo),
        path_params={"agent": _value(agent)},
        body=wire_body(PutCredentialRequest, login=login, token=token, source=source),
    )


def delete_credential(agent: AgentId | str) -> Call[None]:
    """``DELETE /credentials/{agent}``."""
    return Call(_op("deleteCredential"), _no_content, path_params={"agent": _value(agent)})


def health() -> Call[HealthResponse]:
    """``GET /health``."""
    return Call(_op("health"), _model(HealthResponse))


def openapi() -> Call[dict[str, Any]]:
    """``GET /openapi.json``."""
    return Call(_op("openapi"), _json_object)


def list_sessions(
    cursor: str | None, limit: int | None, status: SessionStatus | str | None
) -> Call[SessionListResponse]:
    """``GET /sessions``."""
    return Call(
        _op("listSessions"),
        _model(SessionListResponse),
        params=_query(cursor=cursor, limit=limit, status=status),
    )


def delete_session(session_id: str) -> Call[None]:
    """``DELETE /sessions/{sessionId}``."""
    return Call(_op("deleteSession"), _no_content, path_params={"sessionId": session_id})


def get_session(session_id: str) -> Call[SessionInfo]:
    """``GET /sessions/{sessionId}``."""
    return Call(_op("getSession"), _model(SessionInfo), path_params={"sessionId": session_id})


def create_session(
    session_id: str,
    *,
    agent: AgentId | str,
    agent_mode: str | None,
    agent_version: str | None,
    cwd: str | None,
    dangerously_skip_permissions: bool | None,
    model: str | None,
    permission_mode: PermissionMode | str | None,
    token: str | None,
    validate_token: bool | None,
    variant: str | None,
    system_prompt: str | None,
    system_prompt_mode: SystemPromptMode | str | None,
    tools: ToolPolicy | Mapping[str, Sequence[str]] | None,
    max_turns: int | None,
    mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None,
    env: Mapping[str, str] | None,
    host_tools: Sequence[HostTool | Mapping[str, Any]] | None = None,
    webhook: SessionWebhook | Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> Call[CreateSessionResponse]:
    """``POST /sessions/{sessionId}`` (with ``Idempotency-Key`` when a key is given)."""
    body = wire_body(
        CreateSessionRequest,
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
    )
    return Call(
        _op("createSession"),
        _model(CreateSessionResponse),
        path_params={"sessionId": session_id},
        headers=_idempotency(idempotency_key),
        body=body,
    )


def cancel_turn(session_id: str) -> Call[CancelResponse]:
    """``POST /sessions/{sessionId}/cancel``."""
    return Call(_op("cancelTurn"), _model(CancelResponse), path_params={"sessionId": session_id})


def end_session(session_id: str) -> Call[SessionInfo]:
    """``POST /sessions/{sessionId}/end``."""
    return Call(_op("endSession"), _model(SessionInfo), path_params={"sessionId": session_id})


def get_events(
    session_id: str, offset: int | None, limit: int | None, include_raw: bool | None
) -> Call[EventsPage]:
    """``GET /sessions/{sessionId}/events``."""
    return Call(
        _op("getEvents"),
        _model(EventsPage),
        path_params={"sessionId": session_id},
        params=_query(offset=offset, limit=limit, includeRaw=include_raw),
    )


def stream_events(
    session_id: str, offset: int | None, include_raw: bool | None, last_event_id: int | None
) -> Call[None]:
    """``GET /sessions/{sessionId}/events/sse`` (the body is read as a stream)."""
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    return Call(
        _op("streamEvents"),
        _no_content,
        path_params={"sessionId": session_id},
        params=_query(offset=offset, includeRaw=include_raw),
        headers=headers,
        accept=EVENT_STREAM,
    )


def send_message(
    session_id: str,
    message: MessageInput | None,
    content: MessageInput | None = None,
    idempotency_key: str | None = None,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> Call[SendMessageResponse]:
    """``POST /sessions/{sessionId}/messages``: text as ``message``, parts as ``content``
    (see :func:`~sandbox_daemon.content.message_fields`); with ``Idempotency-Key`` when a
    key is given, and the W3C trace context headers when given.
    """
    text, parts = message_fields(message, content)
    headers = _idempotency(idempotency_key)
    if traceparent is not None:
        headers["traceparent"] = traceparent
    if tracestate is not None:
        headers["tracestate"] = tracestate
    return Call(
        _op("sendMessage"),
        _model(SendMessageResponse),
        path_params={"sessionId": session_id},
        headers=headers,
        body=wire_body(SendMessageRequest, message=text, content=parts),
    )


def reply_permission(
    session_id: str, permission_id: str, reply: PermissionReply | str
) -> Call[None]:
    """``POST /sessions/{sessionId}/permissions/{permissionId}/reply``."""
    return Call(
        _op("replyPermission"),
        _no_content,
        path_params={"sessionId": session_id, "permissionId": permission_id},
        body=wire_body(PermissionReplyRequest, reply=reply),
    )


def reject_question(session_id: str, question_id: str) -> Call[None]:
    """``POST /sessions/{sessionId}/questions/{questionId}/reject``."""
    return Call(
        _op("rejectQuestion"),
        _no_content,
        path_params={"sessionId": session_id, "questionId": question_id},
        body={},
    )


def answer_lists(answers: Sequence[Sequence[str]]) -> list[list[str]]:
    """Answers as JSON lists, refusing the easy mistake of a bare string per question."""
    if isinstance(answers, str) or any(isinstance(a, str) for a in answers):
        raise TypeError('answers are one list of labels per question, e.g. [["Red"], ["Cheese"]]')
    return [list(labels) for labels in answers]


def reply_question(
    session_id: str, question_id: str, answers: Sequence[Sequence[str]]
) -> Call[None]:
    """``POST /sessions/{sessionId}/questions/{questionId}/reply``."""
    return Call(
        _op("replyQuestion"),
        _no_content,
        path_params={"sessionId": session_id, "questionId": question_id},
        body=wire_body(QuestionReplyRequest, answers=answer_lists(answers)),
    )


def tool_call_result(
    session_id: str,
    call_id: str,
    output: str | Sequence[MessagePart | Mapping[str, Any]],
    is_error: bool | None,
) -> Call[None]:
    """``POST /sessions/{sessionId}/tool-calls/{callId}/result``."""
    return Call(
        _op("toolCallResult"),
        _no_content,
        path_params={"sessionId": session_id, "callId": call_id},
        body=wire_body(ToolCallResultRequest, output=output, is_error=is_error),
    )


def tool_call_reject(session_id: str, call_id: str, reason: str | None) -> Call[None]:
    """``POST /sessions/{sessionId}/tool-calls/{callId}/reject``."""
    return Call(
        _op("toolCallReject"),
        _no_content,
        path_params={"sessionId": session_id, "callId": call_id},
        body=wire_body(ToolCallRejectRequest, reason=reason),
    )


def export_session(session_id: str, include_raw: bool | None) -> Call[SessionExport]:
    """``GET /sessions/{sessionId}/export``."""
    return Call(
        _op("exportSession"),
        _session_export,
        path_params={"sessionId": session_id},
        params=_query(includeRaw=include_raw),
    )


def import_session(session_id: str, bundle: bytes, cwd: str | None) -> Call[SessionInfo]:
    """``POST /sessions/{sessionId}/import``: ``bundle`` is sent byte for byte."""
    return Call(
        _op("importSession"),
        _model(SessionInfo),
        path_params={"sessionId": session_id},
        params=_query(cwd=cwd),
        raw_body=bundle,
    )


def handover_session(
    session_id: str, agent: AgentId | str, model: str | None, agent_mode: str | None
) -> Call[SessionInfo]:
    """``POST /sessions/{sessionId}/handover``."""
    return Call(
        _op("handoverSession"),
        _model(SessionInfo),
        path_params={"sessionId": session_id},
        body=wire_body(HandoverRequest, agent=agent, model=model, agent_mode=agent_mode),
    )


def list_files(session_id: str, path: str | None, depth: int | None) -> Call[FileListing]:
    """``GET /sessions/{sessionId}/files``."""
    return Call(
        _op("listFiles"),
        _model(FileListing),
        path_params={"sessionId": session_id},
        params=_query(path=path, depth=depth),
    )


def read_file(session_id: str, path: str, part: ReadRange | None) -> Call[bytes]:
    """``GET /sessions/{sessionId}/files/content``, with ``Range`` when ``part`` is given."""
    headers = {} if part is None else {"Range": range_header(part)}
    return Call(
        _op("readFile"),
        _raw,
        path_params={"sessionId": session_id},
        params=_query(path=path),
        headers=headers,
        accept=OCTET_STREAM,
    )


def write_file(session_id: str, path: str, content: bytes) -> Call[FileEntry]:
    """``PUT /sessions/{sessionId}/files/content``: ``content`` is sent byte for byte."""
    return Call(
        _op("writeFile"),
        _model(FileEntry),
        path_params={"sessionId": session_id},
        params=_query(path=path),
        raw_body=content,
        content_type=OCTET_STREAM,
    )


def delete_file(session_id: str, path: str, recursive: bool | None) -> Call[None]:
    """``DELETE /sessions/{sessionId}/files``."""
    return Call(
        _op("deleteFile"),
        _no_content,
        path_params={"sessionId": session_id},
        params=_query(path=path, recursive=recursive),
    )


def upload_files(session_id: str, archive: bytes, path: str | None) -> Call[UploadSummary]:
    """``POST /sessions/{sessionId}/files/upload``: the archive is sent byte for byte, as
    ``application/gzip`` when it is gzip-compressed, else ``application/x-tar``.
    """
    return Call(
        _op("uploadFiles"),
        _model(UploadSummary),
        path_params={"sessionId": session_id},
        params=_query(path=path),
        raw_body=archive,
        content_type=archive_content_type(archive),
    )


def archive_files(
    session_id: str,
    path: str | None,
    all: bool | None,
    max_file_bytes: int | None,
    max_bytes: int | None,
) -> Call[FileArchive]:
    """``GET /sessions/{sessionId}/files/archive``."""
    return Call(
        _op("archiveFiles"),
        FileArchive.from_response,
        path_params={"sessionId": session_id},
        params=_query(path=path, all=all, maxFileBytes=max_file_bytes, maxBytes=max_bytes),
        accept=GZIP,
    )


def run_process(
    session_id: str,
    command: str,
    args: Sequence[str] | None,
    cwd: str | None,
    env: Mapping[str, str] | None,
    timeout_ms: int | None,
    max_output_bytes: int | None,
) -> Call[ProcessOutput]:
    """``POST /sessions/{sessionId}/processes/run``."""
    return Call(
        _op("runProcess"),
        _model(ProcessOutput),
        path_params={"sessionId": session_id},
        body=wire_body(
            ProcessRequest,
            command=command,
            args=_arguments(args),
            cwd=cwd,
            env=env,
            timeout_ms=timeout_ms,
            max_output_bytes=max_output_bytes,
        ),
    )


def start_process(
    session_id: str,
    command: str,
    args: Sequence[str] | None,
    cwd: str | None,
    env: Mapping[str, str] | None,
    tty: bool | None = None,
    size: TerminalSize | Mapping[str, int] | None = None,
) -> Call[ProcessInfo]:
    """``POST /sessions/{sessionId}/processes`` (``timeoutMs`` and ``maxOutputBytes`` are
    for runs only: the daemon ignores them here, so they are never sent; ``tty`` and
    ``size`` for long-running processes only, so :func:`run_process` never sends them).
    """
    body = wire_body(
        ProcessRequest,
        command=command,
        args=_arguments(args),
        cwd=cwd,
        env=env,
        tty=tty,
        size=size,
    )
    return Call(
        _op("startProcess"),
        _model(ProcessInfo),
        path_params={"sessionId": session_id},
        body=body,
    )


def _arguments(args: Sequence[str] | None) -> list[str] | None:
    """A program's arguments as a list, refusing the easy mistake of one string."""
    if isinstance(args, str):
        raise TypeError(f'args is a list of arguments, e.g. ["-c", {args!r}], not one string')
    return None if args is None else list(args)


def list_processes(session_id: str) -> Call[ProcessList]:
    """``GET /sessions/{sessionId}/processes``."""
    return Call(_op("listProcesses"), _model(ProcessList), path_params={"sessionId": session_id})


def _process_path(session_id: str, process_id: str) -> dict[str, str]:
    return {"sessionId": session_id, "processId": process_id}


def get_process(session_id: str, process_id: str) -> Call[ProcessInfo]:
    """``GET /sessions/{sessionId}/processes/{processId}``."""
    return Call(
        _op("getProcess"), _model(ProcessInfo), path_params=_process_path(session_id, process_id)
    )


def delete_process(session_id: str, process_id: str) -> Call[None]:
    """``DELETE /sessions/{sessionId}/processes/{processId}``."""
    return Call(
        _op("deleteProcess"), _no_content, path_params=_process_path(session_id, process_id)
    )


def stop_process(session_id: str, process_id: str) -> Call[ProcessInfo]:
    """``POST /sessions/{sessionId}/processes/{processId}/stop`` (no body)."""
    return Call(
        _op("stopProcess"), _model(ProcessInfo), path_params=_process_path(session_id, process_id)
    )


def kill_process(session_id: str, process_id: str) -> Call[ProcessInfo]:
    """``POST /sessions/{sessionId}/processes/{processId}/kill`` (no body)."""
    return Call(
        _op("killProcess"), _model(ProcessInfo), path_params=_process_path(session_id, process_id)
    )


def process_logs(session_id: str, process_id: str, offset: int | None) -> Call[ProcessLogs]:
    """``GET /sessions/{sessionId}/processes/{processId}/logs``: one page (JSON)."""
    return Call(
        _op("processLogs"),
        _model(ProcessLogs),
        path_params=_process_path(session_id, process_id),
        params=_query(offset=offset),
    )


def follow_process_logs(
    session_id: str, process_id: str, offset: int | None, last_event_id: int | None
) -> Call[None]:
    """``GET /sessions/{sessionId}/processes/{processId}/logs?follow=true`` (the body is read
    as a stream; ``Last-Event-ID``, when given, wins over ``offset``).
    """
    headers = {} if last_event_id is None else {"Last-Event-ID": str(last_event_id)}
    return Call(
        _op("processLogs"),
        _no_content,
        path_params=_process_path(session_id, process_id),
        params=_query(offset=offset, follow=True),
        headers=headers,
        accept=EVENT_STREAM,
    )


def create_terminal_ticket(session_id: str, process_id: str) -> Call[TerminalTicket]:
    """``POST /sessions/{sessionId}/processes/{processId}/terminal-ticket`` (no body)."""
    return Call(
        _op("createTerminalTicket"),
        _model(TerminalTicket),
        path_params=_process_path(session_id, process_id),
    )


def terminal_path(session_id: str, process_id: str, ticket: str | None) -> str:
    """The path of ``GET /sessions/{sessionId}/processes/{processId}/terminal`` (the
    WebSocket), with ``?ticket=`` when one is given, every part percent-encoded.
    """
    path = Call(_op("openTerminal"), _no_content, _process_path(session_id, process_id)).path
    return path if ticket is None else f"{path}?{urlencode({'ticket': ticket})}"


def turn_changes(session_id: str, turn_id: str) -> Call[TurnChanges]:
    """``GET /sessions/{sessionId}/turns/{turnId}/changes``."""
    return Call(
        _op("turnChanges"),
        _model(TurnChanges),
        path_params={"sessionId": session_id, "turnId": turn_id},
    )


def ui_message_stream(session_id: str, turn_id: str | None) -> Call[None]:
    """``GET /sessions/{sessionId}/ui-stream`` (the body is read as a stream): turn
    ``turn_id``, or the running one.
    """
    return Call(
        _op("uiMessageStream"),
        _no_content,
        path_params={"sessionId": session_id},
        params=_query(turnId=turn_id),
        accept=EVENT_STREAM,
    )


# --- webhooks --------------------------------------------------------------------------


def create_webhook(
    url: str, events: Sequence[WebhookEventType | str], secret: str | None
) -> Call[CreatedWebhook]:
    """``POST /webhooks``."""
    if isinstance(events, str):
        raise TypeError('events is a list of event types, e.g. ["turnEnded"] (or ["*"])')
    return Call(
        _op("createWebhook"),
        _model(CreatedWebhook),
        body=wire_body(CreateWebhookRequest, url=url, events=list(events), secret=secret),
    )


def list_webhooks() -> Call[WebhookList]:
    """``GET /webhooks``."""
    return Call(_op("listWebhooks"), _model(WebhookList))


def get_webhook(webhook_id: str) -> Call[Webhook]:
    """``GET /webhooks/{webhookId}``."""
    return Call(_op("getWebhook"), _model(Webhook), path_params={"webhookId": webhook_id})


def delete_webhook(webhook_id: str) -> Call[None]:
    """``DELETE /webhooks/{webhookId}``."""
    return Call(_op("deleteWebhook"), _no_content, path_params={"webhookId": webhook_id})


def list_webhook_deliveries(
    webhook_id: str, cursor: str | None, limit: int | None
) -> Call[WebhookDeliveryList]:
    """``GET /webhooks/{webhookId}/deliveries``."""
    return Call(
        _op("listWebhookDeliveries"),
        _model(WebhookDeliveryList),
        path_params={"webhookId": webhook_id},
        params=_query(cursor=cursor, limit=limit),
    )
