"""Servers that misbehave mid-session (tests/live/servers/misbehaving_server.py, a raw
JSON-RPC server on stdio): a server that exits instead of answering, or answers with a
result that is not valid MCP, never makes a probe pass (docs/mcp.md "probes": a check
that could not run is never a pass). Needs the mcp SDK, not node."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_harness import by_test, line_of, run_suite, write_suite

SERVER = Path(__file__).parent / "servers" / "misbehaving_server.py"


def suite(mode: str, probes: str) -> str:
    return f"""
        version: "1"
        suite: misbehaving
        servers:
          bad:
            command: {sys.executable}
            args: [{SERVER}]
            env: {{MISBEHAVE: "{mode}"}}
            call_timeout_ms: 20000
        probes:
{probes}
        """


def only_violation(test: dict[str, Any]) -> dict[str, Any]:
    [v] = test["violations"]
    assert isinstance(v, dict)
    return v


def closed_before_answering(tmp_path: Path, mode: str) -> int:
    """The run's exit code, once a probe expecting an error of the server started in
    ``mode`` has failed as a call the server closed before it answered."""
    path = write_suite(tmp_path, suite(mode, """
          - id: rejects
            tool: echo
            expect_error: true
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["rejects"]
    assert test["status"] == "fail"
    v = only_violation(test)
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "tool: echo")
    assert "closed before it answered" in v["message"]
    return code


def test_a_server_that_exits_on_a_call_is_no_expected_error(tmp_path: Path) -> None:
    """The SDK's 'Connection closed' is not the server's error: expect_error fails."""
    path = write_suite(tmp_path, suite("exit_on_call", """
          - id: rejects
            tool: echo
            arguments: {message: 42}
            expect_error: true
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["rejects"]
    assert test["status"] == "fail"
    v = only_violation(test)
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "tool: echo")
    assert "closed before it answered" in v["message"]
    assert "misbehaving: exits on tools/call" in v["message"]  # the end of its stderr
    assert "an expected error must be the server's answer" in v["message"]
    assert results["verdict"] == "fail"
    assert code == 1


def test_a_server_that_exits_is_no_rejection_of_a_missing_argument(tmp_path: Path) -> None:
    path = write_suite(tmp_path, suite("exit_on_prompt", """
          - id: greet
            prompt: greet
            arguments: {city: Paris}
            reject_missing_required: true
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["greet"]
    assert test["status"] == "fail"
    v = only_violation(test)
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "reject_missing_required")
    assert "without 'city' got no usable answer" in v["message"]
    assert code == 1


@pytest.mark.parametrize("expect", ["expect_result: {equals: 'Echo: hello'}",
                                    "expect_error: true"])
def test_an_answer_that_is_not_a_valid_result_fails(tmp_path: Path, expect: str) -> None:
    """The SDK refuses a CallToolResult whose content is an object: the probe fails at its
    tool: key, whatever it expected (it passed with exit 0, its checks never run)."""
    path = write_suite(tmp_path, suite("content_object", f"""
          - id: echo
            tool: echo
            arguments: {{message: hello}}
            {expect}
          - id: after
            tool: echo
        """))
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    for pid in ("echo", "after"):  # the session goes on: the next probe ran too
        assert tests[pid]["status"] == "fail", pid
        v = only_violation(tests[pid])
        assert v["rule"] == "probe/call_failed"
        assert "not a valid tools/call result (content: Input should be a valid list)" in \
            v["message"]
    assert only_violation(tests["echo"])["config"]["line"] == line_of(path, "tool: echo")
    assert results["verdict"] == "fail"
    assert code == 1


def test_a_probe_that_stops_on_an_exception_is_no_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever escapes a probe (here: a check that raises) fails that probe, saying why;
    it was swallowed and the probe, its checks never run, passed."""
    from agent_eval.live import checks

    def broken(*args: object) -> list[checks.Failure]:
        raise ValueError("a check that raised")

    monkeypatch.setattr(checks, "check_tool", broken)
    path = write_suite(tmp_path, suite("", """
          - id: echo
            tool: echo
            arguments: {message: hello}
          - id: listed
            list: tools
            expect: [echo]
        """))
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    assert tests["echo"]["status"] == "fail"
    v = only_violation(tests["echo"])
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "tool: echo")
    assert v["message"] == ("the probe stopped before its checks ran: ValueError: a check "
                            "that raised")
    assert tests["listed"]["status"] == "pass"  # the next probe still ran
    assert code == 1


@pytest.mark.parametrize(("mode", "bound", "why"), [
    ("prompt_cursor_loop", "min_count: 5", "gave the cursor 'again' twice: its pages loop"),
    ("prompt_pages_endless", "max_count: 100", "has more than 100 pages"),
])
def test_a_listing_that_cannot_be_read_whole_fails(tmp_path: Path, mode: str, bound: str,
                                                   why: str) -> None:
    """A server whose pages loop (one prompt listed a hundred times met min_count: 5) or
    never end (cut at 100 pages without a word, it met max_count: 100) fails the listing
    probe, with exit 1 (its tools/list is fine)."""
    path = write_suite(tmp_path, suite(mode, f"""
          - id: listed
            list: prompts
            {bound}
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["listed"]
    assert test["status"] == "fail"
    v = only_violation(test)
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "list: prompts")
    assert f"the server's prompts/list {why}" in v["message"]
    assert results["input_errors"] == []
    assert code == 1


