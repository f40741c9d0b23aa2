#!/usr/bin/env python3
"""Every performance figure of docs/performance.md as a ratio measured in one run.

    python bench/ratios.py [--keep DIR] [--repeat R] [--rows a,b,...] [--exe PATH] [--json]

The machines this runs on are shared and noisy (±30 % run to run), so each figure is a pair
of runs made back to back, alternating, R times (default 3): the figure is the ratio of the
medians, and the spread is the smallest and largest ratio of one pair. Peak memory is the
child's own peak RSS from wait4() (with --jobs > 1: the sum over the process tree, sampled).

Rows (--rows picks some; default all):

  floor      end to end on 200k calls (10,000 x 20, ~25 % of calls violating a rule, about
             50k findings) and on 1M calls (50,000 x 20, the planted few), against a Python
             loop doing orjson.loads on every line of the same files      (target <= 6x);
             each with --jobs 1 (one process, like the loop) and as a user runs it (the
             default --jobs auto: one process per CPU above 8 MB of traces)
  assay      Assay's native engine on the same traces                     (target >= 5x)
  rss        peak RSS: the 200k-call corpus, 1 trace of 1M calls, 200 sequence rules on
             200k calls (hundreds of thousands of findings)               (target <= 150 MB)
  startup    `run --format json` on a one-trace suite against a bare `python -c pass`
                                                                           (target <= 10x)
  jobs       --jobs 2 against --jobs 1 on 100k calls in 5 files and on 1M calls in 50
             files; --jobs auto against --jobs 1 on 100k calls    (never slower; >= 1.8x at 1M)
  sequence   one 100k-call trace against a 1,000-step expected sequence (sequence_metric
             lcs and edit), against the same trace and suite without the sequence (< 1 s)
  detect     one file per trace (2,000 Claude Code sessions, 2,000 OpenAI chat requests):
             format auto against the explicit format:                    (target <= 1.2x)
  renderers  every output format against JSON only on the 200k-call corpus (target <= 1.5x)
  long       one trace of 200,000 calls, its calls kept mostly on disk (a CallLog, beyond
             50,000 calls) against held in a list as before: the time it costs and the
             memory it saves (no target: the price of the rss row's 1M-call figure)

Corpora are generated into a temporary folder, or kept in --keep DIR and reused. Exit status:
0 when every run exited as expected, 1 otherwise, 2 on usage errors. Targets are printed,
never enforced (this is not a test).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # bench/generate.py
from run import ChildRun, find_exe, run_child, warm_bytecode  # bench/run.py

ROWS = ("floor", "assay", "rss", "startup", "jobs", "sequence", "detect", "renderers", "long")
REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
# ~25 % of the generated calls break it (lookup_order 17 %, search_kb 8 %): one finding each
MANY_FINDINGS_TEST = "  - {id: many, metric: args_valid, policy: strict.yaml}\n"
STRICT_POLICY = (
    'version: "1"\ntools:\n'
    '  lookup_order:\n    arguments:\n      order_id: {type: string, pattern: "^X-", '
    "required: true}\n"
    "  search_kb:\n    arguments:\n      locale: {type: string, required: true}\n"
)
ALL_FORMATS = "json,sarif,junit,markdown,html"
ASSAY_REASON = (
    "not measurable here: Assay's native engine (the Rust `assay` CLI with `explain`) is "
    "not installable from the reachable registries; PyPI's assay-it 1.0.0 is Assay's Python "
    "SDK (a trace recorder whose CLI has only `doctor`), npm has no assay-it, Debian no assay"
)
# `agent-eval` with every trace's calls held in a list, whatever its length (as before
# CallLog): the other side of the long row
LISTED_CODE = ("import sys\nfrom agent_eval.readers import native\n"
               "native.LONG_TRACE = 1 << 62\n"
               "from agent_eval._cli import main\nsys.exit(main(sys.argv[1:]))\n")
FLOOR_CODE = (
    "import sys, orjson\n"
    "n = 0\n"
    "for name in sys.argv[1:]:\n"
    "    with open(name, 'rb') as fh:\n"
    "        for line in fh:\n"
    "            if line.strip():\n"
    "                orjson.loads(line)\n"
    "                n += 1\n"
    "print(n)\n"
)


@dataclass
class Figure:
    row: str
    name: str
    value: float | None
    unit: str  # "x" (a ratio), "MB", "s"
    target: str
    met: bool | None
    spread: tuple[float, float] | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    note: str = ""


class Bench:
    def __init__(self, exe: str, root: Path, repeat: int, log: Any) -> None:
        self.exe = exe
        self.root = root
        self.repeat = repeat
        self.log = log
        self.figures: list[Figure] = []
        self.failures: list[str] = []

    # ---------------------------------------------------------------- helpers
    def say(self, text: str) -> None:
        self.log.write(text + "\n")
        self.log.flush()

    def corpus(self, label: str, n: int, m: int, files: int | None = None,
               every: int = 10) -> Path:
        d = self.root / label
        want = {"traces": n, "calls_per_trace": m, "plant_every": every}
        if files is not None:
            want["files"] = files
        try:
            meta = json.loads((d / "planted.json").read_text(encoding="utf-8"))
            if all(meta.get(k) == v for k, v in want.items()):
                return d
        except (OSError, ValueError):
            pass
        self.say(f"[{label}] generating {n:,} x {m:,} ...")
        # in a child of its own: Linux gives a process forked later the bench's peak RSS as
        # the start of its own, so a corpus built here (1 GB for one trace of 1M calls)
        # would be counted in every later child's peak
        child = multiprocessing.get_context("spawn").Process(
            target=generate.generate, args=(d, n, m),
            kwargs={"files": files, "every": every, "workers": 1 if n == 1 else None})
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"generating {label} failed (exit code {child.exitcode})")
        return d

    def suite(self, corpus: Path, name: str, text: str) -> Path:
        path = corpus / name
        path.write_text(text, encoding="utf-8")
        return path

    def run_cmd(self, config: Path, out: Path, jobs: str = "1", fmt: str = "json",
                extra: tuple[str, ...] = ()) -> list[str]:
        return [self.exe, "run", "--config", str(config), "--output-dir", str(out),
                "--format", fmt, "--fail-on", "never", "--jobs", jobs, *extra]

    def once(self, cmd: list[str], tree: bool = False) -> ChildRun:
        for arg in cmd:
            if arg.endswith("/out") or arg.endswith("/out-b"):
                shutil.rmtree(arg, ignore_errors=True)
        c = run_child(cmd, sample_tree=tree)
        if c.exit_code != 0:
            tail = " | ".join((c.stderr or c.stdout).strip().splitlines()[-3:])
            self.failures.append(f"{' '.join(cmd[:4])} ... exited {c.exit_code}: {tail}")
        return c

    def pair(self, a: list[str], b: list[str], tree: bool = False
             ) -> tuple[list[ChildRun], list[ChildRun]]:
        """Runs a and b alternately, self.repeat times each (a first)."""
        ra: list[ChildRun] = []
        rb: list[ChildRun] = []
        for _ in range(self.repeat):
            ra.append(self.once(a, tree))
            rb.append(self.once(b, tree))
        return ra, rb

    def ratio(self, row: str, name: str, num: list[ChildRun], den: list[ChildRun],
              target: str, ok: Callable[[float], bool], show: bool = True,
              cpu: bool = True, **detail: Any) -> Figure:
        tn = [c.seconds for c in num]
        td = [c.seconds for c in den]
        value = statistics.median(tn) / statistics.median(td)
        pairs = [x / y for x, y in zip(tn, td, strict=True)]
        cn = statistics.median(c.cpu_seconds for c in num)
        cd = statistics.median(c.cpu_seconds for c in den)
        fig = Figure(row, name, round(value, 2), "x", target, ok(value),
                     (round(min(pairs), 2), round(max(pairs), 2)),
                     {"seconds": [round(statistics.median(tn), 3),
                                  round(statistics.median(td), 3)],
                      # the same ratio of the medians by CPU time (user + system, the
                      # workers included): steadier than the wall time here
                      "cpu_seconds": [round(cn, 3), round(cd, 3)],
                      "cpu_ratio": round(cn / cd, 2) if cpu and cd > 0 else None, **detail})
        self.figures.append(fig)
        if show:
            self.show(fig)
        return fig

    def show(self, f: Figure) -> None:
        if f.value is None:
            self.say(f"== {f.row}: {f.name}: {f.note}")
            return
        spread = f" (pairs {f.spread[0]}-{f.spread[1]})" if f.spread else ""
        mark = "" if f.met is None else (" ok" if f.met else " MISS")
        extra = ""
        if "seconds" in f.detail:
            extra = " [{} s / {} s]".format(*f.detail["seconds"])
        if f.detail.get("cpu_ratio") is not None:
            extra += " cpu {}x [{} s / {} s]".format(f.detail["cpu_ratio"],
                                                     *f.detail["cpu_seconds"])
        self.say(f"== {f.row}: {f.name}: {f.value}{f.unit}{spread}{extra}; "
                 f"target {f.target}{mark}")

    def floor_cmd(self, corpus: Path) -> list[str]:
        files = sorted(str(p) for p in (corpus / "traces").iterdir())
        return [sys.executable, "-c", FLOOR_CODE, *files]

    def findings_suite(self) -> tuple[Path, Path]:
        d = self.corpus("200k", 10_000, 20)
        base = (d / "agent-eval.yaml").read_text(encoding="utf-8")
        head, sep, tail = base.partition("scenarios:\n")
        self.suite(d, "strict.yaml", STRICT_POLICY)
        return d, self.suite(d, "findings.yaml", head + MANY_FINDINGS_TEST + sep + tail)

    # ---------------------------------------------------------------- rows
    def floor(self) -> None:
        d, cfg = self.findings_suite()
        big = self.corpus("1M", 50_000, 20, files=50)
        for corpus, config, name in ((d, cfg, "200k calls, ~50k findings"),
                                     (big, big / "agent-eval.yaml", "1M calls, few findings")):
            for jobs in ("1", "auto"):
                a, b = self.pair(self.floor_cmd(corpus),
                                 self.run_cmd(config, corpus / "out", jobs))
                self.ratio("floor", f"{name}: run --jobs {jobs} / orjson loop", b, a,
                           "<= 6x", lambda v: v <= 6, findings=_violations(corpus / "out"))

    def assay(self) -> None:
        fig = Figure("assay", "agent-eval vs assay-it explain", None, "x", ">= 5x", None,
                     note=ASSAY_REASON)
        self.figures.append(fig)
        self.show(fig)

    def rss(self) -> None:
        d, cfg = self.findings_suite()
        c = self.once(self.run_cmd(cfg, d / "out"))
        self.mb("200k calls, ~50k findings", c, findings=_violations(d / "out"))
        one = self.corpus("1x1M", 1, 1_000_000)
        c = self.once(self.run_cmd(one / "agent-eval.yaml", one / "out"))
        self.mb("1 trace of 1M calls", c, findings=_violations(one / "out"))
        seq = self.suite(d, "rules200.yaml", rules200_yaml())
        c = self.once(self.run_cmd(seq, d / "out"))
        self.mb("200 sequence rules on 200k calls", c, findings=_violations(d / "out"))

    def mb(self, name: str, c: ChildRun, **detail: Any) -> None:
        value = round(c.maxrss_kb / 1024, 1)
        fig = Figure("rss", name, value, " MB", "<= 150 MB", value <= 150,
                     detail={"seconds": round(c.seconds, 2), **detail})
        self.figures.append(fig)
        self.say(f"== rss: {name}: {value} MB in {c.seconds:.2f} s {detail}; target <= 150 MB"
                 f"{' ok' if value <= 150 else ' MISS'}")

    def startup(self) -> None:
        d = self.corpus("1x20", 1, 20)
        bare = [sys.executable, "-c", "pass"]
        run = self.run_cmd(d / "agent-eval.yaml", d / "out")
        saved, self.repeat = self.repeat, max(7, self.repeat)
        try:
            a, b = self.pair(bare, run)
        finally:
            self.repeat = saved
        self.ratio("startup", "run --format json on 1 trace / python -c pass", b, a, "<= 10x",
                   lambda v: v <= 10)

    def jobs(self) -> None:
        small = self.corpus("100k-5files", 5_000, 20, files=5)
        self.speedup(small, "100k calls in 5 files", "2", ">= 1 (never slower)", 1)
        probe = self.once(self.run_cmd(small / "agent-eval.yaml", small / "out-b", "auto"))
        if probe.exit_code == 2:
            self.failures.pop()  # not an error of the run: the option is not there
            fig = Figure("jobs", "--jobs auto", None, "x", ">= 1", None,
                         note="--jobs auto is not accepted by this build")
            self.figures.append(fig)
            self.show(fig)
        else:
            self.speedup(small, "100k calls in 5 files", "auto", ">= 1 (never slower)", 1)
        big = self.corpus("1M", 50_000, 20, files=50)
        self.speedup(big, "1M calls in 50 files", "2", ">= 1.8", 1.8)

    def speedup(self, corpus: Path, name: str, jobs: str, target: str, least: float) -> None:
        """--jobs 1 against --jobs ``jobs`` on the corpus's suite: the speed-up."""
        cfg = corpus / "agent-eval.yaml"
        a, b = self.pair(self.run_cmd(cfg, corpus / "out", "1"),
                         self.run_cmd(cfg, corpus / "out-b", jobs), tree=True)
        self.ratio("jobs", f"{name}: jobs 1 / jobs {jobs} (speed-up)", a, b, target,
                   lambda v: v >= least, cpu=False)  # (more processes, more CPU in all)

    def sequence(self) -> None:
        d = self.root / "sequence"
        (d / "traces").mkdir(parents=True, exist_ok=True)
        trace = d / "traces" / "long.jsonl"
        if not trace.exists():
            write_long_trace(trace, 100_000)
        without = self.suite(d, "plain.yaml", sequence_yaml(None))
        for metric in ("lcs", "edit"):
            cfg = self.suite(d, f"{metric}.yaml", sequence_yaml(metric))
            a, b = self.pair(self.run_cmd(without, d / "out"), self.run_cmd(cfg, d / "out-b"))
            fig = self.ratio("sequence", f"100k calls vs 1,000 steps ({metric}): with / "
                             "without the sequence", b, a, "added < 1 s", lambda v: True,
                             show=False)
            added = fig.detail["seconds"][0] - fig.detail["seconds"][1]
            fig.detail["added_seconds"] = round(added, 3)
            fig.met = added < 1
            self.show(fig)
            self.say(f"   added by the sequence: {added:.2f} s")

    def detect(self) -> None:
        for fmt, fixture, ext, vary in (
            ("claude_code", FIXTURES / "claude_code" / "discount-too-high.jsonl", "jsonl",
             b"5f0c6d7e-discount-too-high-001"),
            ("openai_chat", FIXTURES / "openai_chat" / "discount-too-high.json", "json",
             b"C-56012."),
        ):
            d = self.root / f"detect-{fmt}"
            tdir = d / "traces"
            if not (tdir / f"t1999.{ext}").exists():
                tdir.mkdir(parents=True, exist_ok=True)
                body = fixture.read_bytes()
                for i in range(2000):
                    new = vary[:-4] + f"{i:04d}".encode() if fmt == "claude_code" else vary
                    (tdir / f"t{i:04d}.{ext}").write_bytes(body.replace(vary, new))
            auto = self.suite(d, "auto.yaml", detect_yaml(ext, None))
            explicit = self.suite(d, "explicit.yaml", detect_yaml(ext, fmt))
            a, b = self.pair(self.run_cmd(explicit, d / "out"), self.run_cmd(auto, d / "out-b"))
            self.ratio("detect", f"2,000 {fmt} files: auto / format: {fmt}", b, a, "<= 1.2x",
                       lambda v: v <= 1.2)

    def renderers(self) -> None:
        d, cfg = self.findings_suite()
        a, b = self.pair(self.run_cmd(cfg, d / "out"), self.run_cmd(cfg, d / "out-b",
                                                                    fmt=ALL_FORMATS))
        fig = self.ratio("renderers", f"~50k findings: --format {ALL_FORMATS} / json", b, a,
                         "<= 1.5x", lambda v: v <= 1.5)
        fig.detail["peak_rss_mb"] = [round(max(c.maxrss_kb for c in b) / 1024, 1),
                                     round(max(c.maxrss_kb for c in a) / 1024, 1)]
        self.say("   peak RSS all formats / json: {} / {} MB".format(*fig.detail["peak_rss_mb"]))

    def long(self) -> None:
        d = self.corpus("1x200k", 1, 200_000)
        cfg = d / "agent-eval.yaml"
        logged = self.run_cmd(cfg, d / "out")
        listed = [sys.executable, "-c", LISTED_CODE, *self.run_cmd(cfg, d / "out-b")[1:]]
        a, b = self.pair(listed, logged)
        fig = self.ratio("long", "1 trace of 200k calls: time, CallLog / list", b, a, "none",
                         lambda v: True, show=False)
        fig.met = None
        fig.detail["peak_rss_mb"] = [round(max(c.maxrss_kb for c in b) / 1024, 1),
                                     round(max(c.maxrss_kb for c in a) / 1024, 1)]
        self.show(fig)
        self.say("   peak RSS CallLog / list: {} / {} MB".format(*fig.detail["peak_rss_mb"]))


