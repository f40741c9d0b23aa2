"""The probes' checks: pure functions of what a server answered (no I/O, no SDK).

Each returns :class:`Failure` records; the runner turns them into findings at the
violated key of the probe. Text checks (``expect_result``, ``expect_error``,
``expect_content``, message and sampling checks) share :func:`check_text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from agent_eval.findings import ConfigRef
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.live.compile import ProbeSpec, TextCheck
from agent_eval.live.models import Bound, Capabilities
from agent_eval.rule_ids import (
    PROBE_ARGUMENTS,
    PROBE_CALL_FAILED,
    PROBE_CAPABILITY,
    PROBE_ERROR,
    PROBE_LATENCY,
    PROBE_LISTING,
    PROBE_MESSAGES,
    PROBE_MIME_TYPE,
    PROBE_RESULT,
    PROBE_SAMPLING,
    PROBE_TIMEOUT,
)
from agent_eval.safetext import fold

_MISSING = object()
# characters of why a call got no usable answer shown in its finding: the reason and the
# end of the server's stderr (session.STDERR_SHOWN) whole
BROKEN_SHOWN = 1000


@dataclass(frozen=True, slots=True)
class Failure:
    rule: str
    ref: ConfigRef
    message: str
    constraint: str | None = None
    value: Any = None
    line: int = 0  # the request's line in the session trace
    repeat: bool = True  # False: a one-off check (listing, arguments), not per call


@dataclass(slots=True)
class Answer:
    """What one request got: a result, an error, or nothing in time."""

    method: str
    result: dict[str, Any] | None = None
    error: str | None = None  # the error message (JSON-RPC error, or isError text)
    code: int | None = None  # the JSON-RPC error code
    timed_out: bool = False
    # no answer of the server's: the connection closed before it answered, or its answer
    # is not a valid result of the method (never the error an expect_error wants)
    broken: bool = False
    latency_ms: float = 0.0
    line: int = 0  # the request's line in the session trace
    sampling: list[dict[str, Any]] = field(default_factory=list)  # requests received

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


# ------------------------------------------------------------------------- texts
def content_text(content: Any) -> str:
    """The text of MCP content items (text items, embedded resources' text), joined."""
    items = content if isinstance(content, list) else [content]
    parts: list[str] = []
    for c in items:
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("text"), str):
            parts.append(c["text"])
        elif isinstance(c.get("resource"), dict) and isinstance(c["resource"].get("text"),
                                                                 str):
            parts.append(c["resource"]["text"])
    return "\n".join(parts)


def resource_text(result: dict[str, Any]) -> str:
    """A resources/read result's text: text contents, or blobs as their base64 text."""
    parts: list[str] = []
    for c in result.get("contents") or ():
        if isinstance(c, dict):
            value = c.get("text", c.get("blob"))
            if isinstance(value, str):
                parts.append(value)
    return "\n".join(parts)


def _json_of(text: str, structured: Any) -> Any:
    if structured is not None:
        return structured
    try:
        return bounded_loads(text)
    except orjson.JSONDecodeError:
        return _MISSING


