"""The files API of a session's workspace: what a write or an upload takes, and a snapshot
as ``archiveFiles`` answers it.

A file's content travels as raw bytes (``application/octet-stream``), an upload as a tar or
tar.gz archive (``application/x-tar`` / ``application/gzip``), never as JSON. Paths are
relative to the session's working directory, ``/``-separated.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeAlias
from urllib.parse import unquote

import httpx

from .errors import ResponseError

__all__ = ["ArchiveSource", "FileArchive", "FileContent", "ReadRange"]

TAR = "application/x-tar"
GZIP = "application/gzip"
OCTET_STREAM = "application/octet-stream"

_GZIP_MAGIC = b"\x1f\x8b"

FileContent: TypeAlias = bytes | bytearray | memoryview | str | IO[bytes]
"""What a write takes: the bytes, text (sent as UTF-8), or a binary file object (read to
its end first, so that a retried write sends the same bytes)."""

ArchiveSource: TypeAlias = bytes | bytearray | memoryview | IO[bytes] | os.PathLike[str]
"""What an upload takes: a tar or tar.gz archive as bytes, a binary file object holding it
(read to its end first), or a path-like to a local archive file (``pathlib.Path``)."""

ReadRange: TypeAlias = str | tuple[int, int | None]
"""The part of a file to read: a ``Range`` header value (``"bytes=0-99"``, ``"bytes=100-"``,
``"bytes=-10"`` for the last 10), or ``(first, last)`` byte offsets, both included
(``(0, 99)``; ``(100, None)``: from 100 to the end)."""


def content_bytes(content: FileContent) -> bytes:
    """The bytes to send for a file's ``content`` (a file object is read here)."""
    if isinstance(content, str):
        return content.encode("utf-8")
    data = _bytes_of(content)
    if data is None:
        raise TypeError(
            "write_file takes bytes, text (str, sent as UTF-8) or a binary file object, "
            f"not {type(content).__name__}"
        )
    return data


def archive_bytes(archive: ArchiveSource) -> bytes:
    """The bytes to send for an upload (a file object or a path-like is read here)."""
    if isinstance(archive, os.PathLike):
        return Path(archive).read_bytes()
    data = _bytes_of(archive)
    if data is None:
        raise TypeError(
            "upload_files takes a tar or tar.gz archive as bytes, a binary file object or a "
            f"path-like (pathlib.Path) to an archive file, not {type(archive).__name__}"
        )
    return data


def _bytes_of(source: object) -> bytes | None:
    """``source``'s bytes when it is bytes-like or a binary file object (read to its end),
    else ``None``.
    """
    if isinstance(source, bytes):
        return source
    if isinstance(source, bytearray | memoryview):
        return bytes(source)
    read = getattr(source, "read", None)
    if isinstance(source, str) or not callable(read):
        return None
    data = read()
    if not isinstance(data, bytes | bytearray):
        raise TypeError(f"the file object gave {type(data).__name__}, not bytes: open it in 'rb'")
    return bytes(data)


def archive_content_type(archive: bytes) -> str:
    """``application/gzip`` for a gzip-compressed archive (by its first bytes), else
    ``application/x-tar``.
    """
    return GZIP if archive.startswith(_GZIP_MAGIC) else TAR


def range_header(part: ReadRange) -> str:
    """The ``Range`` header value for ``part``."""
    if isinstance(part, str):
        return part
    first, last = part
    if first < 0 or (last is not None and last < first):
        raise ValueError(f"a byte range is (first, last) with 0 <= first <= last, not {part!r}")
    return f"bytes={first}-" if last is None else f"bytes={first}-{last}"


@dataclass(frozen=True)
class FileArchive:
    """A workspace snapshot as ``archiveFiles`` answered it: the tar.gz and what the
    daemon says it holds (its ``X-Archive-*`` headers).
    """

    content: bytes = field(repr=False)
    """The tar.gz archive, as received (entries named relative to the directory taken)."""
    files: int
    """Regular files in it (``X-Archive-Files``)."""
    bytes: int
    """Their bytes, uncompressed (``X-Archive-Bytes``)."""
    skipped: int
    """How many paths were left out (``X-Archive-Skipped``): over ``max_file_bytes``,
    unreadable, or not a file, directory or symlink."""
    skipped_paths: list[str]
    """The first of them (up to 50), decoded (``X-Archive-Skipped-Paths``)."""

    def open(self) -> tarfile.TarFile:
        """The archive opened for reading with :mod:`tarfile` (close it, or use ``with``).

        Extract it with a filter (``extractall(dest, filter="data")``): it comes from the
        workspace, where an agent may have written anything.
        """
        return tarfile.open(fileobj=io.BytesIO(self.content), mode="r:gz")

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the tar.gz, unchanged, to ``path``; returns the path."""
        target = Path(path)
        target.write_bytes(self.content)
        return target

    @classmethod
    def from_response(cls, response: httpx.Response) -> FileArchive:
        """The snapshot of a successful ``archiveFiles`` answer (its body read)."""
        headers = response.headers

        def count(name: str) -> int:
            value = headers.get(name)
            try:
                number = int(value) if value is not None else -1
            except ValueError:
                number = -1
            if number < 0:
                raise ResponseError(
                    f"{response.request.url} answered {response.status_code} without a count "
                    f"in {name} (got {value!r})",
                    status=response.status_code,
                    body=response.content,
                )
            return number

        return cls(
            content=response.content,
            files=count("x-archive-files"),
            bytes=count("x-archive-bytes"),
            skipped=count("x-archive-skipped"),
            skipped_paths=skipped_paths(headers),
        )


def skipped_paths(headers: Mapping[str, str]) -> list[str]:
    """``X-Archive-Skipped-Paths`` decoded: comma-separated, each percent-encoded."""
    value = headers.get("x-archive-skipped-paths", "")
    return [unquote(part, errors="replace") for part in value.split(",") if part]
