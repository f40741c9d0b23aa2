"""The real command line, run as a subprocess: exit codes, files, flags, messages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import ROOT, read_results

import agent_eval
from agent_eval.baseline import GitError
from agent_eval.checks import REGISTRY
from agent_eval.errors import ConfigError, ExitCode, ResultsFileError
from agent_eval.github.client import ApiError

SRC = str(Path(agent_eval.__file__).resolve().parents[1])
ANSI = "\x1b["

POLICY = """\
version: "1"
tools:
  apply_discount:
    arguments:
      percent: {type: number, max: 30}
"""
# line 4 of this suite is "    metric: args_valid"; the blocklist item "x_*" is line 11
SUITE = """\
suite: cli
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policies/p.yaml
  - id: block
    metric: tool_blocklist
    severity: {severity}
    blocklist:
      - x_*
"""


def call(name: str, **args: Any) -> str:
    return json.dumps({"type": "tool_call", "tool": name, "arguments": args}) + "\n"


def make(root: Path, severity: str = "error", traces: dict[str, str] | None = None,
         suite: str | None = None) -> Path:
    """A suite in ``root`` (a repository root) with its policy and traces."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    (root / "policies").mkdir(exist_ok=True)
    (root / "traces").mkdir(exist_ok=True)
    (root / "policies" / "p.yaml").write_text(POLICY)
    (root / "agent-eval.yaml").write_text(suite or SUITE.format(severity=severity))
    for name, text in (traces if traces is not None else {"ok.jsonl": call("noop")}).items():
        (root / "traces" / name).write_text(text)
    return root / "agent-eval.yaml"


