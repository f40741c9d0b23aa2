#!/usr/bin/env python3
"""The release steps that change the repository (.github/workflows/release.yml runs them;
tests/release/ runs them on a local repository). docs/releasing.md tells the whole release.

  check-version TAG [--root DIR]
      TAG must be vX.Y.Z with X.Y.Z the version of pyproject.toml and
      src/agent_eval/_version.py, and vX must be the major tag the documentation tells users
      to write (``uses: agent-eval/agent-eval@vX`` in README.md and examples/workflows/): a 0.x
      release is refused, since it would create v0, which no documented workflow names.
      Every documented `uses:` must name REPOSITORY of src/agent_eval/_version.py, and so
      must $GITHUB_REPOSITORY when set (the repository publishing the release); every
      documented pin of the package (``pipx install agent-eval-ci==X.Y.Z``) must be X.Y.Z.
      Prints ``version=X.Y.Z`` and ``major=vX`` (for GITHUB_OUTPUT).
  pin-image --image ghcr.io/OWNER/REPO --version X.Y.Z --digest sha256:HEX [--action FILE]
      rewrites action.yml's ``image: Dockerfile`` to the prebuilt image,
      ``image: docker://ghcr.io/OWNER/REPO:X.Y.Z@sha256:HEX``; nothing else in the file
      changes, and the result is checked by reading it back as YAML.
  release-commit --version X.Y.Z [--push REMOTE]
      commits the pinned action.yml on top of the checked-out (tagged) commit, without
      moving any branch, and points the tags vX.Y.Z and vX (the major tag users write in
      ``uses: OWNER/REPO@vX``) at that commit; with --push, force-pushes both tags.

main keeps ``image: Dockerfile``: only the release commit, reachable from the tags, names
the image. Exit status 0 done, 1 refused (the reason on stderr).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
# a registry host and a lower-case repository path (registries refuse upper case)
IMAGE = re.compile(r"^[a-z0-9.-]+(?::[0-9]+)?(/[a-z0-9]+(?:[._-][a-z0-9]+)*)+$")
SOURCE_IMAGE = re.compile(r"^(  image: )(['\"]?)Dockerfile\2[ \t]*$", re.M)
# where users are told which major tag to write: `uses: OWNER/agent-eval@vX` (the container
# action) or `uses: OWNER/agent-eval/python@vX` (the composite one)
DOCUMENTED = ("README.md", "examples/workflows/*.yml")
# a `uses:` line naming an action by major tag: OWNER, NAME and the tag (the composite
# action is OWNER/NAME/python), its value plain or quoted (YAML reads both)
# a pinned install of the package users are told to copy: `agent-eval-ci==X.Y.Z` (a
# placeholder such as `==X.Y.Z` or `==$VERSION` is no pin)
PIN = re.compile(r"\b([A-Za-z0-9][\w.-]*)(?:\[[\w,.-]*\])?==([0-9]+\.[0-9]+\.[0-9]+)\b")
USES = re.compile(r"^[ \t]*(?:-[ \t]+)?uses:[ \t]+[\"']?([\w.-]+)/([\w.-]+?)(?:/python)?"
                  r"@(v[0-9]+)\b", re.M)


class Refused(Exception):
    pass


def project_repository(root: Path) -> str:
    """The repository the project says it is published from (OWNER/NAME,
    ``REPOSITORY`` in src/agent_eval/_version.py)."""
    text = (root / "src" / "agent_eval" / "_version.py").read_text(encoding="utf-8")
    found = re.search(r'^REPOSITORY = "([\w.-]+/[\w.-]+)"$', text, re.M)
    if not found:
        raise Refused("src/agent_eval/_version.py names no REPOSITORY = \"OWNER/NAME\"")
    return found.group(1)


def project_version(root: Path) -> str:
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    version = str(data["project"]["version"])
    text = (root / "src" / "agent_eval" / "_version.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if not found or found.group(1) != version:
        raise Refused(f"pyproject.toml says {version}, src/agent_eval/_version.py says "
                      f"{found.group(1) if found else 'nothing'}: make them equal")
    return version


def check_version(tag: str, root: Path = ROOT, publisher: str | None = None
                  ) -> tuple[str, str]:
    """``(X.Y.Z, vX)`` for the tag ``vX.Y.Z`` of this project's version, when vX is the
    major tag the documentation names, and the documentation (and ``publisher``, the
    repository releasing it, when known) names the project's repository."""
    if not tag.startswith("v") or not VERSION.match(tag[1:]):
        raise Refused(f"{tag!r} is not a release tag vX.Y.Z")
    version = project_version(root)
    repository = project_repository(root)
    if publisher is not None and publisher.lower() != repository.lower():
        raise Refused(f"this release is published from {publisher}, but the project names "
                      f"{repository} (REPOSITORY in src/agent_eval/_version.py): the "
                      "documented `uses:` lines and SARIF's rule links would point there; "
                      "set REPOSITORY and the documentation to the repository that "
                      "publishes it")
    wrong = {r: places for r, places in documented_repositories(root).items()
             if r.lower() != repository.lower()}
    if wrong:
        found = "; ".join(f"{r} ({', '.join(places)})" for r, places in sorted(wrong.items()))
        raise Refused(f"README.md and examples/workflows/ tell users to write `uses:` of "
                      f"{found}, but the project is published as {repository} (REPOSITORY "
                      "in src/agent_eval/_version.py): make every documented `uses:` line "
                      f"name {repository}")
    if tag[1:] != version:
        raise Refused(f"the tag {tag} is not the project's version {version} "
                      "(pyproject.toml, src/agent_eval/_version.py)")
    major = "v" + version.split(".")[0]
    if major == "v0":
        raise Refused(f"{tag} would create the major tag v0, but the documented "
                      "`uses: OWNER/agent-eval@v1` resolves only a tag v1, so every "
                      "documented workflow would fail with 'unable to resolve action': the "
                      "first public release is v1.0.0; set the version to 1.0.0 first "
                      "(docs/releasing.md, 'The first release')")
    named = documented_majors(root)
    if set(named) != {major}:
        found = "; ".join(f"@{m} ({places[0]}" + (f" and {len(places) - 1} more)"
                                                   if len(places) > 1 else ")")
                          for m, places in sorted(named.items()))
        raise Refused(f"{tag} would create the major tag {major}, but README.md and "
                      "examples/workflows/ tell users to write "
                      f"{found or 'no `uses: OWNER/agent-eval@vX` at all'}: make every "
                      f"documented `uses:` line name @{major} first")
    stale = {v: places for v, places in documented_pins(root).items() if v != version}
    if stale:
        name = project_name(root)
        found = "; ".join(f"{name}=={v} ({', '.join(places)})"
                          for v, places in sorted(stale.items()))
        raise Refused(f"README.md and examples/workflows/ tell users to install {found}, "
                      f"but this release is {version}: set every documented pin to "
                      f"{name}=={version} first (docs/releasing.md, 'The first release')")
    return version, major


