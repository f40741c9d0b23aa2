"""One MCP client session with a server, on the official ``mcp`` SDK, recorded.

The SDK's transport streams are wrapped so that every JSON-RPC message, in both
directions, is appended to a trace file as it passes (``{"timestamp", "direction",
"message"}`` per line: the MCP format the ``mcp`` reader reads). Requests go through
``ClientSession.send_request`` with a plain-dict result type, so the checks see each
answer as it was on the wire. Only this module (and :mod:`agent_eval.live.runner`)
imports the SDK.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TextIO

import anyio
import mcp_types as types
import orjson
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter, ValidationError

from agent_eval._version import __version__
from agent_eval.limits import DEFAULT
from agent_eval.live.checks import Answer
from agent_eval.live.compile import ServerSpec
from agent_eval.live.models import SamplingResponse

RAW: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
STDERR_TAIL = 2000  # characters of a failed server's stderr kept
STDERR_SHOWN = 600  # characters of its end quoted in an error (escaped: a message holds it
# whole, as a probe's finding and an input error, both of bounded length, show it)
MAX_PAGES = 100  # pages of a paginated listing read at most
MAX_HTTP_BODY = DEFAULT.max_file_bytes  # bytes of one HTTP response read at most (as a
# JSON line of a trace: the session's reader would refuse a longer answer)
RAW_KEPT = 16 << 20  # characters of a line that is no message kept in the trace (as record)
# what a session keeps of the lines that are no message: a server printing without end
# wrote 29 MB to its session trace in a 3 s start-up (10 minutes at most: gigabytes); the
# rest is counted, in one line at the end
RAW_LINES_KEPT = 10_000
RAW_BYTES_KEPT = 64 << 20


class StartError(Exception):
    """The server could not be started or did not answer initialize."""


class StderrTail:
    """A server's stderr: a pipe that a thread reads as it comes, keeping only the last
    bytes. A server that writes without end fills neither the disk nor the memory, and
    never blocks on a full pipe."""

    KEEP = STDERR_TAIL * 4  # bytes: at least STDERR_TAIL characters of UTF-8

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.file: TextIO = open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 - the
        # server's stderr; ours is closed by started() once the server has its copy
        self._kept = bytearray()
        self._lock = threading.Lock()
        self._waited = False
        self._fd = read_fd  # closed by release() once the pipe has ended
        self._reader = threading.Thread(target=self._read, args=(read_fd,), daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(fd, 65536):
                with self._lock:
                    self._kept += chunk
                    if len(self._kept) > 2 * self.KEEP:
                        del self._kept[:-self.KEEP]

    def started(self) -> None:
        """Close our end of the pipe: it ends when the server (and what it started)
        closes its own."""
        self.file.close()

    def release(self) -> None:
        """After the session (the SDK has stopped the server): what the server started
        that still holds its stderr — it outlived a server that exited by itself (the
        SDK stops the process group only of a server still running), or left the group
        (``setsid``, a daemon) — is killed by its pid, as ``agent-eval record`` does with
        what holds the server's output (Linux; elsewhere it is left running)."""
        from agent_eval.live.holders import stop_holders

        self.file.close()
        self._reader.join(0.5)
        if self._reader.is_alive() and stop_holders(self._fd):
            self._reader.join(1.0)
        if not self._reader.is_alive():  # else a holder that could not be killed reads
            os.close(self._fd)  # on: its descriptor stays open

    def tail(self) -> str:
        if not self._waited:  # what a server that exited wrote last (once: a process it
            # started may hold its stderr, and every later call fails at once)
            self._reader.join(0.2)
            self._waited = True
        with self._lock:
            data = bytes(self._kept[-self.KEEP:])
        text = data.decode("utf-8", errors="replace").strip()
        return text[-STDERR_TAIL:]


