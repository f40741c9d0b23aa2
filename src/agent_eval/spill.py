"""Findings beyond a bound kept on disk, so that memory does not grow with their number
(docs/architecture.md "Findings on disk").

An evaluation holds at most :data:`SPILL_AT` findings in memory; beyond it, the findings
held are sorted and written as a *run* to a file of a private spill folder
(:class:`Spill`), and the output walks them merge-sorted (:func:`merged`) from their runs.
Runs are read back a chunk at a time, so a walk holds one chunk per run it merges.
"""

from __future__ import annotations

import heapq
import io
import operator
import os
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from itertools import chain
from typing import Any

from agent_eval.findings import ConfigRef, Finding, TraceRef

__all__ = ["CHUNK", "FAN_IN", "SPILL_AT", "Chained", "Segment", "Source", "Spill",
           "SpilledFindings", "by_fields", "merged", "write_run"]

SPILL_AT = 60_000  # findings one evaluation holds in memory before it writes them to a run
CHUNK = 256  # findings pickled together: what a walk holds per run it reads
FAN_IN = 64  # runs merged at once (more are merged in rounds: open files stay few)


def by_fields(cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
    """A pickle reducer that rebuilds a dataclass by calling it with its fields: much
    cheaper than the ``__setstate__`` of a slotted dataclass, which looks its fields up
    again for every object."""
    get = operator.attrgetter(*(f.name for f in fields(cls)))
    return lambda obj: (cls, get(obj))


# what runs hold by the thousand
WIRE: dict[type, Callable[[Any], tuple[type, tuple[Any, ...]]]] = {
    cls: by_fields(cls) for cls in (Finding, ConfigRef, TraceRef)}


def _remove(path: str, pid: int) -> None:
    if os.getpid() == pid:  # never from a forked worker that inherited the object
        import shutil  # lazy for start-up time, as tempfile: only a run that spills needs it

        shutil.rmtree(path, ignore_errors=True)


class Spill:
    """The private folder of one evaluation's runs: made on first use by
    :func:`tempfile.mkdtemp` (mode 0700, a name no one else can take) in ``parent`` (the
    run's output folder) or, without one, the system's temporary folder; removed with
    every run in it by :meth:`close`, when the last object using it is garbage-collected,
    or when the interpreter exits (an error, Ctrl-C)."""

    def __init__(self, parent: str | os.PathLike[str] | None = None) -> None:
        self.parent = parent
        self.path: str | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def beside(self) -> str | None:
        """Where an unnamed temporary file of the evaluation goes (a very long trace's
        calls, :class:`agent_eval.model.CallLog`): the folder the spill folder is made
        in (made now if needed), or None for the system's temporary folder. The file has
        no name, so nothing is left there, whatever ends the process."""
        if self.parent is None:
            return None
        os.makedirs(self.parent, exist_ok=True)
        return os.fspath(self.parent)

    def folder(self) -> str:
        """The folder, made now if it is not there yet."""
        if self.path is None:
            import tempfile

            if self.parent is not None:
                os.makedirs(self.parent, exist_ok=True)
            self.path = os.path.abspath(tempfile.mkdtemp(prefix=".agent-eval-spill-",
                                                         dir=self.parent))
            self._finalizer = weakref.finalize(self, _remove, self.path, os.getpid())
        return self.path

    def close(self) -> None:
        """Remove the folder and every run in it (safe to call again)."""
        if self._finalizer is not None:
            self._finalizer()

    def __getstate__(self) -> dict[str, Any]:
        # a copy in a worker process (spawn) writes into the folder but never removes it
        return {"parent": self.parent, "path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.parent, self.path, self._finalizer = state["parent"], state["path"], None


@dataclass(frozen=True, slots=True)
class Segment:
    """``count`` findings pickled in chunks from byte ``start`` of the run file ``path``."""

    path: str
    start: int
    count: int
    # the sort keys of its first and last finding, when it was written with a key
    bounds: tuple[Any, Any] | None = None

    def __iter__(self) -> Iterator[Finding]:
        import pickle  # (start-up time: only a run that spills needs it)

        left = self.count
        with open(self.path, "rb") as fh:
            fh.seek(self.start)
            while left > 0:
                chunk: list[Finding] = pickle.load(fh)  # one pickle per chunk
                left -= len(chunk)
                yield from chunk


# where findings are: in memory (a list in the order they were found), or in a run
Source = list[Finding] | Segment


def _dump(fh: io.BufferedWriter, findings: Sequence[Finding]) -> None:
    import pickle  # (start-up time: only a run that spills needs it)

    pickler = pickle.Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = WIRE
    for i in range(0, len(findings), CHUNK):
        pickler.dump(list(findings[i:i + CHUNK]))
        pickler.clear_memo()


def write_run(spill: Spill, groups: Iterable[Iterable[Finding]],
              key: Callable[[Finding], Any] | None = None) -> list[Segment]:
    """Each group of findings written, in its order, to one new run file of ``spill``:
    one segment per group (with the ``key`` of its first and last finding, if given)."""
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".run", dir=spill.folder())
    out: list[Segment] = []
    with os.fdopen(fd, "wb") as fh:
        for group in groups:
            start, count, buffer = fh.tell(), 0, []
            first = last = None
            for f in group:
                if first is None:
                    first = f
                buffer.append(f)
                if len(buffer) == CHUNK:
                    _dump(fh, buffer)
                    count += CHUNK
                    buffer = []
                last = f
            if buffer:
                _dump(fh, buffer)
                count += len(buffer)
            bounds = None if key is None or first is None or last is None else (
                key(first), key(last))
            out.append(Segment(path, start, count, bounds))
    return out


def _bounds(source: Source, key: Callable[[Finding], Any]) -> tuple[Any, Any] | None:
    if isinstance(source, list):
        return (key(source[0]), key(source[-1])) if source else None
    return source.bounds


def _chains(sources: Sequence[Source], key: Callable[[Finding], Any]
            ) -> list[list[Source]]:
    """The sources in order, neighbours in one chain while each starts at or after the
    end of the one before (by their bounds): a chain walked source after source is
    sorted, and the sources read in turn (runs written in read order mostly are)."""
    chains: list[list[Source]] = []
    end = None
    for source in sources:
        bounds = _bounds(source, key)
        if chains and end is not None and bounds is not None and not bounds[0] < end:
            chains[-1].append(source)
        else:
            chains.append([source])
        end = None if bounds is None else bounds[1]
    return chains


def merged(spill: Spill, sources: Sequence[Source],
           key: Callable[[Finding], Any]) -> Iterator[Finding]:
    """The findings of ``sources`` (each sorted by ``key``) in the order one stable sort
    of them all, taken in the order of ``sources``, gives: :func:`heapq.merge` takes
    equal keys from the earlier source first, of neighbours that do not overlap
    (:func:`_chains`) the earlier is read first. Of more than :data:`FAN_IN` chains, the
    first ones are merged into one new run first, as few as leave :data:`FAN_IN`."""
    runs: list[Iterable[Finding]] = [chain.from_iterable(c) if len(c) > 1 else c[0]
                                     for c in _chains(sources, key)]
    while len(runs) > FAN_IN:
        k = min(FAN_IN, len(runs) - FAN_IN + 1)
        runs[:k] = write_run(spill, [heapq.merge(*runs[:k], key=key)], key)
    if len(runs) == 1:
        return iter(runs[0])
    return heapq.merge(*runs, key=key)


class _Walk(Collection[Finding]):
    """Findings walked in order as often as wanted; not indexable."""

    __slots__ = ()

    def __contains__(self, item: object) -> bool:
        return any(f == item for f in self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Collection):
            return NotImplemented
        return len(self) == len(other) and all(
            a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


class SpilledFindings(_Walk):
    """Findings in runs of a :class:`Spill`, walked in order as often as wanted (each
    walk reads the runs again, a chunk at a time); not indexable. Holds the spill, so its
    folder lives while these findings do."""

    __slots__ = ("_count", "segments", "spill")

    def __init__(self, spill: Spill, segments: Sequence[Segment]) -> None:
        self.spill = spill
        self.segments = tuple(segments)
        self._count = sum(s.count for s in self.segments)

    def __iter__(self) -> Iterator[Finding]:
        return chain.from_iterable(self.segments)

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"<{len(self)} findings in {self.spill.path}>"


class Chained(_Walk):
    """Several collections of findings walked one after the other, as often as wanted
    (what :attr:`Results.violations` and :attr:`Results.findings` are)."""

    __slots__ = ("parts",)

    def __init__(self, parts: Iterable[Collection[Finding]]) -> None:
        self.parts = tuple(parts)

    def __iter__(self) -> Iterator[Finding]:
        return chain.from_iterable(self.parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __bool__(self) -> bool:
        return any(self.parts)

    def __repr__(self) -> str:
        return f"Chained({list(self)!r})"
