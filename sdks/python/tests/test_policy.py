"""Session policy and messages as parts, against the real daemon's mock agent (which honours
no policy field and takes no images), and the request bodies they make.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    ProblemError,
    SessionOptions,
    image_part,
    text_part,
)
from sandbox_daemon.models import (
    HttpMcpServer,
    ImageMessagePart,
    ItemCompletedEvent,
    ItemRole,
    MediaType,
    StdioMcpServer,
    SystemPromptMode,
    TextContentPart,
    ToolPolicy,
)

POLICY_UNSUPPORTED = "urn:sandbox-daemon:problem:policy-unsupported"
INVALID_BODY = "urn:sandbox-daemon:problem:invalid-body"

# The 8-byte PNG signature and a little more: enough for the daemon to take it as PNG data.
PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)


def user_parts(client: Client, session_id: str) -> list[Any]:
    """The content of the session's user message items, in order."""
    return [
        event.data.item.content
        for event in client.iter_events(session_id)
        if isinstance(event, ItemCompletedEvent) and event.data.item.role == ItemRole.user
    ]


# --- against the daemon ----------------------------------------------------------------


def test_text_parts_start_a_turn_and_the_user_item_carries_them(client: Client) -> None:
    with client.start_session("mock") as session:
        turn = session.turn([text_part("hello"), {"type": "text", "text": "there"}])
        assert turn.wait().data.stop_reason.value == "completed"
        [parts] = user_parts(client, session.id)
        assert [(type(p), p.text) for p in parts] == [
            (TextContentPart, "hello"),
            (TextContentPart, "there"),
        ]
        # Text is still sent as `message`: one text part.
        session.turn("again").wait()
        assert [[p.text for p in parts] for parts in user_parts(client, session.id)][1] == ["again"]


def test_an_image_is_refused_naming_its_part(client: Client) -> None:
    mock = next(a for a in client.list_agents().agents if a.id.value == "mock")
    assert mock.capabilities.images is False
    assert mock.policy is not None and mock.policy.image_types == []
    with client.start_session("mock") as session:
        for image in (image_part(PNG), image_part("screenshot.png")):
            with pytest.raises(ProblemError) as refused:
                session.send([text_part("what is this?"), image])
            assert refused.value.status == 422
            assert refused.value.type == POLICY_UNSUPPORTED
            assert "`content[1]`" in refused.value.detail
        # The same through the client, as `content`.
        with pytest.raises(ProblemError) as refused:
            client.send_message(session.id, content=[text_part("and this?"), image_part(PNG)])
        assert refused.value.type == POLICY_UNSUPPORTED
        assert "`content[1]`" in refused.value.detail
        assert session.info().current_turn_id is None  # no turn started


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"system_prompt": "Answer in French."}, "systemPrompt"),
        ({"tools": ToolPolicy(deny=["shell"])}, "tools"),
        ({"tools": {"allow": ["read", "grep"]}}, "tools"),
        ({"max_turns": 3}, "maxTurns"),
        ({"env": {"PROJECT": "demo"}}, "env"),
        (
            {"mcp_servers": {"kit": StdioMcpServer(type="stdio", command="/bin/true")}},
            "mcpServers",
        ),
        (
            {"mcp_servers": {"web": {"type": "http", "url": "https://mcp.example.com/mcp"}}},
            "mcpServers",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "-".join(value),
)
def test_a_policy_field_on_a_mock_session_is_refused_naming_it(
    client: Client, session_id: str, options: SessionOptions, field: str
) -> None:
    mock = next(a for a in client.list_agents().agents if a.id.value == "mock")
    assert mock.policy is not None
    assert mock.policy.system_prompt_modes == [] and mock.policy.mcp_transports == []
    with pytest.raises(ProblemError) as refused:
        client.create_session(session_id, agent="mock", **options)
    assert refused.value.status == 422
    assert refused.value.type == POLICY_UNSUPPORTED, refused.value.detail
    assert refused.value.detail.startswith(f"`{field}`"), refused.value.detail
    with pytest.raises(ProblemError) as missing:
        client.get_session(session_id)
    assert missing.value.status == 404  # nothing was created


def test_bad_input_is_invalid_body_naming_the_field(client: Client, session_id: str) -> None:
    with pytest.raises(ProblemError) as refused:
        client.start_session("mock", session_id=session_id, tools={"allow": ["Bash"]})
    assert refused.value.status == 422
    assert refused.value.type == INVALID_BODY
    assert "`tools.allow[0]`" in refused.value.detail
    with client.start_session("mock") as session:
        bad_type = {"type": "image", "mediaType": "image/bmp", "data": "AA=="}
        with pytest.raises(ProblemError) as refused:
            session.send([text_part("look"), bad_type])
        assert refused.value.type == INVALID_BODY
        assert "`content[1].mediaType`" in refused.value.detail


