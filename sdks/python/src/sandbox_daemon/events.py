"""Events of a session's log: the typed union, the fallback for what this SDK cannot read,
and parsing that never drops an event.

Every event the daemon documents parses into its generated model (``TurnEndedEvent``,
``PermissionAskedEvent``, ...), discriminated on ``type``. An event this SDK cannot read
as such — a ``type`` a newer daemon added, or a known type whose body no longer fits this
SDK's model — becomes an :class:`UnrecognizedEvent` that keeps its ``sequence``, its
``type`` and every member as sent, so streams go on and resume without a gap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, TypeAlias, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
)

from ._generated.models import UniversalEvent

__all__ = [
    "EVENT_TYPES",
    "Event",
    "EventsPage",
    "UnrecognizedEvent",
    "parse_event",
]


class UnrecognizedEvent(BaseModel):
    """An event this SDK cannot read as one of its models; nothing of it is lost.

    ``sequence`` and ``type`` are always set; ``data`` is the payload as sent and every
    other member (``time``, ``sessionId``, ``source``, ...) is in :attr:`model_extra`
    (also readable as attributes under their wire names). :attr:`parse_error` says why the
    event was not read as its model: ``None`` when its ``type`` is unknown to this SDK
    (a newer daemon), else the validation error of the known model.
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True)

    sequence: Annotated[int, Field(ge=0)]
    """Position in the session's log (what streams resume from)."""
    type: str
    """The event type as sent."""
    data: Any = None
    """The payload as sent."""
    raw: Any = None
    """The native JSON the event came from (only with ``include_raw``)."""

    _parse_error: str | None = PrivateAttr(default=None)

    @property
    def parse_error(self) -> str | None:
        """Why the known model rejected the event; ``None`` for an unknown ``type``."""
        return self._parse_error


Event: TypeAlias = UniversalEvent | UnrecognizedEvent
"""Any event of a session's log: one of the generated event models, or the fallback."""


def _event_types() -> dict[str, type[BaseModel]]:
    annotated = UniversalEvent.__value__
    union = get_args(annotated)[0]
    table: dict[str, type[BaseModel]] = {}
    for model in get_args(union):
        (tag,) = get_args(model.model_fields["type"].annotation)
        table[tag] = model
    return table


EVENT_TYPES: Mapping[str, type[BaseModel]] = _event_types()
"""Every event type this SDK knows, and the model it parses into."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(UniversalEvent)


def parse_event(value: str | bytes | Mapping[str, Any]) -> Event:
    """Parse one event (its JSON text, or the decoded object).

    Raises :class:`ValueError` only when the value is not an event at all (not a JSON
    object, or without an integer ``sequence`` and a string ``type``).
    """
    try:
        if isinstance(value, str | bytes):
            return _ADAPTER.validate_json(value)  # type: ignore[no-any-return]
        return _ADAPTER.validate_python(value)  # type: ignore[no-any-return]
    except ValidationError as error:
        document = json.loads(value) if isinstance(value, str | bytes) else dict(value)
        return _fallback(document, error)


def _fallback(document: Any, error: ValidationError) -> UnrecognizedEvent:
    if not isinstance(document, dict):
        raise ValueError(f"an event must be a JSON object, got {type(document).__name__}")
    sequence, kind = document.get("sequence"), document.get("type")
    if isinstance(sequence, bool) or not isinstance(sequence, int) or not isinstance(kind, str):
        raise ValueError("an event needs an integer `sequence` and a string `type`") from error
    event = UnrecognizedEvent.model_validate(document)
    if kind in EVENT_TYPES:
        event._parse_error = str(error)
    return event


def _validate_event(value: Any) -> Event:
    if isinstance(value, BaseModel):
        return value  # type: ignore[return-value]
    if not isinstance(value, Mapping | str | bytes):
        raise ValueError("an event must be a JSON object")
    return parse_event(value)


def _dump_event(value: Event) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


class EventsPage(BaseModel):
    """One page of a session's log (``GET /sessions/{id}/events``): the generated
    ``EventsResponse`` with events that never fail to parse (see :func:`parse_event`).
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True)

    events: list[
        Annotated[
            Event,
            PlainValidator(_validate_event),
            PlainSerializer(_dump_event),
        ]
    ]
    """Events with ``sequence > offset``, oldest first."""
    has_more: Annotated[bool, Field(alias="hasMore")]
    """True when more events exist after the last one returned."""

    @property
    def next_offset(self) -> int | None:
        """The ``offset`` of the next page (the last sequence here), or None when empty."""
        return self.events[-1].sequence if self.events else None
