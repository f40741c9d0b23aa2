"""Where the action may write: inside the workspace or the runner's temp folder, and never
through a symbolic link that the repository holds (a pull request can commit a link
``.agent-eval -> /home/runner`` as easily as a file).

- :func:`confine`: a folder the action writes into (the output folder, the working
  directory) resolved to its end, links included; outside every allowed root is an error.
- :func:`fresh_dir`: a folder the action empties and fills (an artifact unpacked into
  the workspace): no part of it below the root may be a link at all, so nothing outside
  is ever deleted or unpacked into, whatever the repository holds.
- :func:`no_linked_files`: the files about to be written in a folder are not links.
- :func:`leads_out`: a path inside the workspace that a link takes out of it (the suite
  file: what the action reads is confined as what it writes).
- :func:`mark_safe_directory`, :func:`git_head`: the workspace as a git work tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from agent_eval.errors import AgentEvalError
from agent_eval.paths import GIT_TEXT


class OutsideWorkspace(AgentEvalError, ValueError):
    """A path the action would write leads outside the workspace (or runner temp)."""


def allowed_roots(workspace: Path, env: Mapping[str, str]) -> list[Path]:
    """The folders the action may write in: the workspace and ``RUNNER_TEMP``."""
    roots = [workspace.resolve()]
    temp = env.get("RUNNER_TEMP")
    if temp:
        roots.append(Path(temp).resolve())
    return roots


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def confine(path: Path, roots: Sequence[Path], what: str) -> Path:
    """``path`` with every link followed, when that lies in one of ``roots``; else
    :class:`OutsideWorkspace` naming ``what`` (no more is said about the target)."""
    real = Path(os.path.realpath(path))
    if any(_inside(real, root) for root in roots):
        return real
    where = " or ".join(str(r) for r in roots)
    link = " (through a symbolic link)" if real != Path(os.path.abspath(path)) else ""
    raise OutsideWorkspace(f"{what} {path} leads outside {where}{link}; agent-eval writes "
                           "only inside the workspace and the runner's temp folder")


def leads_out(path: Path, root: Path) -> bool:
    """``path`` is inside ``root`` as written but not with its links followed: a link the
    repository holds leads out of it. (A path outside ``root`` as written is not one.)"""
    return _inside(Path(os.path.abspath(path)), root) and not _inside(
        Path(os.path.realpath(path)), root)


def fresh_dir(root: Path, *parts: str) -> Path:
    """``root/parts…`` emptied (or made), when no part of it below ``root`` is a link or
    a file; :class:`OutsideWorkspace` otherwise. ``root`` itself must be a real folder
    (:func:`confine` it first)."""
    current = root
    for part in parts:
        current = current / part
        shown = current.relative_to(root).as_posix()
        if current.is_symlink():
            raise OutsideWorkspace(f"{shown} (in {root}) is a symbolic link; agent-eval does "
                                   "not delete or unpack through links: remove it from the "
                                   "repository")
        if current.exists() and not current.is_dir():
            raise OutsideWorkspace(f"{shown} (in {root}) is a file, not a folder")
    if current.exists():
        shutil.rmtree(current)  # refuses a link itself, never follows one inside
    current.mkdir(parents=True)
    return current


def no_linked_files(folder: Path, names: Iterable[str]) -> None:
    """:class:`OutsideWorkspace` when a file about to be written in ``folder`` is a link
    (writing would follow it wherever it points)."""
    for name in names:
        if (folder / name).is_symlink():
            raise OutsideWorkspace(f"{folder / name} is a symbolic link; agent-eval does not "
                                   "write through links: remove it from the repository")


# ---------------------------------------------------------------- the git work tree
def mark_safe_directory(workspace: Path, log: Callable[[str], None]) -> None:
    """``git config --global --add safe.directory WORKSPACE``: the container runs as
    another user than the one that checked the repository out. Never fails."""
    git = shutil.which("git")
    if git is None:
        log("git is not installed; not marking the workspace as a safe.directory")
        return
    try:
        got = subprocess.run([git, "config", "--global", "--get-all", "safe.directory"],
                             capture_output=True, **GIT_TEXT, timeout=20, check=False)
        if str(workspace) in got.stdout.splitlines() or "*" in got.stdout.splitlines():
            return
        done = subprocess.run([git, "config", "--global", "--add", "safe.directory",
                               str(workspace)], capture_output=True, **GIT_TEXT, timeout=20,
                              check=False)
        if done.returncode != 0:
            log(f"could not mark {workspace} as a git safe.directory: "
                f"{done.stderr.strip() or done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        log(f"could not mark {workspace} as a git safe.directory: {exc}")


def git_head(workspace: Path) -> str | None:
    """The commit checked out in the workspace, if it is a git work tree."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        got = subprocess.run([git, "-C", str(workspace), "rev-parse", "--verify", "HEAD"],
                             capture_output=True, **GIT_TEXT, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = got.stdout.strip()
    return sha if got.returncode == 0 and len(sha) in (40, 64) else None
