"""Output files: written atomically, and never outside the repository (docs/security.md)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from agent_eval.errors import ConfigError
from agent_eval.outputs import atomic_text, atomic_write, output_folder


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as fh:
        fh.write(b"half a")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_a_write_replaces_the_file_with_the_usual_permissions(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    with atomic_text(target) as fh:
        fh.write("é\n")
    assert target.read_bytes() == "é\n".encode()
    plain = tmp_path / "plain"
    plain.write_text("")
    assert target.stat().st_mode == plain.stat().st_mode


def test_a_symlink_at_the_destination_is_replaced_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "out").mkdir()
    os.symlink(victim, tmp_path / "out" / "results.json")
    with atomic_write(tmp_path / "out" / "results.json") as fh:
        fh.write(b"{}")
    assert victim.read_text() == "keep"
    assert (tmp_path / "out" / "results.json").read_text() == "{}"
    assert not (tmp_path / "out" / "results.json").is_symlink()


def test_output_folders(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    assert output_folder(root / "a" / "b", root, "s.yaml:3:3").is_dir()
    with pytest.raises(ConfigError, match=r"^s.yaml:3:3: output.dir .* is outside"):
        output_folder(root / ".." / "x", root, "s.yaml:3:3")
    assert not (tmp_path / "x").exists()
    # a folder given on the command line may be anywhere...
    assert output_folder(tmp_path / "y", root).is_dir()
    # ...but a path inside the repository may not leave it through a link
    os.symlink(tmp_path, root / "link")
    for where in (None, "s.yaml:3:3"):
        with pytest.raises(ConfigError, match="symbolic link"):
            output_folder(root / "link" / "z", root, where)
    assert not (tmp_path / "z").exists()


def _writing_command(tmp_path: Path, command: str) -> tuple[Path, list[str]]:
    """A repository holding the bundled example, run, and the arguments of ``command``
    (report, diff or convert) on its results or a trace, without ``-o``."""
    import subprocess
    import sys

    from tests.conftest import copy_example

    repo = copy_example(tmp_path / "repo")
    (repo / ".git").mkdir()
    run = subprocess.run([sys.executable, "-m", "agent_eval", "run", "-q", "--no-timings"],
                         cwd=repo, capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stderr
    results = str(repo / "agent-eval-results" / "results.json")
    trace = str(next((repo / "traces").glob("*.jsonl")))
    return repo, {"report": ["report", results, "-f", "markdown"],
                  "diff": ["diff", results, results, "-f", "markdown"],
                  "convert": ["convert", trace, "-q"]}[command]


def _read_fifo(path: Path, got: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as fh:
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


@pytest.mark.parametrize("command", ["report", "diff", "convert"])
def test_an_output_file_that_is_a_device_or_a_pipe_is_written_into(
        tmp_path: Path, command: str) -> None:
    """`-o /dev/null`, `-o /dev/stdout`: the output was written beside and renamed onto
    the path, which replaced the device (as root, the system's /dev/null became a regular
    file: every later `2>/dev/null` wrote into it), and `report`/`diff` first removed a
    link at the path (/dev/stdout). Outside the repository, a path leading to a device, a
    FIFO or a socket is written into, as a shell's `>` would; the link is kept. (A FIFO
    and a device node made here stand for them: never the machine's own.)"""
    import subprocess
    import sys


    repo, args = _writing_command(tmp_path, command)
    outside = tmp_path / "outside"
    outside.mkdir()
    fifo = outside / "pipe"
    os.mkfifo(fifo)
    link = outside / "stdout"
    link.symlink_to(fifo)
    for target in (fifo, link):
        got: list[bytes] = []
        reader = _read_fifo(fifo, got)
        done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o", str(target)],
                              cwd=repo, capture_output=True, text=True, check=False,
                              timeout=60)
        reader.join(10)
        assert done.returncode in (0, 1), done.stderr
        assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # not replaced by a regular file
        assert link.is_symlink()  # not removed
        assert got and len(got[0]) > 100, (target, got)
    if os.geteuid() == 0:  # a character device: a node of /dev/null's numbers, here
        null = outside / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o", str(null)],
                              cwd=repo, capture_output=True, text=True, check=False,
                              timeout=60)
        assert done.returncode in (0, 1), done.stderr
        assert stat.S_ISCHR(os.lstat(null).st_mode)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
