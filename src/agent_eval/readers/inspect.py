"""Inspect AI eval logs (docs/formats/inspect.md): the ``.json`` log and the ``.eval``
archive (a zip with ``header.json`` and one ``samples/<id>_epoch_<n>.json`` per sample).

One trace per sample (and epoch). Tool calls come from the sample's ``tool`` events
(arguments, result, ``error``, working time) and LLM calls from its ``model`` events
(usage, time); a log without events falls back to the sample's messages. Strings
``attachment://<hash>`` are replaced by the sample's ``attachments``.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from agent_eval import zipdir
from agent_eval.errors import InputError
from agent_eval.model import LlmCall, Location, ToolCall, Trace
from agent_eval.readers import sniffs
from agent_eval.readers._foreign import (
    JsonDoc,
    as_dict,
    count,
    new_trace,
    num,
    parse_document,
    read_bytes,
    set_result,
    span_ms,
    text_of,
    touch,
)
from agent_eval.readers._scores import inspect_scores
from agent_eval.readers.base import CallIndex, ReadItem, SourceFile, reused_call_id
from agent_eval.readers.native import decode_arguments
from agent_eval.rule_ids import (
    INPUT_INVALID_EVENT,
    INPUT_LIMIT_EXCEEDED,
    INPUT_PARSE_ERROR,
    INPUT_UNREADABLE_FILE,
)
from agent_eval.safetext import clean_text

NAME = "inspect"
ATTACHMENT = "attachment://"
_SAMPLE_MEMBER = re.compile(r"^samples/.+\.json$")
LineAt = Callable[..., int]


def _resolver(attachments: Any) -> Callable[[Any], Any]:
    table = attachments if isinstance(attachments, dict) else {}

    def resolve(value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith(ATTACHMENT):
                return table.get(value[len(ATTACHMENT):], value)
            return value
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    return resolve


def _error_text(error: Any) -> str | None:
    if error is None:
        return None
    if isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        if kind and message:
            return f"{kind}: {message}"
        return str(message or kind or error)
    return str(error)


def _seconds_ms(value: Any) -> float | None:
    v = num(value)
    return None if v is None else round(float(v) * 1000.0, 3)


def _walk(events: Any, path: tuple[str | int, ...]) -> Iterator[tuple[dict[str, Any],
                                                                     tuple[str | int, ...]]]:
    """Events in order; the sub-events a tool event holds follow it."""
    if not isinstance(events, list):
        return
    for j, e in enumerate(events):
        if isinstance(e, dict):
            yield e, (*path, j)
            if e.get("event") == "tool":
                yield from _walk(e.get("events"), (*path, j, "events"))


class _Sample:
    def __init__(self, sample: dict[str, Any], at: LineAt, base: tuple[str | int, ...],
                 source: SourceFile, file_meta: dict[str, Any]) -> None:
        self.s = sample
        self.at = at
        self.base = base
        self.file = source.file
        self.resolve = _resolver(sample.get("attachments"))
        sid, epoch = sample.get("id"), sample.get("epoch")
        tid = str(sid) if epoch is None else f"{sid}/epoch-{epoch}"
        self.trace = new_trace(tid, source, at(*base), NAME)
        self.trace.metadata.update(file_meta)
        self.errors: list[InputError] = []

    def items(self) -> Iterator[ReadItem]:
        """The sample's input errors, then its trace."""
        trace = self.build()
        yield from self.errors
        yield trace

    def loc(self, *path: str | int) -> Location:
        line = self.at(*self.base, *path)
        touch(self.trace, line)
        return Location(self.file, line)

    def build(self) -> Trace:
        s, tr = self.s, self.trace
        tr.input = self.request(s.get("input"))
        events = list(_walk(s.get("events"), ("events",)))
        tools = [(e, p) for e, p in events if e.get("event") == "tool"]
        models = [(e, p) for e, p in events if e.get("event") == "model"]
        if tools:
            self.tool_events(tools)
        else:
            self.message_calls()
        if models:
            for e, p in models:
                self.model_event(e, p)
        else:
            self.message_models()
        tr.output = self.answer()
        tr.duration_ms = _seconds_ms(s.get("total_time"))
        usage = s.get("model_usage")
        if isinstance(usage, dict) and usage:
            totals = [count(u.get("total_tokens")) if isinstance(u, dict) else None
                      for u in usage.values()]
            if all(t is not None for t in totals):
                tr.total_tokens = sum(t for t in totals if t is not None)
            costs = [num(u.get("total_cost")) if isinstance(u, dict) else None
                     for u in usage.values()]
            if all(c is not None for c in costs):
                tr.cost_usd = float(sum(c for c in costs if c is not None))
        for key in ("uuid", "epoch", "target"):
            if s.get(key) is not None:
                tr.metadata[f"sample_{key}" if key != "target" else "target"] = s[key]
        if s.get("error"):
            tr.metadata["error"] = _error_text(s["error"])
        if isinstance(s.get("scores"), dict):
            inspect_scores(tr, s["scores"], self.loc("scores"))
        touch(tr, self.at(*self.base))
        return tr

    def request(self, value: Any) -> Any:
        value = self.resolve(value)
        if isinstance(value, list):
            for m in value:
                if isinstance(m, dict) and m.get("role") == "user":
                    text = text_of(m.get("content"))
                    return text if text is not None else m.get("content")
        return value

    def answer(self) -> Any:
        messages = self.s.get("messages")
        for m in reversed(messages if isinstance(messages, list) else []):
            if isinstance(m, dict) and m.get("role") == "assistant":
                text = text_of(self.resolve(m.get("content")))
                if text:
                    return text
        output = self.resolve(self.s.get("output"))
        if isinstance(output, dict):
            choices = output.get("choices")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                msg = choices[0].get("message")
                if isinstance(msg, dict):
                    return text_of(msg.get("content"))
            if isinstance(output.get("completion"), str):
                return output["completion"]
        return None

    # ---------------------------------------------------------------- events
    def tool_events(self, tools: list[tuple[dict[str, Any], tuple[str | int, ...]]]) -> None:
        by_id = CallIndex()
        for e, path in tools:
            name = e.get("function")
            if not isinstance(name, str) or not name:
                continue
            args, why = decode_arguments(self.resolve(e.get("arguments")))
            cid = None if e.get("id") is None else str(e["id"])
            latency = _seconds_ms(e.get("working_time"))
            if latency is None:
                latency = span_ms(e.get("timestamp"), e.get("completed"))
            call = ToolCall(name=name, arguments=args, location=self.loc(*path), id=cid,
                            arguments_error=why, latency_ms=latency)
            calls = self.trace.tool_calls
            assert isinstance(calls, list)  # this reader makes lists, never a CallLog
            if cid is not None:
                first = by_id.first(cid)
                same = by_id.same(cid, name, args, why) if first is not None else None
                if same is not None:  # a pending event completed later
                    calls.remove(same)
                    by_id.remove(cid, same)
                elif first is not None:  # another call under that id: a call of its own
                    self.errors.append(reused_call_id(cid, first, self.file,
                                                      call.location.line))
                by_id.add(cid, call)
            calls.append(call)
            if e.get("pending") is True:
                continue
            result = self.resolve(e.get("result"))
            text = text_of(result)
            error = _error_text(e.get("error"))
            failed = error is not None or e.get("failed") is True
            set_result(call, text if text is not None else result,
                       error if error is not None else "failed", not failed, None)

    def model_event(self, e: dict[str, Any], path: tuple[str | int, ...]) -> None:
        output = as_dict(e.get("output"))
        usage = as_dict(output.get("usage"))
        i, o, t = (count(usage.get("input_tokens")), count(usage.get("output_tokens")),
                   count(usage.get("total_tokens")))
        if t is not None and o is not None and t >= o:
            i = t - o  # all input tokens, cached ones too, whatever the provider
        elif t is None and i is not None and o is not None:
            t = i + o
        model = output.get("model") if isinstance(output.get("model"), str) else e.get("model")
        cost = num(usage.get("total_cost"))
        latency = _seconds_ms(output.get("time"))
        if latency is None:
            latency = _seconds_ms(e.get("working_time"))
        self.trace.llm_calls.append(LlmCall(
            location=self.loc(*path), model=model if isinstance(model, str) else None,
            input_tokens=i, output_tokens=o, total_tokens=t,
            cost_usd=None if cost is None else float(cost), latency_ms=latency))

    # -------------------------------------------------------------- messages
    def message_calls(self) -> None:
        messages = self.s.get("messages")
        by_id: dict[str, ToolCall] = {}
        for k, m in enumerate(messages if isinstance(messages, list) else []):
            if not isinstance(m, dict):
                continue
            if m.get("role") == "assistant":
                calls = m.get("tool_calls")
                for j, tc in enumerate(calls if isinstance(calls, list) else []):
                    if not isinstance(tc, dict) or not isinstance(tc.get("function"), str):
                        continue
                    args, why = decode_arguments(self.resolve(tc.get("arguments")))
                    cid = None if tc.get("id") is None else str(tc["id"])
                    call = ToolCall(name=tc["function"], arguments=args,
                                    location=self.loc("messages", k, "tool_calls", j), id=cid,
                                    arguments_error=why)
                    self.trace.tool_calls.append(call)
                    if cid is not None:
                        by_id[cid] = call
            elif m.get("role") == "tool":
                cid = m.get("tool_call_id")
                known = by_id.get(str(cid)) if cid is not None else None
                loc = self.loc("messages", k)
                if known is None:  # the result names its function: keep the call it proves
                    name = m.get("function")
                    call = ToolCall(name=name if isinstance(name, str) and name else "unknown",
                                    arguments=None, location=loc,
                                    id=None if cid is None else str(cid),
                                    arguments_recorded=False)
                    self.trace.tool_calls.append(call)
                    loc_result = None
                else:
                    call, loc_result = known, loc
                content = self.resolve(m.get("content"))
                text = text_of(content)
                error = _error_text(m.get("error"))
                set_result(call, text if text is not None else content, error, error is None,
                           loc_result)

    def message_models(self) -> None:
        messages = self.s.get("messages")
        for k, m in enumerate(messages if isinstance(messages, list) else []):
            if isinstance(m, dict) and m.get("role") == "assistant":
                model = m.get("model")
                self.trace.llm_calls.append(LlmCall(
                    location=self.loc("messages", k),
                    model=model if isinstance(model, str) else None))


