"""results.json: the findings are streamed (each dumped on its own, indented to its place),
and the document is exactly what one ``orjson.dumps`` of the results would be."""

from __future__ import annotations

import json
import time
from pathlib import Path

import orjson

from agent_eval.api import load_suite, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.renderers import json as json_renderer

SUITE = """\
suite: streamed
traces: traces/*.jsonl
tests:
  - {id: none, metric: tool_blocklist, blocklist: [never_called]}
  - {id: blocked, metric: tool_blocklist, blocklist: ["bad_*"]}
  - id: order
    metric: sequence_valid
    rules:
      - {type: before, first: login, then: ["bad_*", "ok"]}
"""


def test_streamed_findings_are_what_one_dump_writes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(SUITE)
    lines = []
    for i in range(5000):  # more than one chunk of findings
        tool = "bad_x" if i % 2 else "ok"
        lines.append(json.dumps({"type": "tool_call", "trace_id": f"T{i}", "tool": tool,
                                 "arguments": {"text": "line\nbreak ü \u2028", "n": i}}))
    (tmp_path / "traces" / "t.jsonl").write_text("\n".join(lines) + "\n")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, timings=False)
    results.traces = []  # the traces are written compact: compared without them here
    counts = [len(t.violations) for t in results.tests]
    assert counts == [0, 2500, 5000]
    data = results.to_dict()
    data["baseline"] = data.pop("baseline")  # written last
    expected = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    assert json_renderer.render(results).encode() == expected


def test_a_suite_named_like_a_placeholder_keeps_the_findings_in_their_place(
        tmp_path: Path) -> None:
    """The findings and the traces are written where a placeholder string is in the text
    of the rest; a suite (from anyone's pull request) named like the first test's one took
    the findings into "suite", leaving the test's violations the placeholder: a merge or a
    report of that results.json saw none. Each name tried, the document is one dump's."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    lines = [json.dumps({"type": "tool_call", "trace_id": f"T{i}", "tool": "bad_x",
                         "arguments": {}}) for i in range(3)]
    (tmp_path / "traces" / "t.jsonl").write_text("\n".join(lines) + "\n")
    for name in ("\\0violations\\x000", "\\0violations\\x000:0", "\\0violations\\x000:1",
                 "a\\\"\\0violations\\x000:0", "\\0traces\\0", "\\0traces\\x000"):
        (tmp_path / "agent-eval.yaml").write_text(
            SUITE.replace("suite: streamed", f'suite: "{name}"'))
        suite = load_suite(tmp_path / "agent-eval.yaml")
        files, errors = suite_sources(suite)
        results = evaluate_files(suite, files, errors, timings=False)
        assert [len(t.violations) for t in results.tests] == [0, 3, 3]
        assert "\0" not in results.suite and "\\x00" in results.suite  # made safe to show
        results.suite = suite.name  # the renderer keeps its places whatever it is given
        written = json_renderer.render(results).encode()
        doc = json.loads(written)
        assert doc["suite"] == results.suite and "\0" in doc["suite"]
        assert [len(t["violations"]) for t in doc["tests"]] == [0, 3, 3], name
        assert isinstance(doc["traces"], list) and len(doc["traces"]) == 3
        results.traces = []
        data = results.to_dict()
        data["baseline"] = data.pop("baseline")
        expected = orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
        assert json_renderer.render(results).encode() == expected, name


def test_a_suite_of_many_tests_is_written_in_linear_time(tmp_path: Path) -> None:
    """The text around each test's placeholder was split off the rest, which copied the
    rest each time: 20,000 tests (a 1.3 MB suite) took a minute to write, 100,000 would
    take half an hour. Written by position, 12,000 take well under a second; the document
    is still exactly one dump's."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(
        "suite: many\ntraces: traces/*.jsonl\ntests:\n" + "".join(
            f"  - {{id: t{i}, metric: tool_blocklist, blocklist: [tool_{i % 3}]}}\n"
            for i in range(12_000)))
    (tmp_path / "traces" / "t.jsonl").write_text(
        json.dumps({"type": "tool_call", "tool": "tool_1", "arguments": {}}) + "\n")
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, timings=False)
    results.traces = []
    assert sum(len(t.violations) for t in results.tests) == 4_000  # t1, t4, t7, …
    start = time.perf_counter()
    written = json_renderer.render(results).encode()
    seconds = time.perf_counter() - start
    data = results.to_dict()
    data["baseline"] = data.pop("baseline")
    assert written == orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    assert seconds < 3, seconds  # before: about 20 s here
