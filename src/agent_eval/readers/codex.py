"""Codex CLI rollout JSONL (``~/.codex/sessions/**/rollout-*.jsonl``; docs/formats/codex.md).

Every line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (session id, cwd,
git), ``turn_context`` (model), ``response_item`` (a Responses API item: messages,
``function_call`` / ``custom_tool_call`` / ``tool_search_call`` ... and their outputs),
``event_msg`` (``token_count`` usage, ``exec_command_end`` exit codes, ...) and
``compacted``. Older rollouts hold bare items after a ``{"id", "timestamp"}`` header.
One file is one trace; a line that is not JSON is an input error and the rest is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from agent_eval.errors import InputError
from agent_eval.jsonutil import file_lines, json_type
from agent_eval.jsonutil import loads as bounded_loads
from agent_eval.model import Location, ToolCall
from agent_eval.readers import sniffs
from agent_eval.readers.base import IgnoredEvents, ReadItem, SourceFile, native_event
from agent_eval.readers.openai import (
    OUTPUT_TYPES,
    Conversation,
    iso_ms,
    output_value,
    responses_item,
    text_of,
)
from agent_eval.readers.skeleton import dispatch
from agent_eval.rule_ids import INPUT_INVALID_EVENT, INPUT_PARSE_ERROR, INPUT_UNREADABLE_FILE

_loads = bounded_loads
_JSONDecodeError = orjson.JSONDecodeError
# System-injected "user" messages: context, not the user's request.
_INJECTED = ("<environment_context>", "<user_instructions>", "<permissions instructions>",
             "<turn_context>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
_SHELL_TOOLS = frozenset(("shell", "exec_command", "shell_command", "container.exec",
                          "local_shell", "unified_exec", "write_stdin"))
_ITEM_TYPES = frozenset(("message", "function_call", "function_call_output",
                         "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                         "local_shell_call_output", "web_search_call", "tool_search_call",
                         "tool_search_output", "reasoning"))


def exit_code(output: Any) -> int | None:
    """The exit code a shell tool's output reports: the JSON form of older Codex
    versions (``{"output", "metadata": {"exit_code"}}``) or the text header of newer
    ones (``Exit code: 1`` / ``Process exited with code 1``)."""
    if type(output) is not str:
        return None
    s = output.lstrip()
    if s.startswith("{"):
        try:
            doc = _loads(s)
        except _JSONDecodeError:
            doc = None
        md = doc.get("metadata") if type(doc) is dict else None
        ec = md.get("exit_code") if type(md) is dict else None
        return ec if type(ec) is int else None
    for ln in s.split("\n", 6)[:6]:
        for prefix in ("Exit code: ", "Process exited with code "):
            if ln.startswith(prefix):
                try:
                    return int(ln[len(prefix):].strip())
                except ValueError:
                    return None
    return None


class _Rollout:
    def __init__(self, source: SourceFile) -> None:
        self.conv = Conversation(source, "codex", 1, replays="new")
        self.called_at: dict[str, float] = {}
        self.first_ts: float | None = None
        self.last_ts: float | None = None
        self.last_total: Any = None
        self.fallback_input: str | None = None
        self.fallback_output: str | None = None
        self.started = False
        self.understood = False  # a line of a rollout, not an ignored record

    def line(self, obj: Any, line: int) -> None:
        ignored = self.conv.ignored
        self._line(obj, line)
        if self.conv.ignored == ignored:
            self.understood = True

    def _line(self, obj: Any, line: int) -> None:
        conv = self.conv
        if not self.started:
            self.started = True
            conv.trace.location = conv.trace.end_location = Location(conv.file, line)
        if type(obj) is not dict:
            conv.error(INPUT_INVALID_EVENT, line,
                       f"a rollout line must be a JSON object, not {json_type(obj)}")
            return
        conv.touch(line)
        ts = iso_ms(obj.get("timestamp"))
        if ts is not None:
            self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        kind = obj.get("type")
        if type(kind) is not str:
            kind = None
        payload = obj.get("payload")
        if "payload" not in obj:  # an older rollout: bare items after a header line
            if kind in _ITEM_TYPES:
                self.item(obj, line, ts)
            elif kind is None and "id" in obj and "timestamp" in obj:
                self.meta(obj)
            elif obj.get("record_type") == "state":
                pass
            else:
                self.ignore(obj, line)
            return
        if type(payload) is not dict:
            conv.error(INPUT_INVALID_EVENT, line,
                       f"'payload' must be a JSON object, not {json_type(payload)}")
            return
        if not dispatch(self, _LINES, kind, payload, line, ts):
            conv.ignored += 1

    def ignore(self, obj: dict[str, Any], line: int) -> None:
        """A line of no type a rollout holds: counted as ignored, and an input error when
        it is an agent-eval native event (base.native_event), whose call is not read."""
        self.conv.ignored += 1
        error = native_event(obj, "codex", self.conv.file, line)
        if error is not None:
            self.conv.errors.append(error)

    def response_item(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        self.item(p, line, ts)

    def event_msg(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        self.event(p, line)

    def session_meta(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        self.meta(p)

    def turn_context(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        if p.get("model") is not None:
            self.conv.model = str(p["model"])

    def compacted(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        """A compaction's summary: not a turn of its own."""

    def meta(self, p: dict[str, Any]) -> None:
        md = self.conv.trace.metadata
        if p.get("id") is not None:
            self.conv.trace.id = str(p["id"])
        for k in ("cwd", "cli_version", "originator", "model_provider"):
            if p.get(k) is not None:
                md[k] = p[k]
        git = p.get("git")
        if type(git) is dict and git.get("branch") is not None:
            md["git_branch"] = git["branch"]

    def item(self, p: dict[str, Any], line: int, ts: float | None) -> None:
        conv = self.conv
        t = p.get("type")
        if type(t) is not str:
            t = None
        if t == "message":
            role = p.get("role")
            if role in ("developer", "system"):
                return
            if role == "user":
                text = text_of(p.get("content"))
                if text is not None and text.lstrip().startswith(_INJECTED):
                    return
        cid = p.get("call_id") or p.get("id")
        key = None if cid is None else str(cid)
        if t in OUTPUT_TYPES:  # a patch that did not apply: status failed, as in responses
            call = conv.result(key, output_value(p), line,
                               error="status failed" if p.get("status") == "failed" else None)
            if call is not None:
                self.finished(call, key or "", ts)
            return
        n = len(conv.trace.tool_calls)
        responses_item(conv, p, line)
        if len(conv.trace.tool_calls) > n and key is not None and ts is not None:
            self.called_at[key] = ts

    def finished(self, call: ToolCall, key: str, ts: float | None) -> None:
        start = self.called_at.get(key)
        if start is not None and ts is not None and ts >= start:
            call.latency_ms = round(ts - start, 3)
        if call.name in _SHELL_TOOLS:
            code = exit_code(call.result)
            if code:
                call.ok = False
                call.error = f"exit code {code}"

    def event(self, p: dict[str, Any], line: int) -> None:
        conv = self.conv
        t = p.get("type")
        if t == "token_count":
            info = p.get("info")
            if type(info) is not dict:
                return
            total = info.get("total_token_usage")
            if total is not None and total == self.last_total:
                return  # the same totals reported again: no new model call
            self.last_total = total
            last = info.get("last_token_usage")
            if type(last) is dict:
                conv.llm(None, last, line)
            return
        cid = p.get("call_id")
        calls = conv.by_id.get(str(cid), []) if cid is not None else []
        call = calls[-1] if calls else None
        if t == "exec_command_end" and call is not None:
            code = p.get("exit_code")
            if type(code) is int and code != 0:
                call.ok = False
                call.error = f"exit code {code}"
        elif t == "patch_apply_end" and call is not None and p.get("success") is False:
            call.ok = False
            err = p.get("stderr")
            call.error = err if type(err) is str and err else "patch failed"
        elif t == "mcp_tool_call_end" and call is not None:
            res = p.get("result")
            if type(res) is dict and "Err" in res:
                call.ok = False
                call.error = str(res["Err"])
            elif type(res) is dict and type(res.get("Ok")) is dict and \
                    res["Ok"].get("isError") is True:
                call.ok = False
                call.error = text_of(res["Ok"].get("content")) or "error"
        elif t == "user_message" and self.fallback_input is None:
            msg = p.get("message")
            if type(msg) is str:
                self.fallback_input = msg
        elif t == "agent_message":
            msg = p.get("message")
            if type(msg) is str:
                self.fallback_output = msg

    def finish(self) -> Iterator[ReadItem]:
        conv = self.conv
        tr = conv.trace
        if tr.input is None:
            tr.input = self.fallback_input
        if tr.output is None:
            tr.output = self.fallback_output
        if self.first_ts is not None and self.last_ts is not None:
            tr.duration_ms = round(self.last_ts - self.first_ts, 3)
        conv.report_unmatched()
        yield from conv.finish()


