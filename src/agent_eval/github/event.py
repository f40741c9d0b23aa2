"""The workflow event a run was started by (``GITHUB_EVENT_PATH`` and the ``GITHUB_*``
variables), reduced to what the action needs: the repository, the pull request, the
commits, and where a SARIF upload and a check run belong.

Handled events (docs/action-events.md says what each one uploads where):

- ``pull_request``: SARIF to ``refs/pull/N/merge`` with the merge commit (the default
  checkout), or to ``refs/pull/N/head`` when the workspace is at the head commit;
- ``pull_request_target``: runs on the base branch, so SARIF and the check run go to the
  pull request's head only when the workspace really is at the head commit (``git
  rev-parse HEAD``), else nowhere, with the reason;
- ``push``;
- ``workflow_run`` (the fork pull request pattern: a privileged workflow started by the
  untrusted one): SARIF and the check run on ``workflow_run.head_sha``;
- ``merge_group`` (the merge queue): the commit is ``merge_group.head_sha`` and the base
  ``merge_group.base_sha``, so baselines and regression gates run in the queue;
- an event whose payload holds the pull request (``pull_request_review``,
  ``pull_request_review_comment``…): a pull request's run (the comment, the check run on
  its head, its base), SARIF through ``GITHUB_REF`` / ``GITHUB_SHA`` (its merge ref);
- any other event through ``GITHUB_REF`` / ``GITHUB_SHA`` (``workflow_dispatch``,
  ``schedule``…).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_eval.jsonutil import open_regular

PR_EVENTS = ("pull_request", "pull_request_target")
MAX_EVENT_BYTES = 64 * 1024 * 1024  # an event payload read (GitHub's webhooks: 25 MB at most)
ZERO_SHA = "0" * 40
_SHA = re.compile(r"^[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?$")
_SARIF_REF = re.compile(r"^refs/(heads|tags|pull)/.+$")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():  # not "²" or "١"
        return int(value)
    return None


def is_sha(value: str | None) -> bool:
    return bool(value and _SHA.match(value))


@dataclass(frozen=True)
class Target:
    """Where a SARIF upload goes: a full ref and a commit."""

    ref: str
    sha: str


@dataclass
class Event:
    name: str  # GITHUB_EVENT_NAME
    payload: dict[str, Any] = field(default_factory=dict, repr=False)
    repository: str | None = None  # OWNER/REPO
    sha: str | None = None  # GITHUB_SHA (for pull_request: the merge commit)
    ref: str | None = None  # GITHUB_REF
    pr_number: int | None = None
    head_sha: str | None = None  # the pull request's head (or the pushed commit)
    base_sha: str | None = None
    base_ref: str | None = None  # branch name, e.g. main
    head_ref: str | None = None  # branch name
    head_repository: str | None = None  # OWNER/REPO the head branch lives in
    default_branch: str | None = None
    run_id: int | None = None  # GITHUB_RUN_ID
    run_attempt: int | None = None
    triggering_run_id: int | None = None  # workflow_run: the run that started this one
    triggering_event: str | None = None  # workflow_run: that run's event
    deleted: bool = False  # push: the ref was deleted
    problems: list[str] = field(default_factory=list)  # why the payload could not be read

    @property
    def is_pull_request(self) -> bool:
        return self.pr_number is not None

    @property
    def fork(self) -> bool:
        """The pull request comes from another repository (its token is read-only)."""
        return bool(self.is_pull_request and self.head_repository and self.repository
                    and self.head_repository.lower() != self.repository.lower())

    @property
    def artifact_run_id(self) -> int | None:
        """The run whose artifacts ``artifact:`` names: the triggering run under
        ``workflow_run`` (the fork pull request pattern), else this run."""
        return self.triggering_run_id if self.name == "workflow_run" else self.run_id

    @property
    def compares_with_base(self) -> bool:
        """The run is for a change to a base branch (a pull request, a merge queue
        group): ``baseline: auto`` compares it with ``base_sha`` / ``base_ref``."""
        return self.is_pull_request or self.name == "merge_group"

    @property
    def check_sha(self) -> str | None:
        """The commit a check run is attached to: the pull request's head, the
        triggering run's head under ``workflow_run`` (None when the payload names none:
        never ``GITHUB_SHA``, the default branch's tip), else the commit the run is for."""
        if self.name == "workflow_run":
            return self.head_sha if is_sha(self.head_sha) else None
        if self.name in PR_EVENTS and not self.is_pull_request:
            return None  # GITHUB_SHA: a merge commit, or the base branch's tip
        return self.head_sha if self.head_sha and self.is_pull_request else self.sha

    @property
    def no_pull_request(self) -> str | None:
        """Why a pull request's run has no pull request (its payload names none; under
        ``workflow_run``, the triggering pull request run's was not found), or None."""
        if self.is_pull_request:
            return None
        if self.name in PR_EVENTS:
            return (f"this {self.name} run names no pull request (its event payload, "
                    "GITHUB_EVENT_PATH, could not be read: see the warning about it)")
        if self.name == "workflow_run" and self.triggering_event in PR_EVENTS:
            return (f"no open pull request has the triggering run's head commit "
                    f"{(self.head_sha or 'unknown')[:12]} as its head (it was pushed to again "
                    "or closed since, or the pull requests could not be listed: see the log)")
        return None

    def not_at_head(self, checked_out: str | None) -> str | None:
        """Why results of this workspace must not be attached to the pull request's head
        commit, or None when they may. Only ``pull_request_target`` can say so: it runs
        on the base branch, and its default checkout is the base, not the pull request."""
        if self.name != "pull_request_target" or not self.head_sha:
            return None
        if checked_out == self.head_sha:
            return None
        at = f"at {checked_out[:12]}" if checked_out else "not a git checkout"
        return (f"under pull_request_target the workspace ({at}) is not the pull request's "
                f"head commit {self.head_sha[:12]}, so findings located in its files would be "
                "attached to a commit that does not have them (check out "
                "github.event.pull_request.head.sha to attach them, only if the workflow "
                "never runs that code)")

    def sarif_target(self, checked_out: str | None = None) -> Target | None:
        """The ``ref`` and ``commit_sha`` of a SARIF upload for this event, or None when
        the event has none (the reason is then in :meth:`no_target_reason`).

        ``checked_out`` is the commit in the workspace: a pull request checked out at its
        head uploads to ``refs/pull/N/head`` with the head SHA; the default checkout of a
        ``pull_request`` event (the merge commit, ``GITHUB_SHA``) uploads to
        ``refs/pull/N/merge`` with that SHA."""
        n = self.pr_number
        if self.name in PR_EVENTS and n is not None:
            head = self.head_sha
            if self.name == "pull_request_target":
                if head and self.not_at_head(checked_out) is None:
                    return Target(f"refs/pull/{n}/head", head)
                return None
            if head and (checked_out == head or not is_sha(self.sha)):
                return Target(f"refs/pull/{n}/head", head)
            if is_sha(self.sha):
                assert self.sha is not None
                return Target(f"refs/pull/{n}/merge", self.sha)
            return None
        if self.name in PR_EVENTS and not (self.ref or "").startswith("refs/pull/"):
            return None  # no payload: GITHUB_REF is the base branch (pull_request_target)
        if self.name == "workflow_run":
            if n is not None and is_sha(self.head_sha):
                assert self.head_sha is not None
                return Target(f"refs/pull/{n}/head", self.head_sha)
            if self.triggering_event == "push" and self.head_ref and is_sha(self.head_sha):
                assert self.head_sha is not None
                return Target(f"refs/heads/{self.head_ref}", self.head_sha)
            return None
        if self.name == "push" and self.deleted:
            return None
        if self.ref and _SARIF_REF.match(self.ref) and is_sha(self.sha):
            assert self.sha is not None
            return Target(self.ref, self.sha)
        return None

    def no_target_reason(self, checked_out: str | None = None) -> str:
        if self.name == "push" and self.deleted:
            return "the push deleted the ref"
        if self.name == "workflow_run":
            return ("the triggering run is neither for a push nor for a pull request this "
                    "run could find")
        mismatch = self.not_at_head(checked_out) or self.no_pull_request
        if mismatch:
            return mismatch
        if self.name in PR_EVENTS:
            return "the pull request's commit is unknown (GITHUB_SHA and the payload's head SHA)"
        return f"GITHUB_REF ({self.ref or 'unset'}) or GITHUB_SHA ({self.sha or 'unset'}) " \
               "is not a branch, tag or pull request ref with a commit"


