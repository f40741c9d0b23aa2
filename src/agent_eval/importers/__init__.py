"""Peer configs, read as they are: Assay, EvalView and CIAgent (docs/migrating.md).

An importer translates a peer's config into the native suite (plain data, as if it had been
read from an ``agent-eval.yaml``) whose every key remembers the line of the peer file it came
from, so findings point at *their* files. ``agent-eval run --config`` detects the dialect by
content (or takes ``--dialect``); ``agent-eval import`` writes the same translation as a
native suite file, with comments saying where each key came from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from agent_eval.yamlpos import Path, Pos, Positions

DIALECTS = ("native", "assay", "evalview", "ciagent")


@dataclass
class Translation:
    """A peer config as a native suite: data, positions (in the peer files), the native
    policies its tests use (by absolute path), and what could not be carried over."""

    dialect: str
    data: dict[str, Any]
    positions: Positions
    policies: dict[str, tuple[dict[str, Any], Positions]] = field(default_factory=dict)
    unsupported: list[tuple[str, int, int, str]] = field(default_factory=list)  # file, l, c


class Builder:
    """Builds native data while recording, for every native path, the peer position it
    came from."""

    def __init__(self, file: str) -> None:
        self.positions = Positions(file)
        self.positions.set((), Pos(1, 1, file))

    def at(self, path: Path, src: Positions, src_path: Path) -> None:
        pos = src.get(src_path)
        self.positions.set(path, Pos(pos.line, pos.col, src.file_of(pos)))

    def tree(self, path: Path, value: Any, src: Positions, src_path: Path) -> Any:
        """Record positions for ``value`` and everything under it (copied as is)."""
        self.at(path, src, src_path)
        if isinstance(value, dict):
            for k, v in value.items():
                self.tree((*path, k), v, src, (*src_path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.tree((*path, i), v, src, (*src_path, i))
        return value


def detect(data: Any) -> str:
    """The dialect of a config document, by its keys."""
    if not isinstance(data, dict):
        return "native"
    if "queries" in data or ("agent" in data and "scenarios" in data
                             and "suite" not in data):
        return "ciagent"
    if "input" in data and "expected" in data and "name" in data:
        return "evalview"
    tests = data.get("tests")
    if isinstance(tests, list) and any(isinstance(t, dict) and "expected" in t for t in tests):
        return "assay"
    if "model" in data and "suite" in data and "scenarios" not in data:
        return "assay"
    return "native"


def detect_folder(folder: FsPath) -> str | None:
    """A folder of EvalView test cases is EvalView."""
    return "evalview" if folder.is_dir() else None


Translate = Callable[[FsPath, FsPath, Callable[[FsPath], str], Callable[[FsPath], str]],
                     Translation]


def translator(dialect: str) -> Translate:
    if dialect == "assay":
        from agent_eval.importers.assay import translate as t
    elif dialect == "evalview":
        from agent_eval.importers.evalview import translate as t
    elif dialect == "ciagent":
        from agent_eval.importers.ciagent import translate as t
    else:
        raise ValueError(dialect)
    return t
