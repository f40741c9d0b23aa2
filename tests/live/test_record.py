"""`agent-eval record -- COMMAND…`: a transparent stdio proxy that records.

A real MCP client (the SDK) talks to server-everything through the proxy and gets the
same answers as without it; the trace file holds every message both ways with
timestamps and is read by `agent-eval run`. A byte-level round trip shows nothing is
changed on the way, not even text that is not JSON."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_eval.live.proxy import MAX_LOGGED

sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_harness import (
    EVERYTHING,
    by_test,
    need_node,
    run_suite,
    write_suite,
)

AGENT_EVAL = [sys.executable, "-m", "agent_eval"]


async def _session(params: StdioServerParameters) -> list[Any]:
    out: list[Any] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        init = await s.initialize()
        out.append(init.server_info.name if init.server_info else None)
        out.append(sorted(t.name for t in (await s.list_tools()).tools))
        for message in ("one", "two ünïcode ✓"):
            r = await s.call_tool("echo", {"message": message})
            out.append(r.model_dump(mode="json", exclude_none=True))
        r = await s.call_tool("get-sum", {"a": "x"})
        out.append(r.is_error)
        out.append((await s.get_prompt("args-prompt", {"city": "Oslo"})).model_dump(
            mode="json", exclude_none=True))
    return out


def test_proxy_round_trip_with_a_real_client_and_server(tmp_path: Path) -> None:
    need_node()
    trace = tmp_path / "traces" / "session.jsonl"
    direct = anyio.run(_session, StdioServerParameters(
        command="node", args=[str(EVERYTHING), "stdio"]))
    proxied = anyio.run(_session, StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_eval", "record", "--output", str(trace), "--", "node",
              str(EVERYTHING), "stdio"]))
    assert proxied == direct
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    directions = [x["direction"] for x in lines]
    assert set(directions) == {"client_to_server", "server_to_client"}
    methods = [x["message"].get("method") for x in lines if x["direction"] == "client_to_server"]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert methods.count("tools/call") == 3
    assert all(x["timestamp"].endswith("+00:00") for x in lines)
    # the recording is a trace agent-eval reads: results, errors and latency are there
    write_suite(tmp_path, """
        version: "1"
        suite: recorded
        traces: traces/*.jsonl
        tests:
          - id: results
            metric: tool_results
            calls:
              - tool: echo
                args: {message: one}
                expect_result: {equals: "Echo: one"}
                max_latency_ms: 60000
              - tool: get-sum
                expect_error: {contains: expected number}
        """)
    code, results = run_suite(tmp_path)
    assert results["formats"] == {"traces/session.jsonl": "mcp"}
    assert results["counts"]["tool_calls"] == 3
    assert by_test(results)["results"]["violations"] == []
    assert code == 0


ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n" \
       "    sys.stdout.buffer.flush()\n"


def test_bytes_pass_unchanged_both_ways(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    big = b'{"jsonrpc":"2.0","method":"n","params":{"big":"' + b"x" * MAX_LOGGED + b'"}}\n'
    sent = (b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
            b'{ "jsonrpc" : "2.0", "id" : 2, "method" : "x", "params": {"a":"\\u00e9 \xc3\xa9"}}\n'
            b"not json at all\n"
            b"\n"
            + big
            + b'{"jsonrpc":"2.0","id":3,"result":{}}')  # no final newline
    proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(trace), "--", sys.executable, "-c",
                           ECHO], input=sent, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == sent
    records = [json.loads(x) for x in trace.read_bytes().splitlines()]
    assert [r["direction"] for r in records] == ["client_to_server", "server_to_client"] * 5 \
        or sorted(r["direction"] for r in records) == ["client_to_server"] * 5 + [
            "server_to_client"] * 5
    up = [r for r in records if r["direction"] == "client_to_server"]
    assert up[0]["message"] == {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert up[1]["message"]["params"] == {"a": "é é"}
    assert up[2]["raw"] == "not json at all"
    assert up[3] == {**up[3], "truncated": True, "bytes": len(big)}
    assert up[4]["message"] == {"jsonrpc": "2.0", "id": 3, "result": {}}
    # the message's own text is kept inside the record
    assert b'"message":{ "jsonrpc" : "2.0", "id" : 2' in trace.read_bytes()


def test_record_reports_a_missing_command_and_keeps_the_exit_code(tmp_path: Path) -> None:
    proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                           "no-such-command-x"], capture_output=True, timeout=60)
    assert proc.returncode == 127
    assert b"cannot start 'no-such-command-x'" in proc.stderr
    proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                           sys.executable, "-c", "raise SystemExit(7)"], input=b"",
                          capture_output=True, timeout=60)
    assert proc.returncode == 7
    proc = subprocess.run([*AGENT_EVAL, "record"], capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"give the server command after --" in proc.stderr


STUBBORN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "sys.stdin.buffer.read()\n"  # the client closed the proxy's stdin
            "time.sleep(40)\n")  # bounded: a proxy that hangs leaves nothing running long


def test_a_server_that_ignores_the_end_of_its_input_is_stopped(tmp_path: Path) -> None:
    """The client closes its end: the server gets STOP_GRACE seconds to exit, then SIGTERM,
    then SIGKILL; the proxy (and the client waiting for it) hung as long as the server ran."""
    from agent_eval.live.proxy import STOP_GRACE

    proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                           sys.executable, "-c", STUBBORN], input=b"", capture_output=True,
                          timeout=4 * STOP_GRACE + 10)
    assert proc.returncode == 128 + 9  # killed: it ignored SIGTERM too
    assert b"did not exit within 5 s of its stdin closing; stopping it (SIGTERM)" in \
        proc.stderr
    assert b"ignored SIGTERM; killing it (SIGKILL)" in proc.stderr


WRAPPER = ("import subprocess, sys\n"  # as npx, uvx or a shell script start a server
           "subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2]])\n")
WRAPPED = ("import os, signal, sys, time\n"
           "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
           "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
           "time.sleep(60)\n")  # bounded: what a proxy that hangs leaves running


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups")
def test_a_server_started_through_a_wrapper_is_stopped_with_it(tmp_path: Path) -> None:
    """A server started by a wrapper (npx, uvx, a shell script) is the wrapper's child
    and holds the proxy's pipe to the client too: SIGTERM and SIGKILL went to the wrapper
    alone, so the server that ignored the end of its input kept the proxy waiting on its
    output as long as it ran (60 s here, for ever for a real one). The server's process
    group is stopped: the proxy ends after the two graces, the server with it."""
    from agent_eval.live.proxy import STOP_GRACE

    pid_file = tmp_path / "server.pid"
    try:
        proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                               sys.executable, "-c", WRAPPER, WRAPPED, str(pid_file)],
                              input=b"", capture_output=True, timeout=4 * STOP_GRACE + 10)
        assert proc.returncode == 128 + 15  # the wrapper ended on SIGTERM (its child not)
        assert b"ignored SIGTERM; killing it (SIGKILL)" in proc.stderr
        stat = Path(f"/proc/{pid_file.read_text()}/stat")
        if stat.parent.parent.is_dir():  # gone, or a zombie left for init to reap
            time.sleep(0.5)
            assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    finally:  # (the old proxy left it sleeping)
        if pid_file.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


ESCAPER = ("import subprocess, sys\n"  # a server whose helper leaves its process group
           "subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]],\n"
           "                 start_new_session=True, stderr=subprocess.DEVNULL)\n"  # setsid
           "sys.stdin.buffer.read()\n")  # then it exits when the client is done
ESCAPED = ("import os, sys, time\n"
           "open(sys.argv[1], 'w').write(str(os.getpid()))\n"
           "time.sleep(60)\n")  # holds the server's stdout (inherited) while it sleeps


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
@pytest.mark.parametrize("found", [True, False])
def test_a_process_the_server_started_in_a_session_of_its_own_is_not_waited_for(
        tmp_path: Path, found: bool) -> None:
    """A server that starts a helper with ``setsid`` (its own session and process group)
    which inherits the server's stdout: the server exits when its input ends, but the
    helper holds the output the proxy waits to end, and stopping the server's group
    missed it, so the proxy (and the client waiting for it) hung as long as the helper
    ran. The proxy finds the processes that hold the output (Linux: /proc) and kills them;
    where it cannot (``found=False``), it stops waiting after the kill, and says so."""
    from agent_eval.live.proxy import KILL_WAIT, STOP_GRACE

    pid_file = tmp_path / "helper.pid"
    code = ("import sys; from agent_eval.live import holders\n"
            + ("" if found else "holders.output_holders = lambda fd: []\n")
            + "from agent_eval._cli import main; sys.exit(main())\n")
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code, "record", "-o",
                               str(tmp_path / "t.jsonl"), "--", sys.executable, "-c",
                               ESCAPER, ESCAPED, str(pid_file)],
                              input=b"", capture_output=True, timeout=4 * STOP_GRACE + 10,
                              env=os.environ.copy())
        took = time.monotonic() - started
        assert proc.returncode == 0, proc.stderr  # the server's own exit code
        # the two graces, then the kill's wait (twice when the helper is killed)
        assert took < 2 * STOP_GRACE + 3 * KILL_WAIT + 5, took
        helper = int(pid_file.read_text())
        stat = Path(f"/proc/{helper}/stat")
        gone = not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
        held = b"still holds the server's output; not waiting for it" in proc.stderr
        if found:
            assert gone and not held, proc.stderr
        else:
            assert held and not gone, proc.stderr
    finally:
        if pid_file.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_after_a_forwarded_signal_what_holds_the_output_is_not_waited_for(
        tmp_path: Path) -> None:
    """The client keeps the proxy's stdin open and stops the proxy with SIGTERM: the
    proxy forwards it to the server's group and the server ends, but its helper in a
    session of its own holds the output, so the proxy waited as long as the helper ran
    (60 s here). Once the server has exited, the output gets STOP_GRACE seconds, then
    what holds it is killed."""
    from agent_eval.live.proxy import KILL_WAIT, STOP_GRACE

    pid_file = tmp_path / "helper.pid"
    proxy = subprocess.Popen([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                              sys.executable, "-c", ESCAPER, ESCAPED, str(pid_file)],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() < deadline and proxy.poll() is None
            time.sleep(0.05)
        started = time.monotonic()
        proxy.send_signal(signal.SIGTERM)  # stdin stays open: no end of input
        code = proxy.wait(timeout=2 * STOP_GRACE + 10)
        took = time.monotonic() - started
        assert proxy.stderr is not None
        err = proxy.stderr.read()
        assert code == 128 + signal.SIGTERM, err  # the server's own end: by SIGTERM
        assert took < STOP_GRACE + 2 * KILL_WAIT + 4, (took, err)
        assert _state(int(pid_file.read_text())) in (None, "Z"), err
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()
        if proxy.stdin is not None:
            proxy.stdin.close()
        if pid_file.exists():
            with contextlib.suppress(OSError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


TWO_HELPERS = ("import subprocess, sys\n"  # one helper holds the server's output, one does not
               "for pid_file, out in ((sys.argv[2], None), (sys.argv[3], subprocess.DEVNULL)):\n"
               "    subprocess.Popen([sys.executable, '-c', sys.argv[1], pid_file],\n"
               "                     start_new_session=True, stdout=out,\n"
               "                     stderr=subprocess.DEVNULL)\n"
               "sys.stdin.buffer.read()\n")


def _state(pid: int) -> str | None:
    """A process's state letter (R, S, Z...), None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_only_what_holds_the_server_s_output_is_killed(tmp_path: Path) -> None:
    """The server starts two helpers in sessions of their own: one holds its output, the
    other (a daemon) does not. The first keeps the proxy waiting and is killed; the
    second is left alone, as it is when no helper holds the output (docs/mcp.md): the
    proxy killed every process it had adopted, the daemon too."""
    holder, daemon = tmp_path / "holder.pid", tmp_path / "daemon.pid"
    try:
        proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                               sys.executable, "-c", TWO_HELPERS, ESCAPED, str(holder),
                               str(daemon)],
                              input=b"", capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert _state(int(holder.read_text())) in (None, "Z"), proc.stderr
        assert _state(int(daemon.read_text())) in ("S", "R"), proc.stderr
    finally:
        for pid_file in (holder, daemon):
            if pid_file.exists():
                with contextlib.suppress(OSError):
                    os.kill(int(pid_file.read_text()), signal.SIGKILL)


LEAVES = ("import os, subprocess, sys, time\n"  # each job outlives the shell that started it
          "for _ in range(3):\n"
          "    subprocess.run(['sh', '-c', 'sleep 0.2 >/dev/null 2>&1 &'])\n"
          "time.sleep(1)\n"  # the jobs have ended
          "proxy = str(os.getppid())\n"
          "zombies = 0\n"
          "for entry in filter(str.isdigit, os.listdir('/proc')):\n"
          "    try:\n"
          "        fields = open(f'/proc/{entry}/stat').read().rsplit(')', 1)[1].split()\n"
          "    except OSError:\n"
          "        continue\n"
          "    zombies += fields[1] == proxy and fields[0] == 'Z'\n"
          "print(f'zombies: {zombies}', file=sys.stderr)\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")
def test_what_the_server_leaves_behind_is_not_left_a_zombie_of_the_proxy(
        tmp_path: Path) -> None:
    """A process the server's shell left running (``cmd &``) that ends during the
    session: the proxy made itself the subreaper of what it starts, so such processes
    became its children and stayed zombies until it exited (a long session's pid
    slots); the system reaps them."""
    proc = subprocess.run([*AGENT_EVAL, "record", "-o", str(tmp_path / "t.jsonl"), "--",
                           sys.executable, "-c", LEAVES],
                          input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"zombies: 0" in proc.stderr, proc.stderr


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_start_up_does_not_import_the_sdk(flag: str) -> None:
    code = ("import sys; from agent_eval._cli import main\n"
            f"try:\n    main([{flag!r}])\nexcept SystemExit:\n    pass\n"
            "assert 'mcp' not in sys.modules and 'anyio' not in sys.modules, 'imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
