"""Readers: trace files in any supported format -> canonical traces.

``READERS`` is the registry (one line per format). ``expand`` turns globs into files;
``read_sources`` streams traces, input errors and ignored-event counts from them.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from agent_eval.errors import InputError
from agent_eval.readers import native
from agent_eval.readers.base import IgnoredEvents, Reader, ReadItem, SourceFile

READERS: dict[str, Reader] = {
    reader.name: reader
    for reader in (
        native.READER,
    )
}
SNIFF_BYTES = 8192

__all__ = ["READERS", "IgnoredEvents", "ReadItem", "Reader", "SourceFile", "expand",
           "read_sources"]


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, root)).as_posix()


def expand(patterns: Iterable[str], base: Path, root: Path, config_dir: Path,
           where: str) -> tuple[list[SourceFile], list[InputError]]:
    """Files matched by ``patterns`` (relative to ``base``), sorted and without
    repeats. A pattern that matches nothing is an input error located at ``where``
    (``file:line`` of the pattern in the config, or ``--traces``)."""
    files: list[SourceFile] = []
    errors: list[InputError] = []
    seen: set[Path] = set()
    where_file, _, where_line = where.partition(":")
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, root_dir=base, recursive=True))
        found = [Path(base, m).resolve() for m in matches]
        found = [p for p in found if p.is_file()]
        if not found:
            errors.append(InputError(
                "input/no_traces", where_file, int(where_line or 0),
                f"no trace file matches '{pattern}' (relative to {base}); check the glob "
                "or pass --traces"))
        for p in found:
            if p not in seen:
                seen.add(p)
                files.append(SourceFile(str(p), _rel(p, root), _rel(p, config_dir)))
    return files, errors


def pick_reader(source: SourceFile, fmt: str) -> Reader | InputError:
    if fmt not in ("auto", ""):
        return READERS[fmt]
    try:
        with open(source.path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        return InputError("input/unreadable_file", source.file, 0,
                          f"cannot read the file: {exc}")
    for reader in READERS.values():
        if reader.sniff(head, source):
            return reader
    return InputError("input/unknown_format", source.file, 0,
                      f"no reader recognises this file (tried: {', '.join(READERS)}); "
                      "set 'format:' in the suite or convert the file")


def read_sources(sources: Iterable[SourceFile], fmt: str = "auto") -> Iterator[ReadItem]:
    for source in sources:
        reader = pick_reader(source, fmt)
        if isinstance(reader, InputError):
            yield reader
            continue
        yield from reader.read(source)
