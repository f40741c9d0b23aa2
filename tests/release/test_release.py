"""The release, dry-run offline (docs/releasing.md): the version check, the sdist and wheel
built as the release workflow builds them, the rewrite of action.yml to the prebuilt image,
and the release commit with the tag move in a local git repository pushed to a local bare
remote. The image build is the container test (tests/action/test_container.py), which also
feeds the digest of the image podman built into this same rewrite."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DIGEST = "sha256:" + "0123456789abcdef" * 4
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = _load()


def _version() -> str:
    version: str = release.project_version(ROOT)
    return version


def _script(*args: str, cwd: Path = ROOT, publisher: str | None = None
            ) -> subprocess.CompletedProcess[str]:
    """Run scripts/release.py; ``publisher`` is $GITHUB_REPOSITORY (unset by default, even
    when the tests run in GitHub Actions)."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_REPOSITORY"}
    if publisher is not None:
        env["GITHUB_REPOSITORY"] = publisher
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "release.py"), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
                          env={**env, **GIT_ENV})


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True, env={**os.environ, **GIT_ENV})
    return done.stdout.strip()


# ---------------------------------------------------------------------- the version
def _versioned_copy(tmp_path: Path, version: str, uses: str = "@v1",
                    pins: bool = True) -> Path:
    """What check-version reads (the version files, README.md, examples/workflows/), copied
    with the project's version set to ``version`` and the documented ``@v1`` replaced by
    ``uses``; with ``pins``, the documented ``agent-eval-ci==`` pins set to ``version`` too
    (as docs/releasing.md tells)."""
    root = tmp_path / f"root-{version}{uses}"
    (root / "src" / "agent_eval").mkdir(parents=True)
    old = _version()
    for name in ("pyproject.toml", "src/agent_eval/_version.py"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert text.count(f'"{old}"') == 1, name
        (root / name).write_text(text.replace(f'"{old}"', f'"{version}"'), encoding="utf-8")
    shutil.copytree(ROOT / "examples" / "workflows", root / "examples" / "workflows")
    shutil.copy(ROOT / "README.md", root / "README.md")
    for path in [root / "README.md", *(root / "examples" / "workflows").glob("*.yml")]:
        text = path.read_text(encoding="utf-8")
        text = (text.replace("/agent-eval@v1\n", f"/agent-eval{uses}\n")
                .replace("/agent-eval/python@v1\n", f"/agent-eval/python{uses}\n"))
        if pins:
            text = text.replace(f"agent-eval-ci=={old}\n", f"agent-eval-ci=={version}\n")
        path.write_text(text, encoding="utf-8")
    return root


def test_the_tag_must_be_the_project_version(tmp_path: Path) -> None:
    root = _versioned_copy(tmp_path, "1.2.3")
    done = _script("check-version", "v1.2.3", "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "version=1.2.3\nmajor=v1\n"
    for tag in ("v9.9.9", "v1.2.4", "1.2.3", "main", "v1.2.3-rc1", "v01.2.3"):
        done = _script("check-version", tag, "--root", str(root))
        assert done.returncode == 1 and done.stderr.startswith("release: "), (tag, done)


def test_a_0x_release_is_refused(tmp_path: Path) -> None:
    """The docs tell users to write `uses: OWNER/agent-eval@v1`; a 0.x release would move
    only v0.x.y and v0, so every documented workflow would fail to resolve the action."""
    root = _versioned_copy(tmp_path, "0.4.0")
    done = _script("check-version", "v0.4.0", "--root", str(root))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("release: v0.4.0 would create the major tag v0, but the "
                                  "documented `uses: OWNER/agent-eval@v1` resolves only a "
                                  "tag v1"), done.stderr
    assert "the first public release is v1.0.0; set the version to 1.0.0 first " \
        "(docs/releasing.md, 'The first release')" in done.stderr
    # the message names a section that exists
    assert "\n## The first release\n" in (ROOT / "docs" / "releasing.md").read_text()


def test_the_documented_pins_must_be_the_version(tmp_path: Path) -> None:
    """The shard example (and its copy in README.md) tells users to install
    agent-eval-ci==0.1.0, a version no release can publish (v0.* is refused). A release of
    1.0.0 that left those pins behind went out: only the tests, which the release workflow
    does not run, would have said so, and every copied workflow would fail at its install
    step with no matching distribution. check-version refuses it and names each place."""
    stale = _versioned_copy(tmp_path, "1.0.0", pins=False)
    done = _script("check-version", "v1.0.0", "--root", str(stale))
    assert done.returncode == 1 and done.stdout == ""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    sharded = (ROOT / "examples/workflows/sharded.yml").read_text(encoding="utf-8").splitlines()
    at = [n for n, line in enumerate(readme, 1) if "pipx install agent-eval-ci==0.1.0" in line]
    at_example = [n for n, line in enumerate(sharded, 1)
                  if "pipx install agent-eval-ci==0.1.0" in line]
    assert len(at) == len(at_example) == 2  # the shard job and the merge job
    assert done.stderr == (
        "release: README.md and examples/workflows/ tell users to install agent-eval-ci=="
        f"0.1.0 (README.md:{at[0]}, README.md:{at[1]}, examples/workflows/sharded.yml:"
        f"{at_example[0]}, examples/workflows/sharded.yml:{at_example[1]}), but this release "
        "is 1.0.0: set every documented pin to agent-eval-ci==1.0.0 first "
        "(docs/releasing.md, 'The first release')\n")
    pinned = _versioned_copy(tmp_path / "pinned", "1.0.0")
    done = _script("check-version", "v1.0.0", "--root", str(pinned))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "version=1.0.0\nmajor=v1\n"


def test_the_major_tag_must_be_the_documented_one(tmp_path: Path) -> None:
    # docs still on @v1, a release 2.0.0 would create v2
    root = _versioned_copy(tmp_path, "2.0.0")
    done = _script("check-version", "v2.0.0", "--root", str(root))
    assert done.returncode == 1, done.stdout
    assert "would create the major tag v2, but README.md and examples/workflows/ tell " \
        "users to write @v1 (README.md:" in done.stderr, done.stderr
    assert "make every documented `uses:` line name @v2 first" in done.stderr
    # the docs moved to @v2 with the version: released as v2
    root = _versioned_copy(tmp_path, "2.0.0", uses="@v2")
    done = _script("check-version", "v2.0.0", "--root", str(root))
    assert done.returncode == 0 and done.stdout == "version=2.0.0\nmajor=v2\n", done.stderr
    # one example left behind on @v1
    stale = root / "examples" / "workflows" / "committed-traces.yml"
    stale.write_text(stale.read_text().replace("/agent-eval@v2\n", "/agent-eval@v1\n"))
    done = _script("check-version", "v2.0.0", "--root", str(root))
    assert done.returncode == 1
    assert "@v1 (examples/workflows/committed-traces.yml:" in done.stderr, done.stderr
    # no documented `uses:` at all: nothing to check the major tag against, refused
    for path in [root / "README.md", *(root / "examples" / "workflows").glob("*.yml")]:
        path.unlink()
    done = _script("check-version", "v2.0.0", "--root", str(root))
    assert done.returncode == 1 and "no `uses: OWNER/agent-eval@vX` at all" in done.stderr


def test_the_release_names_the_repository_it_is_published_from(tmp_path: Path) -> None:
    """Users copy `uses: OWNER/NAME@v1` from README.md and examples/workflows/, and SARIF's
    rule links point into OWNER/NAME: a release from another repository, or documentation
    naming another one, is refused."""
    root = _versioned_copy(tmp_path, "1.2.3")
    done = _script("check-version", "v1.2.3", "--root", str(root),
                   publisher="Agent-Eval/agent-eval")  # GitHub's names are caseless
    assert done.returncode == 0 and done.stdout == "version=1.2.3\nmajor=v1\n", done.stderr
    done = _script("check-version", "v1.2.3", "--root", str(root),
                   publisher="someone/agent-eval")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "release: this release is published from someone/agent-eval, but the project names "
        "agent-eval/agent-eval (REPOSITORY in src/agent_eval/_version.py): the documented "
        "`uses:` lines and SARIF's rule links would point there; set REPOSITORY and the "
        "documentation to the repository that publishes it\n")
    # one example naming a placeholder owner
    stale = root / "examples" / "workflows" / "committed-traces.yml"
    text = stale.read_text()
    assert text.count("uses: agent-eval/agent-eval@v1\n") == 1
    stale.write_text(text.replace("uses: agent-eval/agent-eval@v1\n", "uses: org/agent-eval@v1\n"))
    line = text[:text.index("uses: agent-eval/agent-eval@v1")].count("\n") + 1
    done = _script("check-version", "v1.2.3", "--root", str(root))
    assert done.returncode == 1
    assert ("tell users to write `uses:` of org/agent-eval (examples/workflows/"
            f"committed-traces.yml:{line}), but the project is published as "
            "agent-eval/agent-eval") in done.stderr, done.stderr
    # quoted, as YAML allows: it was not seen, so the placeholder passed (exit 0)
    stale.write_text(text.replace("uses: agent-eval/agent-eval@v1\n",
                                  "uses: 'org/agent-eval@v1'\n"))
    done = _script("check-version", "v1.2.3", "--root", str(root))
    assert done.returncode == 1
    assert ("tell users to write `uses:` of org/agent-eval (examples/workflows/"
            f"committed-traces.yml:{line}), but the project is published as "
            "agent-eval/agent-eval") in done.stderr, done.stderr


def test_the_project_names_one_repository() -> None:
    """Every place that names the project's own GitHub repository names REPOSITORY: the
    `uses:` lines users copy, the links of SARIF and the schemas' $id (one slug, not a
    placeholder `org/agent-eval` beside `agent-eval/agent-eval`)."""
    from agent_eval._version import REPOSITORY
    from agent_eval.renderers import sarif
    from agent_eval.schemas import BASE_URL

    assert release.project_repository(ROOT) == REPOSITORY == "agent-eval/agent-eval"
    assert set(release.documented_repositories(ROOT)) == {REPOSITORY}
    assert sarif.INFORMATION_URI == "https://github.com/" + REPOSITORY
    assert sarif.RULE_DOC_URI.startswith(f"https://github.com/{REPOSITORY}/blob/main/")
    assert BASE_URL == "https://github.com/" + REPOSITORY + "/raw/main/schemas/"
    slug = re.compile(r"github\.com/([\w.-]+/agent-eval)\b|uses:\s+([\w.-]+/agent-eval)\b")
    places = [ROOT / "README.md", ROOT / "action.yml", ROOT / "python" / "action.yml",
              ROOT / ".github" / "zizmor.yml", ROOT / "pyproject.toml",
              *(ROOT / "docs").glob("*.md"), *(ROOT / "examples" / "workflows").glob("*.yml"),
              *(ROOT / "schemas").glob("*.json"), *(ROOT / "src").rglob("*.py"),
              *(ROOT / "src").rglob("*.json")]
    seen = set()
    for path in places:
        for m in slug.finditer(path.read_text(encoding="utf-8")):
            seen.add(m.group(1) or m.group(2))
            assert (m.group(1) or m.group(2)) == REPOSITORY, (path, m.group(0))
    assert seen == {REPOSITORY}


def test_the_package_index_page_links_the_repository() -> None:
    """The package's metadata named no URL: its page on the package index had no link to
    the repository, the issues or the documentation, and the README shown there links
    docs/… and examples/… relatively, which do not resolve on that page. Each of its
    Project-URLs is a page of the repository the project is published from."""
    import tomllib

    from agent_eval._version import REPOSITORY

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls = project.get("urls", {})
    home = "https://github.com/agent-eval/agent-eval"
    assert urls == {"Homepage": home, "Documentation": home + "#readme",
                    "Issues": home + "/issues", "Source": home}
    assert home == "https://github.com/" + REPOSITORY


def test_the_documentation_names_one_major_tag() -> None:
    """The places check-version reads are the ones users copy from: every `uses:` of the
    action in README.md and examples/workflows/ (the container action and the composite
    one) names the same major tag, the one the product contract names (@v1)."""
    named = release.documented_majors(ROOT)
    assert set(named) == {"v1"}
    places = named["v1"]
    assert any(p.startswith("README.md:") for p in places)
    assert "examples/workflows/without-docker.yml:42" in places  # the composite action
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    [line] = [p for p in places if p.startswith("README.md:")]
    assert readme[int(line.split(":")[1]) - 1].strip() == "uses: agent-eval/agent-eval@v1"


# ---------------------------------------------------------------------- the rewrite
def test_pin_image_changes_only_runs_image(tmp_path: Path) -> None:
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", action)
    before = action.read_text(encoding="utf-8")
    done = _script("pin-image", "--image", "ghcr.io/octo-org/agent-eval", "--version", "1.2.3",
                   "--digest", DIGEST, "--action", str(action))
    assert done.returncode == 0, done.stderr
    value = f"docker://ghcr.io/octo-org/agent-eval:1.2.3@{DIGEST}"
    assert done.stdout.strip() == value
    after = action.read_text(encoding="utf-8")
    # the one line differs, byte for byte the rest is the same
    assert before.replace("  image: Dockerfile\n", f"  image: {value}\n") == after
    data = yaml.safe_load(after)
    assert data["runs"] == {"using": "docker", "image": value}
    assert data["inputs"] == yaml.safe_load(before)["inputs"]
    # a second run finds nothing to pin
    again = _script("pin-image", "--image", "ghcr.io/octo-org/agent-eval", "--version", "1.2.3",
                    "--digest", DIGEST, "--action", str(action))
    assert again.returncode == 1 and "already pinned" in again.stderr


@pytest.mark.parametrize(("image", "version", "digest", "says"), [
    ("ghcr.io/Octo-Org/agent-eval", "1.2.3", DIGEST, "lower-case image name"),
    ("ghcr.io/octo-org/agent-eval:1.2.3", "1.2.3", DIGEST, "lower-case image name"),
    ("ghcr.io/octo-org/agent-eval", "v1.2.3", DIGEST, "not a version"),
    ("ghcr.io/octo-org/agent-eval", "1.2.3", "sha256:abc", "not an image digest"),
    ("ghcr.io/octo-org/agent-eval", "1.2.3", DIGEST.upper(), "not an image digest"),
])
def test_pin_image_refuses_bad_values(tmp_path: Path, image: str, version: str, digest: str,
                                      says: str) -> None:
    action = tmp_path / "action.yml"
    shutil.copy(ROOT / "action.yml", action)
    done = _script("pin-image", "--image", image, "--version", version, "--digest", digest,
                   "--action", str(action))
    assert done.returncode == 1 and says in done.stderr, done.stderr
    assert action.read_bytes() == (ROOT / "action.yml").read_bytes()


def test_the_release_tests_first_and_publishes_to_pypi_last() -> None:
    """A tag pushed on a commit CI never ran was released untested, and PyPI was published
    beside the image build, so a failed image left a version on the index (which can never
    be uploaded again) with no action. The release's test job is CI's (the same container
    and steps), everything else needs it, and PyPI needs the image."""
    wf = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    ci = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())
    jobs = wf["jobs"]
    (ci_test,) = ci["jobs"].values()

    def steps(job: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
        return [(s.get("uses"), s.get("run"), s.get("env")) for s in job["steps"]]

    assert jobs["test"]["container"] == ci_test["container"]
    assert steps(jobs["test"]) == steps(ci_test)
    assert jobs["dist"]["needs"] == "test"
    assert set(jobs["image"]["needs"] if isinstance(jobs["image"]["needs"], list)
               else [jobs["image"]["needs"]]) >= {"dist"}
    assert set(jobs["pypi"]["needs"]) == {"dist", "image"}
    assert set(jobs["action"]["needs"]) == {"dist", "pypi", "image"}


def test_main_keeps_building_the_dockerfile() -> None:
    """The rewrite happens only on the release commit: main's action.yml builds the
    Dockerfile, so the self-test runs this commit's code."""
    assert yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["image"] == "Dockerfile"


# ------------------------------------------------------------ the commit and the tags
def _project_copy(tmp_path: Path) -> tuple[Path, Path, str]:
    """A local repository holding the release inputs (action.yml, pyproject.toml, the
    version file), with the release tag vX.Y.Z and an older major tag, and its bare
    remote."""
    version = _version()
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    repo = tmp_path / "repo"
    (repo / "src" / "agent_eval").mkdir(parents=True)
    for name in ("action.yml", "pyproject.toml", "src/agent_eval/_version.py"):
        shutil.copy(ROOT / name, repo / name)
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "an older release")
    major = "v" + version.split(".")[0]
    _git(repo, "tag", major)  # where the major tag was before this release
    (repo / "CHANGES").write_text("this release\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "this release")
    _git(repo, "tag", "-a", "-m", "release", f"v{version}")
    _git(repo, "remote", "add", "origin", remote.as_uri())
    _git(repo, "push", "-q", "origin", "main", "--tags")
    _git(repo, "checkout", "-q", f"v{version}")  # as the workflow checks out the tag
    return repo, remote, version


def test_release_commit_moves_the_tags_not_main(tmp_path: Path) -> None:
    repo, remote, version = _project_copy(tmp_path)
    major = "v" + version.split(".")[0]
    source = _git(repo, "rev-parse", "HEAD")
    main_before = _git(remote, "rev-parse", "refs/heads/main")
    assert main_before == source

    pin = _script("pin-image", "--image", "ghcr.io/octo-org/agent-eval", "--version", version,
                  "--digest", DIGEST, "--action", str(repo / "action.yml"))
    assert pin.returncode == 0, pin.stderr
    done = _script("release-commit", "--version", version, "--push", "origin", "--root",
                   str(repo))
    assert done.returncode == 0, done.stderr
    commit = done.stdout.strip()

    image = f"docker://ghcr.io/octo-org/agent-eval:{version}@{DIGEST}"
    for tag in (f"v{version}", major):
        assert _git(remote, "rev-parse", f"refs/tags/{tag}^{{commit}}") == commit
    assert _git(remote, "rev-parse", "refs/heads/main") == main_before  # main not moved
    assert _git(repo, "rev-parse", f"{commit}^") == source  # on top of the tagged commit
    assert _git(repo, "diff", "--name-only", source, commit) == "action.yml"
    released = yaml.safe_load(_git(repo, "show", f"{commit}:action.yml"))
    assert released["runs"]["image"] == image
    assert yaml.safe_load(_git(repo, "show", "main:action.yml"))["runs"]["image"] == \
        "Dockerfile"
    assert image in _git(remote, "cat-file", "-p", f"refs/tags/{major}")


def test_release_commit_never_moves_the_major_tag_back(tmp_path: Path) -> None:
    """A fix release of an older minor (1.0.1 after 1.1.0) moved vX to it, so every user
    of @v1 went back to 1.0.1. The major tag stays on the newest release; the release's
    own tag is made as always. (The workflow's checkout has no tags: the remote's are
    asked.)"""
    repo, remote, version = _project_copy(tmp_path)
    x, y, _z = (int(p) for p in version.split("."))
    major = f"v{x}"
    newer = f"v{x}.{y + 1}.0"
    _git(repo, "tag", "-a", "-m", "a newer release", newer, f"v{version}^{{commit}}")
    _git(repo, "push", "-q", "origin", newer)
    _git(repo, "tag", "-d", newer)  # the remote has it; the checkout does not
    major_before = _git(remote, "rev-parse", f"refs/tags/{major}^{{commit}}")
    release.pin_image(repo / "action.yml", "ghcr.io/o/r", version, DIGEST)
    done = _script("release-commit", "--version", version, "--push", "origin", "--root",
                   str(repo))
    assert done.returncode == 0, done.stderr
    commit = done.stdout.strip()
    assert _git(remote, "rev-parse", f"refs/tags/v{version}^{{commit}}") == commit
    assert _git(remote, "rev-parse", f"refs/tags/{major}^{{commit}}") == major_before
    assert f"the major tag {major} stays where it is: {newer} is newer" in done.stderr
    # a newer release of another major, or a tag that is no version, changes nothing
    assert release.newer_release(repo, f"{x}.{y + 1}.0", "origin") is None
    _git(repo, "tag", f"v{x}.{y + 1}.x")
    _git(repo, "tag", f"v{x + 1}.0.0")
    _git(repo, "tag", f"v{x}0.0.0")  # v1.* lists v10.0.0 too
    assert release.newer_release(repo, f"{x}.{y + 1}.0", None) is None
    assert release.newer_release(repo, version, "origin") == newer


def test_release_commit_refuses_an_unpinned_or_dirty_tree(tmp_path: Path) -> None:
    repo, remote, version = _project_copy(tmp_path)
    done = _script("release-commit", "--version", version, "--root", str(repo))
    assert done.returncode == 1 and "run pin-image first" in done.stderr
    release.pin_image(repo / "action.yml", "ghcr.io/o/r", version, DIGEST)
    (repo / "stray.txt").write_text("x")
    done = _script("release-commit", "--version", version, "--root", str(repo))
    assert done.returncode == 1 and "stray.txt" in done.stderr
    assert _git(remote, "rev-parse", f"refs/tags/v{version}^{{commit}}") == _git(
        repo, "rev-parse", "HEAD")  # nothing moved


# ---------------------------------------------------------------------- the build
def test_sdist_and_wheel_build_offline_with_the_pinned_backend(tmp_path: Path) -> None:
    """What the release workflow runs (python -m build --no-isolation, after installing
    requirements/build.txt): here the test extras hold the same pinned hatchling."""
    if importlib.util.find_spec("build") is None or importlib.util.find_spec(
            "hatchling") is None:
        pytest.fail("build and hatchling come with the test extras: pip install -c "
                    "constraints.txt -e '.[test]'")
    src = tmp_path / "src"
    names = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in names:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path / "dist"
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist",
                           "--wheel", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    version = _version()
    [wheel] = out.glob("*.whl")
    [sdist] = out.glob("*.tar.gz")
    assert wheel.name == f"agent_eval_ci-{version}-py3-none-any.whl"
    assert sdist.name == f"agent_eval_ci-{version}.tar.gz"
    with zipfile.ZipFile(wheel) as zf:
        files = zf.namelist()
        info = f"agent_eval_ci-{version}.dist-info"
        metadata = zf.read(f"{info}/METADATA").decode()
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
    assert "Name: agent-eval-ci\n" in metadata and f"Version: {version}\n" in metadata
    assert "Requires-Python: >=3.11" in metadata
    assert "[console_scripts]\nagent-eval = agent_eval._cli:main" in entry_points
    assert "Project-URL: Source, https://github.com/agent-eval/agent-eval\n" in metadata
    assert "agent_eval/py.typed" in files and "agent_eval/schemas/results.schema.json" in files
    assert any(f.startswith("agent_eval/rules/docs/") and f.endswith(".md") for f in files)
    assert not any(f.startswith(("tests/", "examples/")) for f in files)
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers()
                   if "/" in m.name and m.isfile()}
        tf.extractall(tmp_path / "unpacked", filter="data")
    assert {"pyproject.toml", "README.md", "src/agent_eval/_cli.py"} <= members
    # the shipped tests read the example, the action's files, the locks, the CI entry point
    # (and the README links them): every file of the repository is in the sdist, and
    # nothing else but its metadata
    tracked = set(_git(ROOT, "ls-files", "--cached").splitlines())
    assert not tracked - members, sorted(tracked - members)[:20]
    assert members - set(names) == {"PKG-INFO"}
    assert not any(part in {"node_modules", ".venv", "__pycache__", ".pytest_cache",
                            ".mypy_cache", ".ruff_cache", ".agent-eval", "agent-eval-results"}
                   for m in members for part in m.split("/")), "junk in the sdist"
    assert sdist.stat().st_size < 4 * 2**20

    # the shipped tests run from the unpacked sdist: the ones of the bundled example, of the
    # README's links and of the example's report (its paths are relative to the git work
    # tree); outside a git work tree the run stops at once and says what to do
    [unpacked] = (tmp_path / "unpacked").iterdir()
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/test_example.py", "tests/test_repository.py",
            "tests/renderers/test_markdown.py"]
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(unpacked / "src")}
    done = subprocess.run(argv, cwd=unpacked, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    said = done.stdout + done.stderr
    assert f"{unpacked} is in no git work tree, but the tests need it to be the root of one" \
        in said or f"{unpacked} is inside the git work tree " in said, said
    assert "run `git init -q` there first" in said
    _git(unpacked, "init", "-q")
    done = subprocess.run(argv, cwd=unpacked, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout
