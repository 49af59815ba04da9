"""Event parsing: the discriminated union, and forward compatibility (nothing is lost)."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from sandbox_daemon import EventsPage, UnrecognizedEvent, parse_event
from sandbox_daemon.models import (
    EVENT_TYPES,
    AgentError,
    ContentPart,
    ErrorEvent,
    EventsResponse,
    ItemStartedEvent,
    ProcessExitedAgentError,
    TextContentPart,
    TurnEndedEvent,
    UniversalEvent,
    UnknownStoredEvent,
)

ENVELOPE = {
    "sequence": 7,
    "time": "2026-11-23T01:37:20.560766744Z",
    "sessionId": "s1",
    "source": "agent",
    "synthetic": False,
}


def event(kind: str, data: Any, **extra: Any) -> dict[str, Any]:
    return {**ENVELOPE, "type": kind, "data": data, **extra}


def test_the_union_covers_every_event_type_of_the_spec(openapi: dict[str, Any]) -> None:
    payload = openapi["components"]["schemas"]["EventPayload"]["oneOf"]
    spec_types = {variant["properties"]["type"]["enum"][0] for variant in payload}
    assert set(EVENT_TYPES) == spec_types
    members = get_args(get_args(UniversalEvent.__value__)[0])
    assert set(members) == set(EVENT_TYPES.values())


def test_a_known_event_parses_into_its_model_from_text_and_object() -> None:
    document = event(
        "turnEnded",
        {
            "turnId": "turn_1",
            "stopReason": "completed",
            "usage": {"inputTokens": 1, "outputTokens": 2},
        },
    )
    for value in (document, json.dumps(document), json.dumps(document).encode()):
        parsed = parse_event(value)
        assert isinstance(parsed, TurnEndedEvent)
        assert parsed.data.turn_id == "turn_1"
        assert parsed.data.usage is not None and parsed.data.usage.output_tokens == 2
        assert parsed.session_id == "s1"


def test_nested_unions_are_discriminated() -> None:
    parsed = parse_event(
        event(
            "itemStarted",
            {
                "item": {
                    "itemId": "itm_1",
                    "kind": "message",
                    "status": "inProgress",
                    "content": [{"type": "text", "text": "hi"}],
                }
            },
        )
    )
    assert isinstance(parsed, ItemStartedEvent)
    assert parsed.data.item.content is not None
    assert isinstance(parsed.data.item.content[0], TextContentPart)
    error = parse_event(event("error", {"type": "processExited", "message": "gone", "exitCode": 3}))
    assert isinstance(error, ErrorEvent)
    assert isinstance(error.data, ProcessExitedAgentError) and error.data.exit_code == 3


def test_unknown_fields_are_kept_at_every_level() -> None:
    document = event(
        "turnEnded",
        {
            "turnId": "t",
            "stopReason": "completed",
            "usage": {"inputTokens": 1, "outputTokens": 2, "newCounter": 9},
            "later": True,
        },
        shard="eu-1",
    )
    parsed = parse_event(document)
    assert isinstance(parsed, TurnEndedEvent)
    assert parsed.model_extra == {"shard": "eu-1"}
    assert parsed.data.model_extra == {"later": True}
    assert parsed.data.usage is not None and parsed.data.usage.model_extra == {"newCounter": 9}
    # ... and written back as they came.
    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped["shard"] == "eu-1" and dumped["data"]["usage"]["newCounter"] == 9


def test_an_unknown_event_type_is_kept_whole() -> None:
    document = event("memoryCompacted", {"saved": 1234}, futureEnvelope="x")
    parsed = parse_event(json.dumps(document))
    assert isinstance(parsed, UnrecognizedEvent)
    assert parsed.parse_error is None  # unknown to this SDK, not broken
    assert (parsed.sequence, parsed.type, parsed.data) == (7, "memoryCompacted", {"saved": 1234})
    assert parsed.model_extra is not None
    assert parsed.model_extra["sessionId"] == "s1"
    assert parsed.model_extra["futureEnvelope"] == "x"
    assert parsed.model_dump(by_alias=True, exclude_unset=True) == document


def test_a_known_type_with_a_body_from_the_future_is_kept_with_the_reason() -> None:
    # e.g. a newer daemon adds an item kind this SDK's enum does not have.
    document = event(
        "itemStarted",
        {"item": {"itemId": "i", "kind": "hologram", "status": "inProgress", "content": []}},
    )
    parsed = parse_event(document)
    assert isinstance(parsed, UnrecognizedEvent)
    assert parsed.parse_error is not None and "hologram" in parsed.parse_error
    assert parsed.data == document["data"]


def test_the_daemons_own_unknown_event_is_a_known_model() -> None:
    parsed = parse_event(
        event(
            "unknown",
            {"reason": "newerVersion", "schemaVersion": 9, "storedType": "x", "stored": {"a": 1}},
        )
    )
    assert isinstance(parsed, UnknownStoredEvent)
    assert parsed.data.stored == {"a": 1}


@pytest.mark.parametrize(
    "value",
    [
        "[1, 2]",
        '"text"',
        '{"type": "turnEnded"}',
        '{"sequence": "7", "type": "x"}',
        '{"sequence": 1}',
    ],
)
def test_what_is_not_an_event_is_an_error(value: str) -> None:
    with pytest.raises(ValueError, match="event"):
        parse_event(value)


def test_events_page_mirrors_the_generated_events_response() -> None:
    generated = {name: f.alias for name, f in EventsResponse.model_fields.items()}
    ours = {name: f.alias for name, f in EventsPage.model_fields.items()}
    assert generated == ours


def test_events_page_keeps_unknown_events_and_fields() -> None:
    page = EventsPage.model_validate_json(
        json.dumps(
            {
                "events": [
                    event("turnStarted", {"turnId": "turn_1"}),
                    {**event("brandNew", [1]), "sequence": 8},
                ],
                "hasMore": True,
                "cursorHint": "abc",
            }
        )
    )
    assert isinstance(page.events[1], UnrecognizedEvent)
    assert page.has_more and page.next_offset == 8
    assert page.model_extra == {"cursorHint": "abc"}
    round_trip = json.loads(page.model_dump_json(by_alias=True))
    assert round_trip["events"][1] == {**event("brandNew", [1]), "sequence": 8}


def test_generated_unions_are_type_aliases_not_wrappers() -> None:
    # `error.data.message`, not `error.data.root.message`.
    assert get_args(AgentError.__value__)
    assert get_args(ContentPart.__value__)
