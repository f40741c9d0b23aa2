"""``agent-eval record -- COMMAND ARGS…``: a transparent stdio MCP proxy that records.

The MCP client starts ``agent-eval record -- SERVER…`` instead of the server. Every line
the client writes is passed to the server's stdin, and every line the server writes to
its stdout is passed to the client, byte for byte and at once (one thread per
direction, no parsing on the way). Each message is also appended to the trace file as
``{"timestamp": …, "direction": "client_to_server" | "server_to_client", "message": …}``
with the message's own JSON text inside, so the file is what ``agent-eval run`` reads as
an MCP log. A line that is not JSON is kept as ``"raw"`` text; a line over
:data:`MAX_LOGGED` bytes is forwarded whole but logged as its size only. The server's
stderr is the proxy's stderr; the proxy exits with the server's exit code. The server
runs in a process group of its own (POSIX), which is what is signalled.

The MCP SDK is not used here on purpose: it would parse and re-serialise each message,
and the point of the proxy is to change nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from agent_eval.live.holders import stop_holders

CHUNK = 1 << 20  # bytes read at most per call while forwarding a line
MAX_LOGGED = 16 << 20  # a longer line is forwarded but logged as its size only
_GROUPS = hasattr(os, "killpg")  # POSIX: the server runs in a process group of its own
STOP_GRACE = 5.0  # seconds the server gets to exit after its stdin closes (then
# SIGTERM, and as long again before SIGKILL)
KILL_WAIT = 1.0  # seconds its output gets to end after SIGKILL before the proxy stops waiting


class TraceLog:
    """Appends timestamped messages to the trace file (thread-safe, flushed per
    message so that a killed session keeps what it had)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh: IO[bytes] = open(path, "ab")  # noqa: SIM115 - closed by close()
        self.lock = threading.Lock()

    def add(self, direction: str, line: bytes | None, size: int) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="microseconds")
        head = b'{"timestamp":"' + stamp.encode() + b'","direction":"' + direction.encode()
        if line is None:
            record = head + b'","truncated":true,"bytes":' + str(size).encode() + b"}\n"
        else:
            body = line.rstrip(b"\r\n")
            try:
                orjson.loads(body)
            except orjson.JSONDecodeError:
                raw = orjson.dumps(body.decode("utf-8", errors="replace"))
                record = head + b'","raw":' + raw + b"}\n"
            else:  # the message's own bytes, as sent
                record = head + b'","message":' + body + b"}\n"
        with self.lock:
            self.fh.write(record)
            self.fh.flush()

    def close(self) -> None:
        with self.lock:
            self.fh.close()


def pump(src: IO[bytes], dst: IO[bytes], log: TraceLog, direction: str,
         on_eof: Any = None) -> None:
    """Forward ``src`` to ``dst`` line by line, logging each line."""
    try:
        while True:
            parts: list[bytes] = []
            size = 0
            while True:
                chunk = src.readline(CHUNK)
                if not chunk:
                    break
                dst.write(chunk)
                size += len(chunk)
                if size <= MAX_LOGGED:
                    parts.append(chunk)
                if chunk.endswith(b"\n"):
                    break
            if not size:
                break
            dst.flush()
            if line_is_blank(parts):
                continue
            log.add(direction, b"".join(parts) if size <= MAX_LOGGED else None, size)
    except (BrokenPipeError, ValueError, OSError):
        pass  # the other side went away
    finally:
        if on_eof is not None:
            on_eof()


def line_is_blank(parts: list[bytes]) -> bool:
    return len(parts) == 1 and not parts[0].strip()


def run(argv: list[str], output: Path) -> int:
    """Start ``argv`` and proxy stdio until either side ends; the server's exit code."""
    log = TraceLog(output)
    try:
        # its own process group: a server started through a wrapper (npx, uvx, a shell
        # script) runs as the wrapper's child, which holds the pipes too; the group is
        # what is signalled, so stopping the server stops that child
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                process_group=0 if _GROUPS else None)
    except OSError as exc:
        log.close()
        print(f"error: cannot start {argv[0]!r}: {exc}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    assert proc.stdin is not None and proc.stdout is not None
    server_in, server_out = proc.stdin, proc.stdout

    def signal_server(signum: int) -> None:
        """``signum`` to the server's process group (its children too), else to it."""
        if _GROUPS:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signum)
            return
        if proc.poll() is None:
            proc.send_signal(signum)

    def running() -> bool:
        # the server, or a process it started that still holds its stdout (the proxy
        # waits for the end of that output)
        return proc.poll() is None or down.is_alive()

    def stop_if_still_running() -> None:
        if not running():
            return
        print(f"agent-eval record: the server did not exit within {STOP_GRACE:g} s of its "
              "stdin closing; stopping it (SIGTERM)", file=sys.stderr)
        signal_server(signal.SIGTERM)
        end = time.monotonic() + STOP_GRACE
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_GRACE)
        down.join(max(0.0, end - time.monotonic()))
        if running():
            print("agent-eval record: the server ignored SIGTERM; killing it (SIGKILL)",
                  file=sys.stderr)
            signal_server(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_WAIT)
        down.join(KILL_WAIT)
        release_output()

    def release_output() -> None:
        """The server has ended: what it started that still holds its output is killed,
        and when that cannot be done the proxy stops waiting for that output (once: the
        stdin path and a forwarded signal may both come here)."""
        with releasing:
            if abandoned.is_set():
                return
            if down.is_alive() and stop_holders(server_out.fileno()):
                down.join(KILL_WAIT)
            if down.is_alive():
                # a process outside the server's group (setsid, a daemon) holds its
                # output and could not be stopped: the proxy stops waiting for it
                print("agent-eval record: a process the server started outside its "
                      "process group still holds the server's output; not waiting for it",
                      file=sys.stderr)
                abandoned.set()

    abandoned = threading.Event()  # set when the server's output is no longer waited for
    releasing = threading.Lock()  # one release_output at a time
    signalled = threading.Event()  # a signal was forwarded to the server

    def release_after_signal() -> None:
        """After a forwarded SIGINT/SIGTERM: once the server has exited, its output gets
        STOP_GRACE seconds to end; then what holds it is released (as on the stdin path).
        A server that is still running is the signal's business, never escalated."""
        proc.wait()
        down.join(STOP_GRACE)
        release_output()

    def close_server_stdin() -> None:
        """The client is done: the server gets STOP_GRACE seconds to exit, then is
        stopped (the MCP stdio shutdown), so that a server ignoring the end of its input
        never keeps the proxy, and the client waiting on it, running."""
        with contextlib.suppress(OSError):
            server_in.close()
        timer = threading.Timer(STOP_GRACE, stop_if_still_running)
        timer.daemon = True
        timer.start()

    client_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    client_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    up = threading.Thread(target=pump, args=(client_in, server_in, log, "client_to_server",
                                             close_server_stdin), daemon=True)
    down = threading.Thread(target=pump, args=(server_out, client_out, log,
                                               "server_to_client"), daemon=True)

    def forward(signum: int, frame: Any) -> None:
        del frame
        if running():
            signal_server(signum)
            if not signalled.is_set():
                signalled.set()
                threading.Thread(target=release_after_signal, daemon=True).start()

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    up.start()
    down.start()
    try:
        while down.is_alive() and not abandoned.is_set():
            down.join(0.25)  # the server closed its stdout: it is done
        try:
            code = proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.terminate()
            code = proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        log.close()
    return code if code >= 0 else 128 - code
