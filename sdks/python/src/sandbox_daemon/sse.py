"""An incremental Server-Sent Events decoder (the WHATWG ``text/event-stream`` rules).

Bytes go in as they arrive, in chunks of any size (a frame, a line or a CRLF may be split
anywhere); complete events come out. It knows nothing of HTTP or of the daemon's events.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEDecoder", "ServerSentEvent"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event: its type, its data (lines joined by newlines), the last event
    id seen so far on the stream, and the reconnection time it asked for (if any).
    """

    event: str
    data: str
    id: str | None
    retry: int | None


class SSEDecoder:
    """Turns a byte stream into :class:`ServerSentEvent` s.

    Lines end with CRLF, LF or CR; ``:`` starts a comment (counted in :attr:`comments`,
    the daemon's keep-alives); a blank line dispatches the event being built. At the end of
    the stream an event not closed by a blank line is discarded, as the standard says.
    """

    def __init__(self) -> None:
        self._buffer = b""
        self._started = False
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._retry: int | None = None
        self.comments = 0
        """How many comment lines were seen (keep-alives and notices)."""
        self.last_comment: str | None = None
        """The text of the last comment line (after the colon), if any."""

    @property
    def last_event_id(self) -> str | None:
        """The last event id the stream set (what ``Last-Event-ID`` resumes from)."""
        return self._last_id

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Add bytes; return the events they completed, in order."""
        buffer = self._buffer + chunk
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(buffer):
                self._buffer = buffer
                return []
            self._started = True
            if buffer.startswith(_BOM):
                buffer = buffer[len(_BOM) :]
        lines = buffer.splitlines(keepends=True)
        if lines and (
            not lines[-1].endswith((b"\n", b"\r"))  # not finished yet
            or lines[-1].endswith(b"\r")  # may be the first half of a CRLF
        ):
            self._buffer = lines.pop()
        else:
            self._buffer = b""
        events: list[ServerSentEvent] = []
        for line in lines:
            event = self._line(line.rstrip(b"\r\n"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[ServerSentEvent]:
        """The stream ended: finish a line held back for a possible CRLF.

        Returns the events that completes (at most one, when that line was blank); a
        partly built event is discarded.
        """
        events: list[ServerSentEvent] = []
        if self._buffer.endswith(b"\r"):
            event = self._line(self._buffer.rstrip(b"\r"))
            if event is not None:
                events.append(event)
        self._buffer = b""
        self._data = []
        self._event = ""
        return events

    def _line(self, raw: bytes) -> ServerSentEvent | None:
        if not raw:
            return self._dispatch()
        line = raw.decode("utf-8", "replace")
        if line.startswith(":"):
            self.comments += 1
            self.last_comment = line[1:].lstrip(" ")
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self._last_id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(
            event=self._event or "message",
            data="\n".join(self._data),
            id=self._last_id,
            retry=self._retry,
        )
        self._data = []
        self._event = ""
        return event