def summary(figures: list[Figure]) -> str:
    """The figures as a Markdown table (docs/performance.md)."""
    lines = ["| row | figure | value | pairs (min-max) | target | met |",
             "|---|---|---|---|---|---|"]
    for f in figures:
        if f.value is None:
            lines.append(f"| {f.row} | {f.name} | {f.note} | | {f.target} | |")
            continue
        value = f"{f.value}{f.unit}"
        if "added_seconds" in f.detail:
            value += f" (+{f.detail['added_seconds']} s)"
        if "seconds" in f.detail and isinstance(f.detail["seconds"], list):
            value += " ({} s / {} s)".format(*f.detail["seconds"])
        if f.detail.get("cpu_ratio") is not None:
            value += f"; CPU {f.detail['cpu_ratio']}x"
        if "findings" in f.detail and f.detail["findings"] is not None:
            value += f", {f.detail['findings']:,} findings"
        spread = f"{f.spread[0]}-{f.spread[1]}" if f.spread else ""
        met = "" if f.met is None else ("yes" if f.met else "no")
        lines.append(f"| {f.row} | {f.name} | {value} | {spread} | {f.target} | {met} |")
    return "\n".join(lines) + "\n"


_COUNTS = re.compile(rb'"counts":\s*\{[^{}]*?"violations":\s*(\d+)')


