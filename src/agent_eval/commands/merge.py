"""``agent-eval merge PARTS…``: one results object (and its files) from the partial
results of ``agent-eval run --shard i/n``, identical to an unsharded run."""

from __future__ import annotations

import argparse
import glob
import sys
from pathlib import Path

from agent_eval.api import load_suite
from agent_eval.baseline import load_file, same_suite
from agent_eval.commands._options import check_baseline_options, output_dir, parse_formats
from agent_eval.commands.run import clear_folder, named_folder, write_outputs
from agent_eval.compare import attach
from agent_eval.errors import AgentEvalError, ExitCode, ResultsFileError
from agent_eval.paths import real, repo_root
from agent_eval.renderers import RenderContext, console
from agent_eval.results import Results, exit_code
from agent_eval.safetext import one_line
from agent_eval.sharding import merge


def part_files(patterns: list[str]) -> list[Path]:
    """Files named, folders holding a results.json, and globs."""
    out: list[Path] = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern, recursive=True)) or [pattern]
        for m in matched:
            p = Path(m)
            out.append(p / "results.json" if p.is_dir() else p)
    return list(dict.fromkeys(out))


def _named_config(given: str, part: Results) -> str:
    """The suite file a part names (its ``config``, relative to the repository root: merge
    runs from there). A part may come from anyone (an artifact, a pull request): the file
    it names is read only inside the repository around the current folder, never through
    a link that leads out of it (docs/security.md); ``--config`` names another."""
    named = part.config
    root = repo_root(Path.cwd())
    if Path(named).is_absolute() or not real(named).is_relative_to(real(root)):
        raise ResultsFileError(
            f"{given}: the suite file {named!r} it names (its `config`) "
            "leads outside the repository; it is not read. Pass --config with the suite "
            "file the shards ran with")
    return named


def main(args: argparse.Namespace) -> ExitCode:
    given = parse_formats(args.format)  # an unknown format: exit 2 before anything is read
    try:  # a part or baseline that is not a results file: exit 2 (_cli)
        check_baseline_options(args.baseline)  # empty: exit 2, never merged uncompared
        paths = part_files(args.parts)
        parts = [Results.load(str(path)) for path in paths]
        base = load_file(args.baseline) if args.baseline is not None else None
        config = args.config or _named_config(str(paths[0]), parts[0])
        if not Path(config).is_file():
            raise AgentEvalError(f"the suite file {config!r} the shards ran with is not "
                                 "here; run merge from the repository root or pass --config")
        suite = load_suite(config)
        if base is not None and suite.judge is not None and suite.judge.has_pairwise:
            # no shard had the base's outputs (run --shard refuses --baseline), so each
            # pairwise check was skipped with a note: comparing now would pass them unjudged
            raise AgentEvalError(
                f"{config} has pairwise judge checks, which compare this change's outputs "
                "with the base branch's; the shards ran without the base (run --shard "
                "takes no --baseline), so those checks were skipped, and merge --baseline "
                "would pass them unjudged: run the suite without --shard, with --baseline, "
                "or merge without --baseline (docs/judge.md 'Pairwise')")
    except AgentEvalError:  # stopped: an earlier merge's files go (as run's, docs/outputs.md)
        clear_folder(named_folder(args.output_dir, None), given)
        raise
    formats = given or list(suite.model.output.format)
    # an earlier merge's files (or ones committed in the output folder) go before the parts
    # are merged: a merge that stops (exit 2) leaves none to be taken for its own
    clear_folder(named_folder(args.output_dir, suite), formats)
    results = merge(suite, parts, timings=not args.no_timings,
                    strict_coverage=args.strict_coverage)
    if base is not None:  # another suite's results: exit 2 (docs/results.md "The baseline")
        same_suite(base, results.suite, results.config, args.baseline,
                   "Compare with this suite's own results, or merge without --baseline.")
        attach(results, base, {"kind": "file", "path": args.baseline})
    folder = output_dir(args.output_dir, suite)
    written = write_outputs(results, formats, folder, RenderContext.for_root(suite.root))
    if args.quiet:
        print(f"{console.quiet_line(results)} from {len(parts)} shard(s)")
    else:
        sys.stdout.write(console.render(results, color=False))
        print(one_line("Wrote " + ", ".join(str(p) for p in written)))
    return exit_code(results.verdict, args.fail_on)
