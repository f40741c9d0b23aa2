"""The examples in docs/*.md and README.md run: each ``yaml suite`` block (with the
``yaml policy`` / ``jsonl trace`` blocks after it) is evaluated and must report exactly
the rule ids of its ``text expect`` block."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tests.conftest import copy_example, read_results

from agent_eval._cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
BLOCK = re.compile(r"^```([a-z]+) ([a-z]+)\n(.*?)^```$", re.S | re.M)


@dataclass
class Example:
    page: str
    line: int
    suite: str
    policy: str | None = None
    trace: str | None = None
    store: str | None = None  # the judgements it replays (docs/judge.md)
    expect: list[str] = field(default_factory=list)


def examples() -> list[Example]:
    found: list[Example] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            kind = f"{m.group(1)} {m.group(2)}"
            body = m.group(3)
            if kind == "yaml suite":
                line = text[: m.start()].count("\n") + 1
                found.append(Example(page.name, line, body))
            elif found and found[-1].page == page.name:
                if kind == "yaml policy":
                    found[-1].policy = body
                elif kind == "jsonl trace":
                    found[-1].trace = body
                elif kind == "jsonl store":
                    found[-1].store = body
                elif kind == "text expect":
                    found[-1].expect = body.split()
    return found


EXAMPLES = examples()


def test_the_docs_have_examples() -> None:
    assert len([e for e in EXAMPLES if e.page == "config.md"]) >= 3


@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"{e.page}:{e.line}" for e in EXAMPLES])
def test_doc_example(ex: Example, tmp_path: Path) -> None:
    assert ex.trace is not None, f"{ex.page}:{ex.line}: example without a `jsonl trace` block"
    assert ex.expect, f"{ex.page}:{ex.line}: example without a `text expect` block"
    (tmp_path / "agent-eval.yaml").write_text(ex.suite)
    if ex.policy is not None:
        (tmp_path / "policy.yaml").write_text(ex.policy)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "example.jsonl").write_text(ex.trace)
    if ex.store is not None:
        (tmp_path / ".agent-eval").mkdir()
        (tmp_path / ".agent-eval" / "judgements.jsonl").write_text(ex.store)
    out = tmp_path / "out"
    code = main(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--output-dir",
                 str(out), "--fail-on", "never", "-q"])
    assert code == 0
    results = read_results(out)
    assert results["input_errors"] == []
    got = sorted({v["rule"] for t in results["tests"] for v in t["violations"]}
                 | {f["rule"] for s in results["scenarios"] for f in s["findings"]}
                 | {f"criteria/{c['kind']}" for c in results["criteria"]
                    if c["status"] in ("fail", "warn")}
                 | {f["rule"] for f in results["unexercised"]})
    assert got == sorted(ex.expect)


PYTHON = re.compile(r"^```python example\n(.*?)^```$", re.S | re.M)


def test_library_example_runs(monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    [code] = PYTHON.findall(text)
    monkeypatch.chdir(ROOT)
    exec(compile(code, "docs/library.md", "exec"), {})
    # the printed location is the `max: 30` line of the example policy
    policy = (ROOT / "examples/customer-service/policies/customer.yaml").read_text()
    line = next(i for i, t in enumerate(policy.splitlines(), 1)
                if "apply_discount" in t) + 1
    lines = policy.splitlines()
    max_line = next(i for i in range(line, len(lines) + 1) if "max: 30" in lines[i - 1])
    assert capsys.readouterr().out.split() == [
        "examples/customer-service/policies/customer.yaml", str(max_line)]


def test_readme_output_is_the_real_output(tmp_path: Path) -> None:
    from agent_eval.api import load_suite, suite_sources
    from agent_eval.engine import evaluate_files
    from agent_eval.renderers import console

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("```text\nagent-eval ")
    excerpt = text[start + len("```text\n"): text.index("```", start + 8)].splitlines()
    suite = load_suite(ROOT / "examples/customer-service/agent-eval.yaml")
    files, errors = suite_sources(suite)
    real = console.render(evaluate_files(suite, files, errors)).splitlines()
    shown = [line for line in excerpt if line.strip() not in ("…", "")]
    assert len(shown) > 15
    for line in shown:
        assert line in real, f"README shows a line the example does not print: {line!r}"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(dict(a.choices) for a in parser._actions
                if isinstance(a, argparse._SubParsersAction))


def test_readme_command_table_names_every_command_and_only_its_options() -> None:
    """README's command table is where a new user learns the commands: `import` and
    `judge` had no row (a user reading only the README could not know they exist); each
    row's options must be options of that command."""
    from agent_eval._cli import _parser

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `agent-eval ([a-z]+)([^`]*)` \|", text, re.M)
    commands = _subcommands(_parser())
    assert sorted(command for command, _ in rows) == sorted(commands)
    for command, usage in rows:
        parser = commands[command]
        if command == "judge":  # agent-eval judge tidy …: the options of its subcommand
            inner, _, usage = usage.strip().partition(" ")
            parser = _subcommands(parser)[inner]
        options = {o for action in parser._actions for o in action.option_strings}
        named = re.findall(r"--[a-z][a-z-]*", usage)
        assert set(named) <= options, (command, set(named) - options)


def _fenced(page: Path, heading: str, lang: str) -> str:
    """The first ```lang block after ``heading`` on ``page``."""
    text = page.read_text(encoding="utf-8")
    after = text[text.index(f"\n{heading}\n"):]
    start = after.index(f"\n```{lang}\n") + len(f"\n```{lang}\n")
    return after[start:after.index("\n```\n", start) + 1]


def test_readme_runs_the_action_locally_as_shown(tmp_path: Path) -> None:
    """README "Running it locally": the command, as printed (its /tmp files put in the test's
    folder), in a workspace holding the bundled example's suite, with the `agent-eval` of
    this environment on the PATH. The example breaks its rules on purpose: the README's
    output above gives 22 errors and 4 warnings, the 26 violations of the outputs."""
    command = _fenced(ROOT / "README.md", "### Running it locally", "sh")
    assert "agent-eval action" in command and "/tmp/summary.md" in command
    out = tmp_path / "out"
    out.mkdir()
    work = copy_example(tmp_path / "workspace")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["bash", "-c", command.replace("/tmp/", f"{out}/")], cwd=work,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    outputs = (out / "outputs").read_text(encoding="utf-8").splitlines()
    values = {outputs[i - 1].split("<<")[0]: outputs[i] for i in range(1, len(outputs))
              if outputs[i - 1].split("<<")[0] in ("verdict", "violations", "results-file")}
    assert values == {"verdict": "fail", "violations": "26",
                      "results-file": "agent-eval-results/results.json"}
    assert (work / "agent-eval-results" / "results.json").is_file()
    assert "customer-service-agent" in (out / "summary.md").read_text(encoding="utf-8")


def test_the_judge_providers_example_is_a_valid_suite_key(tmp_path: Path) -> None:
    """docs/judge.md "Providers": every key of its `judge:` block, in a suite."""
    block = _fenced(ROOT / "docs" / "judge.md", "## Providers", "yaml")
    assert block.startswith("judge:\n")
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*.jsonl\ntests:\n  - id: b\n'
        "    metric: tool_blocklist\n    blocklist: [purge_data]\n" + block)
    assert main(["validate", "--config", str(tmp_path / "agent-eval.yaml")]) == 0


def test_the_pass_criteria_example_is_valid_for_the_bundled_suite(tmp_path: Path) -> None:
    """docs/scenarios.md "Pass criteria": its block in place of the bundled example's own
    `pass_criteria:` (the example has the three categories it names, output checks and
    behaviors, so each of its criteria is defined)."""
    block = _fenced(ROOT / "docs" / "scenarios.md", "## Pass criteria", "yaml")
    assert block.startswith("pass_criteria:\n")
    work = copy_example(tmp_path / "example")
    suite = (work / "agent-eval.yaml").read_text(encoding="utf-8")
    at = suite.index("\npass_criteria:\n") + 1
    rest = suite[at:].splitlines(keepends=True)
    end = next((i for i, line in enumerate(rest[1:], 1)
                if line.strip() and not line.startswith((" ", "#"))), len(rest))
    replaced = suite[:at] + block + "".join(rest[end:])
    assert replaced.count("pass_criteria:") == 1 and "edge_case: 0.7" in replaced
    (work / "agent-eval.yaml").write_text(replaced)
    assert main(["validate", "--config", str(work / "agent-eval.yaml")]) == 0
