"""results.json: the contract other tools and the base-branch comparison read.

The per-trace summaries can number in the millions, so they are written one compact
line each, straight from the summaries and in chunks, and ``write`` streams the document
to the file: the whole text never exists twice in memory.
"""

from __future__ import annotations

import io
from collections.abc import Collection
from dataclasses import replace
from itertools import count, islice
from typing import BinaryIO

import orjson

from agent_eval.findings import Finding, finding_dict
from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results, trace_dict

_PLACEHOLDER = "\x00traces\x00"
_FINDINGS = "\x00violations\x00"
_CHUNK = 4096


def write(results: Results, ctx: RenderContext | None, out: BinaryIO) -> None:
    # the findings (possibly millions) are written like the traces: each finding dumped
    # on its own and indented to its place, never the whole list as one document
    bare = replace(results, tests=[replace(t, violations=[]) for t in results.tests])
    data = bare.to_dict(with_traces=False)
    data["traces"] = None
    data["baseline"] = data.pop("baseline")  # keep it last
    # placeholders where the findings and the traces go: each must be found once in the
    # text, that is, be no other value of it (a suite named like one put the findings in
    # "suite"); another salt until none is. The findings' share a prefix: it is counted
    # once, not each of them (a suite of thousands of tests).
    tests = data["tests"]
    for salt in count():
        for i, t in enumerate(tests):
            t["violations"] = f"{_FINDINGS}{salt}:{i}"
        data["traces"] = f"{_PLACEHOLDER}{salt}"
        text = orjson.dumps(data, option=orjson.OPT_INDENT_2)
        slot = orjson.dumps(data["traces"])
        if (text.count(orjson.dumps(f"{_FINDINGS}{salt}:")[:-1]) == len(tests)
                and text.count(slot) == 1):
            break
    found = [orjson.dumps(t["violations"]) for t in tests]
    del data, bare, tests
    # the text between the placeholders, in order, by position: splitting off the rest
    # at each copied it (quadratic: 20,000 tests took a minute)
    view, pos = memoryview(text), 0
    for i, test in enumerate(results.tests):
        at = text.index(found[i], pos)
        out.write(view[pos:at])
        _write_findings(out, test.violations, text[text.rfind(b"\n", 0, at) + 1:at])
        pos = at + len(found[i])
    at = text.index(slot, pos)
    out.write(view[pos:at])
    tail = view[at + len(slot):]
    traces = results.traces
    if not traces:
        out.write(b"[]")
    else:
        dumps = orjson.dumps
        out.write(b"[\n    ")
        for start in range(0, len(traces), _CHUNK):
            if start:
                out.write(b",\n    ")
            out.write(b",\n    ".join(dumps(trace_dict(t)) for t in traces[start:start + _CHUNK]))
        out.write(b"\n  ]")
    out.write(tail)
    out.write(b"\n")


def _write_findings(out: BinaryIO, findings: Collection[Finding], head: bytes) -> None:
    """A list of findings as ``orjson.OPT_INDENT_2`` writes it at the end of ``head``
    (the text before it on its key's line, or more: its indentation is the last line's)."""
    if not findings:
        out.write(b"[]")
        return
    line = head[head.rfind(b"\n") + 1:]
    pad = b"\n" + b" " * (len(line) - len(line.lstrip(b" ")) + 2)
    dumps, indent = orjson.dumps, orjson.OPT_INDENT_2
    out.write(b"[")
    walk = iter(findings)  # in chunks: spilled findings are read as they are written
    sep = b""
    while chunk := list(islice(walk, _CHUNK)):
        out.write(sep)
        sep = b","
        out.write(b",".join(pad + dumps(finding_dict(v), option=indent).replace(b"\n", pad)
                            for v in chunk))
    out.write(pad[:-2] + b"]")


def render(results: Results, ctx: RenderContext | None = None) -> str:
    buffer = io.BytesIO()
    write(results, ctx, buffer)
    return buffer.getvalue().decode()
