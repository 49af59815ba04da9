"""What a turn helper needs besides I/O: handler types, the end condition, the text."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeAlias

from ._generated.models import (
    ItemCompletedEvent,
    ItemRole,
    PermissionReply,
    PermissionRequest,
    QuestionRequest,
    SessionEndedEvent,
    TextContentPart,
    TurnEndedEvent,
)
from .errors import TurnInterruptedError
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
