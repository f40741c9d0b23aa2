"""Output files: written atomically, and never outside the repository (docs/security.md)."""

from __future__ import annotations

import os
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
