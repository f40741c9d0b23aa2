"""The loopback GitHub for the action's tests.

- :class:`FakeGitHub`: a recording server (``http.server`` in a thread on 127.0.0.1) that
  behaves like the few endpoints the action calls (comments with ``Link`` pagination,
  SARIF uploads with a processing status, check runs, artifacts with a 302 to the zip),
  records every request, and validates every request, and every answer it makes up,
  against GitHub's official OpenAPI description (npm ``@octokit/openapi``) with
  ``openapi-core``. Its answers start from the description's own examples.
- :class:`Prism`: ``@stoplight/prism-cli`` serving the same description (it rejects
  invalid requests with 4xx and logs why).
- real webhook payloads from npm ``@octokit/webhooks-examples``, a workspace (a temp git
  repository holding a copy of ``examples/customer-service``) and :func:`run_action`,
  which runs ``agent-eval action`` as a subprocess with the environment a runner sets.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from tests.conftest import copy_example, missing_system

import agent_eval

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "node_modules"
SPEC = NODE / "@octokit" / "openapi" / "generated" / "api.github.com.json"
WEBHOOKS = NODE / "@octokit" / "webhooks-examples" / "api.github.com" / "index.json"
PRISM_BIN = NODE / ".bin" / "prism"
EXAMPLE = ROOT / "examples" / "customer-service"
MERGE_SHA = hashlib.sha1(b"refs/pull/2/merge").hexdigest()  # GITHUB_SHA of a PR run
SRC = str(Path(agent_eval.__file__).resolve().parents[1])  # the package under test


def require_node_tools(*paths: Path) -> None:
    """The npm test tools, or the test does not run (tests/conftest.py)."""
    missing = [str(p.relative_to(ROOT)) for p in (SPEC, WEBHOOKS, *paths) if not p.exists()]
    if missing:
        missing_system(f"the npm test tools ({', '.join(missing)})",
                       "run 'npm ci' at the repository root (scripts/test does)")


# ------------------------------------------------------------------ the description
@cache
def spec() -> dict[str, Any]:
    require_node_tools()
    data: dict[str, Any] = json.loads(SPEC.read_text(encoding="utf-8"))
    return data


def example(name: str) -> Any:
    """A copy of ``components/examples/NAME`` of the description."""
    return copy.deepcopy(spec()["components"]["examples"][name]["value"])


@cache
def _openapi() -> Any:
    from openapi_core import Config, OpenAPI

    # the description is GitHub's own; checking it against the meta-schema takes minutes
    return OpenAPI.from_dict(spec(), config=Config(spec_validator_cls=None))


class _Req:
    """An openapi-core request (its servers are api.github.com; paths are what count)."""

    host_url = "https://api.github.com"

    def __init__(self, method: str, path: str, query: list[tuple[str, str]],
                 headers: dict[str, str], body: bytes) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        self.method = method.lower()
        self.path = path
        self.full_url_pattern = self.host_url + path
        self.parameters = RequestParameters(query=ImmutableMultiDict(query),
                                            header=Headers(headers),
                                            cookie=ImmutableMultiDict())
        self.body = body or None
        self.content_type = (headers.get("Content-Type") or headers.get("content-type")
                             or "").lower()


class _Resp:
    def __init__(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        from werkzeug.datastructures import Headers

        self.status_code = status
        self.data = data
        self.headers = Headers(headers)
        self.content_type = headers.get("Content-Type", "application/json")


def validate(method: str, path: str, query: list[tuple[str, str]], headers: dict[str, str],
             body: bytes, answer: tuple[int, bytes, dict[str, str]] | None = None) -> list[str]:
    """Problems of a request (and of the answer given to it) against the description."""
    problems = []
    req = _Req(method, path, query, headers, body)
    try:
        _openapi().validate_request(req)
    except Exception as exc:
        problems.append(f"request {method} {path}: {_reason(exc)}")
    if answer is not None:
        try:
            _openapi().validate_response(req, _Resp(*answer))
        except Exception as exc:
            problems.append(f"answer {answer[0]} to {method} {path}: {_reason(exc)}")
    return problems


def _reason(exc: BaseException) -> str:
    parts = [f"{type(exc).__name__}: {exc}"]
    cause = exc.__cause__
    while cause is not None:
        parts.append(str(cause)[:500])
        cause = cause.__cause__
    return " <- ".join(parts)


# ------------------------------------------------------------------ fake GitHub
@dataclass
class Reply:
    status: int
    body: Any = None  # JSON value, or bytes
    headers: dict[str, str] = field(default_factory=dict)
    check: bool = True  # validate this answer against the description


@dataclass
class Recorded:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()
    status: int = 0

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def param(self, name: str) -> str | None:
        return next((v for k, v in self.query if k == name), None)


FORBIDDEN = {"message": "Resource not accessible by integration",
             "documentation_url": "https://docs.github.com/rest", "status": "403"}


class FakeGitHub:
    """A recording GitHub on loopback; see the module doc."""

    def __init__(self, repo: str = "Codertocat/Hello-World",
                 login: str = "github-actions[bot]") -> None:
        self.repo = repo
        self.login = login
        self.requests: list[Recorded] = []
        self.problems: list[str] = []
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.sarif_statuses = ["complete"]  # answers to the status polls, the last repeated
        self.sarif_errors: list[str] = []
        self.artifacts: list[dict[str, Any]] = []
        self.pulls: list[dict[str, Any]] = []
        self.blobs: dict[str, bytes] = {}
        self.deny_writes = False  # 403 on every POST/PATCH/PUT/DELETE
        self.deny_user = True  # GET /user as an installation token gets it (403)
        # the GraphQL ``viewer`` of the token (an installation token's bot, without
        # ``[bot]`` as GitHub names it there); None: the GraphQL call fails (401)
        self.viewer: str | None = "github-actions"
        self.pull_files: dict[int, list[str]] = {}  # GET /pulls/N/files
        self._scripted: list[tuple[str, re.Pattern[str], list[Reply]]] = []
        self._lost: list[tuple[str, re.Pattern[str], Reply]] = []
        self._ids = 1000
        self._sarif_statuses: list[str] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                fake._handle(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeGitHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --------------------------------------------------------------- scripting
    def script(self, method: str, path: str, *replies: Reply) -> None:
        """Answer the next requests matching ``method`` and the regex ``path`` with
        ``replies`` (in order) before the normal behaviour."""
        self._scripted.append((method, re.compile(path), list(replies)))

    def calls(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if (method is None or r.method == method)
                and (path is None or re.search(path, r.path))]

    def add_comment(self, issue: int, body: str, login: str) -> dict[str, Any]:
        c: dict[str, Any] = example("issue-comment")
        self._ids += 1
        c["id"] = self._ids
        c["body"] = body
        c["user"]["login"] = login
        c["user"]["type"] = "Bot" if login.endswith("[bot]") else "User"
        c["html_url"] = f"https://github.com/{self.repo}/pull/{issue}#issuecomment-{self._ids}"
        c["url"] = f"https://api.github.com/repos/{self.repo}/issues/comments/{self._ids}"
        self.comments.setdefault(issue, []).append(c)
        return c

    def add_pull(self, number: int, head_sha: str, head_owner: str,
                 head_ref: str) -> dict[str, Any]:
        pr: dict[str, Any] = example("pull-request-simple-items")[0]
        pr["number"] = number
        for team in pr.get("requested_teams") or []:  # the example lacks the required type
            team.setdefault("type", "organization")
        pr["head"].update(sha=head_sha, ref=head_ref, label=f"{head_owner}:{head_ref}")
        self.pulls.append(pr)
        return pr

    def add_artifact(self, name: str, data: bytes, expired: bool = False) -> dict[str, Any]:
        a: dict[str, Any] = example("artifact-paginated")["artifacts"][0]
        self._ids += 1
        a.update(id=self._ids, name=name, size_in_bytes=len(data), expired=expired,
                 url=f"https://api.github.com/repos/{self.repo}/actions/artifacts/{self._ids}",
                 archive_download_url=(f"https://api.github.com/repos/{self.repo}/actions/"
                                       f"artifacts/{self._ids}/zip"))
        self.artifacts.append(a)
        self.blobs[f"/_blob/{self._ids}.zip"] = data
        return a

    def script_lost_answer(self, method: str, path: str, reply: Reply) -> None:
        """The next request matching ``method`` and ``path`` takes effect as usual, but
        its answer is replaced by ``reply`` (a 502 after GitHub made the comment)."""
        self._lost.append((method, re.compile(path), reply))

    # ---------------------------------------------------------------- serving
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        rec = Recorded(h.command, parts.path, parse_qsl(parts.query, keep_blank_values=True),
                       dict(h.headers.items()), body, time.monotonic())
        with self._lock:
            self.requests.append(rec)
            if parts.path.startswith("/_blob/"):  # the signed download URL: not the API
                data = self.blobs.get(parts.path)
                reply = Reply(200, data, {"Content-Type": "application/zip"}, check=False) \
                    if data is not None else Reply(404, {"message": "Not Found"}, check=False)
            else:
                reply = self._scripted_reply(rec) or self._reply(rec)
                reply = self._lost_answer(rec) or reply
            raw = reply.body if isinstance(reply.body, bytes) else (
                b"" if reply.body is None else json.dumps(reply.body).encode())
            headers = dict(reply.headers)
            if raw and "Content-Type" not in headers:
                headers["Content-Type"] = "application/json; charset=utf-8"
            if not parts.path.startswith(("/_blob/", "/graphql")):  # GraphQL: not REST
                self.problems += validate(rec.method, rec.path, rec.query, rec.headers, body,
                                          (reply.status, raw, headers) if reply.check else None)
            rec.status = reply.status
        h.send_response(reply.status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(raw)))
        h.end_headers()
        h.wfile.write(raw)

    def _scripted_reply(self, rec: Recorded) -> Reply | None:
        for method, pattern, replies in self._scripted:
            if method == rec.method and pattern.search(rec.path) and replies:
                return replies.pop(0)
        return None

    def _lost_answer(self, rec: Recorded) -> Reply | None:
        for n, (method, pattern, reply) in enumerate(self._lost):
            if method == rec.method and pattern.search(rec.path):
                del self._lost[n]
                return reply
        return None

    def _reply(self, rec: Recorded) -> Reply:
        m, path = rec.method, rec.path
        repo = f"/repos/{self.repo}"
        if m in ("POST", "PATCH", "PUT", "DELETE") and self.deny_writes:
            # GitHub answers 403 for a missing permission on every endpoint, also where the
            # description lists no 403 (checks/create): the answer is not checked
            return Reply(403, FORBIDDEN, check=False)
        if m == "GET" and path == "/user":
            if self.deny_user:
                return Reply(403, FORBIDDEN)
            user = example("private-user-response-with-public-and-private-profile-information")
            user["login"] = self.login
            return Reply(200, user)
        if m == "POST" and path == "/graphql":
            return self._graphql(rec)
        if not path.startswith(repo + "/"):
            return Reply(404, {"message": "Not Found", "documentation_url": "x"})
        rest = path[len(repo):]
        if m == "POST" and rest == "/code-scanning/sarifs":
            sid = str(uuid.uuid4())
            self._sarif_statuses = list(self.sarif_statuses)
            return Reply(202, {"id": sid, "url": f"https://api.github.com{repo}/code-scanning/"
                                                f"sarifs/{sid}"})
        if m == "GET" and (mt := re.fullmatch(r"/code-scanning/sarifs/([^/]+)", rest)):
            statuses = self._sarif_statuses
            status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
            out: dict[str, Any] = {"processing_status": status,
                                   "analyses_url": f"https://api.github.com{repo}/code-scanning"
                                                   f"/analyses?sarif_id={mt.group(1)}"}
            if status == "failed":
                out["errors"] = list(self.sarif_errors)
            return Reply(200, out)
        if mt := re.fullmatch(r"/issues/(\d+)/comments", rest):
            issue = int(mt.group(1))
            if m == "POST":
                c = self.add_comment(issue, (rec.json or {}).get("body", ""), self.login)
                return Reply(201, c, {"Location": c["url"]})
            if m == "GET":
                return self._page(rec, self.comments.get(issue, []))
        if m == "DELETE" and (mt := re.fullmatch(r"/issues/comments/(\d+)", rest)):
            for cs in self.comments.values():
                for c in cs:
                    if c["id"] == int(mt.group(1)):
                        cs.remove(c)
                        return Reply(204)
            return Reply(404, {"message": "Not Found", "documentation_url": "x"})
        if m == "PATCH" and (mt := re.fullmatch(r"/issues/comments/(\d+)", rest)):
            for cs in self.comments.values():
                for c in cs:
                    if c["id"] == int(mt.group(1)):
                        c["body"] = (rec.json or {}).get("body", "")
                        return Reply(200, c)
            return Reply(404, {"message": "Not Found", "documentation_url": "x"})
        if m == "POST" and rest == "/check-runs":
            self._ids += 1
            data = rec.json or {}
            self.check_runs[self._ids] = {"annotations": list(
                (data.get("output") or {}).get("annotations") or []),
                "status": data.get("status"), "conclusion": data.get("conclusion")}
            return self._check_run_reply(201, self._ids, data)
        if m == "PATCH" and (mt := re.fullmatch(r"/check-runs/(\d+)", rest)):
            run = self.check_runs.get(int(mt.group(1)))
            if run is None:
                return Reply(404, {"message": "Not Found", "documentation_url": "x"})
            data = rec.json or {}
            run["annotations"] += (data.get("output") or {}).get("annotations") or []
            run["status"] = data.get("status", run["status"])
            run["conclusion"] = data.get("conclusion", run["conclusion"])
            return self._check_run_reply(200, int(mt.group(1)), data)
        if m == "GET" and (mt := re.fullmatch(r"/pulls/(\d+)/files", rest)):
            entry = example("diff-entry-items")[0]
            return self._page(rec, [{**entry, "filename": f, "status": "modified"}
                                    for f in self.pull_files.get(int(mt.group(1)), [])])
        if m == "GET" and rest == "/pulls":
            head = rec.param("head")
            return Reply(200, [p for p in self.pulls if head is None or p["head"]["label"] == head])
        if m == "GET" and (mt := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest)):
            name = rec.param("name")
            found = [a for a in self.artifacts if name is None or a["name"] == name]
            return Reply(200, {"total_count": len(found), "artifacts": found})
        if m == "GET" and (mt := re.fullmatch(r"/actions/artifacts/(\d+)/zip", rest)):
            if f"/_blob/{mt.group(1)}.zip" not in self.blobs:
                return Reply(404, {"message": "Not Found", "documentation_url": "x"})
            return Reply(302, None, {"Location": f"{self.url}/_blob/{mt.group(1)}.zip"})
        return Reply(404, {"message": "Not Found", "documentation_url": "x"})

    def _graphql(self, rec: Recorded) -> Reply:
        """The one GraphQL query the action makes: ``query { viewer { login } }``."""
        query = " ".join(str((rec.json or {}).get("query", "")).split())
        if query != "query { viewer { login } }":
            self.problems.append(f"unexpected GraphQL query {query!r}")
            return Reply(400, {"message": "Problems parsing JSON"}, check=False)
        if self.viewer is None:
            return Reply(401, {"message": "Bad credentials"}, check=False)
        return Reply(200, {"data": {"viewer": {"login": self.viewer}}}, check=False)

    def _check_run_reply(self, status: int, run_id: int, data: dict[str, Any]) -> Reply:
        cr = self._check_run(run_id, data)
        # openapi-core rejects a null ``conclusion`` (nullable, but its enum lacks null):
        # the description's own in-progress example fails the same way; not checked then
        return Reply(status, cr, check=cr["conclusion"] is not None)

    def _check_run(self, run_id: int, data: dict[str, Any]) -> dict[str, Any]:
        cr = example("check-run-example-of-completed-conclusion")
        cr["id"] = run_id
        cr["html_url"] = f"https://github.com/{self.repo}/runs/{run_id}"
        if data.get("head_sha"):
            cr["head_sha"] = data["head_sha"]
        run = self.check_runs[run_id]
        cr["status"] = run["status"] or "queued"
        cr["conclusion"] = run["conclusion"]
        cr["output"]["annotations_count"] = len(run["annotations"])
        return dict(cr)

    def _page(self, rec: Recorded, items: list[dict[str, Any]]) -> Reply:
        per_page = min(100, int(rec.param("per_page") or 30))
        page = int(rec.param("page") or 1)
        chunk = items[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(items) // per_page))
        headers = {}
        if page < last:
            base = f"{self.url}{rec.path}?per_page={per_page}"
            headers["Link"] = (f'<{base}&page={page + 1}>; rel="next", '
                               f'<{base}&page={last}>; rel="last"')
        return Reply(200, chunk, headers)


def workflow_run(run_id: int, *, event: str = "push", branch: str = "main",
                 repo: tuple[int, str] = (1296269, "Codertocat/Hello-World"),
                 head_repo: tuple[int, str] | None = None) -> dict[str, Any]:
    """A completed, successful workflow run (the description's example, changed): by
    default a push of the repository itself; ``head_repo`` another repository (a fork)."""
    run: dict[str, Any] = example("workflow-run-paginated")["workflow_runs"][0]
    run.update(id=run_id, event=event, head_branch=branch, status="completed",
               conclusion="success")
    head_id, head_name = head_repo or repo
    run["repository"].update(id=repo[0], full_name=repo[1], name=repo[1].split("/")[1])
    run["head_repository"].update(id=head_id, full_name=head_name,
                                  name=head_name.split("/")[1])
    return run


def workflow_runs(*runs: dict[str, Any]) -> dict[str, Any]:
    """The answer of ``GET …/actions/workflows/{id}/runs`` listing ``runs``."""
    return {"total_count": len(runs), "workflow_runs": list(runs)}


# ------------------------------------------------------------------------ prism
class Prism:
    """``prism mock`` of the description on a free loopback port."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.log_path = log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(PRISM_BIN), "mock", "-h", "127.0.0.1", "-p", str(self.port), str(SPEC)],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=ROOT)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prism exited with {self.proc.returncode}: {self.text()}")
            try:
                urllib.request.urlopen(f"{self.url}/user", timeout=2).read()
                return
            except urllib.error.HTTPError:  # any answer: it is up
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"prism did not start in {timeout} s: {self.text()[-2000:]}")

    def text(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()


def prism_requests(log: str) -> list[tuple[str, list[str]]]:
    """The requests in a prism log, each with its log lines."""
    out: list[tuple[str, list[str]]] = []
    for line in log.splitlines():
        m = re.search(r"\[HTTP SERVER\] (\w+ \S+) ℹ\s+info\s+Request received", line)
        if m:
            out.append((m.group(1), []))
        elif out:
            out[-1][1].append(line)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# ------------------------------------------------------------------ the runner
@cache
def webhooks() -> list[dict[str, Any]]:
    require_node_tools()
    data: list[dict[str, Any]] = json.loads(WEBHOOKS.read_text(encoding="utf-8"))
    return data


def payload(event: str, pick: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first real ``event`` payload that ``pick`` accepts."""
    for group in webhooks():
        if group["name"] == event:
            for ex in group["examples"]:
                if pick(ex):
                    return copy.deepcopy(ex)
    raise LookupError(f"no {event} example")


def pr_payload(action: str) -> dict[str, Any]:
    return payload("pull_request", lambda e: e.get("action") == action)


def push_payload() -> dict[str, Any]:
    return payload("push", lambda e: e["ref"].startswith("refs/heads/") and not e["deleted"])


GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}


def make_workspace(root: Path, sub: str = "", extra_traces: dict[str, str] | None = None) -> Path:
    """A git repository at ``root`` with a copy of examples/customer-service (in ``sub``)."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for the action's tests")
    root.mkdir(parents=True, exist_ok=True)
    copy_example(root / sub)
    for name, text in (extra_traces or {}).items():
        (root / sub / "traces" / name).write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT_ENV, "HOME": str(root.parent)}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "example"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def many_violations(n: int) -> str:
    """A trace with ``n`` calls over the policy's ``max: 30`` (one violation each)."""
    call = {"type": "tool_call", "tool": "authenticate_user",
            "arguments": {"customer_id": "C-1234", "method": "sms"}}
    lines = [json.dumps(call)]
    lines += [json.dumps({"type": "tool_call", "tool": "apply_discount",
                          "arguments": {"percent": 31 + i % 60}}) for i in range(n)]
    return "\n".join(lines) + "\n"


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    home: Path

    def lines(self, prefix: str) -> list[str]:
        return [ln for ln in self.stdout.splitlines() if ln.startswith(prefix)]

    def skips(self) -> list[str]:
        """The action's own warnings (skipped calls), not the findings' annotations."""
        return self.lines("::warning title=agent-eval::")


