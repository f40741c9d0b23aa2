"""GitHub Actions workflow commands and environment files: annotations
(``::error file=…,line=…::``), step outputs (``GITHUB_OUTPUT``, heredoc syntax) and the job
summary (``GITHUB_STEP_SUMMARY``, at most 1 MiB)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_eval.errors import InputError
from agent_eval.findings import Finding

SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts per step summary
ANNOTATIONS_PER_LEVEL = 10  # what the platform shows per type and step
LEVELS = ("error", "warning", "notice")
_LEVEL = {"error": "error", "warning": "warning", "note": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: str | int | None) -> str:
    """One workflow command line, e.g. ``::error file=a.yaml,line=3::text``."""
    shown = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items()
                     if v is not None and v != "")
    return f"::{name}{' ' + shown if shown else ''}::{escape_data(message)}"


@dataclass(frozen=True)
class Annotation:
    level: str  # error, warning, notice
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    title: str | None = None

    def line_text(self) -> str:
        return command(self.level, self.message, file=self.file,
                       line=self.line if self.line else None,
                       col=self.col if self.line and self.col else None, title=self.title)


def finding_annotation(v: Finding) -> Annotation:
    where = ""
    if v.trace is not None:
        where = f" (trace {v.trace.trace_id} at {v.trace.file}:{v.trace.line})"
    return Annotation(_LEVEL.get(v.severity, "error"), v.message + where, v.config.file,
                      v.config.line, v.config.col, f"agent-eval: {v.rule}")


def input_error_annotation(e: InputError) -> Annotation:
    return Annotation("error", e.message, e.file, e.line or None, None, f"agent-eval: {e.rule}")


def pick_annotations(annotations: Iterable[Annotation],
                     per_level: int = ANNOTATIONS_PER_LEVEL) -> tuple[list[Annotation], int]:
    """The first ``per_level`` annotations of each level (errors first), and how many
    were left out. When some were, the last notice slot is kept for the line that says
    so."""
    by_level: dict[str, list[Annotation]] = {level: [] for level in LEVELS}
    for a in annotations:
        by_level.setdefault(a.level, []).append(a)
    total = sum(len(v) for v in by_level.values())
    shown = {level: items[:per_level] for level, items in by_level.items()}
    hidden = total - sum(len(v) for v in shown.values())
    if hidden and len(shown["notice"]) == per_level:
        shown["notice"] = shown["notice"][:-1]
        hidden += 1
    ordered = [a for level in LEVELS for a in shown[level]]
    ordered += [a for level, items in shown.items() if level not in LEVELS for a in items]
    return ordered, hidden


def annotation_lines(annotations: Iterable[Annotation], where_more: str,
                     per_level: int = ANNOTATIONS_PER_LEVEL) -> list[str]:
    shown, hidden = pick_annotations(annotations, per_level)
    lines = [a.line_text() for a in shown]
    if hidden:
        lines.append(command("notice", f"{hidden} more finding(s) are not shown as "
                             f"annotations (GitHub shows {per_level} per level and step); "
                             f"{where_more}", title="agent-eval"))
    return lines


def write_outputs(path: str | Path, values: Mapping[str, str]) -> None:
    """Append ``name<<DELIMITER`` / value / ``DELIMITER`` blocks to ``GITHUB_OUTPUT``,
    with a random delimiter that no value contains."""
    chunks = []
    for name, value in values.items():
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        while delimiter in value:  # pragma: no cover - astronomically unlikely
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
        chunks.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(chunks))


def read_outputs(text: str) -> dict[str, str]:
    """Parse a ``GITHUB_OUTPUT`` file as the runner does (``k=v`` and heredoc blocks)."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value: list[str] = []
            while i < len(lines) and lines[i] != delimiter:
                value.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ValueError(f"no closing delimiter {delimiter!r} for output {name!r}")
            i += 1
            out[name] = "\n".join(value)
        else:
            name, _, val = line.partition("=")
            out[name] = val
    return out


def fit_summary(text: str, used: int = 0, limit: int = SUMMARY_LIMIT,
                note: str = "") -> str:
    """``text`` cut at a line so that, with ``used`` bytes already in the summary file,
    it stays under ``limit`` bytes; a cut text ends with ``note``."""
    room = limit - used
    data = text.encode("utf-8")
    if len(data) <= room:
        return text
    tail = f"\n\n> **Cut:** the job summary is limited to 1 MiB. {note}\n".encode()
    keep = max(0, room - len(tail))
    head = data[:keep].decode("utf-8", errors="ignore")
    if "\n" in head:
        head = head[: head.rindex("\n")]
    return head + tail.decode()


def append_summary(path: str | Path, text: str, note: str = "") -> str:
    """Append ``text`` to the job summary file, cut to stay under 1 MiB in all; what was
    written."""
    p = Path(path)
    used = p.stat().st_size if p.exists() else 0
    fitted = fit_summary(text, used, note=note)
    with open(p, "a", encoding="utf-8") as fh:
        fh.write(fitted)
    return fitted
