"""``agent-eval diff BASE.json HEAD.json``: the base-branch comparison of two results files,
in any format (console: the comparison itself; the others: the head's report with the
comparison in it, as ``run --baseline`` writes it). Exit code: the head's verdict after the
``regression`` gates (0 pass/warn, 1 fail, 2 error)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agent_eval.commands.report import load
from agent_eval.compare import attach
from agent_eval.outputs import atomic_write, output_file
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results, exit_code

EXIT_ERROR = 2
FORMATS = ("console", "markdown", "json", "sarif", "html")


def _num(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.4f}".rstrip("0").rstrip(".") or "0"
    return str(x)


def arrow(delta: Any) -> str:
    """``▲ +d`` / ``▼ −d`` / ``=``."""
    if not isinstance(delta, int | float) or isinstance(delta, bool):
        return ""
    if delta == 0:
        return "="
    return f"▲ +{_num(delta)}" if delta > 0 else f"▼ −{_num(-delta)}"


def text(results: Results) -> str:
    """The comparison as plain text (the console format of ``diff``)."""
    b = results.baseline or {}
    lines = [f"{results.suite}: {b.get('verdict', '?')} → {results.verdict}"]
    policy = b.get("policy") or {}
    if policy.get("message"):
        lines.append(str(policy["message"]))
    lines.append("")
    deltas = b.get("deltas") or {}
    rows = [*(deltas.get("counts") or []), *(deltas.get("metrics") or [])]
    width = max((len(str(r["name"])) for r in rows), default=6)
    lines.append(f"{'metric':<{width}}  {'base':>10}  {'head':>10}  Δ")
    for r in rows:
        lines.append(f"{r['name']:<{width}}  {_num(r['base']):>10}  {_num(r['head']):>10}  "
                     f"{arrow(r['delta'])}")
    lines.append("")
    lines.append(f"regressions (pass → fail): {b.get('regressions', 0)}"
                 + (f" — {', '.join(b.get('regressed') or [])}" if b.get("regressed") else ""))
    lines.append(f"fixes (fail → pass): {b.get('fixes', 0)}"
                 + (f" — {', '.join(b.get('fixed') or [])}" if b.get("fixed") else ""))
    lines.append(f"violations: {b.get('new_violations', 0)} new, "
                 f"{b.get('unchanged_violations', 0)} unchanged, "
                 f"{b.get('absent_violations', 0)} absent (fixed)")
    unchanged = set((b.get("findings") or {}).get("unchanged") or ())
    for v in results.findings:
        if v.fingerprint not in unchanged and v.severity in ("error", "warning"):
            where = f" (trace {v.trace.trace_id})" if v.trace is not None else ""
            lines.append(f"  new {v.severity}: {v.rule}: {v.message}{where}")
    for c in results.criteria:
        if c.get("kind") == "regression":
            lines.append(f"gate {c.get('name')}: {c.get('status')} — {c.get('message')}")
    return "\n".join(lines) + "\n"


def main(args: argparse.Namespace) -> int:
    from agent_eval._cli import check_format

    check_format(args.format, FORMATS)  # unknown: exit 2 with a "did you mean"
    try:
        base = load(args.base)
        head = load(args.head)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    attach(head, base, {"kind": "file", "path": args.base})
    root = Path(args.root) if args.root else Path.cwd()
    if args.format == "console":
        out = text(head)
    else:
        out = RENDERERS[args.format].render(head, RenderContext.for_root(root))
    if args.output:
        with atomic_write(output_file(Path(args.output), root)) as fh:
            fh.write(out.encode("utf-8"))
    else:
        sys.stdout.buffer.write(out.encode("utf-8"))
        sys.stdout.flush()
    return exit_code(head.verdict, "fail")
