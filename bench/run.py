#!/usr/bin/env python3
"""Benchmark `agent-eval run` end to end on synthetic corpora (docs/performance.md).

    python bench/run.py [--sizes 10000x20,100000x20] [--jobs 1[,2]] [--format native|otlp]
                        [--keep DIR] [--exe PATH] [--repeat R] [--json] [--check-targets]

For each size N x M it generates the corpus with bench/generate.py (into a temporary folder, or
reuses --keep DIR/<size> when it holds the same corpus), then times

    agent-eval run --config DIR/agent-eval.yaml --output-dir DIR/out --format json --fail-on never

as a child process from spawn to exit, takes the child's peak RSS from wait4(), reads
DIR/out/results.json and checks it: counts.tool_calls == N*M, counts.traces == N, no input errors,
and a violation count > 0 for every planted rule (the exact expected counts are in
DIR/planted.json; a mismatch is reported). It also times `agent-eval --version` (median of 5).

Exit status: 0 when every run completed and passed its checks (and, with --check-targets, met
the targets), 1 otherwise, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate  # bench/generate.py, next to this file

# Targets (docs/performance.md "Numbers", the last column); 2-core machine.
TARGET_CALLS_PER_S = 100_000
TARGET_RSS_MB = 150.0
TARGET_STARTUP_MS = 300.0
TARGET_SCALING = 1.7

# Rule ids an engine may reasonably use for a planted kind (the first is the expected one).
RULE_ALIASES: dict[str, tuple[str, ...]] = {
    "args_valid/additional_arguments": (
        "args_valid/additional_arguments",
        "args_valid/additionalProperties",
        "args_valid/additional_properties",
    ),
}


@dataclass
class RunResult:
    size: str
    traces: int
    calls_per_trace: int
    format: str
    jobs: int
    tool_calls: int
    gen_seconds: float | None
    seconds: float
    calls_per_s: float
    peak_rss_mb: float
    tree_peak_rss_mb: float | None
    exit_code: int
    violations: int | None
    counts: dict[str, Any]
    by_rule: dict[str, dict[str, int]]
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------------------------
# Child processes
# --------------------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        kids: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids += [int(x) for x in fh.read().split()]
        return kids
    except OSError:
        return []


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class TreeSampler(threading.Thread):
    """Samples the summed RSS of a process and its descendants (for --jobs > 1)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            total = 0
            todo = [self.pid]
            while todo:
                p = todo.pop()
                total += _rss_bytes(p)
                todo += _children(p)
            self.peak = max(self.peak, total)
            self.stop.wait(self.interval)


@dataclass
class ChildRun:
    exit_code: int
    seconds: float
    maxrss_kb: int
    tree_peak_bytes: int | None
    stdout: str
    stderr: str
    # user + system CPU of the child and of the children it waited for (--jobs workers),
    # from wait4(): steadier than the wall time on a shared machine
    cpu_seconds: float = 0.0


