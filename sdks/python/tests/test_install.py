"""Installing agents: the JSON summary and the progress stream, sync and async, against the
real daemon (offline: its downloads go to a port where nothing listens, see conftest), then
the stream's rules against fake daemons.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox_daemon import (
    AgentId,
    AsyncClient,
    Client,
    InstallFrame,
    LocalDaemon,
    ProblemError,
    RetryPolicy,
    StreamError,
    TransportError,
    UnrecognizedInstallProgress,
)
from sandbox_daemon.models import (
    BinarySource,
    DownloadingInstallProgress,
    InstallFailedAgentError,
    InstallResponse,
    ResolvingInstallProgress,
    VerifyingInstallProgress,
    WaitingInstallProgress,
)

from .conftest import FAST_RETRY, LEAKY, OFFLINE_INSTALLS, daemon_env
from .proxy import Proxy

AGENT_ERROR = "urn:sandbox-daemon:problem:agent-error"
INVALID_BODY = "urn:sandbox-daemon:problem:invalid-body"
UNKNOWN_AGENT = "urn:sandbox-daemon:problem:unknown-agent"


def drain(frames: Iterator[InstallFrame], into: list[InstallFrame]) -> None:
    """Collect frames until the stream ends (or raises)."""
    for item in frames:
        into.append(item)


async def adrain(frames: AsyncIterator[InstallFrame], into: list[InstallFrame]) -> None:
    async for item in frames:
        into.append(item)


# --- the real daemon ---------------------------------------------------------------------


def test_the_test_daemon_is_offline(daemon: LocalDaemon) -> None:
    environ = Path(f"/proc/{daemon.pid}/environ")
    if not environ.exists():
        pytest.skip("no /proc here")
    entries = (entry.partition("=") for entry in environ.read_text().split("\0"))
    env = {name: value for name, _, value in entries if name}
    assert {k: env.get(k) for k in OFFLINE_INSTALLS} == OFFLINE_INSTALLS
    assert not [k for k in env if LEAKY.fullmatch(k)]
    assert not [k for k in os.environ if LEAKY.fullmatch(k)]  # nor in daemons started later


def check_mock(done: InstallResponse) -> None:
    assert done.agent == AgentId.mock and done.already_installed
    assert done.source == BinarySource.built_in and done.size == 0


def test_mock_is_installed_already(client: Client) -> None:
    check_mock(client.install_agent("mock"))
    check_mock(client.install_agent(AgentId.mock, version="pinned", reinstall=True))
    with client.install_agent_progress("mock") as install:
        frames = list(install)
    assert len(frames) == 1 and isinstance(frames[0], InstallResponse)
    check_mock(frames[0])
    assert install.result == frames[0]


@pytest.mark.anyio
async def test_mock_is_installed_already_async(aclient: AsyncClient) -> None:
    check_mock(await aclient.install_agent("mock"))
    async with aclient.install_agent_progress(AgentId.mock, reinstall=False) as install:
        frames = [item async for item in install]
    assert len(frames) == 1 and isinstance(frames[0], InstallResponse)
    check_mock(frames[0])
    assert install.result == frames[0]


def check_install_failed(problem: ProblemError) -> None:
    assert (problem.status, problem.type) == (502, AGENT_ERROR)
    assert isinstance(problem.agent_error, InstallFailedAgentError)
    assert problem.agent_error.type == "installFailed"
    assert "127.0.0.1:1" in problem.agent_error.message  # the offline mirror, nothing else
    assert problem.method == "POST" and problem.url.endswith("/agents/amp/install")
    assert problem.problem.agent_error == problem.agent_error


def check_failed_frames(frames: list[InstallFrame]) -> None:
    assert frames, "a resolving frame comes first"
    assert frames[0] == ResolvingInstallProgress(phase="resolving", requested="1.0.0")
    assert not [f for f in frames if isinstance(f, InstallResponse)]


def test_an_install_that_fails(client: Client) -> None:
    with pytest.raises(ProblemError) as caught:
        client.install_agent("amp", version="1.0.0")
    check_install_failed(caught.value)

    frames: list[InstallFrame] = []
    install = client.install_agent_progress("amp", version="1.0.0")
    with pytest.raises(ProblemError) as streamed:
        drain(install, frames)
    check_install_failed(streamed.value)
    check_failed_frames(frames)
    assert install.result is None
    assert list(install) == []  # over


@pytest.mark.anyio
async def test_an_install_that_fails_async(aclient: AsyncClient) -> None:
    with pytest.raises(ProblemError) as caught:
        await aclient.install_agent(AgentId.amp, version="1.0.0")
    check_install_failed(caught.value)

    frames: list[InstallFrame] = []
    async with aclient.install_agent_progress("amp", version="1.0.0") as install:
        with pytest.raises(ProblemError) as streamed:
            await adrain(install, frames)
    check_install_failed(streamed.value)
    check_failed_frames(frames)
    assert install.result is None


@pytest.mark.parametrize(
    ("agent", "version", "status", "kind"),
    [
        ("amp", "../x", 422, INVALID_BODY),
        ("mock", "../x", 422, INVALID_BODY),
        ("nope", None, 404, UNKNOWN_AGENT),
    ],
)
def test_refusals(client: Client, agent: str, version: str | None, status: int, kind: str) -> None:
    with pytest.raises(ProblemError) as caught:
        client.install_agent(agent, version=version)
    assert (caught.value.status, caught.value.type) == (status, kind)
    install = client.install_agent_progress(agent, version=version)
    with pytest.raises(ProblemError) as streamed:
        next(install)  # the request goes when iteration starts
    assert (streamed.value.status, streamed.value.type) == (status, kind)
    assert streamed.value.detail == caught.value.detail


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("agent", "version", "status"), [("amp", "../x", 422), ("nope", "1.0.0", 404)]
)
async def test_refusals_async(aclient: AsyncClient, agent: str, version: str, status: int) -> None:
    with pytest.raises(ProblemError) as caught:
        await aclient.install_agent(agent, version=version)
    assert caught.value.status == status
    with pytest.raises(ProblemError) as streamed:
        await aclient.install_agent_progress(agent, version=version).__anext__()
    assert streamed.value.status == status


def test_an_override_refuses_other_versions(daemon_bin: str, tmp_path: Path) -> None:
    # SANDBOX_DAEMON_<AGENT>_PATH names the binary to use: the daemon installs nothing else
    # (why the test daemons never inherit one). The stream's error frame says 409.
    fake_amp = tmp_path / "amp"
    fake_amp.write_text("#!/bin/sh\necho 0.0.1\n")
    fake_amp.chmod(0o755)
    env = {**daemon_env(), "SANDBOX_DAEMON_AMP_PATH": str(fake_amp)}
    with LocalDaemon(daemon_bin, env=env) as overridden, overridden.client() as client:
        with pytest.raises(ProblemError) as caught:
            client.install_agent("amp", version="1.0.0")
        assert caught.value.status == 409 and "SANDBOX_DAEMON_AMP_PATH" in caught.value.detail
        with pytest.raises(ProblemError) as streamed:
            list(client.install_agent_progress("amp", version="1.0.0"))
        assert (streamed.value.status, streamed.value.type) == (409, caught.value.type)
        done = client.install_agent("amp")  # no version asked for: the override answers
        assert done.already_installed and done.source == BinarySource.override


class Capture(httpx.BaseTransport):
    """The real transport, keeping every request sent."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def sent(request: httpx.Request) -> tuple[str, str, str, str, Any, float | None]:
    return (
        request.method,
        request.url.path,
        request.headers["accept"],
        request.headers["content-type"],
        json.loads(request.content),
        request.extensions["timeout"]["read"],
    )


