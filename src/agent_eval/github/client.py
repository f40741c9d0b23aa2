"""A small GitHub REST client over PyGithub's :class:`~github.Requester.Requester`: one
method per call the action makes, each with a timeout and bounded retries.

Retries (at most ``attempts`` tries per request, never a wait over ``max_wait``):

- 5xx answers, connection errors and answers cut off or not JSON: after 1, 2, 4…
  seconds (or the ``Retry-After`` header when the server sends one);
- secondary rate limits (403 or 429 with ``Retry-After``, or GitHub's secondary rate
  limit message): after ``Retry-After`` seconds, else one minute, as GitHub asks;
- the primary rate limit (``x-ratelimit-remaining: 0``): until ``x-ratelimit-reset`` when
  that is within ``max_wait``.

Anything else (a 403 for a missing permission, a 404, a 422) raises :class:`ApiError`
at once, for the caller to explain.

One overall deadline (``deadline`` seconds from the client's creation, default
:data:`API_DEADLINE`) bounds all calls together: no attempt starts after it, a wait that
would end after it is not made, and the last attempts get only the time left as their
timeout; a dead API costs that many seconds in all, not four timeouts per call.

A request that may have taken effect although it failed (a 5xx or no answer to a POST) is
not repeated blindly: :meth:`GitHubClient.upsert_comment` lists the comments again before
posting a second time, so a 502 after GitHub made the comment does not make two.
"""

from __future__ import annotations

import base64
import email.utils
import gzip
import math
import re
import shutil
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from github import Auth, Github, GithubException
from github.Requester import Requester

from agent_eval import zipdir
from agent_eval._version import __version__
from agent_eval.errors import AgentEvalError

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
# GitHub's media type, and plain JSON for servers that know only application/json
ACCEPT = "application/vnd.github+json, application/json"
ACTIONS_BOT = "github-actions[bot]"  # the author of comments made with GITHUB_TOKEN
ANNOTATIONS_PER_REQUEST = 50  # the Checks API's limit per request
MAX_COMMENT_PAGES = 100  # 10,000 comments at 100 per page
MAX_FILE_PAGES = 30  # the 3,000 files GitHub lists for a pull request
MAX_ARTIFACT_BYTES = 2 << 30  # compressed and, summed, uncompressed
API_DEADLINE = 300.0  # seconds for all the API calls of one run (AGENT_EVAL_API_DEADLINE)
MAX_ANSWER_BYTES = 256 * 1024 * 1024  # one API answer's body (a page of comments: ~7 MB)
_PORTS = {"http": 80, "https": 443}
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


def _stderr(message: str) -> None:
    print(f"agent-eval: {message}", file=sys.stderr, flush=True)


class ApiError(AgentEvalError):
    """A GitHub call that failed for good (after any retries)."""

    def __init__(self, verb: str, url: str, status: int, message: str,
                 headers: dict[str, Any] | None = None,
                 documentation_url: str | None = None) -> None:
        self.verb = verb
        self.url = url
        self.status = status  # 0: no answer (connection error, timeout)
        self.message = message
        self.headers = headers or {}
        self.documentation_url = documentation_url
        where = f"{verb} {url}"
        super().__init__(f"{where}: {status} {message}" if status else f"{where}: {message}")

    @property
    def denied(self) -> bool:
        """The token may not do this (GitHub answers 404 as well as 403 for that); a rate
        limit's 403 is not a refusal (:attr:`rate_limited`)."""
        return self.status in (401, 403, 404) and not self.rate_limited

    @property
    def rate_limited(self) -> bool:
        """A rate limit's answer, not a permission's: a 429, or a 403 with ``Retry-After``,
        ``x-ratelimit-remaining: 0`` or a message about a rate limit (primary or
        secondary: GitHub's REST documentation "Rate limits")."""
        if self.status == 429:
            return True
        if self.status != 403:
            return False
        headers = {str(k).lower(): v for k, v in self.headers.items()}
        return ("retry-after" in headers or str(headers.get("x-ratelimit-remaining")) == "0"
                or "rate limit" in self.message.lower())

    def needs(self, permission: str) -> str:
        """`` (the token needs PERMISSION)`` when the token may not do this, else ""."""
        return f" (the token needs {permission})" if self.denied else ""

    @property
    def ambiguous(self) -> bool:
        """The request may have taken effect anyway (a 5xx, or no answer at all)."""
        return self.status == 0 or self.status >= 500


