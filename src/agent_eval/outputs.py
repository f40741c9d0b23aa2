"""Writing output files: atomically, and never outside the repository.

* Every file is written to a temporary file in the same folder and renamed into place
  (:func:`atomic_write`), so a run killed mid-write leaves the previous file whole, never
  a truncated one; the rename replaces a symbolic link at the destination rather than
  writing through it. An ``--output FILE`` outside the repository that leads to a device,
  a FIFO or a socket (``-o /dev/null``), or that is one itself, is written into instead
  (``through``, :func:`written_into`).
* An output folder written in the suite (``output.dir``) must be inside the repository;
  any output folder inside the repository must stay inside it once symbolic links are
  followed (a committed ``agent-eval-results -> /somewhere`` link is refused). A folder
  given on the command line outside the repository is the operator's own choice
  (:func:`output_folder`).
* The files a run is about to write are removed from the folder before it reads a trace
  (:func:`clear_outputs`): a run that stops (exit 2) leaves none of them, never an earlier
  run's results that a later step could take for this one's; ``report`` and ``diff``
  remove their ``--output FILE`` first, for the same reason (:func:`clear_output_file`).
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, TextIO

from agent_eval.errors import ConfigError


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _special(path: Path | str) -> int:
    """The file type of what ``path`` leads to (symbolic links followed) when it is no
    regular file nor folder: a character device (``/dev/null``), a FIFO or a socket
    (``/dev/stdout`` leads to a pipe or a terminal), a block device; else 0."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return 0
    return 0 if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else stat.S_IFMT(mode)


def _stream(path: Path | str) -> int | None:
    """The standard output or error (1, 2) when ``path`` leads to the very file it writes
    (``-o /dev/stdout > out.txt``: a link into ``/proc/self/fd``, whose file is a regular
    one), else None."""
    try:
        here = os.stat(path)
    except (OSError, ValueError):
        return None
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            if os.path.samestat(here, os.fstat(fd)):
                return fd
    return None


