"""A raw Streamable HTTP MCP server (no SDK) whose tools fail at the HTTP level, for the
tests of errors the SDK's HTTP client makes up. `python broken_http_server.py PORT
[silent]`: silent never answers initialize; else initialize and tools/list are answered
properly, and a tools/call of

big_event   answers with an event stream whose one event is over the SDK's 1 MiB limit
crash       answers HTTP 500 with a text body (no JSON-RPC error)
html        answers 200 with a text/html page
not_json    answers 200 application/json with a body that is not JSON
reject      answers a JSON-RPC error (-32602 "bad arguments"): the server's own answer
huge_body   answers its result ("Echo: hello") in a JSON body padded with 65 MiB of spaces
"""

from __future__ import annotations

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOOLS = ["big_event", "crash", "html", "not_json", "reject", "huge_body"]
SILENT = sys.argv[2:] == ["silent"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # no stream for server-initiated messages
        self.reply(405, "text/plain", b"")

    def do_DELETE(self) -> None:
        self.reply(200, "text/plain", b"")

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        if "id" not in message:
            self.reply(202, "text/plain", b"")
            return
        mid, method = message["id"], message["method"]
        result: dict[str, object] = {}
        if method == "initialize" and SILENT:
            time.sleep(60)
            return
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "broken-http", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]}
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "big_event":
                self.reply(200, "text/event-stream", b"event: message\ndata: "
                           + b"x" * (1 << 21) + b"\n\n")
                return
            if name == "crash":
                self.reply(500, "text/plain", b"Internal Server Error")
                return
            if name == "html":
                self.reply(200, "text/html", b"<html>maintenance</html>")
                return
            if name == "not_json":
                self.reply(200, "application/json", b"{oops")
                return
            if name == "huge_body":
                answer = {"jsonrpc": "2.0", "id": mid, "result": {
                    "content": [{"type": "text", "text": "Echo: hello"}]}}
                self.reply(200, "application/json",
                           json.dumps(answer).encode() + b" " * (65 << 20))
                return
            error = {"code": -32602, "message": "bad arguments"}
            self.reply(200, "application/json", json.dumps(
                {"jsonrpc": "2.0", "id": mid, "error": error}).encode())
            return
        self.reply(200, "application/json", json.dumps(
            {"jsonrpc": "2.0", "id": mid, "result": result}).encode())


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
