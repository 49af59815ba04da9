"""Every event of real sessions parses into its own model (the fallback is never used),
and nothing the daemon sent is lost on the way.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from sandbox_daemon import AsyncClient, Client, LocalDaemon, UnrecognizedEvent
from sandbox_daemon.models import EVENT_TYPES, Event, ItemDeltaEvent, TurnStartedEvent

# `unknown` is what the daemon serves for a stored record it cannot read (corrupt, or from
# a newer build): no live session produces one. Its model is tested in test_events.py.
NOT_PRODUCED_LIVE = {"unknown"}

MESSAGE = "unparsed tool permission question flood 3"

# A client host tool the mock calls on `hosttool lookup` (toolCallRequested, toolCallResolved).
LOOKUP = {"name": "lookup", "handler": {"type": "client"}}


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """An event without its `time` (Python keeps microseconds; the daemon sends nanos)."""
    return {key: value for key, value in document.items() if key != "time"}


def check_events(events: list[Event], raw_log: list[dict[str, Any]]) -> None:
    fallbacks = [e for e in events if isinstance(e, UnrecognizedEvent)]
    assert not fallbacks, [(e.type, e.parse_error) for e in fallbacks]
    assert {e.type for e in events} == set(EVENT_TYPES) - NOT_PRODUCED_LIVE
    for event in events:
        assert isinstance(event, EVENT_TYPES[event.type])
        assert not event.model_extra, event  # every member has its field
    assert [e.sequence for e in events] == [d["sequence"] for d in raw_log]
    dumped = [e.model_dump(mode="json", by_alias=True, exclude_unset=True) for e in events]
    assert [comparable(d) for d in dumped] == [comparable(d) for d in raw_log]


def raw_log(daemon: LocalDaemon, session_id: str) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{daemon.base_url}/sessions/{session_id}/events",
        params={"limit": 1000, "includeRaw": "true"},
        headers={"Authorization": f"Bearer {daemon.token}"},
    )
    response.raise_for_status()
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def test_every_event_of_real_sessions_sync(client: Client, daemon: LocalDaemon) -> None:
    session = client.start_session("mock", model="mock-1", host_tools=[LOOKUP])
    session.turn(MESSAGE, on_permission=lambda _: "once", on_question=lambda _: None).wait()
    session.turn("hosttool lookup", on_tool_call=lambda _: "found").wait()
    session.handover("mock", model="mock-1")  # sessionHandedOver; the session goes on
    turn = session.turn("slow")
    cancelled = False
    for event in turn:
        if isinstance(event, ItemDeltaEvent) and not cancelled:
            session.cancel()
            cancelled = True
    assert turn.ended is not None and turn.ended.data.stop_reason.value == "cancelled"
    session.turn("crash").wait()  # an error event, then the session ends (error)
    streamed = list(session.events(include_raw=True))
    paged = list(client.iter_events(session.id, include_raw=True, page_size=10))
    log = raw_log(daemon, session.id)
    check_events(streamed, log)
    check_events(paged, log)


@pytest.mark.anyio
async def test_every_event_of_real_sessions_async(
    aclient: AsyncClient, daemon: LocalDaemon
) -> None:
    session = await aclient.start_session("mock", host_tools=[LOOKUP])
    await (
        await session.turn(
            MESSAGE, on_permission=lambda _: "reject", on_question=lambda _: [["Red"], []]
        )
    ).wait()
    await (
        await session.turn("hosttool lookup", on_tool_call={"lookup": lambda _: {"reject": "no"}})
    ).wait()
    await session.handover("mock", agent_mode="build")
    turn = await session.turn("slow")
    async for event in turn:
        if isinstance(event, TurnStartedEvent):
            await session.cancel()
    assert turn.ended is not None and turn.ended.data.stop_reason.value == "cancelled"
    await (await session.turn("crash")).wait()
    async with session.events(include_raw=True) as stream:
        streamed = [event async for event in stream]
    check_events(streamed, raw_log(daemon, session.id))
