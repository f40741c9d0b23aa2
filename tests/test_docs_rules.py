"""Every rule page's example really triggers its rule (rules/docs/README.md: "Each page's
`yaml suite`, `yaml policy` and `jsonl trace` blocks are a complete example"), and its
"Use instead" example really does not.

The blocks are written to a temporary folder and run through the real command line
(``agent-eval run``; the ``import/*`` pages' peer config in place of the suite, with the
traces given by ``--traces`` as a peer's config names none); the page's front-matter ``id``
must be among the reported rules. The
"Use instead" section's blocks replace the example's blocks of the same kind; that run must
succeed with no finding and no input error at all (a run that failed reports nothing, and
must not count as "did not fire"). The ``input/*`` pages' blocks are read by the trace
reader instead: the example's gives the page's input error, the "Use instead" one none.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conftest import missing_system, read_results, rule_page_parts

import agent_eval
from agent_eval._cli import main
from agent_eval.api import load_traces
from agent_eval.checks import REGISTRY
from agent_eval.coverage import RULE as COVERAGE_RULE
from agent_eval.errors import InputError
from agent_eval.judge.summary import RULES as JUDGE_RULES
from agent_eval.model import Trace
from agent_eval.rules import catalogue
from agent_eval.scenarios.evaluate import RULES as SCENARIO_RULES

DOCS = Path(agent_eval.__file__).parent / "rules" / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if p.name != "README.md")
# judge/store describes a broken store file: like input/*, plain blocks only
NO_EXAMPLE = {"judge/store"}
EXAMPLE_PAGES = [p for p in PAGES if p.relative_to(DOCS).parts[0] != "input"
                 and p.relative_to(DOCS).with_suffix("").as_posix() not in NO_EXAMPLE]
# the judge pages whose rule is also an input error (the run cannot check everything)
INPUT_ERROR_PAGES = {"judge/missing", "judge/error"}
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
TARGETS = {
    "yaml suite": "agent-eval.yaml",
    "yaml policy": "policy.yaml",
    "jsonl trace": "traces/example.jsonl",
    "json lock": "tools.lock.json",  # live pages: the tool lock
    "python server": "server.py",  # live pages: an MCP server of their own
    # judge pages: the judgements the example replays, and the base branch's results
    "jsonl store": ".agent-eval/judgements.jsonl",
    "json baseline": "base.json",
    # import/* pages: a peer tool's config, run in place of a suite (docs/migrating.md)
    "yaml assay": "eval.yaml",
}
PEER_CONFIGS = ("yaml assay",)
LIVE_GROUPS = ("probe", "mcp")  # examples that start real MCP servers (docs/mcp.md)
ROOT = Path(__file__).resolve().parent.parent
NPM_EVERYTHING = ROOT / "node_modules" / ".bin" / "mcp-server-everything"


def front_matter(page: Path) -> dict[str, Any]:
    m = FRONT.match(page.read_text(encoding="utf-8"))
    assert m, f"{page}: no front matter"
    data = yaml.safe_load(m.group(1))
    assert isinstance(data, dict), f"{page}: front matter is not a mapping"
    return data


def machine_blocks(page: Path, *, use_instead: bool = False) -> dict[str, str]:
    """The page's example blocks by info string, each kind at most once: those of the
    example, or those of the "Use instead" section."""
    blocks: dict[str, str] = {}
    for info, body in FENCE.findall(rule_page_parts(page)[use_instead]):
        info = " ".join(info.split())
        if info in TARGETS:
            assert info not in blocks, f"{page}: two '{info}' blocks"
            blocks[info] = body
    return blocks


def page_id(page: Path) -> str:
    return page.relative_to(DOCS).with_suffix("").as_posix()


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_front_matter_parses(page: Path) -> None:
    meta = front_matter(page)
    for key in ("id", "name", "short", "level", "tags"):
        assert key in meta, f"{page}: front matter lacks '{key}'"
    # The file's place in the tree is its id: args_valid/maximum.md is args_valid/maximum.
    assert meta["id"] == page_id(page)
    assert meta["level"] in ("error", "warning", "note")
    assert isinstance(meta["tags"], list)
    sev = meta.get("security_severity")
    assert sev is None or 0.0 <= float(sev) <= 10.0


def test_catalogue_reads_every_page() -> None:
    assert set(catalogue()) == {front_matter(p)["id"] for p in PAGES}


def test_every_rule_a_check_can_report_has_a_page() -> None:
    documented = {front_matter(p)["id"] for p in PAGES}
    reportable = {rule for spec in REGISTRY.values() for rule in spec.rules}
    reportable |= set(SCENARIO_RULES) | {COVERAGE_RULE} | set(JUDGE_RULES)
    assert reportable, "the registry lists no rules"
    assert sorted(reportable - documented) == []


def test_input_pages_have_no_machine_blocks() -> None:
    for page in PAGES:
        if page.relative_to(DOCS).parts[0] == "input" or page_id(page) in NO_EXAMPLE:
            assert machine_blocks(page) == {}, page


def run_blocks(page: Path, blocks: dict[str, str], tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch, *fail_on: str) -> tuple[int, Path]:
    """Write ``blocks`` of ``page`` into ``tmp_path``, run ``agent-eval run`` on them: the
    exit code and the output folder."""
    live = page.relative_to(DOCS).parts[0] in LIVE_GROUPS
    configs = [info for info in ("yaml suite", *PEER_CONFIGS) if info in blocks]
    assert len(configs) == 1 and ("jsonl trace" in blocks or live), \
        f"{page}: incomplete example"
    if live:  # the npm servers (npm ci) and this Python's scripts come first on PATH
        if "mcp-server-everything" in blocks["yaml suite"] and not NPM_EVERYTHING.is_file():
            missing_system("the npm MCP test server (server-everything)",
                           "run 'npm ci' at the repository root (scripts/test does)")
        path = [str(ROOT / "node_modules" / ".bin"), str(Path(sys.executable).parent)]
        monkeypatch.setenv("PATH", os.pathsep.join([*path, os.environ.get("PATH", "")]))
    for info, body in blocks.items():
        target = tmp_path / TARGETS[info]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    out = tmp_path / "out"
    baseline = ["--baseline", str(tmp_path / "base.json")] if "json baseline" in blocks else []
    traces = []
    if configs != ["yaml suite"]:  # a peer's config names no traces: --traces, from here
        monkeypatch.chdir(tmp_path)
        traces = ["--traces", "traces/*.jsonl"]
    code = main(["run", "--config", str(tmp_path / TARGETS[configs[0]]),
                 "--output-dir", str(out), "-q", *fail_on, *baseline, *traces])
    return code, out


def run_example(page: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Write the page's blocks, run ``agent-eval run`` on them, return results.json."""
    code, out = run_blocks(page, machine_blocks(page), tmp_path, monkeypatch,
                           "--fail-on", "never")
    captured = capsys.readouterr()
    errors_expected = page_id(page) in INPUT_ERROR_PAGES
    assert code == 0, f"{page}: exit {code}\n{captured.err}"  # --fail-on never
    results = read_results(out)
    if errors_expected:  # judge/missing, judge/error: the page's rule, nothing else
        assert {e["rule"] for e in results["input_errors"]} == {page_id(page)}
    else:
        assert results["input_errors"] == [], f"{page}: a judgement is missing? run python " \
            "tests/judge/doc_stores.py after a change of the judge's prompts"
    return results