def project_name(root: Path) -> str:
    """The distribution's name on the package index (pyproject.toml)."""
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return str(data["project"]["name"])


def documented_pins(root: Path) -> dict[str, list[str]]:
    """The versions of the package that the documentation tells users to install
    (``agent-eval-ci==X.Y.Z``), each with the ``file:line`` places that pin it."""
    name = project_name(root).lower()
    pins: dict[str, list[str]] = {}
    for pattern in DOCUMENTED:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            for m in PIN.finditer(text):
                if m.group(1).lower() == name:
                    line = text.count("\n", 0, m.start()) + 1
                    pins.setdefault(m.group(2), []).append(
                        f"{path.relative_to(root).as_posix()}:{line}")
    return pins


def documented_majors(root: Path) -> dict[str, list[str]]:
    """The major tags the documentation tells users to write, each with the ``file:line``
    places that name it."""
    named: dict[str, list[str]] = {}
    for _, major, place in _documented_uses(root):
        named.setdefault(major, []).append(place)
    return named


def documented_repositories(root: Path) -> dict[str, list[str]]:
    """The repositories (OWNER/NAME) the documentation tells users to take the action
    from, each with the ``file:line`` places that name it."""
    named: dict[str, list[str]] = {}
    for repository, _, place in _documented_uses(root):
        named.setdefault(repository, []).append(place)
    return named


def _documented_uses(root: Path) -> list[tuple[str, str, str]]:
    """``(OWNER/NAME, vX, file:line)`` of every documented `uses:` of the action: the
    lines naming an action of the project's name (NAME of REPOSITORY) by major tag."""
    name = project_repository(root).split("/")[1].lower()
    found = []
    for pattern in DOCUMENTED:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            for m in USES.finditer(text):
                if m.group(2).lower() != name:
                    continue  # another action (actions/checkout@v4)
                line = text.count("\n", 0, m.start()) + 1
                found.append((f"{m.group(1)}/{m.group(2)}", m.group(3),
                              f"{path.relative_to(root).as_posix()}:{line}"))
    return found


def pinned_image(image: str, version: str, digest: str) -> str:
    if not IMAGE.match(image):
        raise Refused(f"{image!r} is not a lower-case image name REGISTRY/OWNER/REPO")
    if not VERSION.match(version):
        raise Refused(f"{version!r} is not a version X.Y.Z")
    if not DIGEST.match(digest):
        raise Refused(f"{digest!r} is not an image digest sha256:<64 hex digits>")
    return f"docker://{image}:{version}@{digest}"


