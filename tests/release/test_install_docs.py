"""Every install instruction names the distribution this project publishes (pyproject's
name, agent-eval-ci: `agent-eval` on the package index is another project), and the shard
example installs it and works: its `agent-eval` commands, run as the workflow runs them on
a copy of the bundled example, give the results of an unsharded run."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from tests.conftest import copy_example

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
NAME, VERSION = PROJECT["name"], PROJECT["version"]
INSTALL = re.compile(r"\b(?:pipx install|uv tool install|pip install)\s+([A-Za-z0-9][\w.-]*)")
SHARDED = ROOT / "examples" / "workflows" / "sharded.yml"


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
            *sorted((ROOT / "examples").rglob("*.yml")), *sorted((ROOT / "examples").rglob("*.md"))]


def test_every_install_instruction_names_the_published_distribution() -> None:
    assert NAME == "agent-eval-ci"
    seen = 0
    for path in _documents():
        for m in INSTALL.finditer(path.read_text(encoding="utf-8")):
            if m.group(1).startswith(("-", ".")):
                continue  # pip install -e . and friends: a checkout, not the index
            seen += 1
            assert m.group(1) == NAME, f"{path.relative_to(ROOT)}: {m.group(0)!r}"
    assert seen >= 4


def test_the_shard_example_pins_the_project_version_in_every_job() -> None:
    """The shards and the merge install the same release: each job's install step pins
    agent-eval-ci to the project's version (set together with it: docs/releasing.md)."""
    workflow = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))
    for name, job in workflow["jobs"].items():
        installs = [s["run"] for s in job["steps"] if "install" in s.get("run", "")]
        assert installs == [f"pipx install {NAME}=={VERSION}"], (name, installs)
    assert set(workflow["jobs"]) == {"shard", "merge"}


def test_the_install_section_says_nothing_is_published_before_the_first_release() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Install\n"):readme.index("\n## Requirements\n")]
    assert f"pipx install {NAME}" in section
    assert "work once the first release" in section and "`pip install .`" in section


def test_readme_shows_the_shard_example_as_it_is() -> None:
    text = SHARDED.read_text(encoding="utf-8")
    jobs = text[text.index("jobs:\n"):]
    assert f"```yaml\n{jobs}```" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_shard_example_shows_the_summary_of_a_failing_merge() -> None:
    """The merge step gates the job: it exits 1 on a fail verdict (as on the bundled
    example, below). The step after it that puts the merged summary into the job summary
    ran only on success (a step's default `if`), so the summary was shown when the gate
    passed and never when it failed. It runs unless the job was cancelled, when the merge
    wrote the summary (a merge that stopped with exit 2 wrote none)."""
    steps = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))["jobs"]["merge"]["steps"]
    at = next(i for i, s in enumerate(steps) if s.get("run", "").startswith("agent-eval merge"))
    [summary] = steps[at + 1:]
    assert summary["run"] == 'cat agent-eval-results/summary.md >> "$GITHUB_STEP_SUMMARY"'
    assert summary.get("if") == ("${{ !cancelled() && "
                                 "hashFiles('agent-eval-results/summary.md') != '' }}")


def test_the_shard_example_runs(tmp_path: Path) -> None:
    workflow = yaml.safe_load(SHARDED.read_text(encoding="utf-8"))
    shard, merge = workflow["jobs"]["shard"], workflow["jobs"]["merge"]
    shards = shard["strategy"]["matrix"]["shard"]
    program = str(Path(sys.executable).parent / "agent-eval")
    work = tmp_path / "repo"
    copy_example(work)

    def commands(job: dict[str, object], env: dict[str, str]) -> list[list[str]]:
        out = []
        for step in job["steps"]:  # type: ignore[attr-defined]
            run = step.get("run")
            if not run:
                continue
            if run.startswith("pipx install "):
                assert run == f"pipx install {NAME}=={VERSION}"
                continue
            if not run.startswith("agent-eval "):
                continue
            for k, v in {**env, **step.get("env", {})}.items():
                run = run.replace(f"${k}", v)
            argv = shlex.split(run)
            out.append([program, *argv[1:]])
        return out

    for n in shards:
        env = {"SHARD": str(n)}
        for argv in commands(shard, env):
            argv = [a.replace("${{ matrix.shard }}", str(n)) for a in argv]
            done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=300,
                                  check=False)
            assert done.returncode == 0, done.stdout + done.stderr  # --fail-on never
            assert (work / "part" / "results.sarif").is_file()
        part = tmp_path / "parts" / f"agent-eval-part-{n}"  # download-artifact's layout
        part.mkdir(parents=True)
        shutil.move(str(work / "part" / "results.json"), part / "results.json")
        shutil.rmtree(work / "part")
    shutil.move(str(tmp_path / "parts"), work / "parts")
    [merge_cmd] = commands(merge, {})
    expanded = [str(p) for p in sorted((work / "parts").glob("*/results.json"))]
    argv = [a for a in merge_cmd if a != "parts/*/results.json"]
    argv[2:2] = expanded
    done = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 1, done.stdout + done.stderr  # the example fails on purpose
    merged = json.loads((work / "agent-eval-results" / "results.json").read_text())
    expected = json.loads((ROOT / "examples" / "customer-service" / "expected.json").read_text())
    assert merged["verdict"] == "fail"
    assert merged["counts"]["violations"] == len(expected) == 10
    assert (work / "agent-eval-results" / "summary.md").is_file()