@pytest.mark.parametrize("command", ["report", "diff", "convert"])
def test_an_output_file_that_is_the_standard_output_redirected_to_a_file_is_written_into(
        tmp_path: Path, command: str) -> None:
    """`-o /dev/stdout > out.txt`: /dev/stdout leads (through /proc/self/fd/1) to a regular
    file, so it was not taken for a device: report/diff removed the link, and the output
    was renamed onto it, a regular file in /dev (as root, the system's /dev/stdout
    replaced), out.txt left empty; `-o /dev/fd/1` (a linked folder) stopped with "No such
    file or directory" of a temporary file. Both write into out.txt now, the links kept.
    A socket, which cannot be opened, is refused by name. (Links made here stand for
    /dev/stdout and /dev/fd: never the machine's own.)"""
    import socket
    import subprocess
    import sys


    repo, args = _writing_command(tmp_path, command)
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "stdout").symlink_to("/proc/self/fd/1")
    (dev / "fd").symlink_to("/proc/self/fd")
    plain = subprocess.run([sys.executable, "-m", "agent_eval", *args], cwd=repo,
                           capture_output=True, check=False, timeout=60)
    assert plain.returncode in (0, 1) and len(plain.stdout) > 100
    for target in (dev / "stdout", dev / "fd" / "1"):
        out = tmp_path / "out.txt"
        with out.open("wb") as fh:
            done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o",
                                   str(target)], cwd=repo, stdout=fh,
                                  stderr=subprocess.PIPE, text=True, check=False, timeout=60)
        assert done.returncode == plain.returncode, done.stderr
        assert out.read_bytes() == plain.stdout, target
        assert (dev / "stdout").is_symlink() and (dev / "fd").is_symlink()
        assert sorted(p.name for p in dev.iterdir()) == ["fd", "stdout"]
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(dev / "sock"))
        done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o",
                               str(dev / "sock")], cwd=repo, capture_output=True, text=True,
                              check=False, timeout=60)
    finally:
        sock.close()
    assert done.returncode == 2
    assert f"{dev / 'sock'} is a socket" in done.stderr, done.stderr
    assert stat.S_ISSOCK(os.lstat(dev / "sock").st_mode)


@pytest.mark.parametrize("command", ["report", "diff", "convert"])
def test_a_device_or_a_pipe_inside_the_root_is_written_into_not_replaced(
        tmp_path: Path, command: str) -> None:
    """`report -o /dev/null` run in `/` (a cron job's or systemd unit's folder, or the
    action image's, which has no WORKDIR): report and diff take the current folder for the
    root (convert the repository above it), so /dev/null was inside it and renamed onto,
    the system's /dev/null replaced by a regular file as root. A device, FIFO or socket
    node itself (no link: git commits none) is written into wherever it is. (A folder
    here holding dev/null and dev/pipe stands for /: never the machine's own.) So is a
    link in no git work tree that leads to one (`-o /dev/stdout` in /, a pipe then)."""
    import subprocess
    import sys


    repo, args = _writing_command(tmp_path, command)
    dev = repo / "dev"  # convert's root is the repository; report's and diff's the folder
    dev.mkdir()
    fifo = dev / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o", "dev/pipe"],
                          cwd=repo, capture_output=True, text=True, check=False, timeout=60)
    reader.join(10)
    assert done.returncode in (0, 1), done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # not replaced by a regular file
    assert got and len(got[0]) > 100
    if os.geteuid() == 0:  # a character device: a node of /dev/null's numbers, here
        null = dev / "null"
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o",
                               str(null)], cwd=repo, capture_output=True, text=True,
                              check=False, timeout=60)
        assert done.returncode in (0, 1), done.stderr
        assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert sorted(p.name for p in dev.iterdir()) == sorted(
        ["pipe", *(["null"] if os.geteuid() == 0 else [])])
    if not os.path.isdir("/proc/self/fd"):
        return
    # -o /dev/stdout in / (no git work tree there): the link was removed and the output
    # renamed onto it, a regular file in /dev, nothing written to the pipe
    slash = tmp_path / "slash"
    (slash / "dev").mkdir(parents=True)
    (slash / "dev" / "stdout").symlink_to("/proc/self/fd/1")
    shown = subprocess.run([sys.executable, "-m", "agent_eval", *args], cwd=slash,
                           capture_output=True, check=False, timeout=60)
    wrote = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o", "dev/stdout"],
                           cwd=slash, capture_output=True, check=False, timeout=60)
    assert wrote.returncode == shown.returncode, wrote.stderr
    assert len(shown.stdout) > 100 and wrote.stdout == shown.stdout
    assert (slash / "dev" / "stdout").is_symlink()


@pytest.mark.parametrize("command", ["report", "diff", "convert"])
def test_an_output_file_that_is_a_folder_is_refused_saying_so(tmp_path: Path,
                                                              command: str) -> None:
    """``-o FOLDER`` said "[Errno 21] Is a directory: '.../.FOLDER.x1y2.tmp' -> 'FOLDER'"
    (a temporary file the user never named) and not what to do."""
    import subprocess
    import sys

    repo, args = _writing_command(tmp_path, command)
    (repo / "out").mkdir()
    done = subprocess.run([sys.executable, "-m", "agent_eval", *args, "-o", "out"], cwd=repo,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "error: --output 'out' is a folder, not a file: give the file to write, for example "
        "'out/out.txt'")
    assert list((repo / "out").iterdir()) == [] and not list(repo.glob(".out.*"))
