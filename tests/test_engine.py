"""The engine: verdict rules, test status, zero-trace input, jobs == one process."""

from __future__ import annotations

import contextvars
import json
import shutil
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_eval import engine
from agent_eval.api import evaluate, load_suite, load_traces, suite_sources
from agent_eval.engine import evaluate_files
from agent_eval.model import Location, Trace
from agent_eval.readers.base import SourceFile
from agent_eval.results import Results, assign_fingerprints
from agent_eval.suite import Suite

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "customer-service"

# three tests that differ only in severity: calling err_* is an error, warn_* a
# warning, note_* a note
SUITE = """\
suite: engine
traces: traces/*.jsonl
tests:
  - id: errors
    metric: tool_blocklist
    blocklist: err_*
  - id: warnings
    metric: tool_blocklist
    blocklist: warn_*
    severity: warning
  - id: notes
    metric: tool_blocklist
    blocklist: note_*
    severity: note
"""


def ev(tool: str) -> str:
    return json.dumps({"type": "tool_call", "tool": tool, "arguments": {}}) + "\n"


def corpus(root: Path, files: dict[str, str], suite: str = SUITE) -> Suite:
    (root / ".git").mkdir(exist_ok=True)
    (root / "traces").mkdir(exist_ok=True)
    (root / "agent-eval.yaml").write_text(suite)
    for name, text in files.items():
        (root / "traces" / name).write_text(text)
    return load_suite(root / "agent-eval.yaml")


def run_files(suite: Suite, jobs: int = 1) -> Results:
    files, errors = suite_sources(suite)
    return evaluate_files(suite, files, errors, jobs=jobs, timings=False)


# a blocklist none of whose entries was called checked nothing: not_exercised
@pytest.mark.parametrize(("tools", "verdict", "statuses"), [
    (["ok"], "pass", ["not_exercised", "not_exercised", "not_exercised"]),
    (["note_a"], "pass", ["not_exercised", "not_exercised", "pass"]),  # notes never fail
    (["note_a", "warn_a"], "warn", ["not_exercised", "warn", "pass"]),
    (["warn_a", "err_a"], "fail", ["fail", "warn", "not_exercised"]),
    (["err_a", "warn_b", "note_c"], "fail", ["fail", "warn", "pass"]),
])
def test_verdict_rules(tmp_path: Path, tools: list[str], verdict: str,
                       statuses: list[str]) -> None:
    suite = corpus(tmp_path, {"t.jsonl": "".join(ev(t) for t in tools)})
    res = run_files(suite)
    assert res.verdict == verdict
    assert [t.status for t in res.tests] == statuses
    assert res.counts["violations"] == sum(not t.startswith("ok") for t in tools)


def test_error_beats_fail(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"a.jsonl": ev("err_a") + ev("warn_a"),
                              "b.jsonl": ev("ok") + "{broken\n"})
    res = run_files(suite)
    assert res.verdict == "error"
    assert [(e.rule, e.file, e.line) for e in res.input_errors] == [
        ("input/parse_error", "traces/b.jsonl", 2)]
    # the findings of the readable file are still there
    assert sorted(v.tool or "" for v in res.violations) == ["err_a", "warn_a"]


def test_severity_is_copied_onto_findings(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"t.jsonl": ev("err_a") + ev("warn_a") + ev("note_a")})
    res = run_files(suite)
    assert {(v.tool, v.severity) for v in res.violations} == {
        ("err_a", "error"), ("warn_a", "warning"), ("note_a", "note")}


