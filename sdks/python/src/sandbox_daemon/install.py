"""Install progress: ``POST /agents/{agent}/install`` asked for as ``text/event-stream``,
blocking (:class:`InstallStream`) and async (:class:`AsyncInstallStream`).

The daemon streams ``event: progress`` frames (``data``: an ``InstallProgress``, tagged by
``phase``: ``waiting``, ``resolving``, ``downloading``, ``verifying``), then exactly one final
frame: ``installed`` (``data``: an ``InstallResponse``) or ``error`` (``data``: problem
details; the HTTP status is 200 whatever the outcome). A stream yields each progress model,
then the ``InstallResponse``, and ends; an ``error`` frame raises
:class:`~sandbox_daemon.ProblemError`.

An install stream is not resumable (its frames have no ids) and is never retried: a
connection that breaks, or ends before the final frame, raises
:class:`~sandbox_daemon.StreamError`, and the install may still be running on the daemon
(which runs it on its own, whether anyone listens or not): ``install_agent`` again waits
for it. Closing a stream early does not stop the install either.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from types import TracebackType
from typing import Any, TypeAlias, get_args

import httpx
from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter, ValidationError

from . import _operations as ops
from ._core import transport_error
from ._generated.models import InstallProgress, InstallResponse
from .errors import ProblemError, StreamError, TransportError
from .sse import ServerSentEvent, SSEDecoder

__all__ = [
    "INSTALL_PHASES",
    "AsyncInstallStream",
    "InstallFrame",
    "InstallStream",
    "UnrecognizedInstallProgress",
    "parse_install_progress",
]


class UnrecognizedInstallProgress(BaseModel):
    """A progress frame this SDK cannot read as one of its models (a ``phase`` a newer
    daemon added, or a known phase whose body no longer fits); nothing of it is lost.

    ``phase`` is always set; every other member is in :attr:`model_extra` (also readable
    as attributes under their wire names). :attr:`parse_error` says why the frame was not
    read as its model: ``None`` for an unknown ``phase``.
    """

    model_config = ConfigDict(extra="allow", validate_by_name=True)

    phase: str
    """The phase as sent."""

    _parse_error: str | None = PrivateAttr(default=None)

    @property
    def parse_error(self) -> str | None:
        """Why the known model rejected the frame; ``None`` for an unknown ``phase``."""
        return self._parse_error


InstallFrame: TypeAlias = InstallProgress | UnrecognizedInstallProgress | InstallResponse
"""What an install stream yields: progress models (``WaitingInstallProgress``,
``ResolvingInstallProgress``, ``DownloadingInstallProgress``, ``VerifyingInstallProgress``, or
the fallback), then the final ``InstallResponse``."""


def _phases() -> frozenset[str]:
    union = get_args(InstallProgress.__value__)[0]
    return frozenset(
        tag for model in get_args(union) for tag in get_args(model.model_fields["phase"].annotation)
    )


INSTALL_PHASES = _phases()
"""Every progress ``phase`` this SDK knows."""

_PROGRESS: TypeAdapter[Any] = TypeAdapter(InstallProgress)


def parse_install_progress(data: str | bytes) -> InstallProgress | UnrecognizedInstallProgress:
    """Parse the ``data`` of a ``progress`` frame.

    Raises :class:`ValueError` only when it is not progress at all (not a JSON object with a
    string ``phase``).
    """
    try:
        return _PROGRESS.validate_json(data)  # type: ignore[no-any-return]
    except ValidationError as error:
        try:
            document = json.loads(data)
        except ValueError:
            document = None
        if not isinstance(document, dict) or not isinstance(document.get("phase"), str):
            raise ValueError(
                f"not install progress (a JSON object with a `phase`): {error}"
            ) from error
        progress = UnrecognizedInstallProgress.model_validate(document)
        if document["phase"] in INSTALL_PHASES:
            progress._parse_error = str(error)
        return progress


class _InstallReader:
    """What both streams share: reading frames, the outcome, and the errors they raise."""

    def __init__(self, call: ops.Call[None]) -> None:
        self.call = call
        self.agent = call.path_params["agent"]
        self.result: InstallResponse | None = None
        self.frames = 0
        self.finished = False
        self.url = ""

    def opened(self, response: httpx.Response) -> bool:
        """Note the response; ``True`` when it is the JSON summary instead of a stream
        (a daemon that ignores ``Accept: text/event-stream``).
        """
        self.url = str(response.request.url)
        kind: str = response.headers.get("content-type", "").split(";")[0].strip().lower()
        return kind == ops.JSON

    def summary(self, response: httpx.Response) -> InstallResponse:
        """The final frame from a JSON answer (see :meth:`opened`)."""
        self.result = ops.install_agent(self.agent, None, None).parse(response)
        self.finished = True
        return self.result

    def accept(self, frame: ServerSentEvent) -> InstallFrame | None:
        """What a frame carries (``None``: an event this SDK does not know, skipped).

        Raises :class:`ProblemError` for the ``error`` frame.
        """
        if frame.event == "progress":
            try:
                progress = parse_install_progress(frame.data)
            except ValueError as error:
                raise StreamError(
                    f"a progress frame of the {self.agent} install: {error}"
                ) from error
            self.frames += 1
            return progress
        if frame.event == "installed":
            try:
                self.result = InstallResponse.model_validate_json(frame.data)
            except ValidationError as error:
                raise StreamError(
                    f"the installed frame of the {self.agent} install is not an "
                    f"InstallResponse: {error}"
                ) from error
            self.frames += 1
            self.finished = True
            return self.result
        if frame.event == "error":
            self.frames += 1
            self.finished = True
            raise self.problem(frame.data)
        return None

    def problem(self, data: str) -> ProblemError:
        try:
            document = json.loads(data)
        except ValueError:
            document = None
        problem = ProblemError.from_document(
            document,
            status=502,
            title="Install failed",
            method=self.call.operation.method,
            url=self.url,
        )
        if problem is None:
            raise StreamError(
                f"the error frame of the {self.agent} install is not a problem: {data}"
            )
        return problem

    def unreachable(self, error: httpx.TransportError) -> TransportError:
        return transport_error(self.call, 1, error)

    def dropped(self, error: BaseException | None) -> StreamError:
        how = (
            f"broke off ({type(error).__name__}: {error})"
            if error is not None
            else "ended without an installed or error frame"
        )
        return StreamError(
            f"the install stream of {self.agent} {how} after {self.frames} "
            f"frame{'' if self.frames == 1 else 's'}: the install may still be running on the "
            "daemon; install_agent() again waits for it (list_agents() shows what is installed)"
        )


Open = Callable[[ops.Call[None]], httpx.Response]
AsyncOpen = Callable[[ops.Call[None]], Awaitable[httpx.Response]]


class InstallStream:
    """Iterate an install's progress (blocking); see the module doc.

    The request is sent when iteration starts (a refusal, e.g. ``404`` for an unknown
    agent, raises then). Use it in a ``with`` block so an abandoned stream closes its
    connection at once::

        with client.install_agent_progress("claude") as install:
            for frame in install:
                print(frame)
        print(install.result)
    """

    def __init__(self, open: Open, call: ops.Call[None]) -> None:
        self._open = open
        self._reader = _InstallReader(call)
        self._frames = self._run()

    @property
    def result(self) -> InstallResponse | None:
        """The final summary, once the ``installed`` frame arrived."""
        return self._reader.result

    def __iter__(self) -> InstallStream:
        return self

    def __next__(self) -> InstallFrame:
        return next(self._frames)

    def close(self) -> None:
        """Stop reading and close the connection (the install itself goes on)."""
        self._frames.close()

    def __enter__(self) -> InstallStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self) -> Generator[InstallFrame, None, None]:
        reader = self._reader
        try:
            response = self._open(reader.call)
        except httpx.TransportError as error:
            raise reader.unreachable(error) from error
        try:
            decoder = SSEDecoder()
            try:
                if reader.opened(response):
                    response.read()
                    yield reader.summary(response)
                    return
                for chunk in response.iter_bytes():
                    for frame in decoder.feed(chunk):
                        item = reader.accept(frame)
                        if item is not None:
                            yield item
                        if reader.finished:
                            return
                for frame in decoder.close():
                    item = reader.accept(frame)
                    if item is not None:
                        yield item
                    if reader.finished:
                        return
            except httpx.TransportError as error:
                raise reader.dropped(error) from error
            raise reader.dropped(None)
        finally:
            response.close()


class AsyncInstallStream:
    """Iterate an install's progress with ``async for``; see the module doc.

    The request is sent when iteration starts. Use it in an ``async with`` block so an
    abandoned stream closes its connection::

        async with client.install_agent_progress("claude") as install:
            async for frame in install:
                print(frame)
    """

    def __init__(self, open: AsyncOpen, call: ops.Call[None]) -> None:
        self._open = open
        self._reader = _InstallReader(call)
        self._frames = self._run()

    @property
    def result(self) -> InstallResponse | None:
        """The final summary, once the ``installed`` frame arrived."""
        return self._reader.result

    def __aiter__(self) -> AsyncInstallStream:
        return self

    async def __anext__(self) -> InstallFrame:
        return await self._frames.__anext__()

    async def aclose(self) -> None:
        """Stop reading and close the connection (the install itself goes on)."""
        await self._frames.aclose()

    async def __aenter__(self) -> AsyncInstallStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _run(self) -> AsyncGenerator[InstallFrame, None]:
        reader = self._reader
        try:
            response = await self._open(reader.call)
        except httpx.TransportError as error:
            raise reader.unreachable(error) from error
        try:
            decoder = SSEDecoder()
            try:
                if reader.opened(response):
                    await response.aread()
                    yield reader.summary(response)
                    return
                async for chunk in response.aiter_bytes():
                    for frame in decoder.feed(chunk):
                        item = reader.accept(frame)
                        if item is not None:
                            yield item
                        if reader.finished:
                            return
                for frame in decoder.close():
                    item = reader.accept(frame)
                    if item is not None:
                        yield item
                    if reader.finished:
                        return
            except httpx.TransportError as error:
                raise reader.dropped(error) from error
            raise reader.dropped(None)
        finally:
            await response.aclose()
