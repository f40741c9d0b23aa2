"""`agent-eval import`: the files a peer's config names are read as `run --dialect` reads
them (docs/security.md "What agent-eval never does")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.conftest import within

from agent_eval._cli import main as cli

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
