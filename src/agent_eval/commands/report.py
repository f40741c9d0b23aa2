"""``agent-eval report RESULTS.json --format X``: render a results file again, later.

The output is byte-identical to the file ``agent-eval run --format X`` wrote for the same
results (both call the same renderer with a context for the same repository root).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_eval.commands._options import check_format
from agent_eval.errors import ConfigError, ExitCode
from agent_eval.outputs import atomic_write, clear_output_file, output_file, written_into
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results


def main(args: argparse.Namespace) -> ExitCode:
    root = Path(args.root) if args.root else Path.cwd()
    if args.output:  # an earlier FILE goes first: a report that stops leaves none
        clear_output_file(Path(args.output), root, [args.results])  # (docs/outputs.md)
    fmt = args.format
    check_format(fmt)  # unknown: exit 2 with a "did you mean"
    renderer = RENDERERS[fmt]
    _check_links(args.repo_url, args.sha, args.run_url)
    results = Results.load(args.results)  # not a results file: exit 2 (_cli)
    ctx = RenderContext.for_root(root, repo_url=args.repo_url, sha=args.sha,
                                 run_url=args.run_url)
    text = renderer.render(results, ctx)
    if args.output:
        target = output_file(Path(args.output), root)
        with atomic_write(target, through=written_into(target, root)) as fh:  # as `run` writes
            fh.write(text.encode("utf-8"))
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    return ExitCode.OK


def _check_links(repo_url: str | None, sha: str | None, run_url: str | None) -> None:
    """``--repo-url`` and ``--sha`` make the policy links together: one alone made no link
    and said nothing. Both are written into Markdown and HTML links: the URL is an
    ``https://`` address without spaces, quotes, brackets or parentheses, the commit its
    letters and digits (or a ref name's ``._-/``, without an empty segment, one starting
    with a dot or ``..``)."""
    if bool(repo_url) != bool(sha):
        given, missing = ("--repo-url", "--sha") if repo_url else ("--sha", "--repo-url")
        raise ConfigError([f"{given} links policy lines only with {missing} (the repository "
                           "and the commit the links point at): give both, or neither"])
    for option, url, example in (("--repo-url", repo_url, "https://github.com/OWNER/REPO"),
                                 ("--run-url", run_url,
                                  "https://github.com/OWNER/REPO/actions/runs/ID")):
        if url and (not url.startswith("https://")
                    or any(c in url for c in ' \t\n\r"\'<>()[]`\\')):
            raise ConfigError([f"{option} must be an https:// address, such as {example}"])
    # a ref name's segments are never empty nor start with a dot (git check-ref-format):
    # a "../" one climbed out of the repository (REPO/blob/../../../../evil/x/blob/main/
    # is https://github.com/evil/x/... once a browser resolves it), as policy_url says
    if sha and (not all(c.isascii() and (c.isalnum() or c in "._-/") for c in sha)
                or ".." in sha or any(not part or part.startswith(".")
                                      for part in sha.split("/"))):
        raise ConfigError(["--sha must be a commit (its hex digits) or a ref name"])