def run_action(tmp: Path, workspace: Path, api_url: str, event_name: str,
               event: dict[str, Any], inputs: dict[str, str] | None = None,
               env: dict[str, str] | None = None, name: str = "run",
               file_size_limit: int | None = None) -> ActionRun:
    """``agent-eval action`` as a runner starts it: the ``GITHUB_*`` variables, the event
    payload in a file, every input as ``INPUT_<NAME>`` (dashes kept, empty when unset).
    ``file_size_limit``: no file the action writes may grow past this many bytes (the
    writes fail as on a full disk)."""
    from agent_eval.github.workflow import read_outputs

    d = tmp / name
    d.mkdir(parents=True)
    home = d / "home"
    home.mkdir()
    event_path = d / "event.json"
    event_path.write_text(json.dumps(event), encoding="utf-8")
    repo = event["repository"]["full_name"]
    if event_name == "push":
        sha, ref = event["after"], event["ref"]
    elif event_name == "pull_request_target":  # runs on the base branch, as GitHub does
        base = event["pull_request"]["base"]
        sha, ref = base["sha"], f"refs/heads/{base['ref']}"
    elif event_name.startswith("pull_request"):
        sha, ref = MERGE_SHA, f"refs/pull/{event['number']}/merge"
    elif event_name == "merge_group":
        sha, ref = event["merge_group"]["head_sha"], event["merge_group"]["head_ref"]
    else:
        sha, ref = "0" * 39 + "1", "refs/heads/main"
    given = {"github-token": "ghs_loopbacktoken", "upload-sarif": "true", "comment": "auto",
             "check-run": "false", "fail-on": "fail", "baseline": "auto",
             "baseline-artifact": "agent-eval-results", "baseline-file": "", "config": "",
             "traces": "", "artifact": "", "sarif-category": "", "output-dir": "",
             "working-directory": "", **(inputs or {})}
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
        "LANG": "C.UTF-8", "PYTHONUTF8": "1", "GIT_CONFIG_NOSYSTEM": "1",
        "GITHUB_ACTIONS": "true", "CI": "true", "RUNNER_TEMP": str(d),
        "GITHUB_API_URL": api_url, "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_GRAPHQL_URL": api_url + "/graphql",
        "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": repo, "GITHUB_REPOSITORY_OWNER": repo.split("/")[0],
        "GITHUB_SHA": sha, "GITHUB_REF": ref, "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_OUTPUT": str(d / "output"), "GITHUB_STEP_SUMMARY": str(d / "summary"),
        "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": "agent-eval",
        # the package these tests import (a worktree's src/, not the venv's editable copy)
        "PYTHONPATH": SRC,
        **{f"INPUT_{k.upper()}": v for k, v in given.items()},
        **(env or {}),
    }
    for f in ("output", "summary"):
        (d / f).touch()
    def limit() -> None:
        if file_size_limit is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    proc = subprocess.run([sys.executable, "-m", "agent_eval", "action"], cwd=workspace,
                          env=full, capture_output=True, text=True, timeout=300,
                          preexec_fn=limit if file_size_limit is not None else None)
    return ActionRun(proc.returncode, proc.stdout, proc.stderr,
                     read_outputs((d / "output").read_text(encoding="utf-8")),
                     (d / "summary").read_text(encoding="utf-8"), workspace, home)
