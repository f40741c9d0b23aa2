"""`tool_lock:` is confined to the repository like every file a config names: a path
that leaves it (`../x`, an absolute path, a committed link leading out) is a config error
at the `tool_lock:` line that names the path as written, for `agent-eval run` (nothing is
read) and for `agent-eval lock` (nothing is written, not even through a link)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agent_eval._cli import main
from agent_eval.api import load_suite
from agent_eval.errors import ConfigError
from agent_eval.live import pinning
from agent_eval.live.outcome import LiveOutcome

SECRET = '{"version": 1, "servers": {"a": {"tools": {}}}}\n'


def repo(tmp_path: Path, lock: str) -> Path:
    """A repository (with .git) holding a suite whose tool_lock is ``lock``; a lock-shaped
    file sits outside it, at ``tmp_path/outside/secret.json``."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text(SECRET)
    (root / "agent-eval.yaml").write_text(
        f'version: "1"\nsuite: s\ntool_lock: {lock}\nservers:\n'
        f"  a: {{command: {sys.executable}}}\n")
    return root


CASES = ["../outside/secret.json", "ABSOLUTE", "link.json", "links/secret.json"]


def make(tmp_path: Path, case: str) -> tuple[Path, str]:
    """The repository for ``case`` and the path as the suite writes it."""
    written = str(tmp_path / "outside" / "secret.json") if case == "ABSOLUTE" else case
    root = repo(tmp_path, written)
    if case == "link.json":
        (root / "link.json").symlink_to(tmp_path / "outside" / "secret.json")
    if case == "links/secret.json":
        (root / "links").symlink_to(tmp_path / "outside")
    return root, written


@pytest.mark.parametrize("case", CASES)
def test_a_lock_outside_is_a_config_error_at_its_line(tmp_path: Path, case: str) -> None:
    root, written = make(tmp_path, case)
    with pytest.raises(ConfigError) as exc:
        load_suite(root / "agent-eval.yaml")
    [problem] = exc.value.problems
    assert problem.startswith("agent-eval.yaml:3:") and "outside the repository" in problem
    assert f"tool_lock '{written}'" in problem
    if case != "ABSOLUTE":  # never where a link leads
        assert "outside/" not in problem.replace("../outside/", "")


@pytest.mark.parametrize("case", CASES)
def test_run_reads_no_lock_outside(tmp_path: Path, case: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    root, written = make(tmp_path, case)
    code = main(["run", "--config", str(root / "agent-eval.yaml"), "--output-dir",
                 str(root / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "agent-eval.yaml:3:" in err and "outside the repository" in err
    assert f"tool_lock '{written}'" in err


@pytest.mark.parametrize("case", CASES)
def test_lock_writes_no_lock_outside(tmp_path: Path, case: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    root, _ = make(tmp_path, case)
    (tmp_path / "outside" / "secret.json").unlink()  # `lock` would create it
    code = main(["lock", "--config", str(root / "agent-eval.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and "agent-eval.yaml:3:" in err and "outside the repository" in err
    assert list((tmp_path / "outside").iterdir()) == []


def test_lock_refuses_a_link_out_made_while_it_ran(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The servers run between loading the suite and writing the lock: a link that
    appears meanwhile in the lock's folder is refused too, naming the path as written."""
    root = repo(tmp_path, "locks/tools.lock.json")
    (root / "locks").mkdir()

    def run_live(*args: object, **kwargs: object) -> LiveOutcome:
        (root / "locks").rmdir()
        (root / "locks").symlink_to(tmp_path / "outside")
        return LiveOutcome(listings={"a": []})

    monkeypatch.setattr("agent_eval.live.runner.run_live", run_live)
    code = main(["lock", "--config", str(root / "agent-eval.yaml")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "agent-eval.yaml:3:" in err and "tool_lock locks/tools.lock.json leads outside" in err
    assert str(tmp_path / "outside") not in err
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.json"]


def test_a_link_at_the_lock_is_replaced_not_written_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link inside the repository to a file inside it is fine; the lock is written
    atomically, never through a link that appears at its place."""
    root = repo(tmp_path, "tools.lock.json")
    target = root / "kept.json"
    target.write_text("{}\n")

    def run_live(*args: object, **kwargs: object) -> LiveOutcome:
        (root / "tools.lock.json").symlink_to(target)
        return LiveOutcome(listings={"a": []})

    monkeypatch.setattr("agent_eval.live.runner.run_live", run_live)
    assert main(["lock", "--config", str(root / "agent-eval.yaml")]) == 0
    assert target.read_text() == "{}\n"
    assert not (root / "tools.lock.json").is_symlink()
    assert '"servers"' in (root / "tools.lock.json").read_text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_as_the_lock_is_unusable_not_a_hang(tmp_path: Path) -> None:
    """Opening a FIFO waits for a writer: the lock is opened without waiting and refused."""
    lock = tmp_path / "tools.lock.json"
    os.mkfifo(lock)
    with pytest.raises(ValueError, match="not a regular file"):
        pinning.read_lock(lock)
    (tmp_path / "dir.json").mkdir()
    with pytest.raises((ValueError, OSError)):
        pinning.read_lock(tmp_path / "dir.json")
