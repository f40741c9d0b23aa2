"""`agent-eval import`: the files a peer's config names are read as `run --dialect` reads
them (docs/security.md "What agent-eval never does")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import within

from agent_eval._cli import main as cli
from agent_eval.api import load_suite

ASSAY = """\
suite: legacy_migration_demo
model: trace
tests:
  - id: legacy_test
    input:
      prompt: "migrate me"
    expected:
      type: args_valid
      policy: {policy}
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_import_reads_no_policy_outside_the_repository_nor_a_fifo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A policy an Assay config names through a link leading out of the repository was
    read and its schema written into the imported policy (a secret's const copied into the
    repository, exit 0), /dev/zero read until the memory ran out, a FIFO waited on for a
    writer forever: `import` read them with read_text, where `run --dialect assay` refuses
    them (and ../outside.yaml was read, then an internal error)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "outside.yaml").write_text(
        "schema: {type: object, properties: {key: {const: hunter2}}}\n")
    os.mkfifo(repo / "fifo.yaml")
    (repo / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    monkeypatch.chdir(repo)
    for policy, said in (
            ("link.yaml", "outside the repository: agent-eval reads only files inside "
                          "the repository (the folder holding .git above the suite "
                          "file): link.yaml"),
            ("../outside.yaml", "outside the repository: agent-eval reads only files inside "
                                "the repository (the folder holding .git above the suite "
                                "file): ../outside.yaml"),
            ("fifo.yaml", "not a regular file: fifo.yaml")):
        (repo / "eval.yaml").write_text(ASSAY.format(policy=policy))
        with within(20, "import"):
            assert cli(["import", "eval.yaml"]) == 2, policy
        assert capsys.readouterr().err == (f"error: eval.yaml:9:7: policy file '{policy}' "
                                           f"cannot be read ({said})\n")
        assert sorted(p.name for p in repo.iterdir()) == [".git", "eval.yaml", "fifo.yaml",
                                                          "link.yaml"]
    with within(20, "import"):  # the operator's own argument: refused, not waited on
        assert cli(["import", "fifo.yaml"]) == 2
    assert capsys.readouterr().err == ("error: fifo.yaml: cannot read the config: not a "
                                       "regular file\n")


def test_import_of_a_policy_beside_the_configs_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An Assay config in sub/ naming ../policies/args.yaml (inside the repository) was an
    internal error (ValueError: the policy is not under sub/); its native policy goes
    beside the original, where the imported suite names it. One that would be written
    outside the repository (the suite written one folder up) is refused, nothing written."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "policies").mkdir()
    (repo / "policies" / "args.yaml").write_text(
        "schema: {type: object, properties: {foo: {type: string}}}\n")
    (repo / "sub" / "eval.yaml").write_text(ASSAY.format(policy="../policies/args.yaml"))
    monkeypatch.chdir(repo)
    assert cli(["import", "sub/eval.yaml"]) == 0
    assert capsys.readouterr().out == (f"Wrote {repo / 'sub' / 'agent-eval.yaml'}, "
                                       f"{repo / 'policies' / 'args.agent-eval.yaml'}\n")
    suite = load_suite(repo / "sub" / "agent-eval.yaml")
    assert list(suite.policies) == [str(repo / "policies" / "args.agent-eval.yaml")]
    assert cli(["import", "sub/eval.yaml", "-o", "top.yaml"]) == 2
    assert capsys.readouterr().err == (
        "error: policies/args.agent-eval.yaml: the imported policy would be written outside "
        f"the repository ({tmp_path / 'policies' / 'args.agent-eval.yaml'}); write the "
        "suite (-o) where the policies' paths stay inside it\n")
    assert not (repo / "top.yaml").exists() and not (tmp_path / "policies").exists()


def test_a_judge_s_context_file_is_found_from_the_suite_written_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CIAgent rubric's context_file (beside the spec) was written as it is into a
    suite written in another folder, where it was not found: the suite did not load."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy.md").write_text("Refunds take 30 days.\n")
    (tmp_path / "agentci_spec.yaml").write_text(
        "version: 1\nagent: a\nqueries:\n  - query: How long do refunds take?\n"
        "    correctness:\n      llm_judge:\n        - rule: Agrees with the policy\n"
        "          context_file: policy.md\n")
    monkeypatch.chdir(tmp_path)
    assert cli(["import", "agentci_spec.yaml", "-o", "native/agent-eval.yaml"]) == 0
    suite = load_suite(tmp_path / "native" / "agent-eval.yaml")
    assert suite.scenarios is not None
    [check] = suite.scenarios.scenarios[0].judge
    assert check.reference == "Refunds take 30 days.\n"


