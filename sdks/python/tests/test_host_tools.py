"""Host tools with the mock agent, which calls them through the daemon's MCP endpoint on a
message ``hosttool <name>`` (input ``{"text": <the message>}``) and puts the answer in its
tool-call item's ``toolResult``: answered and rejected by ``on_tool_call`` (one handler,
handlers by name, async, a raising handler, a refused output), answered by hand, the
routes' errors, and a create that refuses bad ``host_tools``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    HostTool,
    ProblemError,
    Session,
    ToolCallAnswer,
    ToolCallRequest,
)
from sandbox_daemon.models import (
    Event,
    ItemCompletedEvent,
    ItemKind,
    StopReason,
    ToolCallOutcome,
    ToolCallResolvedEvent,
    ToolCallResultRequest,
    ToolResultContentPart,
)


def client_tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The host's {name}",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "handler": {"type": "client"},
    }


def tool_output(events: Sequence[Event]) -> tuple[str, bool]:
    """The output of the turn's last tool call item, and whether it is an error."""
    items = [
        e.data.item
        for e in events
        if isinstance(e, ItemCompletedEvent) and e.data.item.kind == ItemKind.tool_call
    ]
    assert items, "a tool call item"
    for part in items[-1].content or []:
        if isinstance(part, ToolResultContentPart):
            return part.output, part.is_error
    raise AssertionError("the tool call item has no toolResult")


def outcomes(events: Sequence[Event]) -> list[ToolCallOutcome]:
    return [e.data.outcome for e in events if isinstance(e, ToolCallResolvedEvent)]


def problem(error: pytest.ExceptionInfo[ProblemError], status: int, kind: str) -> None:
    assert error.value.status == status, error.value
    assert error.value.type.endswith(f":{kind}"), error.value


def start(client: Client, *tools: dict[str, Any] | HostTool) -> Session:
    return client.start_session("mock", host_tools=list(tools))


def test_a_handler_answers_a_client_tool(client: Client) -> None:
    calls: list[ToolCallRequest] = []

    def lookup(call: ToolCallRequest) -> ToolCallAnswer:
        calls.append(call)
        return f"found: {call.input['text']}"

    with start(client, client_tool("lookup")) as session:
        turn = session.turn("hosttool lookup please", on_tool_call=lookup)
        events = list(turn)
        assert turn.ended is not None and turn.ended.data.stop_reason == StopReason.completed
        assert [(c.tool, c.input) for c in calls] == [
            ("lookup", {"text": "hosttool lookup please"})
        ]
        assert tool_output(events) == ("found: hosttool lookup please", False)
        assert outcomes(events) == [ToolCallOutcome.answered]
        item = next(
            e.data.item
            for e in events
            if isinstance(e, ItemCompletedEvent) and e.data.item.kind == ItemKind.tool_call
        )
        assert item.item_id == calls[0].item_id
        assert not session.info().pending_tool_calls


def test_handlers_by_name_and_is_error(client: Client) -> None:
    def other(call: ToolCallRequest) -> ToolCallAnswer:
        raise AssertionError("not this tool")

    with start(client, client_tool("lookup"), HostTool.model_validate(client_tool("other"))) as s:
        turn = s.turn(
            "hosttool lookup",
            on_tool_call={
                "other": other,
                "lookup": lambda call: {
                    "output": [{"type": "text", "text": "no such thing"}],
                    "is_error": True,
                },
            },
        )
        assert tool_output(list(turn)) == ("no such thing", True)
        # The generated request model is an answer too.
        turn = s.turn(
            "hosttool lookup",
            on_tool_call={"lookup": lambda call: ToolCallResultRequest(output="as a model")},
        )
        assert tool_output(list(turn)) == ("as a model", False)


