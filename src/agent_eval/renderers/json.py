"""results.json: the contract other tools and the base-branch comparison read.

The per-trace summaries can number in the millions, so they are written one compact
line each, straight from the summaries and in chunks, and ``write`` streams the document
to the file: the whole text never exists twice in memory.
"""

from __future__ import annotations

import io
from typing import BinaryIO

import orjson

from agent_eval.renderers.interface import RenderContext
from agent_eval.results import Results, trace_dict

_PLACEHOLDER = "\x00traces\x00"
_CHUNK = 4096


def write(results: Results, ctx: RenderContext | None, out: BinaryIO) -> None:
    data = results.to_dict(with_traces=False)
    data["traces"] = _PLACEHOLDER
    data["baseline"] = data.pop("baseline")  # keep it last
    head, tail = orjson.dumps(data, option=orjson.OPT_INDENT_2).split(
        orjson.dumps(_PLACEHOLDER), 1)
    del data
    out.write(head)
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


def render(results: Results, ctx: RenderContext | None = None) -> str:
    buffer = io.BytesIO()
    write(results, ctx, buffer)
    return buffer.getvalue().decode()