def test_an_output_json_schema_file_is_found_from_the_suite_written_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An EvalView case's json_schema file, as the context_file above."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "answer.schema.json").write_text('{"type": "object"}')
    (tmp_path / "case.yaml").write_text(
        "name: c\ninput: {query: hi}\nexpected:\n  output:\n"
        "    json_schema: answer.schema.json\n")
    monkeypatch.chdir(tmp_path)
    assert cli(["import", "case.yaml", "-o", "native/agent-eval.yaml"]) == 0
    suite = load_suite(tmp_path / "native" / "agent-eval.yaml")
    assert suite.scenarios is not None
    [check] = suite.scenarios.scenarios[0].output
    assert check.kind == "json_schema"


def test_a_suite_written_where_its_policy_goes_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """-o args.agent-eval.yaml (the name of the imported policy, as a relative path where
    the policy's is absolute): the policy was written over the suite, which was lost,
    while 'Wrote' named both."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "args.yaml").write_text(
        "schema: {type: object, properties: {foo: {type: string}}}\n")
    (tmp_path / "eval.yaml").write_text(ASSAY.format(policy="args.yaml"))
    monkeypatch.chdir(tmp_path)
    assert cli(["import", "eval.yaml", "-o", "args.agent-eval.yaml"]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'args.agent-eval.yaml'}: the policy imported from args.yaml "
        "would be written over the suite (args.agent-eval.yaml); write the suite (-o) under "
        "another name\n")
    assert not (tmp_path / "args.agent-eval.yaml").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_an_unreadable_file_is_named_by_import_and_by_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An EvalView folder holding a FIFO and a link leading out of the repository: the
    error was 'error: not a regular file' (or the outside one), naming no file, and only
    the first was said; an Assay config given with --dialect that is a FIFO the same.
    Each file is now named, and every one is said."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "cases").mkdir()
    (tmp_path / "outside.yaml").write_text("name: x\ninput: {query: q}\nexpected: {}\n")
    (repo / "cases" / "a.yaml").write_text(
        "name: a\ninput: {query: hi}\nexpected: {tools: [search]}\n")
    os.mkfifo(repo / "cases" / "fifo.yaml")
    (repo / "cases" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    monkeypatch.chdir(repo)
    said = ("error: cases/fifo.yaml:1:1: cannot be read (not a regular file); remove it "
            "from the folder or fix it\n"
            "error: cases/link.yaml:1:1: cannot be read (outside the repository: agent-eval "
            "reads only files inside the repository (the folder holding .git above the "
            "suite file)); remove it from the folder or fix it\n")
    for argv in (["import", "cases", "--dialect", "evalview"],
                 ["run", "--config", "cases", "--dialect", "evalview", "-q",
                  "--traces", "none/*.jsonl"]):
        with within(20, argv[0]):
            assert cli(argv) == 2, argv
        assert capsys.readouterr().err == said, argv
    assert sorted(p.name for p in repo.iterdir()) == [".git", "cases"]
    with within(20, "import"):
        assert cli(["import", "cases/fifo.yaml", "--dialect", "assay"]) == 2
    assert capsys.readouterr().err == ("error: cases/fifo.yaml: cannot read the config: "
                                       "not a regular file\n")


def test_what_is_not_applied_is_kept_in_the_imported_suite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`import` said what it did not apply only on stderr, once: runs of the imported
    suite then passed without a word where running the peer's file warned. The suite
    file's opening comment lists each note, one line each, so that a key of the
    original holding line breaks cannot write YAML of its own."""
    from agent_eval.commands.import_ import _header
    from agent_eval.importers.base import Translation

    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "suite: demo\nmodel: dummy\ntests:\n  - id: t1\n    input:\n      prompt: Answer\n"
        "    expected:\n      type: must_contain\n      must_contain: [a, b]\n"
        "  - id: t2\n    input:\n      prompt: Other\n    expected:\n"
        "      type: semantic_similarity_to\n      semantic_similarity_to: hello\n")
    assert cli(["import", "eval.yaml", "-o", "suite.yaml"]) == 0
    note = ("eval.yaml:14:7: Assay check 'semantic_similarity_to' is not deterministic or "
            "not supported by agent-eval; it is not run")
    assert f"note: {note} (not imported)" in capsys.readouterr().err
    text = (tmp_path / "suite.yaml").read_text()
    assert text.splitlines()[2:4] == [
        "# Not applied as in the original (review each; this suite's runs do not report "
        "them):", f"# - {note}"]
    load_suite(tmp_path / "suite.yaml")  # a suite still
    # a hostile note: no line of it leaves the comment
    t = Translation("assay", {}, None)  # type: ignore[arg-type]
    t.unsupported = [("eval.yaml", 3, 1, "key 'x\nsuite: evil\u2028tests: []' unsupported")]
    lines = [f"# {line}" for line in _header("assay", "eval.yaml", t).splitlines()]
    assert len(lines) == 4 and all(line.startswith("# ") for line in lines)
    assert lines[3] == "# - eval.yaml:3:1: key 'x\\x0asuite: evil\\u2028tests: []' unsupported"
    # nor of the source file's name
    named = _header("assay", "a\nsuite: evil.yaml", Translation("assay", {}, None))  # type: ignore[arg-type]
    assert named.splitlines()[0] == ("agent-eval suite imported from a\\x0asuite: evil.yaml "
                                     "(assay) by `agent-eval import`.")


