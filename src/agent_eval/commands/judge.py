"""``agent-eval judge tidy STORE [MORE...]``: rewrite a judgement store sorted, one line
per key, with the judgements of MORE merged in (docs/judge.md "Merging")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_eval.errors import ExitCode
from agent_eval.judge.store import Store, read_store
from agent_eval.safetext import one_line


def main(args: argparse.Namespace) -> ExitCode:
    if args.judge_command == "tidy":
        return tidy(args)
    return ExitCode.ERROR  # pragma: no cover (argparse requires a subcommand)


def _read(name: str, *, merged: bool = False) -> Store | None:
    """The store ``name``; one to be ``merged`` in must be there (a missing STORE is
    made)."""
    if merged and not Path(name).exists():
        # a shard's store misnamed was merged as if empty, exit 0: its judgements lost
        print(one_line(f"error: {name}: no such judgement store to merge; give the stores "
                       "the shards recorded (nothing was written)"), file=sys.stderr)
        return None
    got = read_store(Path(name), name)
    if isinstance(got, str):
        print(one_line(f"error: {got}"), file=sys.stderr)
        return None
    for line, message in got.problems:
        print(one_line(f"error: {name}:{line}: {message}"), file=sys.stderr)
    return None if got.problems else got


def tidy(args: argparse.Namespace) -> ExitCode:
    path = Path(args.store)
    store = _read(args.store)
    if store is None:
        return ExitCode.ERROR
    others = [_read(o, merged=True) for o in args.others]
    if any(o is None for o in others):
        return ExitCode.ERROR
    conflicts = list(store.conflicts)
    for other in others:
        assert other is not None
        conflicts += [k for k in other.conflicts if k not in conflicts]
        for key, j in other.entries.items():
            have = store.entries.get(key)
            if have is not None and have.to_line() != j.to_line() and key not in conflicts:
                conflicts.append(key)
        store.merge(other)
    text = store.render()
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    for key in conflicts:
        print(f"note: {key[:12]} was recorded twice with different verdicts; kept the line "
              "that sorts first (review it in the diff)", file=sys.stderr)
    if args.check:
        if text != current:
            print(one_line(f"{args.store} is not tidy: run `agent-eval judge tidy "
                           f"{args.store}`"), file=sys.stderr)
            return ExitCode.FAIL
        return ExitCode.OK
    if text != current:
        store.save(path)
    # (one escaped line each: a store's name may hold a line break, a workflow command)
    print(one_line(f"{args.store}: {len(store.entries)} judgement(s)"
                   + (f", {len(conflicts)} conflict(s) resolved" if conflicts else "")))
    return ExitCode.OK
