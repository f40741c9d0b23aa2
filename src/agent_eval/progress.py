"""A progress line on stderr for long runs (docs/outputs.md "Console").

``Progress`` is the ``progress`` callback of :func:`agent_eval.engine.evaluate_files`:
called with the number of traces done so far. It writes ``\\r<n> traces…`` only when the
stream is a terminal, only after the run has taken :attr:`delay` seconds (short runs
print nothing), at most every :attr:`interval` seconds, and clears the line when closed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO, *, enabled: bool = True, delay: float = 2.0,
                 interval: float = 0.2,
                 clock: Callable[[], float] = time.monotonic) -> None:
        isatty = getattr(stream, "isatty", None)
        self.stream = stream
        self.active = bool(enabled and isatty is not None and isatty())
        self.delay = delay
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.last: float | None = None  # when the line was last written
        self.width = 0  # length of the text on the line now

    def __call__(self, done: int) -> None:
        if not self.active:
            return
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.last is not None and now - self.last < self.interval:
            return
        self.last = now
        text = f"{done:,} traces…"
        pad = " " * max(0, self.width - len(text))
        self.stream.write(f"\r{text}{pad}")
        self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        """Clear the line, when one was written."""
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