def test_what_goes_on_the_wire(daemon: LocalDaemon) -> None:
    capture = Capture()
    with Client(daemon.base_url, token=daemon.token, transport=capture) as client:
        client.install_agent("mock")
        client.install_agent("mock", version="pinned", reinstall=False)
        client.install_agent("mock", version="latest", read_timeout=None)
        list(client.install_agent_progress(AgentId.mock, version="2.1.3", reinstall=True))
        list(client.install_agent_progress("mock", read_timeout=5))
    path, json_, sse = "/agents/mock/install", "application/json", "text/event-stream"
    assert [sent(r) for r in capture.requests] == [
        ("POST", path, json_, json_, {}, 600.0),
        ("POST", path, json_, json_, {"version": "pinned", "reinstall": False}, 600.0),
        ("POST", path, json_, json_, {"version": "latest"}, None),
        ("POST", path, sse, json_, {"version": "2.1.3", "reinstall": True}, 600.0),
        ("POST", path, sse, json_, {}, 5),
    ]


def test_a_dropped_install_stream_is_not_resumed(daemon: LocalDaemon) -> None:
    host, port = daemon.base_url.removeprefix("http://").split(":")
    with Proxy((host, int(port))) as proxy:
        with Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as client:
            assert [type(f) for f in client.install_agent_progress("mock")] == [InstallResponse]
        whole = bytes(proxy.answers[0])
        # The next connection breaks in the middle of the installed frame.
        proxy.cuts = [0] * proxy.connections + [whole.index(b"event: installed") + 10]
        with Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as client:
            with pytest.raises(StreamError, match="may still be running on the daemon") as caught:
                list(client.install_agent_progress("mock"))
            assert isinstance(caught.value.__cause__, httpx.TransportError)
            assert proxy.connections == 2  # never tried again
        # One that breaks before the answer even starts: one try, unlike the JSON call.
        proxy.cuts = [0] * proxy.connections + [5, 5]
        with Client(proxy.url, token=daemon.token, retry=FAST_RETRY) as client:
            with pytest.raises(TransportError, match="after 1 try"):
                list(client.install_agent_progress("mock"))
            assert proxy.connections == 3
            check_mock(client.install_agent("mock"))  # retried after the cut
            assert proxy.connections == 5


