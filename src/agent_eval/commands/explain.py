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
        print(f"error: unknown rule '{args.rule}'{did_you_mean(args.rule, set(catalogue))}; "
              "run 'agent-eval explain' for the list", file=sys.stderr)
        return ExitCode.ERROR
    sys.stdout.write(found.text)
    return ExitCode.OK
