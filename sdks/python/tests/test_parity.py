"""The clients against spec/openapi.json: every operation has a method on both clients,
taking every parameter and body field the spec defines; the two clients agree.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, get_type_hints

import pytest

from sandbox_daemon import AsyncClient, AsyncSession, Client, Session, SessionOptions
from sandbox_daemon import _operations as ops
from sandbox_daemon._operations import OPERATIONS


def snake(name: str) -> str:
    name = name.replace("-", "_")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("__", "_")


def spec_operations(openapi: dict[str, Any]) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    for path, methods in openapi["paths"].items():
        for method, operation in methods.items():
            yield operation["operationId"], method.upper(), path, operation


# Operations whose JSON body is a document taken whole, as one argument, not field by field:
# an import sends the bundle byte for byte as exported (its checksum covers its events' text).
WHOLE_BODIES = {"importSession": "bundle"}

# Operations that answer JSON or, when a query parameter says so, an SSE stream: the
# operation's method answers the JSON page and a method of its own follows the stream. That
# method sets the parameter itself; the stream's own parameters are taken by it only.
STREAMED_BY = {
    "processLogs": ("follow_process_logs", "follow", {"last_event_id"}),
}

# Body fields that only one of the operations sharing the body honours, left out of the
# others' methods: a run's timeout and output limit mean nothing to a long-running process
# (the daemon ignores them there), and a run has no terminal (the daemon refuses `tty` and
# `size` there). The spec says so: their descriptions start as given here.
NOT_HONOURED = {
    "startProcess": {"timeoutMs": "`run`", "maxOutputBytes": "`run`"},
    "runProcess": {"tty": "Long-running only", "size": "With `tty`"},
}


def body_schema(openapi: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
    schema: dict[str, Any] = body.get("schema", {})
    if "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def spec_arguments(openapi: dict[str, Any], operation: dict[str, Any]) -> set[str]:
    names = {snake(p["name"]) for p in operation.get("parameters", [])}
    op_id = operation["operationId"]
    if op_id in WHOLE_BODIES:
        return names | {WHOLE_BODIES[op_id]}
    if op_id in STREAMED_BY:
        _, switch, stream_only = STREAMED_BY[op_id]
        names -= {switch, *stream_only}
    properties = set(body_schema(openapi, operation).get("properties", {}))
    names |= {snake(p) for p in properties - set(NOT_HONOURED.get(op_id, {}))}
    return names


def test_snake() -> None:
    assert snake("replyPermission") == "reply_permission"
    assert snake("Last-Event-ID") == "last_event_id"
    assert snake("includeRaw") == "include_raw"
    assert snake("openapi") == "openapi"


def test_every_operation_has_a_method_on_both_clients(openapi: dict[str, Any]) -> None:
    missing = [
        f"{client.__name__}.{snake(op_id)} ({op_id})"
        for op_id, *_ in spec_operations(openapi)
        for client in (Client, AsyncClient)
        if not callable(getattr(client, snake(op_id), None))
    ]
    assert not missing, f"operations of spec/openapi.json without a method: {missing}"


def test_the_operation_table_matches_the_spec(openapi: dict[str, Any]) -> None:
    spec = {op_id: (method, path) for op_id, method, path, _ in spec_operations(openapi)}
    ours = {op_id: (op.method, op.path) for op_id, op in OPERATIONS.items()}
    assert ours == spec


def test_methods_take_every_parameter_and_body_field(openapi: dict[str, Any]) -> None:
    problems = []
    for op_id, _, _, operation in spec_operations(openapi):
        wanted = spec_arguments(openapi, operation)
        for client in (Client, AsyncClient):
            taken = set(inspect.signature(getattr(client, snake(op_id))).parameters)
            if wanted - taken:
                problems.append(f"{client.__name__}.{snake(op_id)} lacks {sorted(wanted - taken)}")
    assert not problems, problems


def test_streamed_operations_have_a_method_taking_the_stream_parameters(
    openapi: dict[str, Any],
) -> None:
    operations = {op_id: operation for op_id, _, _, operation in spec_operations(openapi)}
    for op_id, (method, switch, stream_only) in STREAMED_BY.items():
        parameters = {snake(p["name"]) for p in operations[op_id].get("parameters", [])}
        assert {switch, *stream_only} <= parameters, op_id
        wanted = parameters - {switch}
        for client in (Client, AsyncClient):
            taken = set(inspect.signature(getattr(client, method)).parameters)
            assert wanted <= taken, (client.__name__, method, sorted(wanted - taken))
            assert switch not in taken
            page = set(inspect.signature(getattr(client, snake(op_id))).parameters)
            assert not page & {switch, *stream_only}, (client.__name__, snake(op_id))
        assert EXTRAS[method] == op_id


def description(schema: dict[str, Any]) -> str:
    """A property's description, or that of the first variant of its `oneOf` (a nullable
    reference: `oneOf: [{$ref, description}, {type: null}]`).
    """
    text = schema.get("description") or schema.get("oneOf", [{}])[0].get("description", "")
    return str(text)


def test_fields_left_out_are_documented_as_not_honoured(openapi: dict[str, Any]) -> None:
    operations = {op_id: operation for op_id, _, _, operation in spec_operations(openapi)}
    for op_id, fields in NOT_HONOURED.items():
        properties = body_schema(openapi, operations[op_id])["properties"]
        for name, start in fields.items():
            assert description(properties[name]).startswith(start), (op_id, name)
            for client in (Client, AsyncClient):
                taken = inspect.signature(getattr(client, snake(op_id))).parameters
                assert snake(name) not in taken, (client.__name__, op_id, name)


def test_required_body_fields_are_required_arguments(openapi: dict[str, Any]) -> None:
    for op_id, _, _, operation in spec_operations(openapi):
        schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        ref = schema.get("schema", {}).get("$ref")
        if op_id in WHOLE_BODIES:
            parameters = inspect.signature(getattr(Client, snake(op_id))).parameters
            assert parameters[WHOLE_BODIES[op_id]].default is inspect.Parameter.empty, op_id
            continue
        if not ref:
            continue
        component = openapi["components"]["schemas"][ref.rsplit("/", 1)[1]]
        parameters = inspect.signature(getattr(Client, snake(op_id))).parameters
        for name in component.get("required", []):
            assert parameters[snake(name)].default is inspect.Parameter.empty, (op_id, name)


# Public methods that are not an operation of the spec: helpers over operations, each named
# with the operation it uses. A new one must be added here, on purpose.
EXTRAS = {
    "iter_sessions": "listSessions",
    "iter_events": "getEvents",
    "events": "streamEvents",
    "install_agent_progress": "installAgent",
    "follow_process_logs": "processLogs",
    "terminal_url": "openTerminal",
    "session": None,
    "start_session": "createSession",
    "iter_webhook_deliveries": "listWebhookDeliveries",
}


def test_every_other_public_method_is_a_known_extra(openapi: dict[str, Any]) -> None:
    operations = {snake(op_id) for op_id, *_ in spec_operations(openapi)}
    for client in (Client, AsyncClient):
        methods = set(public_methods(client)) - {"close", "aclose"}
        assert methods - operations == set(EXTRAS), client.__name__
    assert {op for op in EXTRAS.values() if op} <= set(OPERATIONS)


def test_install_agent_progress_takes_what_install_agent_takes() -> None:
    # The same operation asked for as text/event-stream: the same arguments, same defaults.
    for client in (Client, AsyncClient):
        json_summary = inspect.signature(client.install_agent).parameters
        progress = inspect.signature(client.install_agent_progress).parameters
        assert [(p.name, p.kind, p.default) for p in progress.values()] == [
            (p.name, p.kind, p.default) for p in json_summary.values()
        ]


def test_idempotency_follows_the_contract() -> None:
    for op in OPERATIONS.values():
        if op.method in ("GET", "PUT", "DELETE"):
            assert op.idempotent, op
    never = {"sendMessage", "createSession", "cancelTurn", "replyPermission"}
    never |= {"replyQuestion", "rejectQuestion", "importSession", "handoverSession"}
    never |= {"uploadFiles", "runProcess", "startProcess", "createWebhook"}
    assert not any(OPERATIONS[name].idempotent for name in never)
    # A signal to a process that has ended does nothing; to one still running, it asks
    # again what was asked: repeated after a connection error.
    assert OPERATIONS["stopProcess"].idempotent and OPERATIONS["killProcess"].idempotent


def test_a_call_with_an_idempotency_key_is_idempotent() -> None:
    # createSession and sendMessage are repeated (after a connection error or a 503) only
    # with an Idempotency-Key: the daemon answers the repeat with the first answer.
    assert not ops.create_session("s", agent="mock", **NO_OPTIONS).idempotent
    assert ops.create_session("s", agent="mock", idempotency_key="k", **NO_OPTIONS).idempotent
    assert not ops.send_message("s", "hi").idempotent
    keyed = ops.send_message("s", "hi", idempotency_key="k")
    assert keyed.idempotent and keyed.request_headers()["Idempotency-Key"] == "k"
    # The header alone does not make another POST repeatable.
    reply = ops.reply_permission("s", "p", "once")
    assert not replace(reply, headers={"Idempotency-Key": "k"}).idempotent
    with pytest.raises(TypeError):
        ops.send_message("s", "hi", idempotency_key=b"k")  # type: ignore[arg-type]


NO_OPTIONS: dict[str, Any] = dict.fromkeys(
    set(get_type_hints(SessionOptions)) - {"webhook", "idempotency_key"}
)


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


@pytest.mark.parametrize(("sync", "async_"), [(Client, AsyncClient), (Session, AsyncSession)])
def test_sync_and_async_have_the_same_methods_and_parameters(sync: type, async_: type) -> None:
    ours, theirs = public_methods(sync), public_methods(async_)
    ours.pop("close", None)
    theirs.pop("aclose", None)
    assert set(ours) == set(theirs)
    for name, signature in ours.items():
        other = theirs[name]
        assert [(p.name, p.kind, p.default) for p in signature.parameters.values()] == [
            (p.name, p.kind, p.default) for p in other.parameters.values()
        ], name


def test_session_options_are_the_optional_create_arguments() -> None:
    parameters = inspect.signature(Client.create_session).parameters
    optional = {n for n, p in parameters.items() if p.default is None}
    assert set(get_type_hints(SessionOptions)) == optional


def test_async_client_methods_are_coroutines_where_they_call_the_daemon() -> None:
    # Streams are plain methods returning an async iterator; the request goes when it starts.
    streams = {"stream_events", "events", "install_agent_progress", "follow_process_logs"}
    streams |= {"ui_message_stream"}
    streams |= {"session"}
    for name, member in inspect.getmembers(AsyncClient, inspect.isfunction):
        if name.startswith("_") or name in streams or name.startswith("iter_"):
            continue
        if name in ("base_url", "retry", "terminal_url"):  # no request: no coroutine
            continue
        assert inspect.iscoroutinefunction(member), name
    for name in streams - {"session"}:
        assert not inspect.iscoroutinefunction(getattr(AsyncClient, name)), name
        returned = get_type_hints(getattr(AsyncClient, name))["return"]
        assert hasattr(returned, "__aiter__") and hasattr(returned, "__aenter__"), name