def with_id(verb: str, url: str, data: Any) -> dict[str, Any]:
    """The answer of a call that made something: a JSON object with the integer ``id`` of
    what it made, or :class:`ApiError` (status 0: whether it was made is not known)."""
    if isinstance(data, dict) and isinstance(data.get("id"), int) \
            and not isinstance(data["id"], bool):
        return data
    raise ApiError(verb, url, 0, f"the answer is not a JSON object with an integer id: "
                   f"{str(data)[:100]!r}")


def first_line(text: str) -> str:
    """The first line of a comment body, as the marker must stand there."""
    return text.split("\n", 1)[0].rstrip("\r").strip()


@dataclass(frozen=True)
class SarifUpload:
    id: str
    status: str  # complete, failed, pending when polling gave up, unknown when it failed
    errors: list[str] = field(default_factory=list)
    analyses_url: str | None = None
    waited: float = 0.0


@dataclass(frozen=True)
class Comment:
    id: int
    url: str
    created: bool  # False: an existing comment was edited


@dataclass(frozen=True)
class CheckRun:
    id: int
    url: str | None
    requests: int  # create + updates
    sent: int = 0  # annotations sent
    error: ApiError | None = None  # why the others were not (the run was still completed)


def next_link(header: str | None) -> str | None:
    """The ``rel="next"`` URL of a ``Link`` header."""
    if not header:
        return None
    for part in header.split(","):
        m = _NEXT.search(part)
        if m:
            return m.group(1)
    return None


def retry_after(headers: dict[str, Any]) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    value = headers.get("retry-after")
    if value is None:
        return None
    text = str(value).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message(data: Any) -> str:
    if isinstance(data, dict):
        msg = data.get("message")
        if isinstance(msg, str):
            errors = data.get("errors")
            if isinstance(errors, list) and errors:
                msg += " (" + "; ".join(str(e.get("message", e)) if isinstance(e, dict)
                                        else str(e) for e in errors) + ")"
            return msg
        parts = [str(data[k]) for k in ("title", "detail") if data.get(k)]  # problem+json
        if parts:
            return ": ".join(parts)
    return "" if data is None else str(data)[:300]


