"""``agent-eval explain RULE``: the rule's documentation."""

from __future__ import annotations

import argparse
import sys

from agent_eval import rules
from agent_eval.errors import ExitCode
from agent_eval.textdist import did_you_mean


def main(args: argparse.Namespace) -> ExitCode:
    catalogue = rules.catalogue()
    if not args.rule:
        width = max(len(r) for r in catalogue)
        for rule_id, doc in catalogue.items():
            print(f"{rule_id:<{width}}  {doc.short}")
        return ExitCode.OK
    found = catalogue.get(args.rule)
    if found is None:
        from agent_eval.safetext import clean_name, one_line  # (start-up time: errors only)

        # the name as given, escaped and cut: a line break in it started a workflow
        # command (::error::) of a job that ran explain, a terminal escape coloured it
        under = [r for r in catalogue if r.startswith(f"{args.rule}/")]
        hint = (f" ('{args.rule}' is a check; its rules: {', '.join(under)})" if under
                else did_you_mean(args.rule, set(catalogue)))
        print(one_line(f"error: unknown rule '{clean_name(args.rule)}'{hint}; run "
                       "'agent-eval explain' for the list"), file=sys.stderr)
        return ExitCode.ERROR
    sys.stdout.write(found.text)
    return ExitCode.OK
