"""The SSE decoder against the text/event-stream rules, fed in every possible split."""

from __future__ import annotations

import pytest

from sandbox_daemon import ServerSentEvent, SSEDecoder


def decode_all(data: bytes, sizes: int | None = None) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    if sizes is None:
        events += decoder.feed(data)
    else:
        for start in range(0, len(data), sizes):
            events += decoder.feed(data[start : start + sizes])
    events += decoder.close()
    return events


DAEMON_FRAMES = (
    b'id: 1\nevent: sessionStarted\ndata: {"sequence":1}\n\n'
    b":\n\n"
    b'id: 2\nevent: turnStarted\ndata: {"sequence":2}\n\n'
)


@pytest.mark.parametrize("size", [None, 1, 2, 3, 7, 64])
def test_daemon_frames_in_any_split(size: int | None) -> None:
    events = decode_all(DAEMON_FRAMES, size)
    assert events == [
        ServerSentEvent(event="sessionStarted", data='{"sequence":1}', id="1", retry=None),
        ServerSentEvent(event="turnStarted", data='{"sequence":2}', id="2", retry=None),
    ]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [None, 1])
def test_every_line_ending(newline: bytes, size: int | None) -> None:
    stream = newline.join([b"event: a", b"data: x", b"", b"data: y", b"", b""])
    events = decode_all(stream, size)
    assert [(e.event, e.data) for e in events] == [("a", "x"), ("message", "y")]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\r") == []
    # The LF completing the CRLF must not count as a blank line (which would dispatch).
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"data: y\r\n\r\n") == [
        ServerSentEvent(event="message", data="x\ny", id=None, retry=None)
    ]


def test_blank_line_after_a_lone_cr_at_the_end_of_the_stream() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: z\r\r") == []  # the last CR may start a CRLF: held back
    assert decoder.close() == [ServerSentEvent(event="message", data="z", id=None, retry=None)]


def test_multiline_data_and_the_single_space_rule() -> None:
    events = decode_all(b"data:one\ndata:  two\ndata\n\n")
    assert events[0].data == "one\n two\n"


def test_comments_are_counted_not_dispatched() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b":\n\n: the session store is full: disk\n\n") == []
    assert decoder.comments == 2
    assert decoder.last_comment == "the session store is full: disk"


def test_id_persists_and_null_ids_are_ignored() -> None:
    events = decode_all(b"id: 7\ndata: a\n\ndata: b\n\nid: 8\x009\ndata: c\n\nid\ndata: d\n\n")
    assert [e.id for e in events] == ["7", "7", "7", ""]


def test_retry_only_when_digits() -> None:
    events = decode_all(b"retry: 1500\ndata: a\n\nretry: soon\ndata: b\n\n")
    assert [e.retry for e in events] == [1500, 1500]


def test_event_without_data_is_not_dispatched_and_resets_the_type() -> None:
    events = decode_all(b"event: lonely\n\ndata: x\n\n")
    assert events == [ServerSentEvent(event="message", data="x", id=None, retry=None)]


def test_unfinished_event_at_the_end_is_discarded() -> None:
    assert decode_all(b"id: 1\nevent: a\ndata: complete\n\nid: 2\ndata: half") == [
        ServerSentEvent(event="a", data="complete", id="1", retry=None)
    ]


def test_byte_order_mark_is_skipped_even_when_split() -> None:
    assert decode_all(b"\xef\xbb\xbfdata: x\n\n", 1)[0].data == "x"


def test_utf8_split_inside_a_character() -> None:
    text = "data: caf\u00e9 \u2603\n\n".encode()
    assert decode_all(text, 1)[0].data == "caf\u00e9 \u2603"


def test_unknown_fields_are_ignored() -> None:
    assert decode_all(b"foo: bar\ndata: x\n\n")[0].data == "x"


def test_every_two_way_split_of_crlf_frames() -> None:
    stream = DAEMON_FRAMES.replace(b"\n", b"\r\n")
    whole = decode_all(stream)
    assert len(whole) == 2
    for cut in range(len(stream) + 1):
        decoder = SSEDecoder()
        events = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) + decoder.close()
        assert events == whole, cut