@pytest.mark.anyio
async def test_a_dropped_install_stream_is_not_resumed_async(daemon: LocalDaemon) -> None:
    host, port = daemon.base_url.removeprefix("http://").split(":")
    with Proxy((host, int(port))) as proxy:
        async with AsyncClient(proxy.url, token=daemon.token, retry=FAST_RETRY) as client:
            assert [type(f) async for f in client.install_agent_progress("mock")] == [
                InstallResponse
            ]
        whole = bytes(proxy.answers[0])
        proxy.cuts = [0] * proxy.connections + [whole.index(b"data: ") + 3]
        async with AsyncClient(proxy.url, token=daemon.token, retry=FAST_RETRY) as client:
            install = client.install_agent_progress("mock")
            with pytest.raises(StreamError, match="after 0 frames: the install may still be"):
                await adrain(install, [])
            assert proxy.connections == 2


# --- the stream's rules, against fake daemons ----------------------------------------------

POLICY = RetryPolicy(max_attempts=3, backoff=0, jitter=0)


def sse(*frames: tuple[str, Any]) -> bytes:
    return b"".join(
        f"event: {event}\ndata: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
        for event, data in frames
    )


INSTALLED = {
    "agent": "codex",
    "alreadyInstalled": False,
    "version": "0.1.2",
    "path": "/data/agents/codex/0.1.2/codex",
    "source": "release",
    "size": 1234,
    "durationMs": 56,
}
FAILED = {
    "type": AGENT_ERROR,
    "title": "Agent error",
    "status": 502,
    "detail": "the agent failed: installFailed: checksum mismatch",
    "agentError": {"type": "installFailed", "message": "checksum mismatch"},
}
DOWNLOADING = {"phase": "downloading", "version": "0.1.2", "url": "u", "bytes": 10, "total": 20}


class Broken(httpx.SyncByteStream):
    """A body that breaks off after its bytes; reading past them is an error."""

    def __init__(self, content: bytes) -> None:
        self.content = content

    def __iter__(self) -> Iterator[bytes]:
        yield self.content
        raise httpx.RemoteProtocolError("peer closed connection")


class AsyncBroken(httpx.AsyncByteStream):
    def __init__(self, content: bytes) -> None:
        self.content = content

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.content
        raise httpx.ReadError("reset")