def test_a_handler_rejects_or_raises(client: Client) -> None:
    def down(call: ToolCallRequest) -> ToolCallAnswer:
        raise RuntimeError("the lookup service is down")

    with start(client, client_tool("lookup")) as session:
        events = list(session.turn("hosttool lookup", on_tool_call=lambda c: {"reject": "no"}))
        assert outcomes(events) == [ToolCallOutcome.rejected]
        output, is_error = tool_output(events)
        assert is_error and "no" in output

        events = list(session.turn("hosttool lookup", on_tool_call=down))
        assert outcomes(events) == [ToolCallOutcome.rejected]
        output, is_error = tool_output(events)
        assert is_error and "the lookup service is down" in output, output

        # An output the daemon refuses (a "PNG" that is not one) rejects the call too.
        png = [{"type": "image", "mediaType": "image/png", "data": "bm90IGEgcG5n"}]
        events = list(session.turn("hosttool lookup", on_tool_call=lambda c: png))
        assert outcomes(events) == [ToolCallOutcome.rejected]
        assert tool_output(events)[1]


def test_answered_by_hand_then_the_routes_errors(client: Client) -> None:
    seen: list[ToolCallRequest] = []
    with start(client, client_tool("lookup")) as session:

        def by_hand(call: ToolCallRequest) -> ToolCallAnswer:
            seen.append(call)
            assert session.info().pending_tool_calls == [call]
            client.tool_call_result(session.id, call.call_id, "by hand")
            return None  # answered already: the handler leaves it

        events = list(session.turn("hosttool lookup", on_tool_call=by_hand))
        assert tool_output(events) == ("by hand", False)
        call_id = seen[0].call_id
        with pytest.raises(ProblemError) as again:
            client.tool_call_result(session.id, call_id, "again", is_error=True)
        problem(again, 409, "tool-call-resolved")
        with pytest.raises(ProblemError) as late:
            session.tool_call_reject(call_id, "late")
        problem(late, 409, "tool-call-resolved")
        with pytest.raises(ProblemError) as unknown:
            session.tool_call_reject("call_999")
        problem(unknown, 404, "tool-call-not-found")
        with pytest.raises(ProblemError) as unknown:
            session.tool_call_result("call_999", "x")
        problem(unknown, 404, "tool-call-not-found")


@pytest.mark.parametrize(
    ("tools", "field"),
    [
        ([{"name": "has space", "handler": {"type": "client"}}], "hostTools[0].name"),
        ([client_tool("twice"), client_tool("twice")], "hostTools[1].name"),
        (
            [{"name": "t", "inputSchema": {"type": "string"}, "handler": {"type": "client"}}],
            "inputSchema",
        ),
        ([{"name": "t", "handler": {"type": "carrier-pigeon"}}], "handler"),
    ],
)
def test_create_refuses_bad_host_tools(
    client: Client, session_id: str, tools: list[dict[str, Any]], field: str
) -> None:
    with pytest.raises(ProblemError) as refused:
        client.create_session(session_id, agent="mock", host_tools=tools)
    problem(refused, 422, "invalid-body")
    assert field in refused.value.detail


@pytest.mark.anyio
async def test_async_handlers(aclient: AsyncClient) -> None:
    async def lookup(call: ToolCallRequest) -> ToolCallAnswer:
        return f"async {call.tool}"

    async with await aclient.start_session("mock", host_tools=[client_tool("lookup")]) as session:
        events = [e async for e in await session.turn("hosttool lookup", on_tool_call=lookup)]
        assert tool_output(events) == ("async lookup", False)

        async def down(call: ToolCallRequest) -> ToolCallAnswer:
            raise ValueError("nope")

        turn = await session.turn("hosttool lookup", on_tool_call={"lookup": down})
        events = [e async for e in turn]
        assert outcomes(events) == [ToolCallOutcome.rejected]
        assert "nope" in tool_output(events)[0]

        events = [
            e
            async for e in await session.turn(
                "hosttool lookup", on_tool_call=lambda c: {"reject": True}
            )
        ]
        assert outcomes(events) == [ToolCallOutcome.rejected]
        with pytest.raises(ProblemError) as unknown:
            await aclient.tool_call_result(session.id, "call_999", "x")
        problem(unknown, 404, "tool-call-not-found")
