"""``agent-eval diff BASE.json HEAD.json``: the base-branch comparison of two results files,
in any format (console: the comparison itself; the others: the head's report with the
comparison in it, as ``run --baseline`` writes it). Exit code: the head's verdict after the
``regression`` gates (0 pass/warn, 1 fail, 2 error)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agent_eval.commands._options import check_format
from agent_eval.compare import attach
from agent_eval.errors import ExitCode
from agent_eval.outputs import atomic_write, clear_output_file, output_file, written_into
from agent_eval.renderers import RENDERERS, RenderContext
from agent_eval.results import Results, exit_code
from agent_eval.safetext import clean_name, one_line
from agent_eval.sections import Comparison

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
    b = results.baseline
    if not isinstance(b, Comparison):
        return one_line(f"{results.suite}: {results.verdict} (not compared with a base run)") \
            + "\n"
    lines = [f"{results.suite}: {b.verdict} → {results.verdict}"]
    if b.policy.message:
        lines.append(b.policy.message)
    versions = b.versions_differ(results.tool_version)
    if versions:
        lines.append(versions)
    lines.append("")
    rows = [*b.count_deltas, *b.metric_deltas]
    width = max((len(r.name) for r in rows), default=6)
    lines.append(f"{'metric':<{width}}  {'base':>10}  {'head':>10}  Δ")
    for r in rows:
        lines.append(f"{r.name:<{width}}  {_num(r.base):>10}  {_num(r.head):>10}  "
                     f"{arrow(r.delta)}")
    lines.append("")
    lines.append(f"regressions (pass → fail): {b.regressions}"
                 + (f" — {', '.join(b.regressed)}" if b.regressed else ""))
    lines.append(f"fixes (fail → pass): {b.fixes}"
                 + (f" — {', '.join(b.fixed)}" if b.fixed else ""))
    lines.append(f"violations: {b.new_violations} new, {b.unchanged_violations} unchanged, "
                 f"{b.absent_violations} absent (fixed)")
    unchanged = set(b.unchanged)
    for v in results.findings:
        if v.fingerprint not in unchanged and v.severity in ("error", "warning"):
            where = f" (trace {v.trace.trace_id})" if v.trace is not None else ""
            lines.append(f"  new {v.severity}: {v.rule}: {v.message}{where}")
    for c in results.criteria:
        if c.kind == "regression":
            lines.append(f"gate {c.name}: {c.status} — {c.message}")
    # one line each: a line break left in a message is written \x0a (docs/security.md)
    return "".join(f"{one_line(line)}\n" for line in lines)


def judged_against_another(head: Results, base: Results) -> str | None:
    """Why ``head``, already compared with a base run, cannot be compared with ``base``:
    its ``max_cost_multiplier`` checks were judged against that run's scenario costs (the
    notes they replace are gone, so they are not judged again), and a cost of ``base``
    differs. Compared again, a scenario 15 times its cost in ``base`` passed, judged
    against the other run's. None when nothing was judged or the costs are the same."""
    compared = head.baseline
    if not isinstance(compared, Comparison):
        return None
    rules = head.inventory.rules if head.inventory is not None else None
    before = {s.id: s.base_cost_usd for s in compared.scenarios if s.change != "added"}
    now = {s.id: s.metrics.get("cost_usd") for s in base.scenarios}
    for s in head.scenarios:
        checked = rules is None or any(
            key.endswith(f"#scenarios.{s.id}.{where}.max_cost_multiplier")
            for key in rules for where in ("thresholds", "warn_thresholds"))
        if checked and (s.id in before, before.get(s.id)) != (s.id in now, now.get(s.id)):
            source = compared.source
            where = source.get("description") or source.get("path") or source.get("kind")
            return (f"these results were already compared with a base run "
                    f"({clean_name(str(where), 200)}), and scenario "
                    f"{clean_name(s.id, 200)}'s max_cost_multiplier was judged against its "
                    f"cost there ({_num(before.get(s.id))} USD), not this base run's "
                    f"({_num(now.get(s.id))} USD): it is not judged again")
    return None


def main(args: argparse.Namespace) -> ExitCode:
    root = Path(args.root) if args.root else Path.cwd()
    if args.output:  # an earlier FILE goes first: a diff that stops leaves none
        clear_output_file(Path(args.output), root, [args.base, args.head])  # (docs/outputs.md)
    check_format(args.format, FORMATS)  # unknown: exit 2 with a "did you mean"
    base = Results.load(args.base)  # not a results file: exit 2 (_cli)
    head = Results.load(args.head)
    # a shard's part on either side, or two suites' results: exit 2
    from agent_eval.baseline import BaselineError, same_suite, whole_run

    whole_run(base, args.base)
    whole_run(head, args.head)
    same_suite(base, head.suite, head.config, args.base,
               f"diff compares two runs of one suite; give a results file of {head.suite!r} "
               "as BASE.")
    other = judged_against_another(head, base)
    if other is not None:
        raise BaselineError(f"{args.head}: {other}; give HEAD as a run without --baseline "
                            f"wrote it, or run --baseline {args.base}")
    attach(head, base, {"kind": "file", "path": args.base})
    if args.format == "console":
        out = text(head)
    else:
        out = RENDERERS[args.format].render(head, RenderContext.for_root(root))
    if args.output:
        target = output_file(Path(args.output), root)
        with atomic_write(target, through=written_into(target, root)) as fh:
            fh.write(out.encode("utf-8"))
    else:
        sys.stdout.buffer.write(out.encode("utf-8"))
        sys.stdout.flush()
    return exit_code(head.verdict, "fail")
