"""Small text helpers shared by the checks' messages."""

from __future__ import annotations

from typing import Any, Protocol

import orjson

from agent_eval.jsonutil import json_type
from agent_eval.model import ToolCall
from agent_eval.selectors import ArgCondition, Implied, Spelled, a_type

MAX_VALUE_CHARS = 80


def show_value(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A value as compact JSON, shortened for messages (a long list or object is cut to
    its first items before it is serialised: ten million numbers are not written out
    to show eighty characters of them)."""
    if type(value) is list and len(value) > limit:
        value = value[:limit]
    elif type(value) is dict and len(value) > limit:
        value = dict(list(value.items())[:limit])
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cannot_judge(key: str, value: Any, shown: str, implied: Implied) -> str:
    """Why the argument ``key`` = ``value`` cannot be judged by the condition ``shown``
    (the rest of the sentence "the call's …"): a literal spelled in another JSON type
    (:class:`Spelled`), or a value of a type a constraint object does not constrain."""
    kind = a_type(json_type(value))
    if isinstance(implied, Spelled):
        return (f"argument '{key}' is {kind} ({show_value(value)}), which spells {shown} in "
                f"another JSON type: a tool that coerces its arguments may take it for "
                f"{shown}")
    return (f"argument '{key}' is {kind} ({show_value(value)}), which {shown} cannot judge "
            f"(it needs {implied.text})")


def unjudged(call: ToolCall, unfit: ArgCondition | None = None) -> tuple[str, str]:
    """Why a call's arguments cannot be judged by an argument condition: the rest of the
    sentence "the call's …", and the short violation text of the finding (not recorded in
    the trace, recorded but not a JSON object: ``arguments_recorded``; or ``unfit``, the
    condition that cannot judge an argument of its JSON type: ``Selector.unfit``)."""
    if unfit is not None and unfit.implied is not None and isinstance(call.arguments, dict):
        value = call.arguments[unfit.key]
        return (cannot_judge(unfit.key, value, unfit.shown, unfit.implied),
                f"Argument '{unfit.key}' is {a_type(json_type(value))}, not "
                f"{unfit.implied.text}")
    if not call.arguments_recorded:
        return "arguments are not recorded in the trace", "Arguments not recorded"
    why = call.arguments_error or f"got {show_value(call.arguments)}"
    return f"arguments are not a JSON object ({why})", "Arguments are not a JSON object"


class _Named(Protocol):
    @property
    def patterns(self) -> tuple[str, ...]: ...


def tools_text(matcher: _Named) -> str:
    names = matcher.patterns
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]