def _file_meta(header: Any) -> dict[str, Any]:
    ev = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(ev, dict):
        return {}
    meta = {k: ev[k] for k in ("task", "model", "eval_id", "run_id") if isinstance(
        ev.get(k), str)}
    if isinstance(header, dict) and isinstance(header.get("status"), str):
        meta["status"] = header["status"]
    return meta


class InspectReader:
    name = NAME

    def sniff(self, head: bytes, source: SourceFile) -> bool:
        return sniffs.inspect(head, source)

    def read(self, source: SourceFile) -> Iterator[ReadItem]:
        try:
            with open(source.path, "rb") as fh:
                magic = fh.read(4)
        except OSError as exc:
            yield INPUT_UNREADABLE_FILE.input_error(source.file, 0,
                                                    f"cannot read the file: {exc}")
            return
        if magic == b"PK\x03\x04":
            yield from self._archive(source)
        else:
            yield from self._json(source)

    def _json(self, source: SourceFile) -> Iterator[ReadItem]:
        data = read_bytes(source)
        if isinstance(data, InputError):
            yield data
            return
        doc = parse_document(data, source.file)
        if isinstance(doc, InputError):
            yield doc
            return
        log = doc.value
        samples = log.get("samples") if isinstance(log, dict) else None
        if not isinstance(samples, list) or not samples:
            yield INPUT_INVALID_EVENT.input_error(
                source.file, 1,
                "this Inspect log holds no samples (was it written with "
                "log_samples off, or is the run still going?)")
            return
        meta = _file_meta(log)
        for i, sample in enumerate(samples):
            if isinstance(sample, dict):
                yield from _Sample(sample, doc.line, ("samples", i), source, meta).items()
            else:
                yield INPUT_INVALID_EVENT.input_error(source.file, doc.line("samples", i),
                                                      "a sample must be a JSON object")

    def _archive(self, source: SourceFile) -> Iterator[ReadItem]:
        try:
            too_large = _directory_over_limits(source)
            zf = None if too_large else zipfile.ZipFile(source.path)
        except (zipfile.BadZipFile, OSError) as exc:
            yield INPUT_PARSE_ERROR.input_error(source.file, 0,
                                                f"not a readable .eval archive ({exc})")
            return
        if zf is None:
            yield INPUT_LIMIT_EXCEEDED.input_error(source.file, 0, too_large)
            return
        budget = [source.limits.max_archive_bytes]  # decompressed bytes still allowed
        with zf:
            names = zf.namelist()
            header: Any = None
            for name in ("header.json", "_journal/start.json"):
                if name in names:
                    raw = _member(zf, name, source, budget)
                    if isinstance(raw, InputError):
                        yield raw
                        continue
                    doc = parse_document(raw, f"{source.file}!{name}")
                    if isinstance(doc, JsonDoc):
                        header = doc.value
                        break
            meta = _file_meta(header)
            # each entry by its own header: a name written twice (zipfile reads the last
            # entry under a name) is read twice, never one of them passed over
            members = [i for i in zf.infolist() if _SAMPLE_MEMBER.match(i.filename)]
            yield from _odd_members(zf, source)
            if not members:
                yield INPUT_INVALID_EVENT.input_error(
                    source.file, 0,
                    "this .eval archive holds no samples/*.json (was it written "
                    "with log_samples off, or is the run still going?)")
                return
            for info in members:
                name = info.filename
                raw = _member(zf, info, source, budget)
                if isinstance(raw, InputError):
                    yield raw
                    if raw.rule == INPUT_LIMIT_EXCEEDED.id and budget[0] <= 0:
                        return  # the archive's budget is spent: the rest is not read
                    continue
                doc = parse_document(raw, f"{source.file}!{name}")
                if isinstance(doc, InputError):
                    yield InputError(doc.rule, source.file, doc.line,
                                     f"{name}: {doc.message}")
                    continue
                if not isinstance(doc.value, dict):
                    yield INPUT_INVALID_EVENT.input_error(source.file, 1,
                                                          f"{name}: a sample must be a JSON object")
                    continue
                yield from _Sample(doc.value, doc.line, (), source,
                                   {**meta, "member": name}).items()


def _directory_over_limits(source: SourceFile) -> str:
    """Why the archive's central directory is not read ("" when it may be): zipfile reads
    it whole, an object per member, so it is held first to ``max_archive_members`` (the
    members it declares, and the entries counted in its bytes) and ``max_file_bytes``
    (:func:`agent_eval.zipdir.excess`)."""
    lim = source.limits
    try:
        over = zipdir.excess(source.path, max_members=lim.max_archive_members,
                             max_bytes=lim.max_file_bytes)
    except zipdir.NotAZipError:
        return ""  # zipfile.ZipFile says so
    if over is None:
        return ""
    if over.kind == "declared":
        return (f"the archive declares {over.value:,} members, more than "
                f"limits.max_archive_members ({lim.max_archive_members:,}); it was "
                "not read")
    if over.kind == "bytes":
        return (f"the archive's central directory is {over.value:,} bytes, more than "
                f"limits.max_file_bytes ({lim.max_file_bytes:,}); it was not read")
    return (f"the archive's central directory holds {over.value:,} members, more than "
            f"limits.max_archive_members ({lim.max_archive_members:,}); it was not "
            "read")


def _odd_members(zf: zipfile.ZipFile, source: SourceFile) -> Iterator[InputError]:
    """The members no Inspect writer makes that may hold a sample, each an input error:
    a name written twice (both are read) and a sample's name with another path
    (``../samples/1.json``, ``/samples/1.json``, ``samples\\1.json``: not read)."""
    seen: set[str] = set()
    for info in zf.infolist():
        name = info.filename
        if name in seen and _SAMPLE_MEMBER.match(name):
            yield INPUT_INVALID_EVENT.input_error(
                source.file, 0, f"{clean_text(name, 200)}: the archive holds two members of "
                "this name (a zip tool reads one of them); both are read")
        seen.add(name)
        if not _SAMPLE_MEMBER.match(name) and name.lower().endswith(".json") and (
                "samples/" in name.replace("\\", "/").lower()):
            yield INPUT_INVALID_EVENT.input_error(
                source.file, 0, f"{clean_text(name, 200)}: a member named like a sample "
                "but not samples/<id>_epoch_<n>.json: it was not read; is the archive "
                "an Inspect log?")


def _member(zf: zipfile.ZipFile, name: str | zipfile.ZipInfo, source: SourceFile,
            budget: list[int]) -> bytes | InputError:
    """One archive member, decompressed no further than the limits allow: at most
    ``max_file_bytes`` for it and what is left of ``max_archive_bytes`` for the archive
    (a zip bomb stops there). A member that cannot be decompressed (a flipped byte, an
    unsupported method, a password) is an input error; the other members are read."""
    lim = source.limits
    cap = min(lim.max_file_bytes, budget[0])
    entry, name = name, name if isinstance(name, str) else name.filename
    try:
        with zf.open(entry) as fh:
            data = fh.read(cap + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError,
            RuntimeError, ValueError) as exc:
        return INPUT_PARSE_ERROR.input_error(
            source.file, 0,
            f"{name}: cannot be read from the archive ({exc}); the archive "
            "is damaged")
    budget[0] -= len(data)
    if len(data) > cap:
        which = ("max_file_bytes" if cap == lim.max_file_bytes else "max_archive_bytes")
        return INPUT_LIMIT_EXCEEDED.input_error(
            source.file, 0,
            f"{name}: decompresses to more than {cap} bytes (limits.{which}); "
            "it was not read")
    return data


READER = InspectReader()
