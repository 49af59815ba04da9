"""Typed keyword options shared by helpers that create sessions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ._generated.models import (
    HostTool,
    McpServer,
    PermissionMode,
    SessionWebhook,
    SystemPromptMode,
    ToolPolicy,
)

__all__ = ["SessionOptions"]


class SessionOptions(TypedDict, total=False):
    """The optional fields of a new session (``createSession``'s body but ``agent``), and
    its ``Idempotency-Key`` (``idempotency_key``).

    Each is sent only when given; see ``Client.create_session``.
    """

    agent_mode: str | None
    agent_version: str | None
    cwd: str | None
    dangerously_skip_permissions: bool | None
    model: str | None
    permission_mode: PermissionMode | str | None
    token: str | None
    validate_token: bool | None
    variant: str | None
    system_prompt: str | None
    system_prompt_mode: SystemPromptMode | str | None
    tools: ToolPolicy | Mapping[str, Sequence[str]] | None
    max_turns: int | None
    mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None
    env: Mapping[str, str] | None
    host_tools: Sequence[HostTool | Mapping[str, Any]] | None
    webhook: SessionWebhook | Mapping[str, Any] | None
    idempotency_key: str | None