def load_event(env: Mapping[str, str]) -> Event:
    """The event of this run from the environment a runner sets. Never raises: a
    missing or unreadable payload leaves the payload empty and says why in
    ``problems``."""
    name = env.get("GITHUB_EVENT_NAME", "") or ""
    payload: dict[str, Any] = {}
    problems: list[str] = []
    path = env.get("GITHUB_EVENT_PATH")
    if path:
        try:
            with open_regular(path) as fh:  # a FIFO is not waited on
                data = fh.read(MAX_EVENT_BYTES + 1)
            if len(data) > MAX_EVENT_BYTES:
                raise ValueError(f"it is larger than {MAX_EVENT_BYTES} bytes")
            loaded = json.loads(data)
            if isinstance(loaded, dict):
                payload = loaded
            else:
                problems.append(f"GITHUB_EVENT_PATH {path} does not hold a JSON object")
        except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested deep
            problems.append(f"cannot read GITHUB_EVENT_PATH {path}: {exc}")
    return from_payload(name, payload, env, problems)


def from_payload(name: str, payload: dict[str, Any], env: Mapping[str, str],
                 problems: list[str] | None = None) -> Event:
    repo = _dict(payload.get("repository"))
    ev = Event(
        name=name,
        payload=payload,
        repository=_str(env.get("GITHUB_REPOSITORY")) or _str(repo.get("full_name")),
        sha=_str(env.get("GITHUB_SHA")),
        ref=_str(env.get("GITHUB_REF")),
        default_branch=_str(repo.get("default_branch")),
        run_id=_int(env.get("GITHUB_RUN_ID")),
        run_attempt=_int(env.get("GITHUB_RUN_ATTEMPT")),
        problems=list(problems or []),
    )
    if name in PR_EVENTS or (name not in ("push", "workflow_run") and "pull_request" in payload
                             and _dict(payload.get("pull_request")).get("head")):
        pr = _dict(payload.get("pull_request"))
        head, base = _dict(pr.get("head")), _dict(pr.get("base"))
        ev.pr_number = _int(pr.get("number")) or _int(payload.get("number"))
        ev.head_sha = _str(head.get("sha"))
        ev.base_sha = _str(base.get("sha"))
        ev.head_ref = _str(head.get("ref"))
        ev.base_ref = _str(base.get("ref"))
        ev.head_repository = _str(_dict(head.get("repo")).get("full_name"))
    elif name == "push":
        ev.ref = _str(payload.get("ref")) or ev.ref
        after = _str(payload.get("after"))
        ev.deleted = bool(payload.get("deleted")) or after == ZERO_SHA
        if after and after != ZERO_SHA:
            ev.sha = ev.sha or after
        ev.head_sha = ev.sha
        ev.base_sha = _str(payload.get("before"))
        ref = ev.ref or ""
        ev.head_ref = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    elif name == "merge_group":
        _merge_group(ev, _dict(payload.get("merge_group")))
    elif name == "workflow_run":
        run = _dict(payload.get("workflow_run"))
        ev.triggering_run_id = _int(run.get("id"))
        ev.triggering_event = _str(run.get("event"))
        ev.head_sha = _str(run.get("head_sha"))
        ev.head_ref = _str(run.get("head_branch"))
        ev.head_repository = _str(_dict(run.get("head_repository")).get("full_name"))
        prs = [p for p in run.get("pull_requests") or [] if isinstance(p, dict)]
        for p in prs:  # the pull request whose head is this commit
            if _dict(p.get("head")).get("sha") == ev.head_sha or len(prs) == 1:
                ev.pr_number = _int(p.get("number"))
                ev.base_sha = _str(_dict(p.get("base")).get("sha"))
                ev.base_ref = _str(_dict(p.get("base")).get("ref"))
                break
    return ev


def _branch(ref: str | None) -> str | None:
    return ref.removeprefix("refs/heads/") if ref and ref.startswith("refs/heads/") else ref


def _merge_group(ev: Event, group: dict[str, Any]) -> None:
    """A merge queue group: its temporary branch ``gh-readonly-queue/BASE/pr-N-SHA`` at
    ``head_sha`` (also ``GITHUB_SHA``), to be merged into ``base_ref`` at ``base_sha``."""
    ev.head_sha = _str(group.get("head_sha"))
    ev.sha = ev.sha or ev.head_sha
    ev.ref = ev.ref or _str(group.get("head_ref"))
    ev.head_ref = _branch(_str(group.get("head_ref")))
    ev.base_sha = _str(group.get("base_sha"))
    ev.base_ref = _branch(_str(group.get("base_ref")))
