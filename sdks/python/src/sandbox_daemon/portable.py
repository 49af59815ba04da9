"""Portable sessions: a session bundle as exported, and what an import takes.

A bundle's ``eventsSha256`` covers each event's JSON text exactly as the exporting daemon
wrote it, so a bundle must travel as the bytes received: :class:`SessionExport` keeps them
(:attr:`~SessionExport.content`, :attr:`~SessionExport.text`) next to their parsed forms,
and an import sends the bytes it is given unchanged.
"""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias

from pydantic import ValidationError

from ._generated.models import SessionBundle
from .errors import ResponseError

__all__ = ["BundleSource", "SessionExport", "bundle_bytes"]


class SessionExport:
    """A session bundle as ``exportSession`` answered it.

    :attr:`content` (bytes) and :attr:`text` are the document byte for byte as the daemon
    wrote it: store, send and import those. :attr:`data` is the document parsed as plain
    JSON, :attr:`bundle` as the generated :class:`~sandbox_daemon.models.SessionBundle`
    model. Serialising either of them again may not give the same bytes (and then no longer
    match ``eventsSha256``). :meth:`save` writes the bytes to a file.
    """

    def __init__(self, content: bytes) -> None:
        self.content = content
        """The bundle's bytes (UTF-8 JSON), as received."""

    def __repr__(self) -> str:
        session = self.data.get("session")
        sid = session.get("sessionId") if isinstance(session, dict) else None
        return (
            f"SessionExport(session={sid!r}, events={self.data.get('eventCount')!r}, "
            f"bytes={len(self.content)})"
        )

    @cached_property
    def text(self) -> str:
        """The bundle's JSON text, as received."""
        return self.content.decode("utf-8")

    @cached_property
    def data(self) -> dict[str, Any]:
        """The bundle parsed as plain JSON (wire names: ``eventCount``, ``events``, ...)."""
        document = json.loads(self.content)
        if not isinstance(document, dict):
            raise TypeError("a session bundle is a JSON object")
        return document

    @cached_property
    def bundle(self) -> SessionBundle:
        """The bundle as the generated model (``session``, ``event_count``, ``events``, ...).

        Raises :class:`~sandbox_daemon.ResponseError` when it does not fit this SDK's model
        (e.g. an event type a newer daemon added); :attr:`data` still reads it.
        """
        try:
            return SessionBundle.model_validate_json(self.content)
        except ValidationError as error:
            raise ResponseError(
                f"the session bundle does not fit this SDK's SessionBundle model: {error}",
                status=200,
                body=self.content,
            ) from error

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the bundle's bytes, unchanged, to ``path``; returns the path."""
        target = Path(path)
        target.write_bytes(self.content)
        return target


BundleSource: TypeAlias = str | bytes | bytearray | os.PathLike[str] | SessionExport
"""What an import takes: the bundle's JSON text (``str``), its bytes, a path to a file
holding it (a path-like such as ``pathlib.Path``; a ``str`` is always the text), or a
:class:`SessionExport`."""


def bundle_bytes(bundle: BundleSource) -> bytes:
    """The bytes to send for ``bundle`` (a path-like is read here)."""
    if isinstance(bundle, SessionExport):
        return bundle.content
    if isinstance(bundle, str):
        return bundle.encode("utf-8")
    if isinstance(bundle, bytes | bytearray):
        return bytes(bundle)
    if isinstance(bundle, os.PathLike):
        return Path(bundle).read_bytes()
    raise TypeError(
        "import_session takes the bundle as exported: its JSON text, its bytes, a path to it, "
        f"or a SessionExport (not {type(bundle).__name__}: a bundle serialised again may no "
        "longer match its checksum)"
    )
