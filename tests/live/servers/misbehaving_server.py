"""A raw JSON-RPC MCP server over stdio (no SDK, so it can break the protocol) for the
tests of servers that misbehave mid-session. It answers initialize and tools/list (one
tool, `echo`) properly; what it does with a call is set by MISBEHAVE:

exit_on_call     exits (status 3) on a tools/call, after a line on stderr (after
                 STDERR_PADDING characters of traceback-like lines, if set), never answering
content_object   answers a tools/call with `content` as an object, not a list (not a
                 valid CallToolResult)
exit_on_prompt   lists a prompt `greet` with a required argument `city`; answers a
                 prompts/get that has it, exits on one without it
prompt_cursor_loop   each prompts/list page lists `greet` and gives the cursor `again`
duplicate_tool   tools/list lists `echo` twice: first described by ECHO_DESCRIPTION, then
                 as "Echo." (the only entry in the other modes)
prompt_pages_endless page N of prompts/list lists `pN` and gives the cursor N+1
stderr_flood     on initialize: writes STDERR_MIB MiB to stderr, then a last line, and
                 exits (status 3) without answering
answer_ahead     on tools/list: first an error response to the next request's id (not
                 yet sent), then the listing; exits on a tools/call (as exit_on_call)
stdout_noise     writes a text line and a JSON value that is no message to stdout before
                 answering a tools/call
unreadable_answer   answers a tools/call with a line that is not JSON (its last brace
                 missing)
exit_holding_stderr  on a tools/call: starts a child that holds its stderr (30 s; its pid
                 written to HOLDER_PID_FILE; in a session of its own with HOLDER_SETSID),
                 then exits (status 3) without answering
sample_then_exit on a tools/call: sends a sampling/createMessage request with the call's
                 own id (ids are per direction), reads agent-eval's answer, exits (status 3)
template_cursor_loop each resources/templates/list page lists `demo://{id}` and gives the
                 cursor `again`; resources/read answers (in every mode)
hostile_name     tools/list lists a second tool, named by HOSTILE_NAME
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = os.environ.get("MISBEHAVE", "")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        mid, method = message.get("id"), message.get("method")
        if mid is None:
            continue  # a notification
        params = message.get("params") or {}
        if method == "initialize" and MODE == "stderr_flood":
            block = "x" * 1023 + "\n"
            for _ in range(int(os.environ["STDERR_MIB"]) * 1024):
                sys.stderr.write(block)
            sys.stderr.write("misbehaving: the last line of stderr\n")
            sys.exit(3)
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "misbehaving", "version": "1"}}})
        elif method == "tools/list":
            if MODE == "answer_ahead":
                send({"jsonrpc": "2.0", "id": mid + 1,
                      "error": {"code": -32000, "message": "an answer ahead of its request"}})
                time.sleep(0.3)  # read (and dropped, its id unknown) before the next request
            echo = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}
            tools = [echo]
            if MODE == "duplicate_tool":
                tools = [{**echo, "description": os.environ["ECHO_DESCRIPTION"]}, echo]
            elif MODE == "hostile_name":
                tools = [echo, {**echo, "name": os.environ["HOSTILE_NAME"]}]
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        elif method == "prompts/list":
            greet = {"name": "greet", "arguments": [{"name": "city", "required": True}]}
            page: dict[str, object] = {"prompts": [greet]}
            if MODE == "prompt_cursor_loop":
                page["nextCursor"] = "again"
            elif MODE == "prompt_pages_endless":
                n = int(params.get("cursor") or 0)
                page = {"prompts": [{"name": f"p{n}"}], "nextCursor": str(n + 1)}
            send({"jsonrpc": "2.0", "id": mid, "result": page})
        elif method == "resources/templates/list":
            listed: dict[str, object] = {"resourceTemplates": [
                {"uriTemplate": "demo://{id}", "name": "demo"}]}
            if MODE == "template_cursor_loop":
                listed["nextCursor"] = "again"
            send({"jsonrpc": "2.0", "id": mid, "result": listed})
        elif method == "resources/read":
            send({"jsonrpc": "2.0", "id": mid, "result": {"contents": [
                {"uri": params.get("uri"), "mimeType": "text/plain", "text": "demo"}]}})
        elif method == "prompts/get":
            if "city" not in (params.get("arguments") or {}) and MODE == "exit_on_prompt":
                sys.stderr.write("misbehaving: exits on a prompt without city\n")
                sys.exit(3)
            send({"jsonrpc": "2.0", "id": mid, "result": {"messages": [
                {"role": "user", "content": {"type": "text", "text": "Hello"}}]}})
        elif method == "tools/call":
            if MODE == "sample_then_exit":
                send({"jsonrpc": "2.0", "id": mid, "method": "sampling/createMessage",
                      "params": {"messages": [{"role": "user", "content": {
                          "type": "text", "text": "hi"}}], "maxTokens": 5}})
                sys.stdin.readline()  # agent-eval's answer to it
                sys.exit(3)
            if MODE == "exit_holding_stderr":
                import subprocess
                holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          start_new_session="HOLDER_SETSID" in os.environ)
                with open(os.environ["HOLDER_PID_FILE"], "w") as fh:  # the test ends it
                    fh.write(str(holder.pid))
                sys.exit(3)
            if MODE in ("exit_on_call", "answer_ahead"):
                for _ in range(int(os.environ.get("STDERR_PADDING", "0")) // 50):
                    sys.stderr.write('  File "server.py", line 1, in <module>: padding\n')
                sys.stderr.write("misbehaving: exits on tools/call\n")
                sys.exit(3)
            if MODE == "unreadable_answer":
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {
                    "content": [{"type": "text", "text": "Echo: hello"}]}})[:-1] + "\n")
                sys.stdout.flush()
                continue
            if MODE == "stdout_noise":
                sys.stdout.write('debug: calling echo\n{"not": "a message"}\n')
            content: object = {"type": "text", "text": "Echo: hello"}
            if MODE != "content_object":
                content = [content]
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": content}})
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
