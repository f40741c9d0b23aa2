"""``agent-eval record -- COMMAND ARGS…``: the recording stdio proxy (live/proxy.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_eval.errors import ExitCode
from agent_eval.live.proxy import run


def main(args: argparse.Namespace) -> int:
    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("error: record: give the server command after --, e.g. `agent-eval record "
              "--output session.jsonl -- npx @modelcontextprotocol/server-everything`",
              file=sys.stderr)
        return ExitCode.ERROR
    return run(argv, Path(args.output))
