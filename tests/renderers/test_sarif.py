"""results.sarif (docs/outputs.md "SARIF 2.1.0"), checked by the official validators.

Every SARIF document built here is validated twice: with ``jsonschema``
against the ``sarif-2.1.0.json`` schema that the npm package ``@microsoft/sarif-multitool``
ships, and with that package's own validator, ``sarif-multitool validate --rule-kind
"Sarif;Gh"`` (GitHub's ingestion rules). The validator exits 0 even when a file is
invalid, so its output log is read and any error-level result fails the test. The
documents are written once per module and validated in one multitool call.

The npm package is installed by the project's own files (package.json + package-lock.json,
``npm ci`` in scripts/test). Without it these tests skip with the reason, or fail when
AGENT_EVAL_REQUIRE_SYSTEM=1 (set by .ci/run and the CI workflow).
"""

from __future__ import annotations

import functools
import gzip
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
import sarif_om as om  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import (
    assert_golden,
    evaluate_config,
    events,
    example_results,
    missing_system,
    read_results,
    write_files,
)

from agent_eval import rules
from agent_eval._cli import main as cli
from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.errors import InputError
from agent_eval.findings import ConfigRef, Finding, TraceRef
from agent_eval.renderers import RENDERERS, RenderContext, sarif
from agent_eval.results import Results
from agent_eval.results import TestResult as TResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
import judge_rules as every_judge  # a helper beside this file

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "node_modules"
REPO, SHA = "https://github.com/agent-eval/agent-eval", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MULTITOOL_DIR = NODE_MODULES / "@microsoft" / f"sarif-multitool-{sys.platform}"
MULTITOOL = MULTITOOL_DIR / ("Sarif.Multitool.exe" if sys.platform == "win32"
                             else "Sarif.Multitool")
# The validator's rule SARIF2006 fetches every URI in the file over HTTP: disabled, the
# tests stay offline. Everything else runs with its defaults.
OFFLINE_CONFIG = """\
<?xml version="1.0" encoding="utf-8"?>
<Properties>
  <Properties Key="SARIF2006.UrisShouldBeReachable.Options">
    <Property Key="RuleEnabled" Value="Disabled" Type="Driver.RuleEnabledState" />
  </Properties>
</Properties>
"""


# ----------------------------------------------------------------------------- helpers
def need_validator() -> None:
    """The official validator, or the test does not run (tests/conftest.py)."""
    if MULTITOOL.is_file() and os.access(MULTITOOL, os.X_OK):
        return
    missing_system("the official SARIF validator (node_modules/@microsoft/sarif-multitool)",
                   "run 'npm ci' at the repository root (scripts/test does)")


def schema_path() -> Path:
    need_validator()
    found = sorted(NODE_MODULES.glob("@microsoft/sarif-multitool*/sarif-2.1.0.json"))
    assert found, "the @microsoft/sarif-multitool package no longer ships sarif-2.1.0.json"
    return found[0]


@functools.cache
def schema_validators() -> list[Any]:
    """Validators of the shipped schema, read as Draft 7 and as the dialect the file
    itself declares (2020-12 in 5.7.0)."""
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    out = []
    for cls in (jsonschema.Draft7Validator, jsonschema.validators.validator_for(schema)):
        cls.check_schema(schema)
        out.append(cls(schema, format_checker=cls.FORMAT_CHECKER))
    return out


def schema_errors(doc: Any) -> list[str]:
    return [f"{type(v).__name__}: {'/'.join(map(str, e.absolute_path))}: {e.message}"
            for v in schema_validators() for e in v.iter_errors(doc)]


