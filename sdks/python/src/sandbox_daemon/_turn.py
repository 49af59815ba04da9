"""What a turn helper needs besides I/O: handler types, the end condition, the text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ._generated.models import (
    ItemCompletedEvent,
    ItemRole,
    MessagePart,
    PermissionReply,
    PermissionRequest,
    QuestionRequest,
    SessionEndedEvent,
    TextContentPart,
    ToolCallRejectRequest,
    ToolCallRequest,
    ToolCallResultRequest,
    TurnEndedEvent,
)
from .errors import ProblemError, TurnInterruptedError
from .events import Event

PermissionAnswer: TypeAlias = PermissionReply | Literal["once", "always", "reject"]
"""What a permission handler returns: ``once``, ``always`` or ``reject``."""

QuestionAnswer: TypeAlias = Sequence[Sequence[str]] | None
"""What a question handler returns: one list of chosen labels per question, or ``None``
to reject the question request."""

PermissionHandler: TypeAlias = Callable[[PermissionRequest], PermissionAnswer]
"""Called with each permission request of a turn; its answer is sent at once."""

QuestionHandler: TypeAlias = Callable[[QuestionRequest], QuestionAnswer]
"""Called with each question request of a turn; its answers are sent (``None`` rejects)."""

AsyncPermissionHandler: TypeAlias = Callable[
    [PermissionRequest], PermissionAnswer | Awaitable[PermissionAnswer]
]
"""A permission handler for async sessions (plain or ``async def``)."""

AsyncQuestionHandler: TypeAlias = Callable[
    [QuestionRequest], QuestionAnswer | Awaitable[QuestionAnswer]
]
"""A question handler for async sessions (plain or ``async def``)."""


ToolOutputInput: TypeAlias = str | Sequence[MessagePart | Mapping[str, Any]]
"""A host tool's output: text, or parts (generated models or dicts with the wire names)."""

ToolCallAnswer: TypeAlias = (
    ToolOutputInput | ToolCallResultRequest | ToolCallRejectRequest | Mapping[str, Any] | None
)
"""What a tool handler returns for one host tool call: the output (text, or parts);
``{"output": ..., "is_error": True}`` (or a ``ToolCallResultRequest``) for a failed tool;
``{"reject": "why"}``, ``{"reject": True}`` (or a ``ToolCallRejectRequest``) to reject the
call; ``None`` to leave it unanswered (for ``tool_call_result`` later, or another client)."""

ToolCallHandler: TypeAlias = Callable[[ToolCallRequest], ToolCallAnswer]
"""Called with each client host tool call of a turn; its answer is sent at once."""

AsyncToolCallHandler: TypeAlias = Callable[
    [ToolCallRequest], ToolCallAnswer | Awaitable[ToolCallAnswer]
]
"""A tool handler for async sessions (plain or ``async def``)."""

ToolCallHandlers: TypeAlias = ToolCallHandler | Mapping[str, ToolCallHandler]
"""One tool handler for every tool, or handlers by tool name (a tool without one is left
unanswered)."""

AsyncToolCallHandlers: TypeAlias = AsyncToolCallHandler | Mapping[str, AsyncToolCallHandler]
""":data:`ToolCallHandlers` for async sessions."""

_REASON_LIMIT = 4096


@dataclass(frozen=True)
class ToolReply:
    """A tool handler's answer, ready to send: a result (``output``, ``is_error``) or,
    when ``reject`` is set, a rejection (``reason``).
    """

    output: Any = None
    is_error: bool | None = None
    reject: bool = False
    reason: str | None = None

    @staticmethod
    def rejecting(reason: str | None) -> ToolReply:
        """A rejection, its reason cut to what the daemon takes."""
        return ToolReply(reject=True, reason=None if reason is None else reason[:_REASON_LIMIT])


def tool_handler(handlers: Any, tool: str) -> Any:
    """The handler of ``tool`` among ``handlers`` (one callable, or a mapping by name)."""
    if handlers is None or callable(handlers):
        return handlers
    return handlers.get(tool)


def tool_reply(answer: ToolCallAnswer) -> ToolReply | None:
    """What to send for a tool handler's ``answer`` (``None``: nothing)."""
    if answer is None:
        return None
    if isinstance(answer, ToolCallResultRequest):
        return ToolReply(output=answer.output, is_error=answer.is_error)
    if isinstance(answer, ToolCallRejectRequest):
        return ToolReply.rejecting(answer.reason)
    if isinstance(answer, Mapping) and "reject" in answer:
        reason = answer["reject"]
        if reason is True:
            return ToolReply.rejecting(None)
        if not isinstance(reason, str):
            raise TypeError(f"a tool call's reject is a reason or True, not {reason!r}")
        return ToolReply.rejecting(reason)
    if isinstance(answer, Mapping) and "output" in answer:
        extra = set(answer) - {"output", "is_error", "isError"}
        if extra:
            raise TypeError(f"a tool call's answer has unknown keys: {sorted(extra)}")
        is_error = answer.get("is_error", answer.get("isError"))
        return ToolReply(output=answer["output"], is_error=is_error)
    if isinstance(answer, Mapping):
        raise TypeError(
            'a tool call\'s answer is text, parts, {"output": ...} or {"reject": ...}, '
            f"not {dict(answer)!r}"
        )
    if isinstance(answer, str):
        return ToolReply(output=answer)
    return ToolReply(output=list(answer))


def refused_output(error: ProblemError) -> ToolReply:
    """The rejection that replaces an output the daemon refused (``422``)."""
    return ToolReply.rejecting(f"the tool's output was refused: {error.detail}")


def is_resolved(error: ProblemError) -> bool:
    """Whether ``error`` says the tool call was already answered, rejected or cancelled."""
    return error.status == 409 and error.type.endswith(":tool-call-resolved")


class TurnTracker:
    """Follows one turn's events: collects the assistant's text and notices the end."""

    def __init__(self, session_id: str, turn_id: str) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        self.ended: TurnEndedEvent | None = None
        self._texts: list[str] = []

    def see(self, event: Event) -> bool:
        """Note an event; True when it is this turn's ``turnEnded``."""
        if isinstance(event, ItemCompletedEvent):
            item = event.data.item
            if item.role == ItemRole.assistant:
                self._texts.extend(
                    part.text for part in item.content or [] if isinstance(part, TextContentPart)
                )
        if isinstance(event, TurnEndedEvent) and event.data.turn_id == self.turn_id:
            self.ended = event
            return True
        if isinstance(event, SessionEndedEvent):
            raise self.interrupted(f"reason {event.data.reason.value}")
        return False

    def interrupted(self, why: str) -> TurnInterruptedError:
        """The error for a stream that ended before this turn did."""
        return TurnInterruptedError(
            f"session {self.session_id} ended before turn {self.turn_id} did ({why})",
            session_id=self.session_id,
            turn_id=self.turn_id,
        )

    @property
    def text(self) -> str:
        """The text of the assistant messages completed in the turn so far, one per line."""
        return "\n".join(self._texts)
