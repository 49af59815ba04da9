"""Webhooks: the signature check on its own (good, tampered, wrong secret, stale,
malformed), then real deliveries of the test daemon to a loopback receiver started here,
checked with the SDK's own helper and seen ``delivered`` in the daemon's list.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sandbox_daemon import (
    DEFAULT_WEBHOOK_TOLERANCE,
    WEBHOOK_ID_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
    AsyncClient,
    Client,
    ProblemError,
    WebhookSignatureError,
    verify_webhook_signature,
)
from sandbox_daemon.models import (
    DeliveryStatus,
    EventType,
    SessionWebhook,
    TurnEndedEvent,
    WebhookDelivery,
    WebhookEventType,
    WebhookPayload,
)

SECRET = "whsec_0123456789abcdef"
BODY = b'{"deliveryId":"s:5","webhookId":"wh_1","type":"turnEnded","event":{}}'
T = 1_800_000_000
NOW = T + 10
PATIENCE = 20.0


def sign(secret: str, t: int, body: bytes) -> str:
    """The daemon's signature (``crates/daemon/src/signing.rs``), computed independently."""
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def refused(reason: str, *args: Any, **kwargs: Any) -> WebhookSignatureError:
    """Asserts that ``verify_webhook_signature(*args, **kwargs)`` refuses for ``reason``."""
    with pytest.raises(WebhookSignatureError) as error:
        verify_webhook_signature(*args, **kwargs)
    assert error.value.reason == reason, error.value
    return error.value


# --- the check on its own ----------------------------------------------------------------


def test_a_good_signature_of_bytes_or_text_holds_and_answers_its_time() -> None:
    header = sign(SECRET, T, BODY)
    assert verify_webhook_signature(SECRET, header, BODY, now=NOW) == T
    assert verify_webhook_signature(SECRET.encode(), header, BODY.decode(), now=NOW) == T
    assert verify_webhook_signature(SECRET, header.encode(), BODY, now=NOW) == T
    # Spaces, uppercase hex, a scheme it does not know; a header given as several values.
    t, v1 = header.split(",")
    spaced = f" {t} , v1={v1.removeprefix('v1=').upper()} ,v0=abc"
    assert verify_webhook_signature(SECRET, spaced, BODY, now=NOW) == T
    assert verify_webhook_signature(SECRET, header.split(","), BODY, now=NOW) == T


def test_any_of_several_v1_holds() -> None:
    good = sign(SECRET, T, BODY).split(",")[1]
    wrong = sign("another-secret-0123", T, BODY).split(",")[1]
    assert verify_webhook_signature(SECRET, f"t={T},{wrong},{good}", BODY, now=NOW) == T
    assert verify_webhook_signature(SECRET, f"{good},t={T},{wrong},v1=", BODY, now=NOW) == T
    refused("mismatch", SECRET, f"t={T},{wrong}", BODY, now=NOW)


def test_a_tampered_or_reserialised_body_or_a_moved_time_is_refused() -> None:
    header = sign(SECRET, T, BODY)
    tampered = BODY.replace(b"turnEnded", b"turnStarted")
    refused("mismatch", SECRET, header, tampered, now=NOW)
    refused("mismatch", SECRET, header, BODY + b" ", now=NOW)
    reserialised = json.dumps(json.loads(BODY)).encode()  # ", " and ": ": other bytes
    refused("mismatch", SECRET, header, reserialised, now=NOW)
    moved = header.replace(f"t={T}", f"t={T + 1}")
    refused("mismatch", SECRET, moved, BODY, now=NOW)


def test_a_wrong_secret_is_refused() -> None:
    header = sign(SECRET, T, BODY)
    for secret in ("whsec_another-one-9876", SECRET.upper(), SECRET[:-1]):
        refused("mismatch", secret, header, BODY, now=NOW)
    with pytest.raises(ValueError, match="secret is empty"):
        verify_webhook_signature("", header, BODY, now=NOW)


