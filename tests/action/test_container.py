"""The action's container: the real Dockerfile built with podman, its entrypoint run in the image.

scripts/container-test does the work (a debootstrap base standing in for python:3.11-slim,
``podman build --isolation=chroot``, ``podman mount`` + chroot, tests/action/container_harness.py
inside); this test runs it and checks what its report says. Slow (a minute or two the first
time, seconds once the base and the layers are cached). Without podman, debootstrap or root it
is skipped with one line saying so, or fails when AGENT_EVAL_REQUIRE_SYSTEM=1 (set by .ci/run
and the CI workflow, which install them with scripts/install-debian-packages).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import missing_system

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "container-test"
IMAGE_BUDGET = 500_000_000  # bytes; about 290 MB on the Debian base (git alone is ~85 MB)

pytestmark = pytest.mark.slow


def _unavailable() -> list[str]:
    missing = [tool for tool in ("podman", "debootstrap") if shutil.which(tool) is None]
    if os.geteuid() != 0:
        missing.append("root")
    return missing


def test_the_image_builds_from_the_dockerfile_and_its_entrypoint_runs_the_example(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = _unavailable()
    if missing:
        missing_system(" and ".join(missing) + " for the container test",
                       "install podman and debootstrap with scripts/install-debian-packages "
                       "and run the tests as root (debootstrap, podman mount and chroot need "
                       "it)")

    env = {**os.environ, "AGENT_EVAL_CONTAINER_REPORT": str(tmp_path), "PYTHON": sys.executable}
    proc = subprocess.run([str(SCRIPT)], cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=1800, check=False)
    output = proc.stdout + proc.stderr
    with capsys.disabled():  # the sizes and timings belong in the CI log
        print("\n" + "\n".join(line for line in output.splitlines()
                               if not line.startswith("    ")))
    assert proc.returncode == 0, output[-6000:]

    report: dict[str, Any] = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    checks = {c["name"]: c for c in report["checks"]}
    assert report["passed"] is True
    assert all(c["ok"] for c in checks.values()), checks
    assert report["entrypoint"] == ["/usr/local/bin/agent-eval", "action"]
    assert checks["version"]["ok"] and checks["run"]["ok"]
    steps = report["steps"]
    assert steps["version"]["code"] == 0
    assert steps["run"]["code"] == 1  # the example fails on purpose
    assert 0 < int(report["image_bytes"]) < IMAGE_BUDGET, report["image_bytes"]

    # `agent-eval action` runs in the image once the source has it (checked now, not assumed).
    has_action = importlib.util.find_spec("agent_eval.commands.action") is not None
    assert report["action_in_image"] is has_action
    if has_action:
        assert steps["action-fail-on-fail"]["code"] == 1
        assert steps["action-fail-on-never"]["code"] == 0
        for name in ("action-fail-on-fail", "action-fail-on-never"):
            outputs = report[name]["outputs"]
            files = report[name]["files"]
            assert outputs["verdict"] == "fail"
            assert files["results-file"] and files["results-file"].startswith("github/workspace/")
            assert files["sarif-file"] and files["sarif-file"].startswith("github/workspace/")
            assert checks[f"{name}-owner"]["ok"]  # given back to the workspace's owner

    # the release's next steps on this build's digest: action.yml pinned to it, committed on
    # top of the tag and the tags moved (tests/release/test_release.py, same functions)
    digest = report["image_digest"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), digest
    release = _release_module()
    repo = tmp_path / "release"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    (repo / "src" / "agent_eval").mkdir(parents=True)
    for name in ("action.yml", "pyproject.toml", "src/agent_eval/_version.py"):
        shutil.copy(ROOT / name, repo / name)
    version = release.project_version(repo)
    for args in (["init", "-q"], ["config", "user.name", "t"],
                 ["config", "user.email", "t@example.com"], ["add", "-A"],
                 ["commit", "-q", "-m", "tagged"],
                 ["tag", f"v{version}"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    image = str(report["image"]).rsplit(":", 1)[0]
    value = release.pin_image(repo / "action.yml", image, version, digest)
    commit = release.release_commit(repo, version)
    shown = subprocess.run([*git, "show", f"v{version}:action.yml"], check=True,
                           capture_output=True, text=True).stdout
    assert f"  image: {value}\n" in shown and value.endswith(f":{version}@{digest}")
    major = "v" + version.split(".")[0]
    tagged = subprocess.run([*git, "rev-parse", f"{major}^{{commit}}"], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert tagged == commit


def _release_module() -> Any:
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
