"""The progress line on stderr: only on a terminal, only after 2 s, at most every 0.2 s,
cleared at the end."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any, TextIO

import pytest

from agent_eval.progress import Progress
from agent_eval.results import Results

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "customer-service" / "agent-eval.yaml"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_in_the_first_two_seconds_then_at_most_every_fifth_of_a_second() -> None:
    out, clock = Tty(), Clock()
    progress = Progress(out, clock=clock)
    progress(1000)
    clock.now += 1.875
    progress(2000)
    assert out.getvalue() == ""
    clock.now += 0.125  # 2 s
    progress(3000)
    assert out.getvalue() == "\r3,000 traces…"
    clock.now += 0.125
    progress(4000)  # too soon
    assert out.getvalue() == "\r3,000 traces…"
    clock.now += 0.125
    progress(12000)
    assert out.getvalue() == "\r3,000 traces…\r12,000 traces…"
    progress.close()
    assert out.getvalue().endswith("\r" + " " * len("12,000 traces…") + "\r")


def test_a_shorter_count_overwrites_the_longer_one_fully() -> None:
    out, clock = Tty(), Clock()
    progress = Progress(out, clock=clock, delay=0, interval=0)
    progress(10000)
    progress(5)
    assert out.getvalue() == "\r10,000 traces…\r5 traces…" + " " * 5


def test_silent_when_not_a_terminal_or_disabled() -> None:
    clock = Clock()
    for stream, enabled in ((io.StringIO(), True), (Tty(), False)):
        with Progress(stream, enabled=enabled, clock=clock, delay=0, interval=0) as progress:
            progress(1000)
            clock.now += 5
            progress(2000)
        assert stream.getvalue() == ""


def test_closing_without_output_writes_nothing() -> None:
    out = Tty()
    with Progress(out, clock=Clock()) as progress:
        progress(1000)
    assert out.getvalue() == ""


def test_run_passes_a_progress_to_the_engine_and_closes_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from agent_eval import _cli, engine
    from agent_eval.commands import run

    made: list[Spy] = []

    class Spy(Progress):
        def __init__(self, stream: TextIO, *, enabled: bool = True) -> None:
            super().__init__(stream, enabled=enabled)
            self.enabled = enabled
            self.stream_is_stderr = stream is sys.stderr
            self.calls: list[int] = []
            self.closed = False
            made.append(self)

        def __call__(self, done: int) -> None:
            self.calls.append(done)

        def close(self) -> None:
            self.closed = True

    seen: dict[str, object] = {}
    real = engine.evaluate_files

    def spy_evaluate(*args: Any, **kw: Any) -> Results:
        seen["progress"] = kw.get("progress")
        return real(*args, **kw)

    monkeypatch.setattr(run, "Progress", Spy)
    monkeypatch.setattr(run, "evaluate_files", spy_evaluate)
    for quiet in (True, False):
        made.clear()
        args = _cli._parser().parse_args(["run", "--config", str(EXAMPLE), *["-q"][:quiet],
                                          "--no-timings", "--output-dir", str(tmp_path)])
        assert run.main(args) == 1
        [spy] = made
        assert seen["progress"] is spy and spy.closed and spy.stream_is_stderr
        assert spy.enabled is not quiet  # -q: never a progress line
    assert capsys.readouterr().err == ""
