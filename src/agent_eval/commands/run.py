"""``agent-eval run``: load, read, evaluate, write, print, exit."""

from __future__ import annotations

import argparse
import contextlib
import gc
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_eval.api import load_suite, suite_sources
from agent_eval.commands._options import (
    check_baseline_options,
    color_wanted,
    output_dir,
    parse_formats,
)
from agent_eval.engine import evaluate_files
from agent_eval.errors import AgentEvalError, ConfigError, ExitCode
from agent_eval.outputs import clear_outputs
from agent_eval.paths import not_utf8, rel
from agent_eval.progress import Progress
from agent_eval.readers.base import ReadItem, SourceFile
from agent_eval.renderers import RENDERERS, RenderContext, console
from agent_eval.results import Results, exit_code
from agent_eval.safetext import one_line
from agent_eval.suite import Suite


def write_outputs(results: Results, formats: list[str], folder: Path,
                  ctx: RenderContext) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)  # (checked by output_dir)
    written = []
    for name in dict.fromkeys(["json", *formats]):
        renderer = RENDERERS[name]
        path = folder / renderer.filename
        renderer.write(results, ctx, path)
        written.append(path)
    return written


def owned_files(formats: list[str]) -> list[str]:
    """The files a run with ``formats`` writes (results.json always)."""
    return [RENDERERS[name].filename for name in dict.fromkeys(["json", *formats])]


def main(args: argparse.Namespace) -> ExitCode:
    given = parse_formats(args.format)  # an unknown format: exit 2 before anything is read
    try:
        suite = load_suite(args.config, dialect=getattr(args, "dialect", "auto"))
    except AgentEvalError:
        clear_folder(named_folder(args.output_dir, None), given)
        raise
    formats = given or list(suite.model.output.format)  # validated by the suite model
    try:  # (first: --baseline may name the results.json of the run before this one)
        # an empty --baseline / --baseline-ref, or both: exit 2 (never uncompared unsaid)
        check_baseline_options(getattr(args, "baseline", None),
                               getattr(args, "baseline_ref", None))
        if getattr(args, "shard", None) and (getattr(args, "baseline", None)
                                             or getattr(args, "baseline_ref", None)):
            # one shard's part against a whole run: the other shards' scenarios and
            # findings would read as removed (docs/results.md "Shards")
            raise AgentEvalError("--shard with --baseline/--baseline-ref would compare one "
                                 "shard's part with a whole run; run the shards without "
                                 "it, then give --baseline to merge")
        base, source = _baseline(args, suite)
    except AgentEvalError:  # nothing is made, but an earlier run's files go
        clear_folder(named_folder(args.output_dir, suite), formats)
        raise
    folder = output_dir(args.output_dir, suite)
    # an earlier run's files go before a trace is read: a run that stops (exit 2) leaves
    # none of them (docs/outputs.md)
    clear_outputs(folder, owned_files(formats))
    shard = None
    if getattr(args, "shard", None):
        from agent_eval.sharding import parse_shard  # (start-up time)

        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            raise AgentEvalError(str(exc)) from exc
    live = None
    # the probes run in shard 1 only: the shard as parsed (01/4 and +1/4 are shard 1 too;
    # the text's first character missed them, and the merge had no probes at all)
    if suite.live is not None and (shard is None or shard[0] == 1):
        # lazy: the MCP SDK (the optional extra [mcp]) is imported only for live servers
        from agent_eval.live.runner import SESSIONS, run_live

        shown = rel(folder / SESSIONS, suite.root)
        if not_utf8(shown):
            # the sessions are traces the results name: results.json could not be written
            # (an internal error, after the probes ran)
            raise ConfigError([f"{repr(shown)[1:-1]}: the probes' sessions are written "
                               "there and named in the results, but its path holds bytes "
                               "that are not UTF-8, which no output can name; give an "
                               "output folder (--output-dir) whose name is UTF-8"])
        live = run_live(suite, folder, timings=not args.no_timings)
    if suite.live is not None and not args.traces and not suite.trace_globs:
        files: list[SourceFile] = []  # only the probes' sessions
        errors: list[ReadItem] = []
    else:
        files, errors = suite_sources(suite, args.traces)
    sessions = live.sessions if live is not None else []
    gc.freeze()  # what start-up made stays: the collector need not walk it again
    gc.enable()  # (disabled by _cli for the start-up)

    def evaluate() -> Results:
        if shard is not None:
            from agent_eval.sharding import evaluate_shard

            return evaluate_shard(suite, files, errors, index=shard[0], count=shard[1],
                                  timings=not args.no_timings, pinned=sessions,
                                  strict_coverage=args.strict_coverage)
        with Progress(sys.stderr, enabled=not args.quiet) as progress:
            return evaluate_files(suite, [*files, *sessions], errors,
                                  jobs=args.jobs, timings=not args.no_timings,
                                  progress=progress, strict_coverage=args.strict_coverage,
                                  spill_dir=folder)  # docs/architecture.md "Findings on disk"

    mode = getattr(args, "judge", "replay") or "replay"
    if suite.judge is not None:  # judge checks: docs/judge.md
        from agent_eval.judge.run import judged_results

        got = judged_results(suite.judge, mode, evaluate, base=base,
                             base_hint=_base_hint(args))
        if isinstance(got, str):
            raise AgentEvalError(got)
        results = got
    else:
        if mode != "replay":
            print(f"note: --judge {mode}: the suite has no judge checks", file=sys.stderr)
        results = evaluate()
    if suite.live is not None:  # the probes' entries (in shard 1 only)
        from agent_eval.live.outcome import LiveOutcome

        (live or LiveOutcome()).apply(results,
                                      has_trace_globs=bool(args.traces or suite.trace_globs))
        if results.shard is not None and live is not None:
            results.shard = replace(results.shard, live=live.to_dict())
    if base is not None:
        from agent_eval.compare import attach

        attach(results, base, source)
    try:
        written = write_outputs(results, formats, folder, RenderContext.for_root(suite.root))
        if args.quiet:
            print(console.quiet_line(results))
        else:
            sys.stdout.write(console.render(results,
                                            color=color_wanted(args.color, sys.stdout)))
            print(one_line("Wrote " + ", ".join(str(p) for p in written)))
    finally:
        results.close()  # the spilled findings, if any
    return exit_code(results.verdict, args.fail_on)


