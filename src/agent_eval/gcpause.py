"""Python's cyclic garbage collector paused for a block of work that makes many objects
but no reference cycles (reference counting frees them all).

While the results hold hundreds of thousands of long-lived objects, each full collection
(one every few hundred thousand new objects) walks them all again: a third of the time of
writing SARIF for 51k findings, and of reading OTLP spans, went there
(docs/performance.md)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off for the block and restored as it was (on again only if it was
    on). Never hold it across a ``yield`` of a generator whose consumer makes cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