def run_child(cmd: list[str], sample_tree: bool = False) -> ChildRun:
    """Run cmd; wall time from spawn to exit; peak RSS of this very child from wait4()."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        sampler = TreeSampler(proc.pid) if sample_tree else None
        if sampler:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
        if sampler:
            sampler.stop.set()
            sampler.join()
        out.seek(0)
        err.seek(0)
        return ChildRun(
            exit_code=proc.returncode,
            seconds=seconds,
            maxrss_kb=usage.ru_maxrss,  # kilobytes on Linux
            tree_peak_bytes=sampler.peak if sampler else None,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            cpu_seconds=usage.ru_utime + usage.ru_stime,
        )


def find_exe(given: str | None) -> str | None:
    if given:
        return given if (Path(given).exists() or shutil.which(given)) else None
    found = shutil.which("agent-eval")
    if found:
        return found
    beside = Path(sys.executable).with_name("agent-eval")  # the venv running this script
    return str(beside) if beside.exists() else None


WARM_CODE = ("import agent_eval, compileall, os; "
             "compileall.compile_dir(os.path.dirname(agent_eval.__file__), quiet=1)")


def warm_bytecode(exe: str) -> str:
    """Compiles the bytecode of the agent_eval package that ``exe`` runs, as ``pip install``
    does: with ``PYTHONDONTWRITEBYTECODE`` set (this project's CI and sandbox set it) an
    editable checkout would otherwise compile every module it imports on every run, and a
    start-up figure would measure the compiler. Returns what was done, for the log."""
    python = sys.executable
    try:
        with open(exe, "rb") as f:
            first = f.readline(4096)
        if first.startswith(b"#!"):
            named = first[2:].decode("utf-8", "replace").strip().split()[0]
            if Path(named).exists():
                python = named
    except OSError:
        pass
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    r = subprocess.run([python, "-c", WARM_CODE], env=env, capture_output=True, text=True,
                       check=False)
    if r.returncode != 0:
        return f"bytecode not compiled ({python}: {r.stderr.strip()[-200:]})"
    return f"bytecode compiled for {python}"


def startup_ms(exe: str, n: int = 5) -> tuple[float, list[float], str]:
    times: list[float] = []
    version = ""
    for _ in range(n):
        r = run_child([exe, "--version"])
        if r.exit_code != 0:
            raise RuntimeError(f"`{exe} --version` exited {r.exit_code}: {r.stderr.strip()}")
        times.append(r.seconds * 1000)
        version = (r.stdout or r.stderr).strip()
    return statistics.median(times), times, version


# --------------------------------------------------------------------------------------------
# Corpus and checks
# --------------------------------------------------------------------------------------------


def parse_size(text: str) -> tuple[int, int]:
    def num(s: str) -> int:
        s = s.strip().lower().replace("_", "").replace(",", "")
        mult = 1
        if s.endswith("k"):
            mult, s = 1000, s[:-1]
        elif s.endswith("m"):
            mult, s = 1_000_000, s[:-1]
        return int(float(s) * mult)

    try:
        n, m = text.lower().split("x")
        return num(n), num(m)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad size {text!r}; expected NxM, e.g. 10000x20"
        ) from None


def corpus_label(n: int, m: int, fmt: str, seed: int, scenarios: bool) -> str:
    label = f"{n}x{m}"
    if fmt != "native":
        label += f"-{fmt}"
    if seed != 1:
        label += f"-seed{seed}"
    if not scenarios:
        label += "-noscn"
    return label


def corpus_matches(d: Path, n: int, m: int, fmt: str, seed: int, scenarios: bool) -> bool:
    try:
        meta = json.loads((d / "planted.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    want = {"traces": n, "calls_per_trace": m, "format": fmt, "seed": seed, "scenarios": scenarios}
    return all(meta.get(k) == v for k, v in want.items()) and (d / "agent-eval.yaml").exists()


def rule_counts(results: dict[str, Any]) -> Counter[str]:
    got: Counter[str] = Counter()
    for test in results.get("tests") or []:
        for v in test.get("violations") or []:
            got[str(v.get("rule", "?"))] += 1
    return got


def got_for(kind: str, got: Counter[str]) -> int:
    names = RULE_ALIASES.get(kind, (kind,))
    return sum(n for rule, n in got.items() if rule in names or rule.startswith(kind + "/"))


def check_results(
    out: Path, n: int, m: int, expected: dict[str, int], res: RunResult
) -> dict[str, Any]:
    path = out / "results.json"
    try:
        results: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        res.problems.append(f"cannot read {path}: {e}")
        return {}
    counts = results.get("counts") or {}
    res.counts = counts
    res.violations = counts.get("violations")
    if counts.get("tool_calls") != n * m:
        res.problems.append(f"counts.tool_calls = {counts.get('tool_calls')}, expected {n * m}")
    if counts.get("traces") != n:
        res.problems.append(f"counts.traces = {counts.get('traces')}, expected {n}")
    if counts.get("input_errors"):
        res.problems.append(f"counts.input_errors = {counts.get('input_errors')}, expected 0")
    got = rule_counts(results)
    known: set[str] = set()
    for kind, want in expected.items():
        names = RULE_ALIASES.get(kind, (kind,))
        known.update(r for r in got if r in names or r.startswith(kind + "/"))
        have = got_for(kind, got)
        res.by_rule[kind] = {"expected": want, "got": have}
        if want > 0 and have == 0:
            res.problems.append(f"no {kind} violation reported ({want} planted)")
        elif have != want:
            res.notes.append(f"{kind}: {have} reported, {want} planted (one each by design)")
    for rule in sorted(set(got) - known):
        res.by_rule[rule] = {"expected": 0, "got": got[rule]}
        res.notes.append(f"{rule}: {got[rule]} reported, none planted")
    return results


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def _fmt_int(x: int | None) -> str:
    return "-" if x is None else f"{x:,}"


def print_table(runs: list[RunResult], startup: float | None, stream: TextIO) -> None:
    if startup is not None:
        mark = "ok" if startup < TARGET_STARTUP_MS else "MISS"
        stream.write(
            f"startup (agent-eval --version, median of 5): {startup:.0f} ms "
            f"[target < {TARGET_STARTUP_MS:.0f} ms: {mark}]\n"
        )
    head = (
        "size",
        "fmt",
        "jobs",
        "calls",
        "seconds",
        "calls/s",
        "peak RSS MB",
        "violations",
        "check",
    )
    rows = [head]
    for r in runs:
        rss = f"{r.peak_rss_mb:.1f}"
        if r.tree_peak_rss_mb is not None:
            rss += f" (tree {r.tree_peak_rss_mb:.0f})"
        rows.append(
            (
                r.size,
                r.format,
                str(r.jobs),
                _fmt_int(r.tool_calls),
                f"{r.seconds:.2f}",
                f"{r.calls_per_s:,.0f}",
                rss,
                _fmt_int(r.violations),
                "ok" if r.ok else "FAIL",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for k, row in enumerate(rows):
        cells = [
            c.ljust(w) if i < 3 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        stream.write("  ".join(cells).rstrip() + "\n")
        if k == 0:
            stream.write("  ".join("-" * w for w in widths) + "\n")
    for r in runs:
        for p in r.problems:
            stream.write(f"FAIL {r.size} jobs={r.jobs}: {p}\n")
        for note in r.notes:
            stream.write(f"note {r.size} jobs={r.jobs}: {note}\n")


def targets(runs: list[RunResult], startup: float | None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if startup is not None:
        out.append(
            {
                "name": "startup_ms",
                "value": round(startup, 1),
                "target": f"< {TARGET_STARTUP_MS:.0f}",
                "met": startup < TARGET_STARTUP_MS,
            }
        )
    runs = [r for r in runs if r.ok]  # a failed run measures nothing
    for r in runs:
        if r.jobs == 1:
            out.append(
                {
                    "name": f"calls_per_s {r.size}",
                    "value": round(r.calls_per_s),
                    "target": f">= {TARGET_CALLS_PER_S}",
                    "met": r.calls_per_s >= TARGET_CALLS_PER_S,
                }
            )
            out.append(
                {
                    "name": f"peak_rss_mb {r.size}",
                    "value": round(r.peak_rss_mb, 1),
                    "target": f"< {TARGET_RSS_MB:.0f}",
                    "met": r.peak_rss_mb < TARGET_RSS_MB,
                }
            )
    for r in runs:
        base = next((b for b in runs if b.size == r.size and b.jobs == 1), None)
        if r.jobs > 1 and base is not None and r.seconds > 0:
            speedup = base.seconds / r.seconds
            out.append(
                {
                    "name": f"speedup {r.size} jobs={r.jobs}",
                    "value": round(speedup, 2),
                    "target": f">= {TARGET_SCALING} (2 cores)",
                    "met": speedup >= TARGET_SCALING,
                }
            )
    return out


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def bench_one(
    exe: str,
    n: int,
    m: int,
    fmt: str,
    seed: int,
    scenarios: bool,
    jobs_list: list[int],
    keep: Path | None,
    repeat: int,
    log: TextIO,
) -> list[RunResult]:
    label = corpus_label(n, m, fmt, seed, scenarios)
    tmp: tempfile.TemporaryDirectory[str] | None = None
    if keep is not None:
        d = keep / label
    else:
        tmp = tempfile.TemporaryDirectory(prefix=f"agent-eval-bench-{label}-")
        d = Path(tmp.name)
    try:
        gen_seconds: float | None = None
        if keep is not None and corpus_matches(d, n, m, fmt, seed, scenarios):
            log.write(f"[{label}] reusing corpus in {d}\n")
        else:
            log.write(f"[{label}] generating {n:,} x {m} ({fmt}) into {d} ...\n")
            log.flush()
            s = generate.generate(d, n, m, seed=seed, fmt=fmt, scenarios=scenarios)
            gen_seconds = s.seconds
            log.write(
                f"[{label}] generated {s.lines:,} lines, {s.bytes / 1e6:.0f} MB "
                f"in {s.seconds:.1f} s\n"
            )
        meta = json.loads((d / "planted.json").read_text(encoding="utf-8"))
        expected: dict[str, int] = meta["expected_violations"]
        runs: list[RunResult] = []
        for jobs in jobs_list:
            out = d / "out"
            cmd = [
                exe,
                "run",
                "--config",
                str(d / "agent-eval.yaml"),
                "--output-dir",
                str(out),
                "--format",
                "json",
                "--fail-on",
                "never",
            ]
            cmd += ["--jobs", str(jobs)]  # always: the default is auto
            best: ChildRun | None = None
            for k in range(repeat):
                shutil.rmtree(out, ignore_errors=True)
                log.write(f"[{label}] jobs={jobs} run {k + 1}/{repeat}: {' '.join(cmd)}\n")
                log.flush()
                c = run_child(cmd, sample_tree=jobs > 1)
                if c.exit_code != 0:
                    best = c
                    break
                if best is None or c.seconds < best.seconds:
                    best = c
            assert best is not None
            res = RunResult(
                size=f"{n}x{m}",
                traces=n,
                calls_per_trace=m,
                format=fmt,
                jobs=jobs,
                tool_calls=n * m,
                gen_seconds=round(gen_seconds, 2) if gen_seconds is not None else None,
                seconds=round(best.seconds, 3),
                calls_per_s=round(n * m / best.seconds) if best.seconds > 0 else 0.0,
                peak_rss_mb=round(best.maxrss_kb / 1024, 1),
                tree_peak_rss_mb=(
                    round(best.tree_peak_bytes / 2**20, 1)
                    if best.tree_peak_bytes is not None
                    else None
                ),
                exit_code=best.exit_code,
                violations=None,
                counts={},
                by_rule={},
            )
            if best.exit_code != 0:
                tail = (best.stderr or best.stdout).strip().splitlines()[-5:]
                res.problems.append(f"exit code {best.exit_code}: " + " | ".join(tail))
            else:
                check_results(out, n, m, expected, res)
            runs.append(res)
        return runs
    finally:
        if tmp is not None:
            tmp.cleanup()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Benchmark `agent-eval run` end to end.")
    ap.add_argument(
        "--sizes",
        default="10000x20,100000x20",
        help="comma-separated NxM (traces x calls per trace); default %(default)s",
    )
    ap.add_argument(
        "--jobs", default="1", help="--jobs value(s) for agent-eval, comma-separated (e.g. 1,2)"
    )
    ap.add_argument("--format", choices=("native", "otlp"), default="native")
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep corpora in DIR/<size> and reuse them when present",
    )
    ap.add_argument("--exe", default=None, help="agent-eval executable (default: on PATH)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--no-scenarios",
        dest="scenarios",
        action="store_false",
        help="corpus suite without the scenario layer",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per point; the fastest counts")
    ap.add_argument(
        "--json",
        action="store_true",
        help="write the results as JSON to stdout (the table goes to stderr)",
    )
    ap.add_argument(
        "--check-targets", action="store_true", help="exit 1 when a performance target is missed"
    )
    ns = ap.parse_args(argv)

    try:
        sizes = [parse_size(s) for s in ns.sizes.split(",") if s.strip()]
        jobs_list = [int(j) for j in ns.jobs.split(",") if j.strip()]
    except (argparse.ArgumentTypeError, ValueError) as e:
        ap.error(str(e))
    if not sizes or not jobs_list or min(jobs_list) < 1 or ns.repeat < 1:
        ap.error("need at least one size, --jobs >= 1 and --repeat >= 1")
    exe = find_exe(ns.exe)
    if exe is None:
        ap.error("agent-eval executable not found (put it on PATH or pass --exe PATH)")

    table = sys.stderr if ns.json else sys.stdout
    log = sys.stderr
    log.write(warm_bytecode(exe) + "\n")
    try:
        startup, startup_runs, version = startup_ms(exe)
    except (RuntimeError, OSError) as e:
        log.write(f"error: {e}\n")
        return 1
    log.write(f"{exe}: {version}\n")

    runs: list[RunResult] = []
    for n, m in sizes:
        try:
            runs += bench_one(
                exe, n, m, ns.format, ns.seed, ns.scenarios, jobs_list, ns.keep, ns.repeat, log
            )
        except ValueError as e:
            ap.error(str(e))
    print_table(runs, startup, table)
    tgt = targets(runs, startup)
    for t in tgt:
        table.write(
            f"target {t['name']}: {t['value']} (want {t['target']}) "
            f"{'ok' if t['met'] else 'MISS'}\n"
        )

    if ns.json:
        doc = {
            "exe": exe,
            "version": version,
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "platform": platform.platform(),
            },
            "startup_ms": {
                "median": round(startup, 1),
                "runs": [round(x, 1) for x in startup_runs],
            },
            "runs": [asdict(r) | {"ok": r.ok} for r in runs],
            "targets": tgt,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    failed = any(not r.ok for r in runs)
    missed = any(not t["met"] for t in tgt)
    return 1 if failed or (ns.check_targets and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
