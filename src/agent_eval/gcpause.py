"""Python's cyclic garbage collector paused for a block of work that makes many objects
but no reference cycles (reference counting frees them all).

While the results hold hundreds of thousands of long-lived objects, each full collection
(one every few hundred thousand new objects) walks them all again: a third of the time of
writing SARIF for 51k findings, and of reading OTLP spans, went there
(docs/performance.md).

The collector is one per process: a pause holds for every thread of it. Pauses may nest
and overlap (two evaluations in two threads): the collector is off from the first pause
that begins to the last that ends, and on again after only if it was on when the first
began. A cycle made meanwhile, by any thread, is not lost: it is collected once the
collector is on again.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["gc_paused"]

_lock = threading.Lock()
_depth = 0  # pauses begun and not yet ended, in every thread
_was_enabled = False  # the collector's state when the outermost pause began


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off for the block and restored as it was (on again only if it was
    on, and only when no other pause is still running). Never hold it across a ``yield``
    of a generator whose consumer makes cycles."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
        _depth += 1
        gc.disable()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
