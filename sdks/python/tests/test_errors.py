"""Problem details for bad input (real daemon), and what is retried and what never is."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    LocalDaemon,
    ProblemError,
    ResponseError,
    RetryPolicy,
    TransportError,
)
from sandbox_daemon.models import NotInstalledAgentError, ProblemDetails

PROBLEM = "urn:sandbox-daemon:problem:"


def problem_of(call: Callable[[], object]) -> ProblemError:
    with pytest.raises(ProblemError) as caught:
        call()
    return caught.value


def test_problem_details_of_bad_input(client: Client, session_id: str) -> None:
    unknown = problem_of(lambda: client.create_session(session_id, agent="nope"))
    assert (unknown.status, unknown.type) == (404, PROBLEM + "unknown-agent")
    assert unknown.title == "Unknown agent" and "nope" in unknown.detail
    assert unknown.instance == f"/sessions/{session_id}"
    assert unknown.method == "POST" and unknown.url.endswith(f"/sessions/{session_id}")
    assert problem_of(lambda: client.agent_models("nope")).status == 404

    # The SDK does not second-guess the daemon: a bad value reaches it and it says why.
    bad_body = problem_of(
        lambda: client.create_session(session_id, agent="mock", permission_mode="sometimes")
    )
    assert (bad_body.status, bad_body.type) == (422, PROBLEM + "invalid-body")
    # What the schema states (here, between two fields) is a 422 too...
    bypass = problem_of(
        lambda: client.create_session(session_id, agent="mock", permission_mode="bypass")
    )
    assert (bypass.status, bypass.type) == (422, PROBLEM + "invalid-body")
    assert "dangerouslySkipPermissions" in bypass.detail
    # ...and what only the daemon can judge, such as a mode the agent lacks, a 400.
    no_mode = problem_of(
        lambda: client.create_session(session_id, agent="mock", agent_mode="dance")
    )
    assert (no_mode.status, no_mode.type) == (400, PROBLEM + "invalid-session-config")

    bad_id = problem_of(lambda: client.create_session(".hidden", agent="mock"))
    assert (bad_id.status, bad_id.type) == (400, PROBLEM + "invalid-parameter")
    bad_limit = problem_of(lambda: client.get_events(session_id, limit=0))
    assert (bad_limit.status, bad_limit.type) == (400, PROBLEM + "invalid-parameter")
    missing = problem_of(lambda: client.get_session(session_id))
    assert (missing.status, missing.type) == (404, PROBLEM + "session-not-found")

    # The problem as the generated model, with every member.
    assert isinstance(unknown.problem, ProblemDetails)
    assert unknown.problem.type == unknown.type and unknown.problem.status == 404


def test_conflicts(client: Client) -> None:
    session = client.start_session("mock")
    taken = problem_of(lambda: client.create_session(session.id, agent="mock"))
    assert taken.status == 409
    turn = session.turn("permission")
    asked = next(e for e in turn if e.type == "permissionAsked")
    busy = problem_of(lambda: session.send("another"))
    assert (busy.status, busy.type) == (409, PROBLEM + "turn-in-progress")
    wrong_answers = problem_of(lambda: session.reply_question("q_404", [["x"]]))
    assert wrong_answers.status == 404
    session.end()
    ended = problem_of(lambda: session.cancel())
    assert (ended.status, ended.type) == (409, PROBLEM + "session-ended")
    assert asked.sequence > 0
    session.delete()


def test_a_wrong_token_is_401(daemon: LocalDaemon) -> None:
    with Client(daemon.base_url, token="wrong") as client:
        assert client.health().status == "ok"  # /health needs no token
        denied = problem_of(client.list_agents)
        assert (denied.status, denied.type) == (401, PROBLEM + "unauthorized")
        assert denied.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.anyio
async def test_problem_details_async(aclient: AsyncClient, session_id: str) -> None:
    with pytest.raises(ProblemError) as unknown:
        await aclient.create_session(session_id, agent="nope")
    assert (unknown.value.status, unknown.value.type) == (404, PROBLEM + "unknown-agent")
    with pytest.raises(ProblemError) as bad:
        await aclient.list_sessions(limit=5000)
    assert bad.value.status == 400


# --- answers the daemon does not normally give (a fake transport) ------------------------


def fake(handler: Callable[[httpx.Request], httpx.Response]) -> Client:
    """A client whose daemon is ``handler``, retrying 3 times without waiting."""
    policy = RetryPolicy(max_attempts=3, backoff=0, jitter=0)
    return Client("http://daemon.test", transport=httpx.MockTransport(handler), retry=policy)


def test_problem_extras_and_agent_error_are_kept() -> None:
    body = {
        "type": PROBLEM + "agent-not-installed",
        "title": "Not installed",
        "status": 409,
        "detail": "claude is not installed",
        "agentError": {"type": "notInstalled", "message": "install it"},
        "hint": "run install",
        "retryable": False,
    }
    client = fake(lambda r: httpx.Response(409, json=body))
    error = problem_of(lambda: client.get_session("s"))
    assert isinstance(error.agent_error, NotInstalledAgentError)
    assert error.agent_error.message == "install it"
    assert error.extras == {"hint": "run install", "retryable": False}
    assert error.problem.model_extra == {"hint": "run install", "retryable": False}


def test_a_body_that_is_not_a_problem() -> None:
    client = fake(lambda r: httpx.Response(400, content=b"bad request line"))
    error = problem_of(client.health)
    assert (error.type, error.status, error.title) == ("about:blank", 400, "Bad Request")
    assert error.detail == "bad request line"


def test_a_2xx_body_of_the_wrong_shape() -> None:
    client = fake(lambda r: httpx.Response(200, json={"status": "ok"}))
    with pytest.raises(ResponseError, match="HealthResponse"):
        client.health()


def test_idempotent_calls_are_retried_on_connection_errors() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if len(calls) < 3:
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(
            200,
            json={
                "status": "ok",
                "version": "0.1.0",
                "store": {"backend": "sqlite", "status": "ok"},
            },
        )

    assert fake(handler).health().status == "ok"
    assert calls == ["/health"] * 3


def test_retries_are_bounded() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(TransportError, match="after 3 tries") as caught:
        fake(handler).delete_session("s")
    assert caught.value.attempts == 3 and calls == ["DELETE"] * 3
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("sendMessage", lambda c: c.send_message("s", "hi")),
        ("createSession", lambda c: c.create_session("s", agent="mock")),
        ("replyPermission", lambda c: c.reply_permission("s", "p", "once")),
        ("cancelTurn", lambda c: c.cancel_turn("s")),
    ],
)
def test_calls_that_are_not_idempotent_are_never_retried(
    name: str, call: Callable[[Client], object]
) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(TransportError) as caught:
        call(fake(handler))
    assert caught.value.attempts == 1 and calls == ["POST"], name


def test_end_and_install_are_idempotent_by_contract() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        raise httpx.ConnectError("refused", request=request)

    client = fake(handler)
    with pytest.raises(TransportError):
        client.end_session("s")
    with pytest.raises(TransportError):
        client.install_agent("mock")
    assert calls == ["/sessions/s/end"] * 3 + ["/agents/mock/install"] * 3


def test_503_is_retried_after_what_the_daemon_asks() -> None:
    answers = [
        httpx.Response(
            503,
            headers={"Retry-After": "0"},
            json={"type": "x", "title": "t", "status": 503, "detail": "restoring"},
        ),
        httpx.Response(200, json={"sessions": []}),
    ]
    client = fake(lambda r: answers.pop(0))
    assert client.list_sessions().sessions == []
    assert not answers
    # ... but not for a call that is not idempotent.
    answers = [httpx.Response(503, json={"type": "x", "title": "t", "status": 503, "detail": "d"})]
    assert problem_of(lambda: fake(lambda r: answers.pop(0)).send_message("s", "m")).status == 503


def test_requests_carry_json_token_and_accept() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    client = Client("http://daemon.test/", token="secret", transport=httpx.MockTransport(handler))
    client.reply_question("s 1", "q/2", [["Red"], ["Cheese", "Olives"]])
    client.reject_question("s", "q")
    first, second = seen
    assert first.url.raw_path == b"/sessions/s%201/questions/q%2F2/reply"  # ids are quoted
    assert first.headers["authorization"] == "Bearer secret"
    assert first.headers["content-type"] == "application/json"
    assert first.headers["accept"] == "application/json"
    assert json.loads(first.content) == {"answers": [["Red"], ["Cheese", "Olives"]]}
    assert json.loads(second.content) == {}
    with pytest.raises(TypeError, match="one list of labels per question"):
        client.reply_question("s", "q", ["Red"])


def test_environment_defaults(monkeypatch: pytest.MonkeyPatch, daemon: LocalDaemon) -> None:
    monkeypatch.setenv("SANDBOX_DAEMON_ENDPOINT", daemon.base_url)
    monkeypatch.setenv("SANDBOX_DAEMON_TOKEN", daemon.token)
    with Client() as client:
        assert client.base_url == daemon.base_url
        assert any(a.id.value == "mock" for a in client.list_agents().agents)
