"""The processes that hold a server's output pipe open (Linux: read from /proc), and
stopping them by pid: what a server started that outlived it (``agent-eval record``, and
a live session whose server exited by itself)."""

from __future__ import annotations

import contextlib
import os
import signal
import time


def output_holders(fd: int) -> list[int]:
    """Linux: the processes other than this one that hold the pipe ``fd`` reads (the
    server's stdout) open, read from /proc: what the server started that inherited its
    output, in its process group or outside it (``setsid``, a daemon). Others' processes
    that /proc does not show are not found; elsewhere none are."""
    try:
        target = f"pipe:[{os.fstat(fd).st_ino}]"
        entries = os.listdir("/proc")
    except OSError:
        return []
    me = os.getpid()
    found = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        folder = f"/proc/{entry}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue
        for name in fds:
            with contextlib.suppress(OSError):
                if os.readlink(f"{folder}/{name}") == target:
                    found.append(int(entry))
                    break
    return found


def stop_holders(fd: int, rounds: int = 5) -> int:
    """SIGKILL the processes that hold the server's output (see :func:`output_holders`),
    again for one a holder started meanwhile; how many were killed. Each by its pid,
    never by group: a process may have joined the client's group. A process the server
    started that does not hold its output is left alone."""
    killed = 0
    for _ in range(rounds):
        pids = output_holders(fd)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.05)
    return killed
