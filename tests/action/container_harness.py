"""Runs agent-eval inside a built image's root the way a GitHub runner runs the action.

Used by scripts/container-test after ``podman mount`` (``podman run`` cannot set rlimits in
this sandbox): every command runs as ``chroot ROOT /usr/bin/env -i -C DIR VAR=... ARGV`` with
the image's own ENV, so the image's Python, packages and ENTRYPOINT are what run. The runner's
layout is recreated inside the root: the repository's examples/ as a git checkout in
/github/workspace owned by another user (uid 1001, as on a hosted runner), /github/home,
/github/workflow/event.json (a real push payload from npm @octokit/webhooks-examples) and the
file-command files in /github/file_commands. GitHub's API is a recording server on 127.0.0.1
that answers every request with 200 or 201.

Checks (each recorded in the report, any failure makes the exit status 1):
  version  ENTRYPOINT[0] --version prints the project's version;
  license  the installed distribution carries the repository's LICENSE file;
  run      ``agent-eval run`` on examples/customer-service exits 1 (the example fails on purpose)
           and writes results.json in the workspace with expected.json's number of violations;
  action   (when the image has agent_eval.commands.action) the ENTRYPOINT with the runner's
           environment: exit 1 under the default fail-on, the step outputs name files that exist
           in the workspace, the job summary is written, the check run (check-run: true) is
           created on the loopback API with the token; again with fail-on never: exit 0;
           the output folder it wrote belongs to the workspace's owner (uid 1001), not root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

WORKSPACE = "/github/workspace"
CONFIG = "examples/customer-service/agent-eval.yaml"
RUNNER_UID = 1001  # the hosted runner's user: the checkout is not owned by the container's root
TOKEN = "ghs_containertest0000000000000000000000"
COMMAND_TIMEOUT = 300.0
SERVER_LIFETIME = 900.0  # the recording server stops by itself after this many seconds


# --------------------------------------------------------------------------- the loopback API
@dataclass
class Recorded:
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def serve(recorded: Recorded) -> ThreadingHTTPServer:
    """A GitHub API stand-in on 127.0.0.1 that accepts every request and records it."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body: Any
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = {"bytes": len(raw)}
            with recorded.lock:
                recorded.requests.append({
                    "method": self.command, "path": self.path, "body": body,
                    "authorization": TOKEN in (self.headers.get("Authorization") or ""),
                })
                number = len(recorded.requests)
            status = 201 if self.command == "POST" else 200
            answer: dict[str, Any] = {}
            if self.command == "POST":  # what a created object has at least
                host = self.headers.get("Host") or "127.0.0.1"
                url = f"http://{host}{self.path.split('?')[0]}/{number}"
                answer = {"id": number, "url": url, "html_url": url}
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    timer = threading.Timer(SERVER_LIFETIME, server.shutdown)
    timer.daemon = True
    timer.start()
    return server


# --------------------------------------------------------------------------- the runner's setup
def action_inputs(action_yml: Path, token: str) -> dict[str, str]:
    """INPUT_<NAME> for every input of action.yml, as the runner sets them: the default (the
    token for ``${{ github.token }}``) or empty; names upper-cased, dashes kept."""
    meta = yaml.safe_load(action_yml.read_text(encoding="utf-8"))
    env: dict[str, str] = {}
    for name, spec in (meta.get("inputs") or {}).items():
        default = (spec or {}).get("default", "")
        value = str(default).replace("${{ github.token }}", token)
        env["INPUT_" + name.replace(" ", "_").upper()] = value
    return env