def _violations(out: Path) -> int | None:
    """``counts.violations`` of a results.json, read from its head: parsing a file of
    millions of findings here would grow this process, and a child started from a large
    process reports that process's peak as its own (Linux keeps the peak RSS across exec)."""
    try:
        with open(out / "results.json", "rb") as fh:
            m = _COUNTS.search(fh.read(1 << 16))
    except OSError:
        return None
    return int(m.group(1)) if m else None


def rules200_yaml() -> str:
    """200 sequence rules over the generated corpus's tools (most of them fire often)."""
    tools = generate.KNOWN_TOOLS
    rules: list[str] = []
    for i in range(200):
        t, u = tools[i % len(tools)], tools[(i * 7 + 3) % len(tools)]
        kind = i % 5
        if kind == 0:
            rules.append(f"      - {{type: blocklist, tools: [{t}]}}")
        elif kind == 1:
            rules.append(f"      - {{type: before, first: {u}, then: [{t}]}}")
        elif kind == 2:
            rules.append(f"      - {{type: immediately_before, first: {u}, then: {t}}}")
        elif kind == 3:
            rules.append(f"      - {{type: after, tool: {t}, then: {u}, within: 1}}")
        else:
            rules.append(f"      - {{type: count, tool: {t}, max: 0}}")
    return ('version: "1"\nsuite: rules200\ntraces: traces/*.jsonl\ntests:\n'
            "  - id: order\n    metric: sequence_valid\n    rules:\n" + "\n".join(rules) + "\n")


