"""The library surface: ``load_suite``, ``load_traces``, ``evaluate``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from agent_eval.engine import evaluate as _evaluate
from agent_eval.errors import ConfigError
from agent_eval.limits import DEFAULT
from agent_eval.paths import repo_root
from agent_eval.readers import READERS, ReadItem, SourceFile, expand, read_sources
from agent_eval.results import Results
from agent_eval.suite import Suite
from agent_eval.suite import load_suite as _load_suite
from agent_eval.textdist import suggest

__all__ = ["evaluate", "load_suite", "load_traces", "suite_sources"]

DIALECTS = ("auto", "native", "assay", "evalview", "ciagent")  # load_suite's (run --dialect)


def load_suite(path: str | os.PathLike[str] | None = None, *, dialect: str = "auto") -> Suite:
    """Load and compile a suite file (or a config of Assay, EvalView or CIAgent: see
    docs/migrating.md). Raises :class:`ConfigError` (every problem as
    ``FILE:LINE:COL: message``), ``ValueError`` for an unknown ``dialect``."""
    if dialect not in DIALECTS:  # (it was a bare ValueError naming it, once a file was read)
        raise ValueError(f"unknown dialect {dialect!r}{_hint(dialect, set(DIALECTS))}; use "
                         f"{', '.join(DIALECTS)}")
    return _load_suite(path, dialect=dialect)


def suite_sources(suite: Suite, patterns: Iterable[str] | None = None,
                  base: Path | None = None) -> tuple[list[SourceFile], list[ReadItem]]:
    """The trace files of a suite: its ``traces:`` globs, or ``patterns`` (relative to
    ``base``, default the current folder)."""
    if patterns is None:
        globs = suite.trace_globs
        if not globs:  # at an empty `traces: []` (or `traces:`), else at `suite:`
            written = suite.positions.has(("traces",))
            pos = suite.positions.get(("traces",) if written else ("suite",))
            why = ("" if not written else " (the list is empty)"
                   if suite.model.traces is not None else " ('traces:' has no value)")
            raise ConfigError([f"{suite.file}:{pos.line}:{pos.col}: no traces given{why}: "
                               "set 'traces:' in the suite or pass --traces"])
        p = suite.positions.get(("traces",))
        files, errors = expand(globs, suite.base_dir, suite.root, suite.base_dir,
                               (suite.file, p.line), suite.limits)
    else:
        folder = base or Path.cwd()
        files, errors = expand(patterns, folder, suite.root, suite.base_dir, None,
                               suite.limits)
    return files, list(errors)


def load_traces(paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
                suite: Suite | None = None, format: str = "auto") -> Iterator[ReadItem]:
    """Stream traces (and input-error records) from files or globs: a list of them, or
    one alone. Locations are relative to the suite's repository root (or the current
    folder without a suite). ``ValueError`` for an unknown ``format``."""
    if format not in ("auto", *READERS):  # (it was a KeyError, at the first file)
        raise ValueError(f"unknown trace format {format!r}"
                         f"{_hint(format, {'auto', *READERS})}; use auto or one of "
                         f"{', '.join(READERS)}")
    if isinstance(paths, (str, os.PathLike)):  # one path, not its characters
        paths = [paths]
    return _stream(paths, suite, format)


def _hint(given: object, known: set[str]) -> str:
    """:func:`suggest`'s "did you mean" for a name given as text (``format=None`` was a
    TypeError of the hint, not the ValueError saying what to give)."""
    return suggest(given, known) if isinstance(given, str) else ""


def _stream(paths: Iterable[str | os.PathLike[str]], suite: Suite | None,
            format: str) -> Iterator[ReadItem]:
    """load_traces' stream: nothing is listed or read before the first ``next``."""
    cwd = Path.cwd()
    root = suite.root if suite else repo_root(cwd)
    config_dir = suite.base_dir if suite else cwd
    files, errors = expand([str(p) for p in paths], cwd, root, config_dir, None,
                           suite.limits if suite else DEFAULT)
    yield from errors
    yield from read_sources(files, suite.format if suite and format == "auto" else format)


def evaluate(suite: Suite, traces: Iterable[ReadItem], *,
             strict_coverage: bool = False) -> Results:
    """Evaluate traces against a suite. No file is written, except beyond
    :data:`agent_eval.spill.SPILL_AT` findings: those go to a private temporary folder,
    removed with the results (:meth:`Results.close`). ``strict_coverage``: a tool named in
    the config that no trace calls is an error (coverage/unexercised). A live suite
    (``servers:``, ``probes:``) is a :class:`ConfigError`: its probes are not run here,
    and the verdict would pass without them."""
    if isinstance(traces, str | os.PathLike):  # (its characters were read as items)
        raise TypeError("evaluate() takes traces, not a path: give it "
                        f"load_traces({os.fspath(traces)!r}, suite)")
    suite.refuse_live("agent_eval.evaluate()", "Run the suite with `agent-eval run` (with "
                      "the [mcp] extra), which starts the servers and runs the probes")
    return _evaluate(suite, traces, strict_coverage=strict_coverage)
