"""``agent-eval validate``: the suite and its policies, no traces."""

from __future__ import annotations

import argparse

from agent_eval.api import load_suite


def main(args: argparse.Namespace) -> int:
    suite = load_suite(args.config)
    policies = len(suite.policies)
    print(f"ok: {suite.file}: suite '{suite.name}', {len(suite.tests)} test(s), "
          f"{policies} polic{'y' if policies == 1 else 'ies'}")
    return 0
