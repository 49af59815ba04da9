"""Streams dropped mid-flood (through a proxy that cuts, or dies and comes back) resume by
themselves: every sequence from 1 to the end exactly once, in order.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    LocalDaemon,
    Reconnect,
    RetryPolicy,
    StreamError,
)
from sandbox_daemon.models import SessionEndedEvent, SessionStartedEvent, TurnEndedEvent

from .conftest import FAST_RETRY
from .proxy import Proxy

FLOOD = 10_000
# Bytes each connection may carry before the proxy cuts it (the whole log is ~2.5 MB).
CUTS = [30_000, 200_001, 777_777]


def target(daemon: LocalDaemon) -> tuple[str, int]:
    parts = urlsplit(daemon.base_url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@pytest.fixture
def cutting_proxy(daemon: LocalDaemon) -> Iterator[Proxy]:
    with Proxy(target(daemon), cuts=CUTS) as proxy:
        yield proxy


def test_cut_connections_resume_without_gap_or_duplicate(
    client: Client, daemon: LocalDaemon, cutting_proxy: Proxy
) -> None:
    session = client.start_session("mock")
    reconnects: list[Reconnect] = []
    sequences: list[int] = []
    with (
        Client(cutting_proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
        via_proxy.events(session.id, on_reconnect=reconnects.append) as events,
    ):
        for event in events:
            sequences.append(event.sequence)
            if isinstance(event, SessionStartedEvent):
                session.send(f"flood {FLOOD}")  # live: the flood runs while we read
            elif isinstance(event, TurnEndedEvent):
                session.end()
        assert isinstance(event, SessionEndedEvent)
    total = session.info().event_count
    assert total > FLOOD
    assert sequences == list(range(1, total + 1))
    assert cutting_proxy.connections == len(CUTS) + 1 == events.connections
    assert [r.attempt for r in reconnects] == [2, 2, 2]  # each drop: one quick retry
    assert all(isinstance(r.error, httpx.TransportError) for r in reconnects)
    resumed_from = [str(r.last_sequence) for r in reconnects]
    assert cutting_proxy.last_event_ids() == [None, *resumed_from]
    assert 0 < reconnects[0].last_sequence < reconnects[1].last_sequence < total


@pytest.mark.anyio
async def test_cut_connections_resume_without_gap_or_duplicate_async(
    aclient: AsyncClient, daemon: LocalDaemon, cutting_proxy: Proxy
) -> None:
    session = await aclient.start_session("mock")
    reconnects: list[Reconnect] = []
    sequences: list[int] = []
    async with (
        AsyncClient(cutting_proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
        via_proxy.events(session.id, on_reconnect=reconnects.append) as events,
    ):
        async for event in events:
            sequences.append(event.sequence)
            if isinstance(event, SessionStartedEvent):
                await session.send(f"flood {FLOOD}")
            elif isinstance(event, TurnEndedEvent):
                await session.end()
    total = (await session.info()).event_count
    assert total > FLOOD
    assert sequences == list(range(1, total + 1))
    assert cutting_proxy.connections == len(CUTS) + 1
    assert cutting_proxy.last_event_ids() == [None, *(str(r.last_sequence) for r in reconnects)]


def test_a_proxy_that_dies_and_comes_back(client: Client, daemon: LocalDaemon) -> None:
    session = client.start_session("mock")
    reconnects: list[Reconnect] = []
    sequences: list[int] = []
    with Proxy(target(daemon)) as proxy:

        def on_reconnect(info: Reconnect) -> None:
            reconnects.append(info)
            if len(reconnects) == 2:  # one try has met a closed port: bring it back
                proxy.start()

        with (
            Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
            via_proxy.events(session.id, on_reconnect=on_reconnect) as events,
        ):
            for event in events:
                sequences.append(event.sequence)
                if isinstance(event, SessionStartedEvent):
                    session.send(f"flood {FLOOD}")
                elif event.sequence == 3000:
                    proxy.stop()  # the listener and the open connection die
                elif isinstance(event, TurnEndedEvent):
                    session.end()
    total = session.info().event_count
    assert sequences == list(range(1, total + 1))
    assert [r.attempt for r in reconnects] == [2, 3]
    assert isinstance(reconnects[1].error, httpx.ConnectError)  # refused while down
    assert reconnects[0].last_sequence == reconnects[1].last_sequence >= 3000
    assert proxy.last_event_ids() == [None, str(reconnects[0].last_sequence)]


@pytest.mark.anyio
async def test_a_proxy_that_dies_and_comes_back_async(
    aclient: AsyncClient, daemon: LocalDaemon
) -> None:
    session = await aclient.start_session("mock")
    reconnects: list[Reconnect] = []
    sequences: list[int] = []
    with Proxy(target(daemon)) as proxy:

        def on_reconnect(info: Reconnect) -> None:
            reconnects.append(info)
            if len(reconnects) == 2:
                proxy.start()

        async with (
            AsyncClient(proxy.url, token=daemon.token, retry=FAST_RETRY) as via_proxy,
            via_proxy.events(session.id, on_reconnect=on_reconnect) as events,
        ):
            async for event in events:
                sequences.append(event.sequence)
                if isinstance(event, SessionStartedEvent):
                    await session.send(f"flood {FLOOD}")
                elif event.sequence == 3000:
                    proxy.stop()
                elif isinstance(event, TurnEndedEvent):
                    await session.end()
    total = (await session.info()).event_count
    assert sequences == list(range(1, total + 1))
    assert [r.attempt for r in reconnects] == [2, 3]


def test_reconnecting_is_bounded(client: Client, daemon: LocalDaemon) -> None:
    session = client.start_session("mock")
    session.send("hello")
    reconnects: list[Reconnect] = []
    policy = RetryPolicy(max_attempts=3, backoff=0.01, max_backoff=0.01)
    with Proxy(target(daemon)) as proxy, Client(proxy.url, token=daemon.token) as via_proxy:
        events = via_proxy.events(session.id, retry=policy, on_reconnect=reconnects.append)
        seen: list[int] = []

        def follow() -> None:
            for event in events:
                seen.append(event.sequence)
                proxy.stop()  # for good (what was already received still arrives)

        with pytest.raises(StreamError, match=r"could not be resumed after sequence") as gave_up:
            follow()
    assert seen == list(range(1, len(seen) + 1))
    assert f"after sequence {seen[-1]} in 3 tries" in str(gave_up.value)
    assert [r.attempt for r in reconnects] == [2, 3]
    assert isinstance(reconnects[-1].error, httpx.ConnectError)
    session.end()


def test_a_stream_from_an_offset_and_with_raw(client: Client) -> None:
    with client.start_session("mock") as session:
        session.turn("unparsed tool").wait()
        with session.events(offset=3, include_raw=True) as events:
            first = next(events)
            assert first.sequence == 4
            assert events.last_sequence == 4 and not events.ended
            raw = []
            for event in events:
                if event.raw is not None:
                    raw.append(event.raw)
                if isinstance(event, TurnEndedEvent):
                    break
            assert raw  # the unparsed item carries its native JSON
        with client.events(session.id, last_event_id=5, offset=1) as events:
            assert next(events).sequence == 6  # Last-Event-ID wins, as the header does