def run(*args: str, cwd: Path, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ["PYTHONPATH"] = SRC + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    return subprocess.run([sys.executable, "-m", "agent_eval", *args], cwd=cwd, env=environ,
                          capture_output=True, text=True, timeout=60, check=False)


# ------------------------------------------------------------------- exit codes
@pytest.mark.parametrize(("severity", "trace", "flags", "verdict", "code"), [
    ("error", call("noop"), [], "pass", 0),
    ("warning", call("x_del"), [], "warn", 0),
    ("error", call("x_del"), [], "fail", 1),
    ("warning", call("x_del"), ["--fail-on", "warn"], "warn", 1),
    ("error", call("x_del"), ["--fail-on", "never"], "fail", 0),
    ("note", call("x_del"), ["--fail-on", "warn"], "pass", 0),
])
def test_exit_codes(tmp_path: Path, severity: str, trace: str, flags: list[str],
                    verdict: str, code: int) -> None:
    make(tmp_path, severity, {"t.jsonl": trace})
    p = run("run", "-q", *flags, cwd=tmp_path)
    assert p.returncode == code, p.stderr
    assert read_results(tmp_path / "agent-eval-results")["verdict"] == verdict
    assert p.stdout.startswith(f"{verdict}: ")


def test_config_error_exits_2_without_traceback(tmp_path: Path) -> None:
    make(tmp_path, suite="suite: s\ntests:\n  - id: a\n    metric: args_vaild\n")
    p = run("run", cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "agent-eval.yaml:4:5: unknown metric 'args_vaild'" in p.stderr
    assert not (tmp_path / "agent-eval-results").exists()


def test_input_error_exits_2_and_the_rest_is_still_evaluated(tmp_path: Path) -> None:
    make(tmp_path, traces={
        "a.jsonl": call("x_one") + "{not json\n" + call("apply_discount", percent=31),
        "b.jsonl": call("x_two"),
    })
    p = run("run", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    data = read_results(tmp_path / "agent-eval-results")
    assert data["verdict"] == "error"
    assert [(e["rule"], e["file"], e["line"]) for e in data["input_errors"]] == [
        ("input/parse_error", "traces/a.jsonl", 2)]
    found = sorted((v["rule"], v["trace"]["file"], v["trace"]["line"])
                   for t in data["tests"] for v in t["violations"])
    assert found == [
        ("args_valid/maximum", "traces/a.jsonl", 3),  # after the bad line
        ("tool_blocklist", "traces/a.jsonl", 1),
        ("tool_blocklist", "traces/b.jsonl", 1),
    ]
    assert data["counts"]["violations"] == 3 and data["counts"]["input_errors"] == 1


# A second call that reuses a call id (some OpenAI-compatible servers number calls call_0,
# call_1, ... per response) was read as a replay of the first and dropped: a blocklisted tool
# passed (exit 0). Each body's second call, delete_customer, is on line 5.
REUSED_ID_TRACES = {
    "openai_chat": (
        '[\n'
        ' {"role":"user","content":"clean up"},\n'
        ' {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function",'
        '"function":{"name":"get_customer","arguments":"{\\"id\\":1}"}}]},\n'
        ' {"role":"tool","tool_call_id":"call_0","content":"ok"},\n'
        ' {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function",'
        '"function":{"name":"delete_customer","arguments":"{\\"id\\":1}"}}]},\n'
        ' {"role":"tool","tool_call_id":"call_0","content":"ok"},\n'
        ' {"role":"assistant","content":"done"}\n'
        ']\n'),
    "openai_responses": (
        '{"model": "gpt-4o", "input": [\n'
        ' {"role":"user","content":"clean up"},\n'
        ' {"type":"function_call","call_id":"call_0","name":"get_customer",'
        '"arguments":"{\\"id\\":1}"},\n'
        ' {"type":"function_call_output","call_id":"call_0","output":"ok"},\n'
        ' {"type":"function_call","call_id":"call_0","name":"delete_customer",'
        '"arguments":"{\\"id\\":1}"},\n'
        ' {"type":"function_call_output","call_id":"call_0","output":"ok"}\n'
        ']}\n'),
    "anthropic": (
        '{"model": "claude-x", "max_tokens": 100, "messages": [\n'
        ' {"role":"user","content":"clean up"},\n'
        ' {"role":"assistant","content":[{"type":"tool_use","id":"tu_1",'
        '"name":"get_customer","input":{"id":1}}]},\n'
        ' {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1",'
        '"content":"ok"}]},\n'
        ' {"role":"assistant","content":[{"type":"tool_use","id":"tu_1",'
        '"name":"delete_customer","input":{"id":1}}]},\n'
        ' {"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1",'
        '"content":"deleted"}]}\n'
        ']}\n'),
}


@pytest.mark.parametrize("fmt", sorted(REUSED_ID_TRACES))
def test_a_blocked_call_reusing_an_earlier_call_id_fails_the_run(tmp_path: Path,
                                                                 fmt: str) -> None:
    make(tmp_path, traces={}, suite=(
        "suite: t6\ntraces: traces/*.json\n"
        "tests: [{id: bl, metric: tool_blocklist, blocklist: [delete_customer]}]\n"))
    (tmp_path / "traces" / "t.json").write_text(REUSED_ID_TRACES[fmt])
    p = run("run", cwd=tmp_path)
    # the call is found (the test fails) and the reused id is an input error: verdict error
    assert p.returncode == 2, p.stderr
    data = read_results(tmp_path / "agent-eval-results")
    assert data["verdict"] == "error"
    assert data["formats"] == {"traces/t.json": fmt}
    assert data["counts"]["tool_calls"] == 2
    [test] = data["tests"]
    assert test["status"] == "fail"
    assert [(v["tool"], v["trace"]["file"], v["trace"]["line"]) for v in test["violations"]
            ] == [("delete_customer", "traces/t.json", 5)]
    assert [(e["rule"], e["file"], e["line"]) for e in data["input_errors"]] == [
        ("input/invalid_event", "traces/t.json", 5)]
    assert "reused for a different call" in data["input_errors"][0]["message"]


def test_a_glob_matching_nothing_is_no_traces_at_the_traces_line(tmp_path: Path) -> None:
    make(tmp_path, traces={},
         suite="suite: s\n\ntraces: nothing/*.jsonl\ntests:\n  - metric: tool_blocklist\n"
               "    blocklist: [x]\n")
    p = run("run", cwd=tmp_path)
    assert p.returncode == 2
    errors = read_results(tmp_path / "agent-eval-results")["input_errors"]
    assert [(e["rule"], e["file"], e["line"]) for e in errors] == [
        ("input/no_traces", "agent-eval.yaml", 3)]
    assert "nothing/*.jsonl" in errors[0]["message"]


# ------------------------------------------------------------------ where files go
def test_output_dir_option_and_format_console(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("x_del")})
    p = run("run", "--output-dir", "out/here", "--format", "json,console", cwd=tmp_path)
    assert p.returncode == 1
    folder = tmp_path / "out" / "here"
    assert sorted(f.name for f in folder.iterdir()) == ["console.txt", "results.json"]
    console = (folder / "console.txt").read_text()
    assert "❌ FAIL: block" in console and "Tool: x_del" in console
    assert ANSI not in console
    assert not (tmp_path / "agent-eval-results").exists()


def test_config_output_dir_is_relative_to_the_config(tmp_path: Path) -> None:
    sub = tmp_path / "evals"
    make(sub, suite=SUITE.format(severity="error") + "output:\n  dir: reports\n")
    p = run("run", "--config", "evals/agent-eval.yaml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (sub / "reports" / "results.json").is_file()
    assert not (tmp_path / "reports").exists()


def test_a_run_that_stops_leaves_no_earlier_results(tmp_path: Path) -> None:
    # a results.json (and SARIF) of an earlier, passing run must not outlive a run that
    # stops: a later step (an upload, a comment) would take it for this run's
    make(tmp_path, traces={"t.jsonl": call("noop")})
    assert run("run", "--format", "json,sarif", cwd=tmp_path).returncode == 0
    folder = tmp_path / "agent-eval-results"
    assert {"results.json", "results.sarif"} <= {f.name for f in folder.iterdir()}
    (tmp_path / "traces" / "t.jsonl").write_text(call("x_del"))
    # stops after the suite loaded: the baseline file is missing
    p = run("run", "--format", "json,sarif", "--baseline", "nope.json", cwd=tmp_path)
    assert p.returncode == 2 and "--baseline" in p.stderr
    assert not (folder / "results.json").exists()
    assert not (folder / "results.sarif").exists()


def test_a_stop_never_removes_files_outside_the_repository(tmp_path: Path) -> None:
    # a stranger's suite names an output.dir whose parent is a link out of the repository
    repo = tmp_path / "repo"
    outside = tmp_path / "elsewhere"
    (outside / "out").mkdir(parents=True)
    (outside / "out" / "results.json").write_text("someone else's\n")
    make(repo, traces={"t.jsonl": call("noop")},
         suite=SUITE.format(severity="error") + "output:\n  dir: link/out\n")
    (repo / "link").symlink_to(outside)
    p = run("run", "--baseline", "nope.json", cwd=repo)
    assert p.returncode == 2 and "--baseline" in p.stderr
    assert (outside / "out" / "results.json").read_text() == "someone else's\n"


def test_the_earlier_results_can_still_be_the_baseline(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("noop")})
    assert run("run", cwd=tmp_path).returncode == 0
    (tmp_path / "traces" / "t.jsonl").write_text(call("x_del"))
    p = run("run", "--baseline", "agent-eval-results/results.json", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    got = read_results(tmp_path / "agent-eval-results")
    assert got["baseline"]["source"] == {"kind": "file",
                                         "path": "agent-eval-results/results.json"}
    assert got["baseline"]["new_violations"] == 1  # the x_del call
    assert got["baseline"]["counts"]["violations"] == 0  # the earlier run, read first


# a warning-severity blocklist: only the regression gate can fail the run
GATED = SUITE.format(severity="warning") + """\
scenarios:
  - id: S1
    traces: traces/*.jsonl
    expect: {tools: [noop]}
pass_criteria:
  regression: {fail_on_new_violations: true}
"""


@pytest.mark.parametrize(("args", "said"), [
    (["run", "--baseline", ""], "--baseline is empty (an unset variable?)"),
    (["run", "--baseline", "  "], "--baseline is empty (an unset variable?)"),
    (["run", "--baseline-ref", ""], "--baseline-ref is empty (an unset variable?)"),
    (["run", "--baseline", "base/results.json", "--baseline-ref", "HEAD"],
     "--baseline and --baseline-ref both name a base run; give one of them"),
    (["merge", "part", "--baseline", ""], "--baseline is empty (an unset variable?)"),
])
def test_an_empty_or_doubled_baseline_option_stops_the_run(
        tmp_path: Path, args: list[str], said: str) -> None:
    # `--baseline "$BASE"` with BASE unset ran uncompared: the x_del warning, new against
    # the base run, passed (exit 0) where the comparison fails it (exit 1); with both
    # options, --baseline-ref was ignored
    make(tmp_path, traces={"t.jsonl": call("noop")}, suite=GATED)
    assert run("run", "-o", "base", cwd=tmp_path).returncode == 0
    (tmp_path / "traces" / "t.jsonl").write_text(call("noop") + call("x_del"))
    assert run("run", "-o", "part", "--shard", "1/1", cwd=tmp_path).returncode == 0
    assert run("run", "-o", "out", "--baseline", "base/results.json",
               cwd=tmp_path).returncode == 1
    p = run(*args, "-o", "out", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert f"error: {said}" in p.stderr
    assert not (tmp_path / "out" / "results.json").exists()  # the failing run's went too


@pytest.mark.skipif(sys.platform == "win32", reason="a file name of bytes that are not UTF-8")
def test_a_baseline_option_whose_name_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    """--baseline b"b\\xfe.json" (a results file) and --baseline-ref b"b\\xfe" (a branch
    git accepts): the results name the base run by it, which results.json could not
    write, an internal error (orjson: surrogates not allowed) once every trace was
    evaluated. A config error naming it escaped, before anything is read."""
    make(tmp_path, traces={"t.jsonl": call("noop")})
    assert run("run", "-o", "base", cwd=tmp_path).returncode == 0
    name = os.fsdecode(b"b\xfe.json")
    shutil.copy(tmp_path / "base" / "results.json", tmp_path / name)
    env = {"PYTHONIOENCODING": "utf-8"}
    done = run("run", "-o", "out", "--baseline", name, cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: --baseline b\\udcfe.json: its path holds bytes "
                                  "that are not UTF-8"), done.stderr
    shutil.rmtree(tmp_path / ".git")
    git_env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b",
               "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"],
                 ["branch", os.fsdecode(b"b\xfe")]):
        subprocess.run(["git", *args], cwd=tmp_path, env=git_env, check=True,
                       capture_output=True)
    done = run("run", "-o", "out", "--baseline-ref", os.fsdecode(b"b\xfe"), cwd=tmp_path,
               env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: --baseline-ref b\\udcfe: its name holds bytes "
                                  "that are not UTF-8"), done.stderr
    assert "internal error" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_suite_that_cannot_load_clears_the_given_output_dir(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("noop")})
    assert run("run", "--output-dir", "out", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out" / "results.json").is_file()
    (tmp_path / "notes.md").write_text("mine\n")
    (tmp_path / "agent-eval.yaml").write_text(SUITE.format(severity="error") + "tests: []\n")
    p = run("run", "--output-dir", "out", cwd=tmp_path)
    assert p.returncode == 2 and "duplicate key 'tests'" in p.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    assert (tmp_path / "notes.md").read_text() == "mine\n"  # only its own files


def test_an_output_that_is_a_link_is_removed_not_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make(repo, traces={"t.jsonl": call("noop")})
    outside = tmp_path / "outside.json"
    outside.write_text("not agent-eval's\n")
    (repo / "agent-eval-results").mkdir()
    (repo / "agent-eval-results" / "results.json").symlink_to(outside)
    p = run("run", "--baseline", "nope.json", cwd=repo)
    assert p.returncode == 2
    assert not os.path.lexists(repo / "agent-eval-results" / "results.json")
    assert outside.read_text() == "not agent-eval's\n"


def test_traces_option_is_relative_to_the_cwd(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("noop")})
    other = tmp_path / "other"
    other.mkdir()
    (other / "bad.jsonl").write_text(call("x_other"))
    p = run("run", "--config", "../agent-eval.yaml", "--traces", "*.jsonl",
            "-o", "res", cwd=other)
    assert p.returncode == 1, p.stderr
    data = read_results(other / "res")
    (v,) = [v for t in data["tests"] for v in t["violations"]]
    assert (v["tool"], v["trace"]["file"]) == ("x_other", "other/bad.jsonl")
    assert data["counts"]["traces"] == 1  # traces/t.jsonl was not read


def test_traces_option_takes_several_globs(tmp_path: Path) -> None:
    # README: run [--traces GLOB…]; an unquoted glob that the shell expands to two files
    # ("--traces a.jsonl b.jsonl") was refused: "unrecognized arguments: b.jsonl"
    make(tmp_path, traces={"t.jsonl": call("noop")})
    (tmp_path / "a.jsonl").write_text(call("x_one"))
    (tmp_path / "b.jsonl").write_text(call("x_two"))
    (tmp_path / "c.jsonl").write_text(call("x_three"))
    p = run("run", "--traces", "a.jsonl", "b.jsonl", "-t", "c.jsonl", "-o", "res",
            cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    data = read_results(tmp_path / "res")
    assert data["counts"]["traces"] == 3  # a, b and c; not traces/t.jsonl
    assert sorted(v["tool"] for t in data["tests"] for v in t["violations"]) == [
        "x_one", "x_three", "x_two"]


# ------------------------------------------------------------------------ validate
def test_validate(tmp_path: Path) -> None:
    make(tmp_path)
    ok = run("validate", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "ok" in ok.stdout and "cli" in ok.stdout
    (tmp_path / "policies" / "p.yaml").write_text(
        "tools:\n  apply_discount:\n    arguments:\n      percent: {type: numbr}\n")
    bad = run("validate", "--config", "agent-eval.yaml", cwd=tmp_path)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "policies/p.yaml:4:" in bad.stderr  # the line of the bad `type`
    assert "numbr" in bad.stderr


def test_validate_names_the_keys_of_a_peer_config_a_run_will_not_apply(
        tmp_path: Path) -> None:
    """CIAgent's sample spec has six keys agent-eval cannot apply: a run warns of each
    (import/unsupported, docs/migrating.md: never dropped silently), but validate said
    only "ok", as if every check would run."""
    fixture = Path(__file__).parent / "importers" / "fixtures" / "ciagent" / "sample_spec.yaml"
    shutil.copy(fixture, tmp_path / "spec.yaml")
    p = run("validate", "--config", "spec.yaml", cwd=tmp_path)
    assert p.returncode == 0, p.stderr  # a warning: a run is at best warn, not failed
    lines = p.stdout.splitlines()
    # a hallucination_check scale (26), min_sequence_similarity (128), a rubric's scale
    # (154) and three queries' match_mode (71, 129, 169)
    assert [line.split(": not applied: ")[0] for line in lines[:6]] == [
        "warning: spec.yaml:26:7", "warning: spec.yaml:71:7", "warning: spec.yaml:128:7",
        "warning: spec.yaml:129:7", "warning: spec.yaml:154:11", "warning: spec.yaml:169:7"]
    assert "path.min_sequence_similarity needs the golden baseline trace" in lines[2]
    assert "path.match_mode needs the golden baseline trace" in lines[1]
    assert all(line.endswith("[import/unsupported]") for line in lines[:6])
    assert lines[6:] == ["ok: spec.yaml: suite 'rag-agent', 0 test(s), 0 policies, 5 "
                         "scenario(s), 0 criteria; 6 key(s) of the ciagent config not "
                         "applied (a run warns of each: at best warn)"]


# ------------------------------------------------------------------------- explain
def test_explain_a_rule(tmp_path: Path) -> None:
    p = run("explain", "args_valid/maximum", cwd=tmp_path)
    assert p.returncode == 0
    text = p.stdout.lower()
    assert "args_valid/maximum" in text
    assert "what it does" in text and "why is this bad?" in text
    assert text.index("what it does") < text.index("why is this bad?")
    # the sections have content, not just headings
    body = text.split("what it does", 1)[1].split("why is this bad?", 1)[0]
    assert "max" in body and len(body.strip()) > 40


def test_explain_unknown_rule(tmp_path: Path) -> None:
    p = run("explain", "args_valid/maximun", cwd=tmp_path)
    assert p.returncode == 2
    assert "did you mean 'args_valid/maximum'" in p.stderr
    q = run("explain", "nosuch", cwd=tmp_path)
    assert q.returncode == 2 and "nosuch" in q.stderr


def test_explain_an_unknown_rule_is_said_on_one_escaped_line(tmp_path: Path) -> None:
    """The name was printed as given: its line break started a workflow command of a job
    that ran explain (`::error::` at a line's start), its ESC coloured the terminal."""
    p = run("explain", "x\x1b[31mred\n::error::hi", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == ("error: unknown rule 'x\\x1b[31mred\\x0a::error::hi'; run "
                        "'agent-eval explain' for the list\n")
    long = run("explain", "a" * 1000, cwd=tmp_path)  # cut, as a name in the outputs is
    assert long.returncode == 2 and "a" * 256 + "…[+744 chars]'" in long.stderr


def test_explain_of_a_check_lists_its_rules(tmp_path: Path) -> None:
    # 'tool_results' is no rule id but a check's: it was "did you mean" one of its rules
    p = run("explain", "tool_results", cwd=tmp_path)
    assert p.returncode == 2
    assert ("('tool_results' is a check; its rules: tool_results/error, tool_results/latency, "
            "tool_results/not_recorded, tool_results/result)") in p.stderr


def test_explain_lists_every_rule(tmp_path: Path) -> None:
    p = run("explain", cwd=tmp_path)
    assert p.returncode == 0
    listed = {line.split()[0] for line in p.stdout.splitlines() if line.strip()}
    by_hand = {"args_valid/maximum", "args_valid/minimum", "args_valid/required",
               "args_valid/pattern", "args_valid/enum", "args_valid/unknown_tool",
               "args_valid/additional_arguments", "sequence_valid/require",
               "sequence_valid/before", "sequence_valid/count", "tool_blocklist",
               "input/parse_error", "input/no_traces"}
    assert by_hand <= listed
    # every rule a check can report is documented
    assert {r for spec in REGISTRY.values() for r in spec.rules} <= listed


def test_version(tmp_path: Path) -> None:
    # the installed distribution, by the name pyproject.toml gives it (not the command's)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    p = run("--version", cwd=tmp_path)
    assert p.returncode == 0
    assert p.stdout.strip() == f"agent-eval {version(project['name'])}"
    assert agent_eval.__version__ == version(project["name"]) == project["version"]


# -------------------------------------------------------------------------- colour
def test_colour(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("x_del")})
    plain = run("run", cwd=tmp_path)  # stdout is a pipe: not a TTY
    assert plain.returncode == 1
    assert "❌ FAIL: block" in plain.stdout
    assert ANSI not in plain.stdout and ANSI not in plain.stderr
    forced = run("run", "--color", "always", cwd=tmp_path)
    assert f"{ANSI}31m" in forced.stdout
    no_color = run("run", "--color", "always", cwd=tmp_path, env={"NO_COLOR": "1"})
    assert ANSI not in no_color.stdout


# ------------------------------------------------------------------------ encoding
@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_output_is_utf8_whatever_the_locale(tmp_path: Path, encoding: str) -> None:
    """A Windows runner hands Python a cp1252 pipe (the composite action runs there); LANG=C
    an ASCII one. The report's ❌ could not be written there: the run ended in an internal
    error, exit 2, after writing its results; `explain` of a page with a dash did too.
    The output is UTF-8, as `report` and `diff` write theirs."""
    make(tmp_path, traces={"t.jsonl": call("x_東京")})
    env = {"PYTHONIOENCODING": encoding}
    done = run("run", "--no-timings", cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "❌ FAIL: block" in done.stdout and "Tool: x_東京" in done.stdout
    assert "internal error" not in done.stderr
    page = run("explain", "args_valid/additional_arguments", cwd=tmp_path, env=env)
    assert page.returncode == 0, page.stderr
    assert "agent — or an attacker steering it" in page.stdout
    unknown = run("explain", "x_東京", cwd=tmp_path, env=env)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("error: unknown rule 'x_東京'")


@pytest.mark.skipif(sys.platform == "win32", reason="a file name of bytes that are not UTF-8")
@pytest.mark.parametrize("encoding", ["utf-8", "cp1252"])
def test_a_name_not_utf8_on_the_command_line_is_written_escaped(tmp_path: Path,
                                                                encoding: str) -> None:
    """An --output-dir whose name holds a byte that is not UTF-8 (b"o\\xffut": Python
    reads it as the lone surrogate U+DCFF) on a strict stream (a UTF-8 locale's such as
    en_US.UTF-8, PYTHONIOENCODING=utf-8, or a Windows pipe's): the "Wrote" line raised
    UnicodeEncodeError, an internal error (exit 2) after the results were written. It is
    written escaped, as a trace file's name is."""
    make(tmp_path, traces={"t.jsonl": call("x_del")})
    folder = os.fsdecode(b"o\xffut")
    done = run("run", "--no-timings", "-o", folder, cwd=tmp_path,
               env={"PYTHONIOENCODING": encoding})
    assert "internal error" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Wrote o\\udcffut/results.json" in done.stdout
    assert (tmp_path / folder / "results.json").is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="a file name of bytes that are not UTF-8")
def test_a_suite_file_in_a_folder_whose_name_is_not_utf8_is_a_config_error(
        tmp_path: Path) -> None:
    """A suite in a folder of the repository named b"su\\xfeite": every finding names the
    suite file, which results.json and a finding's fingerprint could not write (an
    internal error, UnicodeEncodeError, after the evaluation; as with --baseline-ref,
    whose base is evaluated the same way). A config error naming it escaped, as a trace
    file of such a name is an input error."""
    (tmp_path / ".git").mkdir()
    folder = tmp_path / os.fsdecode(b"su\xfeite")
    make(folder, traces={"t.jsonl": call("x_del")})
    (folder / ".git").rmdir()  # the repository is tmp_path
    done = run("run", "--config", str(folder / "agent-eval.yaml"), cwd=tmp_path,
               env={"PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "internal error" not in done.stderr
    assert done.stderr.startswith("error: su\\udcfeite/agent-eval.yaml: the suite file's "
                                  "path holds bytes that are not UTF-8"), done.stderr
    assert not (tmp_path / "agent-eval-results").exists()


# ----------------------------------------------------------------- determinism
def test_jobs_and_no_timings_are_deterministic(tmp_path: Path) -> None:
    def trace(tid: str, percent: int, blocked: bool) -> str:
        return (json.dumps({"type": "trace_start", "trace_id": tid}) + "\n"
                + call("apply_discount", percent=percent) + (call("x_del") if blocked else "")
                + json.dumps({"type": "trace_end", "trace_id": tid}) + "\n")

    # six files; f2 and f5 hold two traces each
    traces = {f"f{i}.jsonl": trace(f"t{i}", 10 * i, i % 2 == 1) for i in range(6)}
    traces["f2.jsonl"] += trace("t2b", 35, True)
    traces["f5.jsonl"] += trace("t5b", 5, False)
    make(tmp_path, traces=traces)
    outs = []
    for jobs, folder in (("1", "a"), ("2", "b"), ("1", "c"), ("auto", "d"), (None, "e")):
        options = ("--jobs", jobs) if jobs else ()  # the default: auto
        p = run("run", "-q", "--no-timings", *options, "-o", folder, cwd=tmp_path)
        assert p.returncode == 1, p.stderr
        outs.append((tmp_path / folder / "results.json").read_bytes())
    assert outs[0] == outs[1] == outs[2] == outs[3] == outs[4]
    bad = run("run", "-q", "--jobs", "many", cwd=tmp_path)
    assert bad.returncode == 2
    assert "--jobs/-j: expected a number or auto, not 'many'" in bad.stderr
    data = json.loads(outs[0])
    assert data["counts"]["traces"] == 8
    # percent 35 (t2b), 40 (t4) and 50 (t5) break max 30; x_del in t1, t2b, t3, t5
    maxima = sorted(v["trace"]["trace_id"] for t in data["tests"] for v in t["violations"]
                    if v["rule"] == "args_valid/maximum")
    assert maxima == ["t2b", "t4", "t5"]
    blocked = sorted(v["trace"]["trace_id"] for t in data["tests"] for v in t["violations"]
                     if v["rule"] == "tool_blocklist")
    assert blocked == ["t1", "t2b", "t3", "t5"]
    assert all(t["duration_ms"] == 0 for t in data["tests"])


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_colour_on_a_tty(tmp_path: Path) -> None:
    make(tmp_path, traces={"t.jsonl": call("x_del")})
    outputs = []
    for env in ({}, {"NO_COLOR": "1"}):
        leader, follower = os.openpty()
        environ = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        environ["PYTHONPATH"] = SRC + os.pathsep + environ.get("PYTHONPATH", "")
        environ.update(env)
        proc = subprocess.Popen([sys.executable, "-m", "agent_eval", "run"], cwd=tmp_path,
                                env=environ, stdout=follower, stderr=subprocess.DEVNULL)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert proc.wait(timeout=60) == 1
        outputs.append(b"".join(chunks).decode())
    tty, no_color = outputs
    assert "FAIL: block" in tty and ANSI in tty
    assert "FAIL: block" in no_color and ANSI not in no_color


def test_unwritable_output_dir_exits_2_without_traceback(tmp_path: Path) -> None:
    make(tmp_path)
    (tmp_path / "taken").write_text("a file, not a folder")
    p = run("run", "-o", "taken", cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "taken" in p.stderr


# ------------------------------------------------------------- issue 10 §6 cases
@pytest.mark.parametrize("args", [
    ["run", "--format", "sarif,htm"],
    ["run", "--format", "sarif", "--format", "htm"],
    ["run", "-q", "--format", "htm"],
])
def test_an_unknown_run_format_is_an_error_with_did_you_mean(tmp_path: Path,
                                                             args: list[str]) -> None:
    """`run --format sarif,htm` printed a note, exited 0 and wrote no report.html."""
    make(tmp_path)
    p = run(*args, cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert ("error: --format: unknown output format 'htm' (did you mean 'html'?); known "
            "formats: json, console, sarif, junit, markdown, html") in p.stderr
    assert not (tmp_path / "agent-eval-results").exists()  # stopped before anything


def test_an_unknown_format_in_the_config_is_an_error_with_did_you_mean(tmp_path: Path
                                                                      ) -> None:
    make(tmp_path, suite=SUITE.format(severity="error") + "output:\n  format: [sarif, htm]\n")
    p = run("run", cwd=tmp_path)
    assert p.returncode == 2
    assert ("agent-eval.yaml:13:19: output.format[1]: Input should be 'sarif', 'junit', "
            "'json', 'markdown' or 'html' (got 'htm') (did you mean 'html'?)") in p.stderr
    assert not (tmp_path / "agent-eval-results").exists()


def test_report_diff_and_merge_name_unknown_formats(tmp_path: Path) -> None:
    make(tmp_path)
    assert run("run", "-q", cwd=tmp_path).returncode == 0
    saved = "agent-eval-results/results.json"
    p = run("report", saved, "--format", "mardown", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert "unknown output format 'mardown' (did you mean 'markdown'?)" in p.stderr
    p = run("diff", saved, saved, "--format", "jsno", cwd=tmp_path)
    assert p.returncode == 2
    assert ("unknown output format 'jsno' (did you mean 'json'?); known formats: console, "
            "markdown, json, sarif, html") in p.stderr
    p = run("diff", saved, saved, "--format", "junit", cwd=tmp_path)  # not one of diff's
    assert p.returncode == 2 and "unknown output format 'junit'" in p.stderr
    p = run("merge", saved, "--format", "srif", cwd=tmp_path)
    assert p.returncode == 2 and "(did you mean 'sarif'?)" in p.stderr
    p = run("convert", "traces/ok.jsonl", "--format", "natve", cwd=tmp_path)
    assert p.returncode == 2 and "unknown trace format 'natve' (did you mean 'native'?)" \
        in p.stderr


def test_fail_on_never_exits_0_once_the_run_completed(tmp_path: Path) -> None:
    """README, action.yml and docs/results.md: under `--fail-on never` an input error
    still makes the verdict error (in results.json and the output), but the exit is 0;
    a config error stops the run before it completes: exit 2 whatever --fail-on says."""
    make(tmp_path, traces={"a.jsonl": call("x_one") + "{not json\n"})
    p = run("run", "-q", "--fail-on", "never", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert read_results(tmp_path / "agent-eval-results")["verdict"] == "error"
    # (the coverage finding: the policy key apply_discount matched no call)
    assert p.stdout.startswith("error: 1 rule violation, 1 coverage finding (1 error, 1 note) "
                               "· 1 input error in 1 trace")
    assert run("run", "-q", cwd=tmp_path).returncode == 2  # the default: fail
    make(tmp_path, suite="suite: s\ntests:\n  - id: a\n    metric: args_vaild\n")
    assert run("run", "--fail-on", "never", cwd=tmp_path).returncode == 2


@pytest.mark.parametrize(("raise_", "said"), [
    (lambda: GitError("git fetch: no network"), ["git fetch: no network"]),
    (lambda: ApiError("GET", "https://api.github.com/x", 403, "Forbidden"),
     ["GET https://api.github.com/x: 403 Forbidden"]),
    (lambda: ResultsFileError("r.json is not JSON: bad"), ["r.json is not JSON: bad"]),
    (lambda: ConfigError(["a.yaml:1:1: one", "a.yaml:2:3: two"]),
     ["a.yaml:1:1: one", "a.yaml:2:3: two"]),
])
def test_an_error_that_stops_a_command_is_said_and_exits_2(
        raise_: Any, said: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Every AgentEvalError (errors.py), whichever module raises it: one ``error:`` line
    a problem on stderr, exit 2, no traceback."""
    from agent_eval import _cli
    from agent_eval.commands import validate

    def fail(args: Any) -> int:
        raise raise_()

    monkeypatch.setattr(validate, "main", fail)
    assert _cli.main(["validate"]) == 2
    out = capsys.readouterr()
    assert out.err == "".join(f"error: {line}\n" for line in said)
    assert out.out == ""


def test_an_os_error_is_said_in_one_escaped_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An OSError's message names a path, which may be a trace file's name a pull request
    chose: printed as it was, a line break in it started a line of the log of its own (a
    workflow command) and its ESC codes were the terminal's."""
    from agent_eval import _cli
    from agent_eval.commands import validate

    def fail(args: Any) -> int:
        # (a message of agent-eval's own naming the path as it is, not repr()'d)
        raise OSError("traces/t\x1b[2J\n::error::forged.jsonl: cannot be read")

    monkeypatch.setattr(validate, "main", fail)
    assert _cli.main(["validate"]) == 2
    err = capsys.readouterr().err
    assert err == "error: traces/t\\x1b[2J\\x0a::error::forged.jsonl: cannot be read\n", err


def test_an_internal_error_is_said_escaped_with_its_traceback(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An internal error's message may quote a trace: printed as it was, a line break in
    it started a line of the log of its own ("::error::…", a workflow command of the job)
    and its ESC codes were the terminal's. The traceback is each line escaped behind a
    bar; the error line is one escaped line."""
    from agent_eval import _cli
    from agent_eval.commands import validate

    def fail(args: Any) -> int:
        raise KeyError("tool \x1b]8;;x\x07\n::error file=a::forged ##[error]x")

    monkeypatch.setattr(validate, "main", fail)
    assert _cli.main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "##[" not in err
    lines = err.splitlines()
    assert not any(line.lstrip().startswith("::") for line in lines)
    assert lines[0] == "  | Traceback (most recent call last):"
    assert any("in fail" in line for line in lines)
    assert lines[-1].startswith("error: internal error: KeyError: ")
    assert lines[-1].endswith("please report it with the traceback above)")
    assert all(line.startswith("  | ") for line in lines[:-1])


def test_the_exit_codes_are_those_of_the_docs() -> None:
    """docs/results.md "Exit codes" (and 130 for Ctrl-C, as a shell reports it)."""
    assert {c.name: int(c) for c in ExitCode} == {"OK": 0, "FAIL": 1, "ERROR": 2,
                                                  "INTERRUPTED": 130}


@pytest.mark.parametrize("argv", [
    ["run"], ["run", "--config", "x.yaml", "-f", "sarif,json", "-f", "html", "--jobs", "3",
              "--no-timings", "--shard", "1/2", "--judge", "record"],
    ["run", "--help"], ["run", "--jobs", "x"], ["run", "--fail-on", "maybe"],
    ["run", "--nothing"], ["run", "extra"], ["run", "--version"],
])
def test_run_parses_as_with_every_command_built(argv: list[str],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``run`` builds only its own parser (start-up time): what it parses, prints and
    exits with is what the parser of every command gives."""
    from agent_eval._cli import _parser

    got = []
    for parser in (_parser("run"), _parser()):
        try:
            result: Any = vars(parser.parse_args(argv))
        except SystemExit as exc:
            result = exc.code
        got.append((result, capsys.readouterr()))
    assert got[0] == got[1]
    assert got[0][0] not in (None, {})


# ------------------------------------------------------------------- huge figures
HUGE = ('{"type":"tool_call","tool":"x","arguments":{}}\n'
        '{"type":"llm_call","model":"m","cost_usd":1e308}\n')


@pytest.mark.parametrize(("traces", "scenario"), [
    # two traces of 1e308 each: their mean overflowed math.fsum (OverflowError)
    ({"a.jsonl": HUGE, "b.jsonl": HUGE}, ""),
    # two calls of 1e308 in one trace: cost inf, written as null, refused by report
    ({"a.jsonl": HUGE + '{"type":"llm_call","model":"m","cost_usd":1e308}\n'},
     "    thresholds: {max_cost_usd: 1}\n"),
])
def test_huge_costs_are_input_errors_and_the_results_read_back(
        tmp_path: Path, traces: dict[str, str], scenario: str) -> None:
    suite = ('version: "1"\nsuite: s\ntraces: traces/*.jsonl\nscenarios:\n  - id: S1\n'
             '    traces: traces/*.jsonl\n    expect: {tools: [x]}\n' + scenario)
    make(tmp_path, traces=traces, suite=suite)
    p = run("run", "-o", "out", "-f", "json,sarif,junit,markdown,html", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    lines = sorted(line.strip() for line in p.stdout.splitlines() if "1e+308" in line)
    assert len(lines) == sum(t.count("1e308") for t in traces.values())
    assert all("must be a number of at most 10^15" in line and "[input/invalid_event]" in line
               for line in lines)
    assert lines[0].startswith("traces/a.jsonl:2: 'cost_usd'")
    for name in ("results.json", "results.sarif", "junit.xml", "summary.md", "report.html"):
        assert (tmp_path / "out" / name).is_file()
    data = read_results(tmp_path / "out")
    (sc,) = data["scenarios"]
    assert "cost_usd" not in sc["metrics"] and sc["not_recorded"]["cost_usd"] == len(traces)
    assert "inf" not in p.stdout
    # the results file is one its own commands read
    # (report renders it: exit 0; diff and run say the head has input errors: exit 2)
    for args, code in ((["report", "out/results.json"], 0),
                       (["diff", "out/results.json", "out/results.json"], 2),
                       (["run", "-o", "again", "--baseline", "out/results.json"], 2)):
        q = run(*args, cwd=tmp_path)
        assert "results schema" not in q.stderr and "internal error" not in q.stderr, q.stderr
        assert q.returncode == code, (args, q.stdout, q.stderr)
        assert "2 input errors" in q.stdout if args[0] != "diff" else "violations: 0" in q.stdout