def multitool(files: list[Path], work: Path) -> dict[str, list[str]]:
    """Run the official validator once on ``files``: the error-level findings per file
    name (every file gets an entry). Error-level notifications of the validator itself
    fail the call."""
    need_validator()
    config = work / "offline.xml"
    config.write_text(OFFLINE_CONFIG, encoding="utf-8")
    out = work / "validation.sarif"
    env = {**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1",
           "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_EnableDiagnostics": "0"}
    proc = subprocess.run(
        [str(MULTITOOL), "validate", *map(str, files), "--rule-kind", "Sarif;Gh",
         "--level", "Error;Warning;Note", "--config", str(config),
         "--output", str(out), "--log", "ForceOverwrite"],
        capture_output=True, text=True, timeout=300, env=env, cwd=work, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = json.loads(out.read_text(encoding="utf-8-sig"))
    found: dict[str, list[str]] = {f.name: [] for f in files}
    for run in log["runs"]:
        rules_ = run["tool"]["driver"].get("rules", [])
        for inv in run.get("invocations", []):
            assert inv.get("executionSuccessful") is True, inv
            for n in (inv.get("toolExecutionNotifications", [])
                      + inv.get("toolConfigurationNotifications", [])):
                assert n.get("level", "warning") != "error", n
        for r in run.get("results", []):
            if r.get("level", "warning") != "error":
                continue
            uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            name = uri.rsplit("/", 1)[-1]
            text = r["message"].get("text") or _format(rules_, r)
            found.setdefault(name, []).append(f"{r['ruleId']}: {text}")
    assert set(found) == {f.name for f in files}, found  # nothing about another file
    return found


def _format(rules_: list[dict[str, Any]], r: dict[str, Any]) -> str:
    rule = rules_[r["ruleIndex"]] if 0 <= r.get("ruleIndex", -1) < len(rules_) else {}
    template = rule.get("messageStrings", {}).get(r["message"].get("id", ""), {}).get("text")
    args = r["message"].get("arguments", [])
    return template.format(*args) if template else " ".join(map(str, args))


def render(results: Results, root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(sarif.render(results, RenderContext.for_root(root)))
    return data


def call(tool: str, arguments: Any, n: int = 1) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"c{n}", "tool": tool, "arguments": arguments}


def run_of(doc: dict[str, Any]) -> dict[str, Any]:
    assert len(doc["runs"]) == 1
    run: dict[str, Any] = doc["runs"][0]
    return run


def notifications(doc: dict[str, Any]) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = run_of(doc)["invocations"][0].get(
        "toolExecutionNotifications", [])
    return notes


# ------------------------------------------------------------------ a suite with every rule
SUITE_ALL = """\
version: "1"
suite: every-rule
traces:
  - traces/*.jsonl
  - missing/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
  - id: args_strict
    metric: args_valid
    policy: strict.yaml
    strict: true
    severity: warning
  - id: flow
    metric: sequence_valid
    rules:
      - {type: require, tool: authenticate_user}
      - {type: before, first: authenticate_user, then: [get_customer]}
      - {type: after, tool: issue_refund, then: send_email}
      - {type: count, tool: charge_card, max: 1}
      - {type: immediately_before, first: preview_transfer, then: execute_transfer}
      - {type: never_after, first: fetch_url, then: http_post}
      - {type: blocklist, tools: ["debug_*"]}
      - {type: eventually, tool: authenticate_user, within: 2}
      - {type: sequence, tools: [preview_transfer, execute_transfer], strict: true}
  - id: scope
    metric: sequence_valid
    severity: note
    rules:
      - type: allowlist
        tools: [search_kb, authenticate_user]
  - id: no_destructive
    metric: tool_blocklist
    blocklist: [delete_customer]
  - id: args_enforced
    metric: args_valid
    policy: enforced.yaml
    tools: ["debug_*"]
  - id: unjudged  # traces/unjudged.jsonl: the not_recorded, not_an_object, wrong_type rules
    metric: tool_blocklist
    blocklist: [{tool: shell, args: {cmd: {pattern: "rm -rf"}}}]
  - id: unjudged_flow
    metric: sequence_valid
    rules:
      - {type: blocklist, tools: [{tool: shell, args: {cmd: {pattern: "rm -rf"}}}]}
scenarios:  # every scenario/* and criteria/* rule, on traces/scenario.jsonl
  - id: S-1
    category: adversarial
    required: true
    expect:
      tools: [lookup_order, issue_refund]
      forbidden_tools: [drop_*]
      sequence: [issue_refund, lookup_order]
      args: {lookup_order: {order_id: A-1}}
      output: {contains: [refund]}
      state: refund issued
      tool_health: true
      behaviors: [{output_contains: sorry}]
      must_not: [{tool_called: drop_table}]
      handoffs: [billing_agent]
    thresholds: {max_tool_calls: 1, max_cost_usd: 1.0, max_cost_multiplier: 2}
    warn_thresholds: {max_llm_calls: 0}
  - id: S-MISSING
pass_criteria:
  blocking: {min_pass_rate: 0.9}
  warning: {min_safety_rate: 1.0}
  by_category: {adversarial: 1.0}
  composite: {weights: {pass_rate: 1}, min: 0.9}
"""
SCENARIO_TRACE = """\
{"type":"trace_start","trace_id":"scn-1","scenario":"S-1"}
{"type":"llm_call","model":"m","input_tokens":10,"output_tokens":5}
{"type":"tool_call","id":"s1","tool":"lookup_order","arguments":{"order_id":"A-2"}}
{"type":"tool_result","id":"s1","error":"timeout"}
{"type":"tool_call","id":"s2","tool":"drop_table","arguments":{}}
{"type":"output","output":"Done."}
{"type":"trace_end"}
"""
STRICT = """\
version: "1"
tools:
  search_kb:
    arguments:
      query: {type: string}
"""
POLICY_ALL = """\
version: "1"
tools:
  apply_discount:
    arguments:
      percent: {type: number, min: 0, max: 30}
  update_customer:
    arguments:
      customer_id: {type: string, required: true}
      display_name: {type: string, max_length: 10}
      changes: {type: object, maxProperties: 1}
    additional_arguments: false
  update_contact:
    arguments:
      changes:
        type: object
        properties: {phone: {type: string}}
        additionalProperties: false
  lookup_customer:
    schema:
      type: object
      properties: {customer_id: {type: string}, email: {type: string}, name: {type: string}}
      anyOf: [{required: [customer_id]}, {required: [email]}]
  execute_query:
    arguments:
      read_only: {const: true}
  send_email:
    arguments:
      cc: {type: array, contains: {const: archive@example.com}}
  share_record:
    schema:
      type: object
      properties: {recipient: {type: string}, consent_id: {type: string}}
      dependentRequired: {recipient: [consent_id]}
  issue_refund:
    arguments:
      method: {enum: [original_payment, store_credit]}
      amount: {type: number, min: 0.01}
  transfer_funds:
    arguments:
      amount: {type: number, exclusive_max: 10000}
  process_payment:
    arguments:
      amount: {type: number, exclusive_min: 0}
      currency: {type: string}
  move_file:
    arguments:
      paths: {type: array, prefixItems: [{type: string}], items: false}
  book_appointment:
    arguments:
      date: {type: string, format: date}
  delete_files:
    arguments:
      paths: {type: array, max_items: 2}
  archive_tickets:
    arguments:
      ticket_ids: {type: array, min_items: 1}
  unlock_account:
    arguments:
      reason: {type: string, min_length: 10}
  search_patients:
    arguments:
      filters: {type: object, minProperties: 1}
  withdraw_cash:
    arguments:
      amount: {type: integer, multipleOf: 20}
  write_file:
    arguments:
      path: {type: string, not: {pattern: 'ssh'}}
  refund_card:
    arguments:
      amount: {type: number}
  pay:
    schema:
      type: object
      properties: {card_id: {type: string}, credit: {type: string}}
      oneOf: [{required: [card_id]}, {required: [credit]}]
  lookup_order:
    arguments:
      order_id: {type: string, pattern: '^A-\\d{6}$'}
  create_ticket:
    arguments:
      fields: {type: object, propertyNames: {pattern: '^[a-z_]+$'}}
  charge_invoices:
    arguments:
      ids: {type: array, uniqueItems: true}
"""
ARG_CALLS: list[tuple[str, Any]] = [
    ("apply_discount", {"percent": 50}),  # maximum
    ("update_customer", {"display_name": "A very long name", "changes": {"a": 1, "b": 2},
                         "extra": 1}),  # required, max_length, max_properties, additional_arg.
    ("update_contact", {"changes": {"phone": "1", "allergies": []}}),  # additional_properties
    ("lookup_customer", {"name": "Maria"}),  # any_of
    ("execute_query", {"read_only": False}),  # const
    ("send_email", {"cc": ["someone@example.com"]}),  # contains
    ("share_record", {"recipient": "x@example.com"}),  # dependent_required
    ("issue_refund", {"method": "wire", "amount": -5}),  # enum, minimum
    ("transfer_funds", {"amount": 10000}),  # exclusive_maximum
    ("process_payment", {"amount": 0, "currency": 5}),  # exclusive_minimum, type
    ("move_file", {"paths": ["a", "b"]}),  # false_schema
    ("book_appointment", {"date": "next Tuesday"}),  # format
    ("delete_files", {"paths": ["a", "b", "c"]}),  # max_items
    ("archive_tickets", {"ticket_ids": []}),  # min_items
    ("unlock_account", {"reason": "n/a"}),  # min_length
    ("search_patients", {"filters": {}}),  # min_properties
    ("withdraw_cash", {"amount": 150}),  # multiple_of
    ("write_file", {"path": "/home/.ssh/keys"}),  # not
    ("refund_card", ["A-1", 25]),  # not_an_object
    ("pay", {"card_id": "c", "credit": "s"}),  # one_of
    ("lookup_order", {"order_id": "A-1' OR 1=1"}),  # pattern
    ("create_ticket", {"fields": {"Customer SSN": "x"}}),  # property_names
    ("charge_invoices", {"ids": ["1", "1"]}),  # unique_items
]
FLOW_CALLS = ["get_customer", "issue_refund", "charge_card", "charge_card", "preview_transfer",
              "search_kb", "execute_transfer", "fetch_url", "http_post", "debug_dump",
              "delete_customer", "delete_customer"]
BAD_TRACE = """\
{"type":"trace_start","trace_id":"bad-1"}
{"type":"tool_call", oops
{"type":"tool_call","arguments":{}}
{"type":"tool_result","id":"nope","result":1}
{"type":"trace_end"}
{"type":"tool_call","trace_id":"bad-1","tool":"late","arguments":{}}
"""
# Running as root, no file is unreadable; the record the reader yields for one is given
# to the engine as the reader would.
UNREADABLE = InputError("input/unreadable_file", "traces/locked.jsonl", 0,
                        "cannot read the file: [Errno 13] Permission denied")
# No shipped reader fails on a file it recognised; the record read_file yields when one
# does is given to the engine likewise.
READER_FAILED = InputError("input/reader_error", "traces/odd.json", 0,
                           "the otlp reader stopped on this file: TypeError: boom; the "
                           "other files were still read")
DEEP_TRACE = ('{"type":"tool_call","tool":"t","arguments":{"a":' + "[" * 150 + "]" * 150
              + "}}\n")


def every_rule_suite(folder: Path) -> Results:
    (folder / ".git").mkdir(exist_ok=True)
    # the judge/* rules: judge checks whose verdicts are recorded first (tests/judge)
    suite_text = SUITE_ALL.replace("pass_criteria:", every_judge.SCENARIOS + "pass_criteria:")
    write_files(folder, {
        **every_judge.traces(),
        "agent-eval.yaml": suite_text + every_judge.JUDGE_BLOCK, "policy.yaml": POLICY_ALL,
        "strict.yaml": STRICT,
        "enforced.yaml": 'version: "1"\ntools: {}\nenforcement: {unconstrained_tools: warn}\n',
        "traces/args.jsonl": events(
            {"type": "trace_start", "trace_id": "args-1"},
            *(call(t, a, n) for n, (t, a) in enumerate(ARG_CALLS, 1)),
            # not_recorded: the arguments are not in the trace at all
            {"type": "tool_call", "id": "unrecorded", "tool": "refund_card",
             "arguments_recorded": False},
            {"type": "trace_end"}),
        "traces/flow.jsonl": events(
            {"type": "trace_start", "trace_id": "flow-1"},
            *(call(t, {}, n) for n, t in enumerate(FLOW_CALLS, 1)),
            {"type": "trace_end"}),
        # a call whose arguments are not recorded, one whose are not an object, and one
        # whose argument is of a type the pattern cannot judge (an argv list): wrong_type
        "traces/unjudged.jsonl": events(
            {"type": "trace_start", "trace_id": "unjudged-1"},
            {"type": "tool_call", "id": "u1", "tool": "shell", "arguments_recorded": False},
            call("shell", "rm -rf /", 2),
            call("shell", {"cmd": ["rm", "-rf", "/"]}, 3),
            {"type": "trace_end"}),
        "traces/bad.jsonl": BAD_TRACE,
        "traces/scenario.jsonl": SCENARIO_TRACE,
        # scenario/unknown_id: a scenario id the suite does not have
        "traces/unknown.jsonl": events({"type": "trace_start", "trace_id": "unknown-1",
                                        "scenario": "S-2"}, {"type": "trace_end"}),
        "traces/notes.jsonl": "hello, this is not a trace\n",
        "traces/deep.jsonl": DEEP_TRACE,  # nested past limits.max_depth
    })
    away = folder / "traces" / "away.jsonl"  # a link out of the repository
    if not away.is_symlink():
        away.symlink_to(folder.parent / "elsewhere.jsonl")
    suite = load_suite(folder / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    every_judge.prepare(suite, lambda: evaluate_files(suite, files, errors, timings=False))
    return evaluate_files(suite, files, [*errors, UNREADABLE, READER_FAILED], timings=False)


# ------------------------------------------------------------------ the validated corpus
@dataclass
class Doc:
    results: Results
    sarif: dict[str, Any]
    path: Path
    schema: list[str] = field(default_factory=list)
    validator: list[str] = field(default_factory=list)


@dataclass
class Corpus:
    docs: dict[str, Doc]
    gzip_limit: int  # the lowered MAX_GZIP_BYTES of "over_size"


def _add(docs: dict[str, Doc], out: Path, name: str, results: Results, root: Path,
         **links: str) -> None:
    text = sarif.render(results, RenderContext.for_root(root, **links))
    path = out / f"{name}.sarif"
    path.write_text(text, encoding="utf-8")
    docs[name] = Doc(results, json.loads(text), path)


def _errors_first(results: Results) -> int:
    return sum(1 for v in results.findings if v.severity == "error") + len(
        results.input_errors)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Every document the validator checks, validated in one multitool call."""
    need_validator()
    out = tmp_path_factory.mktemp("sarif")
    docs: dict[str, Doc] = {}
    _add(docs, out, "example", example_results(), ROOT, repo_url=REPO, sha=SHA)

    every = tmp_path_factory.mktemp("every")
    results = every_rule_suite(every)
    _add(docs, out, "every", results, every)

    empty = tmp_path_factory.mktemp("empty")
    (empty / ".git").mkdir()
    write_files(empty, {"agent-eval.yaml": SEED_SUITE, "policies/payments.yaml": SEED_POLICY,
                  "traces/ok.jsonl": SEED_TRACE.replace("50", "10")})
    _add(docs, out, "empty", evaluate_config(empty / "agent-eval.yaml"), empty)

    colon = tmp_path_factory.mktemp("colon")  # files whose first path segment holds a ":"
    (colon / ".git").mkdir()
    write_files(colon, {"agent-eval.yaml": SEED_SUITE.replace("traces/*.jsonl", "'**/*.jsonl'"),
                        "policies/payments.yaml": SEED_POLICY,
                        "https:x.jsonl": SEED_TRACE + "not json\n",
                        "c:/t.jsonl": SEED_TRACE})
    _add(docs, out, "colon", evaluate_config(colon / "agent-eval.yaml"), colon)

    # traces read through a --traces glob that points outside the root (docs/security.md)
    outside = tmp_path_factory.mktemp("outside")
    write_files(outside, {"repo/.git/HEAD": "", "repo/agent-eval.yaml": SEED_SUITE,
                          "repo/policies/payments.yaml": SEED_POLICY,
                          "data/t.jsonl": SEED_TRACE + "not json\n"})
    suite = load_suite(outside / "repo" / "agent-eval.yaml")
    files, errors = suite_sources(suite, [str(outside / "data" / "*.jsonl")])
    _add(docs, out, "outside", evaluate_files(suite, files, errors, timings=False),
         outside / "repo")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sarif, "MAX_RESULTS", _errors_first(results) + 2)
        mp.setattr(sarif, "MAX_LOCATIONS_PER_RESULT", 2)
        _add(docs, out, "over_count", results, every)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sarif, "MAX_RESULTS", 0)
        base = len(gzip.compress(sarif.render(results).encode(), mtime=0))
        mp.setattr(sarif, "MAX_RESULTS", 25_000)
        gzip_limit = base + 1500
        mp.setattr(sarif, "MAX_GZIP_BYTES", gzip_limit)
        _add(docs, out, "over_size", results, every)

    # A canary: the multitool must reject it, or it is not really checking.
    broken = json.loads(json.dumps(docs["example"].sarif))
    del broken["runs"][0]["results"][0]["locations"]
    del broken["runs"][0]["tool"]["driver"]["rules"][0]["help"]
    (out / "canary_github.sarif").write_text(json.dumps(broken), encoding="utf-8")

    found = multitool([d.path for d in docs.values()] + [out / "canary_github.sarif"], out)
    for doc in docs.values():
        doc.validator = found[doc.path.name]
        doc.schema = schema_errors(doc.sarif)
    docs["canary_github"] = Doc(docs["example"].results, broken, out / "canary_github.sarif",
                                validator=found["canary_github.sarif"])
    yield Corpus(docs, gzip_limit)


def assert_valid(doc: Doc) -> None:
    assert doc.schema == [], "\n".join(doc.schema)
    assert doc.validator == [], "\n".join(doc.validator)


# ------------------------------------------------------------------ validity
def test_validators_really_check(corpus: Corpus) -> None:
    """A result without locations and a rule without help break GitHub's rules; a bad
    level breaks the schema (the multitool alone lets that one through)."""
    found = "\n".join(corpus.docs["canary_github"].validator)
    assert "GH" in found and "'locations'" in found and "'help'" in found
    bad = json.loads(json.dumps(corpus.docs["example"].sarif))
    bad["runs"][0]["results"][0]["level"] = "fatal"
    assert any("'fatal' is not one of" in e for e in schema_errors(bad))


@pytest.mark.parametrize("name", ["example", "every", "empty", "colon", "outside",
                                  "over_count", "over_size"])
def test_valid_for_the_schema_and_github(corpus: Corpus, name: str) -> None:
    doc = corpus.docs[name]
    assert_valid(doc)
    assert doc.sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert doc.sarif["version"] == "2.1.0"
    run = run_of(doc.sarif)
    assert run["automationDetails"]["id"] == f"agent-eval/{doc.results.suite}/"
    driver = run["tool"]["driver"]
    # each rule described once, and only the rules of the results
    ids = [d["id"] for d in driver["rules"]]
    assert len(ids) == len(set(ids))
    assert set(ids) == {r["ruleId"] for r in run["results"]} | {
        v.rule for v in doc.results.findings} | {e.rule for e in doc.results.input_errors}
    assert driver["name"] == "agent-eval"
    assert driver["version"] == doc.results.tool_version
    assert driver["informationUri"] == "https://github.com/agent-eval/agent-eval"


def test_the_bundled_example(corpus: Corpus) -> None:
    doc = corpus.docs["example"]
    results = doc.sarif["runs"][0]["results"]
    # the rule violations, then the scenarios' findings and the missed criteria
    findings = doc.results.findings
    assert len(doc.results.violations) == 10
    assert len(results) == len(findings) > 10
    assert [r["ruleId"] for r in results] == [v.rule for v in findings]
    for r, v in zip(results, findings, strict=True):
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": v.config.file, "uriBaseId": "%SRCROOT%"}
        assert loc["region"]["startLine"] == v.config.line
        assert loc["region"]["startColumn"] == v.config.col
        assert r["partialFingerprints"] == {"primaryLocationLineHash": v.fingerprint}
        if v.trace is None:  # criteria, and scenarios' notes about the config
            assert "relatedLocations" not in r and not v.rule.startswith("args_valid/")
            continue
        trace = r["relatedLocations"][0]["physicalLocation"]
        assert trace["artifactLocation"]["uri"] == v.trace.file
        assert trace["region"]["startLine"] == v.trace.line
        assert r["partialFingerprints"] == {"primaryLocationLineHash": v.fingerprint}
    # The paths are relative to the repository root, as GitHub resolves them.
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"examples/customer-service/policies/customer.yaml",
                    "examples/customer-service/agent-eval.yaml"}
    for uri in uris:
        assert (ROOT / uri).is_file()
    run = run_of(doc.sarif)
    assert run["invocations"][0] == {"executionSuccessful": True}
    assert run["versionControlProvenance"] == [
        {"repositoryUri": REPO, "revisionId": SHA, "mappedTo": {"uriBaseId": "%SRCROOT%"}}]


def test_every_rule_of_the_catalogue(corpus: Corpus) -> None:
    doc = corpus.docs["every"]
    run = run_of(doc.sarif)
    catalogue = rules.catalogue()
    descriptors = run["tool"]["driver"]["rules"]
    reported = {r["ruleId"] for r in run["results"]}
    # the rules that fired, in the catalogue's order (not the whole catalogue)
    assert [d["id"] for d in descriptors] == [r for r in catalogue if r in reported]
    # the live rules (and tool_results, shown on live sessions) need running MCP servers:
    # tests/live/test_sarif_live.py reports them
    from agent_eval.checks.tool_results import RULES as RESULT_RULES
    from agent_eval.live import INPUT_RULES, PROBE_RULES, SERVER_RULES
    from agent_eval.rule_ids import CRITERIA_REGRESSION, IMPORT_UNSUPPORTED

    # criteria/regression needs a base run and import/unsupported a peer tool's config, which
    # this one native run has neither of: tests/test_docs_rules.py runs their pages
    elsewhere = {CRITERIA_REGRESSION.id, IMPORT_UNSUPPORTED.id}
    offline = set(catalogue) - {*PROBE_RULES, *SERVER_RULES, *INPUT_RULES, *RESULT_RULES,
                                *elsewhere}
    assert reported == offline, sorted(offline - reported)
    for r in run["results"]:
        assert descriptors[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning", "note")
        assert r["message"]["text"].endswith(".")
        assert r["partialFingerprints"]["primaryLocationLineHash"]
        assert len(r["locations"]) == 1
        for n, loc in enumerate(r.get("relatedLocations", []), 1):
            assert loc["id"] == n and loc["message"]["text"]
    # The test severities are the results' levels (but for the rules that are not: the
    # not_recorded ones, a warning under an error test, and unexercised, a note by default).
    not_recorded = ("args_valid/not_recorded", "tool_blocklist/not_recorded",
                    "sequence_valid/not_recorded")
    levels = {r["properties"].get("test"): r["level"] for r in run["results"]
              if r["ruleId"] not in (*not_recorded, "coverage/unexercised")}
    assert {r["level"] for r in run["results"]
            if r["ruleId"] == "coverage/unexercised"} == {"note"}
    for rule in not_recorded:
        assert {(levels[r["properties"]["test"]], r["level"]) for r in run["results"]
                if r["ruleId"] == rule} == {("error", "warning")}, rule
    assert levels["args_strict"] == "warning" and levels["scope"] == "note"
    assert levels["args"] == levels["flow"] == levels["no_destructive"] == "error"
    # the not_an_object and wrong_type ones
    assert levels["unjudged"] == levels["unjudged_flow"] == "error"
    hashes = [r["partialFingerprints"]["primaryLocationLineHash"] for r in run["results"]]
    assert len(hashes) == len(set(hashes))


def test_input_errors_are_located_at_the_trace(corpus: Corpus) -> None:
    run = run_of(corpus.docs["every"].sarif)
    located = {}
    for r in run["results"]:
        if r["ruleId"].startswith("input/"):
            loc = r["locations"][0]["physicalLocation"]
            located[r["ruleId"]] = (loc["artifactLocation"]["uri"],
                                    loc.get("region", {}).get("startLine"))
            assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
            assert r["level"] == "error"
            assert r["message"]["text"].startswith("Input error in ")
    # Lines read from BAD_TRACE and SUITE_ALL above; line 0 (a whole file) has no region.
    assert located == {
        "input/parse_error": ("traces/bad.jsonl", 2),
        "input/invalid_event": ("traces/bad.jsonl", 3),
        "input/unmatched_result": ("traces/bad.jsonl", 4),
        "input/event_after_end": ("traces/bad.jsonl", 6),
        "input/unknown_format": ("traces/notes.jsonl", None),
        "input/unreadable_file": ("traces/locked.jsonl", None),
        "input/no_traces": ("agent-eval.yaml", 3),
        "input/limit_exceeded": ("traces/deep.jsonl", 1),
        "input/outside_root": ("traces/away.jsonl", None),
        "input/reader_error": ("traces/odd.json", None),
    }
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    # and the judge's three: a judgement missing, one unusable (a score out of its scale) and
    # a broken line of the store (judge_rules.py)
    judged = sorted(r["ruleId"] for r in run["results"] if r["ruleId"].startswith("judge/")
                    and r["message"]["text"].startswith("Input error in "))
    assert judged == ["judge/error", "judge/missing", "judge/store"]
    assert any("13 input error(s)" in n["message"]["text"] and n["level"] == "error"
               for n in inv["toolExecutionNotifications"])


def test_a_colon_in_a_files_first_segment_is_percent_encoded(corpus: Corpus) -> None:
    """A trace file at the root named ``https:x.jsonl`` (or in a folder ``c:``) was written
    as the URI ``https:x.jsonl``: an absolute URI of the scheme ``https``, not a path
    relative to ``%SRCROOT%``; the validator refused the file (SARIF1002)."""
    run = run_of(corpus.docs["colon"].sarif)
    uris = sorted({loc["physicalLocation"]["artifactLocation"]["uri"]
                   for r in run["results"]
                   for loc in [*r["locations"], *r.get("relatedLocations", [])]})
    # by hand: the suite's policy line, both traces' calls, the bad line of the first
    assert uris == ["c%3A/t.jsonl", "https%3Ax.jsonl", "policies/payments.yaml"]
    assert sorted(r["ruleId"] for r in run["results"]) == [
        "args_valid/maximum", "args_valid/maximum", "input/parse_error"]


def test_a_trace_outside_the_root_is_named_never_located(corpus: Corpus) -> None:
    """A trace read through a ``--traces`` glob that points outside the root is
    ``../data/t.jsonl`` in the results: as a SARIF location it was
    ``%SRCROOT%/../data/t.jsonl``, a place outside the repository. It is named in the
    message only; the finding stays at its policy line, the input error goes to the suite
    file (as one about a ``--traces`` option does)."""
    doc = corpus.docs["outside"]
    assert {(v.trace.file if v.trace else None) for v in doc.results.findings} == {
        "../data/t.jsonl"}
    assert [(e.rule, e.file, e.line) for e in doc.results.input_errors] == [
        ("input/parse_error", "../data/t.jsonl", 2)]  # SEED_TRACE is one line
    run = run_of(doc.sarif)
    uris = sorted({loc["physicalLocation"]["artifactLocation"]["uri"]
                   for r in run["results"]
                   for loc in [*r["locations"], *r.get("relatedLocations", [])]})
    assert uris == ["agent-eval.yaml", "policies/payments.yaml"]
    texts = [r["message"]["text"] for r in run["results"]]
    assert any("../data/t.jsonl:2" in t for t in texts)  # the input error, where it is
    assert any("at ../data/t.jsonl:" in t for t in texts)  # the finding's trace line
    assert not any("relatedLocations" in r for r in run["results"])


def test_an_empty_run(corpus: Corpus) -> None:
    doc = corpus.docs["empty"]
    assert doc.results.verdict == "pass"
    run = run_of(doc.sarif)
    assert run["results"] == []
    assert run["tool"]["driver"]["rules"] == []  # no rule fired: none is described
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_over_the_result_and_location_limits(corpus: Corpus) -> None:
    doc = corpus.docs["over_count"]
    full = corpus.docs["every"].sarif["runs"][0]["results"]
    kept = run_of(doc.sarif)["results"]
    errors = [r for r in full if r["level"] == "error"]
    warnings = [r for r in full if r["level"] == "warning"]
    notes = [r for r in full if r["level"] == "note"]
    assert len(errors) == _errors_first(doc.results) and warnings and notes
    # All errors and the first two warnings survive, in their original order.
    key = [(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"]) for r in kept]
    expected = [r for r in full if r in errors or r in warnings[:2]]
    assert key == [(r["ruleId"], r["partialFingerprints"]["primaryLocationLineHash"])
                   for r in expected]
    dropped = len(full) - len(kept)
    assert dropped == len(warnings) - 2 + len(notes)
    texts = [n["message"]["text"] for n in notifications(doc.sarif) if n["level"] == "warning"]
    assert any(t.startswith(f"{dropped} result(s) were dropped") and
               f"{len(warnings) - 2} warning, {len(notes)} note" in t and "results.json" in t
               for t in texts), texts
    # The blocklist result had the trace line and one related line: one location remains.
    blocked = next(r for r in kept if r["ruleId"] == "tool_blocklist")
    assert len(blocked["locations"]) + len(blocked["relatedLocations"]) == 2
    assert blocked["properties"]["relatedLocationsDropped"] == 1
    assert any("related location(s) were dropped" in t for t in texts)


def test_over_the_size_limit(corpus: Corpus) -> None:
    doc = corpus.docs["over_size"]
    size = len(gzip.compress(doc.path.read_bytes(), mtime=0))
    limit_note = [n for n in notifications(doc.sarif) if "gzip" in n["message"]["text"]]
    assert len(limit_note) == 1 and limit_note[0]["level"] == "warning"
    kept = run_of(doc.sarif)["results"]
    full = corpus.docs["every"].sarif["runs"][0]["results"]
    assert 0 < len(kept) < len(full)
    assert size <= corpus.gzip_limit
    # Only errors were kept, and they are the first errors in the original order.
    errors = [r for r in full if r["level"] == "error"]
    assert [r["message"] for r in kept] == [r["message"] for r in errors[:len(kept)]]
    assert f"{len(full) - len(kept)} result(s) were dropped" in limit_note[0]["message"]["text"]


def test_the_size_limit_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    results = every_rule_suite(tmp_path)
    monkeypatch.setattr(sarif, "MAX_RESULTS", 0)
    base = len(gzip.compress(sarif.render(results).encode(), mtime=0))
    monkeypatch.setattr(sarif, "MAX_RESULTS", 25_000)
    # A result costs ~150-250 gzip bytes: the rule catalogue's help text keeps the strings
    # it repeats out of gzip's 32 KiB window.
    for limit in (base + 1000, base + 3000):
        monkeypatch.setattr(sarif, "MAX_GZIP_BYTES", limit)
        text = sarif.render(results)
        assert len(gzip.compress(text.encode(), mtime=0)) <= limit
        assert json.loads(text)["runs"][0]["results"]


# ------------------------------------------------------------------ rules and values
def test_rule_descriptors_carry_the_documentation(corpus: Corpus) -> None:
    catalogue = rules.catalogue()
    written = run_of(corpus.docs["every"].sarif)["tool"]["driver"]["rules"]
    assert written and all(d == sarif.to_json(sarif._descriptor(catalogue[d["id"]]))
                           for d in written)
    # every rule's descriptor, as a run that reports the rule writes it
    for doc in catalogue.values():
        d = sarif.to_json(sarif._descriptor(doc))
        assert d["id"] == doc.id
        assert d["shortDescription"]["text"] == doc.short
        assert d["fullDescription"]["text"] == doc.full
        assert d["help"] == {"text": doc.text, "markdown": doc.markdown}
        assert d["defaultConfiguration"] == {"level": doc.level}
        assert d["properties"]["tags"] == list(doc.tags)
        assert d["helpUri"] == ("https://github.com/agent-eval/agent-eval/blob/main/src/"
                                f"agent_eval/rules/docs/{doc.id}.md")
        assert (ROOT / "src" / "agent_eval" / "rules" / "docs" / f"{doc.id}.md").is_file()
        assert d["name"].isidentifier() and d["name"][0].isupper()
        if doc.security_severity is None:
            assert "security-severity" not in d["properties"]
        else:
            assert d["properties"]["security-severity"] == doc.security_severity
            assert 0.0 <= float(d["properties"]["security-severity"]) <= 10.0
            # GitHub only shows a security severity for rules tagged "security".
            assert "security" in d["properties"]["tags"]


def test_help_text_is_what_explain_prints(capsys: pytest.CaptureFixture[str]) -> None:
    doc = sarif.to_json(sarif._descriptor(rules.catalogue()["args_valid/maximum"]))
    assert cli(["explain", "args_valid/maximum"]) == 0
    assert doc["help"]["text"] == capsys.readouterr().out


SEED_POLICY = """\
tools:
  apply_discount:
    arguments:
      percent:
        type: number
        min: 0
        max: 30
"""
SEED_SUITE = """\
suite: seed
traces: traces/*.jsonl
tests:
  - id: args_valid
    metric: args_valid
    policy: policies/payments.yaml
"""
SEED_TRACE = '{"type":"tool_call","tool":"apply_discount","arguments":{"percent":50}}\n'


def test_the_seed_example_by_hand(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": SEED_SUITE, "policies/payments.yaml": SEED_POLICY,
                     "traces/discount.jsonl": SEED_TRACE})
    results = evaluate_config(tmp_path / "agent-eval.yaml")
    doc = render(results, tmp_path)
    [result] = run_of(doc)["results"]
    assert result["ruleId"] == "args_valid/maximum"
    assert result["level"] == "error"
    rule = run_of(doc)["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert rule["id"] == "args_valid/maximum"
    # `max: 30` is line 7 of SEED_POLICY, its key in column 9.
    assert result["locations"] == [{"physicalLocation": {
        "artifactLocation": {"uri": "policies/payments.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 7, "startColumn": 9, "snippet": {"text": "max: 30"}}}}]
    [related] = result["relatedLocations"]
    assert related["id"] == 1
    assert related["physicalLocation"] == {
        "artifactLocation": {"uri": "traces/discount.jsonl", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1}}
    trace_id = next(iter(results.violations)).trace.trace_id  # type: ignore[union-attr]
    assert result["properties"] == {
        "test": "args_valid", "trace_id": trace_id, "tool": "apply_discount",
        "argument": "percent", "value": 50, "constraint": "max: 30"}
    text = result["message"]["text"]
    for part in ("apply_discount", "percent", "50", "max: 30", "traces/discount.jsonl:1",
                 trace_id):
        assert part in text, (part, text)


# ------------------------------------------------------------------ fingerprints
FP_SUITE = """\
suite: fingerprints
traces: traces/*.jsonl
tests:
  - id: args
    metric: args_valid
    policy: policy.yaml
"""
FP_POLICY = """\
tools:
  apply_discount:
    arguments:
      percent: {type: number, min: 0, max: 30}
      code: {type: string, pattern: '^[A-Z]{4}$'}
"""
FP_TRACE = [{"type": "trace_start", "trace_id": "t1"},
            call("apply_discount", {"percent": 50, "code": "save"}),
            call("apply_discount", {"percent": 40}, 2),
            {"type": "trace_end"}]


def _by_identity(doc: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    out = {}
    for r in run_of(doc)["results"]:
        key = (r["ruleId"], r["properties"]["argument"],
               r["relatedLocations"][0]["physicalLocation"]["region"]["startLine"])
        out[key] = r
    return out


def test_fingerprints_survive_unrelated_edits(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": FP_SUITE, "policy.yaml": FP_POLICY,
                     "traces/t1.jsonl": events(*FP_TRACE)})
    before = run_of(render(evaluate_config(tmp_path / "agent-eval.yaml"), tmp_path))["results"]
    assert sorted(r["ruleId"] for r in before) == ["args_valid/maximum", "args_valid/maximum",
                                                   "args_valid/pattern"]

    # Unrelated lines at the top of the policy; blank lines and other events in the trace.
    write_files(tmp_path, {
        "policy.yaml": "# Payments policy\n# reviewed by the risk team\n" + FP_POLICY.replace(
            "tools:\n", "tools:\n  lookup_order:\n    arguments:\n"
                        "      order_id: {type: string}\n", 1),
        "traces/t1.jsonl": "\n\n" + events(
            FP_TRACE[0], {"type": "output", "output": "Let me check."},
            call("lookup_order", {"order_id": "A-1"}, 9), FP_TRACE[1],
            {"type": "tool_result", "id": "c1", "result": {"ok": True}}, FP_TRACE[2],
            FP_TRACE[3])})
    after = run_of(render(evaluate_config(tmp_path / "agent-eval.yaml"), tmp_path))["results"]
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert new["ruleId"] == old["ruleId"]
        assert new["partialFingerprints"] == old["partialFingerprints"]
        line = "physicalLocation", "region", "startLine"
        assert _get(new["locations"][0], line) == _get(old["locations"][0], line) + 5
        assert _get(new["relatedLocations"][0], line) != _get(old["relatedLocations"][0], line)

    # A different value that breaks a different keyword is a different finding.
    changed = [FP_TRACE[0], call("apply_discount", {"percent": -5, "code": "save"}),
               FP_TRACE[2], FP_TRACE[3]]
    write_files(tmp_path, {"traces/t1.jsonl": events(*changed)})
    again = run_of(render(evaluate_config(tmp_path / "agent-eval.yaml"), tmp_path))["results"]
    old_hashes = {r["partialFingerprints"]["primaryLocationLineHash"] for r in before}
    minimum = [r for r in again if r["ruleId"] == "args_valid/minimum"]
    assert len(minimum) == 1
    assert minimum[0]["partialFingerprints"]["primaryLocationLineHash"] not in old_hashes
    # The untouched findings (the pattern and the second call's maximum) keep theirs.
    # (lookup_order, called no more, is now an unexercised policy key: a new finding too)
    assert {r["partialFingerprints"]["primaryLocationLineHash"] for r in again
            if r["ruleId"] not in ("args_valid/minimum", "coverage/unexercised")} < old_hashes


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def test_input_error_fingerprints_ignore_the_line_number(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": FP_SUITE, "policy.yaml": FP_POLICY,
                     "traces/t1.jsonl": events(*FP_TRACE) + "{oops\n"})

    def hashes() -> list[tuple[str, int, str]]:
        run = run_of(render(evaluate_config(tmp_path / "agent-eval.yaml"), tmp_path))
        return [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
                 r["partialFingerprints"]["primaryLocationLineHash"])
                for r in run["results"] if r["ruleId"].startswith("input/")]

    [(rule, line, first)] = hashes()
    assert (rule, line) == ("input/parse_error", 5)
    write_files(tmp_path, {"traces/t1.jsonl": "\n\n" + events(*FP_TRACE) + "{oops\n"})
    assert hashes() == [("input/parse_error", 7, first)]


# ------------------------------------------------------------------ golden file
def test_example_matches_the_reviewed_golden_file() -> None:
    """The bundled example as ``run --no-timings`` writes results.sarif, paths relative to
    the repository root, compared byte for byte with the reviewed file (as the HTML, JUnit
    and Markdown goldens beside it; AGENT_EVAL_UPDATE_GOLDEN=1 rewrites it)."""
    assert_golden(sarif.render(example_results(), RenderContext.for_root(
        ROOT, repo_url=REPO, sha=SHA)), "example.sarif")


# ------------------------------------------------------------------ output form
def test_deterministic_and_in_the_specification_order(tmp_path: Path) -> None:
    results = every_rule_suite(tmp_path)
    ctx = RenderContext.for_root(tmp_path)
    text = sarif.render(results, ctx)
    assert text == sarif.render(results, ctx)
    assert text.startswith('{\n  "$schema": "https://json.schemastore.org/sarif-2.1.0.json",\n'
                           '  "version": "2.1.0",\n  "runs": [\n')
    run = json.loads(text)["runs"][0]
    assert list(run) == ["tool", "invocations", "results", "automationDetails", "columnKind",
                         "properties"]
    assert list(run["results"][0])[:4] == ["ruleId", "ruleIndex", "level", "message"]
    assert list(run["tool"]["driver"]["rules"][0])[:2] == ["id", "name"]


def test_the_serializer_leaves_out_defaults() -> None:
    result = om.Result(message=om.Message(text="x."), rule_id="r", rule_index=0)
    # kind "fail", rank -1 and the Nones are defaults; level is always written.
    assert sarif.to_json(result) == {"ruleId": "r", "ruleIndex": 0, "level": "warning",
                                     "message": {"text": "x."}}
    run = om.Run(tool=om.Tool(driver=om.ToolComponent(name="t")))
    assert sarif.to_json(run) == {"tool": {"driver": {"name": "t"}}}  # no Factory defaults
    assert sarif.to_json(om.Location(id=1, properties={"a": [om.Message(text="y")]})) == {
        "id": 1, "properties": {"a": [{"text": "y"}]}}


def _reference_result(v: Finding, index: dict[str, int], snippet: str | None, room: int,
                      state: str | None) -> Any:
    """A finding's ``om.Result``, made of sarif-om objects as the renderer once made it:
    what :func:`sarif._finding_result` must equal once serialized."""
    def physical(file: str, line: int, col: int = 0, text: str | None = None) -> Any:
        region = None
        if line > 0:
            region = om.Region(start_line=line, start_column=col if col > 0 else None,
                               snippet=None if text is None else om.ArtifactContent(text=text))
        return om.PhysicalLocation(artifact_location=om.ArtifactLocation(
            uri=sarif._uri(file), uri_base_id="%SRCROOT%"), region=region)

    def inside(file: str) -> bool:  # a place in the repository: relative, no ".." step
        steps = file.replace("\\", "/").split("/")
        return file != "" and steps[0] != "" and ".." not in steps

    parts = [sarif._sentence(v.message)]
    related = []
    if v.trace is not None:
        parts.append(f"Trace {v.trace.trace_id} at {sarif._where(v.trace)}.")
        if room > 0 and inside(v.trace.file):
            related.append(om.Location(id=1, physical_location=physical(
                v.trace.file, v.trace.line), message=om.Message(
                text=sarif.message_text(
                    f"Trace {v.trace.trace_id}: where the rule is violated."))))
    if v.scenario:
        parts.append(f"Scenario {v.scenario}.")
    if v.related:
        parts.append(f"{len(v.related)} more related trace line(s).")
    for n, ref in enumerate(v.related, 2 if v.trace is not None else 1):
        if n > room:
            break
        if not inside(ref.file):
            continue
        related.append(om.Location(
            id=n, physical_location=physical(ref.file, ref.line),
            message=om.Message(text=sarif.message_text(f"Trace {ref.trace_id}: a related line."))))
    props: dict[str, Any] = {"test": v.test}
    for key, value in (("scenario", v.scenario),
                       ("trace_id", v.trace.trace_id if v.trace else None),
                       ("tool", v.tool), ("argument", v.argument), ("value", v.value),
                       ("constraint", v.constraint)):
        if value is not None:
            props[key] = value
    total = (v.trace is not None) + len(v.related)
    if total > room:
        props["relatedLocationsDropped"] = total - room
    c = v.config
    return om.Result(
        rule_id=v.rule, rule_index=index[v.rule], level=v.severity,
        message=om.Message(text=sarif.message_text(" ".join(parts))),
        locations=[om.Location(physical_location=physical(c.file, c.line, c.col, snippet))],
        partial_fingerprints={"primaryLocationLineHash": v.fingerprint} if v.fingerprint
        else None,
        related_locations=related or None, baseline_state=state, properties=props)


class _Compared:
    """What a comparison tells a result: its baseline state."""

    def state_of(self, finding: Finding) -> str:
        return "unchanged" if finding.fingerprint.startswith("a") else "new"


_TEXT = st.text(st.characters(codec="utf-8"), max_size=4)
_FILE = _TEXT | st.sampled_from(["../t.jsonl", "/t.jsonl", "a/../t", "\\t", "a\\..\\t"])
_REF = st.builds(TraceRef, _FILE, st.integers(-1, 3), _TEXT)
_FINDINGS = st.builds(
    Finding, rule=st.sampled_from(["r/a", "r/b"]),
    severity=st.sampled_from(["error", "warning", "note", "none"]), message=_TEXT,
    test=_TEXT, config=st.builds(ConfigRef, st.sampled_from(["p.yaml", "gone.yaml"]),
                                 st.integers(-1, 4), st.integers(-1, 4), _TEXT),
    trace=st.none() | _REF, tool=st.none() | _TEXT, argument=st.none() | _TEXT,
    value=st.none() | st.integers(-2, 3) | _TEXT | st.lists(st.integers(0, 2), max_size=2)
    | st.dictionaries(_TEXT, st.integers(0, 2) | st.none(), max_size=2),
    constraint=st.none() | _TEXT, scenario=st.none() | _TEXT,
    related=st.lists(_REF, max_size=3).map(tuple), fingerprint=st.sampled_from(["", "ab", "cd"]))


@settings(max_examples=300, deadline=None)
@given(_FINDINGS, st.integers(0, 3), st.booleans())
def test_a_result_made_in_json_form_is_what_the_serializer_makes_of_the_object(
        v: Finding, room: int, compared: bool) -> None:
    """The results of a large run are made as JSON directly (sarif._finding_result): the
    members, their values and their order are those of ``to_json`` on the sarif-om
    object (defaults such as a missing column or snippet left out)."""
    sources = sarif._Sources(RenderContext(read=lambda path: "a: 1\n  b: [2]\n"
                                           if path == "p.yaml" else None))
    index = {"r/a": 0, "r/b": 1}
    c = v.config
    line = sources.line(c.file, c.line)
    snippet = line[max(c.col, 1) - 1:] if line is not None else None
    stand_in = _Compared() if compared else None
    made = sarif._finding_result(v, index, sources, room, stand_in)  # type: ignore[arg-type]
    expected = sarif.to_json(_reference_result(
        v, index, snippet, room, None if stand_in is None else stand_in.state_of(v)))
    assert made == expected
    assert json.dumps(made) == json.dumps(expected)  # the same members in the same order


def _whole(results: Results, ctx: RenderContext) -> str:
    """The log made at once, as the renderer writes it when the stream gives up."""
    return sarif._build(results, ctx)[1]


def test_the_stream_writes_what_the_whole_log_would_be(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """results.sarif is written result by result (sarif._stream); its bytes are those of
    the whole log made at once, whichever results the limits keep: ranked by severity
    (levels of no severity last, in their order), ties in their order."""
    results = every_rule_suite(tmp_path)
    ctx = RenderContext.for_root(tmp_path)
    odd = [replace(v, severity=level) for v, level in zip(  # type: ignore[arg-type]
        list(results.findings)[:4], ["none", "none", "bogus", "warning"], strict=True)]
    results.unexercised = [*results.unexercised, *odd]
    total = len(results.findings) + len(results.input_errors)
    errors = _errors_first(results)
    warnings = sum(1 for v in results.findings if v.severity == "warning")
    for keep in (0, 1, errors - 1, errors, errors + 2, errors + warnings, total - 3,
                 total - 2, total - 1, total, 25_000):
        monkeypatch.setattr(sarif, "MAX_RESULTS", keep)
        for room in (1, 2, 1_000):
            monkeypatch.setattr(sarif, "MAX_LOCATIONS_PER_RESULT", room)
            out = io.BytesIO()
            assert sarif._stream(sarif._Prepared(results, ctx), out)
            assert out.getvalue().decode() == _whole(results, ctx), (keep, room)
            assert sarif.render(results, ctx) == out.getvalue().decode()
    # gzip's size, counted as the stream is written, is what the whole text compresses to
    monkeypatch.setattr(sarif, "MAX_RESULTS", 25_000)
    size = len(gzip.compress(sarif.render(results, ctx).encode(), compresslevel=6, mtime=0))
    for limit, fits in ((size, True), (size - 1, False)):
        monkeypatch.setattr(sarif, "MAX_GZIP_BYTES", limit)
        assert sarif._stream(sarif._Prepared(results, ctx), io.BytesIO()) is fits
        assert sarif.render(results, ctx) == _whole(results, ctx)


def test_the_whole_log_is_written_when_the_stream_cannot_be(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Over the size limit, or with a value orjson cannot write (an integer beyond 64
    bits), what the stream wrote is thrown away and the whole log is written instead."""
    results = every_rule_suite(tmp_path)
    ctx = RenderContext.for_root(tmp_path)
    next(iter(results.tests[0].violations)).value = 2 ** 70
    out = tmp_path / "big.sarif"
    RENDERERS["sarif"].write(results, ctx, out)
    text = out.read_text(encoding="utf-8")
    assert text == _whole(results, ctx) and str(2 ** 70) in text
    monkeypatch.setattr(sarif, "MAX_RESULTS", 0)
    base = len(gzip.compress(sarif.render(results, ctx).encode(), mtime=0))
    monkeypatch.setattr(sarif, "MAX_RESULTS", 25_000)
    monkeypatch.setattr(sarif, "MAX_GZIP_BYTES", base + 1000)
    RENDERERS["sarif"].write(results, ctx, out)
    text = out.read_text(encoding="utf-8")
    assert text == _whole(results, ctx)
    assert len(gzip.compress(text.encode(), mtime=0)) <= base + 1000


def test_a_value_that_is_the_streams_placeholder_does_not_move_the_results(
        tmp_path: Path) -> None:
    """The stream writes the log's text around a placeholder string where the results go;
    a results file (report, merge: it may come from anyone) whose rule id is that very
    string put its descriptor, before the results, in their place: the results were
    written inside tool.driver.rules and runs[0].results was the placeholder, so code
    scanning saw none. The log is then made at once, as before the stream."""
    results = every_rule_suite(tmp_path)
    ctx = RenderContext.for_root(tmp_path)
    first = next(iter(results.tests[0].violations))
    first.rule = "\x00results\x00"
    assert not sarif._stream(sarif._Prepared(results, ctx), io.BytesIO())
    out = tmp_path / "results.sarif"
    RENDERERS["sarif"].write(results, ctx, out)
    text = out.read_text(encoding="utf-8")
    assert text == _whole(results, ctx)
    run = run_of(json.loads(text))
    assert isinstance(run["results"], list)
    assert "\x00results\x00" in [r["ruleId"] for r in run["results"]]
    assert all(isinstance(d["id"], str) for d in run["tool"]["driver"]["rules"])


def test_version_control_provenance_when_known(tmp_path: Path) -> None:
    results = every_rule_suite(tmp_path)
    ctx = RenderContext.for_root(tmp_path, repo_url="https://github.com/o/r", sha="abc123")
    run = json.loads(sarif.render(results, ctx))["runs"][0]
    assert run["versionControlProvenance"] == [
        {"repositoryUri": "https://github.com/o/r", "revisionId": "abc123",
         "mappedTo": {"uriBaseId": "%SRCROOT%"}}]
    assert "versionControlProvenance" not in json.loads(sarif.render(results))["runs"][0]


def test_the_category_comes_from_the_context(corpus: Corpus) -> None:
    """The action's ``sarif-category`` input: each run's ``automationDetails.id``, with a
    trailing ``/`` as the CodeQL action writes it; without one, the suite's own."""
    results = corpus.docs["example"].results

    def category(given: str | None) -> str:
        doc = json.loads(sarif.render(results, RenderContext(sarif_category=given)))
        (run,) = doc["runs"]
        return str(run["automationDetails"]["id"])

    assert category("team/cs") == "team/cs/"
    assert category("x/") == "x/"
    assert category(None) == category("") == f"agent-eval/{results.suite}/"


def test_registered_and_written_by_run(tmp_path: Path) -> None:
    renderer = RENDERERS["sarif"]
    assert renderer.filename == "results.sarif"
    (tmp_path / ".git").mkdir()
    write_files(tmp_path, {"agent-eval.yaml": SEED_SUITE, "policies/payments.yaml": SEED_POLICY,
                     "traces/discount.jsonl": SEED_TRACE})
    out = tmp_path / "out"
    code = cli(["run", "--config", str(tmp_path / "agent-eval.yaml"), "--format", "sarif",
                "--output-dir", str(out), "-q"])
    assert code == 1
    doc = json.loads((out / "results.sarif").read_text(encoding="utf-8"))
    results = read_results(out)
    assert [r["ruleId"] for r in run_of(doc)["results"]] == [
        v["rule"] for t in results["tests"] for v in t["violations"]]


def test_the_validator_is_installed_by_the_project_files() -> None:
    package = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    pinned = package["devDependencies"]["@microsoft/sarif-multitool"]
    assert pinned[0].isdigit(), "pin an exact version"
    lock = json.loads((ROOT / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/@microsoft/sarif-multitool"]["version"] == pinned



# ------------------------------------------------------------------ embedded links
# GitHub's and VS Code's reading of a plain-text message (SARIF 2.1.0 3.11.6): "[text](N)"
# is a link to the result's related location N unless its "[" is escaped (preceded by an
# odd number of backslashes)
EMBEDDED_LINK = re.compile(r"(?<!\\)(?:\\\\)*\[(?:[^\\\][]|\\.)*\]\(\d+\)")


def test_brackets_of_trace_text_are_escaped_never_an_embedded_link(tmp_path: Path) -> None:
    """A tool name and a trace id that write "[text](1)" are shown as written: Code
    Scanning made them a link to the trace line, with the text the trace chose."""
    finding = Finding(
        rule="tool_blocklist", severity="error",
        message="Blocked tool called: [dismiss: false positive](1)", test="block",
        config=ConfigRef("agent-eval.yaml", 7, 17, "tests.0.blocklist.0"),
        trace=TraceRef("traces/a.jsonl", 2, "t[see](2)"), tool="[dismiss: false positive](1)",
        fingerprint="0" * 32)
    test = TResult("block", "tool_blocklist", "error", "fail", 0, 1, 1, 1, [finding])
    results = Results(suite="s", config="agent-eval.yaml", verdict="fail",
                      counts={"traces": 1, "tool_calls": 1, "violations": 1,
                              "input_errors": 1},
                      tests=[test], traces=[],
                      input_errors=[InputError("input/parse_error", "traces/[x](1).jsonl", 3,
                                               "bad \\[line]")])
    run = run_of(render(results, tmp_path))
    texts = [r["message"]["text"] for r in run["results"]]
    texts += [loc["message"]["text"] for r in run["results"]
              for loc in r.get("relatedLocations", [])]
    assert texts == [
        "Blocked tool called: \\[dismiss: false positive\\](1). "
        "Trace t\\[see\\](2) at traces/a.jsonl:2.",
        # a backslash before a bracket is doubled, then the bracket escaped
        "Input error in traces/\\[x\\](1).jsonl:3: bad \\\\\\[line\\].",
        "Trace t\\[see\\](2): where the rule is violated.",
    ]
    assert not any(EMBEDDED_LINK.search(t) for t in texts)
    # the results file keeps the text as the trace wrote it
    assert run["results"][0]["properties"]["tool"] == "[dismiss: false positive](1)"
    assert run["results"][0]["properties"]["trace_id"] == "t[see](2)"


def test_message_text_leaves_text_without_brackets_alone() -> None:
    assert sarif.message_text("a \\ b (1)") == "a \\ b (1)"
    assert sarif.message_text("[a](1)") == "\\[a\\](1)"
    assert sarif.message_text("\\\\]") == "\\\\\\\\\\]"
