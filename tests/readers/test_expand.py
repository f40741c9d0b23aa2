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


def _repo_with_odd_entries(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "traces").mkdir(parents=True)
    (root / "traces" / "a.jsonl").write_text("")
    (root / "agent-eval.yaml").write_text("")
    (tmp_path / "secret.jsonl").write_text("")
    os.symlink("loop.jsonl", root / "traces" / "loop.jsonl")
    os.symlink("missing.jsonl", root / "traces" / "gone.jsonl")
    os.mkfifo(root / "traces" / "pipe.jsonl")
    os.symlink("../agent-eval.yaml", root / "traces" / "suite.jsonl")
    os.symlink(tmp_path / "secret.jsonl", root / "traces" / "out.jsonl")
    (root / "traces" / "folder.jsonl").mkdir()  # a folder: passed over, as before
    return root


def test_entries_that_are_not_regular_files_are_input_errors_named_as_matched(
        tmp_path: Path) -> None:
    """A dangling link, a link in a loop and a FIFO were skipped without a word; a link to a
    file of the repository was named after its target (agent-eval.yaml); a link leading
    outside was reported once per glob that matched it. Now each entry is named as the glob
    matched it, once, and the FIFO is never opened (opening one blocks)."""
    root = _repo_with_odd_entries(tmp_path)
    old = signal.signal(signal.SIGALRM, signal.SIG_DFL)  # a blocked open: killed, not hung
    signal.alarm(10)
    try:
        files, errors = expand(["traces/*.jsonl", "traces/*"], root, root, root,
                               ("s.yaml", 3))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert [(f.file, f.path) for f in files] == [
        ("traces/a.jsonl", str(root / "traces" / "a.jsonl")),
        ("traces/suite.jsonl", str(root / "agent-eval.yaml"))]  # read where it leads
    assert [(e.rule, e.file, e.line, e.message) for e in errors] == [
        ("input/unreadable_file", "traces/gone.jsonl", 0,
         "a symbolic link to nothing (what it leads to does not exist); a trace glob reads "
         "regular files only: it was not read"),
        ("input/unreadable_file", "traces/loop.jsonl", 0,
         "a symbolic link in a loop (it leads back to itself); a trace glob reads regular "
         "files only: it was not read"),
        ("input/outside_root", "traces/out.jsonl", 0,
         "a symbolic link that leads outside the repository: agent-eval reads only files "
         "inside the repository (the folder holding .git above the suite file); move the "
         "traces into it; it was not read"),
        ("input/unreadable_file", "traces/pipe.jsonl", 0,
         "a FIFO (named pipe), not a regular file; a trace glob reads regular files only: "
         "it was not read")]


def test_a_glob_that_matches_only_entries_reported_already_is_not_said_to_match_nothing(
        tmp_path: Path) -> None:
    root = _repo_with_odd_entries(tmp_path)
    files, errors = expand(["traces/gone.jsonl", "traces/g*.jsonl", "traces/folder.jsonl"],
                           root, root, root, ("s.yaml", 3))
    assert files == []
    assert [(e.rule, e.file, e.line) for e in errors] == [
        ("input/unreadable_file", "traces/gone.jsonl", 0),
        # a folder is no trace file: this glob matches none
        ("input/no_traces", "s.yaml", 3)]


def test_a_folder_named_whole_is_said_to_be_a_folder(tmp_path: Path) -> None:
    """`--traces traces` (or `traces: traces/`) said only that no trace file matches
    'traces', a folder that is there: the error says to give a glob of its files."""
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "t.jsonl").write_text("")
    for pattern, where in (("traces", None), ("traces/", ("s.yaml", 3))):
        files, errors = expand([pattern], tmp_path, tmp_path, tmp_path, where)
        assert files == []
        origin = "relative to ." if where is None else "relative to the suite file's folder"
        assert [(e.rule, e.message) for e in errors] == [(
            "input/no_traces",
            f"no trace file matches '{pattern}' ({origin}); '{pattern}' is a folder: give a "
            "glob of its files, such as 'traces/*.jsonl'")]
    # a pattern that names nothing keeps its hint
    (error,) = expand(["nothing"], tmp_path, tmp_path, tmp_path, None)[1]
    assert error.message.endswith("; check the path or glob")  # given: --traces, convert
    (error,) = expand(["nothing"], tmp_path, tmp_path, tmp_path, ("s.yaml", 3))[1]
    assert error.message.endswith("; check the glob, or give others (run --traces, the "
                                  "action's traces input)")  # the suite's traces:
