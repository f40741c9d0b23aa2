"""Where the base branch's results come from (README.md "Base-branch comparison and sharding").

- ``file``: a committed results JSON.
- ``git``: the base commit evaluated with *its own* config on *its own* committed traces, in
  a temporary ``git worktree`` (the base commit is fetched first when the clone does not
  have it, as a ``--depth 1`` checkout does not).
- ``artifact``: the results JSON artifact of the latest successful run of this workflow on
  the base branch, through the Actions API. Only a ``push`` run of this repository itself
  counts (head repository = base repository, on the base branch): a fork's pull request run
  on a branch that it named ``main`` is never picked (:func:`trusted_run`).
- ``auto``: ``git`` when the base commit has the config and traces, else ``artifact``, else
  none; :class:`Found` always says why (``reason``), so the comment can.

A results file taken as a baseline is untrusted input, whatever its source: it is read up
to :data:`MAX_BASELINE_BYTES` (``AGENT_EVAL_BASELINE_MAX_BYTES``), from an artifact's zip
without unpacking it (only ``results.json`` is read, in memory), parsed and validated
against the results JSON Schema before it is used; its strings are escaped where they are
shown (renderers/markdown.py). A baseline that was asked for (``file``, ``git``,
``artifact``) and cannot be had is an error (:class:`BaselineError`); ``auto`` falls back
and says why.

``file`` reads the workspace's copy of the file: on a pull request, the pull request's
own, which it can regenerate to hide a drop (as it can edit the suite: the same trust, but
it must be visible). On a pull request or merge queue group the file is compared with the
base commit's version of it (:func:`file_at_base`, by git object id: git hashes the file,
nothing is read into memory); one that differs or is new is said in ``source``
(``changed_in_pull_request``, ``warning``), the comment, the job summary and the log.

A base run of another suite (its ``suite`` is not this run's: another suite's results
under a shared artifact name or file, or this suite file renamed in the change) is no
baseline of this run: compared, one suite's pass rate, scores and findings would be judged
against another's (:func:`suite_mismatch`). Asked for by name it is an error; ``auto``
goes on without it, saying why.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_eval.api import suite_sources
from agent_eval.compare import attach, no_baseline
from agent_eval.engine import evaluate_files
from agent_eval.errors import AgentEvalError, ConfigError, ResultsFileError
from agent_eval.jsonutil import open_regular
from agent_eval.paths import GIT_TEXT
from agent_eval.results import Results
from agent_eval.safetext import clean_name
from agent_eval.suite import Suite, load_suite

if TYPE_CHECKING:  # for start-up time: the github package imports PyGithub and requests
    from agent_eval.github.client import GitHubClient
    from agent_eval.github.event import Event
    from agent_eval.judge.store import Store

__all__ = [
    "MAX_BASELINE_BYTES",
    "MAX_BASELINE_ENV",
    "RESULTS_NAME",
    "BaselineError",
    "BaselineSearch",
    "Found",
    "GitError",
    "ensure_commit",
    "file_at_base",
    "find_for_action",
    "for_action",
    "from_artifact",
    "from_file",
    "from_git",
    "from_ref",
    "has_commit",
    "judge_store_for_action",
    "latest_push_run",
    "load_file",
    "max_bytes",
    "not_applicable",
    "parse_results",
    "resolve",
    "same_suite",
    "suite_mismatch",
    "trusted_run",
]

HOW = ("commit the config and traces to the base branch, or keep the default branch's "
       "results.json as the artifact named by `baseline-artifact` (README 'Base-branch "
       "comparison and sharding')")
SUITE_HOW = ("keep each suite's results under a name of its own (on the base branch, upload "
             "each suite's results.json as an artifact named for it, and give that name as "
             "`baseline-artifact`; or name this suite's results in `baseline-file`)")
GIT_TIMEOUT = 300
MAX_BASELINE_BYTES = 256 << 20  # a results file read as a baseline (and its artifact's zip)
MAX_BASELINE_ENV = "AGENT_EVAL_BASELINE_MAX_BYTES"
RESULTS_NAME = "results.json"
RUNS_LOOKED_AT = 20  # the newest runs of the workflow on the branch that are checked
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?\Z")


class BaselineError(AgentEvalError, ValueError):
    """A baseline that was asked for cannot be had (the run stops with exit 2)."""


@dataclass
class Found:
    """A baseline, or why there is none."""

    results: Results | None
    source: dict[str, Any]
    reason: str
    notes: list[str] = field(default_factory=list)  # what was tried before (auto)


# ------------------------------------------------------------------ reading one
def max_bytes(env: Mapping[str, str] | None = None) -> int:
    """The size limit of a baseline results file: ``AGENT_EVAL_BASELINE_MAX_BYTES`` when
    set, else :data:`MAX_BASELINE_BYTES`."""
    raw = (env if env is not None else os.environ).get(MAX_BASELINE_ENV, "").strip()
    if not raw:
        return MAX_BASELINE_BYTES
    if not raw.isdigit() or int(raw) <= 0:
        raise BaselineError(f"{MAX_BASELINE_ENV}={raw[:40]!r} is not a positive whole number "
                            "of bytes")
    return int(raw)


def parse_results(data: bytes, where: str) -> Results:
    """A results file's bytes as :class:`Results` (:meth:`Results.parse`: bounded, checked
    against the results JSON Schema, made safe to show); :class:`BaselineError` naming
    ``where`` and the first problems."""
    try:
        results = Results.parse(data, where)
    except ResultsFileError as exc:
        raise BaselineError(*exc.problems) from None
    whole_run(results, where)
    return results


def whole_run(results: Results, where: str) -> None:
    """Refuse one shard's partial results where a whole run's are needed (a baseline, a
    side of ``diff``): they hold only the shard's traces and no criteria, so a comparison
    with them would find no regression where there is one (docs/results.md "Shards")."""
    shard = results.shard
    if shard is not None:
        raise BaselineError(f"{where}: these are the partial results of shard "
                            f"{shard.index}/{shard.count}, not of a whole run; merge the "
                            "shards first (agent-eval merge) and compare with the merged "
                            "results")


def load_file(path: str | Path, limit: int | None = None) -> Results:
    """A results file on disk as a baseline (:func:`parse_results`), read up to ``limit``
    bytes (default :func:`max_bytes`)."""
    limit = max_bytes() if limit is None else limit
    try:
        with open_regular(path) as fh:  # a FIFO or a link to a pipe: never waited on
            data = fh.read(limit + 1)
    except OSError as exc:
        raise BaselineError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise BaselineError(f"{path} is over the limit of {limit} bytes for a baseline "
                            f"({MAX_BASELINE_ENV})")
    return parse_results(data, str(path))


def suite_mismatch(base: Results, suite: str, config: str) -> str | None:
    """Why ``base`` is not a run of the suite named ``suite`` in the suite file ``config``
    (repository-relative, as results.json ``config``), or None when it is. A suite file
    whose ``suite:`` name changed (the same ``config``) is said to be renamed."""
    if base.suite == suite:
        return None
    if base.config == config:
        return (f"the suite in {config} is named {suite!r} here but {base.suite!r} in the base "
                "run: renamed in this change, it is not compared with the base run of its "
                "old name (it is once the rename is on the base branch)")
    return (f"the base run is of the suite {base.suite!r} ({base.config}), not of this suite "
            f"{suite!r} ({config}): compared, this suite's pass rate, scores and findings "
            "would be judged against another suite's, and a regression could hide")


def same_suite(base: Results, suite: str, config: str, where: str, how: str) -> None:
    """:class:`BaselineError` when ``base`` (read from ``where``) is not a run of this
    suite (:func:`suite_mismatch`); ``how`` says what to do instead."""
    why = suite_mismatch(base, suite, config)
    if why is not None:
        raise BaselineError(f"{where}: {why}. {how}")


# -------------------------------------------------------------------------- file
def from_file(path: str | Path, limit: int | None = None) -> Found:
    try:
        res = load_file(path, limit)
    except BaselineError as exc:
        return Found(None, {"kind": "file", "path": str(path)}, str(exc))
    return Found(res, {"kind": "file", "path": str(path), "description": str(path)},
                 f"results file {path}")


# --------------------------------------------------------------------------- git
class GitError(AgentEvalError):
    """A git command that failed (or git is not installed), in one line."""


def _git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not installed")
    try:
        done = subprocess.run([git, "-C", str(repo), *args], capture_output=True,
                              timeout=GIT_TIMEOUT, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"}, **GIT_TEXT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"git {args[0]}: {exc}") from exc
    if check and done.returncode != 0:
        raise GitError(f"git {' '.join(args[:2])}: "
                       f"{done.stderr.strip() or f'exit {done.returncode}'}")
    return done


BASE_FIGURES = "the base figures come from the pull request itself"


def file_at_base(workspace: Path, sha: str, path: Path, what: str = "baseline file",
                 comes: Callable[[Path, str | None], str] | None = None
                 ) -> tuple[bool | None, str | None]:
    """Whether the file ``path`` differs from its version at the base commit ``sha`` (or
    is not there), and the warning to show when it does or cannot be told (None when it
    is the same). The base commit is fetched when a shallow clone lacks it. ``what`` is
    what the messages call the file; ``comes`` says what follows from a change, given the
    repository's top folder and the base version's object (``sha:path``, None when the
    base commit has no such file); by default that the base figures come from the pull
    request itself."""
    def unknown(name: str, why: object) -> tuple[None, str]:
        return None, (f"whether the {what} {name} was changed by this pull request "
                      f"cannot be checked: {why}")

    try:
        top = Path(_git(workspace, "rev-parse", "--show-toplevel").stdout.strip())
    except GitError as exc:
        return unknown(path.name, exc)
    # the path as named, its links not followed: a base.json the pull request made a link
    # to another file it did not change would read as the base commit's own version
    rel = _in_repository(path, top)
    if rel is None:
        return unknown(path.name, "it is outside the repository")
    if Path(os.path.realpath(path)) != top.resolve() / rel:  # a link below the top
        link = _link_in(top, rel)
        through = f"the symbolic link {link}" if link else "a symbolic link in its path"
        return unknown(rel, f"it is read through {through}, which the pull request may "
                       "have pointed at another file; review it")
    try:
        ensure_commit(top, sha)
    except GitError as exc:
        return unknown(rel, exc)
    short = sha[:12]

    def consequence(base_object: str | None) -> str:
        return BASE_FIGURES if comes is None else comes(top, base_object)

    at_base = _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options",
                   f"{sha}:{rel}", check=False)
    if at_base.returncode != 0:
        return True, (f"the {what} {rel} is new in this pull request (the base commit "
                      f"{short} has no {rel}): {consequence(None)}; review it")
    try:
        here = _git(top, "hash-object", "--", rel).stdout.strip()
    except GitError as exc:
        return unknown(rel, exc)
    if here == at_base.stdout.strip():
        return False, None
    return True, (f"the {what} {rel} was changed by this pull request: it differs from "
                  f"the base commit {short}'s version, so {consequence(f'{sha}:{rel}')}; "
                  "review its diff")


def _in_repository(path: Path, top: Path) -> str | None:
    """``path`` relative to the repository's top folder ``top``, as named (no symbolic
    link below the top followed), or None when it is not inside it."""
    named = Path(os.path.abspath(path))
    real_top = top.resolve()
    for folder in (named, *named.parents):  # the folder that is the top, links and all
        if folder.resolve() == real_top:
            rel = named.relative_to(folder)
            return None if ".." in rel.parts or not rel.parts else rel.as_posix()
    return None


def _link_in(top: Path, rel: str) -> str | None:
    """The first part of ``rel`` (below ``top``) that is a symbolic link, or None."""
    current = top
    for part in Path(rel).parts:
        current = current / part
        if current.is_symlink():
            return current.relative_to(top).as_posix()
    return None


def from_ref(workspace: Path, ref: str, config: Path, traces: list[str] | None = None
             ) -> Found:
    """``run --baseline-ref REF``: the commit ``REF`` names (a branch, tag or sha of the
    local clone), evaluated as :func:`from_git` does."""
    if ref.startswith("-"):
        return Found(None, {"kind": "git", "ref": ref}, f"'{ref}' is not a git revision")
    try:
        sha = _git(workspace, "rev-parse", "--verify", "--quiet", "--end-of-options",
                   f"{ref}^{{commit}}").stdout.strip()
    except GitError:
        return Found(None, {"kind": "git", "ref": ref},
                     f"'{ref}' names no commit of the repository at {workspace}")
    found = from_git(workspace, sha, config, traces, fetch=False)
    found.source["ref"] = ref
    return found


def has_commit(repo: Path, sha: str) -> bool:
    return _git(repo, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0


def ensure_commit(repo: Path, sha: str, remote: str = "origin") -> str | None:
    """Fetch ``sha`` when the clone lacks it (shallow clones do); a note of what was
    done, None when nothing was needed. ``sha`` (from the event's payload) must be a
    commit id: git reads a word after the remote that starts with ``-`` as an option
    (``--upload-pack=COMMAND`` runs COMMAND), and a name (``HEAD``) is not the base."""
    if not _COMMIT_ID.match(sha):
        raise GitError(f"'{clean_name(sha, 80)}' is not a commit id (40 or 64 hexadecimal "
                       "digits)")
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
             *, fetch: bool = True, tmp_root: Path | None = None) -> Found:
    """Evaluate the base commit ``sha`` with its own version of ``config`` (a path in the
    workspace) on the traces committed there, in a worktree made under ``tmp_root`` (the
    runner's temp folder; the system's by default), never in the workspace."""
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
    patterns = _base_patterns(traces, top, Path.cwd())
    if isinstance(patterns, str):
        return Found(None, source, patterns, notes)
    tmp = Path(tempfile.mkdtemp(prefix="agent-eval-base-", dir=tmp_root))
    tree = tmp / "base"
    try:
        _git(top, "worktree", "add", "--detach", "--quiet", str(tree), sha)
        try:
            res = _evaluate(tree, rel, patterns)
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


def _evaluate(tree: Path, rel: str, patterns: list[str] | None) -> Results:
    suite = load_suite(tree / rel, root=str(tree))
    files, errors = suite_sources(suite, patterns, base=tree)
    return evaluate_files(suite, files, errors, jobs="auto", timings=False)


def _base_patterns(traces: list[str] | None, top: Path, cwd: Path) -> list[str] | str | None:
    """The trace patterns of this run (``--traces``, the action's ``traces``; None: the
    suite's own) as paths relative to the repository's top folder ``top``, which is where
    the base commit's worktree has the same files; or why the base commit has none. A
    pattern naming the workspace by its absolute path (``$PWD/traces/*.jsonl``) read this
    run's own traces, not the base commit's, and the comparison found no regression; one
    outside the repository names files no commit has."""
    if traces is None:
        return None
    tops = [Path(os.path.abspath(top)), top.resolve()]
    out = []
    for pattern in traces:
        lexical = Path(os.path.normpath(os.path.join(os.path.abspath(cwd), pattern)))
        parts = lexical.parts
        fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
        # the part before the first wildcard, its links followed (a path to the workspace
        # through a link), then the rest as written
        named = (lexical, Path(os.path.realpath(Path(*parts[:fixed]))).joinpath(*parts[fixed:]))
        rel = next((p.relative_to(t) for p in named for t in tops if p.is_relative_to(t)),
                   None)
        if rel is None:
            return (f"the trace pattern '{clean_name(pattern, 200)}' is outside the "
                    f"repository: the base commit has no version of the traces it names, so "
                    "its run would be this run's traces judged again, and no regression "
                    "could show; give trace patterns inside the repository, or compare with "
                    "a results file of the base branch")
        out.append(rel.as_posix())
    return out


# ---------------------------------------------------------------------- artifact
def _repo_of(value: Any) -> tuple[Any, str]:
    repo = value if isinstance(value, dict) else {}
    return repo.get("id"), str(repo.get("full_name") or "").lower()


def trusted_run(run: Any, repository: str, branch: str) -> bool:
    """A workflow run whose results may serve as the baseline: a successful ``push`` run
    of ``repository`` itself on ``branch`` (its head repository is the repository: a pull
    request from a fork, even on a branch the fork named ``main``, is not)."""
    if not isinstance(run, dict):
        return False
    repo_id, repo_name = _repo_of(run.get("repository"))
    head_id, head_name = _repo_of(run.get("head_repository"))
    return (run.get("event") == "push" and run.get("head_branch") == branch
            and run.get("conclusion") == "success"
            and repo_name == repository.lower() == head_name
            and repo_id is not None and repo_id == head_id)


def latest_push_run(client: GitHubClient, branch: str, env: Mapping[str, str]
                    ) -> tuple[int | None, str]:
    """The id of the latest successful push run of this workflow on ``branch`` in this
    repository (:func:`trusted_run`), or None and why."""
    workflow = _workflow_id(env)
    if workflow is None:
        return None, "this workflow is unknown (GITHUB_WORKFLOW_REF is not set)"
    _, data = client.request("GET", f"/repos/{client.repository}/actions/workflows/{workflow}"
                             "/runs", params={"branch": branch, "event": "push",
                                              "status": "success", "per_page": RUNS_LOOKED_AT,
                                              "exclude_pull_requests": "true"})
    runs = (data or {}).get("workflow_runs") if isinstance(data, dict) else None
    runs = runs if isinstance(runs, list) else []
    for run in runs:
        if trusted_run(run, client.repository, branch) and isinstance(run.get("id"), int):
            return int(run["id"]), ""
    skipped = f" ({len(runs)} other run(s) skipped)" if runs else ""
    return None, (f"no successful push run of this workflow on {branch} in "
                  f"{client.repository}{skipped}")


def _workflow_id(env: Mapping[str, str]) -> str | None:
    """This workflow's file name, from ``GITHUB_WORKFLOW_REF`` (runners set it:
    ``owner/repo/.github/workflows/ci.yml@refs/heads/main``)."""
    path = (env.get("GITHUB_WORKFLOW_REF") or "").split("@", 1)[0]
    if "/.github/workflows/" in path:
        return path.rsplit("/", 1)[-1]
    return None


def from_artifact(client: GitHubClient | None, branch: str | None, name: str,
                  env: Mapping[str, str], tmp_root: Path | None = None) -> Found:
    """The ``results.json`` of the artifact ``name`` of the latest trusted push run on
    ``branch``: the zip is downloaded into a temporary folder under ``tmp_root`` and only
    that entry is read, in memory (nothing is unpacked)."""
    # lazy for start-up time: the github package imports PyGithub and requests
    from agent_eval.github.client import ApiError, read_zip_member

    source: dict[str, Any] = {"kind": "artifact", "artifact": name, "branch": branch}
    if client is None:
        return Found(None, source, "no github-token to download the baseline artifact with")
    if not branch:
        return Found(None, source, "the base branch is unknown (not a pull request)")
    try:
        limit = max_bytes(env)
        run_id, why = latest_push_run(client, branch, env)
        if run_id is None:
            return Found(None, source, why)
        source["run_id"] = run_id
        with tempfile.TemporaryDirectory(prefix="agent-eval-baseline-", dir=tmp_root) as tmp:
            archive = Path(tmp) / "artifact.zip"
            client.artifact_zip(run_id, name, archive, limit)
            member, data = read_zip_member(archive, RESULTS_NAME, limit)
        results = parse_results(data, f"{member} of artifact {name!r} of run {run_id}")
    except ApiError as exc:
        return Found(None, source, f"artifact {name!r} on {branch}: {exc}"
                     f"{exc.needs('actions: read')}")
    except (ValueError, OSError) as exc:  # BaselineError, a broken zip, a full disk
        return Found(None, source, f"artifact {name!r} of run {source.get('run_id')} on "
                     f"{branch}: {exc}")
    source["description"] = f"artifact {name} of run {run_id} on {branch}"
    return Found(results, source, source["description"])


# -------------------------------------------------------------------------- auto
def _of_suite(found: Found, suite: tuple[str, str] | None) -> Found:
    """``found``, or no baseline when its results are of another suite than ``suite``
    (name, suite file), saying why (:func:`suite_mismatch`)."""
    if found.results is None or suite is None:
        return found
    why = suite_mismatch(found.results, *suite)
    if why is None:
        return found
    if found.results.config != suite[1]:  # another suite's, not this one renamed
        why += f"; {SUITE_HOW}"
    return Found(None, found.source, f"{found.reason}: {why}", found.notes)


def resolve(kind: str, *, file: str | None = None,
            git: Callable[[], Found] | None = None,
            artifact: Callable[[], Found] | None = None,
            suite: tuple[str, str] | None = None) -> Found:
    """The baseline of ``kind`` (auto: git, then artifact), with the reason; with
    ``suite`` (this run's suite name and suite file), a base run of another suite is
    none (:func:`suite_mismatch`)."""
    if kind == "none":
        return Found(None, {"kind": "none"}, "baseline: none")
    if kind == "file":
        if not file:
            return Found(None, {"kind": "file"}, "baseline: file needs baseline-file")
        return _of_suite(from_file(file), suite)
    tried: list[str] = []
    for name, get in (("git", git), ("artifact", artifact)):
        if kind not in ("auto", name):
            continue
        if get is None:
            tried.append(f"{name}: not available for this event")
            continue
        found = _of_suite(get(), suite)
        if found.results is not None:
            found.notes = [*tried, *found.notes]
            return found
        tried.append(f"{name}: {found.reason}")
    return Found(None, {"kind": kind}, "; ".join(tried) or "no baseline", [])


# ------------------------------------------------------------------------ action
def not_applicable(kind: str, event: Event, traces_from_artifact: bool) -> str | None:
    """Why a comparison of ``kind`` has nothing to compare with for this event (a push has
    no base branch to take an artifact from), or None. A baseline that does not apply is
    skipped with a log line, never an error."""
    if kind == "none":
        return "baseline: none"
    if kind == "auto" and not event.compares_with_base:
        return (f"baseline: auto compares pull requests and merge queue groups with their base "
                f"branch; this run is for a {event.name or 'unknown'} event")
    if kind == "artifact" and not event.compares_with_base:
        return (f"baseline: artifact compares pull requests and merge queue groups with their "
                f"base branch's results; this run is for a {event.name or 'unknown'} event")
    if kind == "git" and not traces_from_artifact and not event.compares_with_base \
            and not _base_sha(kind, event):
        return f"baseline: git: this {event.name or 'unknown'} event names no base commit"
    return None


def _pull_request_not_found(event: Event) -> str | None:
    """Why a ``workflow_run`` run started by a pull request has no base to compare with:
    its pull request was not found (a fork's, whose payload lists none, is looked up by
    the triggering run's head commit: not found when the pull request has moved on to
    another head or was closed, or when the token may not list pull requests). None for
    any other run. Such a run is a pull request's, and its regression gates are never
    skipped as if it were a push's (docs/action-events.md). So is a ``pull_request`` or
    ``pull_request_target`` run whose event payload names no pull request (the file
    could not be read: the run warned of it)."""
    if event.name in ("pull_request", "pull_request_target") and not event.is_pull_request:
        return (f"this {event.name} run is for a pull request, but its event payload "
                "(GITHUB_EVENT_PATH) names none (see the warning about it), so its base "
                "branch is unknown")
    if (event.name != "workflow_run" or event.is_pull_request
            or event.triggering_event not in ("pull_request", "pull_request_target")):
        return None
    head = (event.head_sha or "unknown")[:12]
    return (f"this workflow_run run is for a pull request, but no open pull request with "
            f"the triggering run's head commit {head} as its head was found (it was pushed "
            "to again or closed since, or the pull requests could not be listed: see the "
            "log), so its base branch is unknown")


def _base_sha(kind: str, event: Event) -> str | None:
    from agent_eval.github.event import ZERO_SHA  # lazy: see from_artifact

    sha = event.base_sha if event.compares_with_base or kind == "git" else None
    return sha if sha and sha != ZERO_SHA else None


@dataclass(frozen=True)
class BaselineSearch:
    """Where the action looks for its baseline: its inputs ``baseline`` (``kind``),
    ``baseline-file`` and ``baseline-artifact``, and the run's event, suite and traces."""

    kind: str  # auto | git | artifact | file | none
    event: Event
    suite: Suite
    workdir: Path
    client: GitHubClient | None
    env: Mapping[str, str]
    traces: list[str] | None
    traces_from_artifact: bool
    baseline_file: str | None
    baseline_artifact: str
    log: Callable[[str], None]
    tmp_root: Path | None = None  # the runner's temp folder, for the worktree and the zip
    warn: Callable[[str], None] | None = None  # a warning annotation (else: log)


def find_for_action(search: BaselineSearch) -> Found | None:
    """The action's baseline (None when none applies to this event), and why when it has
    none; :class:`BaselineError` for one asked for by name (``file``, ``git``,
    ``artifact``) that cannot be had: the regression gates are never skipped silently.
    The action looks for it before evaluating when the suite's pairwise judge checks need
    the base branch's outputs (docs/judge.md), else after."""
    kind, event, log = search.kind, search.event, search.log
    lost = _pull_request_not_found(event)
    if lost is not None and kind in ("auto", "git", "artifact"):
        # a pull request's run, whose base is unknown: not a run with nothing to compare
        if kind != "auto":
            listed = ("When the pull requests could not be listed, give the job "
                      "`pull-requests: read`; else use" if event.name == "workflow_run"
                      else "Use")
            raise BaselineError(f"baseline: {kind} was asked for and cannot be had: {lost}. "
                                f"{listed} baseline: auto to go on without a comparison "
                                "(saying why), or baseline: none.")
        return Found(None, {"kind": kind}, lost)
    why = not_applicable(kind, event, search.traces_from_artifact)
    if why is not None:
        if kind != "none":
            log(why)
        return None
    base_sha = _base_sha(kind, event)
    git: Callable[[], Found] | None = None
    if search.traces_from_artifact:  # (said as it is, not "not available for this event")
        def git() -> Found:
            return Found(None, {"kind": "git"}, (
                "the traces come from an artifact (input `artifact`), not from the "
                "repository, so the base commit's committed traces are not the base run of "
                "these; compare with the base branch's results artifact (baseline: "
                "artifact)"))
    elif base_sha:
        def git() -> Found:
            return from_git(search.workdir, base_sha, search.suite.path, search.traces,
                            tmp_root=search.tmp_root)
    elif event.compares_with_base:  # a pull request's or queue's run: its base is unknown
        def git() -> Found:
            return Found(None, {"kind": "git"}, f"this {event.name} event's payload names "
                         "no base commit")

    def artifact() -> Found:
        return from_artifact(search.client, event.base_ref, search.baseline_artifact,
                             search.env, search.tmp_root)

    path = str(search.workdir / search.baseline_file) if search.baseline_file else None
    found = resolve(kind, file=path, git=git, artifact=artifact,
                    suite=(search.suite.name, search.suite.file))
    for note in found.notes:
        log(f"baseline: {note}")
    if kind == "file" and found.results is not None and path and event.compares_with_base:
        base = _base_sha(kind, event)
        changed, warning = (file_at_base(search.workdir, base, Path(path)) if base else
                            (None, f"whether the baseline file {search.baseline_file} was "
                             "changed by this pull request cannot be checked: the event names "
                             "no base commit"))
        found.source["changed_in_pull_request"] = changed
        if warning:
            found.source["warning"] = warning
            (search.warn or log)(warning)
    if found.results is None and kind != "auto":
        raise BaselineError(f"baseline: {kind} was asked for and cannot be had: "
                            f"{found.reason}. Fix it, or use baseline: auto to fall back "
                            "to no comparison (saying why), or baseline: none.")
    return found


def judge_store_for_action(search: BaselineSearch, results: Results) -> None:
    """On a pull request or merge queue group, whether the judgement store this run
    replayed verdicts from was changed by it (:func:`file_at_base`; docs/judge.md "The
    judgement store"). A store line is the judge's verdict for its key and anyone can
    compute a key, so a store the change touched is said in results.json
    ``judge.store_source`` (with how many of the verdicts used are not the base commit's),
    the comment, the job summary and a warning annotation. Never a failure: recording
    again is a normal part of a change; the point is that the reviewer sees it."""
    run, judged, event = search.suite.judge, results.judge, search.event
    if run is None or judged is None or not judged.judgements_used \
            or not event.compares_with_base:
        return
    base = _base_sha(search.kind, event)
    source: dict[str, Any] = {"base_sha": base}
    counted: list[int] = []

    def comes(top: Path, base_object: str | None) -> str:
        n = _verdicts_from_pull_request(top, base_object, run.store, run.used)
        counted.append(n)
        return f"{n} judge verdict(s) of this run come from the pull request itself"

    if base:
        changed, warning = file_at_base(search.workdir, base, Path(run.store_path),
                                        "judgement store", comes)
    else:
        changed, warning = None, (f"whether the judgement store {run.store_file} was "
                                  "changed by this pull request cannot be checked: the "
                                  "event names no base commit")
    source["changed_in_pull_request"] = changed
    source["verdicts_from_pull_request"] = (counted[0] if counted else
                                            0 if changed is False else None)
    if warning:
        source["warning"] = warning
        (search.warn or search.log)(warning)
    results.judge = replace(judged, store_source=source)


def _verdicts_from_pull_request(top: Path, base_object: str | None, store: Store,
                                used: frozenset[str]) -> int:
    """How many of the judgements ``used`` (keys of ``store``) the base version of the
    store (``base_object``; None: there is none) does not hold line for line: all of
    them when that version cannot be read."""
    from agent_eval.judge import store as stores  # (start-up time)

    base = stores.Store("")
    if base_object is not None:
        data = _blob(top, base_object, stores.MAX_STORE_BYTES)
        text = None
        if data is not None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None  # unreadable: every verdict used counts as the pull request's
        if text is not None:
            base = stores.Store.parse(text, "")
    n = 0
    for key in used:
        head, old = store.get(key), base.get(key)
        if head is None or old is None or head.to_line() != old.to_line():
            n += 1
    return n


def _blob(top: Path, spec: str, limit: int) -> bytes | None:
    """The bytes of the git object ``spec`` (``sha:path``), or None when it cannot be read
    or is larger than ``limit``."""
    try:
        size = _git(top, "cat-file", "-s", spec).stdout.strip()
        git = shutil.which("git")
        if not size.isdigit() or int(size) > limit or git is None:
            return None
        done = subprocess.run([git, "-C", str(top), "cat-file", "blob", spec],
                              capture_output=True, timeout=GIT_TIMEOUT, check=False,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (GitError, OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def for_action(results: Results, found: Found | None, log: Callable[[str], None]) -> None:
    """Compare ``results`` with the baseline :func:`find_for_action` found (in place): the
    comparison in ``results.baseline``, or, when ``auto`` found none, why (and how to get
    one) in ``results.baseline`` as ``{"available": false, "reason": …}``; nothing when
    no baseline applies to the event (``found`` None)."""
    if found is None:
        return
    if found.results is None:
        log(f"not compared with the base branch: {found.reason}. To compare, {HOW}.")
        results.baseline = no_baseline(f"{found.reason}. To compare, {HOW}.", found.source)
        return
    log(f"baseline: {found.reason}")
    attach(results, found.results, found.source)
