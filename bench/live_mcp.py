#!/usr/bin/env python3
"""Benchmark the live MCP side (docs/performance.md "Live MCP").

    python bench/live_mcp.py [--calls 20] [--round-trips 500] [--json]

1. Probe run: a suite with one server-everything over stdio and one probe of `--calls`
   repeats of `echo` (each checked by expect_result and max_latency_ms) is run with
   `agent-eval run` as a child process, from spawn to exit (median of 3); the results must
   pass with `--calls` calls checked.
2. Proxy overhead: an MCP SDK client calls `echo` `--round-trips` times on server-everything,
   once directly and once through `agent-eval record -- node …`; the median round trip of each
   and their difference (the proxy's cost per round trip) are reported, in one process so both
   see the same machine load.

Needs `npm ci` (node_modules/) and the test extra (the mcp SDK). Exit status 0 when the probe
run passed and the proxy's median overhead is below 5 ms, else 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" \
    / "index.js"
EXE = [sys.executable, "-m", "agent_eval"]


def probe_run(calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "agent-eval.yaml").write_text(f"""version: "1"
suite: bench
servers:
  everything:
    command: node
    args: [{json.dumps(str(EVERYTHING))}, stdio]
probes:
  - id: echo
    tool: echo
    arguments: {{message: bench}}
    expect_result: {{equals: "Echo: bench"}}
    max_latency_ms: 1000
    repeats: {calls}
""")
        times = []
        for _ in range(3):
            start = time.perf_counter()
            proc = subprocess.run([*EXE, "run", "--config", str(folder / "agent-eval.yaml"),
                                   "--output-dir", str(folder / "out"), "-q"],
                                  capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            results = json.loads((folder / "out" / "results.json").read_text())
            [probe] = [t for t in results["tests"] if t["id"] == "echo"]
            ok = proc.returncode == 0 and probe["calls_checked"] == calls
            if not ok:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                return {"ok": False}
        return {"ok": True, "calls": calls, "seconds_median": round(statistics.median(times), 2),
                "seconds_all": [round(t, 2) for t in times]}


async def _round_trips(params: StdioServerParameters, n: int) -> list[float]:
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        for i in range(20):  # warm up
            await s.call_tool("echo", {"message": f"w{i}"})
        for i in range(n):
            start = time.perf_counter()
            await s.call_tool("echo", {"message": f"m{i}"})
            out.append((time.perf_counter() - start) * 1000.0)
    return out


def proxy_overhead(n: int) -> dict[str, Any]:
    direct = StdioServerParameters(command="node", args=[str(EVERYTHING), "stdio"])
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "session.jsonl"
        proxied = StdioServerParameters(command=sys.executable, args=[
            "-m", "agent_eval", "record", "--output", str(trace), "--", "node",
            str(EVERYTHING), "stdio"])
        a = anyio.run(_round_trips, direct, n)
        b = anyio.run(_round_trips, proxied, n)
        recorded = len(trace.read_text().splitlines())
    da, db = statistics.median(a), statistics.median(b)
    return {"round_trips": n, "direct_median_ms": round(da, 3), "proxy_median_ms": round(db, 3),
            "overhead_median_ms": round(db - da, 3),
            "direct_p95_ms": round(sorted(a)[int(0.95 * n)], 3),
            "proxy_p95_ms": round(sorted(b)[int(0.95 * n)], 3),
            "messages_recorded": recorded}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--round-trips", type=int, default=500)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = {"probe_run": probe_run(args.calls), "proxy": proxy_overhead(args.round_trips)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        p, x = report["probe_run"], report["proxy"]
        print(f"probe run, {args.calls} tool calls over stdio: {p.get('seconds_median')} s "
              f"(median of 3: {p.get('seconds_all')})")
        print(f"proxy: {x['round_trips']} round trips, median {x['direct_median_ms']} ms direct, "
              f"{x['proxy_median_ms']} ms through `agent-eval record`: +"
              f"{x['overhead_median_ms']} ms; p95 {x['direct_p95_ms']} / {x['proxy_p95_ms']} ms; "
              f"{x['messages_recorded']} messages recorded")
    ok = report["probe_run"].get("ok") and report["proxy"]["overhead_median_ms"] < 5.0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