def test_a_note_on_stderr_is_one_line_as_in_the_header(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The header's copy of a note was escaped (ed31df9) but the note `import` prints was
    not: an Assay check type holding an ESC sequence and U+2028 cleared the terminal and
    broke the line. Each note is one line, escaped as the header's."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "suite: demo\nmodel: dummy\ntests:\n  - id: t1\n    input:\n      prompt: Answer\n"
        "    expected:\n      type: must_contain\n      must_contain: [a]\n"
        "  - id: t2\n    input:\n      prompt: Answer\n    expected:\n"
        "      type: \"x\\e[2J\\u2028y\"\n")
    assert cli(["import", "eval.yaml", "-o", "suite.yaml"]) == 0
    err = capsys.readouterr().err
    # the type is on line 14 of eval.yaml, its value at column 7
    assert err == ("note: eval.yaml:14:7: Assay check 'x\\x1b[2J\\u2028y' is not "
                   "deterministic or not supported by agent-eval; it is not run (not "
                   "imported)\n"), err


def test_an_output_that_is_a_folder_is_said_to_be_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`-o FOLDER` said "exists; pass --force to overwrite", then with --force
    "[Errno 21] Is a directory": what to give instead was never said."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "suite: demo\nmodel: dummy\ntests:\n  - id: t2\n    input:\n      prompt: Answer\n"
        "    expected:\n      type: must_contain\n      must_contain: [a]\n")
    for force in ([], ["--force"]):
        assert cli(["import", "eval.yaml", "-o", "out", *force]) == 2
        assert capsys.readouterr().err == ("error: out: a folder, not a file; give the suite "
                                           "file to write (-o out/agent-eval.yaml)\n")
    assert list((tmp_path / "out").iterdir()) == []
