"""Fixtures: one real daemon (``$SANDBOX_DAEMON_BIN``) for the whole run, and clients of it."""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox_daemon import AsyncClient, Client, LocalDaemon, RetryPolicy

SDK_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = SDK_DIR.parent.parent

# Fast retries: the tests wait for events, never for the clock.
FAST_RETRY = RetryPolicy(max_attempts=5, backoff=0.01, max_backoff=0.05)

# Test daemons never download anything: every download host and the npm registry are a port
# where nothing listens (installs fail at once), and no session installs its agent lazily.
OFFLINE_INSTALLS = {
    "SANDBOX_DAEMON_INSTALL_MIRROR": "http://127.0.0.1:1",
    "SANDBOX_DAEMON_NPM_REGISTRY": "http://127.0.0.1:1/",
    "SANDBOX_DAEMON_NO_AUTO_INSTALL": "true",
}
# What must not leak in from the environment: SANDBOX_DAEMON_<AGENT>_PATH (a binary to use
# instead of installing) and the download hosts' own URLs (SANDBOX_DAEMON_GITHUB_URL, ...),
# which would win over the mirror.
LEAKY = re.compile(r"SANDBOX_DAEMON_\w+_(PATH|URL)")


def daemon_env() -> dict[str, str]:
    """The environment of a test daemon: this process's, made offline."""
    env = {k: v for k, v in os.environ.items() if not LEAKY.fullmatch(k)}
    env.update(OFFLINE_INSTALLS)
    return env


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run without a daemon binary: these tests prove the SDK against it."""
    binary = os.environ.get("SANDBOX_DAEMON_BIN")
    if not binary:
        raise pytest.UsageError("set SANDBOX_DAEMON_BIN to the sandbox-daemon binary to test")
    if not os.access(binary, os.X_OK):
        raise pytest.UsageError(f"SANDBOX_DAEMON_BIN={binary} is not an executable file")


@pytest.fixture(scope="session", autouse=True)
def offline_daemons() -> Iterator[None]:
    """Every daemon a test starts inherits an offline environment (see ``daemon_env``):
    those of the fixtures, of local-mode tests, of README examples, of child interpreters.
    """
    with pytest.MonkeyPatch.context() as patch:
        for name in [k for k in os.environ if LEAKY.fullmatch(k)]:
            patch.delenv(name)
        for name, value in OFFLINE_INSTALLS.items():
            patch.setenv(name, value)
        yield


@pytest.fixture(scope="session")
def daemon_bin() -> str:
    return os.environ["SANDBOX_DAEMON_BIN"]


@pytest.fixture(scope="session")
def daemon(daemon_bin: str, offline_daemons: None) -> Iterator[LocalDaemon]:
    with LocalDaemon(daemon_bin, args=["--idle-timeout", "0"], env=daemon_env()) as running:
        yield running


@pytest.fixture
def client(daemon: LocalDaemon) -> Iterator[Client]:
    with daemon.client(retry=FAST_RETRY) as sync_client:
        yield sync_client


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def aclient(daemon: LocalDaemon) -> AsyncIterator[AsyncClient]:
    async with daemon.async_client(retry=FAST_RETRY) as async_client:
        yield async_client


@pytest.fixture
def session_id() -> str:
    """A fresh session id for one test."""
    return f"t-{uuid.uuid4().hex[:16]}"


@pytest.fixture(scope="session")
def openapi() -> dict[str, Any]:
    """The daemon's OpenAPI document as committed (``spec/openapi.json``)."""
    document: dict[str, Any] = json.loads((REPO_ROOT / "spec" / "openapi.json").read_text())
    return document