class GitHubClient:
    """The calls of the action, for one repository (``OWNER/REPO``)."""

    def __init__(self, token: str, repository: str, api_url: str = DEFAULT_API_URL, *,
                 timeout: int = 30, attempts: int = 4, max_wait: float = 60.0,
                 seconds_between_requests: float = 0.25, seconds_between_writes: float = 1.0,
                 deadline: float = API_DEADLINE,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic,
                 log: Callable[[str], None] = _stderr) -> None:
        self.repository = repository
        self.api_url = api_url.rstrip("/") or DEFAULT_API_URL
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.max_wait = max_wait
        self.deadline = deadline
        self.clock = clock  # goes with ``sleep`` (tests give both)
        self._ends = clock() + deadline
        self.sleep = sleep
        self.log = log
        self._gh = Github(auth=Auth.Token(token), base_url=self.api_url, timeout=timeout,
                          retry=None, user_agent=f"agent-eval/{__version__}", per_page=100,
                          seconds_between_requests=seconds_between_requests,
                          seconds_between_writes=seconds_between_writes)
        self._requester: Requester = self._gh.requester
        self._login: str | None = None

    def close(self) -> None:
        self._gh.close()

    # ------------------------------------------------------------------ plumbing
    def left(self) -> float:
        """Seconds left before the deadline of all calls."""
        return self._ends - self.clock()

    def _attempt_timeout(self, verb: str, url: str) -> int:
        """The socket timeout of the next attempt: the client's, or the time left before
        the deadline when that is shorter; ApiError when none is left."""
        left = self.left()
        if left <= 0:
            raise ApiError(verb, url, 0, f"not tried: the deadline of {self.deadline:g} s for "
                           "all GitHub API calls of this run has passed")
        timeout = max(1, min(self.timeout, math.ceil(left)))
        # PyGithub takes its timeout once, when the client is made; the connection object
        # it keeps reads it from this attribute at every request
        setattr(self._requester, "_Requester__timeout", timeout)  # noqa: B010
        connection = getattr(self._requester, "_Requester__connection", None)
        if connection is not None:
            connection.timeout = timeout
        return timeout

    def _read_answers_by_deadline(self) -> None:
        """Have PyGithub's session read each answer's body as it arrives, stopped at the
        deadline: requests reads it 10 KiB at a time, each read waiting for its whole
        chunk, and the socket timeout bounds only a silence, so an API sending a byte now
        and then held a call past every deadline. (PyGithub keeps one connection, made at
        the first request: made here, to hold the hook from the first answer on.)"""
        connection = getattr(self._requester, "_Requester__connection", None)
        if connection is None:
            make = getattr(self._requester, "_Requester__createConnection", None)
            connection = make() if make is not None else None
        session = getattr(connection, "session", None)
        if isinstance(session, requests.Session) \
                and self._body_by_deadline not in session.hooks["response"]:
            session.hooks["response"].append(self._body_by_deadline)

    def _body_by_deadline(self, r: requests.Response, *args: Any,
                          **kwargs: Any) -> requests.Response:
        """A ``response`` hook (it runs before requests reads the body): the body read
        with :func:`_arriving`, a :class:`requests.Timeout` at the deadline, an error past
        :data:`MAX_ANSWER_BYTES`."""
        if kwargs.get("stream"):
            return r
        body = bytearray()
        for chunk in _arriving(r):
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                r.close()
                raise requests.RequestException(f"the answer is larger than "
                                                f"{MAX_ANSWER_BYTES} bytes: not read")
            if self.left() <= 0:
                r.close()
                raise requests.Timeout(f"the answer was still arriving after {len(body)} "
                                       f"bytes at the deadline of {self.deadline:g} s for "
                                       "all GitHub API calls of this run")
        r._content = bytes(body)  # what ``Response.content`` returns from now on
        r._content_consumed = True
        return r

    def request(self, verb: str, url: str, *, params: dict[str, Any] | None = None,
                body: Any = None, idempotent: bool = True) -> tuple[dict[str, Any], Any]:
        """One API call with retries: ``(response headers, decoded JSON)``.

        ``idempotent=False``: an answer that leaves open whether the request took effect
        (a 5xx, no answer) is raised at once, for the caller to look before trying again."""
        headers = {"Accept": ACCEPT, "X-GitHub-Api-Version": API_VERSION}
        for attempt in range(1, self.attempts + 1):
            self._attempt_timeout(verb, url)
            self._read_answers_by_deadline()
            try:
                return self._requester.requestJsonAndCheck(verb, url, parameters=params,
                                                           headers=dict(headers), input=body)
            except GithubException as exc:
                status, rheaders = exc.status, dict(exc.headers or {})
                error = ApiError(verb, url, status, _message(exc.data), rheaders,
                                 exc.data.get("documentation_url")
                                 if isinstance(exc.data, dict) else None)
                wait = self._wait_for(status, rheaders, exc.data, attempt)
            except (requests.ConnectionError, requests.Timeout) as exc:
                error = ApiError(verb, url, 0, f"{type(exc).__name__}: {exc}")
                wait = float(2 ** (attempt - 1))
            except ValueError as exc:  # an answer cut off or not JSON (PyGithub's json.loads)
                error = ApiError(verb, url, 0, f"the answer is not JSON ({type(exc).__name__}: "
                                 f"{str(exc)[:200]})")
                wait = float(2 ** (attempt - 1))
            except requests.RequestException as exc:  # e.g. InvalidHeader: not retried
                raise ApiError(verb, url, 0, f"{type(exc).__name__}: {exc}") from None
            if not idempotent and error.ambiguous:
                raise error
            if wait is not None and wait >= self.left():
                self.log(f"{verb} {url}: not retrying: the wait of {wait:g} s would pass the "
                         f"deadline of {self.deadline:g} s for all GitHub API calls")
                wait = None
            if wait is None or attempt == self.attempts:
                raise error
            what = f"{error.status} {error.message}" if error.status else error.message
            self.log(f"{verb} {url}: {what}; retrying in {wait:g} s "
                     f"(attempt {attempt + 1} of {self.attempts})")
            self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait_for(self, status: int, headers: dict[str, Any], data: Any,
                  attempt: int) -> float | None:
        """Seconds to wait before trying again, or None when this is final."""
        after = retry_after(headers)
        wait: float | None = None
        if status >= 500:
            wait = after if after is not None else float(2 ** (attempt - 1))
        elif status in (403, 429):
            message = _message(data)
            if after is not None:
                wait = after
            elif Requester.isSecondaryRateLimitError(message):
                wait = 60.0
            elif str(headers.get("x-ratelimit-remaining")) == "0":
                try:
                    wait = max(1.0, float(headers["x-ratelimit-reset"]) - time.time() + 1)
                except (KeyError, ValueError):
                    wait = None
            elif status == 429:
                wait = 60.0
        if wait is not None and wait > self.max_wait:
            self.log(f"not retrying: GitHub asks to wait {wait:.0f} s (more than "
                     f"{self.max_wait:.0f} s)")
            return None
        return wait

    def _same_api(self, url: str) -> bool:
        """``url`` is on the API host (a relative URL is)."""
        if url.startswith("/"):
            return True
        a, b = urlsplit(url), urlsplit(self.api_url)
        return (a.hostname, a.port or _PORTS.get(a.scheme)) == (
            b.hostname, b.port or _PORTS.get(b.scheme)) and a.path.startswith(b.path)

    def _repo(self, path: str) -> str:
        return f"/repos/{self.repository}{path}"

    # --------------------------------------------------------------------- calls
    def login(self) -> str:
        """The login of the token's user or bot (see :meth:`_find_login`)."""
        if self._login is None:
            self._login = self._find_login()
        return self._login

    def _find_login(self) -> str:
        """``GET /user`` for a user's token. An installation token (``GITHUB_TOKEN``, a
        GitHub App's) may not read it (403): then the GraphQL ``viewer``, which names the
        installation's bot (``github-actions`` for ``GITHUB_TOKEN``, the App's slug
        otherwise); the GitHub Actions bot when that fails too."""
        try:
            _, data = self.request("GET", "/user")
            login = data.get("login") if isinstance(data, dict) else None
            return login if isinstance(login, str) and login else ACTIONS_BOT
        except ApiError as exc:
            if not exc.denied:
                raise
        try:
            _, data = self.request("POST", self._requester.graphql_url,
                                   body={"query": "query { viewer { login } }"})
        except ApiError as exc:
            self.log(f"could not find the token's login ({exc}); assuming {ACTIONS_BOT}")
            return ACTIONS_BOT
        inner = data.get("data") if isinstance(data, dict) else None
        viewer = inner.get("viewer") if isinstance(inner, dict) else None
        login = viewer.get("login") if isinstance(viewer, dict) else None
        if not isinstance(login, str) or not login:
            self.log(f"the GraphQL viewer has no login; assuming {ACTIONS_BOT}")
            return ACTIONS_BOT
        return bot_login(login)

    def upload_sarif(self, sarif: str, *, commit_sha: str, ref: str,
                     checkout_uri: str | None = None, tool_name: str | None = None,
                     started_at: str | None = None, poll_timeout: float = 120.0) -> SarifUpload:
        """``POST /repos/{owner}/{repo}/code-scanning/sarifs`` with the gzip+base64 log,
        then poll the upload's status until complete or failed, at most
        ``poll_timeout`` seconds. A poll that fails does not undo the upload: the status
        is then ``unknown``, with the error in ``errors``."""
        body: dict[str, Any] = {
            "commit_sha": commit_sha,
            "ref": ref,
            "sarif": base64.b64encode(gzip.compress(sarif.encode("utf-8"))).decode("ascii"),
        }
        if checkout_uri:
            body["checkout_uri"] = checkout_uri
        if started_at:
            body["started_at"] = started_at
        if tool_name:
            body["tool_name"] = tool_name
        _, data = self.request("POST", self._repo("/code-scanning/sarifs"), body=body)
        sarif_id = str(data.get("id", "")) if isinstance(data, dict) else ""
        if not sarif_id:
            raise ApiError("POST", self._repo("/code-scanning/sarifs"), 202,
                           "the answer has no upload id")
        try:
            return self._poll_sarif(sarif_id, poll_timeout)
        except ApiError as exc:
            return SarifUpload(sarif_id, "unknown", [str(exc)])

    def _poll_sarif(self, sarif_id: str, poll_timeout: float) -> SarifUpload:
        url = self._repo(f"/code-scanning/sarifs/{sarif_id}")
        start = time.monotonic()
        delay = 1.0
        while True:
            left = poll_timeout - (time.monotonic() - start)
            if left <= 0:
                return SarifUpload(sarif_id, "pending", waited=time.monotonic() - start)
            self.sleep(min(delay, left))
            delay = min(delay * 2, 10.0)
            try:
                _, data = self.request("GET", url)
            except ApiError as exc:
                if exc.status == 404:  # not visible yet right after the upload
                    continue
                raise
            data = data if isinstance(data, dict) else {}
            status = data.get("processing_status")
            if status in ("complete", "failed"):
                errors = [str(e) for e in data.get("errors") or []]
                return SarifUpload(sarif_id, str(status), errors, data.get("analyses_url"),
                                   time.monotonic() - start)

    def _paginate(self, path: str, max_pages: int, *,
                  whole: bool = False) -> Iterator[dict[str, Any]]:
        """The objects of a list endpoint, 100 a page, following the ``Link`` header on
        the API host for at most ``max_pages`` pages; with ``whole``, a list longer than
        that is an :class:`ApiError` (a part of it would pass for all of it)."""
        url: str | None = self._repo(path)
        params: dict[str, Any] | None = {"per_page": 100}
        pages = 0
        while url:
            if pages == max_pages:
                if whole:
                    raise ApiError("GET", self._repo(path), 0, f"more than {max_pages} pages "
                                   f"of {max_pages * 100} items: not listed to the end")
                return
            headers, data = self.request("GET", url, params=params)
            pages += 1
            if not isinstance(data, list) and whole:
                raise ApiError("GET", url, 0, f"page {pages} is not a JSON list: not listed "
                               "to the end")
            yield from (c for c in data if isinstance(c, dict)) if isinstance(data, list) else ()
            url, params = next_link(headers.get("link")), None
            if url and not self._same_api(url):
                self.log(f"not following a Link to another host than {self.api_url}: {url}")
                url = None

    def comments(self, issue_number: int) -> Iterator[dict[str, Any]]:
        """All comments of an issue or pull request, following the ``Link`` header; more
        than :data:`MAX_COMMENT_PAGES` pages are an :class:`ApiError`: this run's comment
        may be on a page not read, and a second one is never posted."""
        return self._paginate(f"/issues/{issue_number}/comments", MAX_COMMENT_PAGES,
                              whole=True)

    def pull_request_files(self, number: int) -> set[str]:
        """The paths a pull request adds or changes (``GET …/pulls/N/files``; GitHub
        lists at most 3,000), renamed files under their new name."""
        return {str(f["filename"]) for f in self._paginate(f"/pulls/{number}/files",
                                                           MAX_FILE_PAGES)
                if f.get("filename") and f.get("status") != "removed"}

    def find_comment(self, issue_number: int, marker: str) -> dict[str, Any] | None:
        """This token's (first) comment whose first line is ``marker`` (the marker anywhere
        else in a body, e.g. quoted from a trace, does not count)."""
        found = self.find_comments(issue_number, marker)
        return found[0] if found else None

    def find_comments(self, issue_number: int, marker: str) -> list[dict[str, Any]]:
        """Every comment of this token whose first line is ``marker``, oldest first: one,
        unless two runs raced to post it."""
        login = self.login()
        return [c for c in self.comments(issue_number)
                if is_author(c.get("user"), login)
                and first_line(str(c.get("body") or "")) == marker]

    def upsert_comment(self, issue_number: int, body: str, marker: str) -> Comment:
        """Edit this token's comment marked by ``marker`` (its first line) on the pull
        request, or create it: one comment per marker, however often the action runs.

        A POST that fails without saying whether the comment was made (a 5xx, no answer)
        is followed by listing the comments again: the comment found is edited, and only
        when there is none is the POST tried again."""
        if first_line(body) != marker:
            raise ValueError("the comment body must start with its marker line")
        every = self.find_comments(issue_number, marker)
        found = every[0] if every else None
        created = False
        for attempt in range(1, self.attempts + 1):
            if found is not None:
                _, data = self.request("PATCH", self._repo(f"/issues/comments/{found['id']}"),
                                       body={"body": body})
                url = data.get("html_url") if isinstance(data, dict) else None
                self._remove_duplicates(every[1:], body)
                return Comment(int(found["id"]), str(url or found.get("html_url")), created)
            try:
                post = self._repo(f"/issues/{issue_number}/comments")
                _, data = self.request("POST", post, body={"body": body}, idempotent=False)
                data = with_id("POST", post, data)  # else: it may have been made, look again
                return Comment(data["id"], str(data.get("html_url", "")), created=True)
            except ApiError as exc:
                if not exc.ambiguous or attempt == self.attempts:
                    raise
                wait = float(2 ** (attempt - 1))
                if wait >= self.left():
                    raise
                self.log(f"{exc}; looking for the comment again before posting it again "
                         f"(in {wait:g} s)")
                self.sleep(wait)
            every = self.find_comments(issue_number, marker)
            found = every[0] if every else None
            created = True  # the failed POST made it when it is there now
        raise AssertionError("unreachable")  # pragma: no cover

    def _remove_duplicates(self, duplicates: list[dict[str, Any]], body: str) -> None:
        """This token's later comments with the same marker (two runs that raced both
        posted one): deleted, so one comment stays and none shows an older verdict; one
        that cannot be deleted is edited to ``body`` instead."""
        for c in duplicates:
            url = self._repo(f"/issues/comments/{c.get('id')}")
            try:
                self.request("DELETE", url)
                self.log(f"deleted the duplicate comment {c.get('html_url') or url}")
            except ApiError as exc:
                try:
                    self.request("PATCH", url, body={"body": body})
                    self.log(f"edited the duplicate comment {c.get('html_url') or url} (it "
                             f"could not be deleted: {exc})")
                except ApiError as again:
                    self.log(f"the duplicate comment {c.get('html_url') or url} still shows "
                             f"an older run: it could be neither deleted ({exc}) nor edited "
                             f"({again})")

    def create_check_run(self, *, name: str, head_sha: str, conclusion: str, title: str,
                         summary: str, annotations: list[dict[str, Any]],
                         details_url: str | None = None) -> CheckRun:
        """A completed check run with its annotations, 50 per request: the first batch
        with the create call, the others by updating the run (GitHub appends them).

        An update that fails leaves the run in progress, a pending check forever, whatever
        the verdict: the run is then completed without the annotations left, with its
        conclusion and a title that says how many were sent, and the error is returned in
        :attr:`CheckRun.error`; only when that fails too is it raised, saying so."""
        step = ANNOTATIONS_PER_REQUEST
        batches = [annotations[i:i + step] for i in range(0, len(annotations), step)] or [[]]

        def output(batch: list[dict[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {"title": title, "summary": summary}
            if batch:
                out["annotations"] = batch
            return out

        body: dict[str, Any] = {"name": name, "head_sha": head_sha, "output": output(batches[0])}
        if details_url:
            body["details_url"] = details_url
        if len(batches) == 1:
            body.update(status="completed", conclusion=conclusion)
        else:
            body["status"] = "in_progress"
        _, data = self.request("POST", self._repo("/check-runs"), body=body)
        run_id: int = with_id("POST", self._repo("/check-runs"), data)["id"]
        url = data.get("html_url")
        html = url if isinstance(url, str) else None
        patch = self._repo(f"/check-runs/{run_id}")
        sent = len(batches[0])
        for n, batch in enumerate(batches[1:], 2):
            update: dict[str, Any] = {"output": output(batch)}
            if n == len(batches):
                update.update(status="completed", conclusion=conclusion)
            try:
                self.request("PATCH", patch, body=update)
            except ApiError as exc:
                finish = {"status": "completed", "conclusion": conclusion, "output": {
                    "title": f"{title} ({sent} of {len(annotations)} annotations sent)",
                    "summary": summary}}
                try:
                    self.request("PATCH", patch, body=finish)
                except ApiError as again:
                    raise ApiError(exc.verb, exc.url, exc.status, (
                        f"{exc.message}; the check run {html or run_id} stays in progress: "
                        f"completing it failed too ({again})"), exc.headers,
                        exc.documentation_url) from exc
                return CheckRun(run_id, html, n, sent, exc)
            sent += len(batch)
        return CheckRun(run_id, html, len(batches), sent)

    def find_pull_request(self, head_repository: str | None, head_ref: str | None,
                          head_sha: str) -> dict[str, Any] | None:
        """The open pull request whose head is ``head_sha`` (for ``workflow_run`` from a
        fork, whose payload lists no pull request), as the API lists it."""
        params: dict[str, Any] = {"state": "open", "per_page": 100}
        if head_repository and head_ref:
            params["head"] = f"{head_repository.split('/')[0]}:{head_ref}"
        _, data = self.request("GET", self._repo("/pulls"), params=params)
        for pr in data if isinstance(data, list) else []:
            if not isinstance(pr, dict):
                continue
            head = pr.get("head")
            if isinstance(head, dict) and head.get("sha") == head_sha:
                return pr
        return None

    def download_artifact(self, run_id: int, name: str, dest: Path) -> list[Path]:
        """Download the artifact ``name`` of workflow run ``run_id`` and extract it into
        ``dest``; the extracted files."""
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="agent-eval-artifact-") as tmp:
            archive = Path(tmp) / "artifact.zip"
            self.artifact_zip(run_id, name, archive, MAX_ARTIFACT_BYTES)
            return extract_zip(archive, dest)

    def artifact_zip(self, run_id: int, name: str, path: Path, max_bytes: int) -> None:
        """Download the zip of the artifact ``name`` of workflow run ``run_id`` into
        ``path``, refusing one over ``max_bytes``."""
        _, data = self.request("GET", self._repo(f"/actions/runs/{run_id}/artifacts"),
                               params={"name": name, "per_page": 100})
        listed = data.get("artifacts") if isinstance(data, dict) else None
        found = [a for a in (listed if isinstance(listed, list) else [])
                 if isinstance(a, dict) and a.get("name") == name]
        live = [a for a in found if not a.get("expired")]
        if not live:
            why = "it has expired" if found else "there is no artifact by that name"
            raise ApiError("GET", self._repo(f"/actions/runs/{run_id}/artifacts"), 404,
                           f"artifact {name!r} of run {run_id}: {why}")
        ids = [a for a in live if isinstance(a.get("id"), int) and not isinstance(a["id"], bool)]
        if not ids:  # an answer GitHub does not give: an API error, not an internal one
            raise ApiError("GET", self._repo(f"/actions/runs/{run_id}/artifacts"), 0,
                           f"the answer lists artifact {name!r} without an integer id")
        artifact = max(ids, key=lambda a: int(a["id"]))
        size = artifact.get("size_in_bytes")
        if isinstance(size, int) and size > max_bytes:
            raise ApiError("GET", self._repo(f"/actions/artifacts/{artifact['id']}"), 413,
                           f"artifact {name!r} is {size} bytes, over {max_bytes}")
        zip_url = self._repo(f"/actions/artifacts/{artifact['id']}/zip")
        headers, _ = self.request("GET", zip_url)
        location = headers.get("location")
        if not location:
            raise ApiError("GET", zip_url, 0, "the answer has no Location to download from")
        self._fetch(str(location), path, max_bytes)

    def _fetch(self, url: str, path: Path, max_bytes: int) -> None:
        """GET a (signed, unauthenticated) download URL into ``path``, with retries."""
        for attempt in range(1, self.attempts + 1):
            timeout = self._attempt_timeout("GET", "(artifact download)")
            try:
                with requests.get(url, stream=True, timeout=timeout,
                                  headers={"User-Agent": f"agent-eval/{__version__}"}) as r:
                    if r.status_code < 400:
                        total = 0
                        with open(path, "wb") as fh:
                            for chunk in _arriving(r):
                                total += len(chunk)
                                if total > max_bytes:
                                    raise ApiError("GET", "(artifact download)", 413,
                                                   f"over {max_bytes} bytes")
                                if self.left() <= 0:  # a server that sends a byte at times
                                    raise ApiError("GET", "(artifact download)", 0, (
                                        f"not done after {total} bytes: the deadline of "
                                        f"{self.deadline:g} s for all GitHub API calls of "
                                        "this run has passed"))
                                fh.write(chunk)
                        return
                    error = ApiError("GET", "(artifact download)", r.status_code, r.reason)
                    retry = r.status_code >= 500
            except (requests.ConnectionError, requests.Timeout) as exc:
                error = ApiError("GET", "(artifact download)", 0, f"{type(exc).__name__}: {exc}")
                retry = True
            wait = float(2 ** (attempt - 1))
            if not retry or attempt == self.attempts or wait >= self.left():
                raise error
            self.log(f"artifact download: {error}; retrying in {wait:g} s")
            self.sleep(wait)


def _arriving(r: requests.Response, size: int = 1 << 16) -> Iterator[bytes]:
    """The body of a streamed answer as it arrives: each read returns what has come, at
    most ``size`` bytes (``read1``), where ``iter_content`` waits for ``size`` whole bytes
    (a server sending one byte at times kept it reading past every deadline). A read that
    fails is a requests error, as ``iter_content`` raises them."""
    read1 = getattr(r.raw, "read1", None)
    if read1 is None:  # urllib3 1.x
        yield from r.iter_content(size)
        return
    try:
        while chunk := read1(size, decode_content=True):
            yield chunk
    except urllib3.exceptions.ReadTimeoutError as exc:
        raise requests.ReadTimeout(exc) from exc
    except urllib3.exceptions.HTTPError as exc:
        raise requests.ConnectionError(exc) from exc


MAX_ZIP_ENTRIES = 100_000  # entries in an artifact's zip (its central directory is read whole)
MAX_ZIP_DIRECTORY_BYTES = 64 * 1024 * 1024  # the bytes of that central directory
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
               EOFError, zlib.error)


@contextmanager
def open_zip(archive: Path, max_entries: int = MAX_ZIP_ENTRIES,
             max_directory_bytes: int = MAX_ZIP_DIRECTORY_BYTES) -> Iterator[zipfile.ZipFile]:
    """A zip opened for reading; ValueError (never a zipfile exception) when it is not
    a zip, is broken, or its central directory is over the bounds before zipfile reads it
    (:func:`agent_eval.zipdir.excess`): more than ``max_entries`` entries declared by its
    end record or counted in its bytes, or more than ``max_directory_bytes`` bytes."""
    try:
        try:
            over = zipdir.excess(archive, max_members=max_entries,
                                 max_bytes=max_directory_bytes)
        except zipdir.NotAZipError:
            raise ValueError("the artifact is not a zip (no end of central directory)") from None
        if over is not None and over.kind == "declared":
            raise ValueError(f"the artifact's zip declares {over.value} entries, over "
                             f"{max_entries}")
        if over is not None and over.kind == "bytes":
            raise ValueError(f"the artifact's zip has a central directory of {over.value} "
                             f"bytes, over {max_directory_bytes}")
        if over is not None:
            raise ValueError(f"the artifact's zip holds {over.value} entries in its central "
                             f"directory (its end record declares {over.declared}), over "
                             f"{max_entries}")
        with zipfile.ZipFile(archive) as zf:
            yield zf
    except _ZIP_ERRORS as exc:
        raise ValueError(f"the artifact's zip is broken: {type(exc).__name__}: {exc}") from None


def read_zip_member(archive: Path, name: str, max_bytes: int,
                    max_entries: int = MAX_ZIP_ENTRIES,
                    max_directory_bytes: int = MAX_ZIP_DIRECTORY_BYTES) -> tuple[str, bytes]:
    """The entry called ``name`` of a zip (the one at the top, else the shallowest
    ``…/name``) and its bytes, read in memory, never more than ``max_bytes`` whatever its
    header says; ValueError when it is missing, larger, or the zip is broken."""
    with open_zip(archive, max_entries, max_directory_bytes) as zf:
        found = [i for i in zf.infolist() if not i.is_dir()
                 and PurePosixPath(i.filename.replace("\\", "/")).name == name]
        if not found:
            raise ValueError(f"the artifact holds no {name}")
        info = min(found, key=lambda i: (i.filename.count("/"), i.filename))
        if info.file_size > max_bytes:
            raise ValueError(f"{info.filename} in the artifact is {info.file_size} bytes, over "
                             f"the limit of {max_bytes}")
        with zf.open(info) as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ValueError(f"{info.filename} in the artifact is over the limit of {max_bytes} "
                             "bytes")
        return info.filename, data


def bot_login(login: str) -> str:
    """A bot's login as REST shows it as a comment's author: the GraphQL ``viewer`` of an
    installation token names the bot with or without the ``[bot]`` suffix (``github-actions``
    for ``GITHUB_TOKEN``); REST always with it."""
    return login if login.lower().endswith("[bot]") else f"{login}[bot]"


def is_author(user: Any, login: str) -> bool:
    """A comment's ``user`` is the token's own ``login``: the same login, case-insensitive;
    for a bot (``…[bot]``), also of type Bot, so a person whose login happens to equal an
    App's slug never counts."""
    if not isinstance(user, dict):
        return False
    author = str(user.get("login") or "")
    if author.lower() != login.lower():
        return False
    return not login.lower().endswith("[bot]") or user.get("type") in (None, "Bot")


def extract_zip(archive: Path, dest: Path) -> list[Path]:
    """Extract a zip into ``dest``, refusing entries that would land outside it, links,
    and more than :data:`MAX_ARTIFACT_BYTES` in all."""
    out: list[Path] = []
    root = dest.resolve()
    total = 0
    with open_zip(archive) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = PurePosixPath(info.filename.replace("\\", "/"))
            mode = info.external_attr >> 16
            if name.is_absolute() or ".." in name.parts or (mode & 0o170000) == 0o120000:
                raise ValueError(f"unsafe entry in the artifact: {info.filename!r}")
            total += info.file_size
            if total > MAX_ARTIFACT_BYTES:
                raise ValueError(f"the artifact unpacks to more than {MAX_ARTIFACT_BYTES} bytes")
            target = (root / Path(*name.parts)).resolve()
            if root not in target.parents:
                raise ValueError(f"unsafe entry in the artifact: {info.filename!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            out.append(target)
    return sorted(out)
