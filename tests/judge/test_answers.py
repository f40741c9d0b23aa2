"""Judge endpoints that answer with something else than the API's response (a server
behind base_url is anyone's: a proxy's HTML page, an OpenAI-compatible server of another
version): every such answer is a failed call, a `judge/error` at its check, never a crash
of the recording run (it stopped on an internal error with a traceback, exit 2: nothing
else of the round was recorded)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from tests.conftest import within

from .conftest import Project, native
from .loopback import QuietHandler, misbehaving, serving

GOOD = '{"reasoning": "fine", "score": 5}'


def chat(message: Any = None, **over: Any) -> bytes:
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": GOOD}
                         if message is None else message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    body.update(over)
    return json.dumps(body).encode()


@contextmanager
def answering(data: bytes) -> Iterator[str]:
    """A loopback endpoint that answers every POST with ``data`` (HTTP 200, JSON)."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            self.read_body()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Handler) as url:
        yield url


def write(project: Project, url: str, provider: str = "openai") -> None:
    project.write(
        'version: "1"\nsuite: answers\ntraces: traces/*.jsonl\n'
        f"judge:\n  provider: {provider}\n  model: m\n  base_url: {url}\n"
        "  api_key_env: JUDGE_TEST_KEY\n  max_retries: 0\n"
        "scenarios:\n  - id: REFUND-001\n    expect:\n      judge:\n"
        '        - rubric: "Polite."\n',
        {"a.jsonl": native("a-1", "REFUND-001", "Refunded $24.99.")})


@pytest.mark.parametrize(("provider", "data", "why"), [
    ("openai", chat({"role": "assistant", "content": [{"type": "text", "text": GOOD}]}),
     "the answer's content is a list, not text"),
    ("openai", chat(None, choices=[{"index": 0, "message": None}]),
     "the answer is not a Chat Completions response (AttributeError: 'NoneType' object has "
     "no attribute 'content')"),
    ("openai", b"<html>502 Bad Gateway</html>",
     "the answer is not JSON (JSONDecodeError: Expecting value"),
    ("anthropic", json.dumps({"id": "m1", "type": "message", "role": "assistant",
                              "model": "m", "content": None, "stop_reason": "end_turn",
                              "usage": {"input_tokens": 1, "output_tokens": 1}}).encode(),
     "the answer is not a Messages response (TypeError: 'NoneType' object is not iterable)"),
    ("openai", chat(None, choices=[
        {"index": i, "finish_reason": "stop",
         "message": {"role": "assistant", "content": f'{{"reasoning": "r", "score": {n}}}'}}
        for i, n in enumerate((1, 5))]),  # two verdicts: the first was taken, unsaid
     "the response has 2 choices, not the one asked for"),
], ids=["content-list", "message-null", "not-json", "anthropic-content-null", "two-choices"])
def test_an_answer_of_another_shape_is_a_judge_error(project: Project, provider: str,
                                                     data: bytes, why: str) -> None:
    with answering(data) as url:
        write(project, url + ("/v1" if provider == "openai" else ""), provider)
        run = project.cli("--judge", "record")
    assert "internal error" not in run.err
    (err,) = run.findings("judge/error")
    assert why in err["message"], err["message"]
    assert run.results["verdict"] == "error"
    assert run.code == 2
    assert not project.store_lines()


@pytest.mark.parametrize("content", [
    '{"reasoning": "the amount is wrong", "score": 1, "score": 5}',
    '{"reasoning": "the amount is wrong", "score": 1, "sc\\u006fre": 5}'])
def test_a_verdict_giving_its_score_twice_is_a_judge_error(project: Project,
                                                           content: str) -> None:
    # two verdicts in one answer, which JSON reads as the last: a 1 that failed the
    # check was stored as a 5 that passed it
    with answering(chat({"role": "assistant", "content": content})) as url:
        write(project, url + "/v1")
        run = project.cli("--judge", "record")
    (err,) = run.findings("judge/error")
    assert ("the verdict is ambiguous: the name 'score' is given twice in one object"
            in err["message"]), err["message"]
    assert run.results["verdict"] == "error" and run.code == 2
    assert not project.store_lines()