def check_text(checks: Iterable[TextCheck], text: str, structured: Any = None,
               what: str = "the result") -> list[tuple[TextCheck, str]]:
    """(check, why) for every check that ``text`` (or ``structured``) fails."""
    out: list[tuple[TextCheck, str]] = []
    lower = fold(text)
    for c in checks:
        if c.kind == "contains":
            missing = [t for t in c.terms if t not in lower]
            if missing:
                out.append((c, f"{what} does not contain {_list(missing)}"))
        elif c.kind == "not_contains":
            found = [t for t in c.terms if t in lower]
            if found:
                out.append((c, f"{what} contains {_list(found)}"))
        elif c.kind == "regex":
            assert c.regex is not None
            if c.regex.search(text) is None:
                out.append((c, f"{what} does not match the regular expression "
                            f"{c.regex.pattern!r}"))
        elif c.kind == "equals":
            if isinstance(c.value, str):
                if text.strip() != c.value.strip():
                    out.append((c, f"{what} {_quote(text)} does not equal {_quote(c.value)}"))
            else:
                value = _json_of(text, structured)
                if value is _MISSING:
                    out.append((c, f"{what} is not JSON, so it cannot equal "
                                f"{_quote(orjson.dumps(c.value).decode())}"))
                elif value != c.value:
                    out.append((c, f"{what} {_quote(orjson.dumps(value).decode())} does not "
                                f"equal {_quote(orjson.dumps(c.value).decode())}"))
        elif c.kind == "json_schema":
            value = _json_of(text, structured)
            if value is _MISSING:
                out.append((c, f"{what} is not JSON, so it cannot match the JSON Schema "
                            f"{c.source}"))
                continue
            error = next(iter(c.schema.iter_errors(value)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path)
                out.append((c, f"{what} does not match the JSON Schema {c.source}"
                            f"{f' at /{where}' if where else ''}: {error.message}"))
    return out


def _quote(text: str, limit: int = 120) -> str:
    shown = text if len(text) <= limit else text[:limit - 3] + "..."
    return repr(shown)


def _list(terms: list[str]) -> str:
    return ", ".join(repr(t) for t in terms)


def in_bound(value: float, bound: int | float | Bound) -> bool:
    if isinstance(bound, int | float):
        return value == bound
    return (bound.min is None or value >= bound.min) and (bound.max is None
                                                          or value <= bound.max)


def shown_bound(bound: int | float | Bound) -> str:
    if isinstance(bound, int | float):
        return f"{bound:g}"
    parts = [f"min: {bound.min:g}" if bound.min is not None else "",
             f"max: {bound.max:g}" if bound.max is not None else ""]
    return "{" + ", ".join(p for p in parts if p) + "}"


# ---------------------------------------------------------------------- per call
def check_call(p: ProbeSpec, a: Answer, noun: str) -> list[Failure]:
    """The checks every call probe has: timeout, expected error or success, latency."""
    m = p.model
    out: list[Failure] = []
    kind_ref = p.at(p.kind)
    if a.timed_out:
        limit = m.timeout_ms
        out.append(Failure(PROBE_TIMEOUT.id, p.at("timeout_ms") if limit else kind_ref,
                           f"{noun} did not answer in time ({a.error})",
                           f"timeout_ms: {limit:g}" if limit else "call_timeout_ms",
                           line=a.line))
        return out
    if a.broken:
        out.append(Failure(PROBE_CALL_FAILED.id, kind_ref, f"{noun} got no usable answer "
                           f"from the server: {_quote(a.error or '', BROKEN_SHOWN)}"
                           + ("; an expected error must be the server's answer"
                              if m.expect_error is not None else ""),
                           f"{p.kind}: {probe_target(p)}", a.error, line=a.line))
        return out
    if m.expect_error is not None:
        ref = p.at("expect_error")
        if a.ok:
            out.append(Failure(PROBE_ERROR.id, ref, f"{noun} succeeded, but an error was "
                               "expected", "expect_error", line=a.line))
        else:
            for c, why in check_text(p.error, a.error or "", None, "the error message"):
                out.append(Failure(PROBE_ERROR.id, c.ref, f"{noun} failed as expected, but "
                                   f"{why}", c.shown, a.error, line=a.line))
    elif not a.ok:
        code = f" (JSON-RPC error {a.code})" if a.code is not None else ""
        out.append(Failure(PROBE_CALL_FAILED.id, kind_ref, f"{noun} failed{code}: "
                           f"{_quote(a.error or '', 300)}", f"{p.kind}: {probe_target(p)}",
                           a.error, line=a.line))
    if m.max_latency_ms is not None and a.latency_ms > m.max_latency_ms:
        out.append(Failure(PROBE_LATENCY.id, p.at("max_latency_ms"),
                           f"{noun} took {a.latency_ms:g} ms, more than "
                           f"max_latency_ms {m.max_latency_ms:g}",
                           f"max_latency_ms: {m.max_latency_ms:g}", a.latency_ms,
                           line=a.line))
    return out


def check_tool(p: ProbeSpec, a: Answer, sampling_announced: bool) -> list[Failure]:
    noun = f"tools/call {p.model.tool}"
    out = check_call(p, a, noun)
    if a.ok and a.result is not None and p.result:
        text = content_text(a.result.get("content"))
        for c, why in check_text(p.result, text, a.result.get("structuredContent")):
            out.append(Failure(PROBE_RESULT.id, c.ref, f"{noun}: {why}", c.shown,
                               _short(text), line=a.line))
    if p.model.sampling is not None and not a.timed_out:
        out.extend(check_sampling(p, a, sampling_announced))
    return out


def check_sampling(p: ProbeSpec, a: Answer, announced: bool) -> list[Failure]:
    assert p.model.sampling is not None
    expect = p.model.sampling.expect
    ref = p.at("sampling")
    out: list[Failure] = []
    n = len(a.sampling)
    bound = expect.requests if expect is not None and expect.requests is not None \
        else Bound(min=1)
    if not in_bound(n, bound):
        why = "" if announced else " (agent-eval did not announce sampling)"
        out.append(Failure(PROBE_SAMPLING.id, p.at("sampling", "expect", "requests")
                           if expect is not None and expect.requests is not None else ref,
                           f"the server sent {n} sampling request(s) during tools/call "
                           f"{p.model.tool}; expected {shown_bound(bound)}{why}",
                           f"requests: {shown_bound(bound)}", n, line=a.line))
    if expect is None:
        return out
    for req in a.sampling:
        text = "\n".join(content_text(m.get("content")) for m in req.get("messages") or ()
                         if isinstance(m, dict))
        for c, why in check_text(p.sampling_text, text, None, "the sampling request's "
                                 "messages"):
            out.append(Failure(PROBE_SAMPLING.id, c.ref, why, c.shown, _short(text),
                               line=a.line))
        system = req.get("systemPrompt")
        for c, why in check_text(p.system_prompt, system if isinstance(system, str) else "",
                                 None, "the sampling request's system prompt"):
            out.append(Failure(PROBE_SAMPLING.id, c.ref, why, c.shown, system, line=a.line))
        tokens = req.get("maxTokens")
        if expect.max_tokens is not None and not (
                isinstance(tokens, int | float) and in_bound(tokens, expect.max_tokens)):
            out.append(Failure(PROBE_SAMPLING.id, p.at("sampling", "expect", "max_tokens"),
                               f"the sampling request asked for maxTokens {tokens}; "
                               f"expected {shown_bound(expect.max_tokens)}",
                               f"max_tokens: {shown_bound(expect.max_tokens)}", tokens,
                               line=a.line))
    return out


def check_resource(p: ProbeSpec, a: Answer, uri: str) -> list[Failure]:
    noun = f"resources/read {uri}"
    out = check_call(p, a, noun)
    if not a.ok or a.result is None:
        return out
    contents = [c for c in a.result.get("contents") or () if isinstance(c, dict)]
    if not contents:
        out.append(Failure(PROBE_RESULT.id, p.at(p.kind), f"{noun} returned no contents",
                           None, line=a.line))
    want = p.model.expect_mime_type
    if want is not None:
        got = sorted({str(c.get("mimeType")) for c in contents if c.get("mimeType") != want})
        if got:
            out.append(Failure(PROBE_MIME_TYPE.id, p.at("expect_mime_type"),
                               f"{noun}: MIME type {', '.join(got)}, expected {want}",
                               f"expect_mime_type: {want}", got[0], line=a.line))
    if p.content:
        text = resource_text(a.result)
        for c, why in check_text(p.content, text, None, "the content"):
            out.append(Failure(PROBE_RESULT.id, c.ref, f"{noun}: {why}", c.shown, _short(text),
                               line=a.line))
    return out


def check_prompt(p: ProbeSpec, a: Answer) -> list[Failure]:
    noun = f"prompts/get {p.model.prompt}"
    out = check_call(p, a, noun)
    expect = p.model.expect_messages
    if not a.ok or a.result is None or expect is None:
        return out
    messages = [m for m in a.result.get("messages") or () if isinstance(m, dict)]
    if expect.count is not None and not in_bound(len(messages), expect.count):
        out.append(Failure(PROBE_MESSAGES.id, p.at("expect_messages", "count"),
                           f"{noun} returned {len(messages)} message(s); expected "
                           f"{shown_bound(expect.count)}",
                           f"count: {shown_bound(expect.count)}", len(messages), line=a.line))
    if expect.roles is not None:
        roles = [m.get("role") for m in messages]
        if roles != list(expect.roles):
            out.append(Failure(PROBE_MESSAGES.id, p.at("expect_messages", "roles"),
                               f"{noun}: the message roles are {roles}, expected "
                               f"{list(expect.roles)}", f"roles: {list(expect.roles)}", roles,
                               line=a.line))
    if expect.content_types is not None:
        types_ = [m.get("content", {}).get("type") if isinstance(m.get("content"), dict)
                  else None for m in messages]
        if types_ != list(expect.content_types):
            out.append(Failure(PROBE_MESSAGES.id, p.at("expect_messages", "content_types"),
                               f"{noun}: the content types are {types_}, expected "
                               f"{list(expect.content_types)}",
                               f"content_types: {list(expect.content_types)}", types_,
                               line=a.line))
    if p.messages_text:
        text = "\n".join(content_text(m.get("content")) for m in messages)
        for c, why in check_text(p.messages_text, text, None, "the messages' text"):
            out.append(Failure(PROBE_MESSAGES.id, c.ref, f"{noun}: {why}", c.shown,
                               _short(text), line=a.line))
    return out


def check_prompt_declaration(p: ProbeSpec, declared: dict[str, Any] | None,
                             line: int) -> list[Failure]:
    """expect_arguments against the prompt's entry in prompts/list."""
    expect = p.model.expect_arguments
    if expect is None:
        return []
    if declared is None:
        return [Failure(PROBE_LISTING.id, p.at("prompt"), f"prompt '{p.model.prompt}' is not "
                        "in prompts/list", None, line=line, repeat=False)]
    args = [x for x in declared.get("arguments") or () if isinstance(x, dict)]
    required = sorted(str(x.get("name")) for x in args if x.get("required") is True)
    optional = sorted(str(x.get("name")) for x in args if x.get("required") is not True)
    out = []
    for key, want, got in (("required", expect.required, required),
                           ("optional", expect.optional, optional)):
        if want is not None and sorted(want) != got:
            out.append(Failure(PROBE_ARGUMENTS.id, p.at("expect_arguments", key),
                               f"prompt '{p.model.prompt}' declares {key} arguments {got}, "
                               f"expected {sorted(want)}", f"{key}: {sorted(want)}", got,
                               line=line, repeat=False))
    return out


def check_missing_required(p: ProbeSpec, name: str, a: Answer) -> list[Failure]:
    """A prompts/get without the required argument ``name`` must be rejected."""
    if a.timed_out:
        return [Failure(PROBE_TIMEOUT.id, p.at("reject_missing_required"),
                        f"prompts/get {p.model.prompt} without '{name}' did not answer in "
                        "time", "reject_missing_required: true", line=a.line, repeat=False)]
    if a.broken:
        return [Failure(PROBE_CALL_FAILED.id, p.at("reject_missing_required"),
                        f"prompts/get {p.model.prompt} without '{name}' got no usable "
                        f"answer from the server: {_quote(a.error or '', BROKEN_SHOWN)}; a "
                        "rejection must be the server's answer",
                        "reject_missing_required: true", a.error,
                        line=a.line, repeat=False)]
    if a.ok:
        return [Failure(PROBE_ARGUMENTS.id, p.at("reject_missing_required"),
                        f"prompts/get {p.model.prompt} without the required argument "
                        f"'{name}' was accepted; it must be rejected",
                        "reject_missing_required: true", name, line=a.line, repeat=False)]
    return []


def check_listing(p: ProbeSpec, items: list[dict[str, Any]], a: Answer) -> list[Failure]:
    m = p.model
    what = m.list_
    noun = {"resource_templates": "resources/templates/list"}.get(str(what), f"{what}/list")
    out = check_call(p, a, noun)
    if not a.ok:
        return [Failure(f.rule, f.ref, f.message, f.constraint, f.value, f.line, False)
                for f in out]
    key = LIST_KEY[str(what)]
    names = [str(x.get(key)) for x in items]
    n = len(items)
    if m.min_count is not None and n < m.min_count:
        out.append(Failure(PROBE_LISTING.id, p.at("min_count"), f"{noun} returned {n} item(s), "
                           f"fewer than min_count {m.min_count}", f"min_count: {m.min_count}",
                           n, line=a.line))
    if m.max_count is not None and n > m.max_count:
        out.append(Failure(PROBE_LISTING.id, p.at("max_count"), f"{noun} returned {n} item(s), "
                           f"more than max_count {m.max_count}", f"max_count: {m.max_count}",
                           n, line=a.line))
    for i, want in enumerate(m.expect or ()):
        if want not in names:
            out.append(Failure(PROBE_LISTING.id, p.at("expect", i), f"{noun} does not list "
                               f"{want!r}", f"expect: {want}", None, line=a.line))
    return [Failure(f.rule, f.ref, f.message, f.constraint, f.value, f.line, False)
            for f in out]


LIST_KEY = {"tools": "name", "prompts": "name", "resources": "uri",
            "resource_templates": "uriTemplate"}
LIST_METHOD = {"tools": ("tools/list", "tools"), "prompts": ("prompts/list", "prompts"),
               "resources": ("resources/list", "resources"),
               "resource_templates": ("resources/templates/list", "resourceTemplates")}


def check_capabilities(p: ProbeSpec, init: dict[str, Any], sampling_announced: bool,
                       line: int) -> list[Failure]:
    m = p.model
    caps = init.get("capabilities") if isinstance(init.get("capabilities"), dict) else {}
    assert isinstance(caps, dict)
    out: list[Failure] = []
    want = m.capabilities
    assert isinstance(want, Capabilities)
    for name in want.model_fields_set:
        expected = getattr(want, name)
        ref = p.at("capabilities", name)
        if name == "sampling":
            if bool(expected) != sampling_announced:
                out.append(Failure(PROBE_CAPABILITY.id, ref,
                                   "agent-eval " + ("did not announce" if expected else
                                                    "announced") + " the sampling capability "
                                   "(it does when the server or a probe configures a sampling "
                                   "answer)", f"sampling: {str(expected).lower()}",
                                   sampling_announced, line=line, repeat=False))
            continue
        key = _CAP_WIRE.get(name, name)
        got = caps.get(key)
        if expected is True and got is None:
            out.append(Failure(PROBE_CAPABILITY.id, ref, f"the server does not announce the "
                               f"'{key}' capability", f"{name}: true", None, line=line,
                               repeat=False))
        elif expected is False and got is not None:
            out.append(Failure(PROBE_CAPABILITY.id, ref, f"the server announces the '{key}' "
                               "capability, expected it not to", f"{name}: false", got,
                               line=line, repeat=False))
        elif isinstance(expected, dict):
            have = got if isinstance(got, dict) else {}
            for sub, value in expected.items():
                if have.get(sub, _MISSING) != value:
                    out.append(Failure(PROBE_CAPABILITY.id, p.at("capabilities", name, sub),
                                       f"the server's '{key}' capability has {sub} = "
                                       f"{have.get(sub)!r}, expected {value!r}",
                                       f"{name}.{sub}: {value!r}", have.get(sub), line=line,
                                       repeat=False))
    if m.protocol_version is not None:
        allowed = [m.protocol_version] if isinstance(m.protocol_version, str) \
            else list(m.protocol_version)
        got_version = init.get("protocolVersion")
        if got_version not in allowed:
            out.append(Failure(PROBE_CAPABILITY.id, p.at("protocol_version"),
                               f"the negotiated protocol version is {got_version!r}, expected "
                               f"{' or '.join(allowed)}",
                               f"protocol_version: {' | '.join(allowed)}", got_version,
                               line=line, repeat=False))
    return out


_CAP_WIRE: dict[str, str] = {}


def expand_template(template: str, values: dict[str, str]) -> str:
    """RFC 6570 level 1: ``{name}`` replaced by the percent-encoded value."""
    from urllib.parse import quote

    return re.sub(r"\{([^{}]+)\}", lambda mt: quote(values.get(mt.group(1), ""), safe=""),
                  template)


def probe_target(p: ProbeSpec) -> str:
    m = p.model
    return str(m.tool or m.resource or m.resource_template or m.prompt or m.list_)


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
