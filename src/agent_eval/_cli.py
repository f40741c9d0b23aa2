"""The command line: a thin layer over config, readers, engine and renderers.

Each command's module (``agent_eval.commands``) is imported only when that command runs,
for start-up time (``agent-eval --version`` imports none of them)."""

from __future__ import annotations

import argparse
import codecs
import gc
import os
import sys
from collections.abc import Sequence

from agent_eval._version import __version__
from agent_eval.errors import FAIL_ON, AgentEvalError, ExitCode


def _jobs(text: str) -> int | str:
    """``--jobs``: ``auto`` or a whole number (0 and 1: one process)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return max(1, int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or auto, not {text!r}") from None


def _render_options(parser: argparse.ArgumentParser, formats: str) -> None:
    """What `diff` and `report` share: the output format, file and the paths' root."""
    parser.add_argument("--format", "-f", default="console", metavar="FMT",
                        help=f"{formats} (default: console)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    parser.add_argument("--root", metavar="DIR",
                        help="repository root the paths are relative to (default: .)")


def _dialect_option(parser: argparse.ArgumentParser) -> None:
    """What `run` and `validate` share: the language of the config (docs/migrating.md)."""
    parser.add_argument("--dialect", choices=("auto", "native", "assay", "evalview", "ciagent"),
                        default="auto", help="the config's language (default: by content)")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; for ``run`` (``command``), only what ``run`` parses: the
    other commands' parsers are not built (start-up time, docs/performance.md)."""
    p = argparse.ArgumentParser(
        prog="agent-eval",
        description="Check what an AI agent did against rules in YAML, deterministically.",
    )
    p.add_argument("--version", action="version", version=f"agent-eval {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="evaluate traces against the suite")
    run.add_argument("--config", "-c", help="suite file (default: agent-eval.yaml, …); also "
                     "an Assay, EvalView or CIAgent config (docs/migrating.md)")
    _dialect_option(run)
    run.add_argument("--traces", "-t", action="extend", nargs="+", metavar="GLOB",
                     help="trace files or globs (several, or repeated: an unquoted glob "
                     "the shell expands is read whole); overrides the suite's traces:")
    run.add_argument("--format", "-f", action="append", metavar="FMT",
                     help="output formats besides results.json (repeatable or a,b)")
    run.add_argument("--output-dir", "-o", metavar="DIR", help="where output files go")
    run.add_argument("--fail-on", choices=FAIL_ON, default="fail",
                     help="verdict that makes the exit code 1 (default: fail)")
    run.add_argument("--jobs", "-j", type=_jobs, default="auto", metavar="N",
                     help="evaluate with N processes, or auto: one for a small input, one "
                     "per CPU for a large one (default auto)")
    run.add_argument("--no-timings", action="store_true",
                     help="write duration_ms as 0, so results are byte-identical across runs")
    run.add_argument("--quiet", "-q", action="store_true", help="print only the verdict line")
    run.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour the report: on a terminal (auto, the default), always or "
                     "never; never with NO_COLOR set")
    run.add_argument("--baseline", metavar="FILE",
                     help="a results.json of the base branch to compare with")
    run.add_argument("--strict-coverage", action="store_true",
                     help="a tool named in the config that no trace calls is an error "
                     "(coverage/unexercised; default: the suite's unexercised:, a note)")
    run.add_argument("--shard", metavar="I/N",
                     help="evaluate only shard I of N (by trace id hash); combine the "
                     "partial results with `agent-eval merge`")
    run.add_argument("--baseline-ref", metavar="REF",
                     help="evaluate the base commit REF (its own config and traces, in a "
                     "temporary git worktree) and compare with it, as the action does")
    run.add_argument("--judge", choices=("replay", "record", "refresh"), default="replay",
                     help="judge checks: replay verdicts from the store (default, no "
                     "network); record the missing ones; refresh every one this run uses "
                     "(docs/judge.md)")

    if command == "run":
        return p

    dif = sub.add_parser("diff", help="compare two results files (base, head)")
    dif.add_argument("base", metavar="BASE.json", help="results of the base branch")
    dif.add_argument("head", metavar="HEAD.json", help="results of the head (this change)")
    _render_options(dif, "console, markdown, json, sarif or html")

    mer = sub.add_parser("merge", help="combine the partial results of `run --shard i/n`")
    mer.add_argument("parts", nargs="+", metavar="PART", help="results.json of each shard "
                     "(files, folders holding results.json, or globs)")
    mer.add_argument("--config", "-c", help="the suite file the shards ran with "
                     "(default: the one the first part names, if inside the repository)")
    mer.add_argument("--output-dir", "-o", metavar="DIR", help="where output files go")
    mer.add_argument("--format", "-f", action="append", metavar="FMT",
                     help="output formats besides results.json (repeatable or a,b)")
    mer.add_argument("--baseline", metavar="FILE",
                     help="a results.json of the base branch to compare with")
    mer.add_argument("--fail-on", choices=FAIL_ON, default="fail",
                     help="verdict that makes the exit code 1 (default: fail)")
    mer.add_argument("--strict-coverage", action="store_true",
                     help="a tool named in the config that no trace calls is an error")
    mer.add_argument("--no-timings", action="store_true",
                     help="write duration_ms as 0, so results are byte-identical across runs")
    mer.add_argument("--quiet", "-q", action="store_true", help="print only the verdict line")

    val = sub.add_parser("validate", help="check the suite and its policies (no traces)")
    val.add_argument("--config", "-c", help="suite file (default: agent-eval.yaml, …)")
    _dialect_option(val)
    val.add_argument("--output-dir", "-o", metavar="DIR",
                     help="the output folder run will be given (then the suite's output.dir "
                          "is not checked)")

    exp = sub.add_parser("explain", help="show the documentation of a rule id")
    exp.add_argument("rule", nargs="?", help="e.g. args_valid/maximum (omit to list all)")

    rep = sub.add_parser("report", help="render a results.json again in another format")
    rep.add_argument("results", metavar="RESULTS.json", help="a results file written by run")
    _render_options(rep, "sarif, junit, markdown, html, console or json")
    rep.add_argument("--repo-url", metavar="URL", help="https://github.com/OWNER/REPO, "
                     "to link policy lines (with --sha)")
    rep.add_argument("--sha", metavar="SHA", help="the commit the results are for")
    rep.add_argument("--run-url", metavar="URL", help="the CI run, linked in the footer")

    conv = sub.add_parser("convert", help="print what agent-eval reads from trace files, "
                          "as native JSONL")
    conv.add_argument("files", nargs="+", metavar="FILE", help="trace files or globs")
    conv.add_argument("--format", "-f", metavar="NAME",
                      help="the input format (default: auto, detected per file)")
    conv.add_argument("--to", default="native", metavar="FORMAT",
                      help="the output format (only: native)")
    conv.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    conv.add_argument("--quiet", "-q", action="store_true",
                      help="no per-file notes on stderr (input errors are still printed)")

    lck = sub.add_parser("lock", help="write or refresh the tool lock of the suite's MCP "
                         "servers (tool_lock; see docs/mcp.md)")
    lck.add_argument("--config", "-c", help="suite file (default: agent-eval.yaml, …)")
    lck.add_argument("--server", action="append", metavar="NAME",
                     help="refresh only this server (repeatable; default: all)")

    rec = sub.add_parser("record", help="run an MCP server behind a transparent stdio "
                         "proxy that appends every message to a trace file",
                         usage="agent-eval record [--output FILE] -- COMMAND [ARGS...]")
    rec.add_argument("--output", "-o", metavar="FILE", default="mcp-session.jsonl",
                     help="the trace file messages are appended to (default: "
                     "mcp-session.jsonl)")
    rec.add_argument("argv", nargs=argparse.REMAINDER, metavar="COMMAND",
                     help="the server command and its arguments, after --")
    jud = sub.add_parser("judge", help="maintain judgement stores (docs/judge.md)")
    jsub = jud.add_subparsers(dest="judge_command", metavar="SUBCOMMAND", required=True)
    tidy = jsub.add_parser("tidy", help="rewrite a store sorted, one line per key, merging "
                           "other stores into it (after a union merge or sharded records)")
    tidy.add_argument("store", metavar="STORE", help="the store to rewrite")
    tidy.add_argument("others", nargs="*", metavar="MORE",
                      help="stores whose judgements are merged into STORE")
    tidy.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 when STORE is not tidy")

    imp = sub.add_parser("import", help="write a config of Assay, EvalView or CIAgent as a "
                         "native suite (same findings when run)")
    imp.add_argument("file", metavar="FILE", help="the peer's config file (or a folder of "
                     "EvalView test cases)")
    imp.add_argument("--to", choices=("suite",), default="suite",
                     help="what to write (only: suite)")
    imp.add_argument("--dialect", choices=("auto", "assay", "evalview", "ciagent"),
                     default="auto", help="the peer (default: detected by content)")
    imp.add_argument("--output", "-o", metavar="FILE",
                     help="the suite file to write (default: agent-eval.yaml beside FILE)")
    imp.add_argument("--traces", metavar="GLOB", help="write this traces: glob into the suite")
    imp.add_argument("--force", action="store_true", help="overwrite existing files")

    sub.add_parser("action", help="run as the GitHub Action: inputs from INPUT_* variables, "
                   "the event from GITHUB_EVENT_PATH (see README 'GitHub Action')")
    return p


