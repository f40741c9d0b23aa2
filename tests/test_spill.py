"""Findings spilled to disk beyond a bound (spill.py): every output exactly as with the
findings in memory, in the same order; the spill folder private and always removed."""

from __future__ import annotations

import gc
import json
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval import engine, spill
from agent_eval._cli import main as cli
from agent_eval.api import evaluate, load_suite, load_traces, suite_sources
from agent_eval.commands.run import write_outputs
from agent_eval.compare import compare
from agent_eval.engine import evaluate_files
from agent_eval.findings import ConfigRef, Finding, TraceRef
from agent_eval.readers.base import ReadItem
from agent_eval.renderers import RenderContext, console
from agent_eval.results import Results, fingerprint_base
from agent_eval.spill import SpilledFindings
from agent_eval.suite import Suite

SUITE = """\
suite: spill
traces: traces/*.jsonl
tests:
  - {id: errors, metric: tool_blocklist, blocklist: err_*}
  - {id: warnings, metric: tool_blocklist, blocklist: warn_*, severity: warning}
  - id: order
    metric: sequence_valid
    rules:
      - type: never_after
        first: warn_*
        then: err_*
"""
FORMATS = ["json", "sarif", "junit", "markdown", "html"]


def _line(**event: object) -> str:
    return json.dumps(event) + "\n"


def _trace(tid: str, tools: list[str]) -> str:
    return "".join([_line(type="trace_start", trace_id=tid),
                    *(_line(type="tool_call", trace_id=tid, tool=t, arguments={"n": i})
                      for i, t in enumerate(tools)),
                    _line(type="trace_end", trace_id=tid)])


def _corpus(root: Path) -> Suite:
    """Seven files; trace ids reused across files (fingerprints ``:2``), several
    findings of one rule in a trace, traces without findings."""
    (root / ".git").mkdir()
    (root / "traces").mkdir()
    (root / "agent-eval.yaml").write_text(SUITE)
    kinds = ["ok", "err_a", "warn_b", "err_a", "err_c", "warn_b", "ok", "err_a"]
    for f in range(7):
        text = "".join(_trace(f"T{(f * 5 + t) % 9}", kinds[(f + t) % 4:(f + t) % 4 + t + 1])
                       for t in range(6))
        (root / "traces" / f"f{f}.jsonl").write_text(text)
    return load_suite(root / "agent-eval.yaml")


def _outputs(results: Results, root: Path, folder: Path) -> dict[str, bytes]:
    written = write_outputs(results, FORMATS, folder, RenderContext.for_root(root))
    out = {p.name: p.read_bytes() for p in written}
    out["console"] = console.render(results, color=False).encode()
    return out


def _spilled(results: Results) -> int:
    return sum(isinstance(t.violations, SpilledFindings) for t in results.tests)


