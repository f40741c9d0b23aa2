"""The renderer interface: what a renderer is given besides the results
(:class:`RenderContext`) and what the registry holds of each one (:class:`Renderer`).

Renderer modules import this module, never the package: ``agent_eval.renderers`` is the
registry, which imports every renderer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agent_eval.gcpause import gc_paused
from agent_eval.limits import DEFAULT
from agent_eval.outputs import atomic_write
from agent_eval.results import Results

__all__ = ["SNIPPET_FILE_BYTES", "RenderContext", "Renderer"]

SNIPPET_FILE_BYTES = DEFAULT.max_file_bytes  # larger files give no snippet


def _no_source(path: str) -> str | None:
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class RenderContext:
    """What a renderer may know besides the results."""

    read: Callable[[str], str | None] = field(default=_no_source)  # repo-relative path -> text
    repo_url: str | None = None  # https://github.com/OWNER/REPO
    sha: str | None = None  # the commit the results are for (links to blobs)
    run_url: str | None = None  # the workflow run
    sarif_category: str | None = None  # SARIF's automationDetails.id (the action's input)

    @classmethod
    def for_root(cls, root: Path | str, **kw: str | None) -> RenderContext:
        """Snippets read from the files under ``root`` only: the locations in a results
        file may say anything (``../../etc/passwd``), so a path that leaves ``root``, by
        itself or through a symbolic link, is not read (as a file that is not there)."""
        base = os.path.abspath(root)
        real_base = os.path.realpath(root)

        def read(path: str) -> str | None:
            full = os.path.normpath(os.path.join(base, path))
            real = os.path.realpath(full)
            if os.path.isabs(path) or not (_inside(full, base) and _inside(real, real_base)):
                return None
            try:
                if not os.path.isfile(real) or os.path.getsize(real) > SNIPPET_FILE_BYTES:
                    return None
                with open(real, encoding="utf-8") as fh:
                    return fh.read()
            except (OSError, UnicodeDecodeError):
                return None

        return cls(read, kw.get("repo_url"), kw.get("sha"), kw.get("run_url"),
                   kw.get("sarif_category"))


@dataclass(frozen=True)
class Renderer:
    """One output format: its name, its file and how it is rendered."""

    name: str
    filename: str
    render: Callable[[Results, RenderContext], str]
    # streams the same bytes as ``render`` to a binary file (for large outputs)
    stream: Callable[[Results, RenderContext, BinaryIO], None] | None = None

    def write(self, results: Results, ctx: RenderContext, path: Path) -> None:
        """Write to a temporary file renamed onto ``path`` (never a truncated file)."""
        with atomic_write(path) as fh, gc_paused():
            if self.stream is not None:
                self.stream(results, ctx, fh)
            else:
                fh.write(self.render(results, ctx).encode("utf-8"))