@contextlib.contextmanager
def atomic_write(path: Path | str, *, through: bool = False) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` with: a temporary file beside it, renamed onto
    ``path`` when the block ends without an error (removed when it raises). With
    ``through`` (an ``--output FILE`` outside the repository: the operator's), a path
    that leads to a device, a FIFO or a socket (``-o /dev/null``, ``-o /dev/stdout``) is
    written into, as a shell's ``>`` would: renamed onto, it was replaced by a regular
    file (as root, the system's ``/dev/null`` itself). So is one that leads to the file
    the standard output or error writes (``-o /dev/stdout > out.txt``: the link was
    replaced and out.txt left empty). A block device or a socket is refused."""
    target = Path(path)
    kind = _special(target) if through else 0
    if kind == stat.S_IFBLK:
        raise OSError(f"{target} is a block device: agent-eval does not write to one")
    if kind == stat.S_IFSOCK:  # (open() cannot open one: "No such device or address")
        raise OSError(f"{target} is a socket: agent-eval cannot write to one")
    stream = _stream(target) if through and not kind else None
    if stream is not None:  # the file the shell's > made: written where stdout writes
        with os.fdopen(os.dup(stream), "wb") as fh:
            yield fh
        return
    if kind:
        with open(target, "wb") as fh:
            yield fh
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # what open() would have made
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def clear_outputs(folder: Path, filenames: list[str], option: str = "--output-dir") -> None:
    """Remove ``filenames`` from ``folder`` where an earlier run left them. A symbolic link
    is removed, never followed; a folder of that name is left (writing the file will say
    it is in the way). Raises :class:`ConfigError` when one cannot be removed (naming
    ``option`` as the way around it)."""
    for name in filenames:
        path = folder / name
        try:
            if path.is_symlink() or path.is_file():
                path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise ConfigError([f"{path}: an earlier run's output cannot be removed "
                               f"({exc.strerror or exc}); remove it, or pass another "
                               f"{option}"]) from None


def clear_output_file(path: Path, root: Path, inputs: Sequence[str] = ()) -> None:
    """Remove ``path`` (``--output FILE`` of ``report`` and ``diff``) where an earlier
    command left it, before anything that can fail: one that stops (exit 2) leaves no file
    a later step could take for its output. Only that name, as :func:`clear_outputs`
    removes it (a symbolic link is removed, never followed), and only in a folder that is
    not a symbolic link and, inside ``root``, does not lead out of it through one (where
    :func:`output_file` would refuse to write). A FILE that is one of the command's
    ``inputs`` is kept: it is read first, then replaced."""
    for given in inputs:
        with contextlib.suppress(OSError):  # (either not there: not the same file)
            if os.path.samefile(path, given):
                return
    if written_into(path, root) and (_special(path) or _stream(path) is not None):
        return  # -o /dev/stdout (a link): written through (atomic_write), never removed
    folder = path.parent if str(path.parent) else Path()
    if folder.is_symlink() or not folder.is_dir():
        return
    lexical = os.path.normpath(os.path.abspath(folder))
    if (_inside(lexical, os.path.normpath(os.path.abspath(root)))
            and not _inside(os.path.realpath(lexical), os.path.realpath(root))):
        return
    clear_outputs(folder, [path.name], "--output")


@contextlib.contextmanager
def atomic_text(path: Path | str, *, through: bool = False) -> Iterator[TextIO]:
    """:func:`atomic_write` for UTF-8 text."""
    with atomic_write(path, through=through) as raw:
        fh = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        try:
            yield fh
        finally:
            fh.flush()
            fh.detach()  # atomic_write closes the file


def check_output_folder(folder: Path, root: Path, where: str | None = None) -> None:
    """What :func:`output_folder` refuses before it makes anything (a suite's folder
    outside ``root``, a folder inside it that leads out through a link); ``validate``
    checks a suite's ``output.dir`` with it, as ``run`` will."""
    lexical = os.path.normpath(os.path.abspath(folder))
    in_root = _inside(lexical, os.path.normpath(os.path.abspath(root)))
    shown = where or str(folder)
    if where is not None and not in_root:
        raise ConfigError([f"{where}: output.dir '{folder}' is outside the repository; "
                           "agent-eval writes only inside it (use a folder below the "
                           "repository, or pass --output-dir)"])
    if in_root and not _inside(os.path.realpath(lexical), os.path.realpath(root)):
        raise ConfigError([f"{shown}: the output folder '{folder}' leads outside the "
                           "repository through a symbolic link; nothing was written "
                           "(remove the link, or pass another --output-dir)"])


def output_folder(folder: Path, root: Path, where: str | None = None) -> Path:
    """``folder``, created, once it is known to be a safe place to write.

    ``where`` (``FILE:LINE:COL`` of ``output.dir``) marks a folder written in the suite:
    it must be inside ``root``. A folder inside ``root`` (by its path) must stay inside
    it when symbolic links are followed. Raises :class:`ConfigError`, before anything is
    created."""
    check_output_folder(folder, root, where)
    shown = where or str(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, a read-only or full disk
        if where is not None:
            what, todo = f"output.dir '{folder}'", "write another folder as output.dir"
        else:
            what, todo = f"the output folder '{folder}'", "pass another folder"
        file = _file_in_the_way(folder)
        if file is None:
            why = f"cannot be made ({exc.strerror or exc})"
        elif file == folder:
            why, todo = "is a file, not a folder", f"{todo}, or move the file away"
        else:
            why, todo = (f"cannot be made: '{file}' in its path is a file, not a folder",
                         f"{todo}, or move the file away")
        raise ConfigError([f"{shown}: {what} {why}; {todo}"]) from None
    return folder


def _file_in_the_way(folder: Path) -> Path | None:
    """The first part of ``folder`` (as written) that is there but is not a folder."""
    for part in (*reversed(folder.parents), folder):
        if part.exists() and not part.is_dir():
            return part
    return None


def outside(path: Path, root: Path) -> bool:
    """Whether ``path``, as written (no link followed), is outside ``root``."""
    return not _inside(os.path.normpath(os.path.abspath(path)),
                       os.path.normpath(os.path.abspath(root)))


def written_into(path: Path, root: Path) -> bool:
    """Whether an ``--output FILE`` is written into when it leads to a device, a FIFO or
    a socket (:func:`atomic_write`'s ``through``): outside ``root``, the operator's; and
    anywhere when ``path`` is such a node itself, no link (git commits none: the system's
    or the operator's), as is one in no git work tree (no repository committed a link
    there). ``report -o /dev/null`` run in ``/`` (a cron job's, a container's folder) has
    its root there: renamed onto, the system's ``/dev/null`` was replaced by a regular
    file, and ``-o /dev/stdout`` removed that link."""
    if outside(path, root):
        return True
    folder = Path(os.path.abspath(path)).parent
    if not any((f / ".git").exists() for f in (folder, *folder.parents)):
        return True
    try:
        mode = os.lstat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) \
        or stat.S_ISBLK(mode)


def output_file(path: Path, root: Path) -> Path:
    """``path`` for ``--output FILE``: its folder made with :func:`output_folder`. A
    folder is refused (it said ``Is a directory`` about a temporary file's name)."""
    if path.is_dir():
        raise ConfigError([f"--output '{path}' is a folder, not a file: give the file to "
                           f"write, for example '{path / 'out.txt'}'"])
    output_folder(path.parent if str(path.parent) else Path(), root)
    return path
