"""What a stream does with a daemon that misbehaves (a fake transport): duplicates after a
resume are dropped, a gap or a wrong id is an error, refusals are retried or raised.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    ProblemError,
    Reconnect,
    RetryPolicy,
    StreamError,
    TransportError,
    TurnInterruptedError,
    UnrecognizedEvent,
)

POLICY = RetryPolicy(max_attempts=3, backoff=0, jitter=0)


def frame(sequence: int, kind: str = "itemDelta", frame_id: str | None = None) -> bytes:
    data: dict[str, Any] = {
        "sequence": sequence,
        "time": "2026-11-23T00:00:00Z",
        "sessionId": "s",
        "source": "agent",
        "synthetic": False,
        "type": kind,
        "data": {"itemId": "i", "delta": str(sequence)},
    }
    if kind == "sessionEnded":
        data["data"] = {"reason": "completed"}
    elif kind == "turnStarted":
        data["data"] = {"turnId": "turn_1"}
    elif kind == "brandNew":
        data["data"] = {"x": 1}
    ident = str(sequence) if frame_id is None else frame_id
    return f"id: {ident}\nevent: {kind}\ndata: {json.dumps(data)}\n\n".encode()


class Broken(httpx.ByteStream):
    """A body that breaks off after its bytes, as a dropped connection does."""

    def __init__(self, content: bytes) -> None:
        self.content = content

    def __iter__(self) -> Iterator[bytes]:
        yield self.content
        raise httpx.RemoteProtocolError("peer closed connection")


def sse_daemon(
    answers: list[httpx.Response], seen: list[httpx.Request]
) -> Callable[[httpx.Request], httpx.Response]:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    return handler


def stream(body: bytes, *, broken: bool = False) -> httpx.Response:
    if broken:
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=Broken(body)
        )
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def client_for(answers: list[httpx.Response], seen: list[httpx.Request]) -> Client:
    return Client(
        "http://d.test", transport=httpx.MockTransport(sse_daemon(answers, seen)), retry=POLICY
    )


def test_a_resume_that_repeats_events_delivers_them_once() -> None:
    seen: list[httpx.Request] = []
    answers = [
        stream(frame(1) + frame(2) + frame(3)[:20], broken=True),
        stream(frame(2) + frame(3) + frame(4, "sessionEnded")),
    ]
    events = client_for(answers, seen).events("s")
    assert [e.sequence for e in events] == [1, 2, 3, 4]
    assert [r.headers.get("last-event-id") for r in seen] == [None, "2"]
    assert seen[0].url.params["offset"] == "0"
    assert seen[0].headers["accept"] == "text/event-stream"


def test_a_gap_is_an_error() -> None:
    answers = [stream(frame(1), broken=True), stream(frame(3))]
    with pytest.raises(StreamError, match="skipped from 1 to 3"):
        list(client_for(answers, []).events("s"))


def test_a_frame_id_that_is_not_the_sequence_is_an_error() -> None:
    answers = [stream(frame(1, frame_id="9"))]
    with pytest.raises(StreamError, match="differs"):
        list(client_for(answers, []).events("s"))


def test_a_frame_that_is_not_an_event_is_an_error() -> None:
    answers = [stream(b"id: 1\ndata: [1]\n\n")]
    with pytest.raises(StreamError, match="not an event"):
        list(client_for(answers, []).events("s"))


def test_unknown_event_types_pass_through_streams() -> None:
    answers = [stream(frame(1, "brandNew") + frame(2, "sessionEnded"))]
    first, last = client_for(answers, []).events("s")
    assert isinstance(first, UnrecognizedEvent) and first.type == "brandNew"
    assert last.type == "sessionEnded"


def test_a_clean_end_without_session_ended_resumes() -> None:
    seen: list[httpx.Request] = []
    reconnects: list[Reconnect] = []
    answers = [stream(frame(1)), stream(frame(2, "sessionEnded"))]
    events = client_for(answers, seen).events("s", offset=0, on_reconnect=reconnects.append)
    assert [e.sequence for e in events] == [1, 2]
    assert reconnects == [Reconnect(attempt=2, delay=0.0, last_sequence=1, error=None)]


def test_refusals_503_are_retried_and_404_raised() -> None:
    problem = {"type": "t", "title": "t", "status": 503, "detail": "restoring"}
    answers = [
        httpx.Response(503, json=problem, headers={"retry-after": "0"}),
        stream(frame(1, "sessionEnded")),
    ]
    assert [e.sequence for e in client_for(answers, []).events("s")] == [1]
    gone = {"type": "urn:x:session-not-found", "title": "Not found", "status": 404, "detail": "d"}
    answers = [stream(frame(1), broken=True), httpx.Response(404, json=gone)]
    events = client_for(answers, []).events("s")
    assert next(events).sequence == 1
    with pytest.raises(ProblemError) as caught:
        next(events)
    assert caught.value.status == 404


def test_a_turn_whose_session_ends_first_is_interrupted() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == "/sessions/s":
            return httpx.Response(200, json=SESSION)
        if request.method == "POST":
            return httpx.Response(202, json={"turnId": "turn_1"})
        return stream(frame(4, "turnStarted") + frame(5, "sessionEnded"))

    client = Client("http://d.test", transport=httpx.MockTransport(handler), retry=POLICY)
    turn = client.session("s").turn("hello")
    with pytest.raises(TurnInterruptedError) as caught:
        list(turn)
    assert (caught.value.session_id, caught.value.turn_id) == ("s", "turn_1")


SESSION = {
    "sessionId": "s",
    "agent": "mock",
    "status": "idle",
    "permissionMode": "default",
    "cwd": "/",
    "createdAt": "2026-11-23T00:00:00Z",
    "updatedAt": "2026-11-23T00:00:01Z",
    "eventCount": 3,
    "pendingPermissions": [],
    "pendingQuestions": [],
}


class AsyncBroken(httpx.AsyncByteStream):
    def __init__(self, content: bytes) -> None:
        self.content = content

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        yield self.content
        raise httpx.ReadError("reset")


@pytest.mark.anyio
async def test_async_resume_delivers_each_event_once() -> None:
    seen: list[httpx.Request] = []
    answers = [
        httpx.Response(200, stream=AsyncBroken(frame(1) + frame(2)[:10])),
        httpx.Response(200, content=frame(1) + frame(2) + frame(3, "sessionEnded")),
    ]

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    async with AsyncClient(
        "http://d.test", transport=httpx.MockTransport(handler), retry=POLICY
    ) as client:
        events = client.events("s")
        assert [e.sequence async for e in events] == [1, 2, 3]
        assert events.ended and events.connections == 2
    assert [r.headers.get("last-event-id") for r in seen] == [None, "1"]


class SilentDaemon:
    """A raw HTTP server: its first stream sends one event and then nothing (a dead
    connection that stays open); its second sends the end.
    """

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        answers = [frame(1), frame(2, "sessionEnded")]
        for body in answers:
            conn, _ = self.listener.accept()
            self.requests.append(conn.recv(65536))
            head = (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
            )
            conn.sendall(head + body)
            if body is answers[0]:
                self.held.append(conn)  # silent from now on, never closed
            else:
                conn.close()

    def close(self) -> None:
        for conn in self.held:
            conn.close()
        self.listener.close()
        self.thread.join(5)


def test_a_silent_connection_counts_as_dropped_after_the_read_timeout() -> None:
    server = SilentDaemon()
    reconnects: list[Reconnect] = []
    try:
        with Client(
            f"http://127.0.0.1:{server.port}", stream_read_timeout=0.2, retry=POLICY
        ) as client:
            events = client.events("s", on_reconnect=reconnects.append)
            assert [e.sequence for e in events] == [1, 2]
    finally:
        server.close()
    assert len(reconnects) == 1 and isinstance(reconnects[0].error, httpx.ReadTimeout)
    assert b"last-event-id: 1" in server.requests[1].lower()


def test_a_mistake_on_this_side_is_not_retried() -> None:
    with Client("ftp://d.test", retry=POLICY) as client, pytest.raises(TransportError):
        list(client.events("s"))
