"""results.json: the contract other tools and the base-branch comparison read.

The per-trace summaries can number in the millions, so they are written one compact
line each, straight from the summaries, instead of being expanded into dicts first.
"""

from __future__ import annotations

import orjson

from agent_eval.renderers import RenderContext
from agent_eval.results import Results, trace_dict

_PLACEHOLDER = "\x00traces\x00"
_CHUNK = 4096


def render(results: Results, ctx: RenderContext | None = None) -> str:
    data = results.to_dict(with_traces=False)
    data["traces"] = _PLACEHOLDER
    data["baseline"] = data.pop("baseline")  # keep it last
    text = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    if not results.traces:
        array = "[]"
    else:
        parts: list[str] = []
        traces = results.traces
        dumps = orjson.dumps
        for start in range(0, len(traces), _CHUNK):
            chunk = traces[start : start + _CHUNK]
            parts.append(",\n    ".join(dumps(trace_dict(t)).decode() for t in chunk))
        array = "[\n    " + ",\n    ".join(parts) + "\n  ]"
    return text.replace(orjson.dumps(_PLACEHOLDER).decode(), array, 1) + "\n"
