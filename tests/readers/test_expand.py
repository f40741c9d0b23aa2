"""Trace globs: the same matches as glob.glob, but ``**`` never follows a link to a
folder, and a suite's globs never leave the repository (docs/security.md)."""

from __future__ import annotations

import glob
import os
import signal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval.readers import _glob, expand

NAMES = st.sampled_from(["a", "b", ".h", "x.jsonl", "y.json", ".z.jsonl"])
TREES = st.lists(st.lists(NAMES, min_size=1, max_size=4), max_size=12)
PATTERNS = st.sampled_from(["*", "*.jsonl", "**", "**/*.jsonl", "a/*", "a/**/x.jsonl",
                            "*/x.jsonl", "**/.z.jsonl", ".*", "a/b/x.jsonl", "**/b/*",
                            "?/*.json", "[ab]/*", "**/**/*.jsonl", "*/**/x.jsonl",
                            "**/*/**", "a/**/**/b/**"])


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=TREES, pattern=PATTERNS)
def test_same_matches_as_glob_without_links(tmp_path_factory: object, tree: list[list[str]],
                                            pattern: str) -> None:
    import pytest

    assert isinstance(tmp_path_factory, pytest.TempPathFactory)
    base = tmp_path_factory.mktemp("tree")
    for parts in tree:
        folder = base.joinpath(*parts[:-1])
        if any(p.is_file() for p in (folder, *folder.parents) if p != base and
               base in p.parents):
            continue
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / parts[-1]).exists():
            (folder / parts[-1]).write_text("")
    # glob gives a folder both as "a/a" and "a/a/" for some patterns ("**/*/**")
    expected = {e.rstrip("/") for e in glob.glob(pattern, root_dir=base, recursive=True)}
    assert sorted(set(_glob(pattern, str(base)))) == sorted(expected)


def test_repeated_double_stars_walk_each_folder_once(tmp_path: Path) -> None:
    """``**/`` thirty times (or ``*/**/`` alternating) matched the same files as one, but
    walked every way of splitting the path among the stars: exponential, a hang on a tree
    of five folders (a pattern in a pull request's config is hostile)."""
    folder = tmp_path
    for name in "abcde":
        folder = folder / name
        folder.mkdir()
        (folder / "x.jsonl").write_text("")

    def hang(signum: int, frame: object) -> None:
        raise TimeoutError("the glob ran for 10 s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(10)
    try:
        many = sorted(_glob("**/" * 30 + "x.jsonl", str(tmp_path)))
        mixed = sorted(_glob("*/**/" * 8 + "x.jsonl", str(tmp_path)))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert many == sorted(_glob("**/x.jsonl", str(tmp_path))) == [
        "a/b/c/d/e/x.jsonl", "a/b/c/d/x.jsonl", "a/b/c/x.jsonl", "a/b/x.jsonl", "a/x.jsonl"]
    assert mixed == []  # eight folders at least: the tree has five


def test_double_star_does_not_follow_links_to_folders(tmp_path: Path) -> None:
    (tmp_path / "t" / "real").mkdir(parents=True)
    (tmp_path / "t" / "real" / "x.jsonl").write_text("")
    os.symlink("..", tmp_path / "t" / "loop")
    os.symlink("real", tmp_path / "t" / "alias")
    assert sorted(_glob("t/**/*.jsonl", str(tmp_path))) == ["t/real/x.jsonl"]
    # a named folder (or one matched by *) may be a link: no recursion, no loop
    assert _glob("t/alias/x.jsonl", str(tmp_path)) == ["t/alias/x.jsonl"]
    assert sorted(_glob("t/*/x.jsonl", str(tmp_path))) == ["t/alias/x.jsonl",
                                                          "t/real/x.jsonl"]


def test_suite_globs_stay_in_the_root_but_command_line_paths_are_the_operators(
        tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "out.jsonl").write_text("")
    files, errors = expand(["../out.jsonl"], root, root, root, ("s.yaml", 3))
    assert files == [] and [(e.rule, e.file, e.line) for e in errors] == [
        ("input/outside_root", "s.yaml", 3)]
    files, errors = expand(["../out.jsonl"], root, root, root, None)
    assert [f.file for f in files] == ["../out.jsonl"] and errors == []
