"""Where the base branch's results come from (action.md "Base-branch comparison").

- ``file``: a committed results JSON.
- ``git``: the base commit evaluated with *its own* config on *its own* committed traces, in
  a temporary ``git worktree`` (the base commit is fetched first when the clone does not
  have it, as a ``--depth 1`` checkout does not).
- ``artifact``: the results JSON artifact of the latest successful run of this workflow on
  the base branch, through the Actions API.
- ``auto``: ``git`` when the base commit has the config and traces, else ``artifact``, else
  none; :class:`Found` always says why (``reason``), so the comment can.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_eval.errors import ConfigError
from agent_eval.results import Results

HOW = ("commit the config and traces to the base branch, or keep the default branch's "
       "results.json as the artifact named by `baseline-artifact` (README 'Base-branch "
       "comparison and sharding')")
GIT_TIMEOUT = 300


@dataclass
class Found:
    """A baseline, or why there is none."""

    results: Results | None
    source: dict[str, Any]
    reason: str
    notes: list[str] = field(default_factory=list)  # what was tried before (auto)


# -------------------------------------------------------------------------- file
def from_file(path: str | Path) -> Found:
    from agent_eval.commands.report import load

    try:
        res = load(str(path))
    except ValueError as exc:
        return Found(None, {"kind": "file", "path": str(path)}, str(exc))
    return Found(res, {"kind": "file", "path": str(path), "description": str(path)},
                 f"results file {path}")


# --------------------------------------------------------------------------- git
class GitError(Exception):
    pass


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not installed")
    try:
        done = subprocess.run([git, "-C", str(repo), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]}: {exc}") from exc
    if check and done.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])}: "
                       f"{done.stderr.strip() or f'exit {done.returncode}'}")
    return done


def has_commit(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def ensure_commit(repo: Path, sha: str, remote: str = "origin") -> str | None:
    """Fetch ``sha`` when the clone lacks it (shallow clones do); a note of what was
    done, None when nothing was needed."""
    if has_commit(repo, sha):
        return None
    shallow = _git(repo, "rev-parse", "--is-shallow-repository",
                   check=False).stdout.strip() == "true"
    args = ["fetch", "--quiet", "--no-tags", "--no-recurse-submodules"]
    if shallow:
        args.append("--depth=1")
    _git(repo, *args, remote, sha)
    if not has_commit(repo, sha):
        raise GitError(f"the base commit {sha[:12]} is not in the clone after fetching it")
    return f"fetched the base commit {sha[:12]} ({'shallow' if shallow else 'full'} clone)"


def from_git(workspace: Path, sha: str, config: Path, traces: list[str] | None = None,
             *, fetch: bool = True) -> Found:
    """Evaluate the base commit ``sha`` with its own version of ``config`` (a path in the
    workspace) on the traces committed there."""
    source: dict[str, Any] = {"kind": "git", "sha": sha,
                              "description": f"base commit {sha[:12]}, evaluated with git"}
    try:
        top = Path(_git(workspace, "rev-parse", "--show-toplevel").stdout.strip())
    except GitError as exc:
        return Found(None, source, f"the workspace is not a git repository ({exc})")
    notes: list[str] = []
    try:
        if fetch:
            note = ensure_commit(top, sha)
            if note:
                notes.append(note)
        elif not has_commit(top, sha):
            return Found(None, source, f"the base commit {sha[:12]} is not in the clone")
    except GitError as exc:
        return Found(None, source, f"could not fetch the base commit {sha[:12]}: {exc}")
    try:
        rel = config.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return Found(None, source, f"the config {config} is outside the repository")
    if _git(top, "cat-file", "-e", f"{sha}:{rel}", check=False).returncode != 0:
        return Found(None, source, f"the base commit {sha[:12]} has no {rel} (the config is "
                     "new in this change)", notes)
    cwd_rel = Path.cwd().resolve()
    try:
        cwd_in_repo = cwd_rel.relative_to(top.resolve())
    except ValueError:
        cwd_in_repo = Path()
    tmp = Path(tempfile.mkdtemp(prefix="agent-eval-base-"))
    tree = tmp / "base"
    try:
        _git(top, "worktree", "add", "--detach", "--quiet", str(tree), sha)
        try:
            res = _evaluate(tree, rel, cwd_in_repo, traces)
        finally:
            _git(top, "worktree", "remove", "--force", str(tree), check=False)
            _git(top, "worktree", "prune", check=False)
    except GitError as exc:
        return Found(None, source, f"could not check out the base commit {sha[:12]}: {exc}",
                     notes)
    except ConfigError as exc:
        first = exc.problems[0] if exc.problems else "invalid"
        return Found(None, source, f"the config at the base commit {sha[:12]} does not load: "
                     f"{first}", notes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not res.traces:
        return Found(None, source, f"the base commit {sha[:12]} has no traces for {rel}",
                     notes)
    return Found(res, source, f"base commit {sha[:12]} evaluated with git", notes)


def _evaluate(tree: Path, rel: str, cwd_in_repo: Path, traces: list[str] | None) -> Results:
    from agent_eval.api import suite_sources
    from agent_eval.config.loader import load_suite
    from agent_eval.engine import evaluate_files

    suite = load_suite(tree / rel, root=str(tree))
    files, errors = suite_sources(suite, traces, base=tree / cwd_in_repo)
    return evaluate_files(suite, files, errors, timings=False)


# ---------------------------------------------------------------------- artifact
def latest_successful_run(client: Any, branch: str, env: Mapping[str, str]) -> int | None:
    """The id of the latest successful run of this workflow on ``branch``."""
    workflow = _workflow_id(client, env)
    if workflow is None:
        return None
    _, data = client.request("GET", client._repo(f"/actions/workflows/{workflow}/runs"),
                             params={"branch": branch, "status": "success", "per_page": 1,
                                     "exclude_pull_requests": "true"})
    runs = (data or {}).get("workflow_runs") or []
    run_id = runs[0].get("id") if runs and isinstance(runs[0], dict) else None
    return int(run_id) if isinstance(run_id, int) else None


def _workflow_id(client: Any, env: Mapping[str, str]) -> str | None:
    """This workflow's file name, from ``GITHUB_WORKFLOW_REF`` (runners set it:
    ``owner/repo/.github/workflows/ci.yml@refs/heads/main``)."""
    path = (env.get("GITHUB_WORKFLOW_REF") or "").split("@", 1)[0]
    if "/.github/workflows/" in path:
        return path.rsplit("/", 1)[-1]
    return None


def from_artifact(client: Any, branch: str | None, name: str, env: Mapping[str, str],
                  dest: Path) -> Found:
    from agent_eval.github.client import ApiError

    source: dict[str, Any] = {"kind": "artifact", "artifact": name, "branch": branch}
    if client is None:
        return Found(None, source, "no github-token to download the baseline artifact with")
    if not branch:
        return Found(None, source, "the base branch is unknown (not a pull request)")
    try:
        if _workflow_id(client, env) is None:
            return Found(None, source, "this workflow is unknown (GITHUB_WORKFLOW_REF is not "
                         "set)")
        run_id = latest_successful_run(client, branch, env)
        if run_id is None:
            return Found(None, source, f"no successful run of this workflow on {branch}")
        source["run_id"] = run_id
        if dest.exists():
            shutil.rmtree(dest)
        files = client.download_artifact(run_id, name, dest)
    except ApiError as exc:
        hint = " (the token needs actions: read)" if exc.denied else ""
        return Found(None, source, f"artifact {name!r} on {branch}: {exc}{hint}")
    for f in sorted(files, key=lambda p: (p.name != "results.json", str(p))):
        if f.suffix == ".json":
            found = from_file(f)
            if found.results is not None:
                source["description"] = (f"artifact {name} of run {run_id} on {branch}")
                return Found(found.results, source, source["description"])
    return Found(None, source, f"artifact {name!r} of run {run_id} holds no results.json")


# -------------------------------------------------------------------------- auto
def resolve(kind: str, *, file: str | None = None,
            git: Callable[[], Found] | None = None,
            artifact: Callable[[], Found] | None = None) -> Found:
    """The baseline of ``kind`` (auto: git, then artifact), with the reason."""
    if kind == "none":
        return Found(None, {"kind": "none"}, "baseline: none")
    if kind == "file":
        if not file:
            return Found(None, {"kind": "file"}, "baseline: file needs baseline-file")
        return from_file(file)
    tried: list[str] = []
    for name, get in (("git", git), ("artifact", artifact)):
        if kind not in ("auto", name):
            continue
        if get is None:
            tried.append(f"{name}: not available for this event")
            continue
        found = get()
        if found.results is not None:
            found.notes = [*tried, *found.notes]
            return found
        tried.append(f"{name}: {found.reason}")
    return Found(None, {"kind": kind}, "; ".join(tried) or "no baseline", [])


# ------------------------------------------------------------------------ action
def for_action(results: Results, *, kind: str, event: Any, suite: Any, workdir: Path,
               client: Any, env: Mapping[str, str], traces: list[str] | None,
               traces_from_artifact: bool, baseline_file: str | None,
               baseline_artifact: str, say: Callable[[str], None],
               log: Callable[[str], None]) -> Found | None:
    """Find the action's baseline and compare ``results`` with it (in place): the
    comparison in ``results.baseline``, or, when none was found, why (and how to get
    one) in ``results.baseline`` as ``{"available": false, "reason": …}``."""
    from agent_eval.compare import attach, no_baseline
    from agent_eval.github import workflow

    if kind == "none":
        return None
    if kind == "auto" and not event.is_pull_request:
        log(f"baseline: auto compares pull requests with their base branch; this run is "
            f"for a {event.name or 'unknown'} event")
        return None
    base_sha = event.base_sha if event.is_pull_request or kind == "git" else None
    git = None
    if base_sha and not traces_from_artifact:
        def git() -> Found:
            return from_git(workdir, base_sha, suite.path, traces)

    def artifact() -> Found:
        return from_artifact(client, event.base_ref, baseline_artifact, env,
                             workdir / ".agent-eval" / "baseline")

    path = str(workdir / baseline_file) if baseline_file else None
    found = resolve(kind, file=path, git=git, artifact=artifact)
    for note in found.notes:
        log(f"baseline: {note}")
    if found.results is None:
        text = f"not compared with the base branch: {found.reason}. To compare, {HOW}."
        if kind == "auto":  # said in the comment and the summary; the log has it too
            log(text)
        else:  # asked for and not found: an annotation
            say(workflow.command("notice", text, title="agent-eval"))
        results.baseline = no_baseline(f"{found.reason}. To compare, {HOW}.", found.source)
        return found
    log(f"baseline: {found.reason}")
    attach(results, found.results, found.source)
    return found
