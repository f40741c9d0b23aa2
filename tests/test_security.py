"""Issue 11: a pull request controls every file agent-eval reads. Each test builds the
attack the issue describes, in a temporary repository, and runs the real command line in a
child process (with a time limit, and a memory limit where the attack was about memory):
no read or write outside the repository, no crash, no hang, no blow-up; each case ends in
an input or config error at the right file:line (docs/security.md)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import read_results

import agent_eval

SRC = str(Path(agent_eval.__file__).resolve().parents[1])
SECRET = "SECRET-FROM-OUTSIDE-THE-REPOSITORY"
POLICY = """\
version: "1"
tools:
  apply_discount:
    arguments:
      percent: {type: number, max: 30}
      code: {type: string, pattern: "^(a+)+$"}
"""
SUITE = """\
version: "1"
suite: s
traces: {traces}
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
  - id: block
    metric: tool_blocklist
    blocklist: [admin_*]
"""
GIB = 1 << 30


def call(tool: str = "apply_discount", **args: Any) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, "arguments": args}) + "\n"


def repo(tmp_path: Path, traces: str | list[str] = "traces/*.jsonl", extra: str = "",
         files: dict[str, str] | None = None) -> Path:
    """A repository at tmp_path/repo: .git, the suite, its policy and trace files."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "policy.yaml").write_text(POLICY)
    (root / "agent-eval.yaml").write_text(SUITE.format(traces=json.dumps(traces)) + extra)
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def outside(tmp_path: Path) -> Path:
    """A folder beside the repository with a trace file holding a secret."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.jsonl").write_text(call(percent=50, code=SECRET))
    return folder


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    rss_mb: float  # the child's peak resident memory


# Starts the command from a small Python of its own and reports its rusage: a child
# forked from the test process itself would count the test process's resident memory
# (ru_maxrss keeps the high-water mark of the memory it had before exec), so the peak
# measured would depend on what the tests before it loaded.
LAUNCHER = """
import json, os, resource, sys
report, memory, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
pid = os.fork()
if pid == 0:
    if memory:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    os.execvp(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as fh:
    json.dump({"status": status, "maxrss": usage.ru_maxrss}, fh)
"""


def run(*args: str, cwd: Path, timeout: float = 60, memory: int | None = None,
        argv: list[str] | None = None) -> Run:
    """agent-eval (or ``argv``) in a child process, killed after ``timeout`` seconds and
    limited to ``memory`` bytes of address space; its time and peak RSS are measured."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    report = cwd / f".rusage-{os.getpid()}-{time.monotonic_ns()}.json"
    command = argv or [sys.executable, "-m", "agent_eval", *args]
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(report), str(memory or 0),
                             *command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    try:
        out, err = proc.communicate()
    finally:
        timer.cancel()
    seconds = time.monotonic() - start
    assert seconds < timeout and report.exists(), f"killed after {timeout} s: {args}"
    usage = json.loads(report.read_text())
    report.unlink()
    return Run(os.waitstatus_to_exitcode(usage["status"]), out, err, seconds,
               usage["maxrss"] / 1024)


def results(root: Path, folder: str = "out") -> dict[str, Any]:
    return read_results(root / folder)


def errors(data: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(e["rule"], e["file"], e["line"]) for e in data["input_errors"]]


def every_output(root: Path, folder: str = "out") -> str:
    return "".join(p.read_text(errors="replace") for p in (root / folder).iterdir())


ALL = ["--format", "sarif,junit,markdown,html"]


# ---------------------------------------------------------------- 1. trace paths
@pytest.mark.parametrize("pattern", ["../outside/*.jsonl", "{abs}/secret.jsonl",
                                     "traces/../../outside/secret.jsonl", "/etc/hostname"])
def test_trace_globs_leaving_the_repository_are_refused(tmp_path: Path, pattern: str) -> None:
    folder = outside(tmp_path)
    root = repo(tmp_path, [pattern.format(abs=folder), "traces/*.jsonl"],
                files={"traces/ok.jsonl": call()})
    p = run("run", "-o", "out", *ALL, cwd=root)
    assert p.returncode == 2, p.stderr
    data = results(root)
    # at the traces: line of the suite, naming the pattern, and nothing of the file
    assert errors(data) == [("input/outside_root", "agent-eval.yaml", 3)]
    assert data["counts"]["traces"] == 1
    assert pattern.format(abs=folder) in data["input_errors"][0]["message"]
    assert SECRET not in every_output(root) + p.stdout + p.stderr


def test_a_trace_file_name_that_is_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    """A file name of bytes that are not UTF-8 (git takes any bytes) came back from the
    glob as a lone surrogate, and its first finding's fingerprint could not be hashed:
    an internal error, exit 2 and no output at all (not even results.json), whatever the
    other files held. It is now refused by name like one holding control characters."""
    root = repo(tmp_path, files={"traces/ok.jsonl": call(percent=50)})
    bad = os.path.join(os.fsencode(root / "traces"), b"a\xff.jsonl")
    with open(bad, "w", encoding="utf-8") as fh:
        fh.write(call(percent=60))
    (root / "traces" / "sub\udcfe").mkdir()  # a folder's name, too
    (root / "traces" / "sub\udcfe" / "c.jsonl").write_text(call(percent=70))
    (root / "agent-eval.yaml").write_text(SUITE.format(traces=json.dumps("traces/**/*.jsonl")))
    p = run("run", "-o", "out", *ALL, cwd=root)
    assert p.returncode == 2, p.stderr
    assert "internal error" not in p.stderr
    data = results(root)
    assert errors(data) == [("input/outside_root", "traces/a\\udcff.jsonl", 0),
                            ("input/outside_root", "traces/sub\\udcfe/c.jsonl", 0)]
    assert "not UTF-8; rename the file" in data["input_errors"][0]["message"]
    assert data["counts"]["traces"] == 1  # ok.jsonl is still evaluated
    [v] = data["tests"][0]["violations"]
    assert (v["value"], v["trace"]["file"]) == (50, "traces/ok.jsonl")
    assert sorted(f.name for f in (root / "out").iterdir()) == [
        "junit.xml", "report.html", "results.json", "results.sarif", "summary.md"]


def test_symlink_to_a_file_outside_is_refused_whether_or_not_it_exists(tmp_path: Path) -> None:
    folder = outside(tmp_path)
    root = repo(tmp_path, files={"traces/ok.jsonl": call()})
    os.symlink(folder / "secret.jsonl", root / "traces" / "link.jsonl")
    os.symlink(folder / "missing.jsonl", root / "traces" / "dangling.jsonl")
    p = run("run", "-o", "out", *ALL, cwd=root)
    assert p.returncode == 2, p.stderr
    data = results(root)
    # the same error for an existing and a missing target: no existence oracle
    assert errors(data) == [("input/outside_root", "traces/dangling.jsonl", 0),
                            ("input/outside_root", "traces/link.jsonl", 0)]
    assert data["counts"]["traces"] == 1  # ok.jsonl is still evaluated
    assert SECRET not in every_output(root) + p.stdout + p.stderr


def test_a_traces_option_inside_the_repository_is_confined_too(tmp_path: Path) -> None:
    """--traces (the action's traces: input) names a folder of the repository: a link
    committed in it leads where the pull request wants, so it is refused as in a suite's
    glob. A --traces glob that itself points outside is the operator's choice."""
    folder = outside(tmp_path)
    root = repo(tmp_path, files={"traces/ok.jsonl": call()})
    os.symlink(folder / "secret.jsonl", root / "traces" / "link.jsonl")
    for pattern in ("traces/*.jsonl", str(root / "traces" / "*.jsonl")):
        p = run("run", "-o", "out", *ALL, "--traces", pattern, cwd=root)
        assert p.returncode == 2, p.stderr
        data = results(root)
        assert errors(data) == [("input/outside_root", "traces/link.jsonl", 0)]
        assert data["counts"]["traces"] == 1  # ok.jsonl is still evaluated
        assert SECRET not in every_output(root) + p.stdout + p.stderr
    p = run("run", "-q", "-o", "out", "--traces", str(folder / "*.jsonl"), cwd=root)
    assert p.returncode == 1, p.stderr  # read where it points: its violation is found
    assert results(root)["counts"]["traces"] == 1


def test_symlink_inside_the_repository_is_read(tmp_path: Path) -> None:
    root = repo(tmp_path, files={"data/real.jsonl": call(percent=50)})
    os.symlink(root / "data" / "real.jsonl", root / "traces" / "link.jsonl")
    p = run("run", "-q", "-o", "out", cwd=root)
    assert p.returncode == 1, p.stderr
    assert results(root)["counts"]["violations"] == 1


# ------------------------------------------------------------------ 4. symlink loops
def test_glob_does_not_follow_a_symlink_loop(tmp_path: Path) -> None:
    files = {f"src/pkg{i}/mod{j}.py": "" for i in range(20) for j in range(20)}
    root = repo(tmp_path, "traces/**/*.jsonl", files={**files, "traces/t.jsonl": call()})
    os.symlink("..", root / "traces" / "loop")
    os.symlink("..", root / "traces" / "loop2")  # two loops: 2**40 paths for a glob that follows
    p = run("run", "-q", "-o", "out", cwd=root, timeout=30)
    assert p.seconds < 20 and p.rss_mb < 300, (p.seconds, p.rss_mb)
    assert p.returncode == 0, p.stderr
    data = results(root)
    assert data["counts"]["traces"] == 1 and data["input_errors"] == []


# --------------------------------------------- 1b. files the config names (policies)
@pytest.mark.parametrize("policy", ["../outside/policy.yaml", "{abs}/policy.yaml",
                                    "/dev/zero", "fifo.yaml", "big.yaml"])
def test_a_policy_path_outside_the_repository_or_not_a_file_is_a_config_error(
        tmp_path: Path, policy: str) -> None:
    """A policy (or JSON Schema, or a peer's policy) path is the pull request's: it was
    read wherever it led (../../etc/passwd, whose keys the config error then showed), and
    whole (/dev/zero: MemoryError, an internal error; a FIFO: a hang)."""
    folder = outside(tmp_path)
    (folder / "policy.yaml").write_text(f"tools:\n  {SECRET}: 1\n")
    root = repo(tmp_path, files={"traces/t.jsonl": call(percent=10, code="a"),
                                 "big.yaml": "#" * (70 << 20)})
    os.mkfifo(root / "fifo.yaml")
    # line 7 of SUITE (counted by hand): "    policy: policy.yaml"
    suite = (root / "agent-eval.yaml").read_text()
    (root / "agent-eval.yaml").write_text(suite.replace(
        "policy: policy.yaml", f"policy: {policy.format(abs=folder)}"))
    p = run("run", "-q", "-o", "out", cwd=root, timeout=30, memory=GIB)
    assert p.returncode == 2, p.stderr
    reason = {"fifo.yaml": "not a regular file",
              "big.yaml": "larger than 67108864 bytes (limits.max_file_bytes)"}.get(
        policy, "outside the repository")
    assert p.stderr.startswith(f"error: agent-eval.yaml:7:5: policy file "
                               f"'{policy.format(abs=folder)}' cannot be read ({reason}"), p.stderr
    assert SECRET not in p.stderr + p.stdout and "internal error" not in p.stderr


def test_a_peer_policy_outside_the_repository_is_a_config_error(tmp_path: Path) -> None:
    folder = outside(tmp_path)
    (folder / "policy.yaml").write_text(f"tools:\n  {SECRET}: {{args: {{}}}}\n")
    root = repo(tmp_path, files={"traces/t.jsonl": call(), "eval.yaml": (
        "version: 1\nsuite: s\nmodel: trace\ntests:\n  - id: t\n    input: x\n"
        "    expected:\n      type: args_valid\n      policy: ../outside/policy.yaml\n")})
    p = run("run", "-q", "-o", "out", "-c", "eval.yaml", "-t", "traces/*.jsonl", cwd=root,
            timeout=30)
    assert p.returncode == 2, p.stderr
    # line 9, column 7 (counted by hand): the key "policy:" of the Assay test
    assert p.stderr.startswith("error: eval.yaml:9:7: policy file '../outside/policy.yaml' "
                               "cannot be read (outside the repository"), p.stderr
    assert SECRET not in p.stderr + p.stdout


def test_a_config_error_names_a_link_never_where_it_leads(tmp_path: Path) -> None:
    """`policy: p/exe.yaml` with p/exe.yaml -> /proc/self/exe said "…outside the
    repository…: ../../../root/.pyenv/versions/3.11.7/bin/python3.11": where the link led.
    A link in a loop was an internal error (RuntimeError from Path.resolve)."""
    folder = outside(tmp_path)
    root = repo(tmp_path, files={"traces/t.jsonl": call(percent=10, code="a")}, extra=(
        "  - {id: a2, metric: args_valid, policy: p/out/missing.yaml}\n"
        "  - {id: a3, metric: args_valid, policy: p/loop.yaml}\n"
        "scenarios:\n"
        "  - {id: s1, traces: traces/*.jsonl, expect: {output: {json_schema: p/s.json}}}\n"
        "  - {id: s2, traces: traces/*.jsonl, expect: {output: {json_schema: p/loop.json}}}\n"))
    (root / "p").mkdir()
    os.symlink("/proc/self/exe", root / "p" / "exe.yaml")
    os.symlink(folder, root / "p" / "out")
    os.symlink("loop.yaml", root / "p" / "loop.yaml")
    os.symlink("loop.json", root / "p" / "loop.json")
    os.symlink(folder / "secret.jsonl", root / "p" / "s.json")
    suite = (root / "agent-eval.yaml").read_text()
    (root / "agent-eval.yaml").write_text(suite.replace("policy: policy.yaml",
                                                        "policy: p/exe.yaml"))
    p = run("run", "-q", "-o", "out", cwd=root, timeout=30)
    assert p.returncode == 2, p.stderr
    outside_root = ("outside the repository: agent-eval reads only files inside the "
                    "repository (the folder holding .git above the suite file)")
    assert p.stderr.splitlines() == [
        f"error: agent-eval.yaml:7:5: policy file 'p/exe.yaml' cannot be read "
        f"({outside_root}: p/exe.yaml); the path is relative to the folder of agent-eval.yaml",
        f"error: agent-eval.yaml:11:34: policy file 'p/out/missing.yaml' cannot be read "
        f"({outside_root}: p/out/missing.yaml); the path is relative to the folder of "
        "agent-eval.yaml",
        "error: agent-eval.yaml:12:34: policy file 'p/loop.yaml' cannot be read (Too many "
        "levels of symbolic links: p/loop.yaml); the path is relative to the folder of "
        "agent-eval.yaml",
        f"error: agent-eval.yaml:14:56: JSON Schema file 'p/s.json' cannot be read "
        f"({outside_root}); the path is relative to the folder of the suite file",
        "error: agent-eval.yaml:15:56: JSON Schema file 'p/loop.json' cannot be read (Too "
        "many levels of symbolic links); the path is relative to the folder of the suite "
        "file"], p.stderr
    assert SECRET not in p.stderr and "python" not in p.stderr and "outside/" not in p.stderr


# ------------------------------------------------ 2. snippets of report and diff
def test_report_and_diff_read_no_snippet_outside_the_root(tmp_path: Path) -> None:
    folder = outside(tmp_path)
    root = repo(tmp_path, files={"traces/t.jsonl": call(percent=50)})
    assert run("run", "-q", "-o", "out", cwd=root).returncode == 1
    data = results(root)
    v = data["tests"][0]["violations"][0]
    os.symlink(folder / "secret.jsonl", root / "link.jsonl")
    for config_file, trace_file in (("../outside/secret.jsonl", "../../../../etc/passwd"),
                                    ("link.jsonl", "link.jsonl"),
                                    (str(folder / "secret.jsonl"), "/etc/passwd")):
        v["config"]["file"], v["config"]["line"] = config_file, 1
        v["trace"]["file"], v["trace"]["line"] = trace_file, 1
        (root / "evil.json").write_text(json.dumps(data))
        # a policy location that is no path inside the repository: the file is refused
        # (results.untrue_claim); one through a link inside is read, without its snippet
        refused = config_file != "link.jsonl"
        for fmt in ("html", "sarif"):
            p = run("report", "evil.json", "--format", fmt, cwd=root)
            assert p.returncode == (2 if refused else 0), p.stderr
            assert "not a path inside the repository" in p.stderr or not refused
            assert SECRET not in p.stdout + p.stderr and "root:x:0:0" not in p.stdout
        p = run("diff", "evil.json", "evil.json", "--format", "html", cwd=root)
        assert SECRET not in p.stdout + p.stderr and "root:x:0:0" not in p.stdout
    # the real locations still give their snippets
    p = run("report", "out/results.json", "--format", "sarif", cwd=root)
    assert '"snippet"' in p.stdout


# ------------------------------------------------------------------ 3. output dirs
def test_output_dir_outside_the_repository_is_a_config_error(tmp_path: Path) -> None:
    escape = "../../../../../../../../../" + str(tmp_path / "x").lstrip("/")
    root = repo(tmp_path, extra=f"output:\n  dir: {escape}\n",
                files={"traces/t.jsonl": call()})
    p = run("run", "-q", cwd=root)
    assert p.returncode == 2
    assert p.stderr.startswith("error: agent-eval.yaml:12:3: output.dir ")  # 12: "  dir:"
    assert not (tmp_path / "x").exists()


def test_an_output_folder_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    """`output.dir: agent-eval.yaml` said "error: [Errno 17] File exists: '/tmp/…'"."""
    root = repo(tmp_path, extra="output:\n  dir: agent-eval.yaml\n",
                files={"traces/t.jsonl": call()})
    p = run("run", "-q", cwd=root)
    assert p.returncode == 2
    assert p.stderr == (f"error: agent-eval.yaml:12:3: output.dir "  # 12: "  dir:"
                        f"'{root.resolve() / 'agent-eval.yaml'}' is a file, not a folder; "
                        "write another folder as output.dir, or move the file away\n")
    p = run("run", "-q", "-o", "agent-eval.yaml/sub", cwd=root)
    assert p.returncode == 2
    assert p.stderr == ("error: agent-eval.yaml/sub: the output folder 'agent-eval.yaml/sub' "
                        "cannot be made: 'agent-eval.yaml' in its path is a file, not a "
                        "folder; pass another folder, or move the file away\n")


def test_symlinked_output_folder_leading_outside_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = repo(tmp_path, files={"traces/t.jsonl": call()})
    os.symlink(elsewhere, root / "agent-eval-results")
    for args in ([], ["-o", "agent-eval-results"], ["-o", "agent-eval-results/sub"]):
        p = run("run", "-q", *args, cwd=root)
        assert p.returncode == 2 and "symbolic link" in p.stderr, p.stderr
    os.symlink(elsewhere, root / "reports")
    assert run("report", "agent-eval.yaml", "-o", "reports/r.html", cwd=root).returncode == 2
    assert list(elsewhere.iterdir()) == []


def test_an_explicit_output_dir_outside_the_repository_is_the_operators_choice(
        tmp_path: Path) -> None:
    root = repo(tmp_path, files={"traces/t.jsonl": call()})
    p = run("run", "-q", "-o", str(tmp_path / "elsewhere"), cwd=root)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "elsewhere" / "results.json").is_file()


