"""What every importer builds: a :class:`Translation` of a peer's config, with a
:class:`Builder` recording where each native key came from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from agent_eval.yamlpos import Path, Pos, Positions

__all__ = ["Builder", "PeerConfig", "Translate", "Translation", "as_dict"]


def as_dict(value: Any) -> dict[str, Any]:
    """A peer config's mapping, or an empty one where the file has something else (the
    importers report wrong shapes where they matter, at their lines)."""
    return value if isinstance(value, dict) else {}


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


# (config file, repository root, read a file, path relative to the root) -> translation
Translate = Callable[[FsPath, FsPath, Callable[[FsPath], str], Callable[[FsPath], str]],
                     Translation]


class PeerConfig:
    """A peer's config being translated: its path, how files are read and named, the
    native data (``out``) and the :class:`Builder` recording where each key came from."""

    dialect: str

    def __init__(self, path: FsPath, read: Callable[[FsPath], str],
                 rel: Callable[[FsPath], str], out: dict[str, Any]) -> None:
        self.path = path
        self.read = read
        self.rel = rel
        self.file = rel(path)
        self.b = Builder(self.file)
        self.out = out
        self.t = Translation(self.dialect, out, self.b.positions)