def violations(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding: the rule tests', the scenarios' and the missed criteria (as
    rule ``criteria/<kind>``)."""
    found = [v for t in results["tests"] for v in t["violations"]]
    found += [f for s in results.get("scenarios") or [] for f in s["findings"]]
    found += [{**c, "rule": f"criteria/{c['kind']}"} for c in results.get("criteria") or []
              if c["status"] in ("fail", "warn")]
    found += results.get("unexercised") or []
    return found


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=page_id)
def test_example_triggers_its_rule(page: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rule = front_matter(page)["id"]
    if rule.startswith("args_valid/"):
        assert "yaml policy" in machine_blocks(page), f"{page}: an args_valid example needs one"
    reported = {v["rule"] for v in violations(run_example(page, tmp_path, capsys,
                                                         monkeypatch))}
    assert rule in reported, f"{page}: reported {sorted(reported)}"


USE_INSTEAD_PAGES = [p for p in EXAMPLE_PAGES if machine_blocks(p, use_instead=True)]
# input/* pages whose "Use instead" is a trace: read by the reader, with no input error
READER_PAGES = [p for p in PAGES if p.relative_to(DOCS).parts[0] == "input"
                and "jsonl trace" in machine_blocks(p, use_instead=True)]
NOT_RUN_HEADING = '### Pages whose "Use instead" is not run'


def not_run_in_readme() -> set[str]:
    """The pages that rules/docs/README.md lists as having no "Use instead" the tests run."""
    text = (DOCS / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"^{re.escape(NOT_RUN_HEADING)}\n(.*?)(?=^#|\Z)", text, re.S | re.M)
    assert m, f"README.md has no '{NOT_RUN_HEADING}' section"
    listed = re.findall(r"^- (.*?) — ", m.group(1), re.M | re.S)  # "- `a/b`, `a/c` — why"
    return {rule for names in listed for rule in re.findall(r"`([a-z_]+(?:/[a-z_]+)?)`", names)}


def test_every_page_has_a_use_instead_run_or_says_why_not() -> None:
    run = {page_id(p) for p in [*USE_INSTEAD_PAGES, *READER_PAGES]}
    assert sorted({page_id(p) for p in PAGES} - run) == sorted(not_run_in_readme())


@pytest.mark.parametrize("page", USE_INSTEAD_PAGES, ids=page_id)
def test_use_instead_passes_clean(page: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The corrected example: the example's blocks with those of "Use instead" in their
    place. The run must succeed (exit 0 under the default --fail-on) with the verdict
    ``pass``: no input error, not the page's rule, no other rule but a note."""
    example, fixed = machine_blocks(page), machine_blocks(page, use_instead=True)
    for info, body in fixed.items():  # each block shown changes something
        assert body != example.get(info), f"{page}: '{info}' block"
    code, out = run_blocks(page, {**example, **fixed}, tmp_path, monkeypatch)
    err = capsys.readouterr().err
    assert code == 0, f"{page}: exit {code}\n{err}"
    results = read_results(out)
    assert results["input_errors"] == []
    assert results["verdict"] == "pass"
    found = violations(results)
    assert front_matter(page)["id"] not in {v["rule"] for v in found}
    # nothing else either, but a note (a policy key this example does not call)
    assert [(v["rule"], v["severity"]) for v in found if v["severity"] != "note"] == []


def read_text_as_trace(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                       ) -> tuple[list[str], int]:
    """The input errors' rules and the number of traces that the trace reader gives for
    ``text`` as a native JSONL file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "example.jsonl").write_text(text, encoding="utf-8")
    items = list(load_traces(["example.jsonl"], format="native"))
    return ([i.rule for i in items if isinstance(i, InputError)],
            sum(isinstance(i, Trace) for i in items))


@pytest.mark.parametrize("page", READER_PAGES, ids=page_id)
def test_input_page_example_and_use_instead_as_read(page: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's first block gives the page's input error; "Use instead" none."""
    (_, broken), *_ = FENCE.findall(rule_page_parts(page)[0])
    errors, _ = read_text_as_trace(broken, tmp_path, monkeypatch)
    assert page_id(page) in errors
    errors, traces = read_text_as_trace(machine_blocks(page, use_instead=True)["jsonl trace"],
                                        tmp_path, monkeypatch)
    assert (errors, traces) == ([], 1)


ARGS_PAGES = [p for p in EXAMPLE_PAGES if p.relative_to(DOCS).parts[0] == "args_valid"]


@pytest.mark.parametrize("page", ARGS_PAGES, ids=page_id)
def test_example_finding_points_at_the_violated_keyword(
        page: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/config.md: "Each violated constraint points at the line and column of the keyword
    that was violated"; a missing required argument at its `required` line (for a `required: [..]`
    list, at the missing name in it); an unknown tool at the `strict:` line; arguments
    that are not an object at the tool's key."""
    rule = front_matter(page)["id"]
    results = run_example(page, tmp_path, capsys, monkeypatch)
    mine = [v for v in violations(results) if v["rule"] == rule]
    assert mine
    for v in mine:
        lines = (tmp_path / v["config"]["file"]).read_text(encoding="utf-8").splitlines()
        text = lines[v["config"]["line"] - 1][v["config"]["column"] - 1:]
        constraint: str = v["constraint"]
        if rule == "args_valid/false_schema":
            assert re.match(r"[\w\"'-]+: false\b", text), (page, text)
        elif rule == "args_valid/required" and constraint.startswith("required: ["):
            assert text.startswith(v["argument"].rsplit(".", 1)[-1]), (page, text)
        else:
            key = constraint.split(": ", 1)[0]
            assert text.split(":", 1)[0].strip("\"'") == key, (page, text, constraint)


def test_one_of_page_message_names_the_matching_alternatives(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the example's call has card_id and store_credit_account: both alternatives match
    results = run_example(DOCS / "args_valid" / "one_of.md", tmp_path, capsys, monkeypatch)
    (v,) = violations(results)
    assert v["message"].endswith("it matches 2 (#1, #2) (oneOf: 2 alternatives)")


def test_any_of_page_message_lists_each_alternative(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    results = run_example(DOCS / "args_valid" / "any_of.md", tmp_path, capsys, monkeypatch)
    (v,) = violations(results)
    for n, name in enumerate(["customer_id", "email", "phone"], 1):
        assert f"#{n}: {name}: Required property is missing (required: [{name}])" \
            in v["message"]
