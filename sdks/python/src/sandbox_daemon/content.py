"""Messages as text or as parts (text and images), and helpers that build the parts.

A message is a ``str`` (sent as ``message``) or a sequence of parts (sent as ``content``):
the generated models :class:`~sandbox_daemon.models.TextMessagePart` and
:class:`~sandbox_daemon.models.ImageMessagePart`, or plain dicts with the wire names
(``{"type": "image", "mediaType": "image/png", "data": "..."}``). :func:`text_part` and
:func:`image_part` build the models.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from ._generated.models import ImageMessagePart, MediaType, MessagePart, TextMessagePart

__all__ = ["MessageInput", "MessagePart", "image_part", "text_part"]

MessageInput: TypeAlias = str | Sequence[MessagePart | Mapping[str, Any]]
"""A user message: text, or parts (generated models or dicts with the wire names)."""

# The signatures of the image types the daemon takes (``MediaType``), for image_part.
_SIGNATURES: tuple[tuple[bytes, int, MediaType], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, MediaType.image_png),
    (b"\xff\xd8\xff", 0, MediaType.image_jpeg),
    (b"GIF87a", 0, MediaType.image_gif),
    (b"GIF89a", 0, MediaType.image_gif),
    (b"WEBP", 8, MediaType.image_webp),
)


def text_part(text: str) -> TextMessagePart:
    """A text part of a message."""
    return TextMessagePart(type="text", text=text)


def image_part(
    source: bytes | str | os.PathLike[str], media_type: MediaType | str | None = None
) -> ImageMessagePart:
    """An image part of a message.

    ``bytes`` are sent inline (base64, at most 5 MiB decoded); a ``str`` or path names a
    file in the session's working directory (relative to it, or absolute inside it), which
    the daemon reads: it is not read here. ``media_type`` (``image/png``, ``image/jpeg``,
    ``image/gif`` or ``image/webp``) is, when left out, recognised from the bytes'
    signature or the file name's extension; ``ValueError`` when it cannot be.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        data = bytes(source)
        kind = MediaType(media_type) if media_type is not None else _sniff(data)
        encoded = base64.b64encode(data).decode("ascii")
        return ImageMessagePart(type="image", media_type=kind, data=encoded)
    path = os.fspath(source)
    if media_type is None:
        guessed, _ = mimetypes.guess_type(path, strict=False)
        if guessed not in {m.value for m in MediaType}:
            raise ValueError(f"cannot tell the image type of {path!r}: pass media_type")
        media_type = guessed
    return ImageMessagePart(type="image", media_type=MediaType(media_type), path=path)


def _sniff(data: bytes) -> MediaType:
    for signature, offset, kind in _SIGNATURES:
        if data[offset : offset + len(signature)] == signature:
            if kind is MediaType.image_webp and not data.startswith(b"RIFF"):
                continue
            return kind
    raise ValueError("not a PNG, JPEG, GIF or WebP image: pass media_type")


def message_fields(
    message: MessageInput | None, content: MessageInput | None
) -> tuple[str | None, list[Any] | None]:
    """``sendMessage``'s ``message`` and ``content`` for a message given as either.

    Text is sent as ``message``; parts as ``content`` (models as their wire JSON, dicts as
    they are). Which to give is the daemon's to check (one of them, not both), except
    parts given twice, which cannot be sent.
    """
    if message is not None and not isinstance(message, str):
        if content is not None:
            raise TypeError("message parts are given as `message` or `content`, not both")
        message, content = None, message
    if isinstance(content, str):
        content = [text_part(content)]
    return message, None if content is None else [part_json(part) for part in content]


def part_json(part: MessagePart | Mapping[str, Any]) -> Any:
    """One part as JSON: a model with its wire names (``None`` left out), a dict as is."""
    if isinstance(part, TextMessagePart | ImageMessagePart):
        return part.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(part, Mapping):
        return dict(part)
    raise TypeError(
        f"a message part is a TextMessagePart, an ImageMessagePart or a dict, not {part!r}"
    )
