"""Renderers: Results -> the text of one output format.

A renderer is a pure function of the results and a :class:`RenderContext` (which gives
read access to the repository's files for snippets, and the links to GitHub when
known). ``RENDERERS`` is the registry: one line per format, with its fixed file name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agent_eval.results import Results


def _no_source(path: str) -> str | None:
    return None


@dataclass(frozen=True)
class RenderContext:
    """What a renderer may know besides the results."""

    read: Callable[[str], str | None] = field(default=_no_source)  # repo-relative path -> text
    repo_url: str | None = None  # https://github.com/OWNER/REPO
    sha: str | None = None  # the commit the results are for (links to blobs)
    run_url: str | None = None  # the workflow run

    @classmethod
    def for_root(cls, root: Path | str, **kw: str | None) -> RenderContext:
        base = Path(root)

        def read(path: str) -> str | None:
            try:
                return (base / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None

        return cls(read, kw.get("repo_url"), kw.get("sha"), kw.get("run_url"))


@dataclass(frozen=True)
class Renderer:
    name: str
    filename: str
    render: Callable[[Results, RenderContext], str]
    # streams the same bytes as ``render`` to a binary file (for large outputs)
    stream: Callable[[Results, RenderContext, BinaryIO], None] | None = None

    def write(self, results: Results, ctx: RenderContext, path: Path) -> None:
        with open(path, "wb") as fh:
            if self.stream is not None:
                self.stream(results, ctx, fh)
            else:
                fh.write(self.render(results, ctx).encode("utf-8"))


def _registry() -> dict[str, Renderer]:
    from agent_eval.renderers import console, html, json, junit, markdown, sarif

    return {
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


RENDERERS: dict[str, Renderer] = _registry()
