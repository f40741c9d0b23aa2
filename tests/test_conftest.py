"""The rule for tests whose samples or system tools are missing (tests/conftest.py): one
skip line per reason in a developer's run, a failure when CI says they must run, and CI
saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import (
    REQUIRE_SAMPLES,
    REQUIRE_SYSTEM,
    ROOT,
    copy_example,
    missing_system,
    not_run,
    shared_path,
)


def test_not_run_skips_unless_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SYSTEM, raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"^NOT RUN, missing podman: install it"):
        missing_system("podman", "install it")
    monkeypatch.setenv(REQUIRE_SYSTEM, "0")
    with pytest.raises(pytest.skip.Exception):
        not_run("why", REQUIRE_SYSTEM)
    monkeypatch.setenv(REQUIRE_SYSTEM, "1")
    with pytest.raises(pytest.fail.Exception, match="AGENT_EVAL_REQUIRE_SYSTEM is set"):
        missing_system("podman", "install it")


def test_missing_shared_files_skip_unless_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SAMPLES, raising=False)
    with pytest.raises(pytest.skip.Exception, match="real-world samples not found"):
        shared_path("samples", "no-such-folder-here")
    monkeypatch.setenv(REQUIRE_SAMPLES, "1")
    with pytest.raises(pytest.fail.Exception, match="AGENT_EVAL_REQUIRE_SAMPLES is set"):
        shared_path("samples", "no-such-folder-here")


def test_every_skip_of_one_reason_is_one_summary_line(tmp_path: Path) -> None:
    """Skipped in a fixture (pytest would show each test) or in the test itself: one line."""
    (tmp_path / "conftest.py").write_text(
        "import pytest\n"
        "from tests.conftest import missing_system\n"
        "pytest_plugins = ['tests.conftest']\n\n"
        "@pytest.fixture\n"
        "def podman() -> None:\n"
        "    missing_system('podman', 'install it')\n")
    (tmp_path / "test_four.py").write_text(
        "import pytest\n"
        "from tests.conftest import missing_system\n\n"
        "@pytest.mark.parametrize('n', [1, 2, 3])\n"
        "def test_needs_podman(podman: None, n: int) -> None:\n"
        "    pass\n\n"
        "def test_needs_podman_too() -> None:\n"
        "    missing_system('podman', 'install it')\n\n"
        "def test_needs_chromium() -> None:\n"
        "    missing_system('Chromium', 'install it')\n")
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_SYSTEM}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    # the inner run sees only this file's plugins: an installed one (CIAgent's, a test-only
    # dependency) would add its own collection and warnings to the counts read below
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    argv = [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "--rootdir",
            str(tmp_path), "-c", os.devnull, str(tmp_path)]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, text=True, capture_output=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 2, proc.stdout
    assert skipped[0].startswith("SKIPPED [4] ") and "missing podman: install it" in skipped[0]
    assert skipped[1].startswith("SKIPPED [1] ") and "missing Chromium" in skipped[1]

    env[REQUIRE_SYSTEM] = "1"
    proc = subprocess.run(argv, cwd=tmp_path, env=env, text=True, capture_output=True,
                          timeout=120, check=False)
    assert proc.returncode == 1 and "2 failed, 3 errors" in proc.stdout, proc.stdout


def test_ci_requires_what_a_developer_may_skip() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"export {REQUIRE_SAMPLES}=1 {REQUIRE_SYSTEM}=1\n" in run
    assert run.rstrip().endswith("./scripts/test")  # exactly the README's test command
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert f'{REQUIRE_SYSTEM}: "1"' in workflow
    assert "./scripts/install-debian-packages" in workflow


def test_a_copy_of_the_example_leaves_out_what_runs_wrote_into_it(tmp_path: Path) -> None:
    source = tmp_path / "example"
    (source / "traces").mkdir(parents=True)
    (source / "agent-eval.yaml").write_text("suite: s\n")
    (source / "traces" / "a.jsonl").write_text("{}\n")
    for generated in ("agent-eval-results", ".agent-eval", "__pycache__"):
        (source / generated).mkdir()
        (source / generated / "x").write_text("from an earlier run\n")
    dest = copy_example(tmp_path / "copy", source)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "agent-eval.yaml", "traces", "traces/a.jsonl"]
    copy_example(dest, source)  # into an existing folder too
    assert (dest / "traces" / "a.jsonl").is_file()