SEQ_TOOLS = ["search_kb", "lookup_order", "get_customer", "send_email", "search_orders",
             "track_shipment", "issue_refund", "create_ticket", "api_call", "escalate"]


def write_long_trace(path: Path, calls: int) -> None:
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "trace_start", "trace_id": "long", "scenario": "long",
                             "input": "a long session"}) + "\n")
        for i in range(calls):
            fh.write(json.dumps({"type": "tool_call", "tool": rng.choice(SEQ_TOOLS),
                                 "id": f"c{i}", "arguments": {}}) + "\n")
        fh.write(json.dumps({"type": "trace_end", "output": "done"}) + "\n")


def sequence_yaml(metric: str | None) -> str:
    rng = random.Random(11)
    steps = [rng.choice([*SEQ_TOOLS, "search_*", "*_order*"]) for _ in range(1000)]
    expect = "      tools: [search_kb]\n"
    if metric is not None:
        expect += (f"      sequence: [{', '.join(json.dumps(s) for s in steps)}]\n"
                   f"      sequence_mode: exact\n      sequence_metric: {metric}\n"
                   "      sequence_severity: warning\n")
    return ('version: "1"\nsuite: sequence\ntraces: traces/*.jsonl\ntests: []\n'
            "scenarios:\n  - id: long\n    expect:\n" + expect)


