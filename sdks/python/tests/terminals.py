"""Helpers of the terminal tests: bash on a terminal with a prompt to wait for, and reading
a terminal's output until it holds some text, within a time limit.
"""

from __future__ import annotations

import time

import anyio

from sandbox_daemon import AsyncTerminal, Terminal

# Bash without the user's startup files, on a terminal, with a prompt the tests wait for.
BASH = ("bash", ["--norc", "--noprofile", "-i"])
PROMPT = "READY$ "
BASH_ENV = {"PS1": PROMPT}

# Seconds a test waits for output it expects.
PATIENCE = 20.0


def read_until(terminal: Terminal, needle: str, seen: str = "") -> str:
    """The output read so far (after ``seen``) once it holds ``needle``; fails after
    :data:`PATIENCE` seconds or when the output ends first.
    """
    deadline = time.monotonic() + PATIENCE
    while needle not in seen:
        output = terminal.read(timeout=max(0.0, deadline - time.monotonic()))
        assert output is not None, f"the terminal ended before {needle!r}: {seen!r}"
        seen += output.decode("utf-8", "replace")
    return seen


async def aread_until(terminal: AsyncTerminal, needle: str, seen: str = "") -> str:
    """The async twin of :func:`read_until`."""
    with anyio.fail_after(PATIENCE):
        while needle not in seen:
            output = await terminal.read()
            assert output is not None, f"the terminal ended before {needle!r}: {seen!r}"
            seen += output.decode("utf-8", "replace")
    return seen
