"""Repository paths: the root a run's locations are relative to, and those relative
paths (``/`` separated, as results and reports show them)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["GIT_TEXT", "as_written", "not_utf8", "real", "rel", "repo_relative", "repo_root"]

# git's output (paths among it) decoded as the file system's names are: bytes a name holds
# come back as the same name (the locale's encoding, the default, stopped the run with a
# UnicodeDecodeError on a checkout under a non-ASCII folder where the locale is ASCII, or
# read it as other characters on a Windows runner, whose git writes UTF-8)
GIT_TEXT: dict[str, Any] = {"text": True, "encoding": sys.getfilesystemencoding(),
                            "errors": sys.getfilesystemencodeerrors()}


def not_utf8(text: str) -> bool:
    """A path (or a name given on the command line) holding bytes that are not UTF-8
    (Python lists them as lone surrogates, U+DC80-U+DCFF): no output can write it
    (results.json, a fingerprint's hash)."""
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def repo_root(start: Path) -> Path:
    """The enclosing git work tree, else ``start`` (the config's folder)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def real(path: Path | str) -> Path:
    """``path`` absolute, with every symbolic link followed (``Path.resolve``); a link
    loop is left in it (``resolve`` raises ``RuntimeError`` on one in Python 3.11): opening
    the path then fails with ``ELOOP``, which its caller reports as for any unreadable
    file."""
    return Path(os.path.realpath(path))


def rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (``../`` steps when it is outside), every symbolic
    link followed."""
    real_path, real_root = real(path), real(root)
    try:
        return real_path.relative_to(real_root).as_posix()
    except ValueError:
        return os.path.relpath(real_path, real_root).replace(os.sep, "/")


def as_written(path: Path | str, root: Path | str) -> str:
    """``path`` relative to ``root`` as it is written: ``.`` and ``..`` folded, no
    symbolic link followed. What an error about a file the config names shows: it names a
    link, never where the link leads (docs/security.md)."""
    return os.path.relpath(os.path.normpath(os.path.abspath(path)),
                           os.path.abspath(root)).replace(os.sep, "/")


def repo_relative(path: str) -> bool:
    """Whether ``path`` (as results show paths) names a place inside the root: relative,
    with no ``..`` segment. A trace read through a ``--traces`` glob that points outside
    the root (``../../data/x.jsonl``) does not, nor does what a results file from elsewhere
    may say (``/etc/passwd``, ``../../x.yaml``)."""
    parts = path.replace("\\", "/").split("/")
    return bool(path) and parts[0] != "" and ".." not in parts
