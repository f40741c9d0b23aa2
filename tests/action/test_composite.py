"""The composite action for runners without Docker (python/action.yml): the same inputs
and outputs as the container action, every input handed to `agent-eval action` as the
INPUT_ variable it reads, and its installer (python/install.sh) run for real: a virtual
environment with the hash-locked dependencies and agent-eval built from this checkout."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml
from tests.conftest import missing_system

from agent_eval.github.inputs import read_inputs
from agent_eval.results import Verdict

ROOT = Path(__file__).resolve().parents[2]


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def test_same_inputs_and_outputs_as_the_container_action() -> None:
    docker, composite = _load(ROOT / "action.yml"), _load(ROOT / "python" / "action.yml")
    assert composite["runs"]["using"] == "composite"
    extra = {"python"}  # only the composite chooses an interpreter
    assert list(composite["inputs"]) == [*docker["inputs"], *extra]
    for name, spec in docker["inputs"].items():
        assert composite["inputs"][name].get("default") == spec.get("default"), name
        assert composite["inputs"][name].get("required", False) is False
    assert list(composite["outputs"]) == list(docker["outputs"])
    for name, spec in composite["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_both_actions_describe_the_verdicts_and_the_artifact_as_the_code_has_them() -> None:
    """The `verdict` output names every verdict a run can have (results.Verdict, `error`
    among them); the `artifact` input says whose artifact is downloaded: this run's, or the
    triggering run's under workflow_run (GitHubEvent.artifact_run_id)."""
    verdicts = get_args(Verdict)
    assert verdicts == ("pass", "warn", "fail", "error")
    for path in (ROOT / "action.yml", ROOT / "python" / "action.yml"):
        action = _load(path)
        said = action["outputs"]["verdict"]["description"]
        assert re.findall(r"\b(pass|warn|fail|error)\b", said)[:4] == list(verdicts), \
            (path, said)
        artifact = " ".join(action["inputs"]["artifact"]["description"].split())
        assert "of this run" in artifact and "workflow_run" in artifact \
            and "triggering run" in artifact, (path, artifact)


def test_every_input_reaches_agent_eval_action() -> None:
    composite = _load(ROOT / "python" / "action.yml")
    [step] = [s for s in composite["runs"]["steps"] if s.get("id") == "run"]
    env: dict[str, str] = step["env"]
    wanted = [n for n in composite["inputs"] if n != "python"]
    mapped = {}
    for key, value in env.items():
        m = re.fullmatch(r"\$\{\{ inputs\.([a-z-]+) \}\}", value)
        assert m, (key, value)
        mapped[m.group(1)] = key
    assert sorted(mapped) == sorted(wanted)
    # each variable is read back as its input by the action's own reader
    given = {key: f"value-of-{name}" for name, key in mapped.items()}
    for name in ("baseline", "comment", "fail-on", "trace-annotations"):
        given[mapped[name]] = {"baseline": "git", "comment": "true", "fail-on": "warn",
                               "trace-annotations": "all"}[name]
    for name in ("upload-sarif", "check-run"):
        given[mapped[name]] = "false" if name == "upload-sarif" else "true"
    inputs, problems = read_inputs(given)
    assert problems == []
    assert inputs.config == "value-of-config" and inputs.github_token == "value-of-github-token"
    assert inputs.comment_key == "value-of-comment-key"
    assert inputs.baseline_artifact == "value-of-baseline-artifact"
    assert inputs.working_directory == "value-of-working-directory"
    assert (inputs.baseline, inputs.comment, inputs.fail_on, inputs.trace_annotations,
            inputs.upload_sarif, inputs.check_run) == ("git", "true", "warn", "all", False, True)


def test_the_installer_explains_a_runner_without_the_locked_wheels(tmp_path: Path) -> None:
    """When pip finds no wheel of a locked version (cryptography has none for an Intel Mac
    or Windows on Arm; here, pip is given no index at all), the installer stopped with
    pip's exit status 1 and pip's message alone: no annotation, nothing saying which
    runners the lock serves or what to use instead. It says so, as an ::error, exit 2."""
    if shutil.which("bash") is None:
        missing_system("bash (the composite action's installer is a bash script)",
                       "install bash")
    github_env = tmp_path / "github_env"
    github_env.touch()
    nothing = tmp_path / "no-wheels"
    nothing.mkdir()
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(github_env),
           "PYTHON": sys.executable, "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(nothing), "PIP_CONSTRAINT": ""}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["bash", str(ROOT / "python" / "install.sh")], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-3000:]
    assert "No matching distribution" in done.stderr  # pip's own reason, kept
    [error] = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert error.startswith("::error title=agent-eval::pip could not install the locked "
                            f"dependencies (Python {platform.python_version()} on "
                            f"{platform.system()} {platform.machine()}; ")
    assert ("the lock has wheels for CPython 3.11 or newer on Linux x86_64 and arm64, macOS "
            "on Apple silicon and Windows x64 (cryptography, which PyGithub needs, has none "
            "for an Intel Mac or Windows on Arm)") in error
    assert "or the container action of this repository (without /python) on a Linux" in error
    assert github_env.read_text() == ""  # no AGENT_EVAL_BIN for the next step