def _utf8_output() -> None:
    """Standard output and error in UTF-8 whatever the locale says, as `report` and `diff`
    write their bytes: a stream of another encoding (cp1252 on a Windows runner's pipe, the
    composite action's; ASCII under LANG=C) could not carry the report's marks (❌, ·) or a
    trace's text, and the run ended in an internal error after writing its results. A
    lone surrogate (a name given on the command line, say --output-dir, with bytes that
    are not UTF-8: Python reads them so) is written escaped, ``\\udcff``, as a trace file's
    name is: a strict stream (a UTF-8 locale's, a Windows pipe's) raised UnicodeEncodeError
    at the "Wrote" line, an internal error after the results were written."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        errors = getattr(stream, "errors", None) or "strict"
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (codecs.lookup(encoding).name != "utf-8"
                                        or errors == "strict"):
            reconfigure(encoding="utf-8",
                        errors="backslashreplace" if errors == "strict" else errors)


def main(argv: Sequence[str] | None = None) -> int:
    _utf8_output()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser(argv[0] if argv else None).parse_args(argv)
    try:  # each command's module is imported when it runs (start-up time)
        if args.command == "run":
            # start-up time (docs/performance.md): the imports and the suite make many
            # objects and few cycles; run.main freezes them and collects again once the
            # suite is loaded, before the traces are read
            gc.disable()
            from agent_eval.commands import run

            return run.main(args)
        if args.command == "validate":
            from agent_eval.commands import validate

            return validate.main(args)
        if args.command == "explain":
            from agent_eval.commands import explain

            return explain.main(args)
        if args.command == "report":
            from agent_eval.commands import report

            return report.main(args)
        if args.command == "convert":
            from agent_eval.commands import convert

            return convert.main(args)
        if args.command == "diff":
            from agent_eval.commands import diff

            return diff.main(args)
        if args.command == "merge":
            from agent_eval.commands import merge

            return merge.main(args)
        if args.command == "lock":
            from agent_eval.commands import lock

            return lock.main(args)
        if args.command == "record":
            from agent_eval.commands import record

            return record.main(args)
        if args.command == "import":
            from agent_eval.commands import import_

            return import_.main(args)
        if args.command == "action":
            from agent_eval.commands import action

            return action.main(args)
        if args.command == "judge":
            from agent_eval.commands import judge

            return judge.main(args)
    except AgentEvalError as exc:  # errors.py: a config error, a results file, …
        from agent_eval.safetext import one_line  # (start-up time: on errors only)

        for problem in exc.problems:  # one line each, whatever name it quotes
            print(f"error: {one_line(problem)}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.ERROR
    except OSError as exc:  # e.g. the output folder cannot be written
        from agent_eval.safetext import one_line

        # one escaped line: the path in it may be a trace file's name a pull request chose
        print(one_line(f"error: {exc}"), file=sys.stderr)
        return ExitCode.ERROR
    except Exception as exc:  # docs/outputs.md "Exit codes": an internal error exits 2, never 1
        import traceback

        from agent_eval.safetext import log_block, one_line

        # escaped, each line behind a bar: an exception's message may quote a trace (a
        # "\n::error::" in it would be a workflow command of the job)
        print(log_block(traceback.format_exc().rstrip("\n")), file=sys.stderr)
        print(one_line(f"error: internal error: {type(exc).__name__}: {exc}")
              + f" (this is a bug in agent-eval {__version__}; please report it with the "
              "traceback above)", file=sys.stderr)
        return ExitCode.ERROR
    finally:
        if args.command == "run":
            gc.unfreeze()  # run.main froze start-up's objects; a caller's next run need not
        gc.enable()
    _parser().print_help()
    return ExitCode.ERROR