def push_event(repo: Path, sha: str) -> tuple[dict[str, Any], str]:
    """A real push payload (a branch push from @octokit/webhooks-examples) for commit ``sha``."""
    index = repo / "node_modules/@octokit/webhooks-examples/api.github.com/index.json"
    if index.is_file():
        for entry in json.loads(index.read_text(encoding="utf-8")):
            if entry.get("name") != "push":
                continue
            for example in entry.get("examples", []):
                if str(example.get("ref", "")).startswith("refs/heads/"):
                    event: dict[str, Any] = json.loads(json.dumps(example))
                    event["after"] = sha
                    if isinstance(event.get("head_commit"), dict):
                        event["head_commit"]["id"] = sha
                    return event, "@octokit/webhooks-examples"
    owner = {"login": "octo-org", "id": 1, "type": "Organization"}
    return ({"ref": "refs/heads/main", "before": "0" * 40, "after": sha,
             "repository": {"id": 1, "name": "agent-eval-example",
                            "full_name": "octo-org/agent-eval-example", "owner": owner,
                            "default_branch": "main", "private": False},
                            "sender": owner, "head_commit": {"id": sha}, "commits": []},
            "minimal (npm ci has not installed @octokit/webhooks-examples)")


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Octo Cat",
           "GIT_AUTHOR_EMAIL": "octo@example.com", "GIT_COMMITTER_NAME": "Octo Cat",
           "GIT_COMMITTER_EMAIL": "octo@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, text=True,
                         capture_output=True)
    return out.stdout.strip()


def prepare(root: Path, repo: Path) -> tuple[str, Path]:
    """The workspace (a git checkout of the repository's examples/) and the /github folders."""
    github = root / "github"
    if github.exists():
        shutil.rmtree(github)
    workspace = github / "workspace"
    shutil.copytree(repo / "examples", workspace / "examples",
                    ignore=shutil.ignore_patterns("agent-eval-results", "__pycache__", ".*"))
    for folder in ("home", "workflow", "file_commands"):
        (github / folder).mkdir(parents=True)
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "examples")
    sha = git(workspace, "rev-parse", "HEAD")
    for path in [workspace, *workspace.rglob("*")]:
        os.lchown(path, RUNNER_UID, RUNNER_UID)
    return sha, workspace


@dataclass
class Step:
    argv: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float