def pin_image(action: Path, image: str, version: str, digest: str) -> str:
    """Rewrite ``action``'s ``runs.image`` from the Dockerfile to the pushed image; the new
    value."""
    value = pinned_image(image, version, digest)
    text = action.read_text(encoding="utf-8")
    before = yaml.safe_load(text)
    runs = before.get("runs") if isinstance(before, dict) else None
    if not isinstance(runs, dict) or runs.get("using") != "docker" \
            or runs.get("image") != "Dockerfile":
        raise Refused(f"{action}: runs is not `using: docker` with `image: Dockerfile` "
                      "(already pinned, or not the action's metadata)")
    new, count = SOURCE_IMAGE.subn(lambda m: f"{m.group(1)}{value}", text)
    if count != 1:
        raise Refused(f"{action}: expected one `  image: Dockerfile` line under runs, "
                      f"found {count}")
    after = yaml.safe_load(new)
    expected = {**before, "runs": {**runs, "image": value}}
    if after != expected:
        raise Refused(f"{action}: the rewrite changed more than runs.image")
    action.write_text(new, encoding="utf-8")
    return value


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise Refused(f"git {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip("\n")


def newer_release(root: Path, version: str, remote: str | None) -> str | None:
    """The newest release tag vX.B.C of ``version``'s major X above ``version``, on
    ``remote`` (its tags, as the release workflow's shallow checkout has none), else in
    the local repository; None when ``version`` is the newest."""
    major = version.split(".")[0]
    if remote:
        listed = git(root, "ls-remote", "--tags", remote, f"refs/tags/v{major}.*")
        names = [line.split("\t")[-1].removeprefix("refs/tags/").removesuffix("^{}")
                 for line in listed.splitlines() if line]
    else:
        names = git(root, "tag", "--list", f"v{major}.*").splitlines()
    mine = tuple(int(x) for x in version.split("."))
    newer = [tuple(int(x) for x in n[1:].split(".")) for n in names
             if VERSION.match(n[1:]) and n[1:].split(".")[0] == major  # (v1.* holds v10.0.0)
             and tuple(int(x) for x in n[1:].split(".")) > mine]
    return "v" + ".".join(map(str, max(newer))) if newer else None


def release_commit(root: Path, version: str, push: str | None = None) -> str:
    """Commit the pinned action.yml on top of HEAD and point vX.Y.Z and vX at it; the
    commit's SHA. The major tag vX is left where it is when a newer vX.B.C exists (a
    1.0.1 fix released after 1.1.0 would move the users of @v1 back to 1.0.1)."""
    if not VERSION.match(version):
        raise Refused(f"{version!r} is not a version X.Y.Z")
    image = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))["runs"]["image"]
    if not str(image).startswith("docker://") or f":{version}@sha256:" not in str(image):
        raise Refused(f"action.yml runs {image!r}, not the image of {version} by digest "
                      "(run pin-image first)")
    changed = [p for p in git(root, "status", "--porcelain", "-z").split("\0") if p]
    paths = [p[3:] for p in changed]
    if paths != ["action.yml"]:
        raise Refused("the work tree must differ from HEAD in action.yml only, found: "
                      + (", ".join(paths) or "no change"))
    source = git(root, "rev-parse", "HEAD")
    git(root, "commit", "--quiet", "--only", "action.yml", "-m",
        f"Release {version}: action.yml runs the prebuilt image\n\n{image}\n"
        f"Built from {source}; that commit keeps `image: Dockerfile`.")
    commit = git(root, "rev-parse", "HEAD")
    major = "v" + version.split(".")[0]
    newer = newer_release(root, version, push)
    tags = [f"v{version}"] if newer else [f"v{version}", major]
    if newer:
        print(f"release: the major tag {major} stays where it is: {newer} is newer than "
              f"{version}", file=sys.stderr)
    for tag in tags:
        git(root, "tag", "--force", "--annotate", "-m",
            f"agent-eval {version}: the action runs {image}", tag, commit)
    if push:
        git(root, "push", "--force", push, *(f"refs/tags/{tag}" for tag in tags))
    return commit


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check-version")
    c.add_argument("tag")
    c.add_argument("--root", default=str(ROOT))
    pin = sub.add_parser("pin-image")
    pin.add_argument("--image", required=True)
    pin.add_argument("--version", required=True)
    pin.add_argument("--digest", required=True)
    pin.add_argument("--action", default=str(ROOT / "action.yml"))
    rc = sub.add_parser("release-commit")
    rc.add_argument("--version", required=True)
    rc.add_argument("--push", metavar="REMOTE")
    rc.add_argument("--root", default=str(ROOT))
    args = p.parse_args(argv)
    try:
        if args.command == "check-version":
            # in the release workflow, the repository the release is published from
            publisher = os.environ.get("GITHUB_REPOSITORY") or None
            version, major = check_version(args.tag, Path(args.root), publisher)
            print(f"version={version}\nmajor={major}")
        elif args.command == "pin-image":
            print(pin_image(Path(args.action), args.image, args.version, args.digest))
        else:
            print(release_commit(Path(args.root), args.version, args.push))
    except Refused as exc:
        print(f"release: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