_LINES = {"response_item": _Rollout.response_item, "event_msg": _Rollout.event_msg,
          "session_meta": _Rollout.session_meta, "turn_context": _Rollout.turn_context,
          "compacted": _Rollout.compacted}


class CodexReader:
    name = "codex"

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.codex(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        rollout = _Rollout(source)
        errors: list[InputError] = []
        try:
            with open(source.path, "rb") as fh:
                for number, raw in file_lines(fh, source.limits):
                    if number == 1:
                        raw = raw.removeprefix(b"\xef\xbb\xbf")
                    if not raw.strip():
                        continue
                    try:
                        obj = _loads(raw)
                    except _JSONDecodeError as exc:
                        errors.append(INPUT_PARSE_ERROR.input_error(
                            source.file, number,
                            f"line is not valid JSON ({exc}); fix or remove the line"))
                        continue
                    rollout.line(obj, number)
        except OSError as exc:
            yield INPUT_UNREADABLE_FILE.input_error(source.file, 0,
                                                    f"cannot read the file: {exc}")
            return
        yield from errors
        if not rollout.started:
            if not errors:
                yield INPUT_INVALID_EVENT.input_error(
                    source.file, 0,
                    "the file holds no rollout lines (it is empty)")
            return
        if not rollout.understood:  # every line ignored: another format's file
            yield from rollout.conv.errors
            yield INPUT_INVALID_EVENT.input_error(
                source.file, 1, "no Codex rollout line in this file (lines of type "
                "session_meta / response_item / event_msg / turn_context with a 'payload', "
                "or the items of an older rollout); is it another format?")
            yield IgnoredEvents(source.file, rollout.conv.ignored)
            return
        yield from rollout.finish()


READER = CodexReader()