def test_the_installer_says_when_the_python_input_is_no_python(tmp_path: Path) -> None:
    """A `python` input naming no program, or a program that is not a Python, was refused
    as too old a Python, with an empty version: "agent-eval needs Python 3.11 or newer;
    /opt/py/bin/python3 is : …" (and the shell's "No such file or directory" twice). Each
    is said for what it is."""
    if shutil.which("bash") is None:
        missing_system("bash (the composite action's installer is a bash script)",
                       "install bash")
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(tmp_path / "env")}
    env.pop("VIRTUAL_ENV", None)
    missing = tmp_path / "no-such-python"
    not_python = tmp_path / "not-python"
    not_python.write_text("#!/bin/sh\necho 'usage: not-python FILE' >&2\nexit 64\n")
    not_python.chmod(0o755)
    said = {}
    for name, program in (("missing", missing), ("not python", not_python)):
        done = subprocess.run(["bash", str(ROOT / "python" / "install.sh")],
                              env={**env, "PYTHON": str(program)}, capture_output=True,
                              text=True, timeout=60, check=False)
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        said[name] = done.stdout
    assert said["missing"] == (
        f"::error title=agent-eval::the python input names {missing}, which is no program on "
        "the PATH nor an executable file: name a Python 3.11 or newer (e.g. the one "
        "actions/setup-python installs), or leave the input out\n")
    assert said["not python"] == (
        f"::error title=agent-eval::{not_python} is not a Python (it could not run python "
        "-c): name a Python 3.11 or newer in the python input, or leave the input out\n")
    assert not (tmp_path / "agent-eval-venv").exists()


@pytest.mark.slow
def test_the_installer_installs_the_locked_package(tmp_path: Path) -> None:
    """python/install.sh as the runner runs it (bash, RUNNER_TEMP, GITHUB_ENV), with this
    interpreter: needs the package index for the locked wheels."""
    if shutil.which("bash") is None:
        missing_system("bash (the composite action's installer is a bash script)",
                       "install bash")
    github_env = tmp_path / "github_env"
    github_env.touch()
    env = {**os.environ, "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(github_env),
           "PYTHON": sys.executable}
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(["bash", str(ROOT / "python" / "install.sh")], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0 and "No matching distribution" in done.stderr + done.stdout:
        missing_system("the package index (the composite action's installer downloads the "
                       "locked wheels)", "run the test where pip can reach the index")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [line] = github_env.read_text().splitlines()
    assert line.startswith("AGENT_EVAL_BIN=")
    program = line.split("=", 1)[1]
    assert program.startswith(str(tmp_path / "agent-eval-venv"))
    version = subprocess.run([program, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    from agent_eval._version import __version__

    assert version == f"agent-eval {__version__}"
    run = subprocess.run([program, "run", "--config",
                          str(ROOT / "examples/customer-service/agent-eval.yaml"),
                          "--output-dir", str(tmp_path / "out"), "--quiet"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 1, run.stdout + run.stderr  # the example fails on purpose
    assert (tmp_path / "out" / "results.json").is_file()
    # too old an interpreter is refused with the reason
    old = tmp_path / "python2"
    old.write_text("#!/bin/sh\nif [ \"$1\" = -c ]; then case \"$2\" in *exit*) exit 1;; "
                   "*) echo 3.8.10;; esac; fi\n")
    old.chmod(0o755)
    refused = subprocess.run(["bash", str(ROOT / "python" / "install.sh")],
                             env={**env, "PYTHON": str(old)}, capture_output=True, text=True,
                             timeout=60, check=False)
    assert refused.returncode == 2
    assert "needs Python 3.11 or newer; " in refused.stdout and "3.8.10" in refused.stdout
