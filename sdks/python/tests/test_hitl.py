"""Whole sessions with the turn helper: permissions answered once, always and reject,
questions answered and rejected, by handlers (sync and async) or by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    PermissionAnswer,
    PermissionReply,
    ProblemError,
)
from sandbox_daemon.models import (
    CommandExecutionContentPart,
    ErrorEvent,
    Event,
    ItemCompletedEvent,
    ItemKind,
    ItemStatus,
    PermissionAskedEvent,
    PermissionOutcome,
    PermissionRequest,
    PermissionResolvedEvent,
    ProcessExitedAgentError,
    QuestionAskedEvent,
    QuestionOutcome,
    QuestionRequest,
    QuestionResolvedEvent,
    SessionStatus,
    StopReason,
    TurnEndedEvent,
    TurnStartedEvent,
)


def of_type(events: Sequence[Event], kind: type[Event]) -> list[Event]:
    return [e for e in events if isinstance(e, kind)]


def command_items(events: Sequence[Event]) -> list[ItemCompletedEvent]:
    return [
        e
        for e in events
        if isinstance(e, ItemCompletedEvent) and e.data.item.kind == ItemKind.command_execution
    ]


def permission_outcomes(events: Sequence[Event]) -> list[tuple[PermissionOutcome, bool]]:
    return [
        (e.data.outcome, e.data.automatic) for e in events if isinstance(e, PermissionResolvedEvent)
    ]


def test_a_full_session_with_handlers(client: Client) -> None:
    asked: list[PermissionRequest] = []
    questions: list[QuestionRequest] = []
    replies: Iterator[PermissionAnswer] = iter([PermissionReply.once, "always", "reject"])

    def on_permission(request: PermissionRequest) -> PermissionAnswer:
        asked.append(request)
        return next(replies)

    answers: list[list[list[str]] | None] = [[["Blue"], ["Cheese", "Olives"]], None]

    def on_question(request: QuestionRequest) -> Sequence[Sequence[str]] | None:
        questions.append(request)
        return answers.pop(0)

    with client.start_session("mock") as session:
        # 1. once: the command runs.
        turn = session.turn("permission", on_permission=on_permission, on_question=on_question)
        events = list(turn)
        assert isinstance(events[0], TurnStartedEvent) and events[0].data.turn_id == turn.turn_id
        assert events[-1] is turn.ended and turn.ended.data.stop_reason == StopReason.completed
        assert permission_outcomes(events) == [(PermissionOutcome.once, False)]
        (command,) = command_items(events)
        assert command.data.item.status == ItemStatus.completed
        assert asked[0].command == "echo permitted" and asked[0].always_scope == "mock:shell"

        # 2. always: answered once by the handler ...
        events = list(session.turn("permission", on_permission=on_permission))
        assert permission_outcomes(events) == [(PermissionOutcome.always, False)]
        # ... then by the daemon, without asking again.
        events = list(session.turn("permission again", on_permission=on_permission))
        assert not of_type(events, PermissionAskedEvent)
        assert permission_outcomes(events) == [(PermissionOutcome.always, True)]
        assert len(asked) == 2
        assert command_items(events)[0].data.item.status == ItemStatus.completed

        # 3. a question answered.
        turn = session.turn("question", on_question=on_question)
        ended = turn.wait()
        assert ended.data.stop_reason == StopReason.completed
        assert "Color = Blue; Toppings = Cheese, Olives" in turn.text
        assert [len(q.questions) for q in questions] == [2]
        assert questions[0].questions[1].multi_select

        # 4. a question rejected.
        events = list(session.turn("question", on_question=on_question))
        (resolved,) = of_type(events, QuestionResolvedEvent)
        assert isinstance(resolved, QuestionResolvedEvent)
        assert resolved.data.outcome == QuestionOutcome.rejected and resolved.data.answers is None
        assert session.info().status == SessionStatus.idle

    # The with block ended the session; its log stays readable.
    info = session.info()
    assert info.status == SessionStatus.ended
    assert info.event_count == session.get_events(offset=info.event_count - 1).events[0].sequence


def test_reject_in_a_new_session_fails_the_command(client: Client) -> None:
    with client.start_session("mock") as session:
        events = list(session.turn("permission", on_permission=lambda _: "reject"))
        assert permission_outcomes(events) == [(PermissionOutcome.reject, False)]
        (command,) = command_items(events)
        assert command.data.item.status == ItemStatus.failed
        parts = command.data.item.content or []
        assert any(
            isinstance(p, CommandExecutionContentPart)
            and p.output == "permission denied by the user"
            for p in parts
        )


def test_without_handlers_requests_are_answered_by_hand(client: Client) -> None:
    with client.start_session("mock") as session:
        turn = session.turn("permission and a question")
        question_id = ""
        for event in turn:
            if isinstance(event, PermissionAskedEvent):
                pending = session.info().pending_permissions
                assert [p.permission_id for p in pending] == [event.data.permission_id]
                session.reply_permission(event.data.permission_id, PermissionReply.reject)
            elif isinstance(event, QuestionAskedEvent):
                question_id = event.data.question_id
                assert session.info().pending_questions[0].question_id == question_id
                session.reply_question(question_id, [["Green"], []])
        assert turn.ended is not None
        assert "Color = Green" in turn.text
        with pytest.raises(ProblemError) as late:  # already answered
            session.reject_question(question_id)
        assert late.value.status in (404, 409)


def test_a_crash_ends_the_turn_then_the_session(client: Client) -> None:
    session = client.start_session("mock")
    turn = session.turn("crash")
    events = list(turn)
    errors = of_type(events, ErrorEvent)
    assert errors and isinstance(errors[0], ErrorEvent)
    assert isinstance(errors[0].data, ProcessExitedAgentError)
    assert (
        isinstance(events[-1], TurnEndedEvent) and events[-1].data.stop_reason == StopReason.error
    )
    assert session.info().status == SessionStatus.ended
    session.delete()


def test_ending_the_session_cancels_the_turn_waiting_for_an_answer(client: Client) -> None:
    session = client.start_session("mock")
    turn = session.turn("permission")
    for event in turn:
        if isinstance(event, PermissionAskedEvent):
            session.end()  # nobody answers; the session is ended under the turn instead
    # The daemon closes the turn (cancelled) before it logs sessionEnded.
    assert turn.ended is not None and turn.ended.data.stop_reason == StopReason.cancelled
    assert permission_outcomes(list(session.client.iter_events(session.id))) == [
        (PermissionOutcome.cancelled, False)
    ]
    with pytest.raises(ProblemError) as ended:
        session.send("more")
    assert (ended.value.status, ended.value.type) == (
        409,
        "urn:sandbox-daemon:problem:session-ended",
    )
    session.delete()


@pytest.mark.anyio
async def test_a_full_session_with_async_handlers(aclient: AsyncClient) -> None:
    async def on_permission(request: PermissionRequest) -> PermissionAnswer:
        return "always" if request.kind.value == "command" else "reject"

    def on_question(request: QuestionRequest) -> Sequence[Sequence[str]] | None:
        return [["Red"], ["Mushrooms"]]

    async with await aclient.start_session("mock") as session:
        turn = await session.turn(
            "tool permission question", on_permission=on_permission, on_question=on_question
        )
        events = [event async for event in turn]
        assert turn.ended is not None and turn.ended.data.stop_reason == StopReason.completed
        assert permission_outcomes(events) == [(PermissionOutcome.always, False)]
        resolved = of_type(events, QuestionResolvedEvent)
        assert isinstance(resolved[0], QuestionResolvedEvent)
        assert resolved[0].data.answers == [["Red"], ["Mushrooms"]]
        assert "Color = Red; Toppings = Mushrooms" in turn.text

        turn = await session.turn("permission", on_permission=on_permission)
        ended = await turn.wait()
        assert ended.data.stop_reason == StopReason.completed
        log = (await session.get_events(offset=0, limit=1000)).events
        start = next(
            e.sequence
            for e in log
            if isinstance(e, TurnStartedEvent) and e.data.turn_id == turn.turn_id
        )
        this_turn = [e for e in log if start <= e.sequence <= ended.sequence]
        assert not of_type(this_turn, PermissionAskedEvent)
        assert permission_outcomes(this_turn) == [(PermissionOutcome.always, True)]

        turn = await session.turn("question", on_question=lambda _: None)
        events = [event async for event in turn]
        (rejected,) = of_type(events, QuestionResolvedEvent)
        assert isinstance(rejected, QuestionResolvedEvent)
        assert rejected.data.outcome == QuestionOutcome.rejected

        turn = await session.turn("permission and question")
        async for event in turn:
            if isinstance(event, QuestionAskedEvent):
                await session.reject_question(event.data.question_id)
        assert turn.ended is not None
    assert (await session.info()).status == SessionStatus.ended