def detect_yaml(ext: str, fmt: str | None) -> str:
    return ('version: "1"\nsuite: detect\n' + (f"format: {fmt}\n" if fmt else "")
            + f"traces: traces/*.{ext}\ntests:\n"
            '  - {id: blocked, metric: tool_blocklist, blocklist: ["admin_*"]}\n')


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--keep", type=Path, help="keep corpora in DIR and reuse them")
    ap.add_argument("--repeat", type=int, default=3, help="pairs per figure (default 3)")
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ",".join(ROWS))
    ap.add_argument("--exe", help="agent-eval executable (default: on PATH)")
    ap.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    ns = ap.parse_args(argv)
    rows = [r.strip() for r in ns.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown or ns.repeat < 1:
        ap.error(f"unknown rows {unknown} (known: {', '.join(ROWS)})" if unknown
                 else "--repeat must be at least 1")
    exe = find_exe(ns.exe)
    if exe is None:
        ap.error("agent-eval executable not found (put it on PATH or pass --exe PATH)")
    log = sys.stderr
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if ns.keep is not None:
        root = ns.keep
        root.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="agent-eval-ratios-")
        root = Path(tmp.name)
    started = time.time()
    bench = Bench(exe, root, ns.repeat, log)
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(),
               "platform": platform.platform(), "load": os.getloadavg()}
    bench.say(f"{exe}; {machine}; repeat {ns.repeat}; {warm_bytecode(exe)}")
    try:
        for row in rows:
            getattr(bench, row)()
    finally:
        if tmp is not None:
            tmp.cleanup()
    machine["load_after"] = os.getloadavg()
    bench.say(f"done in {time.time() - started:.0f} s; load {machine['load_after']}")
    for f in bench.failures:
        bench.say(f"FAIL {f}")
    out = sys.stderr if ns.json else sys.stdout
    out.write(summary(bench.figures))
    if ns.json:
        sys.stdout.write(json.dumps({"exe": exe, "machine": machine, "repeat": ns.repeat,
                                     "figures": [asdict(f) for f in bench.figures],
                                     "failures": bench.failures}, indent=1) + "\n")
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