def test_a_stale_or_future_time_is_refused_beyond_the_tolerance() -> None:
    header = sign(SECRET, T, BODY)
    assert DEFAULT_WEBHOOK_TOLERANCE == 300
    assert verify_webhook_signature(SECRET, header, BODY, now=T + 300) == T
    stale = refused("stale", SECRET, header, BODY, now=T + 301)
    assert stale.timestamp == T
    refused("stale", SECRET, header, BODY, now=T - 301)
    assert verify_webhook_signature(SECRET, header, BODY, now=T + 3600, tolerance_seconds=3601)
    refused("stale", SECRET, header, BODY, now=T + 1, tolerance_seconds=0)
    assert verify_webhook_signature(SECRET, header, BODY, now=T + 1e9, tolerance_seconds=math.inf)
    # The clock by default: a signature of now holds, one of ten minutes ago does not.
    fresh = int(time.time())
    assert verify_webhook_signature(SECRET, sign(SECRET, fresh, BODY), BODY) == fresh
    old = sign(SECRET, fresh - 600, BODY)
    refused("stale", SECRET, old, BODY)
    # A forged old request is forged, not merely old.
    forged = sign("whsec_another-one-9876", T, BODY)
    refused("mismatch", SECRET, forged, BODY, now=T + 1000)
    for bad in (-1.0, math.nan):
        with pytest.raises(ValueError, match="tolerance_seconds"):
            verify_webhook_signature(SECRET, header, BODY, now=NOW, tolerance_seconds=bad)
    with pytest.raises(ValueError, match="now"):
        verify_webhook_signature(SECRET, header, BODY, now=math.nan)


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "garbage",
        [],
        "v1=abc",
        "t=,v1=abc",
        "t=abc,v1=abc",
        "t=-5,v1=abc",
        "t=1.5,v1=abc",
        f"t={T},t={T},v1=abc",
        f"t={T}",
        f"t={T},v2=abc",
        f"t={T},v1",
    ],
)
def test_a_malformed_header_is_refused(header: str | list[str] | None) -> None:
    refused("malformed", SECRET, header, BODY, now=NOW)


# --- deliveries from the daemon ----------------------------------------------------------


@dataclass(frozen=True)
class Received:
    """One request the receiver got."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def payload(self) -> WebhookPayload:
        return WebhookPayload.model_validate_json(self.body)


class Receiver:
    """A webhook receiver on a loopback port: keeps every request, answers 204."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver.arrived:
                    receiver.received.append(Received(self.path, headers, body))
                    receiver.arrived.notify_all()
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hooks") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def next(self, match: Callable[[Received], bool], timeout: float = PATIENCE) -> Received:
        """The first request (received or to come) that matches."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                found = [r for r in self.received if match(r)]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, [r.payload.delivery_id for r in self.received]
                self.arrived.wait(left)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    try:
        yield running
    finally:
        running.close()


def delivery_when(
    client: Client, webhook_id: str, match: Callable[[WebhookDelivery], bool]
) -> WebhookDelivery:
    """Polls a webhook's deliveries until one matches."""
    deadline = time.monotonic() + PATIENCE
    while True:
        deliveries = list(client.iter_webhook_deliveries(webhook_id))
        found = [d for d in deliveries if match(d)]
        if found:
            return found[0]
        assert time.monotonic() < deadline, deliveries
        time.sleep(0.05)


def test_a_turn_ended_is_delivered_signed_and_listed_delivered(
    client: Client, receiver: Receiver
) -> None:
    created = client.create_webhook(receiver.url(), [WebhookEventType.turn_ended])
    try:
        assert created.id.startswith("wh_") and created.session_id is None
        secret = created.secret
        assert secret is not None and len(secret) >= 16  # made by the daemon, shown once
        webhook = client.get_webhook(created.id)
        assert webhook.model_dump() == created.model_dump(exclude={"secret"})
        assert created.id in {w.id for w in client.list_webhooks().webhooks}

        session = client.start_session("mock")
        turn = session.turn("hello")
        ended = turn.wait()
        assert isinstance(ended, TurnEndedEvent)

        delivery = receiver.next(lambda r: r.payload.event.session_id == session.id)
        assert delivery.path == "/hooks"
        assert delivery.headers["content-type"].startswith("application/json")
        # The SDK's helper, with the secret the daemon made, on the body as received.
        signature = delivery.headers[WEBHOOK_SIGNATURE_HEADER.lower()]
        signed_at = verify_webhook_signature(secret, signature, delivery.body)
        assert abs(signed_at - time.time()) < 60
        refused("mismatch", secret + "x", signature, delivery.body)

        payload = delivery.payload
        delivery_id = f"{session.id}:{ended.sequence}"
        assert payload.delivery_id == delivery_id == delivery.headers[WEBHOOK_ID_HEADER.lower()]
        assert (payload.webhook_id, payload.type) == (created.id, EventType.turn_ended)
        assert payload.event == ended  # the event as the log holds it
        assert [
            r.payload.type for r in receiver.received if r.payload.event.session_id == session.id
        ] == [EventType.turn_ended]  # only the types subscribed to

        listed = delivery_when(
            client,
            created.id,
            lambda d: d.id == delivery_id and d.status == DeliveryStatus.delivered,
        )
        assert (listed.webhook_id, listed.session_id) == (created.id, session.id)
        assert (listed.sequence, listed.event_type) == (ended.sequence, EventType.turn_ended)
        assert (listed.attempts, listed.last_status_code) == (1, 204)
        assert listed.finished_at is not None and listed.next_attempt_at is None

        # A second turn: one delivery per page, iter_webhook_deliveries follows next_cursor.
        second = session.turn("hello again").wait()
        receiver.next(lambda r: r.payload.event.sequence == second.sequence)
        first_page = client.list_webhook_deliveries(created.id, limit=1)
        assert [d.id for d in first_page.deliveries] == [delivery_id]  # oldest first
        assert first_page.next_cursor
        paged = [d.id for d in client.iter_webhook_deliveries(created.id, page_size=1)]
        assert paged == [delivery_id, f"{session.id}:{second.sequence}"]
        with pytest.raises(ProblemError) as bad_limit:
            client.list_webhook_deliveries(created.id, limit=0)
        assert bad_limit.value.status == 400
        session.end()
    finally:
        client.delete_webhook(created.id)
    for gone in (
        lambda: client.get_webhook(created.id),
        lambda: client.delete_webhook(created.id),
        lambda: client.list_webhook_deliveries(created.id),
    ):
        with pytest.raises(ProblemError) as missing:
            gone()
        assert (missing.value.status, missing.value.type.rsplit(":", 1)[1]) == (
            404,
            "webhook-not-found",
        )
    assert created.id not in {w.id for w in client.list_webhooks().webhooks}


