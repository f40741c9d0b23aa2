"""Renderers: Results -> the text of one output format.

A renderer is a pure function of the results and a :class:`RenderContext` (which gives
read access to the repository's files for snippets, and the links to GitHub when
known); both are defined in :mod:`agent_eval.renderers.interface`. ``RENDERERS`` is the
registry: one line per format, with its fixed file name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, BinaryIO

from agent_eval.renderers import console, json
from agent_eval.renderers.interface import SNIPPET_FILE_BYTES, RenderContext, Renderer
from agent_eval.results import Results

__all__ = ["RENDERERS", "SNIPPET_FILE_BYTES", "RenderContext", "Renderer", "console",
           "html", "json", "junit", "markdown", "sarif"]

# The formats not every run writes: their modules (and what they import: sarif_om,
# jinja2) are imported when a file of theirs is first rendered (start-up time,
# docs/performance.md), and when named as attributes of this package.
_ON_USE = ("html", "junit", "markdown", "sarif")


def __getattr__(name: str) -> Any:
    if name in _ON_USE:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _on_use(module: str) -> Callable[[Results, RenderContext], str]:
    """``agent_eval.renderers.<module>.render``, imported at the first call."""
    def render(results: Results, ctx: RenderContext) -> str:
        done: Callable[[Results, RenderContext], str] = importlib.import_module(
            f"{__name__}.{module}").render
        return done(results, ctx)

    render.__qualname__ = f"{module}.render"
    return render


def _write_on_use(module: str) -> Callable[[Results, RenderContext, BinaryIO], None]:
    """``agent_eval.renderers.<module>.write``, imported at the first call."""
    def write(results: Results, ctx: RenderContext, out: BinaryIO) -> None:
        done: Callable[[Results, RenderContext, BinaryIO], None] = importlib.import_module(
            f"{__name__}.{module}").write
        done(results, ctx, out)

    write.__qualname__ = f"{module}.write"
    return write


RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        Renderer("json", "results.json", json.render, json.write),
        Renderer("console", "console.txt", console.render_plain),
        Renderer("sarif", "results.sarif", _on_use("sarif"), _write_on_use("sarif")),
        Renderer("junit", "junit.xml", _on_use("junit"), _write_on_use("junit")),
        Renderer("markdown", "summary.md", _on_use("markdown")),
        Renderer("html", "report.html", _on_use("html")),
    )
}
