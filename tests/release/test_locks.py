"""The three version locks agree: constraints.txt (the project's lock, used by scripts/test),
requirements/action.txt (the runtime dependencies with the sha256 of every file, installed
with --require-hashes by the image and by the composite action) and requirements/build.txt
(the build frontend and the backend pinned in pyproject.toml). scripts/lock regenerates the
two hashed files; this test fails when one was changed without the others."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = PIN.match(line)
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


def _hashed(path: Path) -> dict[str, list[str]]:
    """Each requirement of a pip-compile --generate-hashes file with its hashes."""
    out: dict[str, list[str]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = PIN.match(line)
        if m:
            current = canonicalize_name(m.group(1))
            out[current] = []
        elif current and (h := re.search(r"--hash=sha256:([0-9a-f]{64})\b", line)):
            out[current].append(h.group(1))
        elif line.strip() and not line.startswith((" ", "#")):
            raise AssertionError(f"{path.name}: unexpected line {line!r}")
    return out


def test_every_locked_requirement_has_hashes_and_the_constraints_version() -> None:
    constraints = _pins(ROOT / "constraints.txt")
    for name in ("action.txt", "build.txt"):
        path = ROOT / "requirements" / name
        hashed = _hashed(path)
        pins = _pins(path)
        assert hashed and set(hashed) == set(pins)
        for req, hashes in hashed.items():
            assert hashes, f"{name}: {req} has no --hash"
            if req in constraints:
                assert pins[req] == constraints[req], (name, req, pins[req], constraints[req])
            else:  # only what pip freeze leaves out of constraints.txt
                assert req in {"setuptools", "pip", "wheel"}, f"{name}: {req} not in constraints"


def test_the_runtime_lock_covers_pyproject_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    locked = _pins(ROOT / "requirements" / "action.txt")
    for dep in project["project"]["dependencies"]:
        req = Requirement(dep)
        name = canonicalize_name(req.name)
        assert name in locked, f"{req.name} is not in requirements/action.txt (scripts/lock)"
        assert req.specifier.contains(locked[name]), (dep, locked[name])
    # the platform wheels of compiled dependencies for every runner: the image's Linux on
    # amd64 and arm64, and the composite action's macOS and Windows (by count of files)
    hashed = _hashed(ROOT / "requirements" / "action.txt")
    for compiled in ("pydantic-core", "orjson", "rpds-py", "pyyaml", "cryptography"):
        assert len(hashed[compiled]) >= 8, (compiled, len(hashed[compiled]))


def test_the_build_backend_is_pinned_everywhere() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [backend] = [Requirement(r) for r in project["build-system"]["requires"]]
    assert canonicalize_name(backend.name) == "hatchling"
    [spec] = list(backend.specifier)
    assert spec.operator == "=="
    assert _pins(ROOT / "requirements" / "build.txt")["hatchling"] == spec.version
    assert _pins(ROOT / "constraints.txt")["hatchling"] == spec.version
    extras = [Requirement(r) for r in project["project"]["optional-dependencies"]["test"]]
    assert any(r.name == "hatchling" and str(r.specifier) == f"=={spec.version}"
               for r in extras)


def test_dependabot_watches_docker_pip_actions_and_npm() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text(encoding="utf-8"))
    assert config["version"] == 2
    by = {u["package-ecosystem"]: u for u in config["updates"]}
    assert set(by) == {"docker", "pip", "github-actions", "npm"}
    assert by["docker"]["directory"] == "/" and (ROOT / "Dockerfile").is_file()
    assert set(by["pip"]["directories"]) == {"/", "/requirements"}
    assert set(by["github-actions"]["directories"]) == {"/", "/python"}
    for update in config["updates"]:
        assert update["schedule"]["interval"] in ("daily", "weekly")
        for d in update.get("directories", [update.get("directory")]):
            assert (ROOT / d.strip("/")).is_dir(), d