def test_a_file_with_zero_traces_is_no_traces(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": ""})
    res = run_files(suite)
    assert res.verdict == "error"
    assert "input/no_traces" in {e.rule for e in res.input_errors}
    assert all(t.status == "error" for t in res.tests)


def test_an_empty_file_beside_good_ones_is_still_an_error(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": "", "good.jsonl": ev("ok")})
    res = run_files(suite)
    assert res.verdict == "error"
    assert [e.file for e in res.input_errors] == ["traces/empty.jsonl"]


def test_an_empty_file_under_format_native_is_no_traces(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"empty.jsonl": "\n", "good.jsonl": ev("ok")},
                   suite=SUITE + "format: native\n")
    res = run_files(suite)
    assert res.verdict == "error"
    assert [(e.rule, e.file) for e in res.input_errors] == [("input/no_traces",
                                                              "traces/empty.jsonl")]


def test_jobs_give_the_same_results(tmp_path: Path) -> None:
    files = {f"f{i:02d}.jsonl": "".join(ev(t) for t in ("ok", "err_x", "warn_y")[: i % 4])
             + ev(f"note_{i}") for i in range(12)}
    files["f05.jsonl"] += "not json\n"
    suite = corpus(tmp_path, files)
    one = run_files(suite, jobs=1).to_dict()
    two = run_files(suite, jobs=3).to_dict()
    assert one == two
    assert one["counts"]["traces"] == 12
    # i % 4 == 2 or 3 -> err_x: i in 2, 3, 6, 7, 10, 11; i % 4 == 3 -> warn_y: 3, 7, 11
    errs = [v["trace"]["file"] for t in one["tests"] for v in t["violations"]
            if v["tool"] == "err_x"]
    assert errs == [f"traces/f{i:02d}.jsonl" for i in (2, 3, 6, 7, 10, 11)]
    assert one["counts"]["violations"] == 6 + 3 + 12
    assert [(e["rule"], e["file"], e["line"]) for e in one["input_errors"]] == [
        ("input/parse_error", "traces/f05.jsonl", 3)]


def _trace(tid: str, tools: list[str], with_ids: bool = True) -> str:
    """A native trace: its start, a call per tool, its end (the trace_id on every line,
    or only on trace_start)."""
    tagged = {"trace_id": tid} if with_ids else {}
    return "".join([json.dumps({"type": "trace_start", "trace_id": tid}) + "\n",
                    *(json.dumps({"type": "tool_call", "tool": t, **tagged}) + "\n"
                      for t in tools),
                    json.dumps({"type": "trace_end", **tagged}) + "\n"])


def test_jobs_auto_cuts_large_native_files_and_gives_the_same_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte ranges of a native JSONL file, read in several processes: exactly the results
    of one process. A file whose ranges cannot stand alone (a trace still open at a cut,
    a trace id in two ranges) is read again whole."""
    big = "".join(_trace(f"T{i}", ["ok", "err_a", "warn_b", "note_c"][: i % 5],
                         with_ids=i % 3 > 0) for i in range(60))
    big += "not json\n" + json.dumps({"type": "mystery"}) + "\n"
    big += _trace("T7", ["err_again"])  # T7 again: event after its end
    # traces interleaved across any cut: A is open from the first line to the last
    tangled = (json.dumps({"type": "trace_start", "trace_id": "A"}) + "\n"
               + "".join(_trace(f"U{i}", ["err_u"]) for i in range(80))
               + json.dumps({"type": "tool_call", "trace_id": "A", "tool": "err_late"}) + "\n"
               + json.dumps({"type": "trace_end", "trace_id": "A"}) + "\n")
    clean = "".join(_trace(f"C{i}", ["err_c"] * (i % 3)) for i in range(60))
    suite = corpus(tmp_path, {"big.jsonl": big, "small.jsonl": _trace("S", ["warn_s"]),
                              "tangled.jsonl": tangled, "clean.jsonl": clean})
    monkeypatch.setattr(engine, "AUTO_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "PART_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "cpu_count", lambda: 2)
    files, _ = suite_sources(suite)
    parts = engine.plan(files, suite.format, 2)
    by_file = [sum(p.file == i for p in parts) for i in range(len(files))]
    assert [f.file for f in files] == ["traces/big.jsonl", "traces/clean.jsonl",
                                       "traces/small.jsonl", "traces/tangled.jsonl"]
    assert by_file[0] > 1 and by_file[1] > 1 and by_file[2] == 1 and by_file[3] > 1
    one, auto, verdicts = _one_and_auto(suite, files, monkeypatch)
    # big: T7 in two ranges, read again whole; clean: its ranges; small: whole; tangled:
    # A open at every cut
    assert verdicts == [False, True, True, True, False, True]
    assert one == auto
    assert one["counts"]["traces"] == 60 + 60 + 1 + 81
    assert [(e["rule"], e["line"]) for e in one["input_errors"]] == [
        ("input/parse_error", big.count("\n") - 4),
        ("input/event_after_end", big.count("\n") - 2),
        ("input/event_after_end", big.count("\n") - 1),
        ("input/event_after_end", big.count("\n")),
    ]


def _one_and_auto(suite: Suite, files: list[SourceFile], monkeypatch: pytest.MonkeyPatch
                  ) -> tuple[dict[str, Any], dict[str, Any], list[bool]]:
    """The results of one process and of ``--jobs auto``, and whether each file's
    ranges were taken as the whole file (engine._same_as_whole, in call order)."""
    verdicts: list[bool] = []
    real = engine._same_as_whole

    def spy(results: list[Any]) -> bool:
        verdicts.append(real(results))
        return verdicts[-1]

    monkeypatch.setattr(engine, "_same_as_whole", spy)
    one = run_files(suite, jobs=1).to_dict()
    auto = evaluate_files(suite, files, [], jobs="auto", timings=False).to_dict()
    return one, auto, verdicts


def test_jobs_bound_a_file_s_input_errors_as_one_process_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """limits.max_input_errors holds for a file read in byte ranges by several
    processes: each range keeps its first errors and counts the others, and the parent
    bounds them again in read order: the results of one process, byte for byte."""
    text = "".join(_trace(f"T{i}", ["err_a"]) + "x\n" + json.dumps({"type": "tool_call"})
                   + "\n" for i in range(60))
    suite = corpus(tmp_path, {"big.jsonl": text},
                   SUITE + "limits:\n  max_input_errors: 3\n")
    monkeypatch.setattr(engine, "AUTO_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "PART_MIN_BYTES", 1)
    monkeypatch.setattr(engine, "cpu_count", lambda: 2)
    files, _ = suite_sources(suite)
    assert len(engine.plan(files, suite.format, 2)) > 2
    one, auto, verdicts = _one_and_auto(suite, files, monkeypatch)
    assert verdicts == [True]  # its ranges, each with errors beyond the bound
    assert one == auto
    assert one["counts"]["traces"] == 60
    assert [(e["rule"], e["line"]) for e in one["input_errors"]] == [
        ("input/parse_error", 4), ("input/invalid_event", 5), ("input/parse_error", 9),
        ("input/limit_exceeded", 10)]
    assert one["input_errors"][-1]["message"].startswith(
        "117 more input error(s) on lines 10-300 are counted, not listed "
        "(59 input/invalid_event, 58 input/parse_error)")


def test_jobs_auto_uses_one_process_for_a_small_input(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    suite = corpus(tmp_path, {f"f{i}.jsonl": _trace(f"T{i}", ["err_a"]) for i in range(4)})
    files, _ = suite_sources(suite)
    monkeypatch.setattr(engine, "cpu_count", lambda: 8)
    assert engine.resolve_jobs("auto", files) == 1  # far below AUTO_MIN_BYTES
    assert engine.resolve_jobs(3, files) == 3
    monkeypatch.setattr(engine, "AUTO_MIN_BYTES", 1)
    assert engine.resolve_jobs("auto", files) == 8


def test_jobs_n_starts_at_most_four_workers_per_cpu(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 1000 over 2,000 files started 1,000 processes, each a copy of the suite:
    a number is taken as it is up to four per CPU (2 CPUs: 8), never beyond."""
    suite = corpus(tmp_path, {"f.jsonl": _trace("T", ["err_a"])})
    files, _ = suite_sources(suite)
    monkeypatch.setattr(engine, "cpu_count", lambda: 2)
    assert [engine.resolve_jobs(n, files) for n in (0, 1, 7, 8, 9, 1000)] == [1, 1, 7, 8, 8, 8]


def _a_bug_deep_in_a_worker(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("odd \x1b[31mtext\n::error::forged")


def test_a_workers_exception_is_reported_with_its_own_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a worker is an internal error that asks for "the traceback above": the
    parent printed only its own (where it received the message), without the worker's.
    The worker's traceback is now the error's cause, escaped as any logged text."""
    suite = corpus(tmp_path, {f"f{i}.jsonl": _trace(f"T{i}", ["err_a"]) for i in range(2)})
    monkeypatch.setattr(engine, "_eval_part", _a_bug_deep_in_a_worker)
    with pytest.raises(RuntimeError, match=r"^while reading traces/f[01]\.jsonl: ValueError: odd") \
            as caught:
        run_files(suite, jobs=2)
    cause = caught.value.__cause__
    assert isinstance(cause, engine.WorkerTraceback)
    shown = str(cause)
    assert "in _a_bug_deep_in_a_worker" in shown  # the worker's frame
    assert "\x1b" not in shown and "\\x1b[31m" in shown
    assert "\n::error::" not in shown  # no line of it is a workflow command
    assert "\x1b" not in str(caught.value) and "\n" not in str(caught.value)


def _deep_a(n: int) -> Any:
    if n == 0:
        raise ValueError("raised at the bottom")
    return _deep_b(n - 1)


def _deep_b(n: int) -> Any:
    return _deep_a(n)


def _a_bug_deep_down_in_a_worker(*args: Any, **kwargs: Any) -> Any:
    return _deep_a(400)  # 800 frames: a traceback of about 90,000 characters


def test_a_workers_long_traceback_keeps_where_the_error_was_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's traceback is cut at MAX_TRACEBACK_CHARS: cut to its first characters,
    a deep one lost the frame raising the error and the exception's line, the ones to
    report. Its end is kept."""
    suite = corpus(tmp_path, {f"f{i}.jsonl": _trace(f"T{i}", ["err_a"]) for i in range(2)})
    monkeypatch.setattr(engine, "_eval_part", _a_bug_deep_down_in_a_worker)
    with pytest.raises(RuntimeError) as caught:
        run_files(suite, jobs=2)
    shown = str(caught.value.__cause__)
    lines = shown.split("\n")
    assert lines[-1] == "  | ValueError: raised at the bottom"
    assert lines[-2].strip() == '|     raise ValueError("raised at the bottom")'
    assert lines[1] == "  | Traceback (most recent call last):"
    assert len(shown) < engine.MAX_TRACEBACK_CHARS + 3000  # bounded (4 more a line)


def test_the_collector_is_paused_where_the_parent_merges_and_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent merges the workers' results and finishes them with the cyclic collector
    paused (each full collection would walk every finding held again); the workers read
    with it on (a reader may make cycles), and it is on again after the run."""
    import gc

    suite = corpus(tmp_path, {f"f{i}.jsonl": _trace(f"T{i}", ["err_a"]) for i in range(4)})
    seen: dict[str, list[bool]] = {"merge": [], "finish": []}
    real_merge, real_finish, real_part = (engine.Accumulator.merge,
                                          engine.Accumulator.finish, engine._eval_part)

    def merge(self: engine.Accumulator, other: engine.Accumulator) -> None:
        seen["merge"].append(gc.isenabled())
        real_merge(self, other)

    def finish(self: engine.Accumulator, *args: Any, **kwargs: Any) -> Results:
        result = real_finish(self, *args, **kwargs)
        seen["finish"].append(gc.isenabled())  # the pause ends when finish returns
        return result

    def part(*args: Any, **kwargs: Any) -> Any:
        if not gc.isenabled():  # in the worker: the parent reports it as an error
            raise AssertionError("a worker read with the collector paused")
        return real_part(*args, **kwargs)

    monkeypatch.setattr(engine.Accumulator, "merge", merge)
    monkeypatch.setattr(engine.Accumulator, "finish", finish)
    monkeypatch.setattr(engine, "_eval_part", part)
    monkeypatch.setattr(engine, "PART_MIN_BYTES", 1)
    statuses: list[bool] = []
    monkeypatch.setattr(engine, "assign_fingerprints", _spy_gc(assign_fingerprints,
                                                                statuses))
    gc.enable()
    res = run_files(suite, jobs=2)
    assert res.counts["violations"] == 4
    assert seen["merge"] == [False] * 4
    assert seen["finish"] == [True]  # on again after
    assert statuses and not any(statuses)  # fingerprints given with the collector paused
    assert gc.isenabled()


def _spy_gc(real: Callable[..., Any], statuses: list[bool]) -> Callable[..., Any]:
    def spy(*args: Any, **kwargs: Any) -> Any:
        import gc

        statuses.append(gc.isenabled())
        return real(*args, **kwargs)

    return spy


def test_violations_are_in_trace_order(tmp_path: Path) -> None:
    suite = corpus(tmp_path, {"b.jsonl": ev("err_b"), "a.jsonl": ev("ok") + ev("err_a2")
                              + ev("err_a3")})
    # evaluated in the opposite order of the files: the results are sorted anyway
    b_first = [*load_traces([tmp_path / "traces" / "b.jsonl"], suite),
               *load_traces([tmp_path / "traces" / "a.jsonl"], suite)]
    res = evaluate(suite, b_first)
    where = [(v.trace.file, v.trace.line) for v in res.violations if v.trace is not None]
    assert where == [("traces/a.jsonl", 2), ("traces/a.jsonl", 3), ("traces/b.jsonl", 1)]


# ------------------------------------------------------------- very long traces
_RESULTS_TEST = """\
  - id: results
    metric: tool_results
    calls:
      - tool: lookup_order
        expect_result: {contains: [shipped]}
        max_latency_ms: 300
      - tool: issue_refund
        expect_error: false
"""


@pytest.mark.parametrize(("chunk", "keep", "jobs"), [(1, 0, 1), (2, 1, 1), (3, 2, 2)])
def test_long_traces_on_disk_give_every_output_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, keep: int,
        jobs: int) -> None:
    """The bundled example (every check, scenarios) plus a tool_results test, with every
    trace of more than two calls held as a CallLog (most of its calls on disk): every
    output is what holding them in lists gives."""
    from agent_eval import model
    from agent_eval.commands.run import write_outputs
    from agent_eval.readers import native
    from agent_eval.renderers import RenderContext, console

    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE, root / "example")
    (root / ".git").mkdir()
    config = root / "example" / "agent-eval.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("\noutput:", _RESULTS_TEST + "\noutput:", 1),
                      encoding="utf-8")
    suite = load_suite(config)
    files, errors = suite_sources(suite)

    def outputs(where: str) -> dict[str, bytes]:
        results = evaluate_files(suite, files, errors, jobs=jobs, timings=False)
        written = write_outputs(results, ["json", "sarif", "junit", "markdown", "html"],
                                tmp_path / where, RenderContext.for_root(root))
        out = {p.name: p.read_bytes() for p in written}
        out["console"] = console.render(results, color=False).encode()
        return out

    held = outputs("held")
    assert b'"results"' in held["results.json"] and b"tool_results/" in held["results.json"]
    made: list[model.CallLog] = []
    real = model.CallLog.__init__

    def counted(self: model.CallLog, *args: Any) -> None:
        real(self, *args)
        made.append(self)

    monkeypatch.setattr(native, "LONG_TRACE", 2)
    monkeypatch.setattr(model, "LOG_CHUNK", chunk)
    monkeypatch.setattr(model, "LOG_KEEP", keep)
    monkeypatch.setattr(model.CallLog, "__init__", counted)
    on_disk = outputs("on-disk")
    if jobs == 1:  # (the workers' logs are made in their own processes)
        assert len(made) >= 8 and all(log._spilled for log in made)
    assert on_disk == held


def _log_files(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Every trace of more than 2 calls kept in a CallLog, one call a chunk on disk: the
    folder each CallLog's temporary file is made in, in order."""
    import tempfile

    from agent_eval import model
    from agent_eval.readers import native

    made: list[str | None] = []
    real = tempfile.TemporaryFile

    def recorded(*args: Any, **kwargs: Any) -> Any:
        made.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", recorded)
    monkeypatch.setattr(native, "LONG_TRACE", 2)
    monkeypatch.setattr(model, "LOG_CHUNK", 1)
    monkeypatch.setattr(model, "LOG_KEEP", 0)
    return made


@pytest.mark.parametrize("where", ["out", None])
def test_a_long_trace_s_calls_go_unnamed_where_the_spill_would(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str | None) -> None:
    """In the output folder for run (the spill's parent), the system's temporary folder
    for the library: an unnamed file, and no spill folder made for it."""
    suite = corpus(tmp_path, {"t.jsonl": "".join(ev(t) for t in "abcdef")})
    files, errors = suite_sources(suite)
    made = _log_files(monkeypatch)
    out = tmp_path / "out" if where else None
    results = evaluate_files(suite, files, errors, timings=False, spill_dir=out)
    assert results.counts["tool_calls"] == 6
    assert made == [None if out is None else str(out)]
    if out is not None:
        assert list(out.iterdir()) == []  # no spill folder, no named file


def test_a_worker_puts_long_traces_beside_the_spill_even_when_spawned(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker started by spawn (macOS, Windows) does not inherit the parent's folder for
    a very long trace's calls: it sets it itself. A fresh thread stands for the fresh
    interpreter (it starts without the setting too)."""
    import multiprocessing
    import pickle
    import threading

    from agent_eval import model
    from agent_eval.spill import Spill

    suite = corpus(tmp_path, {"t.jsonl": "".join(ev(t) for t in "abcdef")})
    files, _ = suite_sources(suite)
    made = _log_files(monkeypatch)
    spill = Spill(tmp_path / "out")
    parent, child = multiprocessing.Pipe()
    worker = threading.Thread(target=engine._worker,
                              args=(child, suite, files, suite.format, spill))
    worker.start()
    parent.send((0, engine.Part(0)))
    assert parent.poll(30), "the worker sent nothing"  # (a worker that raised: no hang)
    key, (acc, clean, _), failure = pickle.loads(parent.recv_bytes())
    parent.send(None)
    worker.join(10)
    assert not worker.is_alive()
    assert (key, clean, failure) == (0, True, None)
    assert acc.tool_calls == 6
    assert made == [str(tmp_path / "out")]
    assert model._log_folder.get() is None  # this thread's own: never set


def test_a_worker_leaves_ctrl_c_to_the_parent(tmp_path: Path) -> None:
    """Ctrl-C reaches the workers too: each printed a traceback of its KeyboardInterrupt
    (the parent's "interrupted" after them), as if it had crashed. A worker now ends
    without a word, whatever it was doing; the parent says it (exit 130)."""
    from agent_eval import model
    from agent_eval.spill import Spill

    suite = corpus(tmp_path, {"t.jsonl": ev("a")})
    files, _ = suite_sources(suite)

    class Interrupted:
        """A connection whose next message is Ctrl-C: waiting for a part, or sending
        its results."""

        def __init__(self, at: str) -> None:
            self.at = at

        def recv(self) -> object:
            if self.at == "recv":
                raise KeyboardInterrupt
            return (0, engine.Part(0))

        def send_bytes(self, data: object) -> None:
            raise KeyboardInterrupt

    for at in ("recv", "send"):
        try:
            # in a context of its own: a worker sets its log folder for its whole process
            # (model._log_folder), which here is the test's: later tests must not see it
            contextvars.copy_context().run(
                engine._worker, Interrupted(at), suite, files,  # type: ignore[arg-type]
                suite.format, Spill(tmp_path / "out"))
        except KeyboardInterrupt:
            pytest.fail(f"the worker's KeyboardInterrupt ({at}) went on")
    assert model._log_folder.get() is None


_LOOP = 20_000  # calls of a runaway loop of one tool


def _peak_per_call(run: Callable[[Trace], object], scenario: str | None = None) -> float:
    """The peak memory per call of ``run`` on a trace that calls one tool (blocked,
    forbidden) _LOOP times, held as a CallLog."""
    from agent_eval import model
    from agent_eval.model import CallLog, ToolCall

    saved = model.LOG_CHUNK, model.LOG_KEEP
    model.LOG_CHUNK = model.LOG_KEEP = 256
    try:
        log = CallLog()
        for i in range(_LOOP):
            log.append(ToolCall("delete_customer", {"customer_id": f"C-{i}", "why": "r" * 100},
                                Location("t.jsonl", i + 2), result={"ok": True, "n": i},
                                has_result=True))
        trace = Trace("t", "t.jsonl", Location("t.jsonl", 1), Location("t.jsonl", _LOOP + 2),
                      tool_calls=log, scenario=scenario)
        tracemalloc.start()
        try:
            run(trace)
            return tracemalloc.get_traced_memory()[1] / _LOOP
        finally:
            tracemalloc.stop()
    finally:
        model.LOG_CHUNK, model.LOG_KEEP = saved


def test_a_blocked_or_forbidden_tool_called_in_a_loop_keeps_where_not_the_calls(
        tmp_path: Path) -> None:
    """A very long trace is most often an agent looping on one tool: its calls, read from
    disk, must not be held to report them (about 740 bytes a call, as a list of them
    takes), only where they are (a TraceRef each, which the finding holds)."""
    from agent_eval.scenarios.evaluate import evaluate_trace

    config = tmp_path / "agent-eval.yaml"
    config.write_text('version: "1"\nsuite: s\ntests:\n  - id: b\n    metric: tool_blocklist\n'
                      "    blocklist: [delete_customer]\nscenarios:\n  - id: S\n"
                      "    expect:\n      forbidden_tools: [delete_customer]\n",
                      encoding="utf-8")
    suite = load_suite(config)
    assert suite.scenarios is not None
    assert _peak_per_call(suite.tests[0].run) < 250
    scenario = suite.scenarios.scenarios[0]
    assert _peak_per_call(lambda t: evaluate_trace(scenario, t), "S") < 250


def test_hand_built_calls_may_be_any_sequence() -> None:
    """A hand-built trace's calls held in a tuple (not a list, nor a CallLog) are checked
    as a list of them is: by every test, the scenarios and the coverage."""
    from agent_eval.engine import evaluate as evaluate_items
    from agent_eval.model import ToolCall

    suite = load_suite(EXAMPLE / "agent-eval.yaml")
    where = "examples/customer-service/traces/refund-happy.jsonl"
    calls = [ToolCall(n, {"order_id": "A-1"}, Location(where, k + 2)) for k, n in
             enumerate(["authenticate_user", "lookup_order", "issue_refund", "purge_data"])]

    def results(held: Any) -> dict[str, Any]:
        trace = Trace("x", where, Location(where, 1), Location(where, 9), tool_calls=held,
                      scenario="REFUND-001")
        return evaluate_items(suite, [trace], timings=False).to_dict()

    as_list = results(calls)
    assert as_list["counts"]["violations"] and as_list["scenarios"]
    assert results(tuple(calls)) == as_list
