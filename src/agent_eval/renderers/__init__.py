"""Renderers: Results -> bytes of one output format (no I/O, no GitHub).

``RENDERERS`` is the registry (one line per format) with each format's fixed file name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agent_eval.renderers import console, json
from agent_eval.results import Results


@dataclass(frozen=True)
class Renderer:
    name: str
    filename: str
    render: Callable[[Results], str]


RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        Renderer("json", "results.json", json.render),
        Renderer("console", "console.txt", console.render_plain),
    )
}