def test_token_counts_of_another_type_are_unknown_not_a_crash(project: Project) -> None:
    with answering(chat(usage={"prompt_tokens": "lots", "completion_tokens": -5})) as url:
        write(project, url + "/v1")
        run = project.cli("--judge", "record")
    assert "internal error" not in run.err
    (line,) = project.store_lines()
    assert line["score"] == 5
    assert "input_tokens" not in line and "output_tokens" not in line  # unknown, not stored
    assert run.code == 0


def test_a_token_count_over_10_15_is_unknown_not_a_crash(project: Project) -> None:
    # 10^25 tokens: the store line could not be written (orjson: 64 bits), an internal
    # error of the recording run after the call was paid for
    with answering(chat(usage={"prompt_tokens": 10**25, "completion_tokens": 10**15})) as url:
        write(project, url + "/v1")
        run = project.cli("--judge", "record")
    assert "internal error" not in run.err
    (line,) = project.store_lines()
    assert line["score"] == 5 and "input_tokens" not in line
    assert line["output_tokens"] == 10**15  # the largest count kept
    assert run.code == 0


def _bounded(project: Project, url: str, provider: str) -> None:
    project.write(
        'version: "1"\nsuite: answers\ntraces: traces/*.jsonl\n'
        f"judge:\n  provider: {provider}\n  model: m\n  base_url: {url}\n"
        "  api_key_env: JUDGE_TEST_KEY\n  max_retries: 1\n  timeout_s: 1\n"
        "scenarios:\n  - id: REFUND-001\n    expect:\n      judge:\n"
        '        - rubric: "Polite."\n',
        {"a.jsonl": native("a-1", "REFUND-001", "Refunded $24.99.")})


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_endpoint_that_trickles_its_answer_is_cut_at_the_deadline(
        project: Project, provider: str) -> None:
    # one byte a second (for 15 s, retried: a minute): httpx's timeouts are per read, so
    # each read came in time, and a server that never ends kept --judge record forever.
    # Each call now ends at timeout_s (1 s), its SDK retry included; with max_retries: 1 a
    # judgement takes at most (1 + 1) x (1 s + 1 x 8 s) (docs/judge.md "Providers")
    with misbehaving("trickle") as url:
        _bounded(project, url + ("/v1" if provider == "openai" else ""), provider)
        started = time.monotonic()
        with within(30, "--judge record against a trickling endpoint"):
            run = project.cli("--judge", "record")
        took = time.monotonic() - started
    assert took < 18, took
    assert "internal error" not in run.err, run.err[-3000:]
    (err,) = run.findings("judge/error")
    reason = err["details"]["reason"]
    assert "the call's deadline of 1 s (judge.timeout_s) passed" in reason, reason
    assert reason.endswith("(after 2 attempt(s))"), reason
    assert run.results["verdict"] == "error" and run.code == 2
    assert not project.store_lines()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_answer_over_the_size_limit_is_a_judge_error(project: Project,
                                                        provider: str) -> None:
    from agent_eval.judge.http import MAX_ANSWER_BYTES

    assert MAX_ANSWER_BYTES == 8 * 1024 * 1024  # as docs/judge.md says
    with misbehaving("huge", MAX_ANSWER_BYTES + 1) as url:
        _bounded(project, url + ("/v1" if provider == "openai" else ""), provider)
        with within(60, "--judge record against an endpoint with a huge answer"):
            run = project.cli("--judge", "record")
    assert "internal error" not in run.err, run.err[-3000:]
    (err,) = run.findings("judge/error")
    assert "the answer is larger than 8388608 bytes (MAX_ANSWER_BYTES)" in err["message"], \
        err["message"]
    assert run.results["verdict"] == "error" and run.code == 2
    assert not project.store_lines()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_bounded_client_keeps_the_environments_proxy(
        provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the SDK's own default client, so HTTPS_PROXY is used as before; the proxy's
    # connections are held to the deadline too
    from agent_eval.judge.config import JudgeConfig
    from agent_eval.judge.http import _Backend
    from agent_eval.judge.providers import make_provider

    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    config = JudgeConfig.model_validate({"provider": provider, "model": "m",
                                         "api_key_env": "JUDGE_TEST_KEY"})
    got: Any = make_provider(config)
    http = got.client._client
    proxies = [t for t in http._mounts.values() if t is not None]
    assert [type(t._pool).__name__ for t in proxies] == ["HTTPProxy"]
    for transport in (http._transport, *proxies):
        assert isinstance(transport._pool._network_backend, _Backend)


MESSAGE = json.dumps({"id": "m1", "type": "message", "role": "assistant", "model": "m",
                      "content": [{"type": "text", "text": GOOD}], "stop_reason": "end_turn",
                      "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()


@contextmanager
def rate_limited_once(retry_after: str, data: bytes) -> Iterator[tuple[str, list[float]]]:
    """A loopback endpoint whose first answer is HTTP 429 with ``Retry-After:
    retry_after`` and every later one ``data`` (HTTP 200). Yields its address and the
    times of the requests."""
    times: list[float] = []

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.read_body()
            times.append(time.monotonic())
            body = data
            if len(times) == 1:
                body = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
                self.send_response(429)
                self.send_header("Retry-After", retry_after)
            else:
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Handler) as url:
        yield url, times


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_servers_short_retry_after_is_waited_not_the_whole_deadline(
        provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A 429 saying "Retry-After: 1": the SDK waits 1 s and asks again, as it did before the
    # deadline. The deadline put what was left of timeout_s (8 s here) in its place, so the
    # SDK slept 8 s and its retry found the deadline passed: a judge/error (after 8 s)
    # where the call succeeds after 1 s. Only a longer Retry-After is cut to what is left.
    from agent_eval.judge.config import JudgeConfig
    from agent_eval.judge.prompts import Prompt
    from agent_eval.judge.providers import make_provider

    monkeypatch.setenv("JUDGE_TEST_KEY", "sk-test-not-a-secret")
    with rate_limited_once("1", chat() if provider == "openai" else MESSAGE) as (url, times):
        config = JudgeConfig.model_validate({
            "provider": provider, "model": "m", "api_key_env": "JUDGE_TEST_KEY",
            "base_url": url + ("/v1" if provider == "openai" else ""), "timeout_s": 8,
            "max_retries": 1})
        with within(30, "a judge call told to retry after 1 s"):
            answer = make_provider(config).ask(Prompt("t", "system", "user",
                                                      {"type": "object"}))
    assert answer.verdict == {"reasoning": "fine", "score": 5}
    assert len(times) == 2
    assert 0.9 < times[1] - times[0] < 4, times  # the server's 1 s, not the 8 s left


KEY = "sk-test-not-a-secret"  # the project fixture's JUDGE_TEST_KEY


@contextmanager
def echoing(status: int, provider: str) -> Iterator[str]:
    """A loopback endpoint that repeats the request's API key in its answer: in the error
    message of an HTTP ``status`` answer, or (200) in the verdict's reasoning and the
    answering model's name (a proxy's error page, a compatible server's "Incorrect API
    key provided: …")."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            self.read_body()
            sent = (self.headers.get("Authorization") or "").removeprefix("Bearer ") \
                or self.headers.get("x-api-key") or ""
            if status != 200:
                body = json.dumps({"error": {"message": f"Incorrect API key provided: {sent}",
                                             "type": "invalid_request_error"}})
            else:
                verdict = json.dumps({"reasoning": f"{sent} was sent; polite", "score": 5})
                body = json.dumps(
                    {"id": "c1", "object": "chat.completion", "created": 1, "model": sent,
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": verdict}}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5}}
                    if provider == "openai" else
                    {"id": "m1", "type": "message", "role": "assistant", "model": sent,
                     "content": [{"type": "text", "text": verdict}],
                     "stop_reason": "end_turn",
                     "usage": {"input_tokens": 10, "output_tokens": 5}})
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Handler) as url:
        yield url + ("/v1" if provider == "openai" else "")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("status", [401, 200])
def test_an_api_key_the_endpoint_echoes_is_written_nowhere(project: Project, provider: str,
                                                           status: int) -> None:
    # the key went into the judge/error's message (console, results.json, SARIF, JUnit,
    # Markdown, HTML) and, echoed in a verdict, into the committed store
    with echoing(status, provider) as url:
        write(project, url, provider)
        run = project.cli("--judge", "record", "--format", "json,sarif,junit,markdown,html")
    assert "internal error" not in run.err
    written = [run.out, run.err] + [p.read_text(encoding="utf-8")
                                    for p in run.folder.iterdir() if p.is_file()]
    if status == 200:
        (line,) = project.store_lines()
        assert line["reasoning"] == "[the API key] was sent; polite"
        assert line["response_model"] == "[the API key]"
        written.append(project.store.read_text(encoding="utf-8"))
        assert run.code == 0
    else:
        (err,) = run.findings("judge/error")
        assert "Incorrect API key provided: [the API key]" in err["message"]
        assert run.code == 2
    assert len(written) >= 7
    assert not [text[:200] for text in written if KEY in text]


def test_a_placeholder_key_is_not_hidden_in_the_verdict() -> None:
    # vLLM's documented key is "EMPTY", Ollama's "ollama": a word a reasoning may hold
    from agent_eval.judge.providers import _hide

    assert _hide("ollama says: EMPTY answer, ok", "ollama") == "ollama says: EMPTY answer, ok"
    assert _hide("ok", "k") == "ok" and _hide("ok", "") == "ok"
    assert _hide("key sk-ant-0123456789 echoed", "sk-ant-0123456789") == \
        "key [the API key] echoed"


def test_an_endpoints_text_in_the_recording_log_is_one_escaped_line(project: Project) -> None:
    # the log line of the judgements not made printed the refusal as it came: its
    # "\n::error …" was a workflow command of the job, its ESC codes the terminal's
    refusal = "no\n::error file=a.py::injected\x1b[31mred\x1b]0;title\x07"
    with answering(chat({"role": "assistant", "content": None, "refusal": refusal})) as url:
        write(project, url + "/v1")
        run = project.cli("--judge", "record")
    (err,) = run.findings("judge/error")
    assert err["message"].startswith("Judge rubric: Polite. could not be judged: the model "
                                     "refused: no")
    (line,) = [x for x in run.err.splitlines() if "could not be made (first:" in x]
    assert line.endswith("could not be made (first: the model refused: no\\x0a::error "
                         "file=a.py::injected\\x1b[31mred\\x1b]0;title\\x07 (after 1 "
                         "attempt(s)))")
    assert "\x1b" not in run.err and "\x07" not in run.err
    assert not [x for x in run.err.splitlines() if x.startswith("::")]
    assert run.code == 2


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_redirect_is_a_failed_call_never_followed(project: Project, provider: str) -> None:
    """The SDKs' HTTP clients follow redirects: a 307 from the endpoint sent the prompt,
    trace text and all, on to the origin it named, and that server's verdict was recorded
    as the judge's. A redirect is now a failed call (judge/error), and the other origin
    is never asked."""
    asked: list[str] = []

    class Elsewhere(QuietHandler):
        def do_POST(self) -> None:
            asked.append(self.path)
            self.read_body()
            data = chat() if provider == "openai" else b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Elsewhere) as other:

        class Redirecting(QuietHandler):
            def do_POST(self) -> None:
                self.read_body()
                self.send_response(307)
                self.send_header("Location", other + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

        with serving(Redirecting) as url:
            write(project, url + ("/v1" if provider == "openai" else ""), provider)
            with within(60, "--judge record against a redirecting endpoint"):
                run = project.cli("--judge", "record")
    assert asked == []
    assert "internal error" not in run.err, run.err[-3000:]
    (err,) = run.findings("judge/error")
    assert "HTTP 307" in err["message"], err["message"]
    assert run.results["verdict"] == "error" and run.code == 2
    assert not project.store_lines()
