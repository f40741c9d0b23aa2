"""Trace text made safe to show: no control characters, no unbounded length.

Tool names, trace ids, argument values and messages come from traces (and, for a
baseline, from a results file) that anyone opening a pull request may have written. An
ANSI escape in them would rewrite the console or the CI log; a 200 KB tool name would
bury every other finding and blow up report.html. So:

* C0 and C1 control characters (U+0000–U+001F, U+007F–U+009F) are shown as ``\\xNN``
  (messages keep their tabs and line breaks), the bidirectional embeddings, overrides and
  isolates (U+202A–U+202E, U+2066–U+2069) as ``\\uNNNN``;
* names longer than ``limits.max_name_chars`` and values whose JSON text is longer than
  ``limits.max_value_chars`` are cut, with a visible ``…[+N chars]`` marker.

Readers pass every trace through :func:`clean_trace`; :func:`agent_eval.results.clean_results`
does the same for a whole results object (what ``run`` made, whatever the suite named its
tests and scenarios, or a results file read back), so every renderer and log line gets
clean text. What is printed as lines (the console, ``diff``, error messages) goes through
:func:`one_line` as well: a line break kept in a message cannot start a line of its own
there (a GitHub workflow command such as ``::error::`` is any line that starts with
``::``, after spaces).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import orjson

from agent_eval.limits import DEFAULT, Limits
from agent_eval.model import CallLog, Handoff, Location, Trace

# and the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069):
# "Trojan Source" text, shown in the console, a log or report.html in another order than
# it is read ("delete\u202e..." displayed backwards); the marks (U+200E, U+200F, U+061C),
# which right-to-left text uses and which reorder nothing, are kept
_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_ONLY = re.compile("[\x00-\x1f\x7f-\x9f]")  # (tool and agent names: see below)
_CONTROL_IN_TEXT = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")  # keeps \t and \n
# keeps \t; the line and paragraph separators too are line breaks (str.splitlines, YAML)
_CONTROL_IN_LINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# the colour codes renderers/console.py paints with (Select Graphic Rendition)
_SGR = re.compile("(\x1b\\[(?:0|3[1-6])m)")


def fold(text: str) -> str:
    """``text`` as the case-insensitive checks compare it (output ``contains`` /
    ``not_contains``, ``state``, ``output_contains``; a result's ``contains``): Unicode's
    canonical caseless form (casefold of the NFD text), composed again (NFC).
    ``str.lower`` kept ``é`` written as one code point apart from ``e`` and a combining
    accent, and ``ß`` apart from ``SS``: a not_contains term passed an output holding it
    in the other spelling. Composed, not left decomposed (NFD), since the checks look for
    a term *in* a text: in NFD ``cafe`` is in ``café`` (``e`` + U+0301) and ``하`` in
    ``한`` (its first two jamo), so a ``contains`` passed an output that does not hold the
    term; two texts have the same composed form exactly when they have the same NFD."""
    if text.isascii():
        return text.lower()  # the same, without the two walks
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_MARK = re.compile(r"…\[\+\d+ chars\]\Z")


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters and a marker of how many were cut
    (a text cut before is left as it is)."""
    if len(text) <= limit:
        return text
    mark = _MARK.search(text, limit)
    if mark is not None and mark.start() == limit:
        return text
    return f"{text[:limit]}…[+{len(text) - limit} chars]"


def clean_name(name: str, limit: int = DEFAULT.max_name_chars) -> str:
    """A name or id: every control character escaped (line breaks too), then cut."""
    if name.isprintable() and len(name) <= limit:
        return name
    return cut(_CONTROL.sub(_escape, name), limit)


# the control characters that are whitespace (str.isspace: tab, line breaks, U+001C-U+001F,
# U+0085): a tool name's separators (agent_eval.matching), written as a space in a name
_SPACE_CONTROL = re.compile("[\x09-\x0d\x1c-\x1f\x85]")


def clean_tool_name(name: str, limit: int = DEFAULT.max_name_chars) -> str:
    """A tool or agent name as :func:`clean_name` makes it, but for the control
    characters that are whitespace, each written as one space: rules match the cleaned
    name, and a space is the same separator as a tab or a line break in the normal form
    of docs/config.md "Tool names" (``delete_file\\n`` stays ``delete_file``; as
    ``delete_file\\x0a`` no rule naming ``delete_file`` matched it) and one character for
    a ``?`` as well."""
    if name.isprintable() and len(name) <= limit:
        return name
    # the bidi overrides are kept: format characters, which the normal form drops as it
    # drops a zero-width space (``delete\u202e_customer`` is blocked by
    # ``delete_customer``); escaped, they were letters of the name and it passed. A
    # finding shows the name escaped (clean_results)
    return cut(_CONTROL_ONLY.sub(_escape, _SPACE_CONTROL.sub(" ", name)), limit)


def clean_text(text: str, limit: int | None = None) -> str:
    """Free text (a message): control characters escaped but tabs and line breaks."""
    if not text.isprintable():
        text = _CONTROL_IN_TEXT.sub(_escape, text)
    return text if limit is None else cut(text, limit)


# GitHub's runner also runs the older form of a workflow command, ``##[error]text``,
# found anywhere in a line of the log (not only at its start): its ``[`` is written
# ``\x5b`` in a line
LEGACY_COMMAND = "##["
_LEGACY_SHOWN = "##\\x5b"


def one_line(text: str, *, colour: bool = False) -> str:
    """One line of a terminal or a log: every control character written ``\\xNN``, line
    breaks too (U+2028 and U+2029 as ``\\u2028``, ``\\u2029``; tabs are kept), and the
    ``[`` of ``##[`` (a workflow command wherever it stands in a line) as ``\\x5b``.
    With ``colour``, the colour codes a renderer painted the line with (``ESC[31m``…) are
    kept; the text they paint was cleaned before, by :func:`agent_eval.results.clean_results`."""
    if LEGACY_COMMAND in text:
        text = text.replace(LEGACY_COMMAND, _LEGACY_SHOWN)
    if text.isprintable():
        return text
    if not colour:
        return _CONTROL_IN_LINE.sub(_escape, text)
    parts = _SGR.split(text)  # text, code, text, code, …, text
    return "".join(p if i % 2 else _CONTROL_IN_LINE.sub(_escape, p)
                   for i, p in enumerate(parts))


def log_block(text: str, limit: int = 20_000) -> str:
    """Several lines of text for a log (a traceback, whose exception messages may quote a
    trace): each line :func:`one_line` and behind a bar, so that no line of it starts a
    workflow command (``::error::`` after a line break in a message) or holds one
    (``##[``). A text longer than ``limit`` characters keeps its first quarter and its
    end, the middle said as a line ``…[+N chars]…``: a traceback's end is where the error
    was raised and what it was (cut to its first characters, a deep one kept only its
    outermost frames)."""
    if len(text) > limit:
        head = limit // 4
        text = (f"{text[:head]}\n…[+{len(text) - limit} chars]…\n"
                f"{text[len(text) - (limit - head):]}")
    return "\n".join("  | " + one_line(line) for line in text.split("\n"))


def clean_value(value: Any, limits: Limits = DEFAULT) -> Any:
    """A value shown in a finding: strings cleaned, and one whose JSON text is longer
    than ``max_value_chars`` replaced by that text, cut."""
    if value is None or type(value) in (bool, int, float):
        return value
    if type(value) is str:
        if len(value) > limits.max_value_chars:
            return clean_text(cut(value, limits.max_value_chars))
        return clean_text(value)
    try:
        text = orjson.dumps(value, default=str).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = repr(value)
    if len(text) > limits.max_value_chars:
        return clean_text(cut(text, limits.max_value_chars))
    return clean_strings(value, limits.max_value_chars)


def clean_strings(value: Any, limit: int) -> Any:
    """Every string in a JSON value cleaned (keys too); nesting is already bounded."""
    if type(value) is str:
        return clean_text(value, limit)
    if type(value) is list:
        return [clean_strings(v, limit) for v in value]
    if type(value) is dict:
        return {clean_text(str(k), limit): clean_strings(v, limit) for k, v in value.items()}
    return value


def clean_trace(trace: Trace, limits: Limits) -> list[tuple[Location, int]]:
    """Names and ids of a trace made safe in place (tool names are checked per call:
    one ``isprintable`` and one ``len``, the hot path). Returns where the tool names
    longer than ``max_name_chars`` were called, with their length: the rules see such a
    name cut, so the reader reports each (a rule for its end could not judge it)."""
    limit = limits.max_name_chars
    tid = trace.id
    if not tid.isprintable() or len(tid) > limit:
        trace.id = clean_name(tid, limit)
    if trace.scenario is not None and (not trace.scenario.isprintable()
                                       or len(trace.scenario) > limit):
        trace.scenario = clean_name(trace.scenario, limit)
    calls = trace.tool_calls
    cut_names: list[tuple[Location, int]] = []
    if isinstance(calls, CallLog):  # by its names (a call read from it is made anew)
        long: list[tuple[int, int]] = []
        for i, name in enumerate(calls.names()):
            if not name.isprintable() or len(name) > limit:
                calls.update(i, {"name": clean_tool_name(name, limit)})
                if len(name) > limit:
                    long.append((i, len(name)))
        if long:
            cut_names = [(c.location, size) for c, (_, size)
                         in zip(calls.pick(i for i, _ in long), long, strict=True)]
    else:
        for call in calls:
            name = call.name
            if not name.isprintable() or len(name) > limit:
                call.name = clean_tool_name(name, limit)
                if len(name) > limit:
                    cut_names.append((call.location, len(name)))
    if trace.handoffs:  # agent names, as tool names
        trace.handoffs = [_clean_handoff(h, limit) for h in trace.handoffs]
    return cut_names


def _clean_handoff(h: Handoff, limit: int) -> Handoff:
    def ok(name: str | None) -> bool:
        return name is None or (name.isprintable() and len(name) <= limit)

    if ok(h.to_agent) and ok(h.from_agent):
        return h
    return Handoff(clean_tool_name(h.to_agent, limit), h.location,
                   None if h.from_agent is None else clean_tool_name(h.from_agent, limit))
