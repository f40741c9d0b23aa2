"""``agent-eval lock``: write or refresh the tool lock of the suite's servers."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from agent_eval.api import load_suite
from agent_eval.errors import ConfigError, ExitCode
from agent_eval.live import pinning
from agent_eval.live.compile import CompiledLive
from agent_eval.outputs import atomic_write
from agent_eval.paths import real
from agent_eval.safetext import clean_name, one_line


def main(args: argparse.Namespace) -> ExitCode:
    suite = load_suite(args.config)
    live = suite.live
    if live is None or not live.servers:
        raise ConfigError([f"{suite.file}: the suite has no 'servers:' to lock (see "
                           "docs/mcp.md)"])
    if live.lock is None:
        raise ConfigError([f"{suite.file}: set 'tool_lock: FILE' in the suite (e.g. "
                           "tool_lock: mcp-tools.lock.json), then run `agent-eval lock`"])
    names = list(args.server or live.servers)
    unknown = [n for n in names if n not in live.servers]
    if unknown:
        raise ConfigError([f"{suite.file}: unknown server(s) {', '.join(unknown)}; known: "
                           f"{', '.join(live.servers)}"])
    names = [n for n in names if live.servers[n].model.pin]
    # lazy: the MCP SDK (the optional extra [mcp]) is imported only to talk to servers
    from agent_eval.live.runner import run_live

    with tempfile.TemporaryDirectory(prefix="agent-eval-lock-") as tmp:
        outcome = run_live(suite, Path(tmp), servers=names, probes=False)
    for e in outcome.errors:
        print(one_line(f"error: {e}"), file=sys.stderr)
    old: dict[str, Any] | None = None
    try:
        old = pinning.read_lock(live.lock)
    except FileNotFoundError:
        old = None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(one_line(f"note: {live.lock_file}: replacing an unusable lock ({reason})"),
              file=sys.stderr)
    data = pinning.lock_data(outcome.listings, old)
    for name, tools in outcome.listings.items():
        before = ((old or {}).get("servers") or {}).get(name)
        if before is None:
            print(f"{name}: {len(tools)} tool(s) pinned")
            continue
        changes = pinning.compare(name, tools, before)
        if not changes:
            print(f"{name}: {len(tools)} tool(s), unchanged")
        for issue in changes:
            kind = issue.rule.split("/", 1)[1].removeprefix("tool_")
            # the name the server gives, escaped and cut: a line break in it started a
            # workflow command of the job, an ESC sequence cleared the terminal
            print(one_line(f"{name}: {clean_name(issue.tool)}: {kind}"))
    text = pinning.render_lock(data)
    current = live.lock.read_bytes() if live.lock.is_file() else None
    if current != text:
        _inside(live.lock, suite.root, live)  # again: a link may have appeared meanwhile
        live.lock.parent.mkdir(parents=True, exist_ok=True)
        _inside(live.lock, suite.root, live)
        with atomic_write(live.lock) as fh:  # a link at the lock is replaced, not followed
            fh.write(text)
        print(f"Wrote {live.lock_file}")
    else:
        print(f"{live.lock_file} is up to date")
    return ExitCode.ERROR if outcome.errors else ExitCode.OK


def _inside(lock: Path, root: Path, live: CompiledLive) -> None:
    """Refuse to write the lock when, links followed, it is outside the repository
    (the suite loader refused such a ``tool_lock:`` already; this is checked again just
    before writing). The error names the lock as the suite wrote it."""
    if not real(lock).is_relative_to(real(root)):
        ref = live.lock_ref
        where = f"{live.file}:{ref.line}:{ref.col}" if ref is not None else live.file
        raise ConfigError([f"{where}: tool_lock {live.lock_file} leads outside the "
                           "repository through a symbolic link; nothing was written"])
