"""Repository paths: the root a run's locations are relative to, and those relative
paths (``/`` separated, as results and reports show them)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["rel", "repo_root"]


def repo_root(start: Path) -> Path:
    """The enclosing git work tree, else ``start`` (the config's folder)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (``../`` steps when it is outside)."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return os.path.relpath(path.resolve(), root.resolve()).replace(os.sep, "/")
