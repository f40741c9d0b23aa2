"""Errors a user can act on, and the exit codes.

Every error that stops a run is an :class:`AgentEvalError`: its ``problems`` are what the
command line prints (``error: …``, one line each) before it exits with
:attr:`ExitCode.ERROR`, and what the action writes as ``::error`` lines and in the job
summary. The subclasses say where the problem is: the suite (:class:`ConfigError`), a
results file (:class:`ResultsFileError`), and, in their modules, the GitHub API
(``github.client.ApiError``), the workspace (``github.workspace.OutsideWorkspace``), git
and the baseline (``baseline.GitError``, ``baseline.BaselineError``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    """The exit codes of every command (docs/results.md "Exit codes")."""

    OK = 0  # verdict pass or warn (any verdict under --fail-on never), or a command done
    FAIL = 1  # verdict fail (or warn under --fail-on warn)
    ERROR = 2  # verdict error, or the run stopped: a config error, an internal error, …
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as a shell reports it)


# ``--fail-on`` (and the action's ``fail-on``): the least verdict that exits FAIL, or never
FAIL_ON = ("fail", "warn", "never")


class AgentEvalError(Exception):
    """The base of the errors that stop a run; ``problems``: what to say, one line each."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


class ConfigError(AgentEvalError):
    """One or more problems in the suite file or a policy file (exit code 2).

    ``problems`` holds every problem found, each already formatted as
    ``FILE:LINE:COL: message``.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__(*problems)

    @classmethod
    def at(cls, file: str, line: int, col: int, message: str) -> ConfigError:
        return cls([f"{file}:{line}:{col}: {message}"])


class WorkerDied(ConfigError):
    """A ``--jobs`` worker process died (a crash, the OOM killer): the run stops with
    exit code 2 and a message naming the file it was reading."""


class ResultsFileError(AgentEvalError, ValueError):
    """A results file (``report``, ``diff``, ``merge``, a baseline) that cannot be read,
    in one line naming it."""


@dataclass(frozen=True, slots=True)
class InputError:
    """A problem in the trace input. The rest of the input is still evaluated."""

    rule: str  # input/parse_error, input/invalid_event, ...
    file: str
    line: int  # 1-based; 0 when the problem concerns the whole file
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class MoreInputErrors(InputError):
    """The input errors of one file beyond ``limits.max_input_errors``: counted, not
    kept. An input error itself (``rule``: input/limit_exceeded, ``line``: the first of
    them, ``message``: how many, of which rules, on which lines); the counts are kept
    too, so that the errors of a file read in parts (``--jobs``) are bounded again as
    one file's (``readers.ErrorBound``)."""

    rules: tuple[tuple[str, int], ...]  # (rule, how many), by rule
    first: int  # the least and the greatest line among them (0: none had a line)
    last: int
