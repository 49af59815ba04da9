"""Idempotency keys: ``create_session`` and ``send_message`` sent again with the same key get
the first answer again (``Idempotent-Replayed: true``) instead of acting twice; another
request with the key, or a bad key, is refused; and with a key the client retries a call
whose answer was lost, which it never does without one.
"""

from __future__ import annotations

import httpx
import pytest

from sandbox_daemon import AsyncClient, Client, LocalDaemon, ProblemError, TransportError
from sandbox_daemon.models import SessionStartedEvent, TurnEndedEvent, TurnStartedEvent

from .conftest import FAST_RETRY
from .recording import AsyncRecordingTransport, RecordingTransport


def replayed(recorder: RecordingTransport | AsyncRecordingTransport, operation: str) -> list[str]:
    """The ``Idempotent-Replayed`` header of each answer to ``operation`` ('' when absent)."""
    return [
        (e.response_headers or httpx.Headers()).get("idempotent-replayed", "")
        for e in recorder.exchanges
        if e.operation == operation
    ]


def problem_kind(error: ProblemError) -> tuple[int, str]:
    return error.status, error.type.rsplit(":", 1)[1]


def turn_starts(client: Client, session_id: str) -> list[str]:
    return [
        e.data.turn_id for e in client.iter_events(session_id) if isinstance(e, TurnStartedEvent)
    ]


def test_create_session_again_with_its_key_answers_the_first_answer(
    daemon: LocalDaemon, session_id: str
) -> None:
    recorder = RecordingTransport()
    with Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c:
        key = f"create {session_id}"
        first = c.create_session(session_id, agent="mock", idempotency_key=key)
        again = c.create_session(session_id, agent="mock", idempotency_key=key)
        assert again == first
        assert recorder.statuses("createSession") == [201, 201]
        assert replayed(recorder, "createSession") == ["", "true"]
        sent = [e.request_headers for e in recorder.exchanges if e.operation == "createSession"]
        assert [h.get("idempotency-key") for h in sent if h is not None] == [key, key]
        # Created once: one sessionStarted.
        started = [e for e in c.iter_events(session_id) if isinstance(e, SessionStartedEvent)]
        assert [e.sequence for e in started] == [1]

        # Without the key it is a second create of a taken id.
        with pytest.raises(ProblemError) as taken:
            c.create_session(session_id, agent="mock")
        assert problem_kind(taken.value) == (409, "session-exists")
        # The key with another body, or for another session, names another request.
        with pytest.raises(ProblemError) as other_body:
            c.create_session(session_id, agent="mock", agent_mode="plan", idempotency_key=key)
        assert problem_kind(other_body.value) == (422, "idempotency-key-reused")
        with pytest.raises(ProblemError) as other_session:
            c.create_session(f"{session_id}-2", agent="mock", idempotency_key=key)
        assert problem_kind(other_session.value) == (422, "idempotency-key-reused")
        # A key that is not 1 to 255 printable ASCII characters.
        for bad in ("k" * 256, ""):
            with pytest.raises(ProblemError) as refused:
                c.create_session(f"{session_id}-3", agent="mock", idempotency_key=bad)
            assert problem_kind(refused.value) == (400, "invalid-parameter")

        # start_session takes it too.
        handle = c.start_session("mock", session_id=f"{session_id}-4", idempotency_key=key + "4")
        again = c.create_session(handle.id, agent="mock", idempotency_key=key + "4")
        assert replayed(recorder, "createSession")[-1] == "true"
        handle.delete()
        c.delete_session(session_id)