def fake(
    answers: list[httpx.Response | Exception], seen: list[httpx.Request]
) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handler)


def streamed(body: bytes, *, broken: bool = False) -> httpx.Response:
    headers = {"content-type": "text/event-stream"}
    if broken:
        return httpx.Response(200, headers=headers, stream=Broken(body))
    return httpx.Response(200, headers=headers, content=body)


def install(
    answers: list[httpx.Response | Exception], seen: list[httpx.Request] | None = None
) -> list[InstallFrame]:
    with Client(
        "http://d.test", transport=fake(answers, [] if seen is None else seen), retry=POLICY
    ) as client:
        return list(client.install_agent_progress("codex"))


def test_every_phase_then_the_summary_and_nothing_after_it() -> None:
    body = sse(
        ("progress", {"phase": "waiting"}),
        ("progress", {"phase": "resolving", "requested": "latest"}),
        ("progress", DOWNLOADING),
        ("note", {"whatever": 1}),  # an event this SDK does not know: skipped
        ("progress", {"phase": "verifying", "version": "0.1.2"}),
        ("installed", INSTALLED),
    )
    frames = install([streamed(body, broken=True)])  # nothing is read after `installed`
    assert [type(f) for f in frames] == [
        WaitingInstallProgress,
        ResolvingInstallProgress,
        DownloadingInstallProgress,
        VerifyingInstallProgress,
        InstallResponse,
    ]
    downloading = frames[2]
    assert isinstance(downloading, DownloadingInstallProgress)
    assert (downloading.bytes, downloading.total) == (10, 20)
    done = frames[-1]
    assert isinstance(done, InstallResponse)
    assert (done.version, done.source, done.size, done.duration_ms) == (
        "0.1.2",
        BinarySource.release,
        1234,
        56,
    )


def test_progress_this_sdk_cannot_read_is_kept() -> None:
    body = sse(
        ("progress", {"phase": "linking", "into": "/usr/local/bin"}),
        ("progress", {**DOWNLOADING, "bytes": "many"}),
        ("installed", INSTALLED),
    )
    newer, odd, done = install([streamed(body)])
    assert isinstance(newer, UnrecognizedInstallProgress)
    assert (newer.phase, newer.parse_error, newer.model_extra) == (
        "linking",
        None,
        {"into": "/usr/local/bin"},
    )
    assert isinstance(odd, UnrecognizedInstallProgress)
    assert odd.phase == "downloading" and odd.parse_error and "bytes" in odd.parse_error
    assert isinstance(done, InstallResponse)


def test_the_error_frame_raises_its_problem() -> None:
    body = sse(("progress", {"phase": "resolving", "requested": "1.2.3"}), ("error", FAILED))
    frames: list[InstallFrame] = []
    client = Client("http://d.test", transport=fake([streamed(body)], []))
    with client, pytest.raises(ProblemError) as caught:
        drain(client.install_agent_progress("codex", version="1.2.3"), frames)
    assert [type(f) for f in frames] == [ResolvingInstallProgress]
    problem = caught.value
    assert (problem.status, problem.type, problem.detail) == (502, AGENT_ERROR, FAILED["detail"])
    assert isinstance(problem.agent_error, InstallFailedAgentError)
    assert problem.url == "http://d.test/agents/codex/install"
    assert problem.retry_after is None


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (sse(("progress", {"phase": "resolving", "requested": "1"})), "ended without"),
        (sse(("progress", "[1]")), "not install progress"),
        (sse(("progress", "{")), "not install progress"),
        (sse(("installed", {"agent": "codex"})), "not an InstallResponse"),
        (sse(("error", "oops")), "not a problem"),
        (b"", "ended without an installed or error frame after 0 frames"),
    ],
)
def test_broken_promises_are_stream_errors(body: bytes, match: str) -> None:
    with pytest.raises(StreamError, match=match):
        install([streamed(body)])