def in_image(root: Path, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> Step:
    cmd = ["chroot", str(root), "/usr/bin/env", "-i", "-C", cwd,
           *(f"{k}={v}" for k, v in env.items()), *argv]
    start = time.monotonic()
    proc = subprocess.run(cmd, text=True, capture_output=True, timeout=COMMAND_TIMEOUT,
                          check=False)
    return Step(list(argv), proc.returncode, proc.stdout, proc.stderr,
                round(time.monotonic() - start, 2))


def read_outputs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT file: ``name=value`` lines and ``name<<DELIM`` … ``DELIM`` blocks."""
    out: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value_text = line.split("=", 1)
            out[name] = value_text
        i += 1
    return out


def inside(workspace: Path, relative: str) -> Path | None:
    """The host path of a file an output names, when it lies inside the workspace."""
    if not relative:
        return None
    path = Path(relative)
    if path.is_absolute():
        try:
            path = path.relative_to(WORKSPACE)
        except ValueError:
            return None
    full = (workspace / path).resolve()
    return full if full.is_relative_to(workspace.resolve()) and full.is_file() else None


# --------------------------------------------------------------------------- the checks
class Checks:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def check(self, name: str, ok: bool, detail: str) -> bool:
        self.items.append({"name": name, "ok": ok, "detail": detail})
        print(f"container-test: {'ok  ' if ok else 'FAIL'} {name}: {detail}", flush=True)
        return ok

    @property
    def failed(self) -> bool:
        return not all(item["ok"] for item in self.items)


def show(step: Step) -> str:
    tail = (step.stdout + step.stderr).strip().splitlines()[-15:]
    return f"exit {step.code} in {step.seconds}s; output ends:\n    " + "\n    ".join(tail)


def project_version(repo: Path) -> str:
    text = (repo / "src/agent_eval/_version.py").read_text(encoding="utf-8")
    found = re.search(r'__version__\s*=\s*"([^"]+)"', text)
    assert found, "no __version__ in src/agent_eval/_version.py"
    return found.group(1)


def run(args: argparse.Namespace) -> int:
    root = Path(args.root)
    repo = Path(args.repo).resolve()
    entrypoint: list[str] = json.loads(args.entrypoint)
    image_env = dict(item.split("=", 1) for item in json.loads(args.image_env or "[]"))
    image_env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    report: dict[str, Any] = dict(item.split("=", 1) for item in args.fact)
    report["entrypoint"] = entrypoint
    checks = Checks()
    steps: dict[str, Step] = {}

    sha, workspace = prepare(root, repo)
    expected = json.loads((repo / "examples/customer-service/expected.json").read_text())
    checks.check("entrypoint", len(entrypoint) >= 1 and entrypoint[0].startswith("/")
                 and (root / entrypoint[0].lstrip("/")).exists(),
                 f"{entrypoint} (absolute, present in the image)")
    program = entrypoint[0]
    base_env = {**image_env, "HOME": "/github/home"}

    # 1. the version
    steps["version"] = step = in_image(root, [program, "--version"], base_env, WORKSPACE)
    version = project_version(repo)
    checks.check("version", step.code == 0 and step.stdout.strip() == f"agent-eval {version}",
                 f"{step.stdout.strip()!r} (project: {version}); {show(step)}")

    # 1b. the licence travels with the installed distribution (Apache-2.0 asks for it)
    steps["license"] = step = in_image(
        root, ["python3", "-c", "import hashlib, importlib.metadata as m\n"
               "d = m.distribution('agent-eval-ci')\n"
               "for f in d.files or ():\n"
               "    if f.name == 'LICENSE':\n"
               "        print(hashlib.sha256(f.locate().read_bytes()).hexdigest())"],
        base_env, WORKSPACE)
    licence_sha = hashlib.sha256((repo / "LICENSE").read_bytes()).hexdigest()
    checks.check("license", step.code == 0 and step.stdout.split() == [licence_sha],
                 f"sha256 of each LICENSE in the installed distribution: {step.stdout.split()} "
                 f"(want exactly the repository's, {licence_sha}); {show(step)}")

    # 2. agent-eval run on the example
    steps["run"] = step = in_image(
        root, [program, "run", "--config", CONFIG, "--output-dir", "agent-eval-run",
               "--no-timings", "--quiet"], base_env, WORKSPACE)
    results_file = workspace / "agent-eval-run" / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else {}
    violations = (results.get("counts") or {}).get("violations")
    checks.check("run", step.code == 1 and results.get("verdict") == "fail"
                 and violations == len(expected),
                 f"exit {step.code} (want 1), verdict {results.get('verdict')!r} (want 'fail'), "
                 f"{violations} violation(s) (expected.json: {len(expected)}) in "
                 f"{results_file.relative_to(root)}; {show(step)}")

    # 3. the ENTRYPOINT, `agent-eval action`, with the runner's environment
    probe = in_image(root, ["python3", "-c", "import importlib.util, sys; sys.exit(0 if "
                            "importlib.util.find_spec('agent_eval.commands.action') else 3)"],
                     base_env, WORKSPACE)
    report["action_in_image"] = probe.code == 0
    if probe.code not in (0, 3):
        checks.check("action-probe", False, show(probe))
    elif probe.code == 3:
        print("container-test: SKIP action: the image has no agent_eval.commands.action yet "
              "(checked the version and `agent-eval run` only)", flush=True)
    else:
        recorded = Recorded()
        server = serve(recorded)
        try:
            event, source = push_event(repo, sha)
            report["event_source"] = source
            (root / "github/workflow/event.json").write_text(json.dumps(event))
            repository = str(event["repository"]["full_name"])
            seen = 0
            for fail_on, want in (("fail", 1), ("never", 0)):
                name = f"action-fail-on-{fail_on}"
                outputs = root / f"github/file_commands/set_output_{fail_on}"
                summary = root / f"github/file_commands/step_summary_{fail_on}"
                env = {
                    **image_env,
                    **action_inputs(repo / "action.yml", TOKEN),
                    "INPUT_CONFIG": CONFIG,
                    "INPUT_UPLOAD-SARIF": "false",
                    "INPUT_COMMENT": "false",
                    "INPUT_FAIL-ON": fail_on,
                    # one GitHub call, to see the image reach GITHUB_API_URL with the token
                    "INPUT_CHECK-RUN": "true" if fail_on == "fail" else "false",
                    "HOME": "/github/home", "CI": "true", "GITHUB_ACTIONS": "true",
                    "GITHUB_WORKSPACE": WORKSPACE,
                    "GITHUB_EVENT_PATH": "/github/workflow/event.json",
                    "GITHUB_EVENT_NAME": "push",
                    "GITHUB_OUTPUT": f"/github/file_commands/{outputs.name}",
                    "GITHUB_STEP_SUMMARY": f"/github/file_commands/{summary.name}",
                    "GITHUB_REPOSITORY": repository,
                    "GITHUB_REPOSITORY_OWNER": repository.split("/")[0],
                    "GITHUB_SHA": sha, "GITHUB_REF": str(event["ref"]),
                    "GITHUB_REF_NAME": str(event["ref"]).removeprefix("refs/heads/"),
                    "GITHUB_REF_TYPE": "branch",
                    "GITHUB_RUN_ID": "4242", "GITHUB_RUN_NUMBER": "7",
                    "GITHUB_RUN_ATTEMPT": "1", "GITHUB_WORKFLOW": "agent-eval",
                    "GITHUB_JOB": "eval", "GITHUB_ACTOR": "octocat",
                    "GITHUB_ACTION": "__self", "GITHUB_SERVER_URL": "https://github.com",
                    "GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}",
                    "GITHUB_GRAPHQL_URL": f"http://127.0.0.1:{server.server_port}/graphql",
                    "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
                }
                steps[name] = step = in_image(root, entrypoint, env, WORKSPACE)
                values = read_outputs(outputs)
                files = {key: inside(workspace, values.get(key, ""))
                         for key in ("results-file", "sarif-file")}
                written = {key: str(path.relative_to(root)) if path else None
                           for key, path in files.items()}
                verdict = ""
                if files["results-file"]:
                    verdict = json.loads(files["results-file"].read_text()).get("verdict", "")
                summary_text = summary.read_text() if summary.exists() else ""
                with recorded.lock:
                    calls = [q for q in recorded.requests[seen:]
                             if q["method"] == "POST"
                             and q["path"] == f"/repos/{repository}/check-runs"]
                    seen = len(recorded.requests)
                check_run_ok = (len(calls) == 1 and calls[0]["authorization"]
                                and (calls[0]["body"] or {}).get("head_sha") == sha
                                if fail_on == "fail" else not calls)
                # what the root container wrote is given back to the workspace's owner
                owners = {str(p.relative_to(root)): p.lstat().st_uid
                          for f in files.values() if f
                          for p in [f.parent, *f.parent.rglob("*")]}
                owned = bool(owners) and set(owners.values()) == {RUNNER_UID}
                checks.check(f"{name}-owner", owned,
                             f"owners of the output folder's entries: {owners} "
                             f"(want uid {RUNNER_UID}, the workspace's)")
                checks.check(
                    name,
                    step.code == want and values.get("verdict") == "fail" and verdict == "fail"
                    and all(files.values()) and bool(summary_text.strip()) and check_run_ok,
                    f"exit {step.code} (want {want}); outputs verdict "
                    f"{values.get('verdict')!r}, files {written}, results verdict {verdict!r}, "
                    f"job summary {len(summary_text)} chars, check runs created with the token "
                    f"on {sha[:12]}: {len(calls)}; {show(step)}")
                report[name] = {"outputs": values, "files": written}
        finally:
            server.shutdown()
            server.server_close()
        report["api_requests"] = recorded.requests
        print(f"container-test: the action made {len(recorded.requests)} API request(s): "
              + ", ".join(f"{r['method']} {r['path']}" for r in recorded.requests[:10]),
              flush=True)

    report["steps"] = {name: vars(step) for name, step in steps.items()}
    report["checks"] = checks.items
    report["passed"] = not checks.failed
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 1 if checks.failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the checks inside a mounted image root")
    r.add_argument("--root", required=True, help="the image's root (podman mount)")
    r.add_argument("--repo", required=True, help="the repository (examples/, action.yml)")
    r.add_argument("--entrypoint", required=True, help="the image's ENTRYPOINT as JSON")
    r.add_argument("--image-env", help="the image's ENV as JSON (a list of NAME=VALUE)")
    r.add_argument("--report", help="write the report JSON here")
    r.add_argument("--fact", action="append", default=[], metavar="NAME=VALUE",
                   help="a fact to copy into the report (repeatable)")
    args = p.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