def _folders(where: Path) -> list[Path]:
    return sorted(where.glob(".agent-eval-spill-*"))


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bound of 3 findings, runs of chunks of 2, merged 2 at a time (in rounds)."""
    monkeypatch.setattr(spill, "SPILL_AT", 3)
    monkeypatch.setattr(spill, "CHUNK", 2)
    monkeypatch.setattr(spill, "FAN_IN", 2)


@pytest.mark.parametrize("jobs", [1, 3])
def test_spilled_findings_give_every_output_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    suite = _corpus(tmp_path)
    files, errors = suite_sources(suite)
    held = evaluate_files(suite, files, errors, jobs=1, timings=False)
    assert not _spilled(held)
    assert len(held.violations) > 40  # far beyond the bound below
    fingerprints = [v.fingerprint for v in held.violations]
    assert len(set(fingerprints)) == len(fingerprints)
    # findings counted by occurrence (``:2``), in a trace and across files (a trace id
    # reused): what the spilled walk must count without holding every finding
    bases = [(fingerprint_base(v), v.trace.file if v.trace else "") for v in held.violations]
    assert len({b for b, _ in bases}) < len(bases)
    assert any(len({f for b, f in bases if b == base}) > 1 for base, _ in bases)
    before = _outputs(held, tmp_path, tmp_path / "held")

    monkeypatch.setattr(spill, "SPILL_AT", 3)
    monkeypatch.setattr(spill, "CHUNK", 2)
    monkeypatch.setattr(spill, "FAN_IN", 2)
    where = tmp_path / "spills"
    spilled = evaluate_files(suite, files, errors, jobs=jobs, timings=False,
                             spill_dir=where)
    assert _spilled(spilled) == 3
    [folder] = _folders(where)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    # walked twice, the same each time
    assert list(spilled.violations) == list(spilled.violations) == list(held.violations)
    assert [v.fingerprint for v in spilled.violations] == fingerprints
    assert len(spilled.findings) == len(held.findings)
    assert _outputs(spilled, tmp_path, tmp_path / "spilled") == before
    assert spilled.to_dict() == held.to_dict()
    # the comparison with a base run (the PR comment's): the same, head spilled or not
    base = Results.from_dict(held.to_dict())
    base.tests[0].violations = list(base.tests[0].violations)[::2]  # half of them fixed
    assert compare(spilled, base) == compare(held, base)
    assert compare(spilled, base).new_violations > 0
    # the runs merged into the final ones are gone; one final run per test is left
    assert len(list(folder.iterdir())) == 3
    spilled.close()
    assert not where.exists() or not _folders(where)


def test_the_library_spills_in_a_private_temporary_folder_gone_with_its_findings(
        tmp_path: Path, tiny: None, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = _corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    results = evaluate(suite, load_traces(["traces/*.jsonl"], suite))
    assert _spilled(results) == 3
    found = [t.violations for t in results.tests if isinstance(t.violations, SpilledFindings)]
    folder = found[0].spill.path
    assert folder is not None and Path(folder).parent == Path(tempfile.gettempdir())
    assert stat.S_IMODE(Path(folder).stat().st_mode) == 0o700
    del results, found
    gc.collect()
    assert not Path(folder).exists()


@pytest.mark.parametrize("stop", [RuntimeError("boom"), KeyboardInterrupt()])
def test_the_folder_is_removed_when_the_evaluation_stops(
        tmp_path: Path, tiny: None, stop: BaseException,
        monkeypatch: pytest.MonkeyPatch) -> None:
    suite = _corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    where = tmp_path / "spills"

    def items() -> Iterator[ReadItem]:
        for n, item in enumerate(load_traces(["traces/*.jsonl"], suite)):
            if n == 30:
                assert len(_folders(where)) == 1  # runs were written
                raise stop
            yield item

    with pytest.raises(type(stop)):
        engine.evaluate(suite, items(), spill_dir=where)
    gc.collect()
    assert _folders(where) == []


def test_run_spills_in_its_output_folder_and_removes_it(tmp_path: Path, tiny: None,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    _corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    made: list[str] = []
    real = spill.Spill.folder

    def folder(self: spill.Spill) -> str:
        made.append(real(self))
        return made[-1]

    monkeypatch.setattr(spill.Spill, "folder", folder)
    code = cli(["run", "--output-dir", "out", "--format", ",".join(FORMATS),
                "--fail-on", "never", "--jobs", "1"])
    assert code == 0, capsys.readouterr().err
    assert made and {Path(p).parent for p in made} == {(tmp_path / "out").resolve()}
    assert not any(Path(p).exists() for p in made)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        ["results.json", "results.sarif", "junit.xml", "summary.md", "report.html"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=9),
                max_size=9),
       st.integers(2, 4), st.integers(1, 3))
def test_merged_is_one_stable_sort_of_the_sources_in_order(
        groups: list[list[tuple[int, int]]], fan_in: int, chunk: int) -> None:
    """Findings keyed by (line, n) and told apart by their message (the order they were
    found in): however many sources, in memory or in runs, chained or merged, in rounds
    or not, the walk is sorted() of them all."""
    def finding(line: int, n: int, seq: int) -> Finding:
        return Finding(rule="r", severity="error", message=str(seq), test="t",
                       config=ConfigRef("c.yaml", n, 1, "k"), trace=TraceRef("f", line, "x"))

    seq = iter(range(10_000))
    found = [[finding(line, n, next(seq)) for line, n in g] for g in groups]
    key = lambda v: (v.trace.line if v.trace else 0, v.config.line)  # noqa: E731
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(spill, "FAN_IN", fan_in)
        mp.setattr(spill, "CHUNK", chunk)
        where = spill.Spill()
        try:
            sources: list[spill.Source] = []
            for i, g in enumerate(found):
                ordered = sorted(g, key=key)
                # in memory, in a run with its bounds (chained), in a run without them
                sources += ([ordered] if i % 3 == 0 else
                            spill.write_run(where, [ordered], key if i % 3 == 1 else None))
            walked = [v.message for v in spill.merged(where, sources, key)]
        finally:
            where.close()
    assert walked == [v.message for v in sorted((v for g in found for v in g), key=key)]
    assert where.path is None or not Path(where.path).exists()


def test_jobs_workers_send_their_runs_not_their_findings(
        tmp_path: Path, tiny: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a --jobs worker sends the parent holds at most the bound in memory: beyond it
    the places of its runs (in the parent's spill folder)."""
    suite = _corpus(tmp_path)
    files, errors = suite_sources(suite)
    received: list[tuple[int, int]] = []  # (findings held, runs) of each part received

    def spy(self: engine.Accumulator, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        tests = self.tests.values()
        received.append((sum(t.held() for t in tests),
                         sum(isinstance(s, spill.Segment) for t in tests for s in t.earlier)))

    monkeypatch.setattr(engine.Accumulator, "__setstate__", spy, raising=False)
    results = evaluate_files(suite, files, errors, jobs=2, timings=False,
                             spill_dir=tmp_path / "spills")
    assert len(received) == len(files) == 7
    assert all(held <= spill.SPILL_AT for held, _ in received)
    assert sum(runs for _, runs in received) >= 7  # every part spilled (≥ 6 findings each)
    assert _spilled(results) == 3
    results.close()


def test_run_removes_its_spill_when_writing_the_outputs_is_interrupted(
        tmp_path: Path, tiny: None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _corpus(tmp_path)
    monkeypatch.chdir(tmp_path)

    def interrupted(*args: object) -> None:
        assert _folders(tmp_path / "out")  # the findings were spilled there
        raise KeyboardInterrupt

    monkeypatch.setattr("agent_eval.commands.run.write_outputs", interrupted)
    code = cli(["run", "--output-dir", "out", "--fail-on", "never", "--jobs", "1"])
    assert code == 130, capsys.readouterr().err
    assert _folders(tmp_path / "out") == []


def test_one_trace_s_findings_are_spilled_as_they_are_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound holds within one trace: a trace with 40 findings of one test (a loop on a
    tool the order rule forbids, and blocked ones) is written to runs while it is checked,
    never more than the bound held; every output as when all are held."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "traces").mkdir()
    (tmp_path / "agent-eval.yaml").write_text(SUITE)
    (tmp_path / "traces" / "one.jsonl").write_text(
        _trace("T", ["warn_b", *(["err_a", "err_c", "ok"] * 20)]))
    suite = load_suite(tmp_path / "agent-eval.yaml")
    files, errors = suite_sources(suite)
    held = evaluate_files(suite, files, errors, timings=False)
    assert not _spilled(held) and len(held.violations) == 43  # 40 order, 2 errors, 1 warning
    before = _outputs(held, tmp_path, tmp_path / "held")

    monkeypatch.setattr(spill, "SPILL_AT", 3)
    monkeypatch.setattr(spill, "CHUNK", 2)
    monkeypatch.setattr(spill, "FAN_IN", 2)
    sizes: list[int] = []
    real = engine.Accumulator.write_run

    def write_run(self: engine.Accumulator) -> None:
        sizes.append(self.held)
        real(self)

    monkeypatch.setattr(engine.Accumulator, "write_run", write_run)
    spilled = evaluate_files(suite, files, errors, timings=False, spill_dir=tmp_path / "s")
    assert len(sizes) >= 10 and max(sizes) == spill.SPILL_AT + 1  # during the one trace
    assert _spilled(spilled) == 3
    assert _outputs(spilled, tmp_path, tmp_path / "spilled") == before
    spilled.close()


def test_a_test_s_time_leaves_out_the_runs_written_while_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny: None) -> None:
    """A run written while a test hands over its findings (every test's findings held)
    is not that test's time: duration_ms is the checks' time, as when runs were written
    between traces."""
    now = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    real = engine.Accumulator.write_run

    def slow(self: engine.Accumulator) -> None:
        now[0] += 100.0  # a run that takes 100 s to write; the checks take no time
        real(self)

    monkeypatch.setattr(engine.Accumulator, "write_run", slow)
    suite = _corpus(tmp_path)
    files, errors = suite_sources(suite)
    results = evaluate_files(suite, files, errors, jobs=1, spill_dir=tmp_path / "s")
    assert _spilled(results) == 3 and now[0] >= 1000
    assert [t.duration_ms for t in results.tests] == [0, 0, 0]
    results.close()
