"""`agent-eval validate --dialect`: a peer config is validated the way `run --dialect` reads
it (docs/migrating.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._cli import main as cli

# an EvalView case without `name:`: auto-detection reads it as a native suite
NAMELESS = "input: {query: hi}\nexpected: {tools: [search]}\n"


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "cases").mkdir()
    (repo / "cases" / "a.yaml").write_text(
        "name: a\ninput: {query: hi}\nexpected: {tools: [search]}\n")
    (repo / "cases" / "b.yaml").write_text(
        "name: b\ninput: {query: bye}\nexpected: {forbidden_tools: [delete_user]}\n")
    (repo / "case.yaml").write_text(NAMELESS)
    monkeypatch.chdir(repo)
    return repo


def test_validate_takes_the_dialect_run_takes(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _repo(tmp_path, monkeypatch)
    assert cli(["validate", "--dialect", "evalview", "--config", "cases"]) == 0
    assert capsys.readouterr().out == (
        "ok: cases: suite 'cases', 0 test(s), 0 policies, 2 scenario(s), 0 criteria\n")
    # the case auto-detection cannot place: refused as a native suite, read as EvalView
    assert cli(["validate", "--config", "case.yaml"]) == 2
    assert "case.yaml:1:1: missing required key 'suite'" in capsys.readouterr().err
    assert cli(["validate", "--dialect", "evalview", "--config", "case.yaml"]) == 0
    assert capsys.readouterr().out == (
        "ok: case.yaml: suite 'case', 0 test(s), 0 policies, 1 scenario(s), 0 criteria\n")


def test_a_wrong_dialect_is_the_config_error_run_gives(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    _repo(tmp_path, monkeypatch)
    said = ("error: case.yaml:1:1: neither a CIAgent spec ('queries:', agentci_spec.yaml) "
            "nor a legacy CIAgent suite ('tests:', agentci.yaml); see docs/migrating.md\n")
    assert cli(["validate", "--dialect", "ciagent", "--config", "case.yaml"]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == ("", said)
    assert cli(["run", "-q", "--dialect", "ciagent", "--config", "case.yaml",
                "--traces", "none/*.jsonl", "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == said


def test_the_dialect_choices_are_runs(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("run", "validate"):
        with pytest.raises(SystemExit):
            cli([command, "--help"])
        assert ("--dialect {auto,native,assay,evalview,ciagent}"
                in capsys.readouterr().out), command


@pytest.mark.parametrize("folder", ["../outside", "link/out"])
def test_validate_refuses_an_output_dir_run_refuses(tmp_path: Path, folder: str,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`output.dir` outside the repository (or leading out through a link) is a config
    error of `run` (exit 2, at its line): `validate` said "ok" and exit 0."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "link").symlink_to(tmp_path)
    (repo / "agent-eval.yaml").write_text(
        f"suite: v\noutput:\n  dir: {folder}\ntests:\n  - id: b\n    metric: tool_blocklist\n"
        "    blocklist: [rm]\n")
    monkeypatch.chdir(repo)
    assert cli(["validate"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: agent-eval.yaml:3:3: ")  # at its key
    assert ("is outside the repository" if folder == "../outside"
            else "leads outside the repository through a symbolic link") in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo"]  # nothing made
    assert cli(["run", "--traces", "none.jsonl"]) == 2  # as run refuses it
    assert capsys.readouterr().err.splitlines() == [line]
    # given the folder run will be given (its --output-dir, the action's output-dir), the
    # suite's output.dir is not used, and not refused
    assert cli(["validate", "--output-dir", "out"]) == 0
    assert capsys.readouterr().out.startswith("ok: agent-eval.yaml: suite 'v'")


def test_an_output_dir_holding_a_nul_is_a_config_error(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """`output.dir: "a\\0b"` was an internal error (ValueError: embedded null byte) of
    validate, since it checks the folder as run does, and of run."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        'suite: v\noutput:\n  dir: "a\\0b"\ntests:\n  - id: b\n    metric: tool_blocklist\n'
        "    blocklist: [rm]\n")
    monkeypatch.chdir(tmp_path)
    for command in (["validate"], ["run", "--traces", "none.jsonl"]):
        assert cli(command) == 2
        assert capsys.readouterr().err == (
            "error: agent-eval.yaml:3:3: output.dir: a folder name cannot hold a NUL "
            "character (\\0)\n"), command


_BLOCKLIST = "tests:\n  - id: b\n    metric: tool_blocklist\n    blocklist: [rm]\n"


@pytest.mark.parametrize(("config", "line"), [
    ('tests:\n  - id: a\n    metric: args_valid\n    policy: "p\\0.yaml"\n',
     "5:5: policy"),
    ('scenarios:\n  - id: A\n    expect:\n      output:\n        json_schema: "s\\0.json"\n',
     "6:9: expect.output.json_schema"),
    ('tool_lock: "x\\0.json"\n' + _BLOCKLIST, "2:1: tool_lock"),
    ('judge:\n  store: "j\\0.jsonl"\n' + _BLOCKLIST, "3:3: store"),
    ('judge:\n  provider: openai\n  model: m\nscenarios:\n  - id: A\n    expect:\n'
     '      judge:\n        - hallucination: true\n          context_file: "c\\0.md"\n',
     "10:11: expect.judge[0].context_file"),
    ('servers:\n  x:\n    command: echo\n    cwd: "c\\0"\n', "5:5: cwd"),
])
def test_a_file_name_holding_a_nul_is_a_config_error(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str],
                                                     config: str, line: str) -> None:
    """The regression: as output.dir's was, a NUL in any file or folder the suite names
    (a policy, a schema file, the tool lock, the judge's store or a reference document, a
    server's cwd) was an internal error (ValueError: embedded null byte) of validate."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent-eval.yaml").write_text("suite: v\n" + config)
    monkeypatch.chdir(tmp_path)
    assert cli(["validate"]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert (f"error: agent-eval.yaml:{line}: a file or folder name cannot hold a NUL "
            "character (\\0)") in err.splitlines()