# --------------------------------------------------------------------- recording
class Recorder:
    """Appends each message with a timestamp to the session's trace file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fh: IO[bytes] = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.lines = 0
        self.requests: list[tuple[int, str, Any]] = []  # (line, method, id) sent by us
        # id -> line of the server's last response with that id (not of ours to its
        # requests: ids are per direction)
        self.answered: dict[int | str, int] = {}
        self.raw: list[int] = []  # lines of what the server sent that is no message
        self.raw_bytes = 0  # of those kept as text
        self.dropped = 0  # lines that are no message not kept (RAW_LINES/BYTES_KEPT)
        self.dropped_bytes = 0

    def write(self, direction: str, message: dict[str, Any]) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="microseconds")
        self.fh.write(orjson.dumps({"timestamp": stamp, "direction": direction,
                                    "message": message}) + b"\n")
        self.lines += 1
        if direction == "client_to_server" and "method" in message and "id" in message:
            self.requests.append((self.lines, str(message["method"]), message["id"]))
        elif direction == "server_to_client" and "method" not in message and isinstance(
                message.get("id"), int | str):
            # the server's response (result or error); ours to its requests use its ids
            self.answered[message["id"]] = self.lines

    def write_raw(self, direction: str, text: str) -> None:
        """A line that is no JSON-RPC message, kept as ``raw`` text (as ``agent-eval
        record`` keeps it); over :data:`RAW_KEPT` characters, its size only."""
        data = text.encode("utf-8", "replace")
        # the bytes it adds to the trace: a line kept as its size only adds none of its
        # own (it counted whole, 4 lines of 17 MiB dropped every later one, and a line
        # over 64 MiB was not even kept as its size)
        size = len(data) if len(text) <= RAW_KEPT else 0
        if len(self.raw) >= RAW_LINES_KEPT or self.raw_bytes + size > RAW_BYTES_KEPT:
            self.dropped += 1  # counted, said in one line at the end (close)
            self.dropped_bytes += len(data)
            return
        self.raw_bytes += size
        stamp = datetime.now(UTC).isoformat(timespec="microseconds")
        entry: dict[str, Any] = {"timestamp": stamp, "direction": direction}
        if len(text) > RAW_KEPT:
            entry.update(truncated=True, bytes=len(data))
        else:
            entry["raw"] = data.decode("utf-8")
        self.fh.write(orjson.dumps(entry) + b"\n")
        self.lines += 1
        self.raw.append(self.lines)

    def request_line(self, mark: int, method: str) -> int:
        """The line of the first ``method`` request sent since ``len(requests)`` was
        ``mark``."""
        return next((line for line, m, _ in self.requests[mark:] if m == method), 0)

    def was_answered(self, mark: int, method: str) -> bool:
        """Whether the server sent a response to the first ``method`` request sent
        since ``len(requests)`` was ``mark``: one with its id, after it (a response sent
        before the request, for an id not yet used, is no answer to it)."""
        sent = next(((line, i) for line, m, i in self.requests[mark:] if m == method),
                    None)
        return sent is not None and self.answered.get(sent[1], 0) > sent[0]

    def close(self) -> None:
        if self.dropped:
            stamp = datetime.now(UTC).isoformat(timespec="microseconds")
            self.fh.write(orjson.dumps({
                "timestamp": stamp, "direction": "server_to_client", "truncated": True,
                "lines": self.dropped, "bytes": self.dropped_bytes,
                "note": f"{self.dropped} more line(s) that are no message, not kept (a "
                        f"session keeps {RAW_LINES_KEPT:,} of them, {RAW_BYTES_KEPT >> 20} "
                        "MiB at most)"}) + b"\n")
            self.lines += 1
        self.fh.close()


def _raw_text(exc: ValidationError) -> str:
    """The text the SDK could not read as a JSON-RPC message (the line, or the JSON value
    it parsed from it)."""
    errors = exc.errors(include_url=False)
    value = errors[0].get("input") if errors else None
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


class _QuietParseErrors(logging.Filter):
    """The SDK's stdio client logs a traceback for each line of the server's stdout that
    is no JSON-RPC message: the line is kept in the session trace instead (a server that
    logs to its stdout wrote a traceback to agent-eval's stderr per line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Failed to parse JSONRPC message from server"


logging.getLogger("mcp.client.stdio").addFilter(_QuietParseErrors())


def _dump(item: SessionMessage) -> dict[str, Any]:
    data: dict[str, Any] = item.message.model_dump(by_alias=True, exclude_unset=True,
                                                   mode="json")
    return data


class _RecordingReader:
    def __init__(self, inner: Any, recorder: Recorder, http: bool = False) -> None:
        self.inner = inner
        self.recorder = recorder
        self.http = http  # the SDK's HTTP client makes up errors the server never sent

    async def receive(self) -> Any:
        item = await self.inner.receive()
        if isinstance(item, SessionMessage) and not (
                self.http and isinstance(item.message, types.JSONRPCError)
                and _http_stand_in(item.message.error)):
            self.recorder.write("server_to_client", _dump(item))
        elif isinstance(item, ValidationError):  # a line that is no JSON-RPC message
            self.recorder.write_raw("server_to_client", _raw_text(item))
        return item

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __aiter__(self) -> _RecordingReader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _RecordingReader:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _RecordingWriter:
    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    async def send(self, item: SessionMessage, /) -> None:
        self.recorder.write("client_to_server", _dump(item))
        await self.inner.send(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _RecordingWriter:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ------------------------------------------------------------------------ answers
def describe(exc: BaseException) -> str:
    """A one-line reason, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def resolve_command(command: str) -> str | None:
    """``command`` on PATH, else next to the running Python (a virtualenv's bin)."""
    if os.sep in command or (os.altsep and os.altsep in command):
        return command
    found = shutil.which(command)
    if found is None:
        found = shutil.which(command, path=str(Path(sys.executable).parent))
    return found


def expand_env(value: str) -> str:
    """``${NAME}`` in an env value: from agent-eval's environment (empty if unset)."""
    import re

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                  lambda m: os.environ.get(m.group(1), ""), value)


# ------------------------------------------------------------------------ session
class Session:
    """An initialised session with one server. Use :func:`open_session`."""

    def __init__(self, spec: ServerSpec, recorder: Recorder) -> None:
        self.spec = spec
        self.recorder = recorder
        self.session: ClientSession | None = None
        self.init: dict[str, Any] = {}
        self.protocol_version: str | None = None
        self.respond: SamplingResponse | None = spec.model.sampling  # the current answer
        self.sampled: list[dict[str, Any]] = []  # sampling requests of the current call
        self.sampling_announced = False
        self._stderr: StderrTail | None = None

    # -- sampling
    async def _sample(self, context: ClientRequestContext,
                      params: types.CreateMessageRequestParams
                      ) -> types.CreateMessageResult | types.ErrorData:
        del context
        self.sampled.append(params.model_dump(by_alias=True, exclude_none=True, mode="json"))
        answer = self.respond
        if answer is None:
            return types.ErrorData(code=types.INVALID_REQUEST,
                                   message="sampling is not configured for this server "
                                   "in the agent-eval suite")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=answer.text),
            model=answer.model, stop_reason=answer.stop_reason)

    def stderr_tail(self) -> str:
        return self._stderr.tail() if self._stderr is not None else ""

    # -- requests
    async def request(self, method: str, params: dict[str, Any] | None,
                      timeout_ms: float) -> Answer:
        """Send one request; never raises for what the server does."""
        assert self.session is not None
        self.sampled = []
        answer = Answer(method)
        mark = len(self.recorder.requests)
        dropped = self.recorder.dropped  # lines that are no message, not kept, till now
        request = _REQUESTS[method](params)
        start = time.perf_counter()
        try:
            result = await self.session.send_request(  # type: ignore[type-var]
                request, RAW, request_read_timeout_seconds=timeout_ms / 1000.0)
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED and not self.recorder.was_answered(
                    mark, method):
                # the SDK's own error for a server that went away: not the server's answer
                answer.broken = True
                answer.error = ("the connection to the server closed before it answered "
                                f"({exc.error.message})" + _tail(self))
            elif self.spec.model.url is not None and _http_stand_in(exc.error):
                answer.broken = True
                answer.error = ("no JSON-RPC answer came over HTTP; the SDK's HTTP client "
                                f"says: {exc.error.message}")
            else:
                answer.code = exc.error.code
                if exc.error.code == types.REQUEST_TIMEOUT:
                    answer.timed_out = True
                answer.error = exc.error.message
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream,
                OSError) as exc:
            answer.broken = True
            answer.error = f"the connection to the server closed ({describe(exc)})" + _tail(
                self)
        except ValidationError as exc:  # the SDK checks every result against the protocol
            answer.broken = True
            first = exc.errors()[0] if exc.errors() else None
            where = ".".join(str(x) for x in first["loc"]) if first else ""
            answer.error = (f"the server's answer is not a valid {method} result"
                            + (f" ({where}: {first['msg']})" if first else ""))
        else:
            answer.result = result
            if method == "tools/call" and result.get("isError") is True:
                answer.error = _text(result.get("content")) or "isError: true (no text)"
        answer.latency_ms = round((time.perf_counter() - start) * 1000.0, 1)
        answer.line = self.recorder.request_line(mark, method)
        unread = ([n for n in self.recorder.raw if n > answer.line]
                  if answer.timed_out and answer.line else [])
        more = self.recorder.dropped - dropped
        if answer.timed_out and answer.line and (unread or more):  # perhaps the answer
            where = (f", the first at line {unread[0]} of the session trace" if unread
                     else " (not kept in the session trace: too many)")
            answer.error = (f"{answer.error}; meanwhile the server sent {len(unread) + more}"
                            " line(s) that are no JSON-RPC message the SDK could read"
                            + where)
        answer.sampling = self.sampled
        self.sampled = []
        return answer

    async def list_all(self, method: str, key: str, timeout_ms: float
                       ) -> tuple[list[dict[str, Any]], Answer]:
        """Every page of a listing (at most MAX_PAGES). A listing that cannot be read
        whole is a failed answer (``broken``), never a shorter or repeated listing: a
        ``nextCursor`` the server gave before (a loop would list its items again and
        again), or more than MAX_PAGES pages."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        first: Answer | None = None
        for _ in range(MAX_PAGES):
            answer = await self.request(method, {"cursor": cursor} if cursor else None,
                                        timeout_ms)
            first = first or answer
            if not answer.ok or answer.result is None:
                return items, answer
            page = answer.result.get(key)
            items.extend(x for x in page if isinstance(x, dict)) if isinstance(
                page, list) else None
            nxt = answer.result.get("nextCursor")
            if not isinstance(nxt, str) or not nxt:
                assert first is not None
                return items, first
            if nxt in seen:
                return items, _unreadable(answer, f"the server's {method} gave the cursor "
                                          f"{nxt[:100]!r} twice: its pages loop")
            seen.add(nxt)
            cursor = nxt
        return items, _unreadable(answer, f"the server's {method} has more than {MAX_PAGES} "
                                  "pages; agent-eval reads at most that many")


# The errors the SDK's Streamable HTTP client makes up for a request whose answer it did
# not get (mcp/client/streamable_http.py): an HTTP error status without a JSON-RPC error
# in its body, another content type, a body or an event that is not JSON-RPC, an event
# over its size limit, a stream that ended or failed. They reach the session as if the
# server had sent them; none is the server's answer (a server's own error with one of
# these texts fails the same way: never a pass).
_HTTP_STAND_INS: tuple[tuple[int, str], ...] = (
    (types.INTERNAL_ERROR, "Server returned an error response"),
    (types.INVALID_REQUEST, "Session terminated"),
    (types.INVALID_REQUEST, "Unexpected content type:"),
    (types.PARSE_ERROR, "Failed to parse JSON response:"),
    (types.PARSE_ERROR, "Failed to parse SSE message:"),
    (types.CONNECTION_CLOSED, "SSE stream "),
)


def _http_stand_in(error: types.ErrorData) -> bool:
    return any(error.code == code and error.message.startswith(text)
               for code, text in _HTTP_STAND_INS)


def _unreadable(answer: Answer, why: str) -> Answer:
    answer.broken = True
    answer.error = why
    return answer


def _text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(str(c.get("text")) for c in content
                     if isinstance(c, dict) and c.get("type") == "text"
                     and isinstance(c.get("text"), str))


def _params(model: Any) -> Callable[[dict[str, Any] | None], Any]:
    def build(params: dict[str, Any] | None) -> Any:
        return model.model_validate({"params": params} if params is not None else {})
    return build


_REQUESTS: dict[str, Callable[[dict[str, Any] | None], Any]] = {
    "tools/call": _params(types.CallToolRequest),
    "tools/list": _params(types.ListToolsRequest),
    "resources/list": _params(types.ListResourcesRequest),
    "resources/templates/list": _params(types.ListResourceTemplatesRequest),
    "resources/read": _params(types.ReadResourceRequest),
    "prompts/list": _params(types.ListPromptsRequest),
    "prompts/get": _params(types.GetPromptRequest),
}


async def open_session(spec: ServerSpec, recorder: Recorder, stack: AsyncExitStack,
                       announce_sampling: bool) -> Session:
    """Start (or connect to) the server and initialise; :class:`StartError` on
    failure. Everything opened is closed by ``stack``."""
    s = Session(spec, recorder)
    m = spec.model
    try:
        if m.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command = resolve_command(m.command)
            if command is None:
                raise StartError(f"command '{m.command}' not found on PATH (nor next to "
                                 f"{Path(sys.executable).name}); install the server or give "
                                 "its path")
            s._stderr = StderrTail()
            stack.callback(s._stderr.release)  # after the SDK stopped the server
            params = StdioServerParameters(
                command=command, args=list(m.args),
                env={k: expand_env(v) for k, v in m.env.items()}, cwd=str(spec.cwd))
            read, write = await stack.enter_async_context(stdio_client(params,
                                                                       s._stderr.file))
            s._stderr.started()
        else:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {}
            for name, h in m.headers.items():
                value = os.environ.get(h.env)
                if value is None:
                    raise StartError(f"header '{name}': environment variable {h.env} is "
                                     "not set")
                headers[name] = h.prefix + value
            timeout = httpx2.Timeout(m.call_timeout_ms / 1000.0,
                                     connect=m.startup_timeout_ms / 1000.0)
            client = await stack.enter_async_context(httpx2.AsyncClient(
                headers=headers, timeout=timeout,
                event_hooks={"response": [_bound_response_body]}))
            assert m.url is not None
            read, write = await stack.enter_async_context(
                streamable_http_client(m.url, http_client=client))
        sampling: Callable[..., Awaitable[Any]] | None = s._sample if announce_sampling \
            else None
        session = ClientSession(
            _RecordingReader(read, recorder, m.url is not None),
            _RecordingWriter(write, recorder),
            read_timeout_seconds=m.call_timeout_ms / 1000.0,
            sampling_callback=sampling,  # type: ignore[arg-type]
            client_info=types.Implementation(name="agent-eval", version=__version__))
        s.session = await stack.enter_async_context(session)
        s.sampling_announced = announce_sampling
        with anyio.fail_after(m.startup_timeout_ms / 1000.0):
            result = await s.session.initialize()
        s.init = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        s.protocol_version = result.protocol_version
    except StartError:
        raise
    except TimeoutError:
        raise StartError(f"no answer to initialize within {m.startup_timeout_ms:g} ms "
                         "(startup_timeout_ms)" + _tail(s)) from None
    except MCPError as exc:
        raise StartError(f"initialize failed: {exc.error.message}" + _tail(s)) from None
    except Exception as exc:  # spawn errors, a crash, a refused connection
        raise StartError(_crash(exc, m.command is not None) + _tail(s)) from None
    return s


async def _bound_response_body(response: Any) -> None:
    """Each HTTP response's body is read up to :data:`MAX_HTTP_BODY` bytes (the SDK reads
    a JSON answer whole): over it, the read fails as the SDK's client expects of a body it
    cannot read, and the call gets no answer (``probe/call_failed``)."""
    import httpx2

    class TooLarge(httpx2.StreamError):
        pass

    class Bounded(httpx2.AsyncByteStream):
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __aiter__(self) -> Any:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > MAX_HTTP_BODY:
                    raise TooLarge(f"the server's HTTP response is over "
                                   f"{MAX_HTTP_BODY >> 20} MiB (limits.max_file_bytes), "
                                   "more than agent-eval reads")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    response.stream = Bounded(response.stream)


def _crash(exc: BaseException, stdio: bool) -> str:
    reason = describe(exc)
    if stdio:
        return f"the server exited or failed before answering initialize ({reason})"
    return f"could not reach the server ({reason})"


def _tail(s: Session) -> str:
    tail = s.stderr_tail()
    if not tail:
        return ""
    shown = repr(tail)
    if len(shown) > STDERR_SHOWN:  # its end is the reason: cut at the start
        shown = shown[0] + "…" + shown[-STDERR_SHOWN + 2:]
    return f"; its stderr ends: {shown}"