def test_a_cut_mid_stream_says_the_install_may_go_on() -> None:
    body = sse(("progress", DOWNLOADING))
    frames: list[InstallFrame] = []
    seen: list[httpx.Request] = []
    client = Client("http://d.test", transport=fake([streamed(body, broken=True)], seen))
    with client, pytest.raises(StreamError) as caught:
        drain(client.install_agent_progress("codex"), frames)
    assert len(frames) == 1 and len(seen) == 1
    message = str(caught.value)
    assert "broke off (RemoteProtocolError: peer closed connection) after 1 frame:" in message
    assert "may still be running on the daemon; install_agent() again waits for it" in message


def test_never_retried_unlike_the_json_summary() -> None:
    problem = {"type": "t", "title": "Unavailable", "status": 503, "detail": "store"}
    seen: list[httpx.Request] = []
    with pytest.raises(ProblemError) as caught:
        install([httpx.Response(503, json=problem), streamed(sse(("installed", INSTALLED)))], seen)
    assert caught.value.status == 503 and len(seen) == 1
    seen.clear()
    with pytest.raises(TransportError, match="after 1 try"):
        install([httpx.ConnectError("refused"), streamed(sse(("installed", INSTALLED)))], seen)
    assert len(seen) == 1
    # The JSON summary is idempotent: tried again after a 503 or a connection error.
    seen.clear()
    answers: list[httpx.Response | Exception] = [
        httpx.Response(503, json=problem),
        httpx.ConnectError("refused"),
        httpx.Response(200, json=INSTALLED),
    ]
    with Client("http://d.test", transport=fake(answers, seen), retry=POLICY) as client:
        assert client.install_agent("codex").version == "0.1.2"
    assert len(seen) == 3


def test_a_daemon_that_answers_json_to_the_stream_request() -> None:
    (done,) = install([httpx.Response(200, json=INSTALLED)])
    assert isinstance(done, InstallResponse) and done.agent == AgentId.codex


def test_closing_early_closes_the_connection() -> None:
    closed: list[bool] = []

    class Tracked(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield sse(("progress", {"phase": "waiting"}))
            yield sse(("installed", INSTALLED))

        def close(self) -> None:
            closed.append(True)

    answer = httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Tracked())
    with Client("http://d.test", transport=fake([answer], [])) as client:
        with client.install_agent_progress("codex") as progress:
            assert isinstance(next(progress), WaitingInstallProgress)
        assert closed == [True] and progress.result is None
        assert list(progress) == []
        unused = client.install_agent_progress("codex")
        unused.close()  # never started: nothing was sent


@pytest.mark.anyio
async def test_async_rules() -> None:
    seen: list[httpx.Request] = []
    body = sse(
        ("progress", {"phase": "resolving", "requested": "pinned"}), ("installed", INSTALLED)
    )
    problem = {"type": "t", "title": "Unavailable", "status": 503, "detail": "store"}
    answers: list[httpx.Response] = [
        httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=AsyncBroken(body)
        ),
        httpx.Response(200, stream=AsyncBroken(sse(("progress", DOWNLOADING)))),
        httpx.Response(503, json=problem),
        httpx.Response(200, content=sse(("progress", {"phase": "waiting"}), ("error", FAILED))),
    ]

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers.pop(0)

    transport = httpx.MockTransport(handler)
    async with AsyncClient("http://d.test", transport=transport, retry=POLICY) as client:
        progress = client.install_agent_progress("codex")
        frames = [f async for f in progress]
        assert [type(f) for f in frames] == [ResolvingInstallProgress, InstallResponse]
        assert progress.result == frames[-1]
        with pytest.raises(StreamError, match=r"ReadError: reset\) after 1 frame: the install"):
            await adrain(client.install_agent_progress("codex"), [])
        with pytest.raises(ProblemError) as refused:
            await adrain(client.install_agent_progress("codex"), [])
        assert refused.value.status == 503
        frames = []
        with pytest.raises(ProblemError) as failed:
            await adrain(client.install_agent_progress("codex"), frames)
        assert failed.value.status == 502 and [type(f) for f in frames] == [WaitingInstallProgress]
    assert len(seen) == 4
    assert {r.headers["accept"] for r in seen} == {"text/event-stream"}
