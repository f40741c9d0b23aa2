"""`agent-eval import` writes YAML that reads back as the translation it was made from
(importers/emit.py): every value, in a block and in a flow list, with its own whitespace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval._cli import main
from agent_eval.importers.emit import to_yaml
from agent_eval.yamlpos import Pos, Positions, load_yaml

# texts a plain YAML scalar would change: flow indicators (a plain "a,b" in a flow list is
# two items), YAML's words and numbers, comments, Unicode spaces at either end (str.strip
# took them), line breaks, characters only an escape can write, astral characters
TEXTS = ["Paris, France", "a,b", "x]y", "a{b}", "[x]", "k: v", "x #y", "#x", "- x", "? x",
         "yes", "null", "~", "on", "*", "&a", "!t", "%p", "@a", "`b", "'q'", '"d"', "1e3",
         "0x10", "2026-01-01", " lead", "trail ", "\u00a0", "\u00a0nb", "nb\u00a0",
         "\u3000x", "x\u3000", "\u2007", "a\tb", "a\nb", "a\r\nb", "q\x85", "\u2028",
         "\ufeffbom", "\x7f", "a\n\U0001F600", "\U0001F600", "", "..."]


def test_every_text_reads_back_as_it_was_in_a_block_and_in_a_flow_list() -> None:
    data = {"scenarios": [{"id": t, "expect": {"output": {"contains": [t, "x"],
                                                          "equals": t},
                                               "args": {"tool": {t: t}}}}
                          for t in TEXTS]}
    text = to_yaml(data, Positions("peer.yaml"), "header")
    back, _ = load_yaml(text, "agent-eval.yaml")
    assert back == data
    # a header line, scenarios:, and the 8 keys of each scenario, each on one line
    assert len(text.splitlines()) == 2 + 8 * len(TEXTS)


def test_a_key_longer_than_yaml_s_simple_keys_reads_back() -> None:
    """An argument name of 1,100 characters (arg_equals' field) was written as a simple
    key, which YAML allows up to 1024 characters: the suite import wrote did not load."""
    long, breaks = "f" * 1100, "a\n" * 400
    data = {"scenarios": [{long: "first key of an item", "id": "x",
                           "expect": {"args": {"pay": {long: 1, breaks: {"n": [1, long]},
                                                       "short": 2}}}}]}
    text = to_yaml(data, Positions("peer.yaml"), "header")
    back, _ = load_yaml(text, "agent-eval.yaml")
    assert back == data


def test_an_imported_term_with_a_comma_stays_one_term(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """expected_in_answer: ["Paris, France"] was written `contains: [Paris, France]`, two
    terms, so the imported suite passed an answer the spec fails."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "agentci_spec.yaml").write_text(
        'version: 1\nagent: geo\nqueries:\n  - query: "Where is the Louvre?"\n'
        '    correctness:\n      expected_in_answer: ["Paris, France"]\n'
        '      not_in_answer: ["\\u00a0"]\n', encoding="utf-8")
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(e) + "\n" for e in (
        {"type": "trace_start", "trace_id": "1", "scenario": "Where is the Louvre?"},
        {"type": "output", "output": "It is in France; Paris has many museums."},
        {"type": "trace_end"})), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-c", "agentci_spec.yaml", "-t", "t.jsonl", "-o", "out", "-q"]) == 1
    assert main(["import", "agentci_spec.yaml", "-o", "native/agent-eval.yaml",
                 "--traces", "../t.jsonl"]) == 0
    suite, _ = load_yaml((tmp_path / "native" / "agent-eval.yaml").read_text("utf-8"), "s")
    assert suite["scenarios"][0]["expect"]["output"] == {
        "contains": ["Paris, France"], "not_contains": ["\u00a0"]}
    monkeypatch.chdir(tmp_path / "native")
    assert main(["run", "-o", "out", "-q"]) == 1
    results = json.loads((tmp_path / "native" / "out" / "results.json").read_text("utf-8"))
    assert [f["message"] for s in results["scenarios"] for f in s["findings"]] == [
        "Output does not contain 'Paris, France' (contains, case-insensitive)"]


def test_a_peer_file_name_with_a_line_break_stays_in_the_comments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key's comment names the peer file it came from; the name was written as it is,
    so an Assay config named 'ev<LF>tests: [].yaml' (a line break is allowed in a file name)
    wrote the line `tests: [].yaml:4` after every key: the imported suite was no YAML
    (validate: 'could not find expected :'), and a name that is YAML wrote keys of its own
    into the suite. The header said the name on one line (9a4027d); the comments now do too,
    as do a policy's (a key of a suite coming from its policy file names that file)."""
    name = "ev\ntests: [].yaml"
    (tmp_path / ".git").mkdir()
    (tmp_path / name).write_text(
        "suite: demo\ntests:\n  - id: t1\n    expected:\n      type: tool_blocklist\n"
        "      blocked: [delete_repo]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["import", name, "-o", "suite.yaml"]) == 0
    text = (tmp_path / "suite.yaml").read_text("utf-8")
    # the keys, each with its line of the original, and nothing else outside the comments
    assert [line for line in text.splitlines() if not line.startswith("#")] == [
        "suite: demo  # ev\\x0atests: [].yaml:1",
        "tool_match: exact  # ev\\x0atests: [].yaml:1",
        "tests:",
        "  - id: t1  # ev\\x0atests: [].yaml:3",
        "    metric: tool_blocklist",
        "    blocklist: [delete_repo]  # ev\\x0atests: [].yaml:6",
    ]
    assert main(["validate", "-c", "suite.yaml"]) == 0
    # a key from another file (an imported policy's): its name on one line as well
    positions = Positions("peer.yaml")
    positions.set(("tests",), Pos(2, 1, "pol\u2028icy\x85.yaml"))
    assert to_yaml({"tests": []}, positions, "h") == (
        "# h\ntests: []  # pol\\u2028icy\\x85.yaml:2\n")
