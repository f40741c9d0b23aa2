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
from agent_eval.readers import (
    anthropic,
    anthropic_agents,
    atif,
    claude_code,
    codex,
    gemini_cli,
    inspect,
    langchain,
    mcp,
    native,
    openai,
    openai_agents,
    openhands,
    otlp,
    vercel_ai,
)
from agent_eval.readers.base import FileRead, IgnoredEvents, Reader, ReadItem, SourceFile

READERS: dict[str, Reader] = {
    reader.name: reader
    for reader in (
        # containers of other formats' payloads first: Inspect logs, LangSmith runs and
        # LangChain messages embed raw OpenAI / Anthropic bodies (formats2)
        inspect.READER,
        langchain.LANGSMITH_READER,
        langchain.READER,
        # formats1 (OTLP / OpenAI / Codex): their sniffs exclude the other formats
        codex.READER,
        openai_agents.READER,
        otlp.READER,
        openai.RESPONSES_READER,
        openai.CHAT_READER,
        # formats2: the more specific first (Claude Code rows may hold Anthropic blocks)
        claude_code.READER,
        mcp.READER,
        anthropic.READER,
        # other agent formats (each sniff is specific to its own format)
        atif.READER,
        gemini_cli.READER,
        openhands.READER,
        vercel_ai.READER,
        anthropic_agents.READER,
        native.READER,
    )
}
SNIFF_BYTES = 8192

__all__ = ["READERS", "FileRead", "IgnoredEvents", "ReadItem", "Reader", "SourceFile", "expand",
           "read_sources"]


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, root)).as_posix()


def expand(patterns: Iterable[str], base: Path, root: Path, config_dir: Path,
           where: tuple[str, int] | None) -> tuple[list[SourceFile], list[InputError]]:
    """Files matched by ``patterns`` (relative to ``base``), sorted and without
    repeats. A pattern that matches nothing is an input error located at ``where``
    (the config file and the line of its ``traces:`` key) or, for patterns given on
    the command line or to the library (``where`` None), at the pattern itself."""
    files: list[SourceFile] = []
    errors: list[InputError] = []
    seen: set[Path] = set()
    shown_base = _rel(base.resolve(), root.resolve()) or "."
    for pattern in patterns:
        matches = sorted(glob.glob(pattern, root_dir=base, recursive=True))
        found = [Path(base, m).resolve() for m in matches]
        found = [p for p in found if p.is_file()]
        if not found:
            file, line = where if where is not None else (pattern, 0)
            origin = ("relative to the suite file's folder" if where is not None
                      else f"relative to {shown_base}")
            errors.append(InputError(
                "input/no_traces", file, line,
                f"no trace file matches '{pattern}' ({origin}); check the glob or pass "
                "--traces"))
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
        yield FileRead(source.file, reader.name)
        yield from reader.read(source)