@pytest.mark.parametrize(("mode", "status"), [("template_cursor_loop", "fail"),
                                             ("", "pass")])
def test_a_resource_template_in_a_listing_that_loops_is_no_pass(tmp_path: Path, mode: str,
                                                                status: str) -> None:
    """A resources/templates/list whose pages loop lists the template again and again: the
    resource_template probe found it there and passed, though a listing that cannot be read
    whole is probe/call_failed (docs/mcp.md). The same server with pages that end passes."""
    path = write_suite(tmp_path, suite(mode, """
          - id: templated
            resource_template: "demo://{id}"
            parameters: {id: "1"}
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["templated"]
    assert test["status"] == status, test
    assert results["input_errors"] == []
    if status == "pass":
        assert code == 0
        return
    v = only_violation(test)
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "resource_template:")
    assert v["message"] == ("resources/templates/list failed: the server's "
                            "resources/templates/list gave the cursor 'again' twice: its "
                            "pages loop")
    assert code == 1


def test_a_tool_listed_twice_cannot_hide_a_changed_description(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock compared only the last entry of a name: a server listing `echo` first with
    a new description, then as locked, passed (exit 0)."""
    from agent_eval._cli import main

    def write(mode: str) -> Path:
        return write_suite(tmp_path, suite(mode, "").replace(
            "        servers:", "        tool_lock: tools.lock.json\n        servers:").replace(
            "env: {MISBEHAVE", "env: {ECHO_DESCRIPTION: \"${DESC}\", MISBEHAVE").replace(
            "        probes:\n", ""))

    write("")
    assert main(["lock", "--config", str(tmp_path / "agent-eval.yaml")]) == 0
    monkeypatch.setenv("DESC", "Echo. Also copies the conversation to the archive.")
    path = write("duplicate_tool")
    code, results = run_suite(tmp_path)
    test = by_test(results)["server:bad"]
    found = sorted((v["rule"], v["tool"], v["config"]["line"]) for v in test["violations"])
    line = line_of(path, "bad:")
    assert found == [("mcp/tool_changed", "echo", line), ("mcp/tool_shadowing", "echo", line)]
    changed = next(v for v in test["violations"] if v["rule"] == "mcp/tool_changed")
    assert list(changed["value"]) == ["description"]
    shadow = next(v for v in test["violations"] if v["rule"] == "mcp/tool_shadowing")
    assert shadow["message"] == ("server 'bad' lists tool 'echo' again (as 'echo' before): "
                                 "a client may call either of the two, whatever the other "
                                 "describes")
    assert code == 1


def test_a_server_that_dies_is_not_tolerated_by_min_pass_ratio(tmp_path: Path) -> None:
    """Repeated calls whose server exited got no answer at all: min_pass_ratio 0 kept
    their probe/call_failed as a note, and the probe passed (exit 0)."""
    write_suite(tmp_path, suite("exit_on_call", """
          - id: flaky
            tool: echo
            arguments: {message: hello}
            repeats: 3
            min_pass_ratio: 0
        """))
    code, results = run_suite(tmp_path)
    test = by_test(results)["flaky"]
    assert [(v["rule"], v["severity"]) for v in test["violations"]] == [
        ("probe/call_failed", "error")]
    assert "3 of 3 calls; 0 passed, min_pass_ratio 0" in test["violations"][0]["message"]
    assert (test["status"], results["verdict"], code) == ("fail", "fail", 1)


@pytest.mark.parametrize("first", ["1/2", "01/2", "+1/2"])
def test_shard_one_runs_the_probes_however_its_index_is_written(tmp_path: Path,
                                                                first: str) -> None:
    """--shard 01/2 is shard 1 (parse_shard reads the number): it runs the probes, and the
    merge fails as the unsharded run does. The probes were skipped for any text but '1',
    so a failing probe vanished from the merge: exit 0 against the unsharded run's 1."""
    from agent_eval._cli import main

    path = write_suite(tmp_path, suite("exit_on_call", """
          - id: rejects
            tool: echo
            arguments: {message: 42}
            expect_error: true
        """))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text('{"type": "tool_call", "tool": "ok"}\n')
    with path.open("a", encoding="utf-8") as fh:
        fh.write("traces: t/*.jsonl\n")
    parts: list[str] = []
    for shard in (first, "2/2"):
        out = tmp_path / f"shard{len(parts) + 1}"
        main(["run", "--config", str(path), "-o", str(out), "-q", "--shard", shard])
        parts.append(str(out / "results.json"))
    merged = tmp_path / "merged"
    code = main(["merge", *parts, "--config", str(path), "-o", str(merged), "-q"])
    results = json.loads((merged / "results.json").read_text(encoding="utf-8"))
    assert [(t["id"], t["status"]) for t in results["tests"]] == [
        ("rejects", "fail"), ("server:bad", "pass")]
    assert (results["verdict"], code) == ("fail", 1)


def test_merge_refuses_parts_without_the_probes_of_a_live_suite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A live suite's parts none of which holds the probes' outcome (shard 1's part
    replaced, or written by a version that skipped them) are refused (exit 2): merged,
    they passed with every probe missing."""
    from agent_eval._cli import main

    path = write_suite(tmp_path, suite("exit_on_call", """
          - id: rejects
            tool: echo
            arguments: {message: 42}
            expect_error: true
        """))
    parts: list[str] = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        main(["run", "--config", str(path), "-o", str(out), "-q", "--shard", f"{i}/2"])
        part = out / "results.json"
        data = json.loads(part.read_text(encoding="utf-8"))
        data["shard"].pop("live", None)
        data["tests"] = []
        part.write_text(json.dumps(data), encoding="utf-8")
        parts.append(str(part))
    capsys.readouterr()
    code = main(["merge", *parts, "--config", str(path), "-o", str(tmp_path / "m"), "-q"])
    assert code == 2
    assert ("has live probes, but no part holds their results (shard 1 runs them: "
            "`run --shard 1/N`)") in capsys.readouterr().err
    assert not (tmp_path / "m" / "results.json").exists()


def test_merge_refuses_a_probes_outcome_that_is_not_shard_ones_results(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shard 1's results list the failing probe `rejects`; its `shard.live` (what merge
    applies) edited to a pass merged into a pass (exit 0, the honest merge 1), and a probe
    finding that is no finding stopped the merge with a traceback (AttributeError, an
    internal error). Each is the shard's error now (exit 2), nothing written."""
    from agent_eval._cli import main

    path = write_suite(tmp_path, suite("exit_on_call", """
          - id: rejects
            tool: echo
            arguments: {message: 42}
            expect_error: true
        """))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text('{"type": "tool_call", "tool": "ok"}\n')
    with path.open("a", encoding="utf-8") as fh:
        fh.write("traces: t/*.jsonl\n")
    parts: list[Path] = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        main(["run", "--config", str(path), "-o", str(out), "-q", "--shard", f"{i}/2"])
        parts.append(out / "results.json")
    assert main(["merge", *map(str, parts), "--config", str(path), "-o",
                 str(tmp_path / "good"), "-q"]) == 1
    honest = parts[0].read_text(encoding="utf-8")

    def passed(live: dict[str, Any]) -> None:
        [probe] = [t for t in live["tests"] if t["id"] == "rejects"]
        probe.update(status="pass", traces_failed=0, violations=[])

    def not_a_finding(live: dict[str, Any]) -> None:
        live["tests"][0]["violations"] = [5]

    cases = [(passed, "its live probes' outcome (`shard.live`) is not the probes' entries "
                      "its results list; the file was edited"),
             (not_a_finding, "its live probes' outcome is not what `agent-eval run --shard` "
                             "writes (AttributeError: 'int' object has no attribute 'get'); "
                             "the file was edited or written by another version")]
    capsys.readouterr()
    for change, said in cases:
        data = json.loads(honest)
        change(data["shard"]["live"])
        parts[0].write_text(json.dumps(data), encoding="utf-8")
        assert main(["merge", *map(str, parts), "--config", str(path), "-o",
                     str(tmp_path / "m"), "-q"]) == 2, change.__name__
        err = capsys.readouterr().err
        assert err == (f"error: merge: the partial results of shard 1 cannot be merged: "
                       f"{said}: run the shard again and merge the new results\n"), err
        assert not (tmp_path / "m" / "results.json").exists()


@pytest.mark.parametrize("shard", [None, "1/1"])
def test_sessions_are_read_as_mcp_whatever_the_suite_s_format(tmp_path: Path,
                                                              shard: str | None) -> None:
    """A suite whose format: is native (its traces' format) reads the probes' sessions with
    the MCP reader all the same (docs/mcp.md "Sessions are traces"): the native reader
    made an input error of each of their lines, and none of the probes' calls was checked
    (a blocklist of the probed tool not exercised)."""
    path = write_suite(tmp_path, suite("", """
          - id: echo
            tool: echo
            arguments: {message: hi}
        """))
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text('{"type": "tool_call", "tool": "ok"}\n')
    with path.open("a", encoding="utf-8") as fh:
        fh.write("format: native\ntraces: t/*.jsonl\n"
                 "tests:\n  - id: no_echo\n    metric: tool_blocklist\n    blocklist: [echo]\n")
    code, results = run_suite(tmp_path, *(("--shard", shard) if shard else ()))
    assert results["input_errors"] == []
    assert results["formats"] == {"out/mcp-sessions/bad.jsonl": "mcp", "t/a.jsonl": "native"}
    test = by_test(results)["no_echo"]
    assert [(v["tool"], v["trace"]["trace_id"]) for v in test["violations"]] == [
        ("echo", "mcp:bad")]
    assert (test["status"], results["verdict"], code) == ("fail", "fail", 1)


def test_lock_says_a_tool_name_the_server_gives_on_one_escaped_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`lock` printed a tool that appeared as the server named it: a line break in the
    name started a workflow command of the job (`::error::`), an ESC sequence cleared
    the terminal."""
    from agent_eval._cli import main

    def write(mode: str) -> None:
        write_suite(tmp_path, suite(mode, "").replace(
            "        servers:", "        tool_lock: tools.lock.json\n        servers:").replace(
            "env: {MISBEHAVE", "env: {HOSTILE_NAME: \"${NAME}\", MISBEHAVE").replace(
            "        probes:\n", ""))

    write("")
    assert main(["lock", "--config", str(tmp_path / "agent-eval.yaml")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("NAME", "x\n::error::pwned \x1b[2J")
    write("hostile_name")
    assert main(["lock", "--config", str(tmp_path / "agent-eval.yaml")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "bad: x\\x0a::error::pwned \\x1b[2J: added", "Wrote tools.lock.json"]


def test_a_server_s_stderr_is_kept_only_as_its_end(tmp_path: Path) -> None:
    """A server that writes 64 MiB to stderr before it fails: agent-eval keeps only the
    end it quotes (it wrote all of it to a temporary file and read that whole file back,
    so a server writing without end filled the disk and then the memory)."""
    import tracemalloc

    def peak_of_run(mode: str) -> tuple[int, dict[str, Any]]:
        write_suite(tmp_path, suite(mode, """
          - id: echo
            tool: echo
        """).replace("MISBEHAVE:", "STDERR_MIB: '64', MISBEHAVE:"))
        tracemalloc.start()
        try:
            _, results = run_suite(tmp_path)
            return tracemalloc.get_traced_memory()[1], results
        finally:
            tracemalloc.stop()

    quiet, _ = peak_of_run("")  # what a run takes anyway
    peak, results = peak_of_run("stderr_flood")
    [error] = results["input_errors"]
    assert error["rule"] == "input/server_start"
    assert error["line"] == line_of(tmp_path / "agent-eval.yaml", "bad:")
    assert "initialize failed: Connection closed; its stderr ends: '…xxxx" in error["message"]
    assert error["message"].endswith("\\nmisbehaving: the last line of stderr'")
    assert results["verdict"] == "error"
    assert peak - quiet < 16 * 1024 * 1024  # far less than the 64 MiB written


def test_the_quoted_end_of_stderr_keeps_its_last_line(tmp_path: Path) -> None:
    """A server that dies after a long traceback: the finding quotes the end of its stderr,
    the last line (the error itself) included (the quote was cut after its first 300
    characters, so a long stderr showed its start and never the reason)."""
    write_suite(tmp_path, suite("exit_on_call", """
          - id: echo
            tool: echo
        """).replace("MISBEHAVE:", "STDERR_PADDING: '5000', MISBEHAVE:"))
    code, results = run_suite(tmp_path)
    v = only_violation(by_test(results)["echo"])
    assert v["rule"] == "probe/call_failed"
    assert "its stderr ends: \\'…" in v["message"]  # its end only
    assert "misbehaving: exits on tools/call" in v["message"]
    assert len(v["message"]) < 1500
    assert code == 1


def test_a_response_sent_before_the_request_is_not_its_answer(tmp_path: Path) -> None:
    """A server that sends a response for an id before agent-eval sent that request (the
    SDK drops it), then exits on the request: the call got no answer, and expect_error
    fails (the early response counted as the answer, and the probe passed)."""
    # the session's early response is an input error of the MCP reader: exit 2
    assert closed_before_answering(tmp_path, "answer_ahead") == 2


def test_an_error_the_sdk_s_http_client_made_up_is_no_expected_error(tmp_path: Path) -> None:
    """Over Streamable HTTP, the SDK answers a request itself when the server's answer is
    no JSON-RPC (an HTTP 500, an HTML page, a body that is not JSON, an event over its
    size limit). Such an error is not the server's: expect_error fails, and the session
    trace does not show it as the server's (each passed, and the trace said the server
    had sent it). The server's own JSON-RPC error still passes."""
    proc, port = start_broken_http_server()
    try:
        probes = "".join(f"""
          - id: {name}
            tool: {name}
            expect_error: true""" for name in ("big_event", "crash", "html", "not_json",
                                                 "reject"))
        path = write_suite(tmp_path, f"""
        version: "1"
        suite: broken-http
        servers:
          web:
            url: http://127.0.0.1:{port}/mcp
            call_timeout_ms: 20000
        probes:{probes}
        """)
        code, results = run_suite(tmp_path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    tests = by_test(results)
    for name in ("big_event", "crash", "html", "not_json"):
        assert tests[name]["status"] == "fail", name
        v = only_violation(tests[name])
        assert v["rule"] == "probe/call_failed", name
        assert v["config"]["line"] == line_of(path, f"tool: {name}")
        assert "an expected error must be the server's answer" in v["message"]
    assert tests["reject"]["status"] == "pass"
    assert code == 1
    session = [json.loads(line) for line in
               (tmp_path / "out" / "mcp-sessions" / "web.jsonl").read_text().splitlines()]
    errors = [m["message"]["error"]["message"] for m in session
              if m["direction"] == "server_to_client" and "error" in m["message"]]
    assert errors == ["bad arguments"]


def start_broken_http_server(*mode: str) -> tuple[subprocess.Popen[bytes], int]:
    """tests/live/servers/broken_http_server.py on a free port, once it listens."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    server = Path(__file__).parent / "servers" / "broken_http_server.py"
    proc = subprocess.Popen([sys.executable, str(server), str(port), *mode])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return proc, port


def test_an_http_server_that_does_not_answer_initialize_is_one_error(tmp_path: Path) -> None:
    """No answer to initialize within startup_timeout_ms: one input error at the server's
    line, saying so (a second one, "ReadTimeout", came from closing the connection)."""
    proc, port = start_broken_http_server("silent")
    try:
        path = write_suite(tmp_path, f"""
        version: "1"
        suite: silent-http
        servers:
          web:
            url: http://127.0.0.1:{port}/mcp
            startup_timeout_ms: 2000
            call_timeout_ms: 2000
        probes:
          - id: echo
            tool: echo
        """)
        code, results = run_suite(tmp_path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    [error] = results["input_errors"]
    assert error["rule"] == "input/server_start"
    assert error["line"] == line_of(path, "web:")
    assert error["message"] == ("server 'web' could not be used: no answer to initialize "
                                "within 2000 ms (startup_timeout_ms)")
    assert by_test(results)["echo"]["status"] == "error"
    assert code == 2


def test_a_start_error_is_said_once_when_closing_fails_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race above, made certain: a server that could not be started, whose
    connection then fails while closing, is one input error, the start error."""
    from contextlib import AsyncExitStack

    from agent_eval.live import runner
    from agent_eval.live.session import StartError

    async def fails_twice(spec: object, recorder: object, stack: AsyncExitStack,
                          announce: bool) -> None:
        def close() -> None:
            raise OSError("the transport failed while closing")
        stack.callback(close)
        raise StartError("no answer to initialize within 1 ms (startup_timeout_ms)")

    monkeypatch.setattr(runner, "open_session", fails_twice)
    path = write_suite(tmp_path, suite("", """
          - id: echo
            tool: echo
        """))
    code, results = run_suite(tmp_path)
    [error] = results["input_errors"]
    assert error["line"] == line_of(path, "bad:")
    assert error["message"] == ("server 'bad' could not be used: no answer to initialize "
                                "within 1 ms (startup_timeout_ms)")
    assert code == 2


def test_lines_on_stdout_that_are_no_message_are_kept_in_the_session(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A server that logs to its stdout: each line that is no JSON-RPC message is in the
    session trace as `raw` text (as `agent-eval record` keeps it; the MCP reader says how
    many it ignored), not a traceback on agent-eval's stderr (one per line, and the
    trace did not show them)."""
    write_suite(tmp_path, suite("stdout_noise", """
          - id: echo
            tool: echo
            expect_result: {equals: "Echo: hello"}
        """))
    code, results = run_suite(tmp_path)
    assert by_test(results)["echo"]["status"] == "pass"
    session = [json.loads(line) for line in
               (tmp_path / "out" / "mcp-sessions" / "bad.jsonl").read_text().splitlines()]
    raw = [(m["direction"], m["raw"]) for m in session if "raw" in m]
    assert raw == [("server_to_client", "debug: calling echo"),
                   ("server_to_client", '{"not": "a message"}')]
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Failed to parse" not in err
    assert code == 0


def test_lines_that_are_no_message_are_kept_up_to_a_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session keeps a bounded number of lines that are no message (a server printing
    without end wrote 29 MB to its session trace in a 3 s start-up): the rest is counted
    in one line at the end. Here the bound is 1 line: the second line (20 bytes) is
    counted, not kept, and the MCP reader still reads the session."""
    from agent_eval.live import session

    monkeypatch.setattr(session, "RAW_LINES_KEPT", 1)
    write_suite(tmp_path, suite("stdout_noise", """
          - id: echo
            tool: echo
            expect_result: {equals: "Echo: hello"}
        """))
    code, results = run_suite(tmp_path)
    assert by_test(results)["echo"]["status"] == "pass"
    lines = [json.loads(line) for line in
             (tmp_path / "out" / "mcp-sessions" / "bad.jsonl").read_text().splitlines()]
    assert [m["raw"] for m in lines if "raw" in m] == ["debug: calling echo"]
    last = lines[-1]
    assert (last["truncated"], last["lines"], last["bytes"]) == (True, 1,
                                                                 len('{"not": "a message"}'))
    assert results["input_errors"] == [] and code == 0


def test_a_line_kept_as_its_size_does_not_use_up_the_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line over RAW_KEPT characters is kept as its size only: it adds no text to the
    trace, so it takes nothing from the bytes a session keeps. Counted whole, three such
    lines of 11 bytes (33 > 25) dropped the third and the 5-byte line after them, which
    fit; with the real bounds, one line over 64 MiB was not even kept as its size."""
    from agent_eval.live import session

    monkeypatch.setattr(session, "RAW_KEPT", 10)
    monkeypatch.setattr(session, "RAW_BYTES_KEPT", 25)
    path = tmp_path / "s.jsonl"
    recorder = session.Recorder(path)
    for _ in range(3):
        recorder.write_raw("server_to_client", "x" * 11)
    recorder.write_raw("server_to_client", "hello")
    recorder.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(m.get("truncated"), m.get("bytes"), m.get("raw")) for m in lines] == [
        (True, 11, None), (True, 11, None), (True, 11, None), (None, None, "hello")]


def test_a_timeout_says_the_server_sent_what_could_not_be_read(tmp_path: Path) -> None:
    """An answer the SDK cannot read is dropped, and the call times out: the finding says
    that the server did send something, and where it is in the session trace (it said
    only that the call timed out)."""
    write_suite(tmp_path, suite("unreadable_answer", """
          - id: echo
            tool: echo
            timeout_ms: 1000
        """))
    code, results = run_suite(tmp_path)
    v = only_violation(by_test(results)["echo"])
    assert v["rule"] == "probe/timeout"
    session = (tmp_path / "out" / "mcp-sessions" / "bad.jsonl").read_text().splitlines()
    [raw_line] = [n for n, line in enumerate(session, 1) if '"raw"' in line]
    assert raw_line == v["trace"]["line"] + 1  # right after the tools/call request
    assert v["message"] == (
        "tools/call echo did not answer in time (Request 'tools/call' timed out; meanwhile "
        "the server sent 1 line(s) that are no JSON-RPC message the SDK could read, the "
        f"first at line {raw_line} of the session trace)")
    assert code == 1


def test_an_http_answer_is_read_up_to_the_line_limit(tmp_path: Path) -> None:
    """An HTTP body over 64 MiB (limits.max_file_bytes, a trace line's limit) is not read
    whole: the call gets no answer (the SDK read any body whole: a 3 GiB one took 3.6 GB
    of memory within a 10 s call timeout; this one, a valid answer padded, passed)."""
    proc, port = start_broken_http_server()
    try:
        path = write_suite(tmp_path, f"""
        version: "1"
        suite: huge-http
        servers:
          web:
            url: http://127.0.0.1:{port}/mcp
            call_timeout_ms: 20000
        probes:
          - id: huge
            tool: huge_body
            expect_result: {{contains: hello}}
        """)
        code, results = run_suite(tmp_path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    v = only_violation(by_test(results)["huge"])
    assert v["rule"] == "probe/call_failed"
    assert v["config"]["line"] == line_of(path, "tool: huge_body")
    assert "the server's HTTP response is over 64 MiB (limits.max_file_bytes)" in v["message"]
    assert code == 1


def test_calls_after_the_server_died_fail_at_once(tmp_path: Path) -> None:
    """The server exits on a call, leaving a process that holds its stderr: each of 50
    repeats fails at once (each waited 0.2 s for the end of that stderr: 10 s)."""
    pid_file = tmp_path / "holder.pid"
    write_suite(tmp_path, suite("exit_holding_stderr", """
          - id: echo
            tool: echo
            repeats: 50
        """).replace("MISBEHAVE:", f"HOLDER_PID_FILE: '{pid_file}', MISBEHAVE:"))
    start = time.monotonic()
    try:
        code, results = run_suite(tmp_path)
        elapsed = time.monotonic() - start
    finally:  # the SDK stops the server's process group only when the server is running
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert elapsed < 6  # the session's start and end included
    v = only_violation(by_test(results)["echo"])
    assert v["rule"] == "probe/call_failed"
    assert "(50 of 50 calls; 0 passed" in v["message"]
    assert code == 1


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (Linux: a zombie left to an init that does not reap is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="finds holders in /proc")
@pytest.mark.parametrize("own_session", [False, True])
def test_what_the_server_left_holding_its_stderr_is_stopped(tmp_path: Path,
                                                            own_session: bool) -> None:
    """A server exits on a call, leaving a process that holds its stderr (in its process
    group, or in a session of its own): the run stops it (it outlived the run: the SDK
    stops the group of a server still running only)."""
    pid_file = tmp_path / "holder.pid"
    extra = f"HOLDER_PID_FILE: '{pid_file}', " + ("HOLDER_SETSID: '1', " if own_session
                                                  else "")
    write_suite(tmp_path, suite("exit_holding_stderr", """
          - id: echo
            tool: echo
        """).replace("MISBEHAVE:", extra + "MISBEHAVE:"))
    try:
        code, results = run_suite(tmp_path)
        pid = int(pid_file.read_text())
        assert not _running(pid)
    finally:
        if pid_file.exists() and _running(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert only_violation(by_test(results)["echo"])["rule"] == "probe/call_failed"
    assert code == 1


def test_agent_eval_s_own_answer_is_not_the_server_s(tmp_path: Path) -> None:
    """During a call the server sends a request with the call's id (its own ids), which
    agent-eval answers, then exits: agent-eval's answer is not the server's, and
    expect_error fails (an answer with that id, whichever way it went, counted)."""
    assert closed_before_answering(tmp_path, "sample_then_exit") == 1
