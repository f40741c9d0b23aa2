"""Probes against real servers: @modelcontextprotocol/server-everything (stdio and
Streamable HTTP), @modelcontextprotocol/server-filesystem and mcp-server-time.

The metrics of the MCPVals seed (5.1 tool health, 5.2 resources, 5.3 prompts, 5.4
sampling) each have a probe check here, passing and failing, with the finding at the
violated key's line."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_harness import (
    EVERYTHING,
    by_test,
    line_of,
    live_path,  # noqa: F401 - a fixture
    need_node,
    run_suite,
    write_suite,
)

pytestmark = pytest.mark.usefixtures("live_path")

PASSING = """
    version: "1"
    suite: everything-live
    servers:
      everything:
        command: mcp-server-everything
        args: [stdio]
        sampling: {text: "forty-two"}
    probes:
      - id: echo
        tool: echo
        arguments: {message: hi}
        expect_result: {equals: "Echo: hi"}
        max_latency_ms: 5000
        repeats: 3
      - id: sum
        tool: get-sum
        arguments: {a: 2, b: 3}
        expect_result: {contains: "is 5", regex: "sum of 2 and 3"}
      - id: sum_rejects_text
        tool: get-sum
        arguments: {a: x}
        expect_error: {contains: expected number}
      - id: weather
        tool: get-structured-content
        arguments: {location: Chicago}
        expect_result:
          json_schema: {type: object, required: [temperature, conditions, humidity]}
      - id: sample
        tool: trigger-sampling-request
        arguments: {prompt: "What is 6*7?", maxTokens: 50}
        sampling:
          expect:
            requests: 1
            messages: {contains: "6*7"}
            system_prompt: {contains: helpful}
            max_tokens: {max: 100}
        expect_result: {contains: forty-two}
      - id: resources
        list: resources
        min_count: 5
        expect: [demo://resource/static/document/features.md]
      - id: templates
        list: resource_templates
        expect: ["demo://resource/dynamic/text/{resourceId}"]
      - id: features
        resource: demo://resource/static/document/features.md
        expect_mime_type: text/markdown
        expect_content: {contains: Features}
      - id: dynamic_text
        resource_template: "demo://resource/dynamic/text/{resourceId}"
        parameters: {resourceId: "3"}
        expect_mime_type: text/plain
        expect_content: {regex: "^Resource 3:"}
      - id: unknown_resource
        resource: demo://nope
        expect_error: {contains: not found}
      - id: prompts
        list: prompts
        expect: [simple-prompt, args-prompt]
      - id: args_prompt
        prompt: args-prompt
        arguments: {city: Paris}
        expect_arguments: {required: [city], optional: [state]}
        reject_missing_required: true
        expect_messages: {count: 1, roles: [user], content_types: [text],
                          text: {contains: Paris}}
      - id: caps
        capabilities: {tools: true, resources: {subscribe: true}, prompts: true,
                       logging: true, sampling: true}
        protocol_version: "2025-11-25"
    """


def test_a_passing_suite_passes_and_its_session_is_a_trace(tmp_path: Path) -> None:
    write_suite(tmp_path, PASSING)
    start = time.perf_counter()
    code, results = run_suite(tmp_path)
    assert time.perf_counter() - start < 60
    tests = by_test(results)
    assert code == 0, results
    assert results["verdict"] == "pass"
    assert results["input_errors"] == []
    ids = ["echo", "sum", "sum_rejects_text", "weather", "sample", "resources", "templates",
           "features", "dynamic_text", "unknown_resource", "prompts", "args_prompt", "caps",
           "server:everything"]
    assert list(tests) == ids
    assert all(t["status"] == "pass" and t["violations"] == [] for t in tests.values())
    assert tests["echo"]["calls_checked"] == 3
    assert tests["echo"]["metric"] == "mcp_probe"
    assert tests["server:everything"]["metric"] == "mcp_tools"
    # the session was recorded and read back by the MCP reader as one trace
    session = tmp_path / "out" / "mcp-sessions" / "everything.jsonl"
    assert results["formats"] == {"out/mcp-sessions/everything.jsonl": "mcp"}
    assert results["traces"][0]["id"] == "mcp:everything"
    # echo ×3, get-sum ×2, weather, sampling
    assert results["counts"]["tool_calls"] == 7
    first = json.loads(session.read_text().splitlines()[0])
    assert first["direction"] == "client_to_server"
    assert first["message"]["method"] == "initialize"
    assert first["message"]["params"]["capabilities"] == {"sampling": {}}
    assert "T" in first["timestamp"]


def test_each_finding_is_at_the_violated_key(tmp_path: Path) -> None:
    path = write_suite(tmp_path, """
        version: "1"
        suite: everything-failing
        servers:
          everything:
            command: mcp-server-everything
            args: [stdio]
        probes:
          - id: echo
            tool: echo
            arguments: {message: hi}
            expect_result:
              contains: "Echo: bye"         # M-result
          - id: slow_enough
            tool: echo
            arguments: {message: hi}
            max_latency_ms: 0               # M-latency
          - id: sum_ok
            tool: get-sum
            arguments: {a: 1, b: 2}
            expect_error: true              # M-error
          - id: sum_message
            tool: get-sum
            arguments: {a: x}
            expect_error:
              contains: division by zero    # M-errmsg
          - id: sum_bad
            tool: get-sum                   # M-failed
            arguments: {a: x}
          - id: slow
            tool: trigger-long-running-operation
            arguments: {duration: 5, steps: 5}
            timeout_ms: 300                 # M-timeout
          - id: no_sampling
            tool: echo
            arguments: {message: x}
            sampling:                       # M-sampling
              respond: {text: unused}
          - id: resources
            list: resources
            min_count: 50                   # M-count
            expect:
              - demo://nope                 # M-expect
          - id: features
            resource: demo://resource/static/document/features.md
            expect_mime_type: text/plain    # M-mime
            expect_content:
              not_contains: Features        # M-content
          - id: template
            resource_template: "demo://nope/{id}"   # M-template
            parameters: {id: "1"}
          - id: prompt
            prompt: simple-prompt
            expect_arguments:
              required: [city]              # M-args
            expect_messages:
              count: 2                      # M-count2
              roles: [assistant]            # M-roles
          - id: accepts_missing
            prompt: args-prompt
            arguments: {city: Paris}
            reject_missing_required: true   # M-reject
          - id: caps
            capabilities:
              tools: false                  # M-tools
              resources: {subscribe: false} # M-subscribe
            protocol_version: "2024-11-05"  # M-version
        """)
    code, results = run_suite(tmp_path)
    assert code == 1
    assert results["input_errors"] == []
    tests = by_test(results)
    expected = {
        "echo": [("probe/result", "M-result")],
        "slow_enough": [("probe/latency", "M-latency")],
        "sum_ok": [("probe/error", "M-error")],
        "sum_message": [("probe/error", "M-errmsg")],
        "sum_bad": [("probe/call_failed", "M-failed")],
        "slow": [("probe/timeout", "M-timeout")],
        "no_sampling": [("probe/sampling", "M-sampling")],
        "resources": [("probe/listing", "M-count"), ("probe/listing", "M-expect")],
        "features": [("probe/mime_type", "M-mime"), ("probe/result", "M-content")],
        "template": [("probe/listing", "M-template"), ("probe/call_failed", "M-template")],
        "prompt": [("probe/arguments", "M-args"), ("probe/messages", "M-count2"),
                   ("probe/messages", "M-roles")],
        "accepts_missing": [],
        "caps": [("probe/capability", "M-tools"), ("probe/capability", "M-subscribe"),
                 ("probe/capability", "M-version")],
    }
    for probe, want in expected.items():
        got = sorted((v["rule"], v["config"]["line"]) for v in tests[probe]["violations"])
        assert got == sorted((rule, line_of(path, marker)) for rule, marker in want), probe
        for v in tests[probe]["violations"]:
            assert v["config"]["file"] == "agent-eval.yaml"
            assert v["config"]["key_path"].startswith(f"probes.{probe}")
            assert v["trace"]["file"] == "out/mcp-sessions/everything.jsonl"
            assert v["trace"]["trace_id"] == "mcp:everything"
            assert v["severity"] == "error"
    # args-prompt does reject a get without `city`
    assert tests["accepts_missing"]["status"] == "pass"
    # the finding's trace line is the request's line in the session
    session = (tmp_path / "out" / "mcp-sessions" / "everything.jsonl").read_text()
    v = tests["sum_bad"]["violations"][0]
    line = json.loads(session.splitlines()[v["trace"]["line"] - 1])
    assert line["message"]["method"] == "tools/call"
    assert line["message"]["params"] == {"name": "get-sum", "arguments": {"a": "x"}}
    assert "expected number" in v["message"]
    # the timed-out call is cancelled in the session, and the rest went on
    assert '"method":"notifications/cancelled"' in session
    assert tests["no_sampling"]["violations"][0]["value"] == 0


def test_repeats_and_pass_ratio(tmp_path: Path) -> None:
    """Half of the calls fail: a ratio of 0.5 tolerates it (a note), 0.6 does not."""
    write_suite(tmp_path, """
        version: "1"
        suite: ratio
        servers:
          everything: {command: mcp-server-everything, args: [stdio]}
        probes:
          - id: tolerated
            tool: get-structured-content
            arguments: {location: Chicago}
            expect_result: {json_schema: {type: object, properties: {temperature: {minimum: 1000}}}}
            repeats: 2
            min_pass_ratio: 0
          - id: strict
            tool: get-structured-content
            arguments: {location: Chicago}
            expect_result: {json_schema: {type: object, properties: {temperature: {minimum: 1000}}}}
            repeats: 2
            min_pass_ratio: 0.5
        """)
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    tolerated, strict = tests["tolerated"], tests["strict"]
    assert tolerated["status"] == "pass"
    assert [v["severity"] for v in tolerated["violations"]] == ["note"]
    assert "2 of 2 calls; 0 passed" in tolerated["violations"][0]["message"]
    assert strict["status"] == "fail"
    assert [v["severity"] for v in strict["violations"]] == ["error"]
    assert code == 1


def test_a_server_that_crashes_at_start_is_an_input_error(tmp_path: Path) -> None:
    path = write_suite(tmp_path, """
        version: "1"
        suite: crash
        servers:
          broken:
            command: node
            args: [-e, "console.error('boom: no config'); process.exit(3)"]
          missing:
            command: no-such-mcp-server-anywhere
          everything: {command: mcp-server-everything, args: [stdio]}
        probes:
          - {id: on_broken, server: broken, tool: x}
          - {id: fine, server: everything, tool: echo, arguments: {message: a},
             expect_result: {contains: a}}
        """)
    code, results = run_suite(tmp_path)
    assert code == 2
    assert results["verdict"] == "error"
    errors = {e["line"]: e for e in results["input_errors"]}
    assert sorted(errors) == [line_of(path, "broken:"), line_of(path, "missing:")]
    broken = errors[line_of(path, "broken:")]
    assert broken["rule"] == "input/server_start"
    assert "boom: no config" in broken["message"]
    assert "not found on PATH" in errors[line_of(path, "missing:")]["message"]
    tests = by_test(results)
    assert tests["on_broken"]["status"] == "error"
    assert tests["server:broken"]["status"] == "error"
    assert tests["fine"]["status"] == "pass"  # the rest still ran


def test_a_server_that_never_answers_times_out_at_start(tmp_path: Path) -> None:
    path = write_suite(tmp_path, """
        version: "1"
        suite: hang
        servers:
          silent:
            command: node
            args: [-e, "setInterval(() => {}, 1000)"]
            startup_timeout_ms: 500
        probes:
          - {id: p, tool: x}
        """)
    start = time.perf_counter()
    code, results = run_suite(tmp_path)
    assert time.perf_counter() - start < 20
    assert code == 2
    [err] = results["input_errors"]
    assert err["line"] == line_of(path, "silent:")
    assert "no answer to initialize within 500 ms" in err["message"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_streamable_http_with_a_header_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_node()
    port = _free_port()
    proc = subprocess.Popen(["node", str(EVERYTHING), "streamableHttp"],
                            env={"PATH": "/usr/bin:/bin", "PORT": str(port),
                                 **({"HOME": str(tmp_path)})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        monkeypatch.setenv("EVERYTHING_TOKEN", "s3cret")
        path = write_suite(tmp_path, f"""
            version: "1"
            suite: http
            servers:
              remote:
                url: http://127.0.0.1:{port}/mcp
                headers:
                  Authorization: {{env: EVERYTHING_TOKEN, prefix: "Bearer "}}
              unset:
                url: http://127.0.0.1:{port}/mcp
                headers:
                  X-Key: {{env: AGENT_EVAL_TEST_UNSET_VARIABLE}}
            probes:
              - id: echo
                server: remote
                tool: echo
                arguments: {{message: over http}}
                expect_result: {{contains: "Echo: over http"}}
              - id: caps
                server: remote
                capabilities: {{tools: true}}
            """)
        code, results = run_suite(tmp_path)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    tests = by_test(results)
    assert tests["echo"]["status"] == "pass", tests["echo"]
    assert tests["caps"]["status"] == "pass"
    [err] = results["input_errors"]
    assert err["line"] == line_of(path, "unset:")
    assert "AGENT_EVAL_TEST_UNSET_VARIABLE is not set" in err["message"]
    assert code == 2
    # the secret is not in the results nor in the session trace
    assert "s3cret" not in json.dumps(results)
    assert "s3cret" not in (tmp_path / "out" / "mcp-sessions" / "remote.jsonl").read_text()


def test_filesystem_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.txt").write_text("hello from the filesystem\n")
    write_suite(tmp_path, """
        version: "1"
        suite: fs
        servers:
          files:
            command: mcp-server-filesystem
            args: [data]
        probes:
          - id: read
            tool: read_text_file
            arguments: {path: notes.txt}
            expect_result: {contains: hello from the filesystem}
          - id: outside
            tool: read_text_file
            arguments: {path: /etc/hostname}
            expect_error: {regex: "(?i)access denied|outside|not allowed"}
          - id: tools
            list: tools
            expect: [read_text_file, list_directory, write_file]
        """)
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    assert [t["status"] for t in tests.values()] == ["pass"] * 4, results
    assert code == 0


def test_time_server_from_pypi(tmp_path: Path) -> None:
    path = write_suite(tmp_path, """
        version: "1"
        suite: time
        servers:
          time:
            command: mcp-server-time
            args: [--local-timezone, Europe/Paris]
        probes:
          - id: now
            tool: get_current_time
            arguments: {timezone: Asia/Tokyo}
            expect_result:
              json_schema:
                type: object
                required: [timezone, datetime]
                properties: {timezone: {const: Asia/Tokyo}}
          - id: convert
            tool: convert_time
            arguments: {source_timezone: UTC, time: "12:00", target_timezone: Asia/Tokyo}
            expect_result: {regex: "21:00"}
          - id: bad_zone
            tool: get_current_time
            arguments: {timezone: Mars/Olympus}
            expect_error: {contains: Mars/Olympus}
          - id: wrong
            tool: convert_time
            arguments: {source_timezone: UTC, time: "12:00", target_timezone: Asia/Tokyo}
            expect_result: {regex: "22:00"}
        """)
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    assert {k: t["status"] for k, t in tests.items()} == {
        "now": "pass", "convert": "pass", "bad_zone": "pass", "wrong": "fail",
        "server:time": "pass"}
    [v] = tests["wrong"]["violations"]
    assert v["config"]["line"] == line_of(path, 'regex: "22:00"')
    assert code == 1


def test_session_traces_feed_the_other_checks(tmp_path: Path) -> None:
    """The suite's rule tests and scenarios see the probes' sessions as traces."""
    path = write_suite(tmp_path, """
        version: "1"
        suite: pipeline
        servers:
          everything: {command: mcp-server-everything, args: [stdio]}
        probes:
          - {id: echo, tool: echo, arguments: {message: hi}}
          - {id: sum, tool: get-sum, arguments: {a: 1, b: 1}}
        tests:
          - id: no_sum
            metric: tool_blocklist
            blocklist: [get-sum]
          - id: results
            metric: tool_results
            calls:
              - tool: echo
                expect_result: {contains: "Echo: hi"}
                max_latency_ms: 60000
        scenarios:
          - id: everything
            expect:
              tools: [echo, get-sum]
              sequence: [echo, get-sum]
              sequence_mode: strict
        """)
    code, results = run_suite(tmp_path)
    tests = by_test(results)
    assert [v["rule"] for v in tests["no_sum"]["violations"]] == ["tool_blocklist"]
    assert tests["no_sum"]["violations"][0]["config"]["line"] == line_of(path, "[get-sum]")
    assert tests["results"]["status"] == "pass"
    [scenario] = results["scenarios"]
    assert scenario["status"] == "pass", scenario
    assert code == 1


def test_no_timings_gives_byte_identical_results(tmp_path: Path) -> None:
    write_suite(tmp_path, PASSING)
    run_suite(tmp_path, "--no-timings")
    first = (tmp_path / "out" / "results.json").read_bytes()
    run_suite(tmp_path, "--no-timings")
    assert (tmp_path / "out" / "results.json").read_bytes() == first


def test_shards_merge_into_the_unsharded_results(tmp_path: Path) -> None:
    from agent_eval._cli import main


    write_suite(tmp_path, PASSING.replace('min_count: 5', 'min_count: 500'))
    code, whole = run_suite(tmp_path, "--no-timings")
    assert code == 1
    parts = []
    for i in (1, 2):
        out = tmp_path / f"shard{i}"
        main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir", str(out),
              "-q", "--no-timings", "--shard", f"{i}/2"])
        parts.append(str(out / "results.json"))
    shard2 = json.loads(Path(parts[1]).read_text())
    assert "live" not in shard2["shard"] and shard2["tests"] == []  # probes ran in shard 1
    merged = tmp_path / "merged"
    assert main(["merge", *parts, "--config", str(tmp_path / "agent-eval.yaml"),
                 "--output-dir", str(merged), "-q", "--no-timings"]) == 1
    got = json.loads((merged / "results.json").read_text())
    # the same, but for where the sessions were written (each run its own folder)
    text = json.dumps(got).replace("shard1/mcp-sessions", "out/mcp-sessions")
    got = json.loads(text)
    for key in ("tests", "verdict", "counts", "input_errors", "traces"):
        assert got[key] == whole[key], key
    assert main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir",
                 str(tmp_path / "shard2"), "-q", "--shard", "2/2"]) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="a file name of bytes that are not UTF-8")
def test_an_output_folder_whose_name_is_not_utf8_is_refused_before_the_probes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The probes' sessions are written under --output-dir and named in the results (each
    a trace): under b"o\\xffut" results.json could not be written (orjson refuses the lone
    surrogate U+DCFF), an internal error after the probes ran. A config error naming the
    folder escaped, before any server starts."""
    from agent_eval._cli import main

    (tmp_path / ".git").mkdir()
    write_suite(tmp_path, PASSING)
    out = tmp_path / os.fsdecode(b"o\xffut")
    capsys.readouterr()
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir",
                 str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err
    assert err.startswith("error: o\\udcffut/mcp-sessions: the probes' sessions are written "
                          "there and named in the results, but its path holds bytes that "
                          "are not UTF-8"), err
    assert not (out / "mcp-sessions").exists()  # no server was started