def test_send_message_again_with_its_key_starts_one_turn(
    daemon: LocalDaemon, session_id: str
) -> None:
    recorder = RecordingTransport()
    with Client(daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY) as c:
        session = c.start_session("mock", session_id=session_id)
        key = f"send {session_id} 1"
        first = c.send_message(session_id, "hello", idempotency_key=key)
        # While the turn runs (without the key: a 409 turn-in-progress), and after it ended.
        again = session.send("hello", idempotency_key=key)
        assert again.turn_id == first.turn_id
        with c.events(session_id) as events:
            for event in events:
                if isinstance(event, TurnEndedEvent) and event.data.turn_id == first.turn_id:
                    break
        late = c.send_message(session_id, "hello", idempotency_key=key)
        assert late.turn_id == first.turn_id
        assert recorder.statuses("sendMessage") == [202, 202, 202]
        assert replayed(recorder, "sendMessage") == ["", "true", "true"]
        assert turn_starts(c, session_id) == [first.turn_id]  # one turnStarted

        # Another message with the key is another request; a new key is a new turn.
        with pytest.raises(ProblemError) as reused:
            session.send("hello!", idempotency_key=key)
        assert problem_kind(reused.value) == (422, "idempotency-key-reused")
        second = session.turn("hello").wait()  # no key: one turn, as always
        assert turn_starts(c, session_id) == [first.turn_id, second.data.turn_id]
        session.end()


class DropFirstAnswer(httpx.BaseTransport):
    """Sends every request to the daemon, but loses the answer to the first ``sendMessage``
    (read and thrown away, then a broken connection): the daemon acted, the client cannot
    know it.
    """

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []
        self.dropped = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/messages"):
            self.sent.append(request)
            if not self.dropped:
                self.dropped = True
                response.read()
                response.close()
                raise httpx.ReadError("connection lost before the answer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_with_a_key_a_lost_answer_is_retried_and_replayed(
    daemon: LocalDaemon, session_id: str
) -> None:
    transport = DropFirstAnswer()
    with Client(daemon.base_url, token=daemon.token, transport=transport, retry=FAST_RETRY) as c:
        c.create_session(session_id, agent="mock")
        answer = c.send_message(session_id, "hello", idempotency_key=f"lost {session_id}")
        assert len(transport.sent) == 2  # the retry
        assert [r.headers["idempotency-key"] for r in transport.sent] == [f"lost {session_id}"] * 2
        with c.events(session_id) as events:
            for event in events:
                if isinstance(event, TurnEndedEvent):
                    break
        assert turn_starts(c, session_id) == [answer.turn_id]  # one turn, the one answered
        c.end_session(session_id)


def test_without_a_key_a_lost_answer_is_not_retried(daemon: LocalDaemon, session_id: str) -> None:
    transport = DropFirstAnswer()
    with Client(daemon.base_url, token=daemon.token, transport=transport, retry=FAST_RETRY) as c:
        c.create_session(session_id, agent="mock")
        with pytest.raises(TransportError) as lost:
            c.send_message(session_id, "hello")
        assert lost.value.attempts == 1 and len(transport.sent) == 1
        # The daemon did start the turn: a retry without a key could have started another.
        with c.events(session_id) as events:
            for event in events:
                if isinstance(event, TurnEndedEvent):
                    break
        assert len(turn_starts(c, session_id)) == 1
        c.end_session(session_id)


@pytest.mark.anyio
async def test_async_create_and_send_again_with_their_keys(
    daemon: LocalDaemon, session_id: str
) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as c:
        for _ in range(2):
            await c.create_session(session_id, agent="mock", idempotency_key=f"a {session_id}")
        session = c.session(session_id)
        turns = [
            (await session.send("hello", idempotency_key=f"s {session_id}")).turn_id,
            (await c.send_message(session_id, "hello", idempotency_key=f"s {session_id}")).turn_id,
        ]
        assert turns[0] == turns[1]
        assert replayed(recorder, "createSession") == ["", "true"]
        assert replayed(recorder, "sendMessage") == ["", "true"]
        with pytest.raises(ProblemError) as reused:
            await c.send_message(session_id, "other", idempotency_key=f"s {session_id}")
        assert problem_kind(reused.value) == (422, "idempotency-key-reused")
        async with c.events(session_id) as events:
            async for event in events:
                if isinstance(event, TurnEndedEvent):
                    break
        starts = [e async for e in c.iter_events(session_id) if isinstance(e, TurnStartedEvent)]
        assert [e.data.turn_id for e in starts] == [turns[0]]
        await session.end()