# --------------------------------------------------------------- 5. YAML and JSON
# 9**9 (387 million) values in 390 bytes
ALIAS_SCHEMA = "".join(
    [f"l0: &l0 [{','.join(['x'] * 9)}]\n"]
    + [f"l{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9)])


def test_alias_bomb_as_a_scenario_json_schema_is_a_config_error(tmp_path: Path) -> None:
    assert len(ALIAS_SCHEMA) < 400
    root = repo(tmp_path, files={"schema.yaml": ALIAS_SCHEMA,
                                 "traces/t.jsonl": '{"type":"output","output":"{}"}\n'})
    (root / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*.jsonl\nscenarios:\n  - id: S1\n'
        '    traces: traces/t.jsonl\n    expect:\n      output: {json_schema: schema.yaml}\n')
    p = run("run", "-q", cwd=root, timeout=30, memory=2 * GIB)
    assert p.seconds < 20 and p.rss_mb < 300, (p.seconds, p.rss_mb)
    assert p.returncode == 2
    assert p.stderr.startswith("error: agent-eval.yaml:8:")
    # l0 is 10 values, l1 91, l2 820, l3 7,381, l4 66,430: the first *l4 on line 6 takes
    # the aliased values past 100,000 (the limit for config files)
    assert "line 6: YAML aliases expand to more than 100000 values" in p.stderr


def cassette(levels: int) -> str:
    """An OpenAI VCR cassette whose request body is 10**levels assistant messages, each
    calling admin_x, written through nested aliases (1.6 KB for a million calls)."""
    msg = ('{role: assistant, content: null, tool_calls: [{type: function, function: '
           '{name: admin_x, arguments: "{}"}}]}')
    lines = ["anchors:", f"  a0: &L1 [{', '.join([msg] * 10)}]"]
    for k in range(2, levels + 1):
        lines.append(f"  a{k - 1}: &L{k} [{', '.join([f'*L{k - 1}'] * 10)}]")
    lines += ["interactions:", "- request:",
              "    uri: https://api.openai.com/v1/chat/completions", "    method: POST",
              f"    body: *L{levels}", "  response:",
              """    body: {string: '{"object": "chat.completion", "choices": []}'}""",
              "    status: {code: 200, message: OK}"]
    return "\n".join(lines) + "\n"


def test_vcr_cassette_alias_bomb_is_an_input_error(tmp_path: Path) -> None:
    text = cassette(6)
    assert len(text) < 9000
    root = repo(tmp_path, "traces/*", files={"traces/c.yaml": text,
                                             "traces/small.yaml": cassette(1)})
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 800, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr
    data = results(root)
    # a message is 16 values (keys count); L1 (line 2) is 161, L2 (line 3) aliases L1 ten
    # times (1,610 aliased values); on line 4 each *L2 adds 1,611: the sixth passes
    # limits.max_alias_nodes (10,000)
    assert errors(data) == [("input/limit_exceeded", "traces/c.yaml", 4)]
    assert "limits.max_alias_nodes" in data["input_errors"][0]["message"]
    assert data["counts"]["tool_calls"] == 10  # small.yaml: ten calls, all checked
    assert (root / "out" / "results.json").stat().st_size < 100_000


def test_a_suite_aliasing_one_long_glob_is_a_config_error_not_a_hang(tmp_path: Path) -> None:
    """The audit's suite: 53 KB, one 50 KB glob and a thousand aliases of it (each alias
    was translated and compiled anew: killed at 150 s with 2.18 GB)."""
    big = "a" * 50_000 + "*"
    suite = ('version: "1"\nsuite: bl\ntraces: traces/*.jsonl\ntests:\n  - id: t\n'
             '    metric: tool_blocklist\n    blocklist: [&a "' + big + '", '
             + ",".join(["*a"] * 1000) + "]\n")
    root = repo(tmp_path, files={"traces/a.jsonl": call("x")})
    (root / "agent-eval.yaml").write_text(suite)
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 400, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr
    # the file is 53,115 characters, so aliases may repeat 1 MiB: 20 aliases of the
    # 50,001-character glob are 1,000,020 characters, the 21st goes over; it starts after
    # '    blocklist: [&a "', the glob, '", ' and twenty '*a,' (1-based column)
    where = 1 + len('    blocklist: [&a "') + len(big) + len('", ') + 20 * 3
    assert p.stderr.startswith(f"error: agent-eval.yaml:7:{where}: YAML aliases repeat "
                               "more than 1048576 characters"), p.stderr


def test_vcr_cassette_aliasing_one_long_body_is_an_input_error(tmp_path: Path) -> None:
    """The audit's cassette, smaller: one body of 20,000 tool calls (1.9 MB) aliased by 500
    interactions (killed at 100 s with 4.34 GB). Aliases may repeat as much as the file
    holds: the second alias goes over, at its line; the other trace file is evaluated."""
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": "get_weather", "arguments": "{}"}} for i in range(20000)]
    body = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls},
         "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1,
                                                    "completion_tokens": 1, "total_tokens": 2}})
    item = ("- request: {body: '{}', method: POST, uri: "
            "'https://api.openai.com/v1/chat/completions'}\n  response:\n"
            "    body: {string: %s}\n    status: {code: 200, message: OK}\n")
    text = ("interactions:\n" + item % ("&b " + json.dumps(body))
            + "".join(item % "*b" for _ in range(500)) + "version: 1\n")
    root = repo(tmp_path, "traces/*", files={"traces/a.vcr.yaml": text,
                                             "traces/b.jsonl": call("admin_x")})
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 400, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr
    data = results(root)
    # an interaction is 4 lines from line 2: the second alias is in the third one's body
    assert errors(data) == [("input/limit_exceeded", "traces/a.vcr.yaml", 2 + 2 * 4 + 2)]
    assert data["input_errors"][0]["message"].startswith(
        f"YAML aliases repeat more than {len(text)} characters")
    assert data["counts"]["tool_calls"] == 1  # b.jsonl's admin_x, blocked
    block = next(t for t in data["tests"] if t["id"] == "block")
    assert [v["tool"] for v in block["violations"]] == ["admin_x"]


