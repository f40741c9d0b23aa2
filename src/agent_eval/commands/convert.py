"""``agent-eval convert FILE... [--format NAME] --to native``: print the canonical
traces read from trace files as native JSONL, so users see what the tool understood.

The JSONL goes to stdout (or ``--output``); input errors and a per-file note (which
reader read it, how many traces and calls) go to stderr. Exit code 2 when any file
had an input error (what could be read is still printed), else 0.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agent_eval.convert import convert_sources, dumps, trace_events
from agent_eval.errors import ExitCode, InputError
from agent_eval.outputs import atomic_text, output_file, written_into
from agent_eval.paths import repo_root
from agent_eval.readers import READERS, SourceFile, expand
from agent_eval.safetext import clean_name, one_line
from agent_eval.textdist import suggest


@dataclass
class _Seen:
    reader: str | None = None
    traces: int = 0
    calls: int = 0
    ignored: int = 0
    errors: int = 0


def main(args: argparse.Namespace) -> ExitCode:
    fmt = args.format or "auto"
    if fmt not in ("auto", *READERS):
        print(one_line(f"error: unknown trace format '{clean_name(fmt)}'"
                       f"{suggest(fmt, {'auto', *READERS})}; use auto or one of "
                       f"{', '.join(READERS)}"), file=sys.stderr)
        return ExitCode.ERROR
    if args.to != "native":
        print(one_line(f"error: cannot convert to '{clean_name(args.to)}'"
                       f"{suggest(args.to, ['native'])}; the only target is native"),
              file=sys.stderr)
        return ExitCode.ERROR
    cwd = Path.cwd()
    files, errors = expand(args.files, cwd, repo_root(cwd), cwd, None)
    for e in errors:  # named by its file, unless the message quotes it (a glob)
        said = e.message if e.file in e.message else str(e)
        print(one_line(f"error: {said}"), file=sys.stderr)
    if args.output:
        root = repo_root(cwd)
        target = output_file(Path(args.output), root)
        with atomic_text(target, through=written_into(target, root)) as out:
            seen = _convert(files, fmt, out)
    else:
        seen = _convert(files, fmt, sys.stdout)
    if not args.quiet:
        for file, s in seen.items():
            if s.reader is None:
                continue
            extra = f"; {s.ignored} record(s) of unknown type ignored" if s.ignored else ""
            extra += f"; {s.errors} input error(s)" if s.errors else ""
            print(one_line(f"note: {file}: read as {s.reader}: {s.traces} trace(s), "
                           f"{s.calls} tool call(s){extra}"), file=sys.stderr)
    failed = bool(errors) or any(s.errors for s in seen.values())
    return ExitCode.ERROR if failed else ExitCode.OK


def _convert(files: list[SourceFile], fmt: str, out: TextIO) -> dict[str, _Seen]:
    seen: dict[str, _Seen] = {}
    for source, reader, item in convert_sources(files, fmt):
        s = seen.setdefault(source.file, _Seen())
        s.reader = s.reader or reader
        if isinstance(item, InputError):
            s.errors += 1
            print(one_line(f"error: {item} [{item.rule}]"), file=sys.stderr)
        elif isinstance(item, int):
            s.ignored += item
        else:
            s.traces += 1
            s.calls += len(item.tool_calls)
            for event in trace_events(item):
                out.write(dumps(event) + "\n")
    return seen
