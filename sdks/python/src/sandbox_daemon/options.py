"""Typed keyword options shared by helpers that create sessions."""

from __future__ import annotations

from typing import TypedDict

from ._generated.models import PermissionMode

__all__ = ["SessionOptions"]


class SessionOptions(TypedDict, total=False):
    """The optional fields of a new session (``createSession``'s body but ``agent``).

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
