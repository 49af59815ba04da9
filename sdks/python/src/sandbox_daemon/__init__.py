"""Python SDK of sandbox-daemon: drive coding agents over HTTP + SSE, blocking or async.

Start with :class:`Client` (or :class:`AsyncClient`), :class:`LocalDaemon` to run a
daemon binary here, and :meth:`Client.start_session` / :meth:`Session.turn` for whole
turns with permissions, questions and host tool calls answered by handlers, and
:meth:`Client.install_agent_progress` to follow an agent's install. A session's workspace
is read and written with :meth:`Client.read_file`, :meth:`Client.write_file`,
:meth:`Client.upload_files` (tar archives), :meth:`Client.archive_files` (snapshots) and
their kin; programs run in it with :meth:`Client.run_process` (to their end) or
:meth:`Client.start_process` (long-running, their log followed with
:meth:`Client.follow_process_logs`; with ``tty=True`` on a terminal, opened with
:meth:`Client.open_terminal`). What a turn changed in it, with diffs, is
:meth:`Client.turn_changes`. Messages are text or parts (:func:`text_part`,
:func:`image_part`). Webhooks (:meth:`Client.create_webhook`) have the daemon ``POST``
events to a server, which checks them with :func:`verify_webhook_signature`. Every model
is in :mod:`sandbox_daemon.models`.
"""

from . import models
from ._core import DEFAULT_ENDPOINT, Reconnect
from ._generated import (
    AgentId,
    HostTool,
    PermissionMode,
    PermissionReply,
    PermissionRequest,
    QuestionRequest,
    SessionStatus,
    ToolCallRequest,
)
from ._turn import (
    AsyncPermissionHandler,
    AsyncQuestionHandler,
    AsyncToolCallHandler,
    AsyncToolCallHandlers,
    PermissionAnswer,
    PermissionHandler,
    QuestionAnswer,
    QuestionHandler,
    ToolCallAnswer,
    ToolCallHandler,
    ToolCallHandlers,
)
from ._version import __version__
from .async_client import AsyncClient
from .async_session import AsyncSession, AsyncTurn
from .client import Client
from .content import MessageInput, MessagePart, image_part, text_part
from .errors import (
    DaemonStartError,
    ProblemError,
    ResponseError,
    SandboxDaemonError,
    StreamError,
    TransportError,
    TurnInterruptedError,
)
from .events import Event, EventsPage, UnrecognizedEvent, parse_event
from .files import ArchiveSource, FileArchive, FileContent, ReadRange
from .install import AsyncInstallStream, InstallFrame, InstallStream, UnrecognizedInstallProgress
from .local import LocalDaemon, find_binary
from .options import SessionOptions
from .portable import BundleSource, SessionExport
from .processes import AsyncProcessLogStream, LogFrame, LogGap, ProcessLogStream
from .retry import DEFAULT_RETRY, NO_RETRY, RetryPolicy
from .session import Session, Turn
from .sse import ServerSentEvent, SSEDecoder
from .stream import AsyncEventStream, EventStream
from .terminal import AsyncTerminal, Terminal, TerminalExit
from .ui_stream import AsyncUiMessageStream, UiChunk, UiMessageStream
from .webhooks import (
    DEFAULT_WEBHOOK_TOLERANCE,
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    WebhookSignatureError,
    verify_webhook_signature,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_RETRY",
    "DEFAULT_WEBHOOK_TOLERANCE",
    "NO_RETRY",
    "WEBHOOK_ID_HEADER",
    "WEBHOOK_SIGNATURE_HEADER",
    "AgentId",
    "ArchiveSource",
    "AsyncClient",
    "AsyncEventStream",
    "AsyncInstallStream",
    "AsyncPermissionHandler",
    "AsyncProcessLogStream",
    "AsyncQuestionHandler",
    "AsyncSession",
    "AsyncTerminal",
    "AsyncToolCallHandler",
    "AsyncToolCallHandlers",
    "AsyncTurn",
    "AsyncUiMessageStream",
    "BundleSource",
    "Client",
    "DaemonStartError",
    "Event",
    "EventStream",
    "EventsPage",
    "FileArchive",
    "FileContent",
    "HostTool",
    "InstallFrame",
    "InstallStream",
    "LocalDaemon",
    "LogFrame",
    "LogGap",
    "MessageInput",
    "MessagePart",
    "PermissionAnswer",
    "PermissionHandler",
    "PermissionMode",
    "PermissionReply",
    "PermissionRequest",
    "ProblemError",
    "ProcessLogStream",
    "QuestionAnswer",
    "QuestionHandler",
    "QuestionRequest",
    "ReadRange",
    "Reconnect",
    "ResponseError",
    "RetryPolicy",
    "SSEDecoder",
    "SandboxDaemonError",
    "ServerSentEvent",
    "Session",
    "SessionExport",
    "SessionOptions",
    "SessionStatus",
    "StreamError",
    "Terminal",
    "TerminalExit",
    "ToolCallAnswer",
    "ToolCallHandler",
    "ToolCallHandlers",
    "ToolCallRequest",
    "TransportError",
    "Turn",
    "TurnInterruptedError",
    "UiChunk",
    "UiMessageStream",
    "UnrecognizedEvent",
    "UnrecognizedInstallProgress",
    "WebhookSignatureError",
    "__version__",
    "find_binary",
    "image_part",
    "models",
    "parse_event",
    "text_part",
    "verify_webhook_signature",
]
