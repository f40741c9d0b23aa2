"""``agent-eval report RESULTS.json --format X``: render a results file again, later.

The output is byte-identical to the file ``agent-eval run --format X`` wrote for the same
results (both call the same renderer with a context for the same repository root).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from agent_eval.jsonutil import JsonLimitError, loads, read_whole
from agent_eval.limits import RESULTS as RESULTS_LIMITS
from agent_eval.outputs import atomic_write, output_file
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results
from agent_eval.safetext import clean_results

EXIT_ERROR = 2


def load(path: str) -> Results:
    """Read a results JSON file; ``ValueError`` with a one-line reason when it is not one."""
    try:
        with open(path, "rb") as fh:
            data = loads(read_whole(fh, RESULTS_LIMITS), RESULTS_LIMITS)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except JsonLimitError as exc:
        raise ValueError(f"{path} is not read: it {exc}") from exc
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("tool", {}).get("name") != "agent-eval":
        raise ValueError(f"{path} is not an agent-eval results file")
    try:
        # a results file may come from anyone (a baseline artifact): its trace text is
        # made safe to show, as `run` does
        return clean_results(Results.from_dict(data))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{path} is not an agent-eval results file of a version this "
                         f"tool can read (schema_version {data.get('schema_version')!r}): "
                         f"{type(exc).__name__}: {exc}") from exc


def main(args: argparse.Namespace) -> int:
    from agent_eval._cli import check_format

    fmt = args.format
    check_format(fmt)  # unknown: exit 2 with a "did you mean"
    renderer = RENDERERS[fmt]
    try:
        results = load(args.results)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    root = Path(args.root) if args.root else Path.cwd()
    ctx = RenderContext.for_root(root, repo_url=args.repo_url, sha=args.sha,
                                 run_url=args.run_url)
    text = renderer.render(results, ctx)
    if args.output:
        with atomic_write(output_file(Path(args.output), root)) as fh:  # as `run` writes
            fh.write(text.encode("utf-8"))
    else:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.flush()
    return 0
