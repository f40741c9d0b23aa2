"""action.yml and the Dockerfile say what README.md "GitHub Action" says (read by hand, with
the inputs issue 12 added: comment-key, trace-annotations): a docker action built from
./Dockerfile, every input with its default, every output, branding; a multi-stage Dockerfile on
python:3.11-slim pinned by digest (or the stage ARG BASE_IMAGE names), dependencies installed
with --require-hashes from the hash lock, an absolute ENTRYPOINT running `agent-eval action`, no
USER and no WORKDIR; the workflows pin third-party actions by full commit SHA."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]

# README.md "Inputs" and their defaults (None: no default).
INPUTS: dict[str, str | None] = {
    "config": None,
    "traces": None,
    "artifact": None,
    "baseline": "auto",
    "baseline-artifact": "agent-eval-results",
    "baseline-file": None,
    "github-token": "${{ github.token }}",
    "upload-sarif": "true",
    "sarif-category": None,
    "comment": "auto",
    "comment-key": None,
    "check-run": "false",
    "trace-annotations": "changed",
    "fail-on": "fail",
    "output-dir": None,
    "working-directory": None,
}
OUTPUTS = ["verdict", "pass-rate", "score", "violations", "new-violations", "regressions",
           "results-file", "sarif-file", "comment-url"]


def _action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return data


def test_action_yml_is_a_docker_action_built_from_the_dockerfile() -> None:
    action = _action()
    assert action["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert action["name"] and action["description"]
    assert set(action["branding"]) == {"icon", "color"}


def test_action_yml_has_every_input_of_action_md_with_its_default() -> None:
    inputs: dict[str, dict[str, Any]] = _action()["inputs"]
    assert list(inputs) == list(INPUTS)
    for name, spec in inputs.items():
        assert spec.get("description"), name
        assert spec.get("required", False) is False, name
        default = spec.get("default")
        assert default == INPUTS[name], (name, default)
        assert default is None or isinstance(default, str), (name, default)


def test_action_yml_has_every_output_of_action_md() -> None:
    outputs: dict[str, dict[str, Any]] = _action()["outputs"]
    assert list(outputs) == OUTPUTS
    assert all(spec.get("description") for spec in outputs.values())


def _instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)  # continuation lines
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_dockerfile_builds_a_wheel_and_installs_it_from_the_lock() -> None:
    steps = _instructions()
    words = [w for w, _ in steps]
    # the base: python:3.11-slim by digest, on the FROM line Dependabot reads; BASE_IMAGE
    # names the stage to build on (the tests give a local base instead)
    assert steps[0] == ("ARG", "BASE_IMAGE=python-base")
    froms = [rest for w, rest in steps if w == "FROM"]
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64} AS python-base", froms[0])
    assert froms[1:] == ["${BASE_IMAGE} AS builder", "${BASE_IMAGE}"]
    assert "USER" not in words and "WORKDIR" not in words
    starts = [i for i, (w, _) in enumerate(steps) if w == "FROM"]
    builder = steps[starts[1]:starts[2]]
    final = steps[starts[2]:]
    # the builder: the pinned backend from the hash lock, no isolation (nothing unlocked)
    build_runs = " ".join(rest for w, rest in builder if w == "RUN")
    assert "--require-hashes --only-binary=:all: -r /tmp/build-requirements.txt" in build_runs
    assert "python -m build --wheel --no-isolation" in build_runs
    assert ("COPY", "requirements/build.txt /tmp/build-requirements.txt") in builder
    # the final stage: locked dependencies with hashes, then the wheel without an index
    runs = " ".join(rest for w, rest in final if w == "RUN")
    assert "pip install --no-cache-dir" in runs
    assert ("--require-hashes --only-binary=:all: --no-deps -r "
            "/tmp/agent-eval/requirements.txt") in runs
    assert "--no-index --no-deps /tmp/agent-eval/dist/*.whl" in runs
    assert "python -m pip check" in runs
    # no compiler or build backend in the final stage
    assert not re.search(r"\b(gcc|build-essential|hatchling|python3-dev)\b", runs)
    copies = [rest for w, rest in final if w == "COPY"]
    assert "requirements/action.txt /tmp/agent-eval/requirements.txt" in copies
    assert any(c.startswith("--from=builder ") for c in copies)
    assert not any(c.startswith(("src", ".")) for c in copies)  # no source tree in the image
    entrypoint = [rest for w, rest in steps if w == "ENTRYPOINT"]
    assert len(entrypoint) == 1 and words[-1] == "ENTRYPOINT"
    assert json.loads(entrypoint[0]) == ["/usr/local/bin/agent-eval", "action"]


def test_dockerignore_sends_only_what_the_image_is_built_from() -> None:
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "*"
    assert {line[1:] for line in lines if line.startswith("!")} == {
        "pyproject.toml", "README.md", "LICENSE", "requirements/action.txt",
        "requirements/build.txt", "src/"}


def test_workflows_pin_third_party_actions_by_commit_sha() -> None:
    files = sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
        (ROOT / "examples" / "workflows").glob("*.yml"))
    seen = 0
    for path in files:
        for ref in re.findall(r"uses:\s*([^\s#]+)", path.read_text(encoding="utf-8")):
            if ref.startswith(("./", "agent-eval/agent-eval@", "agent-eval/agent-eval/")):
                continue
            seen += 1
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"{path.name}: {ref}"
    assert seen >= 10