def test_a_policy_of_large_patterns_is_a_config_error_within_seconds(tmp_path: Path) -> None:
    """The audit's policy: 300 patterns of ".{1000}" 21 times (validate took 77 s and
    1.15 GB). Each is over a pattern's 1 MiB; after 21 of them the suite's budget is
    spent and the rest are refused uncompiled, each at its line."""
    policy = 'version: "1"\ntools:\n' + "".join(
        f'  t{i}:\n    arguments:\n      a: {{type: string, pattern: "x{i}'
        + ".{1000}" * 21 + '"}\n' for i in range(300))
    root = repo(tmp_path, files={"traces/a.jsonl": call("t1", a="x")})
    (root / "policy.yaml").write_text(policy)
    p = run("validate", cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 400, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 300
    # t{i}'s pattern is on line 5 + 3 i, column 25 ('      a: {type: string, pattern: ')
    for i, line in enumerate(lines):
        assert line.startswith(f"error: policy.yaml:{5 + 3 * i}:25: invalid regular "
                               "expression: "), line
        assert ("pattern too large" if i < 21 else "the patterns before this one") in line


@pytest.mark.parametrize("where", ["suite", "cassette", "policy", "json"])
def test_deep_nesting_is_an_error_not_a_crash(tmp_path: Path, where: str) -> None:
    brackets = "[" * 120_000
    root = repo(tmp_path, "traces/*", files={"traces/ok.jsonl": call()})
    if where == "suite":
        (root / "agent-eval.yaml").write_text(f'version: "1"\nsuite: s\ntraces: {brackets}\n')
    elif where == "policy":
        (root / "policy.yaml").write_text(f"version: '1'\ntools: {brackets}\n")
    elif where == "cassette":
        (root / "traces" / "c.yaml").write_text(
            "interactions:\n- request:\n    uri: https://api.openai.com/v1/chat/completions"
            f"\n    body: {brackets}\n")
    else:
        (root / "traces" / "deep.jsonl").write_text(
            '{"type":"tool_call","tool":"t","arguments":{"a":' + "[" * 150 + "]" * 150
            + "}}\n")
    p = run("run", "-q", "-o", "out", cwd=root)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr
    if where in ("suite", "policy"):
        file = "agent-eval.yaml" if where == "suite" else "policy.yaml"
        line = 3 if where == "suite" else 2
        assert p.stderr.startswith(f"error: {file}:{line}:"), p.stderr
        assert "nested more than 100 levels deep" in p.stderr
    else:
        data = results(root)
        assert [e[0] for e in errors(data)] == ["input/limit_exceeded"]
        assert data["counts"]["tool_calls"] == 1  # ok.jsonl


# ------------------------------------------------------- 6. files that expand hugely
def test_zip_bomb_eval_is_bounded(tmp_path: Path) -> None:
    root = repo(tmp_path, "traces/*", files={"traces/ok.jsonl": call()})
    with zipfile.ZipFile(root / "traces" / "bomb.eval", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", '{"version": 2, "status": "success", "eval": {}}')
        with zf.open("samples/1_epoch_1.json", "w", force_zip64=True) as fh:
            chunk = b" " * (1 << 24)
            for _ in range(128):  # 2 GiB of spaces
                fh.write(chunk)
            fh.write(b"{}")
    assert (root / "traces" / "bomb.eval").stat().st_size < 3_000_000
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 800, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr
    data = results(root)
    assert errors(data) == [("input/limit_exceeded", "traces/bomb.eval", 0)]
    assert "limits.max_file_bytes" in data["input_errors"][0]["message"]
    assert data["counts"]["tool_calls"] == 1


def test_one_argument_of_ten_million_numbers(tmp_path: Path) -> None:
    root = repo(tmp_path, "traces/*.json")
    with open(root / "traces" / "big.json", "w") as fh:
        fh.write('[{"type":"tool_call","tool":"apply_discount","arguments":{"percent":[')
        fh.write(",".join(["1"] * 10_000_000))
        fh.write("]}}]")
    p = run("run", "-q", "-o", "out", *ALL, cwd=root, timeout=60, memory=2 * GIB)
    assert p.seconds < 30 and p.rss_mb < 800, (p.seconds, p.rss_mb)
    assert p.returncode == 1, p.stderr  # a number is expected: args_valid/type
    data = results(root)
    [v] = data["tests"][0]["violations"]
    assert (v["rule"], v["trace"]["line"]) == ("args_valid/type", 1)
    # its text is 1 + 10,000,000 + 9,999,999 commas + 1 characters: the first 2,000 shown
    # (limits.max_value_chars), and how many more
    assert v["value"] == "[" + "1," * 999 + "1" + "…[+19998001 chars]"
    for out in (root / "out").iterdir():
        assert out.stat().st_size < 1_000_000, out  # (SARIF: ~290 KB of rule help)


# -------------------------------------------------------------------- 7. ReDoS
def test_catastrophic_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    root = repo(tmp_path, files={"traces/t.jsonl": call(percent=5, code="a" * 35 + "!")
                                 + call(percent=5, code="a" * 100_000 + "!")
                                 + call(percent=5, code="aaaa")})
    p = run("run", "-q", "-o", "out", cwd=root, timeout=30)
    assert p.seconds < 10 and p.rss_mb < 300, (p.seconds, p.rss_mb)
    assert p.returncode == 1, p.stderr
    lines = [v["trace"]["line"] for v in results(root)["tests"][0]["violations"]]
    assert lines == [1, 2]  # the two values that do not match; "aaaa" does


@pytest.mark.parametrize("mode", ["normalized", "exact"])
def test_catastrophic_globs_run_in_linear_time(tmp_path: Path, mode: str) -> None:
    """A tool-name glob and a scenario's traces: glob from the suite, against a long tool
    name and a long file name (Python's re took minutes on each)."""
    glob = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
    root = repo(tmp_path, files={
        "traces/t.jsonl": call() + call("a" * 250) + call("a" * 249 + "b"),  # names <= 256
        f"traces/{'a' * 200}.jsonl": call()})
    (root / "agent-eval.yaml").write_text(f"""\
version: "1"
suite: s
traces: traces/*.jsonl
tool_match: {mode}
tests:
  - {{id: bl, metric: tool_blocklist, blocklist: ["{glob}"]}}
scenarios:
  - id: S
    traces: "traces/{glob}.jsonl"
""")
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60)
    assert p.seconds < 15, p.seconds
    assert p.returncode == 1, p.stderr
    data = results(root)
    assert data["counts"]["tool_calls"] == 4
    [v] = data["tests"][0]["violations"]  # the name ending in "b"
    assert (v["rule"], v["trace"]["line"]) == ("tool_blocklist", 3)
    [s] = data["scenarios"]
    assert s["status"] == "error"  # no file name ends in "b": no trace for the scenario


TREE_POLICY = """\
version: "1"
$defs:
  node:
    type: object
    properties:
      children: {type: array, items: {$ref: "#/$defs/node"}}
tools:
  walk:
    schema:
      $defs:
        node:
          type: object
          properties:
            children: {type: array, items: {$ref: "#/$defs/node"}}
      $ref: "#/$defs/node"
  plant:
    arguments:
      tree: {$ref: "#/$defs/node"}
"""


def tree(levels: int, leaf: Any) -> Any:
    for _ in range(levels):
        leaf = {"children": [{"children": []}, leaf]}
    return leaf


def test_a_value_invalid_deep_in_a_recursive_schema_runs_in_linear_time(
        tmp_path: Path) -> None:
    # each level of the tree once doubled the time of a value invalid at its bottom:
    # 14 levels took ~50 s, these 40 would take centuries
    root = repo(tmp_path, files={"traces/t.jsonl": "".join((
        call("walk", **tree(40, {"children": []})),
        call("walk", **tree(40, {"children": 5})),
        call("plant", tree=tree(40, {"children": []})),
        call("plant", tree=tree(40, {"children": "x"}))))})
    (root / "policy.yaml").write_text(TREE_POLICY)
    p = run("run", "-q", "-o", "out", cwd=root, timeout=60)
    assert p.seconds < 20, p.seconds
    assert p.returncode == 1, p.stderr
    found = [(v["rule"], v["trace"]["line"], v["argument"][:24], v["value"],
              v["details"]["violation"], v["config"]["line"])
             for v in results(root)["tests"][0]["violations"]]
    assert found == [  # the schema's own $defs (line 14), the policy's (line 6)
        ("args_valid/type", 2, "children[1].children[1].", 5, "Expected array, got integer",
         14),
        ("args_valid/type", 4, "tree.children[1].childre", "x", "Expected array, got string",
         6)]


@pytest.mark.parametrize("pattern", ["^(?=a)a$", "^(a)\\\\1$", "^(?<!b)a$"])
def test_a_pattern_that_cannot_run_in_linear_time_is_a_config_error(
        tmp_path: Path, pattern: str) -> None:
    root = repo(tmp_path, files={"traces/t.jsonl": call()})
    (root / "policy.yaml").write_text(POLICY.replace("^(a+)+$", pattern))
    p = run("validate", cwd=root)
    assert p.returncode == 2
    assert p.stderr.startswith("error: policy.yaml:6:28: invalid regular expression:")
    assert "linear time" in p.stderr


# ---------------------------------------------- 8. one bad file never takes the run down
def inspect_sample(sid: str) -> dict[str, Any]:
    return {"id": sid, "epoch": 1, "input": "hi", "messages": [],
            "events": [{"event": "tool", "id": "c1", "function": "admin_delete",
                        "arguments": {}, "result": "ok"}]}


def test_corrupt_eval_is_an_input_error_and_every_output_is_written(tmp_path: Path) -> None:
    root = repo(tmp_path, "traces/*", files={"traces/ok.jsonl": call(percent=50)})
    for name in ("good", "bad"):
        with zipfile.ZipFile(root / "traces" / f"{name}.eval", "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
            zf.writestr("samples/1_epoch_1.json", json.dumps(inspect_sample(name), indent=1))
    bad = root / "traces" / "bad.eval"
    data = bytearray(bad.read_bytes())
    at = data.index(b"samples/1_epoch_1.json") + len("samples/1_epoch_1.json") + 40
    data[at] ^= 0xFF  # one flipped byte inside the compressed sample
    bad.write_bytes(bytes(data))
    p = run("run", "-o", "out", *ALL, cwd=root)
    assert p.returncode == 2, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    out = results(root)
    assert [(r, f) for r, f, _ in errors(out)] == [("input/parse_error", "traces/bad.eval")]
    # the good archive and the JSONL file were evaluated
    assert out["counts"]["traces"] == 2 and out["counts"]["violations"] == 2
    assert sorted(p.name for p in (root / "out").iterdir()) == [
        "junit.xml", "report.html", "results.json", "results.sarif", "summary.md"]


def test_a_bad_baseline_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    root = repo(tmp_path, files={"traces/t.jsonl": call()})
    for text in (b"PK\x03\x04\x00garbage", b"[" * 5000, b'{"tool": {"name": "agent-eval"}}',
                 b"\xff\xfe"):
        (root / "base.json").write_bytes(text)
        p = run("run", "-q", "--baseline", "base.json", cwd=root)
        assert p.returncode == 2, p.stderr
        assert p.stderr.startswith("error: --baseline: "), p.stderr
        assert "Traceback" not in p.stderr


# ----------------------------------------------------------- 9. a dying --jobs worker
def test_a_worker_that_dies_stops_the_run_with_exit_2_naming_the_file(tmp_path: Path) -> None:
    files = {f"traces/t{i}.jsonl": call() for i in range(6)}
    files["traces/t3.jsonl"] = call("die")
    root = repo(tmp_path, files=files)
    # a reader that kills its own process on t3 (as a segfault or the OOM killer would)
    script = (
        "import os, signal, sys\n"
        "from agent_eval.readers import native\n"
        "real = native.READER.read\n"
        "def read(source):\n"
        "    if source.file == 'traces/t3.jsonl':\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(source)\n"
        "native.READER.read = read\n"
        "from agent_eval._cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    p = run(cwd=root, argv=[sys.executable, "-c", script, "run", "-q", "--jobs", "2", "-o",
                            "out"])
    assert p.seconds < 30 and p.rss_mb < 800, (p.seconds, p.rss_mb)
    assert p.returncode == 2
    assert p.stderr.startswith("error: traces/t3.jsonl: the worker process reading this file "
                               "died (it was killed by signal SIGKILL)"), p.stderr
    assert not (root / "out" / "results.json").exists()


# ------------------------------------------------------------- 10. atomic outputs
def test_a_run_killed_mid_write_leaves_no_results_half_written_or_old(
        tmp_path: Path) -> None:
    # atomic writes: never a truncated results.json; and the run before's results are gone
    # once the run starts (docs/outputs.md), so a later step cannot take them for this run's
    root = repo(tmp_path, files={"traces/t.jsonl": call(percent=50)})
    assert run("run", "-q", "-o", "out", cwd=root).returncode == 1
    before = (root / "out" / "results.json").read_bytes()
    script = (
        "import dataclasses, os, signal, sys\n"
        "def write(results, ctx, fh):\n"
        "    fh.write(b'{\"schema_version\": ')\n"
        "    fh.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "from agent_eval.renderers import RENDERERS\n"  # the one registry every command reads
        "RENDERERS['json'] = dataclasses.replace(RENDERERS['json'], stream=write)\n"
        "from agent_eval._cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n")
    p = run(cwd=root, argv=[sys.executable, "-c", script, "run", "-q", "-o", "out"])
    assert p.returncode == -signal.SIGKILL
    json.loads(before)
    assert not (root / "out" / "results.json").exists()
    # what is left is the temporary file the kill stopped (a dot file), never results.json
    left = [f.name for f in (root / "out").iterdir()]
    assert all(n.startswith(".results.json.") and n.endswith(".tmp") for n in left), left


# --------------------------------------------------- 18. control characters, long names
def test_control_characters_and_huge_names_stay_out_of_every_output(tmp_path: Path) -> None:
    long = "admin_" + "x" * 200_000
    lines = []
    for i in range(300):
        lines.append(json.dumps({"type": "trace_start",
                                 "trace_id": f"evil{i}\x1b[2J\x1b[31mFAKE PASS\x9b0m"}))
        lines.append(json.dumps({"type": "tool_call", "tool": long,
                                 "arguments": {"code": "\x1b]0;pwned\x07"}}))
        lines.append(json.dumps({"type": "trace_end"}))
    root = repo(tmp_path, files={"traces/t.jsonl": "\n".join(lines) + "\n"})
    p = run("run", "-o", "out", "--color", "never", *ALL, cwd=root, timeout=60)
    assert p.seconds < 30 and p.rss_mb < 800, (p.seconds, p.rss_mb)
    assert p.returncode == 2, p.stderr  # each long name an input error: the rules saw it cut
    for text in (p.stdout, p.stderr):
        assert not any((0x00 <= ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
                       for c in text)
    assert "evil0\\x1b[2J\\x1b[31mFAKE PASS\\x9b0m" in p.stdout
    assert "admin_xxxx" in p.stdout and "…[+199750 chars]" in p.stdout
    sizes = {f.name: f.stat().st_size for f in (root / "out").iterdir()}
    assert all(size < 3_000_000 for size in sizes.values()), sizes
    data = results(root)
    [v, *_] = data["tests"][1]["violations"]
    assert v["tool"] == "admin_" + "x" * 250 + "…[+199750 chars]"
    assert [(e["rule"], e["line"]) for e in data["input_errors"]] == [
        ("input/limit_exceeded", 3 * i + 2) for i in range(300)]