@pytest.mark.anyio
async def test_async_parts_policy_and_refusals(aclient: AsyncClient, session_id: str) -> None:
    with pytest.raises(ProblemError) as refused:
        await aclient.start_session("mock", session_id=session_id, max_turns=2)
    assert refused.value.type == POLICY_UNSUPPORTED
    assert refused.value.detail.startswith("`maxTurns`")
    async with await aclient.start_session("mock") as session:
        turn = await session.turn([text_part("hello"), text_part("async")])
        assert (await turn.wait()).data.stop_reason.value == "completed"
        with pytest.raises(ProblemError) as refused:
            await session.send([text_part("look"), image_part(PNG)])
        assert refused.value.type == POLICY_UNSUPPORTED
        assert "`content[1]`" in refused.value.detail
        with pytest.raises(ProblemError) as refused:
            await aclient.send_message(session.id, content=[text_part("x"), image_part("a.png")])
        assert "`content[1]`" in refused.value.detail


# --- what is sent ----------------------------------------------------------------------


def recorded_bodies() -> tuple[Client, list[Any]]:
    """A client whose requests are answered here, keeping each JSON body sent."""
    bodies: list[Any] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        if request.url.path.endswith("/messages"):
            return httpx.Response(202, json={"turnId": "turn_1"})
        return httpx.Response(201, json={"healthy": True})

    return Client("http://daemon.test", transport=httpx.MockTransport(answer)), bodies


def test_policy_arguments_are_sent_with_their_wire_names() -> None:
    client, bodies = recorded_bodies()
    with client:
        client.create_session(
            "s",
            agent="pi",
            system_prompt="Be brief.",
            system_prompt_mode=SystemPromptMode.replace_,
            tools=ToolPolicy(allow=["read", "mcp:kit/*"]),
            max_turns=5,
            mcp_servers={
                "kit": StdioMcpServer(type="stdio", command="kit-server", args=["--stdio"]),
                "web": HttpMcpServer(
                    type="http",
                    url="https://mcp.example.com/mcp",
                    headers={"Authorization": "Bearer secret"},
                ),
                "raw": {"type": "stdio", "command": "raw-server"},
            },
            env={"PROJECT": "demo"},
        )
        client.create_session("t", agent="mock", tools={"deny": ["webFetch"]})
    assert bodies == [
        {
            "agent": "pi",
            "systemPrompt": "Be brief.",
            "systemPromptMode": "replace",
            "tools": {"allow": ["read", "mcp:kit/*"]},
            "maxTurns": 5,
            "mcpServers": {
                "kit": {"type": "stdio", "command": "kit-server", "args": ["--stdio"]},
                "web": {
                    "type": "http",
                    "url": "https://mcp.example.com/mcp",
                    "headers": {"Authorization": "Bearer secret"},
                },
                "raw": {"type": "stdio", "command": "raw-server"},
            },
            "env": {"PROJECT": "demo"},
        },
        {"agent": "mock", "tools": {"deny": ["webFetch"]}},
    ]


def test_a_message_is_sent_as_text_or_as_content() -> None:
    client, bodies = recorded_bodies()
    png = {"type": "image", "mediaType": "image/png", "data": base64.b64encode(PNG).decode()}
    with client:
        session = client.session("s")
        session.send("hello")
        session.send([text_part("look"), image_part(PNG)])
        client.send_message("s", content=[text_part("look"), image_part("shots/a.png")])
        client.send_message("s", content=[{"type": "text", "text": "as is"}])
        with pytest.raises(TypeError, match="not both"):
            client.send_message("s", [text_part("a")], content=[text_part("b")])
    assert bodies == [
        {"message": "hello"},
        {"content": [{"type": "text", "text": "look"}, png]},
        {
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "mediaType": "image/png", "path": "shots/a.png"},
            ]
        },
        {"content": [{"type": "text", "text": "as is"}]},
    ]


def test_image_part_recognises_the_image_type() -> None:
    assert image_part(PNG).media_type is MediaType.image_png
    assert image_part(b"\xff\xd8\xff\xe0" + bytes(8)).media_type is MediaType.image_jpeg
    assert image_part(b"GIF89a" + bytes(8)).media_type is MediaType.image_gif
    assert image_part(b"RIFF\0\0\0\0WEBPVP8 ").media_type is MediaType.image_webp
    assert image_part(b"whatever", "image/webp").media_type is MediaType.image_webp
    assert image_part(Path("a/b.JPG")).media_type is MediaType.image_jpeg
    assert image_part("b.gif") == ImageMessagePart(
        type="image", media_type=MediaType.image_gif, path="b.gif"
    )
    part = image_part(PNG)
    assert part.path is None and base64.b64decode(part.data or "") == PNG
    with pytest.raises(ValueError, match="media_type"):
        image_part(b"BM not a supported type")
    with pytest.raises(ValueError, match="media_type"):
        image_part("notes.txt")
    with pytest.raises(ValueError, match="image/bmp"):
        image_part(PNG, "image/bmp")