def test_a_sessions_own_webhook_delivers_its_events_signed_with_the_secret_given(
    client: Client, receiver: Receiver
) -> None:
    secret = "session-secret-0123456789"
    other = client.start_session("mock")
    events = [WebhookEventType.turn_started, WebhookEventType.turn_ended]
    own = SessionWebhook(url=receiver.url("/own"), events=events, secret=secret)
    session = client.start_session("mock", webhook=own)
    [hook] = [w for w in client.list_webhooks().webhooks if w.session_id == session.id]
    assert (hook.url, hook.events) == (own.url, ["turnStarted", "turnEnded"])

    other.turn("hello").wait()
    ended = session.turn("hello").wait()
    got_end = receiver.next(lambda r: r.path == "/own" and r.payload.type == EventType.turn_ended)
    got_start = receiver.next(
        lambda r: r.path == "/own" and r.payload.type == EventType.turn_started
    )
    for delivery in (got_start, got_end):
        verify_webhook_signature(
            secret, delivery.headers["sandbox-daemon-signature"], delivery.body
        )
        assert delivery.payload.webhook_id == hook.id
        assert delivery.payload.event.session_id == session.id
    assert got_end.payload.event == ended
    assert not [r for r in receiver.received if r.payload.event.session_id == other.id]

    session.delete()
    assert hook.id not in {w.id for w in client.list_webhooks().webhooks}
    other.end()


@pytest.mark.anyio
async def test_async_webhooks_deliver_and_list(aclient: AsyncClient, receiver: Receiver) -> None:
    created = await aclient.create_webhook(receiver.url("/async"), ["*"], secret=SECRET)
    try:
        assert created.secret is None and created.events == ["*"]
        session = await aclient.start_session("mock")
        ended = await (await session.turn("hello")).wait()
        await session.end()
        got = receiver.next(
            lambda r: r.path == "/async" and r.payload.event.sequence == ended.sequence
        )
        assert verify_webhook_signature(SECRET, got.headers["sandbox-daemon-signature"], got.body)
        seen = [r.payload.type for r in receiver.received if r.path == "/async"]
        assert EventType.item_delta not in seen  # "*": every type but itemDelta
        deliveries = [d async for d in aclient.iter_webhook_deliveries(created.id, page_size=2)]
        assert f"{session.id}:{ended.sequence}" in {d.id for d in deliveries}
    finally:
        await aclient.delete_webhook(created.id)


def test_a_webhook_it_cannot_deliver_is_refused(client: Client, receiver: Receiver) -> None:
    url = receiver.url()
    for url_, events, secret in [
        (url, ["itemDelta"], None),
        (url, [], None),
        (url, ["turnEnded", "turnEnded"], None),
        ("ftp://127.0.0.1/hooks", ["turnEnded"], None),
        (url, ["turnEnded"], "short"),
    ]:
        with pytest.raises(ProblemError) as refused_hook:
            client.create_webhook(url_, events, secret=secret)
        assert (refused_hook.value.status, refused_hook.value.type.rsplit(":", 1)[1]) == (
            422,
            "invalid-body",
        ), (url_, events, secret)
    with pytest.raises(TypeError):
        client.create_webhook(url, "turnEnded")
