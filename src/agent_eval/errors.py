"""Errors a user can act on: every one names a file and a line."""

from __future__ import annotations

from dataclasses import dataclass


class ConfigError(Exception):
    """One or more problems in the suite file or a policy file (exit code 2).

    ``problems`` holds every problem found, each already formatted as
    ``FILE:LINE:COL: message``.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems

    @classmethod
    def at(cls, file: str, line: int, col: int, message: str) -> ConfigError:
        return cls([f"{file}:{line}:{col}: {message}"])


class WorkerDied(ConfigError):
    """A ``--jobs`` worker process died (a crash, the OOM killer): the run stops with
    exit code 2 and a message naming the file it was reading."""


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
