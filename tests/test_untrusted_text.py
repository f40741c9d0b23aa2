"""Names from the suite and everything in a results file are a stranger's text in a pull
request (docs/security.md "Control characters and long names"): none of it reaches the
console, a log or an output with a control character, and no line of the console starts
with a text of theirs (``::error::`` at the start of a line is a GitHub workflow command).
A results file off the results schema is refused by every command that reads one, with
exit code 2 and no traceback."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from tests.conftest import read_results

from agent_eval._cli import main
from agent_eval.commands.diff import text as diff_text
from agent_eval.compare import attach
from agent_eval.errors import ResultsFileError
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results, results_schema

# a title, a bell, a cleared screen, a carriage return and a line that is a workflow
# command, a C1 CSI
EVIL = "\x1b]0;TITLE\x07\x1b[2J\r\n::error file=a,line=1::forged\x9b31m"
SUITE = """\
version: "1"
suite: {evil}
traces: traces/*.jsonl
tests:
  - {{id: {test}, metric: tool_blocklist, blocklist: [x, {pattern}]}}
scenarios:
  - id: {scenario}
    category: {category}
    traces: traces/*.jsonl
    expect: {{tools: [{tool}], output: {{contains: [refund]}}}}
pass_criteria:
  by_category: {{{category}: 1.0}}
"""
# a raw C1 character is valid JSON: the trace line's snippet in report.html held it
TRACE = ('{"type":"tool_call","tool":"x","arguments":{"a":"\x9b2J"}}\n'
         '{"type":"output","output":"no"}\n')


def q(text: str) -> str:
    """A YAML double-quoted string (JSON's escapes are YAML's)."""
    return json.dumps(text)


def inert_lines(text: str) -> None:
    """Console text: no control character but the line breaks between lines (and
    tabs), and no line that GitHub Actions would run as a workflow command."""
    for line in text.split("\n"):
        assert not [c for c in line if c != "\t" and (c < " " or "\x7f" <= c <= "\x9f")], line
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line  # the runner's older form, anywhere in a line


def no_controls(text: str, *, lines: bool = True) -> None:
    """Any output: no control character but line breaks and tabs, and (``lines``) no
    line of it that is a workflow command (`report -f html` to a CI log)."""
    bad = {c for c in text if c not in "\n\t" and (c < " " or "\x7f" <= c <= "\x9f")}
    assert not bad, sorted(bad)
    if lines:
        assert not [line for line in text.split("\n") if line.lstrip().startswith("::")]


def strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *strings_in(v))]
    return []


@pytest.fixture
def evil_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "traces" / "a.jsonl").write_text(TRACE)
    (root / "agent-eval.yaml").write_text(SUITE.format(
        evil=q(f"evil{EVIL}"), test=q(f"t{EVIL}"), pattern=q(f"adm{EVIL}"),
        scenario=q(f"sc{EVIL}"), category=q(f"cat{EVIL}"), tool=q(f"y{EVIL}")))
    return root


def test_run_shows_the_suites_names_escaped(evil_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The suite name, a test id, a scenario id, its category (and the criterion and the
    metric named after it) and a tool pattern, each holding escapes and a line break
    followed by ``::error``: they were printed raw by `run`, and report.html held the
    ESC bytes (and the C1 character of a trace line, in its snippet)."""
    monkeypatch.chdir(evil_repo)
    assert main(["run", "-o", "out", "--format", "sarif,junit,markdown,html,console",
                 "--color", "never"]) == 1
    said = capsys.readouterr()
    inert_lines(said.out)
    inert_lines(said.err)
    assert "suite evil\\x1b]0;TITLE\\x07\\x1b[2J\\x0d\\x0a::error file=a" in said.out
    assert "FAIL: t\\x1b]0;TITLE" in said.out and "pass_rate.cat\\x1b]0;TITLE" in said.out
    for path in (evil_repo / "out").iterdir():
        text = path.read_text(encoding="utf-8")
        no_controls(text)
        if path.name == "console.txt":
            inert_lines(text)
    data = read_results(evil_repo / "out")
    no_controls("".join(strings_in(data)), lines=False)  # a message keeps its line breaks
    assert data["suite"] == "evil\\x1b]0;TITLE\\x07\\x1b[2J\\x0d\\x0a::error file=a,line=1::" \
                            "forged\\x9b31m"
    # every place a test or scenario id is repeated holds it written the same way
    assert data["traces"][0]["failed_tests"] == [data["tests"][0]["id"]]
    assert data["traces"][0]["scenario"] is None or \
        data["traces"][0]["scenario"] == data["scenarios"][0]["id"]
    assert data["scenarios"][0]["findings"][0]["test"] == data["scenarios"][0]["id"]
    # ... and `validate` and a config error say them as safely
    assert main(["validate"]) == 0
    inert_lines(capsys.readouterr().out)
    suite = (evil_repo / "agent-eval.yaml").read_text()
    (evil_repo / "agent-eval.yaml").write_text(suite.replace("metric: tool_blocklist",
                                                             f"metric: {q('n' + EVIL)}"))
    assert main(["run", "-o", "out"]) == 2
    said = capsys.readouterr()
    assert "unknown metric 'n\\x1b]0;TITLE" in said.err
    inert_lines(said.err)


def poisoned(doc: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """``doc`` with :data:`EVIL` added to every string, and every key, that the results
    schema still accepts with it; and how many were."""
    validator = jsonschema.Draft202012Validator(results_schema())
    changed = 0

    def walk(node: Any) -> None:
        nonlocal changed
        if isinstance(node, list):
            items: list[tuple[Any, Any]] = list(enumerate(node))
        elif isinstance(node, dict):
            items = list(node.items())
            for key in list(node):
                if not isinstance(key, str):
                    continue
                node[key + EVIL] = node.pop(key)
                if validator.is_valid(doc):
                    changed += 1
                    key = key + EVIL
                else:
                    node[key] = node.pop(key + EVIL)
            items = list(node.items())
        else:
            return
        for key, value in items:
            if isinstance(value, str):
                node[key] = value + EVIL
                if validator.is_valid(doc):
                    changed += 1
                else:
                    node[key] = value
            else:
                walk(value)

    walk(doc)
    return doc, changed


def test_report_and_diff_show_a_results_file_escaped(
        evil_repo: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A results file whose every string the schema allows to be anything (the suite,
    rules' messages with real line breaks, test and scenario ids, files, keys) holds escapes
    and ``\\n::error…``: `report` and `diff` printed them raw."""
    monkeypatch.chdir(evil_repo)
    (evil_repo / "traces" / "a.jsonl").write_text(TRACE.replace('"x"', '"x_tool"'))
    (evil_repo / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*.jsonl\ntests:\n'
        "  - {id: b, metric: tool_blocklist, blocklist: [x*]}\n"
        "  - {id: q, metric: sequence_valid, rules: [{type: require, tool: auth}]}\n"
        "scenarios:\n  - id: s1\n    category: c\n    traces: traces/*.jsonl\n"
        "    expect: {tools: [y], output: {contains: [refund]}}\n"
        "pass_criteria:\n  by_category: {c: 1.0}\n")
    assert main(["run", "-q", "-o", "out"]) == 1
    capsys.readouterr()
    doc, changed = poisoned(read_results(evil_repo / "out"))
    assert changed > 60, changed
    assert doc["suite"].endswith(EVIL) and doc["tests"][0]["id"].endswith(EVIL)
    assert doc["tests"][0]["violations"][0]["message"].endswith(EVIL)
    (evil_repo / "evil.json").write_text(json.dumps(doc))
    for fmt in ("console", "markdown", "html", "json", "sarif", "junit"):
        assert main(["report", "evil.json", "--format", fmt]) == 0, fmt
        out = capsys.readouterr().out
        no_controls(out)
        if fmt == "console":
            inert_lines(out)
            assert "suite s\\x1b]0;TITLE\\x07\\x1b[2J\\x0d\\x0a::error file=a" in out
    for fmt in ("console", "markdown", "html"):
        assert main(["diff", "evil.json", "evil.json", "--format", fmt]) in (0, 1), fmt
        out = capsys.readouterr().out
        no_controls(out)
        if fmt == "console":
            inert_lines(out)


def test_diff_text_writes_a_line_break_in_a_message_as_an_escape(
        evil_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Messages keep their line breaks in the results (and HTML, JSON); printed as lines,
    a line break is written \\x0a."""
    monkeypatch.chdir(evil_repo)
    assert main(["run", "-q", "-o", "out"]) == 1
    head = Results.load("out/results.json")
    base = Results.load("out/results.json")
    for t in base.tests:
        t.violations = []
    finding = next(iter(head.tests[0].violations))
    finding.message = "one\n::error::two"
    attach(head, base, {"kind": "file", "path": "base.json"})
    out = diff_text(head)
    inert_lines(out)
    assert "one\\x0a::error::two" in out


# GitHub's runner runs ``##[command]data`` found anywhere in a line of the log (the older
# form of a workflow command: ActionCommand.TryParse takes the text from the first ``##[``)
LEGACY = " ##[error file=README.md,line=1]forged ##[add-mask]FAIL"


def test_the_older_workflow_command_form_anywhere_in_a_line_is_inert(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A tool name, a test id and a pattern holding ``##[error …]`` or ``##[add-mask]``
    mid-line: `run` printed them as they were, so in a workflow step the runner made a
    forged error annotation and masked every later ``FAIL`` of the log (no control
    character was needed, so they were not escaped). Each ``[`` after ``##`` is written
    ``\\x5b`` in a printed line, whatever the output format keeps."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "traces" / "a.jsonl").write_text(json.dumps(
        {"type": "tool_call", "tool": f"admin{LEGACY}", "arguments": {}}) + "\n")
    (root / "agent-eval.yaml").write_text(
        f'version: "1"\nsuite: {q("s" + LEGACY)}\ntraces: traces/*.jsonl\ntests:\n'
        f"  - {{id: {q('t' + LEGACY)}, metric: tool_blocklist, "
        f"blocklist: [{q('admin*')}, {q('x' + LEGACY)}]}}\n")
    monkeypatch.chdir(root)
    assert main(["run", "-o", "out", "--format", "console", "--color", "never"]) == 1
    said = capsys.readouterr()
    inert_lines(said.out)
    inert_lines(said.err)
    # checked by hand: the tool as the rules saw it, its "[" written \x5b
    assert "Tool: admin ##\\x5berror file=README.md,line=1]forged ##\\x5badd-mask]FAIL" \
        in said.out
    assert "FAIL: t ##\\x5berror" in said.out
    inert_lines((root / "out" / "console.txt").read_text(encoding="utf-8"))
    # the results keep the name as it was: only a printed line changes it
    assert read_results(root / "out")["tests"][0]["violations"][0]["tool"] == f"admin{LEGACY}"
    assert main(["report", "out/results.json", "--format", "console"]) == 0
    inert_lines(capsys.readouterr().out)
    # a config error quoting the suite's text, on stderr
    (root / "agent-eval.yaml").write_text(
        f'version: "1"\nsuite: s\ntraces: traces/*.jsonl\ntests:\n'
        f"  - {{id: t, metric: {q('n' + LEGACY)}}}\n")
    assert main(["run", "-o", "out"]) == 2
    said = capsys.readouterr()
    assert "unknown metric 'n ##\\x5berror" in said.err
    inert_lines(said.err)


# ------------------------------------------------------------- off the schema
@pytest.fixture
def valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A run's results.json (in tmp_path/repo/out), as a dict; the working folder is the
    repository."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "traces").mkdir()
    (root / "traces" / "a.jsonl").write_text(TRACE)
    (root / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: s\ntraces: traces/*.jsonl\ntests:\n'
        "  - {id: b, metric: tool_blocklist, blocklist: [x]}\n"
        "scenarios:\n  - id: s1\n    category: c\n    traces: traces/*.jsonl\n"
        "    expect: {tools: [y]}\n")
    monkeypatch.chdir(root)
    assert main(["run", "-q", "-o", "out"]) == 1
    return read_results(root / "out")


@pytest.mark.parametrize(("where", "value", "said"), [
    (("tests", 0, "status"), None, "at tests[0].status: None is not one of"),
    (("tests", 0, "violations", 0, "rule"), None,
     "at tests[0].violations[0].rule: None is not of type 'string'"),
    (("scenarios", 0, "score"), "x", "at scenarios[0].score: 'x' is not of type"),
])
def test_a_results_file_off_the_schema_is_refused_by_every_command(
        valid: dict[str, Any], capsys: pytest.CaptureFixture[str],
        where: tuple[Any, ...], value: Any, said: str) -> None:
    """`report` crashed (KeyError: None, "this is a bug") where `--baseline` refused the
    file cleanly: now every command that reads a results file checks it against the
    schema first."""
    node: Any = valid
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    Path("bad.json").write_text(json.dumps(valid))
    capsys.readouterr()
    for argv in (["report", "bad.json", "-f", "console"],
                 ["report", "bad.json", "-f", "markdown"],
                 ["diff", "bad.json", "out/results.json"],
                 ["diff", "out/results.json", "bad.json"],
                 ["merge", "bad.json", "-o", "merged"],
                 ["run", "-q", "-o", "again", "--baseline", "bad.json"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "does not match the results schema (schema_version '1'): " + said in err, err
        assert "Traceback" not in err and "internal error" not in err, err
        assert err.count("\n") == 1, err


MUTANTS: list[Any] = [None, True, 0, -1, 2.5, "", "x", [], {}, [None], {"x": None}]


def nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path] if path else []
    if isinstance(value, dict):
        for key, v in value.items():
            out += nodes(v, (*path, key))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += nodes(v, (*path, i))
    return out


def test_a_mutated_results_file_is_read_or_refused_never_a_crash(
        valid: dict[str, Any]) -> None:
    """Every value of a results file replaced, one at a time, by a value of another JSON
    type (a sample of them, seeded): it is refused with a ResultsFileError that names the
    schema, or it is read, and then every format and the diff render it."""
    text = json.dumps(valid)
    cases = [(path, mutant) for path in nodes(valid) for mutant in MUTANTS]
    sample = random.Random(20240611).sample(cases, min(len(cases), 300))
    ctx = RenderContext.for_root(Path.cwd())
    read = 0
    for path, mutant in sample:
        doc = json.loads(text)
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = mutant
        try:
            results = Results.parse(json.dumps(doc).encode(), "m.json")
        except ResultsFileError as exc:
            message = str(exc)
            assert message.startswith(("m.json does not match the results schema",
                                       "m.json is not an agent-eval results file",
                                       "m.json is not a results file agent-eval wrote")), message
            continue
        read += 1
        try:
            for renderer in RENDERERS.values():
                renderer.render(results, ctx)
            attach(results, Results.parse(text.encode(), "base.json"), {"kind": "file"})
            diff_text(results)
        except Exception as exc:
            raise AssertionError(f"{path} = {mutant!r}: {type(exc).__name__}: {exc}") from exc
    assert 0 < read < len(sample)  # both kinds of mutation were tried


# the bidirectional embeddings, overrides and isolates ("Trojan Source")
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_bidi_overrides_never_reach_an_output(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A tool name ``purge\\u202e_data`` (and an argument, an answer, a trace id holding
    the other overrides and isolates) was shown with the override itself in the console,
    the log, report.html and the results: a reader sees the text in another order than
    it is. Each is written ``\\u202e`` everywhere; the right-to-left marks (U+200F),
    which reorder nothing, are kept (Markdown drops them: renderers/markdown.py)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: bidi\ntraces: traces/*.jsonl\ntests:\n'
        "  - {id: no_purge, metric: tool_blocklist, blocklist: ['purge*']}\n")
    lines = [{"type": "trace_start", "trace_id": f"t{BIDI[5:]}"},
             {"type": "tool_call", "tool": f"purge{BIDI[4]}_data",
              "arguments": {"who": f"al\u200fice{BIDI[:4]}"}},
             {"type": "output", "output": f"done{BIDI}"}, {"type": "trace_end"}]
    (tmp_path / "traces" / "a.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-o", "out", "--format", "json,sarif,junit,markdown,html,console",
                 "--color", "never"]) == 1
    said = capsys.readouterr()
    outputs = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "out").iterdir()}
    assert len(outputs) == 6
    for name, text in {**outputs, "stdout": said.out, "stderr": said.err}.items():
        assert not set(text) & set(BIDI), name
    data = read_results(tmp_path / "out")
    found = data["tests"][0]["violations"]
    assert [(v["tool"], v["trace"]["trace_id"]) for v in found] == [
        ("purge\\u202e_data", "t\\u2066\\u2067\\u2068\\u2069")]
    assert "purge\\u202e_data" in outputs["console.txt"]


@pytest.mark.parametrize("mark", BIDI)
def test_a_bidi_override_in_a_tool_name_does_not_hide_it_from_a_rule(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mark: str) -> None:
    """A format character is not part of a tool name's normal form (docs/config.md "Tool
    names"): ``delete\\u202e_customer`` is the tool ``delete_customer``. Escaped when the
    trace was read, the override became six letters of the name, and the blocklist
    ``[delete_customer]`` passed the call (exit 0). By hand: one blocked call, exit 1, and
    the finding shows the name escaped."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        'version: "1"\nsuite: bidi\ntraces: traces/*.jsonl\ntests:\n'
        "  - {id: no_delete, metric: tool_blocklist, blocklist: [delete_customer]}\n")
    (tmp_path / "traces" / "a.jsonl").write_text(json.dumps(
        {"type": "tool_call", "tool": f"delete{mark}_customer", "arguments": {}}) + "\n",
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "-q", "-o", "out", "--format", "json"]) == 1
    found = read_results(tmp_path / "out")["tests"][0]["violations"]
    assert [v["tool"] for v in found] == [f"delete\\u{ord(mark):04x}_customer"]
