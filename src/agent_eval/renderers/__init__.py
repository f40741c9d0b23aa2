"""Renderers: Results -> the text of one output format.

A renderer is a pure function of the results and a :class:`RenderContext` (which gives
read access to the repository's files for snippets, and the links to GitHub when
known); both are defined in :mod:`agent_eval.renderers.interface`. ``RENDERERS`` is the
registry: one line per format, with its fixed file name.
"""

from __future__ import annotations

from agent_eval.renderers import console, html, json, junit, markdown, sarif
from agent_eval.renderers.interface import SNIPPET_FILE_BYTES, RenderContext, Renderer

__all__ = ["RENDERERS", "SNIPPET_FILE_BYTES", "RenderContext", "Renderer", "console",
           "html", "json", "junit", "markdown", "sarif"]

RENDERERS: dict[str, Renderer] = {
    r.name: r
    for r in (
        Renderer("json", "results.json", json.render, json.write),
        Renderer("console", "console.txt", console.render_plain),
        Renderer("sarif", "results.sarif", sarif.render),
        Renderer("junit", "junit.xml", junit.render),
        Renderer("markdown", "summary.md", markdown.render),
        Renderer("html", "report.html", html.render),
    )
}
