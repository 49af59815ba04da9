"""The README's examples run, in order, against the test daemon."""

from __future__ import annotations

import re

import pytest

from sandbox_daemon import LocalDaemon

from .conftest import SDK_DIR

BLOCKS = re.findall(r"```python\n(.*?)```", (SDK_DIR / "README.md").read_text(), re.S)


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("code", BLOCKS, ids=[f"example-{i}" for i in range(1, len(BLOCKS) + 1)])
def test_readme_example(
    code: str,
    daemon: LocalDaemon,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The examples connect the way the README says: through the environment.
    monkeypatch.setenv("SANDBOX_DAEMON_ENDPOINT", daemon.base_url)
    monkeypatch.setenv("SANDBOX_DAEMON_TOKEN", daemon.token)
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out  # every example shows something
