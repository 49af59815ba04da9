"""Every model of the API: the generated ones (from ``spec/openapi.json``), the event
union with its fallback, the install stream's frames with theirs, a followed process
log's frames, and a terminal's exit.

Response models keep members this SDK does not know (``model_extra``); field names are
snake_case and the wire names are their aliases (``model_dump(by_alias=True)``).
"""

from __future__ import annotations

from ._generated import *  # noqa: F403
from ._generated import __all__ as _generated_all
from .events import EVENT_TYPES, Event, EventsPage, UnrecognizedEvent, parse_event
from .install import INSTALL_PHASES, InstallFrame, UnrecognizedInstallProgress
from .processes import LogFrame, LogGap
from .terminal import TerminalExit

__all__ = [
    "EVENT_TYPES",
    "INSTALL_PHASES",
    "Event",
    "EventsPage",
    "InstallFrame",
    "LogFrame",
    "LogGap",
    "TerminalExit",
    "UnrecognizedEvent",
    "UnrecognizedInstallProgress",
    "parse_event",
]
__all__ += _generated_all