def named_folder(option: str | None, suite: Suite | None) -> Path | None:
    """The output folder as named (``--output-dir``, the suite's ``output.dir``, the
    default), without making it; None when a suite that could not be loaded names it."""
    if option:
        return Path(option)
    if suite is None:
        return None
    configured = suite.model.output.dir
    if not configured:
        return Path("agent-eval-results")
    folder = suite.base_dir / configured  # a stranger's suite: only inside the repository
    return folder if folder.resolve().is_relative_to(suite.root.resolve()) else None


def clear_folder(folder: Path | None, formats: list[str] | None) -> None:
    """A run that stops before its output folder is made still removes an earlier run's
    files from it, where it is a folder (not a link): those of the formats, or of every
    format when the formats were to come from a suite that could not be loaded."""
    if folder is None or folder.is_symlink() or not folder.is_dir():
        return
    with contextlib.suppress(AgentEvalError):  # the stop's own error is the one to say
        clear_outputs(folder, owned_files(formats if formats else list(RENDERERS)))


def _baseline(args: argparse.Namespace, suite: Suite) -> tuple[Results | None, dict[str, Any]]:
    """The base run of ``--baseline`` or ``--baseline-ref`` and where it came from; one
    that cannot be had stops the run (exit 2)."""
    # what only some runs need is imported by them (start-up time, docs/performance.md)
    if getattr(args, "baseline", None):
        from agent_eval.baseline import load_file, same_suite

        try:  # missing, truncated, over the size limit, not the results schema, or the
            # results of another suite (docs/results.md "The baseline")
            base = load_file(args.baseline)
            same_suite(base, suite.name, suite.file, args.baseline,
                       "Compare with this suite's own results, or run without --baseline.")
        except ValueError as exc:
            raise AgentEvalError(f"--baseline: {exc}") from exc
        return base, {"kind": "file", "path": args.baseline}
    if getattr(args, "baseline_ref", None):
        from agent_eval.baseline import from_ref, suite_mismatch

        found = from_ref(Path.cwd(), args.baseline_ref, suite.path, args.traces)
        if found.results is None:
            raise AgentEvalError(f"--baseline-ref: {found.reason}")
        why = suite_mismatch(found.results, suite.name, suite.file)
        if why is not None:
            raise AgentEvalError(f"--baseline-ref {args.baseline_ref}: {why}. Run without "
                                 "--baseline-ref.")
        return found.results, found.source
    return None, {}


def _base_hint(args: argparse.Namespace) -> str:
    """The baseline option of this run, for the command that records missing pairwise
    judgements."""
    if getattr(args, "baseline", None):
        return f"--baseline {shlex.quote(args.baseline)}"
    if getattr(args, "baseline_ref", None):
        return f"--baseline-ref {shlex.quote(args.baseline_ref)}"
    return ""
